// The narrow interface through which the health checks (engine/health.cpp)
// see the machine: everything beyond the six tunable sections (PCIe, link
// modes, counters, IRQs and NUMA, CPU power, the driver on disk, other
// tools' configuration). SystemHealthReader (system_health.hpp) reads the
// kernel, sysfs, procfs, libkmod, udev and D-Bus; unit tests use a fake.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/health.hpp"
#include "model/nic_state.hpp"

namespace nictune {

struct HealthQuery {
    // tuned's active profile, whose [net] and [cpu] sections are read.
    std::optional<std::string> tuned_profile;
};

struct HealthRead {
    std::vector<InterfaceHealth> interfaces;  // one per NicState asked, same order
    SystemHealth system;
};

class HealthReader {
  public:
    virtual ~HealthReader() = default;
    // Never fails as a whole: what cannot be read is Known::none with why.
    // /proc/interrupts and /proc/net/softnet_stat are read once per call.
    virtual HealthRead read(std::span<const NicState* const> nics, const HealthQuery& query) = 0;
    // The counters again (driver statistics, rtnetlink statistics, IRQ
    // counts, softnet), for rates over a sample.
    virtual CounterSnapshot read_counters(std::span<const NicState* const> nics) = 0;
    // Frees its netlink receive buffers until the next read (Backend::release_buffers).
    virtual void release_buffers() noexcept {}
};

// The counters of a full read, in the form read_counters() gives them.
CounterSnapshot counters_of(std::span<const NicState* const> nics, const HealthRead& read);

}  // namespace nictune
