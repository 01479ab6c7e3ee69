// What nictune knows about one interface and about the system, as read from
// the kernel. Every setting is optional: absent means "the driver did not
// report it" (unsupported), never 0.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/schema.hpp"

namespace nictune {

// Device values indexed by Key. Bools are 0/1, enums their wire number.
class DeviceValues {
  public:
    [[nodiscard]] std::optional<uint64_t> get(Key k) const {
        if (!has_[key_index(k)]) return std::nullopt;
        return v_[key_index(k)];
    }
    [[nodiscard]] bool has(Key k) const { return has_[key_index(k)]; }
    void set(Key k, uint64_t value) {
        v_[key_index(k)] = value;
        has_.set(key_index(k));
    }
    void erase(Key k) { has_.reset(key_index(k)); }
    // True if any key of the section is present.
    [[nodiscard]] bool any_in(Section s) const;
    // Drop every key of the section (e.g. before decoding a fresh reply).
    void clear_section(Section s);

    bool operator==(const DeviceValues&) const = default;

  private:
    std::array<uint64_t, kKeyCount> v_{};
    std::bitset<kKeyCount> has_;
};

// The kernel's feature names (ethtool string set ETH_SS_FEATURES); one copy
// shared by every interface read in the same pass.
using FeatureNames = std::vector<std::string>;

// Offload state of one interface as bitmaps indexed like FeatureNames.
struct FeatureSet {
    std::shared_ptr<const FeatureNames> names;
    std::vector<uint32_t> hw;        // changeable by the user
    std::vector<uint32_t> wanted;    // requested
    std::vector<uint32_t> active;    // in effect
    std::vector<uint32_t> nochange;  // never changeable

    [[nodiscard]] std::size_t size() const { return names ? names->size() : 0; }
    [[nodiscard]] static bool bit(const std::vector<uint32_t>& map, std::size_t i) {
        return i / 32 < map.size() && ((map[i / 32] >> (i % 32)) & 1U) != 0;
    }
    [[nodiscard]] bool is_active(std::size_t i) const { return bit(active, i); }
    [[nodiscard]] bool is_wanted(std::size_t i) const { return bit(wanted, i); }
    // ethtool's "[fixed]": the user cannot change it on this device.
    [[nodiscard]] bool is_fixed(std::size_t i) const { return !bit(hw, i) || bit(nochange, i); }
    // Index of a feature name, or nullopt.
    [[nodiscard]] std::optional<std::size_t> index_of(std::string_view name) const;
    [[nodiscard]] std::optional<bool> active_by_name(std::string_view name) const;
};

// A driver's private flags (ETH_SS_PRIV_FLAGS), in the driver's order.
struct PrivateFlag {
    std::string name;
    bool on = false;
    bool operator==(const PrivateFlag&) const = default;
};

// The packet steering of one interface's queues, as sysfs holds it
// (/sys/class/net/IF/queues). CPU sets are CPU lists in the kernel's form
// ("0-3,8", "" for none); a file that cannot be read (xps_cpus of a
// single-queue device: ENOENT) is absent.
struct RxQueue {
    std::optional<std::string> rps_cpus;
    std::optional<uint64_t> rps_flow_cnt;
    bool operator==(const RxQueue&) const = default;
};
struct TxQueue {
    std::optional<std::string> xps_cpus;
    bool operator==(const TxQueue&) const = default;
};
struct QueueSet {
    std::vector<RxQueue> rx;  // rx-0, rx-1, ...
    std::vector<TxQueue> tx;  // tx-0, tx-1, ...
    bool operator==(const QueueSet&) const = default;
};

// [rss]: receive side scaling as the ethtool ioctls report it
// (ETHTOOL_GRXRINGS, ETHTOOL_GRSSH, ETHTOOL_GRXFH per flow type). Each part
// is absent when the driver does not answer that request.
struct RssHashFields {
    std::string flow;     // canonical flow type name (model/rss.hpp): "tcp4"
    uint64_t fields = 0;  // RXH_* bits
    bool operator==(const RssHashFields&) const = default;
};
struct RssState {
    std::optional<uint64_t> rx_rings;  // the RX rings the table may name
    // The indirection table, one RX queue per entry; empty when the driver
    // answers GRSSH without one (virtio_net without the RSS feature).
    std::optional<std::vector<uint32_t>> indirection;
    std::optional<uint32_t> key_size;  // bytes of the hash key
    std::optional<uint8_t> hfunc;      // ETH_RSS_HASH_* bits, 0: not reported
    std::vector<RssHashFields> hash;   // the flow types the driver answered, in table order
    bool operator==(const RssState&) const = default;
};

// [irq]: the queue IRQs of one interface and what decides where they go.
// CPU sets are CPU lists in the kernel's form, as /proc/irq/N holds them.
struct QueueIrq {
    unsigned irq = 0;
    std::string name;                      // the action name in /proc/interrupts
    std::optional<std::string> affinity;   // smp_affinity_list (absent: unreadable)
    std::optional<std::string> effective;  // effective_affinity_list (absent: none)
    bool operator==(const QueueIrq&) const = default;
};
// A running irqbalance (machine wide; each interface's read carries it).
struct IrqBalance {
    int pid = 0;
    std::string socket;  // its unix socket, /run/irqbalance/irqbalance<pid>.sock
    // The IRQs it is told to leave alone (its "setup" answer); absent when
    // the socket could not be asked, with the reason.
    std::optional<std::vector<unsigned>> banned;
    std::string problem;
    bool operator==(const IrqBalance&) const = default;
};
struct IrqPlacement {
    std::vector<QueueIrq> irqs;            // the queue vectors, by IRQ number
    std::optional<int> numa_node;          // absent: -1 or no numa_node file
    std::vector<unsigned> node_cpus;       // the node's online CPUs (empty: no node)
    std::vector<unsigned> online_cpus;     // /sys/devices/system/cpu/online
    std::optional<IrqBalance> irqbalance;  // absent: not running
    bool operator==(const IrqPlacement&) const = default;
};

struct Identity {
    // In nictune's text form (escape_name, util/strings.hpp), as every name.
    std::string name;
    std::vector<std::string> altnames;  // the kernel's alternative names, in its order
    int ifindex = 0;
    std::string mac;  // "aa:bb:..", empty if the link has none
    std::optional<std::string> perm_mac;
    std::optional<std::string> kind;  // rtnetlink link kind: "veth", "dummy", ... (virtual)
    std::optional<std::string>
        parent_bus;  // IFLA_PARENT_DEV_BUS_NAME: "pci", "virtio", "netdevsim"
    std::optional<std::string> parent_dev;  // IFLA_PARENT_DEV_NAME: "0000:03:00.0"

