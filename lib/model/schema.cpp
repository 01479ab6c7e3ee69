#include "model/schema.hpp"

#include <linux/ethtool_netlink.h>

#include <array>
#include <limits>
#include <string>

#include "util/find.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace {

constexpr uint64_t kU32Max = std::numeric_limits<uint32_t>::max();

constexpr std::array<std::string_view, 7> kOperstateNames = {
    "UNKNOWN", "NOTPRESENT", "DOWN", "LOWERLAYERDOWN", "TESTING", "DORMANT", "UP"};
constexpr std::array<std::string_view, 2> kDuplexNames = {"half", "full"};
constexpr std::array<std::string_view, 3> kTcpDataSplitNames = {"unknown", "disabled", "enabled"};

struct Row {
    Key key;
    Section section;
    std::string_view name;
    ValueType type;
    bool writable;
    bool accepts_max;
    Key limit;
    uint64_t min;
    uint64_t max;
    std::string_view unit;
    uint16_t attr;
    bool resets_link;
    std::string_view ethtool_name;
    std::string_view doc;
    std::span<const std::string_view> enums = {};
};

// Shorthands so that each row of the table stays on a few lines.
constexpr Row rw_u32(Key k, Section s, std::string_view n, uint64_t lo, uint64_t hi,
                     std::string_view unit, uint16_t attr, std::string_view eth,
                     std::string_view doc) {
    return Row{k, s, n, ValueType::U32, true, false, k, lo, hi, unit, attr, false, eth, doc};
}
constexpr Row rw_bool(Key k, Section s, std::string_view n, uint16_t attr, std::string_view eth,
                      std::string_view doc) {
    return Row{k, s, n, ValueType::Bool, true, false, k, 0, 1, "", attr, false, eth, doc};
}
constexpr Row ro_u32(Key k, Section s, std::string_view n, std::string_view unit, uint16_t attr,
                     std::string_view doc) {
    return Row{k, s, n, ValueType::U32, false, false, k, 0, kU32Max, unit, attr, false, "", doc};
}
// A ring or channel count: settable, "max" allowed, limited by `limit`, resets queues.
constexpr Row queue(Key k, Section s, std::string_view n, Key limit, std::string_view unit,
                    uint16_t attr, std::string_view eth, std::string_view doc) {
    return Row{k, s, n, ValueType::U32, true, true, limit, 0, kU32Max, unit, attr, true, eth, doc};
}

using S = Section;
using K = Key;

