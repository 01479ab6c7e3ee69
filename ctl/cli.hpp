// nictunectl's command table. main.cpp only calls run().
#pragma once

namespace nictune::ctl {

// Exit statuses (documented in README.md).
enum Exit : int {
    kOk = 0,          // nothing wrong / applied and verified
    kFindings = 1,    // audit found warn or fail findings
    kUsage = 2,       // bad usage or input; nothing changed
    kRolledBack = 3,  // a step failed and everything was rolled back
    kPartial = 4,     // a step failed and the rollback did not complete
    kCannotRead = 5,  // could not read or talk to the kernel/daemon/peer (says why)
    kPathCheck = 6,   // probe: the path does not carry the interface's MTU
};

int run(int argc, char** argv);

}  // namespace nictune::ctl