    // ETHTOOL_GDRVINFO
    std::optional<std::string> driver;
    std::optional<std::string> driver_version;
    std::optional<std::string> firmware_version;
    std::optional<std::string> expansion_rom_version;
    std::optional<std::string> bus_info;
    // /sys/module/<driver>/version: only out-of-tree (or versioned) modules have it.
    std::optional<std::string> module_version;

    // PCI function behind the interface (sysfs), if any.
    std::optional<std::string> pci_slot;       // "0000:03:00.0"
    std::optional<std::string> pci_id;         // "8086:10fb"
    std::optional<std::string> pci_subsystem;  // "8086:7a11"
    std::optional<int> numa_node;              // absent when the kernel says -1
    std::optional<std::string> vendor_name;    // udev hwdb ID_VENDOR_FROM_DATABASE
    std::optional<std::string> model_name;     // udev hwdb ID_MODEL_FROM_DATABASE
    bool sriov_vf = false;                     // a virtual function (has physfn)

    // Backed by a device (PCI, netdevsim, ...) rather than a software link.
    bool physical = false;

    // The version that matters for known-bad checks: the module's own version
    // when it has one, else what the driver reports.
    [[nodiscard]] const std::optional<std::string>& effective_driver_version() const {
        return module_version ? module_version : driver_version;
    }
};

// A family that could not be read for a reason other than "unsupported".
struct ReadProblem {
    Section section;
    int sys_errno = 0;
    std::string message;
};

struct NicState {
    Identity id;
    DeviceValues values;
    std::optional<FeatureSet> features;  // absent: FEATURES not readable
    // Absent: not read, or the driver has none (EOPNOTSUPP).
    std::optional<std::vector<PrivateFlag>> private_flags;
    std::optional<QueueSet> queues;  // absent: not read, or no queues directory
    // [rss] absent: not read, or the driver answers none of the RSS ioctls
    // (EOPNOTSUPP: veth, netdevsim).
    std::optional<RssState> rss;
    // Absent: not read, or no queue IRQs (veth; a driver that requests its
    // vectors only while the interface is up, and it is down).
    std::optional<IrqPlacement> irq;
    std::vector<ReadProblem> problems;
};

enum class TunedSource : uint8_t {
    Dbus,          // answered by the running tuned daemon
    File,          // /etc/tuned/active_profile, daemon not on the bus
    NotInstalled,  // neither
};

struct TunedState {
    std::optional<std::string> active_profile;
    TunedSource source = TunedSource::NotInstalled;
    std::string detail;  // why this source was used, for the report
};

struct SysctlValue {
    std::string name;                  // dotted: "net.core.rmem_max"
    std::optional<std::string> value;  // absent: no such sysctl here
};

struct SystemState {
    TunedState tuned;
    std::vector<SysctlValue> sysctl;
};

const char* tuned_source_name(TunedSource s);

}  // namespace nictune
