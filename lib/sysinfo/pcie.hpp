// The PCIe link of a network function and its neighbours, from sysfs:
// current/max link speed and width of the function and of the port above it,
// the other network functions of the same device (ports sharing the link),
// the device's NUMA node and local CPUs, and its MSI/MSI-X vectors.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/health.hpp"

namespace nictune::sysinfo {

// "8.0 GT/s PCIe", "2.5 GT/s", "5 GT/s" -> GT/s; nullopt for "Unknown" and
// anything else.
std::optional<double> parse_link_speed(std::string_view text);
// "8" -> 8; nullopt for 0 and 255 (no link registers), non-numbers.
std::optional<unsigned> parse_link_width(std::string_view text);

// Reads the link registers of one PCI device directory.
PcieEnd read_pcie_end(const std::filesystem::path& dir);

// The link of the function at `dir` (a canonical sysfs device directory),
// its upstream port and the network functions sharing the device. Unknown,
// with the reason, when the function has no link registers (virtio, an
// integrated endpoint on a root bus).
Known<PcieLink> read_pcie(const std::filesystem::path& dir);

// numa_node and local_cpulist of the function; `online` is /sys/devices/
// system/cpu/online's list (empty: not read).
Known<NumaInfo> read_numa(const std::filesystem::path& dir, const std::vector<unsigned>& online);

// The function's MSI/MSI-X vectors (msi_irqs/), else its legacy `irq`.
// Errors are reasons ("no msi_irqs and no irq file").
Known<std::vector<unsigned>> read_device_irqs(const std::filesystem::path& dir);
// The same below the open device directory `dir` (an O_PATH descriptor);
// `name` stands for the directory in the reason.
Known<std::vector<unsigned>> read_device_irqs_at(int dir, const std::string& name);

}  // namespace nictune::sysinfo