// clang-format off
constexpr std::array<Row, kKeyCount> kRows = {{
    // ---- [link]: rtnetlink (mtu, txqueuelen, state) and ethtool LINKMODES (speed, duplex, autoneg)
    Row{K::LinkMtu, S::Link, "mtu", ValueType::U32, true, false, K::LinkMaxMtu, 68, 65535, "bytes", 0, true, "ip link set mtu",
        "Interface MTU. Checked against the device's min_mtu/max_mtu before anything changes. Changing it re-initialises the rings on most drivers."},
    rw_u32(K::LinkTxqueuelen, S::Link, "txqueuelen", 0, kU32Max, "packets", 0, "ip link set txqueuelen",
           "Length of the device's transmit queue in the qdisc layer."),
    ro_u32(K::LinkMinMtu, S::Link, "min_mtu", "bytes", 0, "Smallest MTU the driver accepts (IFLA_MIN_MTU)."),
    ro_u32(K::LinkMaxMtu, S::Link, "max_mtu", "bytes", 0, "Largest MTU the driver accepts (IFLA_MAX_MTU)."),
    Row{K::LinkOperstate, S::Link, "operstate", ValueType::Enum, false, false, K::LinkOperstate, 0, 6, "", 0, false, "",
        "RFC 2863 operational state as the kernel reports it (UP, DOWN, LOWERLAYERDOWN, ...).", kOperstateNames},
    Row{K::LinkCarrier, S::Link, "carrier", ValueType::Bool, false, false, K::LinkCarrier, 0, 1, "", 0, false, "",
        "Whether the device sees a carrier (cable and peer present)."},
    ro_u32(K::LinkSpeed, S::Link, "speed", "Mb/s", ETHTOOL_A_LINKMODES_SPEED, "Negotiated link speed; absent when unknown (no link)."),
    Row{K::LinkDuplex, S::Link, "duplex", ValueType::Enum, false, false, K::LinkDuplex, 0, 1, "", ETHTOOL_A_LINKMODES_DUPLEX, false, "",
        "Negotiated duplex; absent when unknown.", kDuplexNames},
    Row{K::LinkAutoneg, S::Link, "autoneg", ValueType::Bool, false, false, K::LinkAutoneg, 0, 1, "", ETHTOOL_A_LINKMODES_AUTONEG, false, "",
        "Whether link speed and duplex are autonegotiated."},

    // ---- [coalesce]: ethtool COALESCE; the kernel sends only what the driver supports
    rw_u32(K::CoalRxUsecs, S::Coalesce, "rx_usecs", 0, kU32Max, "us", ETHTOOL_A_COALESCE_RX_USECS, "rx-usecs",
           "Delay an RX interrupt this long after a packet arrives. On ixgbe 1 means adaptive moderation, 0 means none (and disables RSC); on e1000e 1/3/4 are dynamic modes."),
    rw_u32(K::CoalRxFrames, S::Coalesce, "rx_frames", 0, kU32Max, "frames", ETHTOOL_A_COALESCE_RX_MAX_FRAMES, "rx-frames",
           "Raise an RX interrupt after this many frames at most."),
    rw_u32(K::CoalRxUsecsIrq, S::Coalesce, "rx_usecs_irq", 0, kU32Max, "us", ETHTOOL_A_COALESCE_RX_USECS_IRQ, "rx-usecs-irq",
           "rx_usecs while an interrupt is being serviced."),
    rw_u32(K::CoalRxFramesIrq, S::Coalesce, "rx_frames_irq", 0, kU32Max, "frames", ETHTOOL_A_COALESCE_RX_MAX_FRAMES_IRQ, "rx-frames-irq",
           "rx_frames while an interrupt is being serviced."),
    rw_u32(K::CoalTxUsecs, S::Coalesce, "tx_usecs", 0, kU32Max, "us", ETHTOOL_A_COALESCE_TX_USECS, "tx-usecs",
           "Delay a TX completion interrupt this long after a packet is sent."),
    rw_u32(K::CoalTxFrames, S::Coalesce, "tx_frames", 0, kU32Max, "frames", ETHTOOL_A_COALESCE_TX_MAX_FRAMES, "tx-frames",
           "Raise a TX completion interrupt after this many frames at most."),
    rw_u32(K::CoalTxUsecsIrq, S::Coalesce, "tx_usecs_irq", 0, kU32Max, "us", ETHTOOL_A_COALESCE_TX_USECS_IRQ, "tx-usecs-irq",
           "tx_usecs while an interrupt is being serviced."),
    rw_u32(K::CoalTxFramesIrq, S::Coalesce, "tx_frames_irq", 0, kU32Max, "frames", ETHTOOL_A_COALESCE_TX_MAX_FRAMES_IRQ, "tx-frames-irq",
           "tx_frames while an interrupt is being serviced."),
    rw_u32(K::CoalStatsBlockUsecs, S::Coalesce, "stats_block_usecs", 0, kU32Max, "us", ETHTOOL_A_COALESCE_STATS_BLOCK_USECS, "stats-block-usecs",
           "How often the device updates its statistics block."),
    rw_bool(K::CoalAdaptiveRx, S::Coalesce, "adaptive_rx", ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, "adaptive-rx",
            "Let the driver adapt RX moderation to the load. Translated per driver where the driver has no switch for it (ixgbe, e1000e: rx_usecs = 1)."),
    rw_bool(K::CoalAdaptiveTx, S::Coalesce, "adaptive_tx", ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, "adaptive-tx",
            "Let the driver adapt TX moderation to the load."),
    rw_u32(K::CoalPktRateLow, S::Coalesce, "pkt_rate_low", 0, kU32Max, "packets/s", ETHTOOL_A_COALESCE_PKT_RATE_LOW, "pkt-rate-low",
           "Below this packet rate adaptive moderation uses the *_low values."),
    rw_u32(K::CoalRxUsecsLow, S::Coalesce, "rx_usecs_low", 0, kU32Max, "us", ETHTOOL_A_COALESCE_RX_USECS_LOW, "rx-usecs-low",
           "rx_usecs at a low packet rate (adaptive moderation)."),
    rw_u32(K::CoalRxFramesLow, S::Coalesce, "rx_frames_low", 0, kU32Max, "frames", ETHTOOL_A_COALESCE_RX_MAX_FRAMES_LOW, "rx-frames-low",
           "rx_frames at a low packet rate (adaptive moderation)."),
    rw_u32(K::CoalTxUsecsLow, S::Coalesce, "tx_usecs_low", 0, kU32Max, "us", ETHTOOL_A_COALESCE_TX_USECS_LOW, "tx-usecs-low",
           "tx_usecs at a low packet rate (adaptive moderation)."),
    rw_u32(K::CoalTxFramesLow, S::Coalesce, "tx_frames_low", 0, kU32Max, "frames", ETHTOOL_A_COALESCE_TX_MAX_FRAMES_LOW, "tx-frames-low",
           "tx_frames at a low packet rate (adaptive moderation)."),
    rw_u32(K::CoalPktRateHigh, S::Coalesce, "pkt_rate_high", 0, kU32Max, "packets/s", ETHTOOL_A_COALESCE_PKT_RATE_HIGH, "pkt-rate-high",
           "Above this packet rate adaptive moderation uses the *_high values."),
    rw_u32(K::CoalRxUsecsHigh, S::Coalesce, "rx_usecs_high", 0, kU32Max, "us", ETHTOOL_A_COALESCE_RX_USECS_HIGH, "rx-usecs-high",
           "rx_usecs at a high packet rate; on i40e an interrupt rate limit in 4 us steps."),
    rw_u32(K::CoalRxFramesHigh, S::Coalesce, "rx_frames_high", 0, kU32Max, "frames", ETHTOOL_A_COALESCE_RX_MAX_FRAMES_HIGH, "rx-frames-high",
           "rx_frames at a high packet rate (adaptive moderation)."),
    rw_u32(K::CoalTxUsecsHigh, S::Coalesce, "tx_usecs_high", 0, kU32Max, "us", ETHTOOL_A_COALESCE_TX_USECS_HIGH, "tx-usecs-high",
           "tx_usecs at a high packet rate (adaptive moderation)."),
    rw_u32(K::CoalTxFramesHigh, S::Coalesce, "tx_frames_high", 0, kU32Max, "frames", ETHTOOL_A_COALESCE_TX_MAX_FRAMES_HIGH, "tx-frames-high",
           "tx_frames at a high packet rate (adaptive moderation)."),
    rw_u32(K::CoalSampleInterval, S::Coalesce, "sample_interval", 0, kU32Max, "s", ETHTOOL_A_COALESCE_RATE_SAMPLE_INTERVAL, "sample-interval",
           "How often adaptive moderation samples the packet rate."),
    rw_bool(K::CoalCqeModeTx, S::Coalesce, "cqe_mode_tx", ETHTOOL_A_COALESCE_USE_CQE_MODE_TX, "cqe-mode-tx",
            "Restart the TX moderation timer on completion-queue entries instead of on events."),
    rw_bool(K::CoalCqeModeRx, S::Coalesce, "cqe_mode_rx", ETHTOOL_A_COALESCE_USE_CQE_MODE_RX, "cqe-mode-rx",
            "Restart the RX moderation timer on completion-queue entries instead of on events."),

    // ---- [rings]: ethtool RINGS
    ro_u32(K::RingsRxMax, S::Rings, "rx_max", "descriptors", ETHTOOL_A_RINGS_RX_MAX, "Largest RX ring the device supports."),
    ro_u32(K::RingsRxMiniMax, S::Rings, "rx_mini_max", "descriptors", ETHTOOL_A_RINGS_RX_MINI_MAX, "Largest RX mini ring the device supports."),
    ro_u32(K::RingsRxJumboMax, S::Rings, "rx_jumbo_max", "descriptors", ETHTOOL_A_RINGS_RX_JUMBO_MAX, "Largest RX jumbo ring the device supports."),
    ro_u32(K::RingsTxMax, S::Rings, "tx_max", "descriptors", ETHTOOL_A_RINGS_TX_MAX, "Largest TX ring the device supports."),
    queue(K::RingsRx, S::Rings, "rx", K::RingsRxMax, "descriptors", ETHTOOL_A_RINGS_RX, "rx",
          "RX ring size. A number or \"max\". Larger rings absorb bursts at the cost of cache footprint and latency."),
    queue(K::RingsRxMini, S::Rings, "rx_mini", K::RingsRxMiniMax, "descriptors", ETHTOOL_A_RINGS_RX_MINI, "rx-mini",
          "RX mini ring size. A number or \"max\"."),
    queue(K::RingsRxJumbo, S::Rings, "rx_jumbo", K::RingsRxJumboMax, "descriptors", ETHTOOL_A_RINGS_RX_JUMBO, "rx-jumbo",
          "RX jumbo ring size. A number or \"max\"."),
    queue(K::RingsTx, S::Rings, "tx", K::RingsTxMax, "descriptors", ETHTOOL_A_RINGS_TX, "tx",
          "TX ring size. A number or \"max\"."),
    Row{K::RingsRxBufLen, S::Rings, "rx_buf_len", ValueType::U32, true, false, K::RingsRxBufLen, 1, kU32Max, "bytes", ETHTOOL_A_RINGS_RX_BUF_LEN, true, "rx-buf-len",
        "Size of the buffers on the RX ring."},
    Row{K::RingsTcpDataSplit, S::Rings, "tcp_data_split", ValueType::Enum, false, false, K::RingsTcpDataSplit, 0, 2, "", ETHTOOL_A_RINGS_TCP_DATA_SPLIT, false, "",
        "Whether the device splits TCP headers from payload into separate buffers.", kTcpDataSplitNames},
    Row{K::RingsCqeSize, S::Rings, "cqe_size", ValueType::U32, true, false, K::RingsCqeSize, 1, kU32Max, "bytes", ETHTOOL_A_RINGS_CQE_SIZE, true, "cqe-size",
        "Size of a completion queue entry."},
    Row{K::RingsTxPush, S::Rings, "tx_push", ValueType::Bool, true, false, K::RingsTxPush, 0, 1, "", ETHTOOL_A_RINGS_TX_PUSH, false, "tx-push",
        "Push TX descriptors to the device instead of letting it fetch them."},

    // ---- [channels]: ethtool CHANNELS
    ro_u32(K::ChanRxMax, S::Channels, "rx_max", "queues", ETHTOOL_A_CHANNELS_RX_MAX, "Most RX-only channels the device supports."),
    ro_u32(K::ChanTxMax, S::Channels, "tx_max", "queues", ETHTOOL_A_CHANNELS_TX_MAX, "Most TX-only channels the device supports."),
    ro_u32(K::ChanOtherMax, S::Channels, "other_max", "queues", ETHTOOL_A_CHANNELS_OTHER_MAX, "Most other (link, management) channels."),
    ro_u32(K::ChanCombinedMax, S::Channels, "combined_max", "queues", ETHTOOL_A_CHANNELS_COMBINED_MAX, "Most combined RX/TX channels the device supports."),
    queue(K::ChanRx, S::Channels, "rx", K::ChanRxMax, "queues", ETHTOOL_A_CHANNELS_RX_COUNT, "rx",
          "RX-only channels. A number or \"max\"."),
    queue(K::ChanTx, S::Channels, "tx", K::ChanTxMax, "queues", ETHTOOL_A_CHANNELS_TX_COUNT, "tx",
          "TX-only channels. A number or \"max\"."),
    queue(K::ChanOther, S::Channels, "other", K::ChanOtherMax, "queues", ETHTOOL_A_CHANNELS_OTHER_COUNT, "other",
          "Other channels. A number or \"max\"."),
    queue(K::ChanCombined, S::Channels, "combined", K::ChanCombinedMax, "queues", ETHTOOL_A_CHANNELS_COMBINED_COUNT, "combined",
          "Combined RX/TX channels (queue pairs, one interrupt each). A number or \"max\"; usually one per core of the NIC's NUMA node."),

    // ---- [pause]: ethtool PAUSE
    rw_bool(K::PauseAutoneg, S::Pause, "autoneg", ETHTOOL_A_PAUSE_AUTONEG, "autoneg",
            "Negotiate flow control with the link partner."),
    rw_bool(K::PauseRx, S::Pause, "rx", ETHTOOL_A_PAUSE_RX, "rx",
            "Honour pause frames from the link partner."),
    rw_bool(K::PauseTx, S::Pause, "tx", ETHTOOL_A_PAUSE_TX, "tx",
            "Send pause frames when the RX side runs out of buffers."),
}};

