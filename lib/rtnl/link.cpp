#include "rtnl/link.hpp"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "model/schema.hpp"
#include "netlink/attr.hpp"
#include "util/strings.hpp"

namespace nictune::rtnl {
namespace {

using netlink::attr_bytes;
using netlink::attr_text;
using netlink::attr_type;
using netlink::AttrList;

// A dump that raced with a link change is repeated this many times at most.
constexpr int kDumpAttempts = 3;

// rtnetlink's values are read leniently (netlink/attr.hpp); fewer bytes
// than the type holds is an error.
template <class T>
Result<T> lenient(const nlattr* a, std::string_view what) {
    auto v = netlink::attr_get_prefix<T>(a);
    if (!v) return fail(Errc::Internal, std::string(what), "truncated attribute");
    return *v;
}

std::string format_hwaddr(std::span<const uint8_t> b) {
    static constexpr std::string_view kHex = "0123456789abcdef";
    std::string out;
    out.reserve(b.size() * 3);
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (i != 0) out += ':';
        out += kHex[b[i] >> 4];
        out += kHex[b[i] & 0x0f];
    }
    return out;
}

std::optional<std::string> attr_address(const nlattr* a, uint8_t family) {
    char buf[INET6_ADDRSTRLEN] = {};
    const std::size_t want = family == AF_INET ? 4 : 16;
    if (netlink::attr_len(a) != want) return std::nullopt;
    if (inet_ntop(family, attr_bytes(a).data(), buf, sizeof buf) == nullptr) return std::nullopt;
    return std::string(buf);
}

// One top-level attribute of a link message into `link`.
Result<void> take_link_attr(const nlattr* a, Link& link, bool& have_name) {
    constexpr std::string_view kWhere = "link message";
    auto put_u32 = [&](Key k) -> Result<void> {
        // The key's path only for an error: a dump reads thousands of these.
        auto v = netlink::attr_get_prefix<uint32_t>(a);
        if (!v) return fail(Errc::Internal, key_path(k), "truncated attribute");
        link.values.set(k, *v);
        return {};
    };
    // A nest is checked whole, then walked.
    auto each_nested = [&](std::string_view what, auto&& fn) -> Result<void> {
        auto in = netlink::checked(AttrList::nested(a), kWhere, what);
        if (!in) return std::unexpected(std::move(in.error()));
        for (const nlattr* x : *in)
            fn(x);
        return {};
    };
    switch (attr_type(a)) {
        case IFLA_IFNAME:
            link.name = escape_name(attr_text(a));
            have_name = true;
            return {};
        case IFLA_PROP_LIST:
            return each_nested("IFLA_PROP_LIST", [&](const nlattr* in) {
                if (attr_type(in) == IFLA_ALT_IFNAME)
                    link.altnames.push_back(escape_name(attr_text(in)));
            });
        case IFLA_ADDRESS:
            link.mac = format_hwaddr(attr_bytes(a));
            return {};
        case IFLA_PERM_ADDRESS:
            link.perm_mac = format_hwaddr(attr_bytes(a));
            return {};
        case IFLA_MTU:
            return put_u32(Key::LinkMtu);
        case IFLA_MIN_MTU:
            return put_u32(Key::LinkMinMtu);
        case IFLA_MAX_MTU: {
            // 0 is the kernel's "no upper limit" (lo, some tunnels), not
            // a maximum of zero.
            auto v = lenient<uint32_t>(a, key_path(Key::LinkMaxMtu));
            if (!v) return std::unexpected(std::move(v.error()));
            if (*v != 0) link.values.set(Key::LinkMaxMtu, *v);
            return {};
        }
        case IFLA_TXQLEN:
            return put_u32(Key::LinkTxqueuelen);
        case IFLA_OPERSTATE: {
            auto v = lenient<uint8_t>(a, key_path(Key::LinkOperstate));
            if (!v) return std::unexpected(std::move(v.error()));
            // A state newer kernels may add is unknown to us: absent, not
            // a number reports cannot name.
            if (enum_name(Key::LinkOperstate, *v)) link.values.set(Key::LinkOperstate, *v);
            return {};
        }
        case IFLA_CARRIER: {
            auto v = lenient<uint8_t>(a, key_path(Key::LinkCarrier));
            if (!v) return std::unexpected(std::move(v.error()));
            link.values.set(Key::LinkCarrier, *v != 0 ? 1 : 0);
            return {};
        }
        case IFLA_PARENT_DEV_NAME:
            link.parent_dev = attr_text(a);
            return {};
        case IFLA_PARENT_DEV_BUS_NAME:
            link.parent_bus = attr_text(a);
            return {};
        case IFLA_LINKINFO:
            return each_nested("IFLA_LINKINFO", [&](const nlattr* in) {
                if (attr_type(in) == IFLA_INFO_KIND) link.kind = attr_text(in);
            });
        default:
            // Newer kernels send attributes the build headers do not name.
            return {};
    }
}

// A link request (RTM_GETLINK, RTM_NEWLINK) with its ifinfomsg.
nlmsghdr* link_request(char* buf, uint16_t type, uint16_t flags, int ifindex) {
    nlmsghdr* nlh = nullptr;
    auto* ifi = netlink::start_message<ifinfomsg>(buf, type, flags, &nlh);
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = ifindex;
    return nlh;
}

void put_change(nlmsghdr* nlh, const LinkChange& change) {
    if (change.mtu) mnl_attr_put_u32(nlh, IFLA_MTU, *change.mtu);
    if (change.txqueuelen) mnl_attr_put_u32(nlh, IFLA_TXQLEN, *change.txqueuelen);
}

// "ifindex 7: link.mtu=9000, link.txqueuelen=5000: set": what a change was
// about, read back from its request.
std::string describe_change(const nlmsghdr* nlh) {
    ifinfomsg ifi{};
    std::memcpy(&ifi, NLMSG_DATA(nlh), sizeof ifi);
    std::string out = "ifindex " + std::to_string(ifi.ifi_index) + ": ";
    std::string_view sep;
    for (const nlattr* a : AttrList::of(nlh, NLMSG_ALIGN(sizeof(ifinfomsg)))) {
        if (attr_type(a) != IFLA_MTU && attr_type(a) != IFLA_TXQLEN) continue;
        const Key k = attr_type(a) == IFLA_MTU ? Key::LinkMtu : Key::LinkTxqueuelen;
        out += std::string(sep) + key_path(k) + "=" +
               std::to_string(netlink::attr_get<uint32_t>(a).value_or(0));
        sep = ", ";
    }
    return out + ": set";
}

// Collects the links of a reply; other messages are not links.
netlink::MessageFn collect_links(std::vector<Link>& links) {
    return [&links](const nlmsghdr* nlh) -> Result<void> {
        if (nlh->nlmsg_type != RTM_NEWLINK) return {};
        auto link = decode_link(nlh);
        if (!link) return std::unexpected(std::move(link.error()));
        links.push_back(std::move(*link));
        return {};
    };
}

netlink::DescribeFn context_is(const std::string& context) {
    return [&context](const nlmsghdr*) { return context; };
}

}  // namespace

