#include "ethnl/codecs.hpp"

#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <algorithm>
#include <cstring>

#include "netlink/attr.hpp"
#include "util/find.hpp"

namespace nictune::ethnl {
namespace {

using netlink::attr_get;
using netlink::attr_len;
using netlink::attr_str;
using netlink::attr_type;
using netlink::AttrList;

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

// A nest's attributes, rejecting a cut-off list (the name is put together
// only then).
Result<AttrList> nest_attrs(const nlattr* nest, std::string_view context, Where where) {
    AttrList attrs = AttrList::nested(nest);
    if (!attrs.complete())
        return corrupt(context, fmt::format("{} nest is truncated", where.str()));
    return attrs;
}

// Each nest of type `type` in the nest `list` (a bitset's bits, a string
// set's strings), as its own attributes: f(attrs) -> Result<void>. Other
// types are passed over; a cut-off list or entry is corrupt.
template <class F>
Result<void> for_each_nest(const nlattr* list, uint16_t type, std::string_view context,
                           Where list_where, Where entry_where, F&& f) {
    auto entries = nest_attrs(list, context, list_where);
    if (!entries) return std::unexpected(entries.error());
    for (const nlattr* entry : *entries) {
        if (attr_type(entry) != type) continue;
        auto attrs = nest_attrs(entry, context, entry_where);
        if (!attrs) return std::unexpected(attrs.error());
        if (auto r = f(*attrs); !r) return r;
    }
    return {};
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

// The words of a, into `out` (sized for nbits already: the decoder makes it
// once, and a features dump of 512 interfaces decodes 2,048 of these).
Result<void> read_words(const nlattr* a, uint32_t nbits, std::string_view context, Where where,
                        std::vector<uint32_t>& out) {
    const std::size_t want = words_for(nbits) * 4;
    if (attr_len(a) < want)
        return corrupt(context, fmt::format("{} has {} bytes, {} bits need {}", where.str(),
                                            attr_len(a), nbits, want));
    // An empty bitset (SIZE 0) has no words: memcpy must not see the null data().
    if (want != 0) std::memcpy(out.data(), mnl_attr_get_payload(a), want);
    return {};
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

// and_mask: the mask goes into the value (value & mask) and is not kept, for
// a reader of the set bits alone (decode_bitset: four per features reply).
Result<ValueMask> decode_value_mask(const nlattr* nest, std::string_view context,
                                    std::string_view what, bool and_mask = false) {
    auto attrs = nest_attrs(nest, context, {what, "bitset"});
    if (!attrs) return std::unexpected(attrs.error());
    const nlattr* size = attrs->find(ETHTOOL_A_BITSET_SIZE);
    if (size == nullptr) return corrupt(context, fmt::format("{} bitset has no size", what));
    auto nbits = need<uint32_t>(size, context, {what, "bitset size"});
    if (!nbits) return std::unexpected(nbits.error());
    if (*nbits > kMaxBitsetBits)
        return corrupt(context, fmt::format("{} bitset size {} is implausible", what, *nbits));
    const std::size_t words = words_for(*nbits);
    ValueMask out{*nbits, std::vector<uint32_t>(words),
                  and_mask ? std::vector<uint32_t>() : std::vector<uint32_t>(words),
                  attrs->find(ETHTOOL_A_BITSET_NOMASK) != nullptr};
    if (const nlattr* value = attrs->find(ETHTOOL_A_BITSET_VALUE)) {
        if (auto v = read_words(value, *nbits, context, {what, "bitset value"}, out.value); !v)
            return std::unexpected(v.error());
        if (const nlattr* mask = attrs->find(ETHTOOL_A_BITSET_MASK); mask && !out.nomask) {
            if (!and_mask) {
                if (auto m = read_words(mask, *nbits, context, {what, "bitset mask"}, out.mask); !m)
                    return std::unexpected(m.error());
            } else if (attr_len(mask) < words * 4) {
                return corrupt(context, fmt::format("{} bitset mask has {} bytes, {} bits need {}",
                                                    what, attr_len(mask), *nbits, words * 4));
            } else {
                const auto* p = static_cast<const unsigned char*>(mnl_attr_get_payload(mask));
                for (std::size_t i = 0; i < words; ++i) {
                    uint32_t m;
                    std::memcpy(&m, p + i * 4, 4);
                    out.value[i] &= m;
                }
            }
        } else {
            out.nomask = true;
        }
    } else if (const nlattr* bits = attrs->find(ETHTOOL_A_BITSET_BITS)) {
        auto walked = for_each_nest(
            bits, ETHTOOL_A_BITSET_BITS_BIT, context, {what, "bitset bits"}, {what, "bitset bit"},
            [&](const AttrList& fields) -> Result<void> {
                const nlattr* index = fields.find(ETHTOOL_A_BITSET_BIT_INDEX);
                if (index == nullptr)
                    return corrupt(context, fmt::format("{} bitset bit has no index", what));
                auto i = need<uint32_t>(index, context, {what, "bitset bit index"});
                if (!i) return std::unexpected(i.error());
                if (*i >= *nbits)
                    return corrupt(context, fmt::format("{} bitset bit {} is beyond its size {}",
                                                        what, *i, *nbits));
                // and_mask: an unlisted bit is clear in the value already.
                if (!and_mask) set_bit(out.mask, *i);
                if (out.nomask || fields.find(ETHTOOL_A_BITSET_BIT_VALUE) != nullptr)
                    set_bit(out.value, *i);
                return {};
            });
        if (!walked) return std::unexpected(walked.error());
    } else {
        out.nomask = true;
    }
    // Bits beyond the size are not part of the set.
    if (*nbits % 32 != 0) {
        out.value.back() &= (1U << (*nbits % 32)) - 1;
        if (!out.mask.empty()) out.mask.back() &= (1U << (*nbits % 32)) - 1;
    }
    return out;
}

// The bits that are set: with a mask only masked bits count.
Result<Bitset> decode_bitset(const nlattr* nest, std::string_view context, std::string_view what) {
    auto vm = decode_value_mask(nest, context, what, true);
    if (!vm) return std::unexpected(vm.error());
    return Bitset{vm->nbits, std::move(vm->value)};
}

// The families, in the order a read asks for them. Replies: what a reply
// carries, and so which decoder reads it. request_flags: features and link
// modes carry bitsets; compact ones are a few words instead of one nest per
// bit with its name (~3x the bytes and time). max_attr: the kernel's
// attribute numbering as far as the pinned headers (third_party/uapi, Linux
// 6.14) know it; anything above is from a newer kernel and is skipped unread.
constexpr Family kFamilies[] = {
    {Section::Link, "LINKMODES", "ethtool LINKMODES reply", ETHTOOL_MSG_LINKMODES_GET,
     ETHTOOL_MSG_LINKMODES_SET, ETHTOOL_MSG_LINKMODES_GET_REPLY, ETHTOOL_MSG_LINKMODES_NTF,
     ETHTOOL_A_LINKMODES_MAX, ETHTOOL_FLAG_COMPACT_BITSETS, Replies::Settings},
    {Section::Coalesce, "COALESCE", "ethtool COALESCE reply", ETHTOOL_MSG_COALESCE_GET,
     ETHTOOL_MSG_COALESCE_SET, ETHTOOL_MSG_COALESCE_GET_REPLY, ETHTOOL_MSG_COALESCE_NTF,
     ETHTOOL_A_COALESCE_MAX, 0, Replies::Settings},
    {Section::Rings, "RINGS", "ethtool RINGS reply", ETHTOOL_MSG_RINGS_GET, ETHTOOL_MSG_RINGS_SET,
     ETHTOOL_MSG_RINGS_GET_REPLY, ETHTOOL_MSG_RINGS_NTF, ETHTOOL_A_RINGS_MAX, 0, Replies::Settings},
    {Section::Channels, "CHANNELS", "ethtool CHANNELS reply", ETHTOOL_MSG_CHANNELS_GET,
     ETHTOOL_MSG_CHANNELS_SET, ETHTOOL_MSG_CHANNELS_GET_REPLY, ETHTOOL_MSG_CHANNELS_NTF,
     ETHTOOL_A_CHANNELS_MAX, 0, Replies::Settings},
    {Section::Pause, "PAUSE", "ethtool PAUSE reply", ETHTOOL_MSG_PAUSE_GET, ETHTOOL_MSG_PAUSE_SET,
     ETHTOOL_MSG_PAUSE_GET_REPLY, ETHTOOL_MSG_PAUSE_NTF, ETHTOOL_A_PAUSE_MAX, 0, Replies::Settings},
    {Section::Features, "FEATURES", "ethtool FEATURES reply", ETHTOOL_MSG_FEATURES_GET,
     ETHTOOL_MSG_FEATURES_SET, ETHTOOL_MSG_FEATURES_GET_REPLY, ETHTOOL_MSG_FEATURES_NTF,
     ETHTOOL_A_FEATURES_MAX, ETHTOOL_FLAG_COMPACT_BITSETS, Replies::Features},
};

// Commands nictune sends that are no section's family, for describing requests.
constexpr std::pair<uint8_t, std::string_view> kOtherCommands[] = {
    {ETHTOOL_MSG_STRSET_GET, "STRSET_GET"},       {ETHTOOL_MSG_LINKINFO_GET, "LINKINFO_GET"},
    {ETHTOOL_MSG_LINKINFO_SET, "LINKINFO_SET"},   {ETHTOOL_MSG_PRIVFLAGS_GET, "PRIVFLAGS_GET"},
    {ETHTOOL_MSG_PRIVFLAGS_SET, "PRIVFLAGS_SET"},
};

// The kind of message a decoder expects, named in its errors.
struct Kind {
    std::string_view context;  // "ethtool RINGS reply"
    std::string_view name;     // "RINGS"
    uint8_t reply;             // ETHTOOL_MSG_*_GET_REPLY
    uint8_t ntf;               // ETHTOOL_MSG_*_NTF; 0: the family has none
};

Kind kind_of(const Family& f) {
    return {f.reply_context, f.name, f.reply, f.ntf};
}

constexpr Kind kPrivFlags{"ethtool PRIVFLAGS reply", "PRIVFLAGS", ETHTOOL_MSG_PRIVFLAGS_GET_REPLY,
                          ETHTOOL_MSG_PRIVFLAGS_NTF};
constexpr Kind kStrset{"ethtool STRSET reply", "STRSET", ETHTOOL_MSG_STRSET_GET_REPLY, 0};

// The top-level attributes of a message of `kind`, checked whole.
Result<AttrList> message_attrs(const nlmsghdr* nlh, const Kind& kind) {
    auto cmd = genl_cmd(nlh, kind.context);
    if (!cmd) return std::unexpected(std::move(cmd.error()));
    if (*cmd != kind.reply && (kind.ntf == 0 || *cmd != kind.ntf))
        return corrupt(kind.context,
                       fmt::format("message command {} is not a {} reply{}", *cmd, kind.name,
                                   kind.ntf != 0 ? " or notification" : ""));
    return netlink::checked(AttrList::of(nlh, GENL_HDRLEN), kind.context, "attribute list");
}

// A per-device reply or notification of `kind`: its header nest
// (kHeaderAttr, which every such reply has) and every other attribute
// handed to on_attr, whose error stops the walk.
template <class Fn>
Result<Header> walk_reply(const nlmsghdr* nlh, const Kind& kind, Fn&& on_attr) {
    auto attrs = message_attrs(nlh, kind);
    if (!attrs) return std::unexpected(std::move(attrs.error()));
    std::optional<Header> header;
    for (const nlattr* a : *attrs) {
        if (attr_type(a) == kHeaderAttr) {
            auto h = decode_header(a, kind.context);
            if (!h) return std::unexpected(std::move(h.error()));
            header = std::move(*h);
            continue;
        }
        if (Result<void> r = on_attr(a); !r) return std::unexpected(std::move(r.error()));
    }
    if (!header) return corrupt(kind.context, "reply has no header");
    return std::move(*header);
}

}  // namespace

std::span<const Family> families() {
    return kFamilies;
}

const Family* family_of(Section s) {
    return find_first(kFamilies, [&](const Family& f) { return f.section == s; });
}

const Family* family_of_kernel_msg(uint8_t cmd) {
    return find_first(kFamilies, [&](const Family& f) { return f.reply == cmd || f.ntf == cmd; });
}

uint8_t get_cmd(Section s) {
    const Family* f = family_of(s);
    return f != nullptr ? f->get : uint8_t{ETHTOOL_MSG_USER_NONE};
}

uint8_t set_cmd(Section s) {
    const Family* f = family_of(s);
    return f != nullptr ? f->set : uint8_t{ETHTOOL_MSG_USER_NONE};
}

std::optional<Section> section_of_kernel_msg(uint8_t cmd) {
    const Family* f = family_of_kernel_msg(cmd);
    if (f == nullptr) return std::nullopt;
    return f->section;
}

uint32_t request_flags(Section s) {
    const Family* f = family_of(s);
    return f != nullptr ? f->request_flags : 0;
}

std::string command_name(uint8_t cmd) {
    for (const Family& f : kFamilies) {
        if (f.get == cmd) return fmt::format("{}_GET", f.name);
        if (f.set == cmd) return fmt::format("{}_SET", f.name);
    }
    for (const auto& [c, name] : kOtherCommands)
        if (c == cmd) return std::string(name);
    return fmt::format("command {}", cmd);
}

Result<Reply> decode_settings(Section section, const nlmsghdr* nlh) {
    const Family* family = family_of(section);
    if (family == nullptr || family->replies != Replies::Settings)
        return corrupt("ethtool reply", fmt::format("[{}] has no ethtool settings family",
                                                    section_info(section).name));
    const Kind kind = kind_of(*family);
    Reply out;
    auto header = walk_reply(nlh, kind, [&](const nlattr* a) -> Result<void> {
        const uint16_t type = attr_type(a);
        if (type > family->max_attr) return {};
        auto key = key_for_attr(section, type);
        if (!key) return {};  // bitsets, stats and other attributes not in the schema
        const KeyInfo& info = key_info(*key);
        auto v = decode_value(info, a, kind.context);
        if (!v) return std::unexpected(std::move(v.error()));
        if (!is_unknown_value(info, *v)) out.values.set(*key, *v);
        return {};
    });
    if (!header) return std::unexpected(std::move(header.error()));
    out.ifindex = header->ifindex;
    out.ifname = std::move(header->ifname);
    return out;
}

namespace {

// The feature maps of a FEATURES reply: the attribute, the map it fills and
// its name in errors.
struct FeatureMap {
    uint16_t attr;
    std::vector<uint32_t> FeaturesReply::*map;
    std::string_view what;
};
constexpr FeatureMap kFeatureMaps[] = {
    {ETHTOOL_A_FEATURES_HW, &FeaturesReply::hw, "hw"},
    {ETHTOOL_A_FEATURES_WANTED, &FeaturesReply::wanted, "wanted"},
    {ETHTOOL_A_FEATURES_ACTIVE, &FeaturesReply::active, "active"},
    {ETHTOOL_A_FEATURES_NOCHANGE, &FeaturesReply::nochange, "nochange"},
};

}  // namespace

Result<FeaturesReply> decode_features(const nlmsghdr* nlh) {
    const Kind kind = kind_of(*family_of(Section::Features));
    FeaturesReply out;
    auto header = walk_reply(nlh, kind, [&](const nlattr* a) -> Result<void> {
        const FeatureMap* m =
            find_first(kFeatureMaps, [&](const FeatureMap& f) { return f.attr == attr_type(a); });
        if (m == nullptr) return {};
        auto set = decode_bitset(a, kind.context, m->what);
        if (!set) return std::unexpected(std::move(set.error()));
        out.nbits = std::max(out.nbits, set->nbits);
        out.*m->map = std::move(set->bits);
        return {};
    });
    if (!header) return std::unexpected(std::move(header.error()));
    out.ifindex = header->ifindex;
    out.ifname = std::move(header->ifname);
    // The kernel sends all four maps with one size; make them uniform anyway
    // so that a missing map reads as all zeros.
    for (const FeatureMap& m : kFeatureMaps)
        (out.*m.map).resize(words_for(out.nbits));
    return out;
}

namespace {

// The names of string set `id` in a STRSET reply; `what` names it in errors.
Result<StringSetReply> decode_strings(const nlmsghdr* nlh, uint32_t set_id, std::string_view what) {
    const std::string_view context = kStrset.context;
    auto attrs = message_attrs(nlh, kStrset);
    if (!attrs) return std::unexpected(std::move(attrs.error()));
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
        auto walked = for_each_nest(
            strings, ETHTOOL_A_STRINGS_STRING, context, {what, "strings"}, {what, "string"},
            [&](const AttrList& entry) -> Result<void> {
                const nlattr* index = entry.find(ETHTOOL_A_STRING_INDEX);
                const nlattr* value = entry.find(ETHTOOL_A_STRING_VALUE);
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
                return {};
            });
        if (!walked) return std::unexpected(walked.error());
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
    const std::string_view what = id == ETH_SS_FEATURES     ? "feature"
                                  : id == ETH_SS_LINK_MODES ? "link mode"
                                                            : "string";
    return decode_strings(nlh, id, what);
}

Result<LinkModeBits> decode_link_mode_bits(const nlmsghdr* nlh) {
    const Kind kind = kind_of(*family_of(Section::Link));
    LinkModeBits out;
    auto header = walk_reply(nlh, kind, [&](const nlattr* a) -> Result<void> {
        const uint16_t type = attr_type(a);
        if (type != ETHTOOL_A_LINKMODES_OURS && type != ETHTOOL_A_LINKMODES_PEER) return {};
        const bool ours = type == ETHTOOL_A_LINKMODES_OURS;
        auto vm = decode_value_mask(a, kind.context, ours ? "ours" : "peer");
        if (!vm) return std::unexpected(std::move(vm.error()));
        out.nbits = std::max(out.nbits, vm->nbits);
        if (ours) {
            // The kernel sends advertised as the value, supported as the mask.
            out.advertised = vm->value;
            out.supported = vm->nomask ? vm->value : vm->mask;
            out.have_ours = true;
        } else {
            out.peer = std::move(vm->value);
        }
        return {};
    });
    if (!header) return std::unexpected(std::move(header.error()));
    out.ifindex = header->ifindex;
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
    PrivFlagsReply out;
    auto header = walk_reply(nlh, kPrivFlags, [&](const nlattr* a) -> Result<void> {
        if (attr_type(a) != ETHTOOL_A_PRIVFLAGS_FLAGS) return {};
        auto set = decode_bitset(a, kPrivFlags.context, "flags");
        if (!set) return std::unexpected(std::move(set.error()));
        out.nbits = set->nbits;
        out.bits = std::move(set->bits);
        return {};
    });
    if (!header) return std::unexpected(std::move(header.error()));
    out.ifindex = header->ifindex;
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
