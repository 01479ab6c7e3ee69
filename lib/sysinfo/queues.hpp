// Packet steering per queue through sysfs: /sys/class/net/IF/queues/rx-N
// (rps_cpus, rps_flow_cnt) and tx-N (xps_cpus). The kernel keeps CPU sets
// there as hex masks; nictune holds them as CPU lists (model/cpulist.hpp).
// The root is a parameter so that tests read fixture trees. sysfs shows the
// network namespace of the process that mounted it: a caller in a test
// namespace must have the namespace's own /sys (ip netns exec does that).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "model/nic_state.hpp"
#include "util/error.hpp"

namespace nictune::sysinfo {

class QueueFiles {
  public:
    explicit QueueFiles(std::filesystem::path sysfs_root = "/sys");

    // Every rx-N and tx-N of the interface (by its real bytes), in queue
    // order; nullopt when it has no queues directory. A file that cannot be
    // read (xps_cpus of a single-queue device answers ENOENT) is absent.
    [[nodiscard]] Result<std::optional<QueueSet>> read(std::string_view ifname) const;
    // The same below the interface's open directory (open_interface_dir in
    // sysfs.hpp; -1: by the whole path, as read()).
    [[nodiscard]] Result<std::optional<QueueSet>> read_at(int ifdir, std::string_view ifname) const;

    // Writes "rx-N/rps_cpus" or "tx-N/xps_cpus" (cpus as a CPU list, written
    // as the kernel's mask) or "rx-N/rps_flow_cnt". `name` is the interface's
    // text form for messages.
    [[nodiscard]] Result<void> write_cpus(std::string_view ifname, const std::string& name, bool rx,
                                          std::size_t queue, std::string_view cpulist) const;
    [[nodiscard]] Result<void> write_flow_cnt(std::string_view ifname, const std::string& name,
                                              std::size_t queue, uint64_t count) const;

  private:
    [[nodiscard]] Result<void> write_file(std::string_view ifname, const std::string& queue_dir,
                                          const char* file, const std::string& text,
                                          const std::string& context) const;
    std::filesystem::path root_;
};

}  // namespace nictune::sysinfo
