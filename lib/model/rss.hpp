// RSS (receive side scaling) in nictune's own terms, shared by the profile
// loader, the plan, the reports and the ioctl codec: the flow types and hash
// fields of `ethtool -N DEV rx-flow-hash FLOW FIELDS`, and the text form of
// an indirection table ("default", "equal N" or the queue of every entry).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nictune {

// A flow type as ethtool names it (rxflow_str_to_type) and its number in
// include/uapi/linux/ethtool.h (TCP_V4_FLOW ...).
struct RssFlowType {
    std::string_view name;   // canonical: the profile key and the JSON key
    std::string_view alias;  // another name ethtool accepts for it ("esp4"), or empty
    uint32_t value;          // ethtool_rxnfc.flow_type
};
// tcp4 udp4 sctp4 ah4 (= esp4) tcp6 udp6 sctp6 ah6 (= esp6) ether, in this order.
std::span<const RssFlowType> rss_flow_types();
// By canonical name or alias.
const RssFlowType* find_rss_flow_type(std::string_view name);

// ethtool's letters for the RXH_* bits, in the order its manual lists them:
// m (L2 destination address), v (VLAN tag), t (L3 protocol), s (IP source),
// d (IP destination), f (L4 bytes 0-1, the source port), n (L4 bytes 2-3,
// the destination port), r (discard the flow).
// The letters of `bits` in that order ("" when no field is hashed); a value
// with a bit that has no letter (a newer kernel's) is written "0x..." so that
// it reads back and is restored exactly.
std::string format_rss_hash_fields(uint64_t bits);
// Letters in any order, each at most once, or "0x..." (what format writes).
std::optional<uint64_t> parse_rss_hash_fields(std::string_view text);

// The text form of an indirection table, which plans compare and state files
// keep: "default" when entry i holds i % rx_rings (what the kernel fills in
// for `ethtool -X DEV default`, and what drivers start with), "equal N" when
// entry i holds i % N (`ethtool -X DEV equal N`), else every entry's queue
// joined by spaces. rx_rings 0: unknown (no "default").
std::string format_rss_indirection(std::span<const uint32_t> table, uint64_t rx_rings);
// The table a form stands for on a device with `size` entries and `rx_rings`
// RX rings; nullopt for a form that is not one of the above or does not fit
// (a list of another length). "default" gives i % rx_rings.
std::optional<std::vector<uint32_t>> rss_indirection_table(std::string_view form, std::size_t size,
                                                           uint64_t rx_rings);
// The N of "equal N", the rx_rings of "default"; nullopt for a list.
std::optional<uint64_t> rss_equal_queues(std::string_view form, uint64_t rx_rings);

// The hash function bits of ethtool_rxfh.hfunc by the kernel's names
// (rss_hash_func_strings: toeplitz, xor, crc32); "" for 0, "0x.." for a bit
// without a name.
std::string format_rss_hfunc(uint8_t hfunc);

}  // namespace nictune
