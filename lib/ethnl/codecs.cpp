#include "ethnl/codecs.hpp"

#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <algorithm>
#include <cstring>

#include "ethnl/attr.hpp"

namespace nictune::ethnl {
namespace {

// The kernel's attribute numbering per family as far as the pinned headers
// (third_party/uapi, Linux 6.14) know it; anything above is from a newer
// kernel and is skipped unread.
uint16_t max_attr(Section s) {
    switch (s) {
        case Section::Link:
            return ETHTOOL_A_LINKMODES_MAX;
        case Section::Coalesce:
            return ETHTOOL_A_COALESCE_MAX;
        case Section::Rings:
            return ETHTOOL_A_RINGS_MAX;
        case Section::Channels:
            return ETHTOOL_A_CHANNELS_MAX;
        case Section::Pause:
            return ETHTOOL_A_PAUSE_MAX;
        case Section::Features:
            return ETHTOOL_A_FEATURES_MAX;
        default:
            return 0;
    }
}

const char* family_name(Section s) {
    switch (s) {
        case Section::Link:
            return "LINKMODES";
        case Section::Coalesce:
            return "COALESCE";
        case Section::Rings:
            return "RINGS";
        case Section::Channels:
            return "CHANNELS";
        case Section::Pause:
            return "PAUSE";
        case Section::Features:
            return "FEATURES";
        default:
            return "?";
    }
}

const char* reply_context(Section s) {
    switch (s) {
        case Section::Link:
            return "ethtool LINKMODES reply";
        case Section::Coalesce:
            return "ethtool COALESCE reply";
        case Section::Rings:
            return "ethtool RINGS reply";
        case Section::Channels:
            return "ethtool CHANNELS reply";
        case Section::Pause:
            return "ethtool PAUSE reply";
        case Section::Features:
            return "ethtool FEATURES reply";
        default:
            return "ethtool reply";
    }
}

std::unexpected<Error> corrupt(std::string_view context, std::string message) {
    return fail(Errc::Internal, std::string(context), std::move(message));
}

// Names an attribute in error messages ("hw bitset value"). Decoding runs
// for every reply of every dump, so the name is only put together on error.
struct Where {
    std::string_view what;
    std::string_view field = {};
    [[nodiscard]] std::string str() const {
        return field.empty() ? std::string(what) : fmt::format("{} {}", what, field);
    }
};

// The genetlink command of a message, after checking that it has room for
// the genetlink header at all.
Result<uint8_t> genl_cmd(const nlmsghdr* nlh, std::string_view context) {
    if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
        return corrupt(context, fmt::format("message of {} bytes has no room for the "
                                            "genetlink header",
                                            nlh->nlmsg_len));
    return static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh))->cmd;
}

// The top-level attributes of a genetlink message, rejecting a cut-off list.
Result<AttrList> top_attrs(const nlmsghdr* nlh, std::string_view context) {
    AttrList attrs = AttrList::of(nlh, GENL_HDRLEN);
    if (!attrs.complete())
        return corrupt(context,
                       "attribute list is truncated (an attribute runs past the "
                       "end of the message)");
    return attrs;
}

Result<AttrList> nest_attrs(const nlattr* nest, std::string_view context, Where where) {
    AttrList attrs = AttrList::nested(nest);
    if (!attrs.complete())
        return corrupt(context, fmt::format("{} nest is truncated", where.str()));
    return attrs;
}

std::unexpected<Error> wrong_width(const nlattr* a, std::string_view context,
                                   const std::string& what, std::size_t width) {
    return corrupt(context, fmt::format("{} (attribute {}) has {} bytes, expected {}", what,
                                        attr_type(a), attr_len(a), width));
}

template <class T>
Result<T> need(const nlattr* a, std::string_view context, Where where) {
    auto v = attr_get<T>(a);
    if (!v) return wrong_width(a, context, where.str(), sizeof(T));
    return *v;
}

struct Header {
    int ifindex = 0;
    std::string ifname;
};

