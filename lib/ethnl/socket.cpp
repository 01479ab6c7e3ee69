#include "ethnl/socket.hpp"

#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "ethnl/codecs.hpp"
#include "netlink/attr.hpp"

namespace nictune::ethnl {
namespace {

using netlink::attr_get;
using netlink::attr_str;
using netlink::attr_type;
using netlink::AttrList;

// Starts a generic netlink request in `buf`.
nlmsghdr* start_request(char* buf, uint16_t type, uint16_t flags, uint8_t cmd, uint8_t version) {
    nlmsghdr* nlh = nullptr;
    auto* genl = netlink::start_message<genlmsghdr>(buf, type, flags, &nlh);
    genl->cmd = cmd;
    genl->version = version;
    return nlh;
}

// An ethtool request: the genetlink header, then the request header nest
// naming the device (ifindex 0: none) with the ETHTOOL_FLAG_* flags.
nlmsghdr* start_ethtool(char* buf, uint16_t family, uint16_t flags, uint8_t cmd,
                        uint16_t header_attr, int ifindex, uint32_t header_flags) {
    nlmsghdr* nlh = start_request(buf, family, flags, cmd, ETHTOOL_GENL_VERSION);
    put_header(nlh, header_attr, ifindex, header_flags);
    return nlh;
}

// "ethtool COALESCE_SET ifindex 7", "ethtool RINGS_GET dump": what an error
// was about, read back from the request itself.
std::string describe(const nlmsghdr* req) {
    const auto* genl = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(req));
    if (req->nlmsg_type == GENL_ID_CTRL) return "generic netlink family lookup \"ethtool\"";
    std::string out = "ethtool " + command_name(genl->cmd);
    if ((req->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP) return out + " dump";
    if (const nlattr* hdr = AttrList::of(req, GENL_HDRLEN).find(kHeaderAttr))
        if (const nlattr* idx = AttrList::nested(hdr).find(ETHTOOL_A_HEADER_DEV_INDEX))
            if (auto i = attr_get<uint32_t>(idx)) out += fmt::format(" ifindex {}", *i);
    return out;
}

// The CTRL_CMD_GETFAMILY reply: the family's id and its multicast groups.
Result<void> decode_family(const nlmsghdr* nlh, uint16_t* family, uint32_t* monitor_group) {
    const std::string context = "generic netlink family lookup \"ethtool\"";
    AttrList attrs = AttrList::of(nlh, GENL_HDRLEN);
    if (!attrs.complete()) return fail(Errc::Internal, context, "reply is truncated");
    for (const nlattr* a : attrs) {
        if (attr_type(a) == CTRL_ATTR_FAMILY_ID) {
            auto id = attr_get<uint16_t>(a);
            if (!id) return fail(Errc::Internal, context, "family id is not a u16");
            *family = *id;
        } else if (attr_type(a) == CTRL_ATTR_MCAST_GROUPS) {
            for (const nlattr* group : AttrList::nested(a)) {
                AttrList fields = AttrList::nested(group);
                const nlattr* name = fields.find(CTRL_ATTR_MCAST_GRP_NAME);
                const nlattr* id = fields.find(CTRL_ATTR_MCAST_GRP_ID);
                if (name == nullptr || id == nullptr) continue;
                auto n = attr_str(name);
                auto v = attr_get<uint32_t>(id);
                if (n && v && *n == ETHTOOL_MCGRP_MONITOR_NAME) *monitor_group = *v;
            }
        }
    }
    return {};
}

}  // namespace

Result<std::unique_ptr<Socket>> Socket::open() {
    auto nl = netlink::Channel::open(NETLINK_GENERIC, "ethtool netlink socket");
    if (!nl) return std::unexpected(std::move(nl.error()));
    std::unique_ptr<Socket> s(new Socket(std::move(*nl)));
    if (auto r = s->resolve_family(); !r) return std::unexpected(r.error());
    return s;
}

Result<void> Socket::resolve_family() {
    netlink::RequestBuffer req;
    nlmsghdr* nlh =
        start_request(req.data(), GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, CTRL_CMD_GETFAMILY, 1);
    mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
    auto r = run(nlh, [this](const nlmsghdr* reply) {
        return decode_family(reply, &family_, &monitor_group_);
    });
    if (!r) {
        if (r.error().sys_errno == ENOENT) {
            r.error().code = Errc::Unsupported;
            r.error().message = "the kernel has no ethtool netlink family";
        }
        return r;
    }
    if (family_ == 0) return fail(Errc::Internal, describe(nlh), "the reply named no family id");
    return {};
}

Result<void> Socket::run(nlmsghdr* request, const ReplyFn& on_reply) {
    return nl_.request(request, describe, on_reply);
}

Result<void> Socket::dump(uint8_t cmd, uint32_t header_flags, const ReplyFn& on_reply) {
    netlink::RequestBuffer req;
    return run(start_ethtool(req.data(), family_, NLM_F_REQUEST | NLM_F_DUMP, cmd, kHeaderAttr, 0,
                             header_flags),
               on_reply);
}

Result<void> Socket::get(uint8_t cmd, int ifindex, uint32_t header_flags, const ReplyFn& on_reply) {
    netlink::RequestBuffer req;
    // The ACK after the reply tells that the request is complete.
    return run(start_ethtool(req.data(), family_, NLM_F_REQUEST | NLM_F_ACK, cmd, kHeaderAttr,
                             ifindex, header_flags),
               on_reply);
}

std::vector<Result<void>> Socket::get_many(uint8_t cmd, uint32_t header_flags,
                                           std::span<const int> ifindexes,
                                           const netlink::IndexedMessageFn& on_reply) {
    return nl_.send_batch(
        ifindexes.size(),
        [&](std::size_t i, nlmsghdr* nlh) -> Result<void> {
            // No NLM_F_ACK: the batch asks for one per window.
            start_ethtool(reinterpret_cast<char*>(nlh), family_, 0, cmd, kHeaderAttr, ifindexes[i],
                          header_flags);
            return {};
        },
        describe, on_reply, kGetWindow);
}

// FEATURES_SET would otherwise answer with a diff of wanted vs active;
// callers re-read the device after a SET anyway. Other SETs ignore the flag.
constexpr uint32_t kSetFlags = ETHTOOL_FLAG_OMIT_REPLY;

std::vector<Result<void>> Socket::set_many(uint8_t cmd, std::span<const SetRequest> reqs) {
    return nl_.send_batch(
        reqs.size(),
        [&](std::size_t i, nlmsghdr* nlh) -> Result<void> {
            // No NLM_F_ACK: the batch asks for one per window.
            start_ethtool(reinterpret_cast<char*>(nlh), family_, 0, cmd, kHeaderAttr,
                          reqs[i].ifindex, kSetFlags);
            if (reqs[i].build) reqs[i].build(nlh);
            return {};
        },
        describe);
}

Result<void> Socket::set(uint8_t cmd, int ifindex, const BuildFn& build) {
    netlink::RequestBuffer req;
    nlmsghdr* nlh = start_ethtool(req.data(), family_, NLM_F_REQUEST | NLM_F_ACK, cmd, kHeaderAttr,
                                  ifindex, kSetFlags);
    if (build) build(nlh);
    return run(nlh, nullptr);
}

Result<std::shared_ptr<const FeatureNames>> Socket::feature_names() {
    return global_strings(ETH_SS_FEATURES);
}

Result<std::optional<FeatureNames>> Socket::string_set(int ifindex, uint32_t set_id) {
    netlink::RequestBuffer req;
    // A global set (ETH_SS_FEATURES, ...) still takes a header, without a
    // device: the kernel (6.18) refuses a STRSET_GET without one ("missing
    // attribute 1").
    nlmsghdr* nlh = start_ethtool(req.data(), family_, NLM_F_REQUEST | NLM_F_ACK,
                                  ETHTOOL_MSG_STRSET_GET, ETHTOOL_A_STRSET_HEADER, ifindex, 0);
    nlattr* sets = mnl_attr_nest_start(nlh, ETHTOOL_A_STRSET_STRINGSETS);
    nlattr* set = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGSETS_STRINGSET);
    mnl_attr_put_u32(nlh, ETHTOOL_A_STRINGSET_ID, set_id);
    mnl_attr_nest_end(nlh, set);
    mnl_attr_nest_end(nlh, sets);
    std::optional<FeatureNames> names;
    auto r = run(nlh, [&](const nlmsghdr* reply) -> Result<void> {
        auto decoded = decode_string_set(reply, set_id);
        if (!decoded) return std::unexpected(decoded.error());
        names = std::move(decoded->names);
        return {};
    });
    if (!r) return std::unexpected(r.error());
    return names;
}

