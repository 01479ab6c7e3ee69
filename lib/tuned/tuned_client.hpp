// tuned's state and profile switching, over its D-Bus API
// (com.redhat.tuned, /Tuned, com.redhat.tuned.control) when the daemon is on
// the system bus, else from /etc/tuned/active_profile.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "model/nic_state.hpp"
#include "util/error.hpp"

namespace nictune::tuned {

struct Options {
    // Empty: the system bus (DBUS_SYSTEM_BUS_ADDRESS is honoured).
    std::string bus_address;
    std::filesystem::path active_profile_file = "/etc/tuned/active_profile";
    // Directory whose existence means tuned is installed even if not running.
    std::filesystem::path config_dir = "/etc/tuned";
};

// Never fails: a bus that is not there is "not running", reported in detail.
TunedState read_state(const Options& opts);

// The fallback of read_state: /etc/tuned/active_profile, else whether tuned
// is installed; `why_not_dbus` says why D-Bus was not asked and starts the
// detail.
TunedState read_files(const Options& opts, std::string why_not_dbus);

// switch_profile(name) through D-Bus. Errc::Unsupported when tuned is not on
// the bus; Errc::Kernel-like failure with tuned's own message otherwise.
Result<void> switch_profile(const Options& opts, const std::string& profile);

}  // namespace nictune::tuned