// The reply header nest: every per-device reply and notification names its
// device by index; a reply without one cannot be attributed and is corrupt.
Result<Header> decode_header(const nlattr* nest, std::string_view context) {
    auto attrs = nest_attrs(nest, context, {"header"});
    if (!attrs) return std::unexpected(attrs.error());
    Header h;
    for (const nlattr* a : *attrs) {
        switch (attr_type(a)) {
            case ETHTOOL_A_HEADER_DEV_INDEX: {
                auto v = need<uint32_t>(a, context, {"header", "ETHTOOL_A_HEADER_DEV_INDEX"});
                if (!v) return std::unexpected(v.error());
                h.ifindex = static_cast<int>(*v);
                break;
            }
            case ETHTOOL_A_HEADER_DEV_NAME: {
                auto s = attr_str(a);
                if (!s)
                    return corrupt(context,
                                   "header ETHTOOL_A_HEADER_DEV_NAME is not NUL-terminated");
                h.ifname = *s;
                break;
            }
            default:
                break;
        }
    }
    if (h.ifindex <= 0) return corrupt(context, "reply header has no device index");
    return h;
}

// A device value as the schema types it: bools and enums travel as u8,
// numbers as u32.
Result<uint64_t> decode_value(const KeyInfo& info, const nlattr* a, std::string_view context) {
    std::optional<uint64_t> v;
    std::size_t width = 0;
    switch (info.type) {
        case ValueType::Bool:
            width = 1;
            if (auto b = attr_get<uint8_t>(a)) v = *b != 0 ? 1 : 0;
            break;
        case ValueType::Enum:
            width = 1;
            if (auto e = attr_get<uint8_t>(a)) v = *e;
            break;
        case ValueType::U32:
            width = 4;
            if (auto n = attr_get<uint32_t>(a)) v = *n;
            break;
        case ValueType::String:
        case ValueType::StringList:
            return corrupt(context, fmt::format("{} has no netlink encoding", key_path(info.key)));
    }
    if (!v) return wrong_width(a, context, key_path(info.key), width);
    return *v;
}

// Values the kernel uses to say "not known" rather than a real setting.
bool is_unknown_value(const KeyInfo& info, uint64_t v) {
    if (info.key == Key::LinkSpeed) return v == 0 || v == static_cast<uint32_t>(SPEED_UNKNOWN);
    // DUPLEX_UNKNOWN (0xff) and any number the enum does not name.
    if (info.type == ValueType::Enum) return v > info.max;
    return false;
}

// The kernel refuses bitsets above S16_MAX bits (ETHNL_MAX_BITSET_SIZE); a
// larger size is corrupt and must not drive an allocation.
constexpr uint32_t kMaxBitsetBits = 32767;

std::size_t words_for(uint32_t nbits) {
    return (std::size_t{nbits} + 31) / 32;
}

struct Bitset {
    uint32_t nbits = 0;
    std::vector<uint32_t> bits;
};

void set_bit(std::vector<uint32_t>& map, uint32_t i) {
    map[i / 32] |= 1U << (i % 32);
}

Result<std::vector<uint32_t>> read_words(const nlattr* a, uint32_t nbits, std::string_view context,
                                         Where where) {
    const std::size_t want = words_for(nbits) * 4;
    if (attr_len(a) < want)
        return corrupt(context, fmt::format("{} has {} bytes, {} bits need {}", where.str(),
                                            attr_len(a), nbits, want));
    std::vector<uint32_t> out(words_for(nbits));
    // An empty bitset (SIZE 0) has no words: memcpy must not see the null data().
    if (want != 0) std::memcpy(out.data(), mnl_attr_get_payload(a), want);
    return out;
}

// One ETHTOOL_A_BITSET_* nest, its value and mask apart. Compact form:
// SIZE + VALUE (+ MASK) as u32 words; verbose form: SIZE + BITS with one BIT
// nest per listed bit, the listed bits being the mask and those carrying the
// VALUE flag the value. NOMASK: no mask (every bit of the value counts).
struct ValueMask {
    uint32_t nbits = 0;
    std::vector<uint32_t> value;
    std::vector<uint32_t> mask;
    bool nomask = false;
};