constexpr std::array<MetaKeyInfo, 20> kMeta = {{
    {S::Profile, "description", ValueType::String, false, "One line saying what the profile is for."},
    {S::Profile, "include", ValueType::StringList, true,
     "Profiles this one builds on (a name or a list of names); later ones and this profile's own values win. Cycles are rejected."},
    {S::Profile, "priority", ValueType::U32, false,
     "Among profiles that match a NIC equally well, audit picks the highest priority when no profile is named (default 0)."},
    {S::Match, "drivers", ValueType::StringList, true, "Kernel driver names this profile is written for (e.g. \"ixgbe\")."},
    {S::Match, "pci_ids", ValueType::StringList, true, "PCI vendor:device ids, hex (e.g. \"8086:10fb\")."},
    {S::Match, "interfaces", ValueType::StringList, true, "Interface name globs (e.g. \"p4p*\")."},
    {S::Driver, "min_version", ValueType::String, false,
     "Oldest acceptable driver version (compared with the out-of-tree module version when there is one)."},
    {S::Driver, "bad_versions", ValueType::StringList, true, "Driver versions known to be broken; audit fails on them."},
    {S::Tuned, "profile", ValueType::String, false,
     "tuned profile to switch to (through tuned's D-Bus API), e.g. \"latency-performance\"."},
    // [rps] and [xps] hold one value for every queue of the interface; the
    // per-queue settings they become are "rps.rx-N.cpus", "xps.tx-N.cpus".
    {S::Rps, "cpus", ValueType::String, false,
     "CPUs that process the packets of every RX queue (Receive Packet Steering), a CPU list as in smp_affinity_list (\"0-3,8\"); \"\" turns RPS off. Written to /sys/class/net/IF/queues/rx-N/rps_cpus as a mask."},
    {S::Rps, "flow_cnt", ValueType::U32, false,
     "Receive Flow Steering: flow entries per RX queue (queues/rx-N/rps_flow_cnt), 0 or a power of two (the kernel rounds up). When not 0, the global net.core.rps_sock_flow_entries is raised to at least flow_cnt times the RX queues of the interfaces applied (rounded up to a power of two) and restored with them; it exists only in the initial network namespace."},
    {S::Xps, "cpus", ValueType::String, false,
     "CPUs that transmit on every TX queue (Transmit Packet Steering), a CPU list as in smp_affinity_list; written to queues/tx-N/xps_cpus as a mask. Not together with policy."},
    {S::Xps, "policy", ValueType::String, false,
     "\"off\": clear xps_cpus on every TX queue (the kernel then picks the queue by hash). Not together with cpus."},
    // [rss]: one indirection table and the hash fields per flow
    // type; the settings they become are "rss.indirection", "rss.hash.tcp4".
    {S::Rss, "queues", ValueType::U32, false,
     "Spread the RSS indirection table over the first N RX queues with equal weights, as `ethtool -X IF equal N` does (entry i goes to queue i % N); N equal to the RX queue count is the kernel's default spread (`ethtool -X IF default`), which follows later channel changes. N may not exceed the RX queues the interface has after this profile's [channels]. A table set this way makes the kernel refuse channel counts below N. Through the ETHTOOL_GRSSH/SRSSH ioctls; exercised only on the test suite's fake backend and fixture replies (no device here has RSS)."},
    {S::Rss, "hash.<flow>", ValueType::String, false,
     "[rss.hash] flow = \"fields\": the header fields hashed for one flow type, as `ethtool -N IF rx-flow-hash FLOW FIELDS`. Flows: tcp4 udp4 sctp4 ah4 (= esp4) tcp6 udp6 sctp6 ah6 (= esp6) ether. Fields, ethtool's letters in any order: m L2 destination address, v VLAN tag, t L3 protocol, s IP source, d IP destination, f L4 bytes 0-1 (source port), n L4 bytes 2-3 (destination port), r discard the flow. E.g. tcp4 = \"sdfn\", udp4 = \"sd\". Drivers accept only some combinations; the kernel's refusal names them. Through ETHTOOL_GRXFH/SRXFH."},
    // [irq]: one CPU per queue IRQ (round robin) or one list for all.
    {S::Irq, "policy", ValueType::String, false,
     "\"local\": each queue IRQ of the interface on one CPU of the NIC's NUMA node (device/numa_node, the node's cpulist), round robin, as Intel's set_irq_affinity -x local; a device without a node (numa_node -1) uses every online CPU and the plan says so. \"all\": every online CPU, round robin. Written to /proc/irq/N/smp_affinity_list, one step per IRQ. Managed IRQs (the kernel answers EIO) are skipped with a note. A running irqbalance is told over its socket to leave these IRQs alone (settings ban irqs), never stopped. Not together with cpus."},
    {S::Irq, "cpus", ValueType::String, false,
     "A CPU list as in smp_affinity_list (\"0-3,8\") that every queue IRQ of the interface gets. Not together with policy."},
    // Open sections are described by one pseudo-key each, for `nictunectl keys` and the docs.
    {S::Features, "<feature>", ValueType::Bool, false,
     "A kernel feature name (rx-gro, tx-tcp-segmentation, ...) or an ethtool alias (gro, tso, sg, ...), expanded the way ethtool expands it."},
    {S::PrivateFlags, "<flag>", ValueType::Bool, false,
     "A private flag of the interface's driver (ethtool --show-priv-flags: i40e disable-fw-lldp, flow-director-atr, legacy-rx; e1000e s0ix-enabled), true or false. A name the driver does not list is refused before anything changes."},
    {S::Sysctl, "<name>", ValueType::String, false,
     "A sysctl under /proc/sys in dotted form (net.core.rmem_max = \"16777216\"); only names on nictune's allowlist (net.core.*, net.ipv4.tcp_*, ...). A value of numbers may be a floor instead: { at_least = 16777216 } or { at_least = [4096, 87380, 16777216] } raises each number to the floor's and lowers none, so a host that already gives more keeps it."},
}};

