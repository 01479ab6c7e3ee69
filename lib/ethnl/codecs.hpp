// Pure encoders/decoders for ethtool netlink messages. One decoder serves
// GET replies, dump replies and monitor notifications of the same family.
//
// Decoders ignore attributes they do not know (newer kernels send more than
// the pinned headers, Linux 6.14 in third_party/uapi, name) and reject
// truncated ones; a missing attribute means
// "not supported by the driver" and leaves the key absent.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/nic_state.hpp"
#include "util/error.hpp"

namespace nictune::ethnl {

struct Reply {
    int ifindex = 0;
    std::string ifname;
    DeviceValues values;  // only keys of the decoded section are set
};

// Sections with a fixed attribute <-> key mapping in the schema table:
// Link (LINKMODES: speed, duplex, autoneg), Coalesce, Rings, Channels, Pause.
Result<Reply> decode_settings(Section section, const nlmsghdr* nlh);

struct FeaturesReply {
    int ifindex = 0;
    std::string ifname;
    uint32_t nbits = 0;
    std::vector<uint32_t> hw, wanted, active, nochange;
};
// FEATURES_GET_REPLY / FEATURES_NTF; bitsets in compact or verbose form.
Result<FeaturesReply> decode_features(const nlmsghdr* nlh);
// The reply's bitsets as a device's FeatureSet, named by `names`.
FeatureSet to_feature_set(FeaturesReply&& r, std::shared_ptr<const FeatureNames> names);

// STRSET_GET_REPLY for ETH_SS_FEATURES: names indexed by bit.
Result<FeatureNames> decode_feature_strings(const nlmsghdr* nlh);

// A STRSET reply's set `id`: its names and, for per-device sets, the device.
struct StringSetReply {
    int ifindex = 0;  // 0: a global set
    FeatureNames names;
};
Result<StringSetReply> decode_string_set(const nlmsghdr* nlh, uint32_t id);

// The bitsets of a LINKMODES reply (decode_settings takes its scalars):
// supported and advertised from ETHTOOL_A_LINKMODES_OURS (its mask and its
// value), the link partner's from ETHTOOL_A_LINKMODES_PEER. Indexed like
// the ETH_SS_LINK_MODES names.
struct LinkModeBits {
    int ifindex = 0;
    uint32_t nbits = 0;
    bool have_ours = false;
    std::vector<uint32_t> supported, advertised, peer;
};
Result<LinkModeBits> decode_link_mode_bits(const nlmsghdr* nlh);

// PRIVFLAGS_GET_REPLY / PRIVFLAGS_NTF: the flags' bits (compact or verbose
// bitset), indexed like the device's ETH_SS_PRIV_FLAGS strings.
struct PrivFlagsReply {
    int ifindex = 0;
    uint32_t nbits = 0;
    std::vector<uint32_t> bits;
};
Result<PrivFlagsReply> decode_private_flags(const nlmsghdr* nlh);
// The reply named by the device's strings (as many as both have).
std::vector<PrivateFlag> to_private_flags(const PrivFlagsReply& r, const FeatureNames& names);
// Appends ETHTOOL_A_PRIVFLAGS_FLAGS as a verbose bitset naming each flag
// (the kernel looks the names up in the driver's set and refuses unknown
// ones), so only the named flags change.
void encode_private_flags(nlmsghdr* nlh, std::span<const PrivateFlag> flags);

// What a family's replies carry, and so which decoder reads them.
enum class Replies : uint8_t {
    Settings,  // schema scalars: decode_settings
    Features,  // the four feature bitsets: decode_features
};

// One row per ethtool message family that is one of nictune's sections, in
// the order a read asks for them (codecs.cpp, kFamilies). Adding a section
// read over ethtool netlink is one row here, its keys and attributes in the
// schema table (model/schema.cpp), and nothing else in ethnl/ or backend/.
struct Family {
    Section section;
    std::string_view name;           // "RINGS": the kernel's name for the family
    std::string_view reply_context;  // "ethtool RINGS reply": names a decoding error
    uint8_t get;                     // ETHTOOL_MSG_*_GET
    uint8_t set;                     // ETHTOOL_MSG_*_SET
    uint8_t reply;                   // ETHTOOL_MSG_*_GET_REPLY
    uint8_t ntf;                     // ETHTOOL_MSG_*_NTF (the monitor group's)
    // ETHTOOL_A_*_MAX as far as the pinned headers (third_party/uapi) know
    // it: a newer kernel's attributes above it are skipped unread.
    uint16_t max_attr;
    // The header flags of a GET or dump (ETHTOOL_FLAG_COMPACT_BITSETS where
    // replies hold bitsets). Socket::get()/dump() take them from the caller.
    uint32_t request_flags;
    Replies replies;
};
std::span<const Family> families();
const Family* family_of(Section s);  // nullptr: not an ethtool family
// The family of a kernel message (GET_REPLY or NTF); nullptr for others.
const Family* family_of_kernel_msg(uint8_t cmd);

// The table's columns one at a time, for callers that need one.
uint8_t get_cmd(Section s);  // ETHTOOL_MSG_USER_NONE for no family
uint8_t set_cmd(Section s);
std::optional<Section> section_of_kernel_msg(uint8_t cmd);
uint32_t request_flags(Section s);  // 0 for no family
// "RINGS_SET", "STRSET_GET", "command 99": a request's command in errors.
std::string command_name(uint8_t cmd);
// The request header nest attribute of each family (ETHTOOL_A_*_HEADER == 1 for all).
inline constexpr uint16_t kHeaderAttr = 1;

// Appends the header nest (ETHTOOL_A_HEADER_DEV_INDEX, _FLAGS) as attribute `attr`.
void put_header(nlmsghdr* nlh, uint16_t attr, int ifindex, uint32_t flags);

// Appends the SET attributes for `values` (keys of `section`, writable ones).
void encode_settings(nlmsghdr* nlh, Section section,
                     std::span<const std::pair<Key, uint64_t>> values);

// Appends ETHTOOL_A_FEATURES_WANTED as a compact bitset of `nbits` bits in
// which only the given feature bits are masked (changed).
void encode_features(nlmsghdr* nlh, uint32_t nbits,
                     std::span<const std::pair<std::size_t, bool>> changes);

}  // namespace nictune::ethnl