Result<Link> decode_link(const nlmsghdr* nlh) {
    constexpr std::string_view kWhere = "link message";
    ifinfomsg ifi{};
    auto attrs = netlink::fixed_header(nlh, {RTM_NEWLINK, RTM_DELLINK}, ifi, kWhere, "ifinfomsg");
    if (!attrs) return std::unexpected(std::move(attrs.error()));
    Link link;
    link.ifindex = ifi.ifi_index;
    link.flags = ifi.ifi_flags;
    bool have_name = false;
    for (const nlattr* a : *attrs)
        if (auto r = take_link_attr(a, link, have_name); !r)
            return std::unexpected(std::move(r.error()));
    if (!have_name || link.name.empty())
        return fail(Errc::Internal, std::string(kWhere),
                    "ifindex " + std::to_string(link.ifindex) + " without IFLA_IFNAME");
    return link;
}

Result<Route> decode_route(const nlmsghdr* nlh) {
    rtmsg rtm{};
    auto attrs = netlink::fixed_header(nlh, {RTM_NEWROUTE}, rtm, "route message", "rtmsg");
    if (!attrs) return std::unexpected(std::move(attrs.error()));
    Route route;
    route.type = rtm.rtm_type;
    for (const nlattr* a : *attrs) {
        switch (attr_type(a)) {
            case RTA_OIF: {
                auto v = lenient<uint32_t>(a, "RTA_OIF");
                if (!v) return std::unexpected(std::move(v.error()));
                route.oif = static_cast<int>(*v);
                break;
            }
            case RTA_GATEWAY:
                route.gateway = attr_address(a, rtm.rtm_family);
                break;
            case RTA_PREFSRC:
                route.prefsrc = attr_address(a, rtm.rtm_family);
                break;
            default:
                break;
        }
    }
    return route;
}