constexpr std::array<SectionInfo, kSectionCount> kSections = {{
    {S::Profile, "profile", false, false, Phase::Link, "About the profile itself."},
    {S::Match, "match", false, false, Phase::Link, "Which NICs the profile is written for; all given keys must match."},
    {S::Driver, "driver", false, false, Phase::Link, "Driver version requirements, checked by audit and apply."},
    {S::Link, "link", true, false, Phase::Link, "Link settings (rtnetlink) and link state (read only)."},
    {S::Coalesce, "coalesce", true, false, Phase::Coalesce, "Interrupt coalescing (ethtool -c/-C)."},
    {S::Rings, "rings", true, false, Phase::Rings, "Descriptor ring sizes (ethtool -g/-G)."},
    {S::Channels, "channels", true, false, Phase::Channels, "Queue counts (ethtool -l/-L)."},
    {S::Features, "features", true, true, Phase::Features, "Offloads by kernel feature name (ethtool -k/-K)."},
    {S::Pause, "pause", true, false, Phase::Pause, "Ethernet flow control (ethtool -a/-A)."},
    {S::PrivateFlags, "private_flags", true, true, Phase::PrivateFlags, "The driver's private flags (ethtool --show-priv-flags/--set-priv-flags)."},
    {S::Rps, "rps", true, false, Phase::Rps, "Receive Packet Steering for every RX queue (sysfs queues/rx-N)."},
    {S::Xps, "xps", true, false, Phase::Xps, "Transmit Packet Steering for every TX queue (sysfs queues/tx-N)."},
    {S::Rss, "rss", true, false, Phase::Rss, "Receive side scaling: the indirection table and the hashed fields per flow type (ethtool -x/-X, -n/-N rx-flow-hash)."},
    {S::Irq, "irq", true, false, Phase::Irq, "Where the queue IRQs of the interface run (/proc/irq/N/smp_affinity_list), and irqbalance."},
    {S::Sysctl, "sysctl", false, true, Phase::Sysctl, "Kernel network settings under /proc/sys."},
    {S::Tuned, "tuned", false, false, Phase::Tuned, "The tuned system profile."},
}};
// clang-format on