Result<std::shared_ptr<const FeatureNames>> Socket::global_strings(uint32_t set_id) {
    for (const auto& [id, names] : global_strings_)
        if (id == set_id) return names;
    auto names = string_set(0, set_id);
    if (!names) return std::unexpected(names.error());
    if (!*names)
        return fail(Errc::Internal, "ethtool STRSET_GET " + std::to_string(set_id),
                    "the kernel sent no string set");
    auto shared = std::make_shared<const FeatureNames>(std::move(**names));
    global_strings_.emplace_back(set_id, shared);
    return shared;
}

Result<FeatureNames> Socket::device_strings(int ifindex, uint32_t set_id) {
    auto names = string_set(ifindex, set_id);
    if (!names) return std::unexpected(names.error());
    // A device without the set answers with no set at all.
    return *names ? std::move(**names) : FeatureNames{};
}

Result<std::vector<PrivateFlag>> Socket::private_flags(int ifindex) {
    std::optional<PrivFlagsReply> flags;
    auto r = get(ETHTOOL_MSG_PRIVFLAGS_GET, ifindex, ETHTOOL_FLAG_COMPACT_BITSETS,
                 [&](const nlmsghdr* nlh) -> Result<void> {
                     auto d = decode_private_flags(nlh);
                     if (!d) return std::unexpected(d.error());
                     flags = std::move(*d);
                     return {};
                 });
    if (!r) return std::unexpected(r.error());
    if (!flags) return fail(Errc::Internal, "ethtool PRIVFLAGS_GET", "the kernel sent no reply");
    if (flags->nbits == 0) return std::vector<PrivateFlag>{};
    auto names = device_strings(ifindex, ETH_SS_PRIV_FLAGS);
    if (!names) return std::unexpected(names.error());
    return to_private_flags(*flags, *names);
}

Result<void> Socket::subscribe_monitor(int queue_bytes) {
    const char* context = "ethtool netlink: join the \"monitor\" group";
    if (monitor_group_ == 0)
        return fail(Errc::Unsupported, context, "the ethtool family has no monitor group");
    return nl_.join(monitor_group_, queue_bytes, context);
}

Result<void> Socket::unsubscribe_monitor() {
    return nl_.leave(monitor_group_, "ethtool netlink: leave the \"monitor\" group");
}

int Socket::fd() const {
    return nl_.fd();
}

Result<void> Socket::receive_notifications(const ReplyFn& on_msg) {
    return nl_.receive_queued("ethtool monitor", [&](const nlmsghdr* nlh) -> Result<void> {
        // Stale replies to our own requests carry our portid; events carry 0.
        if (nlh->nlmsg_type != family_ || nlh->nlmsg_pid != 0) return {};
        return on_msg(nlh);
    });
}

}  // namespace nictune::ethnl
