#include "probe/probe.hpp"

#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>

#include "model/schema.hpp"
#include "rtnl/link.hpp"
#include "util/strings.hpp"

namespace nictune::probe {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const char* route_type_text(uint8_t type) {
    switch (type) {
        case RTN_BROADCAST:
            return "a broadcast address";
        case RTN_MULTICAST:
            return "a multicast address";
        case RTN_ANYCAST:
            return "an anycast address";
        case RTN_BLACKHOLE:
            return "routed into a blackhole route";
        case RTN_UNREACHABLE:
        case RTN_PROHIBIT:
            return "routed as unreachable";
        default:
            return "not routed to one host";
    }
}

Result<ProbeInterface> interface_of(const rtnl::Link& link, bool chosen) {
    ProbeInterface pi;
    pi.ifindex = link.ifindex;
    pi.name = link.name;
    pi.chosen = chosen;
    const auto mtu = link.values.get(Key::LinkMtu);
    if (!mtu || *mtu == 0)
        return fail(Errc::Internal, "interface " + quote(link.name), "the kernel reported no MTU");
    pi.mtu = static_cast<uint32_t>(*mtu);
    return pi;
}

}  // namespace

PathMtuOptions path_mtu_waits(double rtt_max_ms, milliseconds timeout) {
    // Eight slowest round trips and some slack for a busy host; the
    // confirmation of a boundary waits four rounds' worth, at least 250 ms.
    PathMtuOptions o;
    const auto round = milliseconds(static_cast<int64_t>(8 * rtt_max_ms) + 20);
    o.round_wait = std::clamp(round, milliseconds(30), std::max(timeout, milliseconds(30)));
    o.confirm_wait = std::clamp(std::max(milliseconds(250), 4 * o.round_wait), o.round_wait,
                                std::max(timeout, o.round_wait));
    return o;
}

Result<ProbeResult> run_probe(std::string_view peer_spec, const ProbeOptions& opts,
                              const std::optional<std::string>& interface) {
    const auto start = Clock::now();
    if (opts.count < 1 || opts.count > 10000)
        return fail(Errc::InvalidArgument, "probe", "the echo count must be 1..10000");
    if (opts.timeout < milliseconds(10) || opts.timeout > milliseconds(600000))
        return fail(Errc::InvalidArgument, "probe", "the timeout must be 0.01..600 s");

    auto rt = rtnl::Socket::open();
    if (!rt) return std::unexpected(std::move(rt.error()));

    std::optional<rtnl::Link> chosen;
    if (interface) {
        if (!valid_ifname(*interface))
            return fail(Errc::InvalidArgument, "interface " + quote(*interface),
                        "not a valid interface name");
        auto link = (*rt)->get_link(*interface);
        if (!link) {
            if (link.error().code == Errc::NoSuchInterface)
                return std::unexpected(Error{Errc::NoSuchInterface,
                                             0,
                                             "interface " + quote(*interface),
                                             "no such interface",
                                             {},
                                             *interface,
                                             {}});
            return std::unexpected(std::move(link.error()));
        }
        chosen = std::move(*link);
    }

    auto peer = resolve_peer(peer_spec, chosen ? chosen->ifindex : 0, opts.timeout);
    if (!peer) return std::unexpected(std::move(peer.error()));

    ProbeResult res;
    auto route = (*rt)->route_to(reinterpret_cast<const sockaddr*>(&peer->addr),
                                 chosen ? chosen->ifindex : 0);
    if (!route) {
        Error e = std::move(route.error());
        if (e.sys_errno == ENETUNREACH || e.sys_errno == EHOSTUNREACH)
            return fail(Errc::Io, peer->label(),
                        chosen ? "no route to it through " + quote(chosen->name)
                               : std::string("no route to it"));
        return std::unexpected(std::move(e).within(peer->label()));
    }
    if (route->type != RTN_UNICAST && route->type != RTN_LOCAL)
        return fail(Errc::InvalidArgument, peer->label(),
                    std::string("is ") + route_type_text(route->type) + ", not one host to probe");
    if (!chosen) {
        auto link = (*rt)->get_link(route->oif);
        if (!link) return std::unexpected(std::move(link.error()).within(peer->label()));
        chosen = std::move(*link);
    }
    auto iface = interface_of(*chosen, interface.has_value());
    if (!iface) return std::unexpected(std::move(iface.error()));
    iface->gateway = route->gateway;
    // A link-local address reads best with the interface it is on.
    if (peer->scope_ifindex() != 0) {
        peer->address = peer->address.substr(0, peer->address.find('%')) + "%" + iface->name;
        if (peer->spec.find('%') != std::string::npos) peer->spec = peer->address;
    }
    res.peer = *peer;
    res.interface = *iface;
    const std::string label = res.peer.label();
    const std::string bind = interface ? iface->name : std::string();

    if (opts.latency || opts.path_mtu) {
        auto sock = IcmpSocket::open(res.peer, opts.icmp, bind);
        if (!sock) return std::unexpected(std::move(sock.error()));
        res.icmp_socket = (*sock)->kind();
        const uint32_t ceiling = std::min<uint32_t>(iface->mtu, IcmpSocket::kMaxPacket);
        const uint32_t small =
            std::clamp(default_echo_bytes(res.peer.ipv6()), (*sock)->min_packet(), ceiling);
        double rtt_max = 1.0;
        if (opts.latency) {
            LatencyOptions lo;
            lo.count = opts.count;
            lo.interval = opts.interval;
            lo.timeout = opts.timeout;
            lo.ip_bytes = small;
            auto lat = probe_latency(**sock, lo, label);
            if (!lat) return std::unexpected(std::move(lat.error()));
            rtt_max = lat->rtt.max_ms;
            res.latency = std::move(*lat);
        }
        if (opts.path_mtu) {
            auto mtu = probe_path_mtu(**sock, small, ceiling, path_mtu_waits(rtt_max, opts.timeout),
                                      label);
            if (!mtu) return std::unexpected(std::move(mtu.error()));
            // The search's ceiling is the interface's MTU, capped at what
            // IP can carry.
            mtu->interface_mtu = iface->mtu;
            if (mtu->path_mtu >= ceiling) mtu->source = MtuSource::Interface;
            res.path_mtu = *mtu;
        }
    }

    if (opts.throughput) {
        ThroughputOptions to = *opts.throughput;
        to.bind_device = bind;
        auto tp = probe_throughput(res.peer, to);
        if (!tp) return std::unexpected(std::move(tp.error()));
        res.throughput = *tp;
    }
    res.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return res;
}

}  // namespace nictune::probe