constexpr bool table_is_in_key_order() {
    for (std::size_t i = 0; i < kRows.size(); ++i)
        if (key_index(kRows[i].key) != i) return false;
    return true;
}
static_assert(table_is_in_key_order(), "kRows must list keys in the order of enum Key");

constexpr bool sections_in_order() {
    for (std::size_t i = 0; i < kSections.size(); ++i)
        if (static_cast<std::size_t>(kSections[i].id) != i) return false;
    return true;
}
static_assert(sections_in_order(), "kSections must list sections in the order of enum Section");

constexpr std::array<KeyInfo, kKeyCount> make_infos() {
    std::array<KeyInfo, kKeyCount> out{};
    for (std::size_t i = 0; i < kRows.size(); ++i) {
        const Row& r = kRows[i];
        out[i] = KeyInfo{r.key,         r.section,     r.name,         r.type, r.writable,
                         r.accepts_max, r.limit,       r.min,          r.max,  r.unit,
                         r.attr,        r.resets_link, r.ethtool_name, r.doc,  r.enums};
    }
    return out;
}
constexpr std::array<KeyInfo, kKeyCount> kInfos = make_infos();

// Sysctl names a profile may write. Everything else is refused at load time.
constexpr std::array<std::string_view, 6> kSysctlAllow = {
    "net.core.*",
    "net.ipv4.tcp_*",
    "net.ipv4.udp_*",
    "net.ipv4.ipfrag_*",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_no_pmtu_disc",
};