Result<ValueMask> decode_value_mask(const nlattr* nest, std::string_view context,
                                    std::string_view what) {
    auto attrs = nest_attrs(nest, context, {what, "bitset"});
    if (!attrs) return std::unexpected(attrs.error());
    const nlattr* size = attrs->find(ETHTOOL_A_BITSET_SIZE);
    if (size == nullptr) return corrupt(context, fmt::format("{} bitset has no size", what));
    auto nbits = need<uint32_t>(size, context, {what, "bitset size"});
    if (!nbits) return std::unexpected(nbits.error());
    if (*nbits > kMaxBitsetBits)
        return corrupt(context, fmt::format("{} bitset size {} is implausible", what, *nbits));
    ValueMask out{*nbits, std::vector<uint32_t>(words_for(*nbits)),
                  std::vector<uint32_t>(words_for(*nbits)),
                  attrs->find(ETHTOOL_A_BITSET_NOMASK) != nullptr};
    if (const nlattr* value = attrs->find(ETHTOOL_A_BITSET_VALUE)) {
        auto v = read_words(value, *nbits, context, {what, "bitset value"});
        if (!v) return std::unexpected(v.error());
        out.value = std::move(*v);
        if (const nlattr* mask = attrs->find(ETHTOOL_A_BITSET_MASK); mask && !out.nomask) {
            auto m = read_words(mask, *nbits, context, {what, "bitset mask"});
            if (!m) return std::unexpected(m.error());
            out.mask = std::move(*m);
        } else {
            out.nomask = true;
        }
    } else if (const nlattr* bits = attrs->find(ETHTOOL_A_BITSET_BITS)) {
        auto list = nest_attrs(bits, context, {what, "bitset bits"});
        if (!list) return std::unexpected(list.error());
        for (const nlattr* bit : *list) {
            if (attr_type(bit) != ETHTOOL_A_BITSET_BITS_BIT) continue;
            auto fields = nest_attrs(bit, context, {what, "bitset bit"});
            if (!fields) return std::unexpected(fields.error());
            const nlattr* index = fields->find(ETHTOOL_A_BITSET_BIT_INDEX);
            if (index == nullptr)
                return corrupt(context, fmt::format("{} bitset bit has no index", what));
            auto i = need<uint32_t>(index, context, {what, "bitset bit index"});
            if (!i) return std::unexpected(i.error());
            if (*i >= *nbits)
                return corrupt(context, fmt::format("{} bitset bit {} is beyond its size {}", what,
                                                    *i, *nbits));
            set_bit(out.mask, *i);
            if (out.nomask || fields->find(ETHTOOL_A_BITSET_BIT_VALUE) != nullptr)
                set_bit(out.value, *i);
        }
    } else {
        out.nomask = true;
    }
    // Bits beyond the size are not part of the set.
    if (*nbits % 32 != 0) {
        out.value.back() &= (1U << (*nbits % 32)) - 1;
        out.mask.back() &= (1U << (*nbits % 32)) - 1;
    }
    return out;
}

// The bits that are set: with a mask only masked bits count.
Result<Bitset> decode_bitset(const nlattr* nest, std::string_view context, std::string_view what) {
    auto vm = decode_value_mask(nest, context, what);
    if (!vm) return std::unexpected(vm.error());
    Bitset out{vm->nbits, std::move(vm->value)};
    if (!vm->nomask)
        for (std::size_t i = 0; i < out.bits.size(); ++i)
            out.bits[i] &= vm->mask[i];
    return out;
}

}  // namespace

uint8_t get_cmd(Section s) {
    switch (s) {
        case Section::Link:
            return ETHTOOL_MSG_LINKMODES_GET;
        case Section::Coalesce:
            return ETHTOOL_MSG_COALESCE_GET;
        case Section::Rings:
            return ETHTOOL_MSG_RINGS_GET;
        case Section::Channels:
            return ETHTOOL_MSG_CHANNELS_GET;
        case Section::Features:
            return ETHTOOL_MSG_FEATURES_GET;
        case Section::Pause:
            return ETHTOOL_MSG_PAUSE_GET;
        default:
            return ETHTOOL_MSG_USER_NONE;
    }
}

uint8_t set_cmd(Section s) {
    switch (s) {
        case Section::Link:
            return ETHTOOL_MSG_LINKMODES_SET;
        case Section::Coalesce:
            return ETHTOOL_MSG_COALESCE_SET;
        case Section::Rings:
            return ETHTOOL_MSG_RINGS_SET;
        case Section::Channels:
            return ETHTOOL_MSG_CHANNELS_SET;
        case Section::Features:
            return ETHTOOL_MSG_FEATURES_SET;
        case Section::Pause:
            return ETHTOOL_MSG_PAUSE_SET;
        default:
            return ETHTOOL_MSG_USER_NONE;
    }
}

