// What the health checks read besides the six tunable sections: the PCIe
// link, the link modes both ends advertise, counters (the driver's own, the
// kernel's standard ones, softnet), interrupts and NUMA, CPU power
// management, the driver on disk against the loaded one, and who else sets
// the same values. Pure data, filled by the HealthReader (backend/health.hpp)
// and judged by engine/health.cpp.
//
// Missing data is never a zero: every part is a Known<T>, which holds either
// the value or the reason it could not be read ("virtio device: no PCIe link
// registers").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nictune {

template <class T>
struct Known {
    std::optional<T> value;
    std::string unknown;  // why value is absent; empty when it is present

    static Known of(T v) { return Known{std::move(v), {}}; }
    static Known none(std::string why) { return Known{std::nullopt, std::move(why)}; }
    [[nodiscard]] bool known() const { return value.has_value(); }
    const T* operator->() const { return &*value; }
    const T& operator*() const { return *value; }
};

// ---- PCIe

struct PcieEnd {
    std::optional<double> current_gts;  // GT/s; absent: "Unknown" or no file
    std::optional<double> max_gts;
    std::optional<unsigned> current_width;  // lanes; absent: 0 / 255 / no file
    std::optional<unsigned> max_width;
    std::string current_speed_text;  // as sysfs says it: "5.0 GT/s PCIe"
    std::string max_speed_text;
};

struct PcieLink {
    std::string function;                      // "0000:03:00.0"
    PcieEnd link;                              // the function's own link registers
    std::optional<std::string> upstream_port;  // "0000:00:02.0", the bridge above it
    std::optional<PcieEnd> upstream;
    // Network functions of the same device (same domain:bus:device), this
    // one included: a dual-port card shares one link between two ports.
    std::vector<std::string> port_functions;
    std::vector<std::string> port_interfaces;  // their netdev names, where known
};

// Usable bandwidth of a link in Gbit/s per direction: transfer rate x lanes
// x line coding (8b/10b up to 5 GT/s, 128b/130b above).
std::optional<double> pcie_gbps(std::optional<double> gts, std::optional<unsigned> width);

// ---- link modes (ethtool LINKMODES bitsets, named by ETH_SS_LINK_MODES)

struct LinkModes {
    std::vector<std::string> supported;
    std::vector<std::string> advertised;
    std::vector<std::string> partner;  // empty: the peer advertised nothing (or no autoneg)
};

// "10000baseT/Full" -> {10000, true}; nullopt for names without a speed
// ("Autoneg", "Pause", "FEC_RS").
struct ModeSpeed {
    uint32_t mbps = 0;
    bool full = true;
};
std::optional<ModeSpeed> mode_speed(std::string_view name);

// ---- counters

struct Counter {
    std::string name;
    uint64_t value = 0;
};

// rtnetlink's standard statistics (IFLA_STATS_LINK_64), the names `ip -s -j`
// uses for them.
struct LinkStats {
    uint64_t rx_packets = 0, tx_packets = 0, rx_bytes = 0, tx_bytes = 0;
    uint64_t rx_errors = 0, tx_errors = 0, rx_dropped = 0, tx_dropped = 0;
    uint64_t multicast = 0, collisions = 0;
    uint64_t rx_length_errors = 0, rx_over_errors = 0, rx_crc_errors = 0;
    uint64_t rx_frame_errors = 0, rx_fifo_errors = 0, rx_missed_errors = 0;
    uint64_t tx_aborted_errors = 0, tx_carrier_errors = 0, tx_fifo_errors = 0;
    uint64_t tx_heartbeat_errors = 0, tx_window_errors = 0;
    uint64_t rx_compressed = 0, tx_compressed = 0, rx_nohandler = 0;
    // Name -> value, in the order above (for reports and deltas).
    [[nodiscard]] std::vector<Counter> list() const;
};

struct SoftnetCpu {
    unsigned cpu = 0;
    uint64_t processed = 0;
    uint64_t dropped = 0;       // backlog full (netdev_max_backlog)
    uint64_t time_squeeze = 0;  // budget or time ran out with work left (netdev_budget)
    uint64_t received_rps = 0;
    uint64_t flow_limit = 0;
};

// ---- interrupts and NUMA