constexpr std::array<std::string_view, 16> kSysctlAudit = {
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.rmem_default",
    "net.core.wmem_default",
    "net.core.netdev_max_backlog",
    "net.core.netdev_budget",
    "net.core.netdev_budget_usecs",
    "net.core.busy_poll",
    "net.core.busy_read",
    "net.core.default_qdisc",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_mtu_probing",
};

}  // namespace

std::span<const KeyInfo> device_keys() {
    return kInfos;
}
const KeyInfo& key_info(Key k) {
    return kInfos[key_index(k)];
}
std::span<const MetaKeyInfo> meta_keys() {
    return kMeta;
}
std::span<const SectionInfo> sections() {
    return kSections;
}
const SectionInfo& section_info(Section s) {
    return kSections[static_cast<std::size_t>(s)];
}

std::optional<Section> find_section(std::string_view name) {
    for (const auto& s : kSections)
        if (s.name == name) return s.id;
    return std::nullopt;
}

std::optional<Key> find_key(Section s, std::string_view name) {
    for (const auto& k : kInfos)
        if (k.section == s && k.name == name) return k.key;
    return std::nullopt;
}

const MetaKeyInfo* find_meta_key(Section s, std::string_view name) {
    return find_first(kMeta, [&](const MetaKeyInfo& m) {
        return m.section == s && m.name == name && !m.name.starts_with('<');
    });
}

