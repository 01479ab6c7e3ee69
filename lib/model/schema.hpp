// The schema table: one description of every setting nictune knows.
//
// Profile parsing, validation, `nictunectl keys`, docs/profiles.md, the audit
// JSON and the text report, the netlink codecs (attribute <-> key) and the
// planner all read this table. A profile key and its JSON key are the same
// string: `[coalesce] rx_usecs` is `"coalesce": {"rx_usecs": ...}`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace nictune {

enum class Section : uint8_t {
    Profile,       // [profile] description, include, priority
    Match,         // [match] drivers, pci_ids, interfaces
    Driver,        // [driver] min_version, bad_versions
    Link,          // rtnetlink + ethtool LINKMODES
    Coalesce,      // ethtool COALESCE
    Rings,         // ethtool RINGS
    Channels,      // ethtool CHANNELS
    Features,      // ethtool FEATURES, open: kernel feature names (and ethtool aliases)
    Pause,         // ethtool PAUSE
    PrivateFlags,  // ethtool PRIVFLAGS, open: the driver's own flag names (ETH_SS_PRIV_FLAGS)
    Rps,           // sysfs queues/rx-N/rps_cpus, rps_flow_cnt (+ net.core.rps_sock_flow_entries)
    Xps,           // sysfs queues/tx-N/xps_cpus
    // [rss]
    Rss,  // ethtool ioctls GRXRINGS, G/SRSSH (indirection table), G/SRXFH (hash fields)
    // [irq]: the queue IRQs of the interface (/proc/irq/N/smp_affinity_list)
    // and what irqbalance is told about them (its unix socket).
    Irq,
    Sysctl,  // open: sysctl names under /proc/sys
    Tuned,   // tuned's active profile (system wide)
};
inline constexpr std::size_t kSectionCount = 16;

enum class ValueType : uint8_t {
    Bool,
    U32,         // unsigned number, range in KeyInfo
    Enum,        // a number on the wire, a name in profiles and reports
    String,      // free text
    StringList,  // array of strings in TOML
};

// Device keys: values read from and written to one interface. Their order
// inside a section follows the kernel's attribute order.
enum class Key : uint16_t {
    // [link]
    LinkMtu,
    LinkTxqueuelen,
    LinkMinMtu,
    LinkMaxMtu,
    LinkOperstate,
    LinkCarrier,
    LinkSpeed,
    LinkDuplex,
    LinkAutoneg,
    // [coalesce]
    CoalRxUsecs,
    CoalRxFrames,
    CoalRxUsecsIrq,
    CoalRxFramesIrq,
    CoalTxUsecs,
    CoalTxFrames,
    CoalTxUsecsIrq,
    CoalTxFramesIrq,
    CoalStatsBlockUsecs,
    CoalAdaptiveRx,
    CoalAdaptiveTx,
    CoalPktRateLow,
    CoalRxUsecsLow,
    CoalRxFramesLow,
    CoalTxUsecsLow,
    CoalTxFramesLow,
    CoalPktRateHigh,
    CoalRxUsecsHigh,
    CoalRxFramesHigh,
    CoalTxUsecsHigh,
    CoalTxFramesHigh,
    CoalSampleInterval,
    CoalCqeModeTx,
    CoalCqeModeRx,
    // [rings]
    RingsRxMax,
    RingsRxMiniMax,
    RingsRxJumboMax,
    RingsTxMax,
    RingsRx,
    RingsRxMini,
    RingsRxJumbo,
    RingsTx,
    RingsRxBufLen,
    RingsTcpDataSplit,
    RingsCqeSize,
    RingsTxPush,
    // [channels]
    ChanRxMax,
    ChanTxMax,
    ChanOtherMax,
    ChanCombinedMax,
    ChanRx,
    ChanTx,
    ChanOther,
    ChanCombined,
    // [pause]
    PauseAutoneg,
    PauseRx,
    PauseTx,
};
inline constexpr std::size_t kKeyCount = static_cast<std::size_t>(Key::PauseTx) + 1;

inline constexpr std::size_t key_index(Key k) {
    return static_cast<std::size_t>(k);
}

struct KeyInfo {
    Key key;
    Section section;
    std::string_view name;  // profile key == JSON key, e.g. "rx_usecs"
    ValueType type;
    bool writable;     // may appear in a profile
    bool accepts_max;  // "max" means "the device's maximum" (rings, channels)
    Key limit;         // the read-only key holding the device's maximum (== key if none)
    uint64_t min;      // inclusive range for U32
    uint64_t max;
    std::string_view unit;
    uint16_t attr;     // ethtool netlink attribute in this section's message family (0: none)
    bool resets_link;  // changing it re-initialises the device queues (a short link flap)
    std::string_view ethtool_name;  // the ethtool option operators know, for docs
    std::string_view doc;
    std::span<const std::string_view> enum_names;  // Enum: value i has name enum_names[i]
};

// Keys of the non-device sections ([profile], [match], [driver], [tuned]).
struct MetaKeyInfo {
    Section section;
    std::string_view name;
    ValueType type;
    bool string_or_list;  // accepts a string or an array of strings
    std::string_view doc;
};

// The apply order, one phase a section (SectionInfo::phase); rollback undoes
// in the reverse. Channels first: a channel change makes the driver request
// its IRQs again and changes the queue count that the per-queue phases (RPS,
// XPS) cover. Private flags next: on i40e some reset the device. RSS after
// the device settings, so that its table names the queues the channels left
// (issue 17: channels, RSS, IRQs, RPS, XPS).
enum class Phase : uint8_t {
    Channels,
    PrivateFlags,
    Rings,
    Link,  // also [profile], [match] and [driver], which are never written
    Pause,
    Features,
    Coalesce,
    Rss,  // [rss]
    // [irq]: after channels (a channel change requests the IRQs again and
    // changes how many there are), before RPS and XPS.
    Irq,
    Rps,
    Xps,
    Sysctl,
    Tuned
};

struct SectionInfo {
    Section id;
    std::string_view name;  // TOML table and JSON object name
    bool device;            // values belong to one interface
    bool open;              // keys are names (kernel feature names, sysctl names)
    Phase phase;            // when its settings are applied
    std::string_view doc;
};

std::span<const KeyInfo> device_keys();
const KeyInfo& key_info(Key k);
std::span<const MetaKeyInfo> meta_keys();
std::span<const SectionInfo> sections();
const SectionInfo& section_info(Section s);
// The phase a section's settings are applied in: the table's column.
inline Phase phase_of(Section s) {
    return section_info(s).phase;
}

std::optional<Section> find_section(std::string_view name);
std::optional<Key> find_key(Section s, std::string_view name);
const MetaKeyInfo* find_meta_key(Section s, std::string_view name);

// The key whose ethtool attribute in `s`'s message family is `attr`.
std::optional<Key> key_for_attr(Section s, uint16_t attr);

// "coalesce.rx_usecs"
std::string key_path(Key k);

// Enum helpers: name of value v, or nullopt if out of the table.
std::optional<std::string_view> enum_name(Key k, uint64_t v);
std::optional<uint64_t> enum_value(Key k, std::string_view name);

// Sysctl names profiles may set: one list, used by validation, audit and the
// daemon's write path. Patterns end in '*' for a prefix.
std::span<const std::string_view> sysctl_allowlist();
bool sysctl_allowed(std::string_view name);
// The sysctls an audit reads when no profile names others.
std::span<const std::string_view> sysctl_audit_defaults();

}  // namespace nictune
