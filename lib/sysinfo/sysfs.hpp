// Facts only sysfs holds: the PCI function behind a netdev, its NUMA node,
// whether it is an SR-IOV VF, and an out-of-tree module's version. The root is
// a parameter so that tests read fixture trees.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "util/unique_fd.hpp"

namespace nictune::sysinfo {

struct PciInfo {
    std::optional<std::string> slot;       // "0000:03:00.0"
    std::optional<std::string> id;         // "8086:10fb" (lower-case hex)
    std::optional<std::string> subsystem;  // "8086:7a11"
    std::optional<std::string> modalias;   // "pci:v00008086d000010FBsv..."
    std::optional<int> numa_node;          // absent when -1 or missing
    bool sriov_vf = false;                 // has a physfn link
};

class Sysfs {
  public:
    explicit Sysfs(std::filesystem::path root = "/sys");

    // Whether /sys/class/net/<ifname>/device exists (a device-backed netdev).
    [[nodiscard]] bool has_device(std::string_view ifname) const;
    // Walks from /sys/class/net/<ifname>/device up to the nearest PCI device
    // (virtio and other bus devices sit below one). Absent when none.
    [[nodiscard]] std::optional<PciInfo> pci_for(std::string_view ifname) const;
    // /sys/module/<driver>/version, cached per driver.
    [[nodiscard]] std::optional<std::string> module_version(const std::string& driver);

  private:
    std::filesystem::path root_;
    std::unordered_map<std::string, std::optional<std::string>> module_versions_;
};

// Whether a sysfs device directory is a PCI device (its `subsystem` link
// points to .../bus/pci).
bool is_pci_device(const std::filesystem::path& dir);
// The PCI function directory behind /sys/class/net/<ifname>/device (the
// nearest PCI device walking up), canonical; absent when there is none.
std::optional<std::filesystem::path> pci_function_dir(const std::filesystem::path& root,
                                                      std::string_view ifname);

// /sys/class/net/<ifname> (its real bytes), opened (O_PATH) for the readers
// that take an interface's directory (QueueFiles::read_at,
// IrqFiles::read_at): the path is walked once for all of them, their files
// one or two components below it. Empty when it cannot be opened (the
// readers then take the whole paths, and say what those say).
UniqueFd open_interface_dir(const std::filesystem::path& root, std::string_view ifname);

// "KEY=value" lines of a uevent file -> value of KEY.
std::optional<std::string> uevent_value(std::string_view uevent, std::string_view key);

}  // namespace nictune::sysinfo