namespace {

// key_for_attr's answers for the attributes below kAttrTable, by section:
// the key's index + 1, 0 for none. Every setting of a read's replies goes
// through it (a dump of 512 interfaces asks 5,000 times).
constexpr std::size_t kAttrTable = 64;
using AttrTable = std::array<std::array<uint8_t, kAttrTable>, kSectionCount>;
static_assert(kKeyCount < 255);

constexpr AttrTable make_attr_table() {
    AttrTable t{};
    for (std::size_t i = 0; i < kInfos.size(); ++i) {
        const KeyInfo& k = kInfos[i];
        if (k.attr == 0 || k.attr >= kAttrTable) continue;
        auto& slot = t[static_cast<std::size_t>(k.section)][k.attr];
        if (slot == 0) slot = static_cast<uint8_t>(i + 1);  // the first key, as the search found
    }
    return t;
}

constexpr AttrTable kAttrKeys = make_attr_table();

}  // namespace

std::optional<Key> key_for_attr(Section s, uint16_t attr) {
    if (attr == 0) return std::nullopt;
    if (attr < kAttrTable && static_cast<std::size_t>(s) < kSectionCount) {
        const uint8_t i = kAttrKeys[static_cast<std::size_t>(s)][attr];
        if (i == 0) return std::nullopt;
        return kInfos[i - 1].key;
    }
    for (const auto& k : kInfos)
        if (k.section == s && k.attr == attr) return k.key;
    return std::nullopt;
}

std::string key_path(Key k) {
    const auto& info = key_info(k);
    return dotted(section_info(info.section).name, info.name);
}

std::optional<std::string_view> enum_name(Key k, uint64_t v) {
    const auto& names = key_info(k).enum_names;
    if (v >= names.size()) return std::nullopt;
    return names[v];
}

std::optional<uint64_t> enum_value(Key k, std::string_view name) {
    const auto& names = key_info(k).enum_names;
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return i;
    return std::nullopt;
}

std::span<const std::string_view> sysctl_allowlist() {
    return kSysctlAllow;
}

bool sysctl_allowed(std::string_view name) {
    if (name.empty() || name.find("..") != std::string_view::npos || name.front() == '.' ||
        name.back() == '.' || name.find('/') != std::string_view::npos)
        return false;
    for (auto pat : kSysctlAllow) {
        if (pat.ends_with('*')) {
            pat.remove_suffix(1);
            if (name.starts_with(pat) && name.size() > pat.size()) return true;
        } else if (name == pat) {
            return true;
        }
    }
    return false;
}

std::span<const std::string_view> sysctl_audit_defaults() {
    return kSysctlAudit;
}

}  // namespace nictune