std::optional<Section> section_of_kernel_msg(uint8_t cmd) {
    switch (cmd) {
        case ETHTOOL_MSG_LINKMODES_GET_REPLY:
        case ETHTOOL_MSG_LINKMODES_NTF:
            return Section::Link;
        case ETHTOOL_MSG_COALESCE_GET_REPLY:
        case ETHTOOL_MSG_COALESCE_NTF:
            return Section::Coalesce;
        case ETHTOOL_MSG_RINGS_GET_REPLY:
        case ETHTOOL_MSG_RINGS_NTF:
            return Section::Rings;
        case ETHTOOL_MSG_CHANNELS_GET_REPLY:
        case ETHTOOL_MSG_CHANNELS_NTF:
            return Section::Channels;
        case ETHTOOL_MSG_FEATURES_GET_REPLY:
        case ETHTOOL_MSG_FEATURES_NTF:
            return Section::Features;
        case ETHTOOL_MSG_PAUSE_GET_REPLY:
        case ETHTOOL_MSG_PAUSE_NTF:
            return Section::Pause;
        default:
            return std::nullopt;
    }
}

uint32_t request_flags(Section s) {
    // Features and link modes carry bitsets; compact ones are a few words
    // instead of one nest per bit with its name (~3x the bytes and time).
    return s == Section::Features || s == Section::Link ? ETHTOOL_FLAG_COMPACT_BITSETS : 0;
}

Result<Reply> decode_settings(Section section, const nlmsghdr* nlh) {
    const char* context = reply_context(section);
    auto cmd = genl_cmd(nlh, context);
    if (!cmd) return std::unexpected(cmd.error());
    if (section == Section::Features || section_of_kernel_msg(*cmd) != section)
        return corrupt(context, fmt::format("message command {} is not a {} reply or "
                                            "notification",
                                            *cmd, family_name(section)));
    auto attrs = top_attrs(nlh, context);
    if (!attrs) return std::unexpected(attrs.error());

    Reply out;
    bool have_header = false;
    const uint16_t max = max_attr(section);
    for (const nlattr* a : *attrs) {
        const uint16_t type = attr_type(a);
        if (type == kHeaderAttr) {
            auto h = decode_header(a, context);
            if (!h) return std::unexpected(h.error());
            out.ifindex = h->ifindex;
            out.ifname = std::move(h->ifname);
            have_header = true;
            continue;
        }
        if (type > max) continue;
        auto key = key_for_attr(section, type);
        if (!key) continue;  // bitsets, stats and other attributes not in the schema
        const KeyInfo& info = key_info(*key);
        auto v = decode_value(info, a, context);
        if (!v) return std::unexpected(v.error());
        if (is_unknown_value(info, *v)) continue;
        out.values.set(*key, *v);
    }
    if (!have_header) return corrupt(context, "reply has no header");
    return out;
}

Result<FeaturesReply> decode_features(const nlmsghdr* nlh) {
    const char* context = reply_context(Section::Features);
    auto cmd = genl_cmd(nlh, context);
    if (!cmd) return std::unexpected(cmd.error());
    if (*cmd != ETHTOOL_MSG_FEATURES_GET_REPLY && *cmd != ETHTOOL_MSG_FEATURES_NTF)
        return corrupt(context, fmt::format("message command {} is not a FEATURES reply or "
                                            "notification",
                                            *cmd));
    auto attrs = top_attrs(nlh, context);
    if (!attrs) return std::unexpected(attrs.error());

    FeaturesReply out;
    bool have_header = false;
    for (const nlattr* a : *attrs) {
        std::vector<uint32_t>* target = nullptr;
        std::string_view what;
        switch (attr_type(a)) {
            case ETHTOOL_A_FEATURES_HEADER: {
                auto h = decode_header(a, context);
                if (!h) return std::unexpected(h.error());
                out.ifindex = h->ifindex;
                out.ifname = std::move(h->ifname);
                have_header = true;
                continue;
            }
            case ETHTOOL_A_FEATURES_HW:
                target = &out.hw, what = "hw";
                break;
            case ETHTOOL_A_FEATURES_WANTED:
                target = &out.wanted, what = "wanted";
                break;
            case ETHTOOL_A_FEATURES_ACTIVE:
                target = &out.active, what = "active";
                break;
            case ETHTOOL_A_FEATURES_NOCHANGE:
                target = &out.nochange, what = "nochange";
                break;
            default:
                continue;
        }
        auto set = decode_bitset(a, context, what);
        if (!set) return std::unexpected(set.error());
        out.nbits = std::max(out.nbits, set->nbits);
        *target = std::move(set->bits);
    }
    if (!have_header) return corrupt(context, "reply has no header");
    // The kernel sends all four maps with one size; make them uniform anyway
    // so that a missing map reads as all zeros.
    for (auto* map : {&out.hw, &out.wanted, &out.active, &out.nochange})
        map->resize(words_for(out.nbits));
    return out;
}

