// What the integration tests' processes see of the host's files. nictunectl
// and nictuned read more than the kernel: tuned's /etc/tuned (installed or
// not, its active_profile), nictune's own NICTUNE_SYSCONFDIR and
// NICTUNE_DATADIR (profiles, driver facts, nictune.toml from an earlier
// `cmake --install`) and the system bus (a running nictuned or tuned there).
// A test's outcome must not depend on any of them, so each integration test
// binary starts in a view of its own (tests/support/test_main.cpp):
//
//  - a private mount namespace (mounts made here never reach the host; the
//    host's later mounts still propagate in);
//  - /etc is an overlay of the host's /etc with a throwaway tmpfs on top, in
//    which /etc/tuned and NICTUNE_SYSCONFDIR are removed: "tuned is not
//    installed", no admin profiles, no extra driver facts, unless a test
//    says otherwise (set_tuned below);
//  - NICTUNE_DATADIR (and NICTUNE_SYSCONFDIR when it is not under /etc) is
//    an empty read-only tmpfs when it exists: no shipped profiles installed;
//  - /run/dbus is an empty tmpfs and DBUS_SYSTEM_BUS_ADDRESS names a socket
//    that cannot exist: no system bus, unless a test passes its own address.
//
// Every child (ip netns exec, nictunectl, nictuned, setpriv) inherits the
// view. ctest runs each test in a process of its own, so what one test sets
// up here cannot reach another, whatever the order.
#pragma once

#include <optional>
#include <string>

namespace nictune::test {

// Enters the view; call once from main(), before any thread exists
// (unshare(CLONE_NEWNS) needs an unshared fs_struct). Returns an empty string
// on success, else why not. Not root: only the environment part is done.
std::string enter_host_view();

// True once enter_host_view() has built the whole view.
bool in_host_view();

// tuned as the product sees it on disk (its D-Bus side is the stand-in on a
// private bus, tests/support/dbus.hpp):
enum class HostTuned {
    NotInstalled,  // no /etc/tuned
    Installed,     // /etc/tuned exists: tuned installed but not running
};
// Sets /etc/tuned in this process's view; `active_profile` (Installed only)
// is written to /etc/tuned/active_profile when given. Returns an empty
// string on success, else why not (e.g. not in the view).
std::string set_tuned(HostTuned state, const std::optional<std::string>& active_profile = {});

}  // namespace nictune::test