struct IrqInfo {
    unsigned irq = 0;
    std::string name;                // /proc/interrupts' last column: "p4p1-TxRx-0"
    std::optional<int> queue;        // the queue number in the name, if any
    std::string affinity;            // smp_affinity_list: "0-3"
    std::string effective_affinity;  // effective_affinity_list (may be empty)
    std::optional<int> node;         // NUMA node of the effective CPU(s), if all on one
    uint64_t count = 0;              // interrupts so far, all CPUs
    std::vector<uint64_t> per_cpu;   // by /proc/interrupts column (SystemHealth::irq_cpus)
};

struct NumaInfo {
    std::optional<int> node;    // the device's node (absent: -1, no NUMA)
    std::string local_cpulist;  // the device's local_cpulist
    unsigned local_cpus = 0;    // how many CPUs that list holds
    unsigned online_cpus = 0;
};

// ---- CPU power management

struct CpuIdleState {
    std::string name;
    uint64_t latency_us = 0;
    bool disabled = false;
};
struct CpuPower {
    unsigned cpu = 0;
    std::optional<std::string> governor;  // scaling_governor
    std::optional<std::string> epp;       // energy_performance_preference
    std::optional<std::string> driver;    // scaling_driver
    std::vector<CpuIdleState> idle;
};

// ---- driver on disk and loaded

struct DriverFiles {
    std::string module;
    std::optional<std::string> loaded_version;     // /sys/module/X/version
    std::optional<std::string> loaded_srcversion;  // /sys/module/X/srcversion
    bool builtin = false;                          // built into the kernel (no .ko)
    std::optional<std::string> disk_path;          // what modprobe would load now
    std::optional<std::string> disk_version;
    std::optional<std::string> disk_srcversion;
    std::string initramfs;  // what was found out about the initramfs copy
};

// ---- who else sets these values

struct ForeignSetting {
    std::string key;         // nictune's key ("link.mtu", "rings.rx", "coalesce.rx_usecs")
    std::string value;       // as the other tool states it
    std::string source_key;  // the other tool's name for it ("MTUBytes", "ethtool.ring-rx")
    int line = 0;            // in the file, when it is one (0: not a file)
    std::string file{};      // the file of `line` when not ForeignConfig::source (an include)
};
struct ForeignConfig {
    std::string tool;    // "systemd.link", "NetworkManager", "ifupdown", "tuned", "irqbalance"
    std::string source;  // file path, connection "id (uuid)", unit name
    std::vector<ForeignSetting> settings;
    std::string note;  // e.g. "runs ethtool -G eth3 rx 4096 at pre-up" (never run)
};

// ---- socket buffers and backlog

struct NetSysctls {
    std::optional<uint64_t> tcp_rmem_max, tcp_wmem_max;  // third field of tcp_rmem/wmem
    std::optional<uint64_t> rmem_max, wmem_max;
    std::optional<uint64_t> netdev_max_backlog, netdev_budget, netdev_budget_usecs;
};

// ---- per interface and for the system

struct InterfaceHealth {
    Known<PcieLink> pcie;
    Known<LinkModes> modes;
    Known<uint64_t> carrier_changes;
    Known<std::vector<Counter>> driver_stats;  // `ethtool -S` names
    Known<LinkStats> link_stats;
    Known<std::vector<IrqInfo>> irqs;
    Known<NumaInfo> numa;
    Known<std::vector<CpuPower>> cpus;  // the NIC's local CPUs
    Known<DriverFiles> driver;
    std::vector<ForeignConfig> foreign;        // .link, NetworkManager, ifupdown
    std::vector<std::string> foreign_unknown;  // sources that could not be asked, with why
};

struct SystemHealth {
    Known<std::vector<SoftnetCpu>> softnet;
    Known<bool> irqbalance_active;
    std::string irqbalance_detail;
    std::optional<ForeignConfig> tuned_net;  // tuned's active profile's [net] section
    std::optional<std::string> tuned_profile;
    std::string tuned_detail;
    NetSysctls sysctls;
    unsigned online_cpus = 0;
    std::vector<unsigned> irq_cpus;  // /proc/interrupts' columns: CPU numbers
    std::string interrupts_unknown;  // why /proc/interrupts could not be read
};

// The counters only, read again for --sample.
struct CounterSnapshot {
    std::map<int, std::vector<Counter>> driver_stats;  // by ifindex
    std::map<int, LinkStats> link_stats;
    std::map<unsigned, std::vector<uint64_t>> irq_per_cpu;  // by IRQ, by irq_cpus column
    std::vector<unsigned> irq_cpus;  // /proc/interrupts' columns: CPU numbers
    std::vector<SoftnetCpu> softnet;
    std::map<int, uint64_t> carrier_changes;  // by ifindex
};

}  // namespace nictune
