// CPU power management from sysfs (devices/system/cpu): the cpufreq
// governor, energy-performance preference and driver of a CPU, its cpuidle
// states, the online CPUs and the NUMA node of each CPU.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "model/health.hpp"

namespace nictune::sysinfo {

class CpuSysfs {
  public:
    explicit CpuSysfs(std::filesystem::path sysfs_root = "/sys");
    // devices/system/cpu/online; nullopt when unreadable.
    [[nodiscard]] std::optional<std::vector<unsigned>> online() const;
    // One CPU's cpufreq and cpuidle files; parts it lacks stay absent/empty.
    [[nodiscard]] CpuPower power(unsigned cpu) const;
    // CPU -> node from devices/system/node/node*/cpulist (empty: no NUMA info).
    [[nodiscard]] std::map<unsigned, int> cpu_nodes() const;

  private:
    std::filesystem::path cpu_dir_;
    std::filesystem::path node_dir_;
};

}  // namespace nictune::sysinfo