namespace {

// The names of string set `id` in a STRSET reply; `what` names it in errors.
Result<StringSetReply> decode_strings(const nlmsghdr* nlh, uint32_t set_id, std::string_view what) {
    const char* context = "ethtool STRSET reply";
    auto cmd = genl_cmd(nlh, context);
    if (!cmd) return std::unexpected(cmd.error());
    if (*cmd != ETHTOOL_MSG_STRSET_GET_REPLY)
        return corrupt(context, fmt::format("message command {} is not a STRSET reply", *cmd));
    auto attrs = top_attrs(nlh, context);
    if (!attrs) return std::unexpected(attrs.error());
    Header header;
    if (const nlattr* h = attrs->find(ETHTOOL_A_STRSET_HEADER)) {
        // Per-device sets name their device; global ones may not.
        auto attrs_h = nest_attrs(h, context, {"header"});
        if (!attrs_h) return std::unexpected(attrs_h.error());
        if (const nlattr* idx = attrs_h->find(ETHTOOL_A_HEADER_DEV_INDEX)) {
            auto v = need<uint32_t>(idx, context, {"header", "ETHTOOL_A_HEADER_DEV_INDEX"});
            if (!v) return std::unexpected(v.error());
            header.ifindex = static_cast<int>(*v);
        }
    }
    const nlattr* sets = attrs->find(ETHTOOL_A_STRSET_STRINGSETS);
    if (sets == nullptr) return corrupt(context, "reply has no string sets");
    auto set_list = nest_attrs(sets, context, {"string sets"});
    if (!set_list) return std::unexpected(set_list.error());

    for (const nlattr* set : *set_list) {
        if (attr_type(set) != ETHTOOL_A_STRINGSETS_STRINGSET) continue;
        auto fields = nest_attrs(set, context, {"string set"});
        if (!fields) return std::unexpected(fields.error());
        const nlattr* id = fields->find(ETHTOOL_A_STRINGSET_ID);
        if (id == nullptr) return corrupt(context, "string set has no id");
        auto idv = need<uint32_t>(id, context, {"string set id"});
        if (!idv) return std::unexpected(idv.error());
        if (*idv != set_id) continue;

        const nlattr* count = fields->find(ETHTOOL_A_STRINGSET_COUNT);
        if (count == nullptr)
            return corrupt(context, fmt::format("{} string set has no count", what));
        auto n = need<uint32_t>(count, context, {what, "string set count"});
        if (!n) return std::unexpected(n.error());
        // A count beyond what the message could hold is corrupt, not a reason
        // to allocate gigabytes.
        if (*n > nlh->nlmsg_len)
            return corrupt(context, fmt::format("{} string set count {} exceeds the "
                                                "message size",
                                                what, *n));
        FeatureNames names(*n);
        const nlattr* strings = fields->find(ETHTOOL_A_STRINGSET_STRINGS);
        if (strings == nullptr) {
            if (*n == 0) return StringSetReply{header.ifindex, std::move(names)};
            return corrupt(context, fmt::format("{} string set has no strings", what));
        }
        auto list = nest_attrs(strings, context, {what, "strings"});
        if (!list) return std::unexpected(list.error());
        for (const nlattr* s : *list) {
            if (attr_type(s) != ETHTOOL_A_STRINGS_STRING) continue;
            auto entry = nest_attrs(s, context, {what, "string"});
            if (!entry) return std::unexpected(entry.error());
            const nlattr* index = entry->find(ETHTOOL_A_STRING_INDEX);
            const nlattr* value = entry->find(ETHTOOL_A_STRING_VALUE);
            if (index == nullptr || value == nullptr)
                return corrupt(context, fmt::format("{} string without index or value", what));
            auto i = need<uint32_t>(index, context, {what, "string index"});
            if (!i) return std::unexpected(i.error());
            if (*i >= *n)
                return corrupt(context, fmt::format("{} string index {} is beyond the "
                                                    "count {}",
                                                    what, *i, *n));
            auto text = attr_str(value);
            if (!text)
                return corrupt(context,
                               fmt::format("{} string {} is not NUL-terminated", what, *i));
            names[*i] = *text;
        }
        return StringSetReply{header.ifindex, std::move(names)};
    }
    return corrupt(context, fmt::format("reply has no {} string set", what));
}

}  // namespace

