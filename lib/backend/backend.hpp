// The narrow interface between nictune's logic and the kernel. The netlink
// implementation talks to the kernel; tests use an in-memory fake with
// failure injection. Planner, transaction and D-Bus layers never see netlink.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "model/nic_state.hpp"
#include "util/error.hpp"

namespace nictune {

struct ReadRequest {
    // Interfaces to read, by name. Empty: every interface of the namespace
    // (only device-backed ones unless include_virtual).
    std::vector<std::string> names;
    bool include_virtual = false;
};

class Backend {
  public:
    virtual ~Backend() = default;

    // Reads the named interfaces (Errc::NoSuchInterface naming the first one
    // missing) or all of them. Results follow ifindex order.
    virtual Result<std::vector<NicState>> read_interfaces(const ReadRequest& req) = 0;

    // tuned state and the named sysctls (plus the audit defaults).
    virtual Result<SystemState> read_system(std::span<const std::string> extra_sysctls) = 0;
};

}  // namespace nictune
