#include "rtnl/stats.hpp"

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <vector>

#include "netlink/attr.hpp"

namespace nictune::rtnl {
namespace {

constexpr int kDumpAttempts = 3;
// The counters up to rx_nohandler (Linux 4.6); later kernels append more.
constexpr std::size_t kMinStats = offsetof(rtnl_link_stats64, rx_nohandler) + sizeof(__u64);

LinkStats from_kernel(const rtnl_link_stats64& k) {
    LinkStats s;
    s.rx_packets = k.rx_packets;
    s.tx_packets = k.tx_packets;
    s.rx_bytes = k.rx_bytes;
    s.tx_bytes = k.tx_bytes;
    s.rx_errors = k.rx_errors;
    s.tx_errors = k.tx_errors;
    s.rx_dropped = k.rx_dropped;
    s.tx_dropped = k.tx_dropped;
    s.multicast = k.multicast;
    s.collisions = k.collisions;
    s.rx_length_errors = k.rx_length_errors;
    s.rx_over_errors = k.rx_over_errors;
    s.rx_crc_errors = k.rx_crc_errors;
    s.rx_frame_errors = k.rx_frame_errors;
    s.rx_fifo_errors = k.rx_fifo_errors;
    s.rx_missed_errors = k.rx_missed_errors;
    s.tx_aborted_errors = k.tx_aborted_errors;
    s.tx_carrier_errors = k.tx_carrier_errors;
    s.tx_fifo_errors = k.tx_fifo_errors;
    s.tx_heartbeat_errors = k.tx_heartbeat_errors;
    s.tx_window_errors = k.tx_window_errors;
    s.rx_compressed = k.rx_compressed;
    s.tx_compressed = k.tx_compressed;
    s.rx_nohandler = k.rx_nohandler;
    return s;
}

}  // namespace

Result<StatsReply> decode_stats(const nlmsghdr* nlh) {
    constexpr std::string_view kWhere = "stats message";
    if_stats_msg ifsm{};
    auto attrs = netlink::fixed_header(nlh, {RTM_NEWSTATS}, ifsm, kWhere, "if_stats_msg");
    if (!attrs) return std::unexpected(std::move(attrs.error()));
    StatsReply out;
    out.ifindex = static_cast<int>(ifsm.ifindex);
    for (const nlattr* a : *attrs) {
        if (netlink::attr_type(a) != IFLA_STATS_LINK_64) continue;
        const auto bytes = netlink::attr_bytes(a);
        if (bytes.size() < kMinStats)
            return fail(Errc::Internal, std::string(kWhere),
                        "IFLA_STATS_LINK_64 has " + std::to_string(bytes.size()) +
                            " bytes, expected " + std::to_string(kMinStats) + " or more");
        rtnl_link_stats64 k{};
        std::memcpy(&k, bytes.data(), std::min(bytes.size(), sizeof k));
        out.stats = from_kernel(k);
    }
    if (out.ifindex <= 0) return fail(Errc::Internal, std::string(kWhere), "no interface index");
    return out;
}

Result<std::unique_ptr<StatsSocket>> StatsSocket::open() {
    auto nl = netlink::Channel::open(NETLINK_ROUTE, "rtnetlink statistics");
    if (!nl) return std::unexpected(std::move(nl.error()));
    return std::unique_ptr<StatsSocket>(new StatsSocket(std::move(*nl)));
}

Result<void> StatsSocket::run(int ifindex, bool dump,
                              const std::function<void(int, const LinkStats&)>& on_stats) {
    const std::string context = dump ? std::string("statistics: dump")
                                     : "ifindex " + std::to_string(ifindex) + ": statistics";
    for (int attempt = 1;; ++attempt) {
        alignas(nlmsghdr) char req[256];
        nlmsghdr* nlh = nullptr;
        // A dump ends with NLMSG_DONE, a GET with its ACK after the reply.
        auto* ifsm = netlink::start_message<if_stats_msg>(
            req, RTM_GETSTATS, NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK), &nlh);
        ifsm->family = AF_UNSPEC;
        ifsm->ifindex = static_cast<uint32_t>(dump ? 0 : ifindex);
        ifsm->filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);

        std::vector<std::pair<int, LinkStats>> got;
        auto r = nl_.request(
            nlh, [&](const nlmsghdr*) { return context; },
            [&](const nlmsghdr* m) -> Result<void> {
                if (m->nlmsg_type != RTM_NEWSTATS) return {};
                auto s = decode_stats(m);
                if (!s) return std::unexpected(std::move(s.error()));
                if (s->stats) got.emplace_back(s->ifindex, *s->stats);
                return {};
            });
        // Interrupted: read again, and after the last attempt take what came
        // (counters for a health check, not a state to apply).
        if (!r && netlink::is_interrupted(r.error()) && attempt < kDumpAttempts) continue;
        if (!r && !netlink::is_interrupted(r.error())) return r;
        for (const auto& [i, s] : got)
            on_stats(i, s);
        return {};
    }
}

Result<void> StatsSocket::dump(const std::function<void(int, const LinkStats&)>& on_stats) {
    return run(0, true, on_stats);
}

Result<LinkStats> StatsSocket::get(int ifindex) {
    std::optional<LinkStats> out;
    auto r = run(ifindex, false, [&](int, const LinkStats& s) { out = s; });
    if (!r) return std::unexpected(r.error());
    if (!out) return fail(Errc::Unsupported, "ifindex " + std::to_string(ifindex), "no statistics");
    return *out;
}

}  // namespace nictune::rtnl