Result<FeatureNames> decode_feature_strings(const nlmsghdr* nlh) {
    auto r = decode_strings(nlh, ETH_SS_FEATURES, "feature");
    if (!r) return std::unexpected(r.error());
    return std::move(r->names);
}

Result<StringSetReply> decode_string_set(const nlmsghdr* nlh, uint32_t id) {
    return decode_strings(nlh, id, id == ETH_SS_LINK_MODES ? "link mode" : "string");
}

Result<LinkModeBits> decode_link_mode_bits(const nlmsghdr* nlh) {
    const char* context = reply_context(Section::Link);
    auto cmd = genl_cmd(nlh, context);
    if (!cmd) return std::unexpected(cmd.error());
    if (section_of_kernel_msg(*cmd) != Section::Link)
        return corrupt(context, fmt::format("message command {} is not a LINKMODES reply or "
                                            "notification",
                                            *cmd));
    auto attrs = top_attrs(nlh, context);
    if (!attrs) return std::unexpected(attrs.error());
    LinkModeBits out;
    bool have_header = false;
    for (const nlattr* a : *attrs) {
        switch (attr_type(a)) {
            case ETHTOOL_A_LINKMODES_HEADER: {
                auto h = decode_header(a, context);
                if (!h) return std::unexpected(h.error());
                out.ifindex = h->ifindex;
                have_header = true;
                break;
            }
            case ETHTOOL_A_LINKMODES_OURS: {
                auto vm = decode_value_mask(a, context, "ours");
                if (!vm) return std::unexpected(vm.error());
                out.nbits = std::max(out.nbits, vm->nbits);
                // The kernel sends advertised as the value, supported as the mask.
                out.advertised = vm->value;
                out.supported = vm->nomask ? vm->value : vm->mask;
                out.have_ours = true;
                break;
            }
            case ETHTOOL_A_LINKMODES_PEER: {
                auto vm = decode_value_mask(a, context, "peer");
                if (!vm) return std::unexpected(vm.error());
                out.nbits = std::max(out.nbits, vm->nbits);
                out.peer = std::move(vm->value);
                break;
            }
            default:
                break;
        }
    }
    if (!have_header) return corrupt(context, "reply has no header");
    for (auto* map : {&out.supported, &out.advertised, &out.peer})
        map->resize(words_for(out.nbits));
    return out;
}

void put_header(nlmsghdr* nlh, uint16_t attr, int ifindex, uint32_t flags) {
    nlattr* nest = mnl_attr_nest_start(nlh, attr);
    if (ifindex > 0)
        mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, static_cast<uint32_t>(ifindex));
    mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, flags);
    mnl_attr_nest_end(nlh, nest);
}

void encode_settings(nlmsghdr* nlh, Section section,
                     std::span<const std::pair<Key, uint64_t>> values) {
    for (const auto& [key, value] : values) {
        const KeyInfo& info = key_info(key);
        // Link's mtu/txqueuelen are rtnetlink settings (attr 0), not ethtool ones.
        if (info.section != section || !info.writable || info.attr == 0) continue;
        switch (info.type) {
            case ValueType::Bool:
                mnl_attr_put_u8(nlh, info.attr, value != 0 ? 1 : 0);
                break;
            case ValueType::Enum:
                mnl_attr_put_u8(nlh, info.attr, static_cast<uint8_t>(value));
                break;
            case ValueType::U32:
                mnl_attr_put_u32(nlh, info.attr, static_cast<uint32_t>(value));
                break;
            case ValueType::String:
            case ValueType::StringList:
                break;
        }
    }
}

