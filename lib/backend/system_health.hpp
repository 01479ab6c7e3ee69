// The HealthReader over the real machine: sysfs (PCIe, NUMA, MSI vectors,
// cpufreq, cpuidle, carrier changes), procfs (/proc/interrupts, softnet,
// IRQ affinity, sysctls), ethtool netlink (LINKMODES bitsets and their
// names), the ETHTOOL_GSTATS ioctl, rtnetlink RTM_GETSTATS, libkmod, udev's
// record (sd-device) and D-Bus (systemd for irqbalance, NetworkManager).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/health.hpp"
#include "model/nic_state.hpp"
#include "services/bus.hpp"
#include "sysinfo/kmod.hpp"

namespace nictune {

struct HealthOptions {
    std::filesystem::path sysfs_root = "/sys";
    std::filesystem::path proc_root = "/proc";
    std::filesystem::path ifupdown_file = "/etc/network/interfaces";
    std::vector<std::filesystem::path> tuned_dirs = {"/etc/tuned", "/usr/lib/tuned"};
    sysinfo::KmodOptions kmod;
    services::BusOptions bus;  // systemd and NetworkManager
    bool udev = true;          // ask sd-device for ID_NET_LINK_FILE
    // udev's database: a device without a record there is not asked about
    // (one stat instead of sd-device's dozen file operations per link).
    std::filesystem::path udev_data_dir = "/run/udev/data";
};

// The names of the bits set in `bits` (a bitset of u32 words, bit i in
// word i / 32), in bit order: link modes by ETH_SS_LINK_MODES. Bits without
// a name, or beyond the names, are left out.
std::vector<std::string> bit_names(const std::vector<uint32_t>& bits, const FeatureNames& names);

class SystemHealthReader final : public HealthReader {
  public:
    explicit SystemHealthReader(HealthOptions opts = {});
    ~SystemHealthReader() override;
    HealthRead read(std::span<const NicState* const> nics, const HealthQuery& query) override;
    CounterSnapshot read_counters(std::span<const NicState* const> nics) override;
    void release_buffers() noexcept override;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace nictune