Result<std::unique_ptr<Socket>> Socket::open() {
    auto nl = netlink::Channel::open(NETLINK_ROUTE, "rtnetlink");
    if (!nl) return std::unexpected(std::move(nl.error()));
    return std::unique_ptr<Socket>(new Socket(std::move(*nl)));
}

Result<std::vector<Link>> Socket::dump_links() {
    std::vector<Link> links;
    links.reserve(64);
    auto r = stream_links([&](Link&& l) { links.push_back(std::move(l)); }, [&] { links.clear(); });
    if (!r) return std::unexpected(std::move(r.error()));
    return links;
}

Result<void> Socket::stream_links(const LinkFn& on_link, const std::function<void()>& restart) {
    const std::string context = "links: dump";
    for (int attempt = 1;; ++attempt) {
        netlink::RequestBuffer req;
        nlmsghdr* nlh = link_request(req.data(), RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 0);
        // Without statistics: nictune never reads them, and they are most of
        // each reply (the kernel also skips gathering them).
        mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
        auto r = nl_.request(nlh, context_is(context), [&](const nlmsghdr* m) -> Result<void> {
            if (m->nlmsg_type != RTM_NEWLINK) return {};
            auto link = decode_link(m);
            if (!link) return std::unexpected(std::move(link.error()));
            on_link(std::move(*link));
            return {};
        });
        // The link list changed while the kernel walked it; the replies are
        // consistent only after a clean pass.
        if (!r && netlink::is_interrupted(r.error()) && attempt < kDumpAttempts) {
            restart();
            continue;
        }
        return r;
    }
}

Result<void> Socket::dump_links(const LinkFn& on_link) {
    auto links = dump_links();
    if (!links) return std::unexpected(std::move(links.error()));
    for (auto& l : *links)
        on_link(std::move(l));
    return {};
}

Result<Link> Socket::get_one(nlmsghdr* request, const std::string& context) {
    std::vector<Link> links;
    // NLM_F_ACK: the reply comes first, then the ACK that ends the request.
    request->nlmsg_flags |= NLM_F_ACK;
    mnl_attr_put_u32(request, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
    auto r = nl_.request(request, context_is(context), collect_links(links));
    if (!r) {
        if (r.error().code == Errc::NoSuchInterface) r.error().message = "no such interface";
        return std::unexpected(std::move(r.error()));
    }
    if (links.size() != 1)
        return fail(Errc::Internal, context,
                    "expected one link in the reply, got " + std::to_string(links.size()));
    return std::move(links.front());
}

Result<Link> Socket::get_link(const std::string& name) {
    if (name.empty()) return fail(Errc::InvalidArgument, "link", "empty interface name");
    auto bytes = unescape_name(name);
    if (!bytes) return std::unexpected(std::move(bytes.error()).within("link"));
    if (bytes->size() >= ALTIFNAMSIZ || bytes->find('\0') != std::string::npos)
        return fail(Errc::InvalidArgument, "link", "invalid interface name '" + name + "'");
    netlink::RequestBuffer req;
    nlmsghdr* nlh = link_request(req.data(), RTM_GETLINK, NLM_F_REQUEST, 0);
    // Names too long for IFLA_IFNAME can only be alternative names; the
    // kernel looks IFLA_IFNAME up among the alternative names too.
    const uint16_t attr = bytes->size() < IFNAMSIZ ? IFLA_IFNAME : IFLA_ALT_IFNAME;
    mnl_attr_put_strz(nlh, attr, bytes->c_str());
    return get_one(nlh, name);
}

Result<Link> Socket::get_link(int ifindex) {
    if (ifindex <= 0)
        return fail(Errc::InvalidArgument, "link", "invalid ifindex " + std::to_string(ifindex));
    netlink::RequestBuffer req;
    return get_one(link_request(req.data(), RTM_GETLINK, NLM_F_REQUEST, ifindex),
                   "ifindex " + std::to_string(ifindex));
}

std::vector<Result<void>> Socket::change_links(
    std::span<const std::pair<int, LinkChange>> changes) {
    return nl_.send_batch(
        changes.size(),
        [&](std::size_t i, nlmsghdr* nlh) -> Result<void> {
            const auto& [ifindex, change] = changes[i];
            // No NLM_F_ACK: the batch asks for one per window.
            link_request(reinterpret_cast<char*>(nlh), RTM_NEWLINK, 0, ifindex);
            put_change(nlh, change);
            if (ifindex <= 0)
                return fail(Errc::InvalidArgument, describe_change(nlh), "invalid ifindex");
            return {};
        },
        describe_change);
}

Result<void> Socket::change_link(int ifindex, const LinkChange& change) {
    if (!change.mtu && !change.txqueuelen) return {};
    netlink::RequestBuffer req;
    nlmsghdr* nlh = link_request(req.data(), RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, ifindex);
    put_change(nlh, change);
    if (ifindex <= 0) return fail(Errc::InvalidArgument, describe_change(nlh), "invalid ifindex");
    return nl_.request(nlh, describe_change, nullptr);
}

Result<void> Socket::subscribe_links(int queue_bytes) {
    // Room for a burst (a driver reset or hundreds of new VFs announce
    // every link at once) before the kernel drops events.
    return nl_.join(RTNLGRP_LINK, queue_bytes, "link events: subscribe");
}

Result<void> Socket::unsubscribe_links() {
    return nl_.leave(RTNLGRP_LINK, "link events: unsubscribe");
}

int Socket::fd() const {
    return nl_.fd();
}

Result<void> Socket::receive_events(const std::function<void(Link&&, bool deleted)>& on_event) {
    // Every link message is the kernel's (receive_queued() drops other
    // senders), also one that carries the portid of the process whose
    // request caused it.
    return nl_.receive_queued("link events", [&](const nlmsghdr* nlh) -> Result<void> {
        if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK) return {};
        auto link = decode_link(nlh);
        if (!link) return std::unexpected(std::move(link.error()));
        on_event(std::move(*link), nlh->nlmsg_type == RTM_DELLINK);
        return {};
    });
}