void encode_features(nlmsghdr* nlh, uint32_t nbits,
                     std::span<const std::pair<std::size_t, bool>> changes) {
    std::vector<uint32_t> value(words_for(nbits));
    std::vector<uint32_t> mask(words_for(nbits));
    for (const auto& [bit, on] : changes) {
        if (bit >= nbits) continue;
        const auto i = static_cast<uint32_t>(bit);
        set_bit(mask, i);
        if (on) set_bit(value, i);
    }
    nlattr* nest = mnl_attr_nest_start(nlh, ETHTOOL_A_FEATURES_WANTED);
    mnl_attr_put_u32(nlh, ETHTOOL_A_BITSET_SIZE, nbits);
    mnl_attr_put(nlh, ETHTOOL_A_BITSET_VALUE, value.size() * 4, value.data());
    mnl_attr_put(nlh, ETHTOOL_A_BITSET_MASK, mask.size() * 4, mask.data());
    mnl_attr_nest_end(nlh, nest);
}

Result<PrivFlagsReply> decode_private_flags(const nlmsghdr* nlh) {
    const char* context = "ethtool PRIVFLAGS reply";
    auto cmd = genl_cmd(nlh, context);
    if (!cmd) return std::unexpected(cmd.error());
    if (*cmd != ETHTOOL_MSG_PRIVFLAGS_GET_REPLY && *cmd != ETHTOOL_MSG_PRIVFLAGS_NTF)
        return corrupt(
            context,
            fmt::format("message command {} is not a PRIVFLAGS reply or notification", *cmd));
    auto attrs = top_attrs(nlh, context);
    if (!attrs) return std::unexpected(attrs.error());
    PrivFlagsReply out;
    bool have_header = false;
    for (const nlattr* a : *attrs) {
        switch (attr_type(a)) {
            case ETHTOOL_A_PRIVFLAGS_HEADER: {
                auto h = decode_header(a, context);
                if (!h) return std::unexpected(h.error());
                out.ifindex = h->ifindex;
                have_header = true;
                break;
            }
            case ETHTOOL_A_PRIVFLAGS_FLAGS: {
                auto set = decode_bitset(a, context, "flags");
                if (!set) return std::unexpected(set.error());
                out.nbits = set->nbits;
                out.bits = std::move(set->bits);
                break;
            }
            default:
                break;
        }
    }
    if (!have_header) return corrupt(context, "reply has no header");
    out.bits.resize(words_for(out.nbits));
    return out;
}

std::vector<PrivateFlag> to_private_flags(const PrivFlagsReply& r, const FeatureNames& names) {
    std::vector<PrivateFlag> out;
    const std::size_t n = std::min<std::size_t>(r.nbits, names.size());
    for (std::size_t i = 0; i < n; ++i)
        out.push_back(PrivateFlag{names[i], FeatureSet::bit(r.bits, i)});
    return out;
}

void encode_private_flags(nlmsghdr* nlh, std::span<const PrivateFlag> flags) {
    nlattr* nest = mnl_attr_nest_start(nlh, ETHTOOL_A_PRIVFLAGS_FLAGS);
    nlattr* bits = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS);
    for (const auto& f : flags) {
        nlattr* bit = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS_BIT);
        mnl_attr_put_strz(nlh, ETHTOOL_A_BITSET_BIT_NAME, f.name.c_str());
        if (f.on) mnl_attr_put(nlh, ETHTOOL_A_BITSET_BIT_VALUE, 0, nullptr);
        mnl_attr_nest_end(nlh, bit);
    }
    mnl_attr_nest_end(nlh, bits);
    mnl_attr_nest_end(nlh, nest);
}

FeatureSet to_feature_set(FeaturesReply&& r, std::shared_ptr<const FeatureNames> names) {
    FeatureSet fs;
    fs.names = std::move(names);
    fs.hw = std::move(r.hw);
    fs.wanted = std::move(r.wanted);
    fs.active = std::move(r.active);
    fs.nochange = std::move(r.nochange);
    return fs;
}

}  // namespace nictune::ethnl
