#include "rtnl/stats.hpp"

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace nictune::rtnl {
namespace {

constexpr std::size_t kBuffer = 64 * 1024;
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
    constexpr const char* kWhere = "stats message";
    if (nlh->nlmsg_type != RTM_NEWSTATS)
        return fail(Errc::Internal, kWhere,
                    "unexpected message type " + std::to_string(nlh->nlmsg_type));
    if (nlh->nlmsg_len < NLMSG_SPACE(sizeof(if_stats_msg)))
        return fail(Errc::Internal, kWhere, "truncated if_stats_msg");
    if_stats_msg ifsm{};
    std::memcpy(&ifsm, NLMSG_DATA(nlh), sizeof ifsm);
    StatsReply out;
    out.ifindex = static_cast<int>(ifsm.ifindex);
    const auto* base = reinterpret_cast<const unsigned char*>(nlh);
    std::size_t at = NLMSG_SPACE(sizeof(if_stats_msg));
    while (at + sizeof(nlattr) <= nlh->nlmsg_len) {
        nlattr a{};
        std::memcpy(&a, base + at, sizeof a);
        if (a.nla_len < sizeof(nlattr) || at + a.nla_len > nlh->nlmsg_len)
            return fail(Errc::Internal, kWhere, "attribute runs past the end of the message");
        const std::size_t len = a.nla_len - sizeof(nlattr);
        if ((a.nla_type & NLA_TYPE_MASK) == IFLA_STATS_LINK_64) {
            if (len < kMinStats)
                return fail(Errc::Internal, kWhere,
                            "IFLA_STATS_LINK_64 has " + std::to_string(len) + " bytes, expected " +
                                std::to_string(kMinStats) + " or more");
            rtnl_link_stats64 k{};
            std::memcpy(&k, base + at + sizeof(nlattr), std::min(len, sizeof k));
            out.stats = from_kernel(k);
        }
        at += NLA_ALIGN(a.nla_len);
    }
    if (out.ifindex <= 0) return fail(Errc::Internal, kWhere, "no interface index");
    return out;
}

Result<std::unique_ptr<StatsSocket>> StatsSocket::open() {
    std::unique_ptr<StatsSocket> s(new StatsSocket());
    s->nl_ = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
    if (!s->nl_) return fail_errno(errno, "rtnetlink statistics: socket");
    if (mnl_socket_bind(s->nl_, 0, MNL_SOCKET_AUTOPID) < 0)
        return fail_errno(errno, "rtnetlink statistics: bind");
    int one = 1;
    (void)mnl_socket_setsockopt(s->nl_, NETLINK_EXT_ACK, &one, sizeof one);
    (void)mnl_socket_setsockopt(s->nl_, NETLINK_CAP_ACK, &one, sizeof one);
    s->portid_ = mnl_socket_get_portid(s->nl_);
    s->buf_ = std::make_unique<char[]>(kBuffer);
    return s;
}

StatsSocket::~StatsSocket() {
    if (nl_) mnl_socket_close(nl_);
}

Result<void> StatsSocket::run(int ifindex, bool dump,
                              const std::function<void(int, const LinkStats&)>& on_stats) {
    const std::string context = dump ? std::string("statistics: dump")
                                     : "ifindex " + std::to_string(ifindex) + ": statistics";
    for (int attempt = 1;; ++attempt) {
        alignas(nlmsghdr) char req[256];
        nlmsghdr* nlh = mnl_nlmsg_put_header(req);
        nlh->nlmsg_type = RTM_GETSTATS;
        nlh->nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK);
        const uint32_t seq = ++seq_;
        nlh->nlmsg_seq = seq;
        auto* ifsm =
            static_cast<if_stats_msg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(if_stats_msg)));
        ifsm->family = AF_UNSPEC;
        ifsm->ifindex = static_cast<uint32_t>(dump ? 0 : ifindex);
        ifsm->filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
        if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0) return fail_errno(errno, context);

        std::vector<std::pair<int, LinkStats>> got;
        bool interrupted = false;
        std::optional<Error> err;
        for (bool done = false; !done;) {
            const ssize_t n = mnl_socket_recvfrom(nl_, buf_.get(), kBuffer);
            if (n < 0) return fail_errno(errno, context);
            for (auto* m = reinterpret_cast<const nlmsghdr*>(buf_.get());
                 mnl_nlmsg_ok(m, static_cast<int>(n)) && !done;
                 m = reinterpret_cast<const nlmsghdr*>(reinterpret_cast<const char*>(m) +
                                                       NLMSG_ALIGN(m->nlmsg_len))) {
                if (m->nlmsg_seq != seq || m->nlmsg_pid != portid_) continue;
                if (m->nlmsg_flags & NLM_F_DUMP_INTR) interrupted = true;
                // A dump ends with NLMSG_DONE, a GET with its ACK (an
                // NLMSG_ERROR of 0) after the reply.
                if (m->nlmsg_type == NLMSG_DONE) {
                    done = true;
                } else if (m->nlmsg_type == NLMSG_ERROR) {
                    const auto* e = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(m));
                    if (e->error != 0) {
                        auto f = fail_errno(-e->error, context, Errc::Kernel);
                        if (-e->error == ENODEV) f.error().code = Errc::NoSuchInterface;
                        if (-e->error == EOPNOTSUPP) f.error().code = Errc::Unsupported;
                        err = f.error();
                    }
                    done = true;
                } else if (m->nlmsg_type == RTM_NEWSTATS) {
                    auto r = decode_stats(m);
                    if (!r) {
                        err = r.error();
                    } else if (r->stats) {
                        got.emplace_back(r->ifindex, *r->stats);
                    }
                }
            }
        }
        if (err) return std::unexpected(*err);
        if (interrupted && attempt < kDumpAttempts) continue;
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
