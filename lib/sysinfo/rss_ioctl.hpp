// [rss] through the SIOCETHTOOL ioctls of the 6.1 uapi headers (the ethtool
// netlink RSS messages came later): ETHTOOL_GRXRINGS (the RX ring count),
// ETHTOOL_GRSSH / ETHTOOL_SRSSH (indirection table size, key size, hash
// function, the table), ETHTOOL_GRXFH / ETHTOOL_SRXFH (the hashed fields of
// one flow type).
//
// The codec is pure: it builds and reads the byte layouts of struct
// ethtool_rxnfc and struct ethtool_rxfh (include/uapi/linux/ethtool.h), so
// that tests check it on fixture bytes shaped like the kernel's replies; the
// ioctl itself only hands the buffer to the kernel.
//
// Any socket reaches the handler: sock_do_ioctl (net/socket.c) passes a
// command the family does not know (unix_ioctl answers -ENOIOCTLCMD) to
// dev_ioctl in the socket's network namespace, so the AF_UNIX socket of
// IoctlSocket works under nictuned's RestrictAddressFamilies=AF_UNIX
// AF_NETLINK, and a device is looked up in the namespace the socket was made
// in.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/nic_state.hpp"
#include "sysinfo/drvinfo.hpp"
#include "util/error.hpp"

namespace nictune::sysinfo::rss {

// struct ethtool_rxnfc: cmd (u32 at 0), flow_type (u32 at 4), data (u64 at
// 8), then the flow spec and rule counts the RSS commands leave alone. The
// kernel copies 16 bytes for GRXFH/SRXFH (the struct's original size) and
// the whole struct for GRXRINGS; encode gives the whole struct, zeroed.
std::vector<uint8_t> encode_rxnfc(uint32_t cmd, uint32_t flow_type, uint64_t data);
// `data` of a reply to `cmd`; an error when the bytes are short or the
// command is another.
Result<uint64_t> decode_rxnfc_data(std::span<const uint8_t> bytes, uint32_t cmd);

// struct ethtool_rxfh: cmd (u32 at 0), rss_context (4), indir_size (8),
// key_size (12), hfunc (u8 at 16), rsvd8[3], rsvd32 (20), then
// rss_config[]: indir_size u32 queue numbers and key_size key bytes (24..).
struct RxfhReply {
    uint32_t indir_size = 0;
    uint32_t key_size = 0;
    uint8_t hfunc = 0;
    // The byte after hfunc: rsvd8[0] in the 6.1 headers (the kernel refuses
    // anything but 0 there), input_xfrm since 6.8 (symmetric hashing). A SET
    // writes back what the GET said, so that neither kernel sees a change.
    uint8_t input_xfrm = 0;
    std::vector<uint32_t> indirection;  // empty for the sizes-only query
};
// GRSSH asking for the sizes only (indir_size = key_size = 0: the kernel
// fills them in and the hash function).
std::vector<uint8_t> encode_rxfh_query();
// GRSSH for the table and key of these sizes.
std::vector<uint8_t> encode_rxfh_get(uint32_t indir_size, uint32_t key_size);
// A GRSSH reply: with `with_table`, the bytes must hold the table and key
// the header announces.
Result<RxfhReply> decode_rxfh(std::span<const uint8_t> bytes, bool with_table);
// SRSSH writing the table (empty: indir_size 0, the kernel's default spread
// over its RX rings), the key and hash function unchanged (key_size 0,
// hfunc ETH_RSS_HASH_NO_CHANGE), `input_xfrm` as GRSSH read it.
std::vector<uint8_t> encode_rxfh_set(std::span<const uint32_t> table, uint8_t input_xfrm = 0);

// The SRSSH for a table's text form ("default", "equal N", a list) on a
// device whose GRSSH said `head` and GRXRINGS `rx_rings`: "default" goes
// as the kernel's own (indir_size 0), so the driver knows the table is not
// the operator's (IFF_RXFH_CONFIGURED cleared) and spreads it again when the
// channels change, as before a transaction set it.
Result<std::vector<uint8_t>> encode_indirection(std::string_view form, const RxfhReply& head,
                                                uint64_t rx_rings);

// Reads the interface's RSS (by its real bytes; `name` is its text form for
// messages). nullopt when the driver answers none of the requests; a request
// one driver lacks leaves its part absent. Errc::NoSuchInterface when it is
// gone.
Result<std::optional<RssState>> read(const IoctlSocket& io, std::string_view ifname,
                                     const std::string& name);
// Writes the table of a text form ("default", "equal N", a list) after
// reading the device's table size and RX rings.
Result<void> set_indirection(const IoctlSocket& io, std::string_view ifname,
                             const std::string& name, std::string_view form);
// Writes the hashed fields of one flow type (canonical name, ethtool letters).
Result<void> set_hash_fields(const IoctlSocket& io, std::string_view ifname,
                             const std::string& name, std::string_view flow,
                             std::string_view fields);

}  // namespace nictune::sysinfo::rss
