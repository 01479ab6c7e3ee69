// Running commands from tests (oracles such as ip and ethtool, the CLI under
// test). Test code only: the product never starts processes.
#pragma once

#include <string>
#include <vector>

namespace nictune::test {

struct CommandResult {
    int status = -1;  // exit status, or 128+signal
    std::string out;  // stdout
    std::string err;  // stderr
};

// Runs argv (no shell) with a time limit; kills the child (by PID) on timeout.
CommandResult run(const std::vector<std::string>& argv, int timeout_ms = 20000);
// Runs `sh -c script`.
CommandResult sh(const std::string& script, int timeout_ms = 20000);

bool is_root();
bool have_program(const std::string& name);

}  // namespace nictune::test
