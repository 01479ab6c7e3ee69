#include "sysinfo/rss_ioctl.hpp"

#include <linux/ethtool.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "model/rss.hpp"

namespace nictune::sysinfo::rss {
namespace {

// The offsets this codec writes and reads, held to the uapi header's structs.
static_assert(offsetof(ethtool_rxnfc, cmd) == 0 && offsetof(ethtool_rxnfc, flow_type) == 4 &&
              offsetof(ethtool_rxnfc, data) == 8);
static_assert(offsetof(ethtool_rxfh, cmd) == 0 && offsetof(ethtool_rxfh, rss_context) == 4 &&
              offsetof(ethtool_rxfh, indir_size) == 8 && offsetof(ethtool_rxfh, key_size) == 12 &&
              offsetof(ethtool_rxfh, hfunc) == 16 && offsetof(ethtool_rxfh, rsvd32) == 20 &&
              offsetof(ethtool_rxfh, rss_config) == 24 && sizeof(ethtool_rxfh) == 24);
constexpr std::size_t kRxnfcDataEnd = 16;  // cmd, flow_type, data: what GRXFH copies
constexpr std::size_t kRxfhHeader = sizeof(ethtool_rxfh);
constexpr std::size_t kInputXfrm = offsetof(ethtool_rxfh, hfunc) + 1;
// No NIC has tables or keys near this; a reply claiming more is corrupt.
constexpr uint32_t kMaxIndir = 1U << 16;
constexpr uint32_t kMaxKey = 1U << 12;

template <class T>
void put(std::vector<uint8_t>& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof v);
}
template <class T>
T get(std::span<const uint8_t> b, std::size_t at) {
    T v{};
    std::memcpy(&v, b.data() + at, sizeof v);
    return v;
}

std::unexpected<Error> corrupt(std::string what) {
    return fail(Errc::Internal, "rss ioctl reply", std::move(what));
}

// A request a driver may lack: the part is then absent, not an error.
bool not_answered(const Error& e) {
    return e.code == Errc::Unsupported || e.sys_errno == EINVAL;
}

// What a reply must have before any of its fields is read: the bytes of its
// header (`header` names them) and the command it answers.
Result<void> check_reply(std::span<const uint8_t> bytes, std::string_view type,
                         std::size_t header_size, std::string_view header, uint32_t cmd,
                         std::string_view cmd_name) {
    if (bytes.size() < header_size)
        return corrupt(std::string(type) + " of " + std::to_string(bytes.size()) +
                       " bytes, shorter than its " + std::string(header));
    if (const auto answered = get<uint32_t>(bytes, 0); answered != cmd)
        return corrupt(std::string(type) + " answers command " + std::to_string(answered) +
                       ", not " + std::string(cmd_name));
    return {};
}

Error named(Error e, const std::string& name, std::string_view what) {
    e.context = name + ": " + std::string(what);
    return e;
}

}  // namespace

std::vector<uint8_t> encode_rxnfc(uint32_t cmd, uint32_t flow_type, uint64_t data) {
    std::vector<uint8_t> b(sizeof(ethtool_rxnfc), 0);
    put(b, offsetof(ethtool_rxnfc, cmd), cmd);
    put(b, offsetof(ethtool_rxnfc, flow_type), flow_type);
    put(b, offsetof(ethtool_rxnfc, data), data);
    return b;
}

Result<uint64_t> decode_rxnfc_data(std::span<const uint8_t> bytes, uint32_t cmd) {
    if (auto ok = check_reply(bytes, "ethtool_rxnfc", kRxnfcDataEnd, "cmd, flow_type and data", cmd,
                              std::to_string(cmd));
        !ok)
        return std::unexpected(ok.error());
    return get<uint64_t>(bytes, offsetof(ethtool_rxnfc, data));
}

std::vector<uint8_t> encode_rxfh_query() {
    return encode_rxfh_get(0, 0);
}