Result<Route> Socket::route_to(const sockaddr* dst, int oif) {
    if (dst == nullptr || (dst->sa_family != AF_INET && dst->sa_family != AF_INET6))
        return fail(Errc::InvalidArgument, "route", "not an IPv4 or IPv6 address");
    netlink::RequestBuffer req;
    nlmsghdr* nlh = nullptr;
    auto* rtm =
        netlink::start_message<rtmsg>(req.data(), RTM_GETROUTE, NLM_F_REQUEST | NLM_F_ACK, &nlh);
    rtm->rtm_family = static_cast<uint8_t>(dst->sa_family);
    // A host route, as `ip route get` asks.
    rtm->rtm_dst_len = dst->sa_family == AF_INET ? 32 : 128;
    char text[INET6_ADDRSTRLEN] = {};
    if (dst->sa_family == AF_INET) {
        sockaddr_in s4{};
        std::memcpy(&s4, dst, sizeof s4);
        inet_ntop(AF_INET, &s4.sin_addr, text, sizeof text);
        mnl_attr_put(nlh, RTA_DST, 4, &s4.sin_addr);
    } else {
        sockaddr_in6 s6{};
        std::memcpy(&s6, dst, sizeof s6);
        inet_ntop(AF_INET6, &s6.sin6_addr, text, sizeof text);
        mnl_attr_put(nlh, RTA_DST, 16, &s6.sin6_addr);
        if (oif <= 0) oif = static_cast<int>(s6.sin6_scope_id);
    }
    if (oif > 0) mnl_attr_put_u32(nlh, RTA_OIF, static_cast<uint32_t>(oif));
    const std::string context = std::string("route to ") + text;

    std::vector<Route> routes;
    auto r = nl_.request(nlh, context_is(context), [&](const nlmsghdr* reply) -> Result<void> {
        if (reply->nlmsg_type != RTM_NEWROUTE) return {};
        auto route = decode_route(reply);
        if (!route) return std::unexpected(std::move(route.error()));
        routes.push_back(std::move(*route));
        return {};
    });
    if (!r) {
        // ENODEV here means "no route through that interface", not a
        // missing interface name of the caller's.
        if (r.error().code == Errc::NoSuchInterface) r.error().code = Errc::Kernel;
        return std::unexpected(std::move(r.error()));
    }
    if (routes.size() != 1)
        return fail(Errc::Internal, context,
                    "expected one route in the reply, got " + std::to_string(routes.size()));
    return std::move(routes.front());
}

}  // namespace nictune::rtnl