std::vector<uint8_t> encode_rxfh_get(uint32_t indir_size, uint32_t key_size) {
    std::vector<uint8_t> b(kRxfhHeader + std::size_t{indir_size} * 4 + key_size, 0);
    put(b, offsetof(ethtool_rxfh, cmd), uint32_t{ETHTOOL_GRSSH});
    put(b, offsetof(ethtool_rxfh, indir_size), indir_size);
    put(b, offsetof(ethtool_rxfh, key_size), key_size);
    return b;
}

Result<RxfhReply> decode_rxfh(std::span<const uint8_t> bytes, bool with_table) {
    if (auto ok = check_reply(bytes, "ethtool_rxfh", kRxfhHeader, "header", ETHTOOL_GRSSH, "GRSSH");
        !ok)
        return std::unexpected(ok.error());
    RxfhReply r;
    r.indir_size = get<uint32_t>(bytes, offsetof(ethtool_rxfh, indir_size));
    r.key_size = get<uint32_t>(bytes, offsetof(ethtool_rxfh, key_size));
    r.hfunc = get<uint8_t>(bytes, offsetof(ethtool_rxfh, hfunc));
    r.input_xfrm = get<uint8_t>(bytes, kInputXfrm);
    if (r.indir_size > kMaxIndir || r.key_size > kMaxKey)
        return corrupt("ethtool_rxfh claims a table of " + std::to_string(r.indir_size) +
                       " entries and a key of " + std::to_string(r.key_size) + " bytes");
    if (!with_table) return r;
    const std::size_t need = kRxfhHeader + std::size_t{r.indir_size} * 4 + r.key_size;
    if (bytes.size() < need)
        return corrupt("ethtool_rxfh of " + std::to_string(bytes.size()) +
                       " bytes, its table and key need " + std::to_string(need));
    r.indirection.resize(r.indir_size);
    for (uint32_t i = 0; i < r.indir_size; ++i)
        r.indirection[i] = get<uint32_t>(bytes, kRxfhHeader + std::size_t{i} * 4);
    return r;
}

std::vector<uint8_t> encode_rxfh_set(std::span<const uint32_t> table, uint8_t input_xfrm) {
    std::vector<uint8_t> b(kRxfhHeader + table.size() * 4, 0);
    put(b, offsetof(ethtool_rxfh, cmd), uint32_t{ETHTOOL_SRSSH});
    put(b, kInputXfrm, input_xfrm);
    put(b, offsetof(ethtool_rxfh, indir_size), static_cast<uint32_t>(table.size()));
    // key_size 0: the key stays; hfunc 0 is ETH_RSS_HASH_NO_CHANGE.
    for (std::size_t i = 0; i < table.size(); ++i)
        put(b, kRxfhHeader + i * 4, table[i]);
    return b;
}

Result<std::optional<RssState>> read(const IoctlSocket& io, std::string_view ifname,
                                     const std::string& name) {
    RssState st;
    bool any = false;
    {
        auto b = encode_rxnfc(ETHTOOL_GRXRINGS, 0, 0);
        if (auto r = io.ethtool(ifname, b.data(), "rss: rx rings: get"); r) {
            auto d = decode_rxnfc_data(b, ETHTOOL_GRXRINGS);
            if (!d) return std::unexpected(named(d.error(), name, "rss: rx rings: get"));
            st.rx_rings = *d;
            any = true;
        } else if (!not_answered(r.error())) {
            return std::unexpected(named(r.error(), name, "rss: rx rings: get"));
        }
    }
    {
        auto q = encode_rxfh_query();
        if (auto r = io.ethtool(ifname, q.data(), "rss: indirection: get"); r) {
            auto head = decode_rxfh(q, false);
            if (!head) return std::unexpected(named(head.error(), name, "rss: indirection: get"));
            auto full = encode_rxfh_get(head->indir_size, head->key_size);
            if (head->indir_size || head->key_size) {
                if (auto r2 = io.ethtool(ifname, full.data(), "rss: indirection: get"); !r2)
                    return std::unexpected(named(r2.error(), name, "rss: indirection: get"));
                head = decode_rxfh(full, true);
                if (!head)
                    return std::unexpected(named(head.error(), name, "rss: indirection: get"));
            }
            st.indirection = std::move(head->indirection);
            st.key_size = head->key_size;
            st.hfunc = head->hfunc;
            any = true;
        } else if (!not_answered(r.error())) {
            return std::unexpected(named(r.error(), name, "rss: indirection: get"));
        }
    }
    for (const auto& flow : rss_flow_types()) {
        auto b = encode_rxnfc(ETHTOOL_GRXFH, flow.value, 0);
        const std::string what = "rss.hash." + std::string(flow.name) + ": get";
        if (auto r = io.ethtool(ifname, b.data(), what); !r) {
            // No answer for tcp4, the flow type every RSS driver hashes:
            // a driver without GRXFH (veth, netdevsim). Asking the other
            // eight would cost eight more round trips per interface.
            if (r.error().code == Errc::Unsupported && flow.value == TCP_V4_FLOW) break;
            if (not_answered(r.error())) continue;
            return std::unexpected(named(r.error(), name, what));
        }
        auto d = decode_rxnfc_data(b, ETHTOOL_GRXFH);
        if (!d) return std::unexpected(named(d.error(), name, what));
        st.hash.push_back(RssHashFields{std::string(flow.name), *d});
        any = true;
    }
    if (!any) return std::optional<RssState>{};
    return std::optional<RssState>{std::move(st)};
}

Result<std::vector<uint8_t>> encode_indirection(std::string_view form, const RxfhReply& head,
                                                uint64_t rx_rings) {
    auto table = rss_indirection_table(form, head.indir_size, rx_rings);
    if (!table || head.indir_size == 0)
        return fail(Errc::InvalidArgument, "rss.indirection",
                    "\"" + std::string(form) + "\" is not a table for " +
                        std::to_string(head.indir_size) + " entries and " +
                        std::to_string(rx_rings) + " RX rings");
    return encode_rxfh_set(form == "default" ? std::span<const uint32_t>{} : *table,
                           head.input_xfrm);
}

Result<void> set_indirection(const IoctlSocket& io, std::string_view ifname,
                             const std::string& name, std::string_view form) {
    const std::string what = "rss.indirection=\"" + std::string(form) + "\": set";
    auto q = encode_rxfh_query();
    if (auto r = io.ethtool(ifname, q.data(), what); !r)
        return std::unexpected(named(r.error(), name, what));
    auto head = decode_rxfh(q, false);
    if (!head) return std::unexpected(named(head.error(), name, what));
    auto rings = encode_rxnfc(ETHTOOL_GRXRINGS, 0, 0);
    if (auto r = io.ethtool(ifname, rings.data(), what); !r)
        return std::unexpected(named(r.error(), name, what));
    auto n = decode_rxnfc_data(rings, ETHTOOL_GRXRINGS);
    if (!n) return std::unexpected(named(n.error(), name, what));
    auto b = encode_indirection(form, *head, *n);
    if (!b) return std::unexpected(named(b.error(), name, what));
    if (auto r = io.ethtool(ifname, b->data(), what); !r)
        return std::unexpected(named(r.error(), name, what));
    return {};
}

Result<void> set_hash_fields(const IoctlSocket& io, std::string_view ifname,
                             const std::string& name, std::string_view flow,
                             std::string_view fields) {
    const std::string what =
        "rss.hash." + std::string(flow) + "=\"" + std::string(fields) + "\": set";
    const RssFlowType* f = find_rss_flow_type(flow);
    auto bits = parse_rss_hash_fields(fields);
    if (!f || !bits)
        return fail(Errc::InvalidArgument, name + ": " + what, "not a flow type and hash fields");
    auto b = encode_rxnfc(ETHTOOL_SRXFH, f->value, *bits);
    if (auto r = io.ethtool(ifname, b.data(), what); !r)
        return std::unexpected(named(r.error(), name, what));
    return {};
}

}  // namespace nictune::sysinfo::rss
