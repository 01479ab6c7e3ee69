#include "probe/icmp.hpp"

#include <linux/errqueue.h>
#include <linux/icmp.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <span>

#include "probe/icmp_codec.hpp"
#include "util/enum_names.hpp"

namespace nictune::probe {
namespace {

constexpr std::size_t kReceiveBuffer = 65536 + 512;
// Socket buffers asked for: a round of the path-MTU search has up to 16
// jumbo requests (and their replies) in flight. The kernel caps it at
// net.core.[rw]mem_max unless we may force it.
constexpr int kSocketBuffer = 1 << 20;

int64_t realtime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

uint64_t random_u64() {
    uint64_t v = 0;
    // 8 bytes from the kernel's pool never come back short once it is
    // initialised; before that, any value is still a valid token.
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof v))
        v = static_cast<uint64_t>(realtime_ns()) * 0x9e3779b97f4a7c15ULL;
    return v;
}

std::string ping_group_range() {
    std::ifstream in("/proc/sys/net/ipv4/ping_group_range");
    std::string a, b;
    if (!(in >> a >> b)) return "?";
    return a + " " + b;
}

// An ICMP error for an earlier request also sets the socket's pending
// error, which the next send or receive reports once (and clears). Its
// details are on the error queue, read separately.
bool pending_network_error(int err) {
    switch (err) {
        case EMSGSIZE:
        case EHOSTUNREACH:
        case ENETUNREACH:
        case EHOSTDOWN:
        case ENETDOWN:
        case ECONNREFUSED:
        case EPROTO:
        case EACCES:
        case ETIMEDOUT:
            return true;
        default:
            return false;
    }
}

void set_buffer(int fd, int force_opt, int opt) {
    if (setsockopt(fd, SOL_SOCKET, force_opt, &kSocketBuffer, sizeof kSocketBuffer) != 0)
        (void)setsockopt(fd, SOL_SOCKET, opt, &kSocketBuffer, sizeof kSocketBuffer);
}

const char* icmp4_text(uint8_t type, uint8_t code) {
    if (type == ICMP_DEST_UNREACH) {
        switch (code) {
            case ICMP_NET_UNREACH:
                return "network unreachable";
            case ICMP_HOST_UNREACH:
                return "host unreachable";
            case ICMP_PROT_UNREACH:
                return "protocol unreachable";
            case ICMP_PORT_UNREACH:
                return "port unreachable";
            case ICMP_FRAG_NEEDED:
                return "fragmentation needed";
            case ICMP_NET_ANO:
            case ICMP_HOST_ANO:
            case ICMP_PKT_FILTERED:
                return "administratively prohibited";
            default:
                return "destination unreachable";
        }
    }
    if (type == ICMP_TIME_EXCEEDED) return "time to live exceeded";
    if (type == ICMP_PARAMETERPROB) return "parameter problem";
    return nullptr;
}

const char* icmp6_text(uint8_t type, uint8_t code) {
    if (type == ICMP6_DST_UNREACH) {
        switch (code) {
            case ICMP6_DST_UNREACH_NOROUTE:
                return "no route to destination";
            case ICMP6_DST_UNREACH_ADMIN:
                return "administratively prohibited";
            case ICMP6_DST_UNREACH_ADDR:
                return "address unreachable";
            case ICMP6_DST_UNREACH_NOPORT:
                return "port unreachable";
            default:
                return "destination unreachable";
        }
    }
    if (type == ICMP6_PACKET_TOO_BIG) return "packet too big";
    if (type == ICMP6_TIME_EXCEEDED) return "hop limit exceeded";
    if (type == ICMP6_PARAM_PROB) return "parameter problem";
    return nullptr;
}

// Opens and configures one socket of the given kind; errno on failure.
Result<Fd> open_kind(const Peer& peer, IcmpSocketKind kind, const std::string& bind_device) {
    const bool v6 = peer.ipv6();
    const int type = (kind == IcmpSocketKind::Raw ? SOCK_RAW : SOCK_DGRAM) | SOCK_CLOEXEC;
    const int proto = v6 ? int{IPPROTO_ICMPV6} : int{IPPROTO_ICMP};
    Fd fd(socket(v6 ? AF_INET6 : AF_INET, type, proto));
    if (!fd) return fail_errno(errno, "socket");
    const int one = 1;
    if (v6) {
        const int probe = IPV6_PMTUDISC_PROBE;
        if (setsockopt(fd.get(), IPPROTO_IPV6, IPV6_MTU_DISCOVER, &probe, sizeof probe) != 0)
            return fail_errno(errno, "IPV6_MTU_DISCOVER");
        if (setsockopt(fd.get(), IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof one) != 0)
            return fail_errno(errno, "IPV6_RECVERR");
        if (kind == IcmpSocketKind::Raw) {
            icmp6_filter filter{};
            ICMP6_FILTER_SETBLOCKALL(&filter);
            ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
            if (setsockopt(fd.get(), IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter) != 0)
                return fail_errno(errno, "ICMP6_FILTER");
        }
    } else {
        const int probe = IP_PMTUDISC_PROBE;
        if (setsockopt(fd.get(), IPPROTO_IP, IP_MTU_DISCOVER, &probe, sizeof probe) != 0)
            return fail_errno(errno, "IP_MTU_DISCOVER");
        if (setsockopt(fd.get(), IPPROTO_IP, IP_RECVERR, &one, sizeof one) != 0)
            return fail_errno(errno, "IP_RECVERR");
        if (kind == IcmpSocketKind::Raw) {
            // A raw socket sees every ICMP message the host receives; only
            // echo replies are wanted (errors come on the error queue).
            icmp_filter filter{};
            filter.data = ~(1U << ICMP_ECHOREPLY);
            if (setsockopt(fd.get(), SOL_RAW, ICMP_FILTER, &filter, sizeof filter) != 0)
                return fail_errno(errno, "ICMP_FILTER");
        }
    }
    if (setsockopt(fd.get(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0)
        return fail_errno(errno, "SO_TIMESTAMPNS");
    set_buffer(fd.get(), SO_RCVBUFFORCE, SO_RCVBUF);
    set_buffer(fd.get(), SO_SNDBUFFORCE, SO_SNDBUF);
    if (!bind_device.empty() &&
        setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, bind_device.c_str(),
                   static_cast<socklen_t>(bind_device.size())) != 0) {
        const int saved_errno = errno;  // read before the message is built
        return fail_errno(saved_errno, "SO_BINDTODEVICE " + bind_device);
    }
    // Connected: the kernel delivers only what comes from the peer.
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&peer.addr), peer.addr_len) != 0)
        return fail_errno(errno, "connect");
    return fd;
}

}  // namespace

const char* icmp_socket_name(IcmpSocketKind kind) {
    static constexpr EnumNames<IcmpSocketKind> kNames{"auto", "ping", "raw"};
    return kNames[kind];
}

bool IcmpError::too_big() const {
    if (err != EMSGSIZE) return false;
    return origin == SO_EE_ORIGIN_ICMP || origin == SO_EE_ORIGIN_ICMP6 ||
           origin == SO_EE_ORIGIN_LOCAL;
}

std::string IcmpError::describe() const {
    std::string what;
    if (origin == SO_EE_ORIGIN_ICMP || origin == SO_EE_ORIGIN_ICMP6) {
        const bool v6 = origin == SO_EE_ORIGIN_ICMP6;
        const char* text = v6 ? icmp6_text(type, code) : icmp4_text(type, code);
        what = text != nullptr ? text
                               : std::string(v6 ? "ICMPv6" : "ICMP") + " type " +
                                     std::to_string(type) + " code " + std::to_string(code);
        if (too_big() && info != 0) what += ", next-hop MTU " + std::to_string(info);
        what += std::string(v6 ? " (ICMPv6" : " (ICMP");
        what += from.empty() ? ")" : " from " + from + ")";
        return what;
    }
    what = std::strerror(err);
    if (too_big() && info != 0) what += ", the interface's MTU is " + std::to_string(info);
    return what;
}

Result<std::unique_ptr<IcmpSocket>> IcmpSocket::open(const Peer& peer, IcmpSocketKind kind,
                                                     const std::string& bind_device) {
    const std::string context = peer.label();
    std::unique_ptr<IcmpSocket> s(new IcmpSocket());
    s->ipv6_ = peer.ipv6();
    s->peer_label_ = context;
    s->token_ = random_u64();
    s->buf_.resize(kReceiveBuffer);

    std::optional<Error> ping_error;
    if (kind == IcmpSocketKind::Auto || kind == IcmpSocketKind::Ping) {
        auto fd = open_kind(peer, IcmpSocketKind::Ping, bind_device);
        if (fd) {
            s->fd_ = std::move(*fd);
            s->kind_ = IcmpSocketKind::Ping;
            return s;
        }
        ping_error = std::move(fd.error());
        // Only "not allowed" (ping_group_range) falls back to raw; any other
        // failure of a ping socket would be the raw socket's too.
        const bool denied = ping_error->sys_errno == EACCES || ping_error->sys_errno == EPERM ||
                            ping_error->sys_errno == EPROTONOSUPPORT ||
                            ping_error->sys_errno == EAFNOSUPPORT;
        if (kind == IcmpSocketKind::Ping || !denied) {
            if (denied)
                return fail(Errc::PermissionDenied, context,
                            "an unprivileged ICMP socket is not allowed: no group of this "
                            "process is in net.ipv4.ping_group_range (\"" +
                                ping_group_range() + "\")");
            return std::unexpected(std::move(*ping_error).within(context + ": ICMP socket"));
        }
    }
    auto fd = open_kind(peer, IcmpSocketKind::Raw, bind_device);
    if (fd) {
        s->fd_ = std::move(*fd);
        s->kind_ = IcmpSocketKind::Raw;
        uint16_t id = 0;
        if (getrandom(&id, sizeof id, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof id))
            id = static_cast<uint16_t>(s->token_);
        s->id_ = id;
        return s;
    }
    const int raw_errno = fd.error().sys_errno;
    if (raw_errno != EPERM && raw_errno != EACCES)
        return std::unexpected(std::move(fd.error()).within(context + ": raw ICMP socket"));
    if (kind == IcmpSocketKind::Raw)
        return fail(Errc::PermissionDenied, context,
                    "a raw ICMP socket needs CAP_NET_RAW (run as root)");
    return fail(Errc::PermissionDenied, context,
                "sending ICMP echo requests needs CAP_NET_RAW (run as root) or a group of this "
                "process in net.ipv4.ping_group_range (now \"" +
                    ping_group_range() + "\"; e.g. sysctl net.ipv4.ping_group_range=\"0 " +
                    "2147483647\")");
}

uint32_t IcmpSocket::min_packet() const {
    return static_cast<uint32_t>(codec::ip_header_bytes(ipv6_) + codec::kIcmpHeader +
                                 codec::kTokenBytes);
}

Result<uint16_t> IcmpSocket::send(uint32_t ip_bytes) {
    const std::string context =
        peer_label_ + ": echo request of " + std::to_string(ip_bytes) + " bytes";
    if (ip_bytes < min_packet() || ip_bytes > kMaxPacket)
        return fail(Errc::InvalidArgument, context,
                    "outside " + std::to_string(min_packet()) + ".." + std::to_string(kMaxPacket));
    const uint16_t seq = next_seq_++;
    const auto msg =
        codec::echo_request(ipv6_, id_, seq, token_, ip_bytes - codec::ip_header_bytes(ipv6_));
    int64_t now = realtime_ns();
    bool retried = false;
    for (;;) {
        const ssize_t n = ::send(fd_.get(), msg.data(), msg.size(), 0);
        if (n == static_cast<ssize_t>(msg.size())) break;
        if (n < 0 && errno == EINTR) continue;
        // Possibly an earlier request's error, reported here once: a second
        // failure is this request's own.
        if (n < 0 && pending_network_error(errno) && !retried) {
            retried = true;
            now = realtime_ns();
            continue;
        }
        if (n < 0) return fail_errno(errno, context, Errc::Io);
        return fail(Errc::Io, context, "sent only " + std::to_string(n) + " bytes");
    }
    ++sent_;
    outstanding_[seq] = Outstanding{ip_bytes, now};
    return seq;
}

Result<std::optional<IcmpEvent>> IcmpSocket::read_reply() {
    iovec iov{buf_.data(), buf_.size()};
    alignas(cmsghdr) char control[256];
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(fd_.get(), &mh, MSG_DONTWAIT);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR || pending_network_error(errno))
            return std::optional<IcmpEvent>{};
        {
            const int saved_errno = errno;  // read before the message is built
            return fail_errno(saved_errno, peer_label_ + ": receive");
        }
    }
    int64_t rx_ns = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
            c->cmsg_len >= CMSG_LEN(sizeof(timespec))) {
            timespec ts{};
            std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
            rx_ns = int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
        }
    }
    if (rx_ns == 0) rx_ns = realtime_ns();
    const bool with_ip = !ipv6_ && kind_ == IcmpSocketKind::Raw;
    const auto echo = codec::parse_echo_reply(
        ipv6_, with_ip, std::span<const uint8_t>(buf_.data(), static_cast<std::size_t>(n)));
    // Not ours (another pinger's, a stray type, a truncated reply): skipped.
    if (!echo || echo->token != token_) return std::optional<IcmpEvent>{};
    if (kind_ == IcmpSocketKind::Raw && echo->id != id_) return std::optional<IcmpEvent>{};
    auto it = outstanding_.find(echo->seq);
    if (it == outstanding_.end()) return std::optional<IcmpEvent>{};
    // A reply that is not as long as the request did not bring it back.
    const uint32_t want = it->second.ip_bytes;
    if (echo->icmp_bytes + codec::ip_header_bytes(ipv6_) != want) return std::optional<IcmpEvent>{};
    EchoReply r;
    r.seq = echo->seq;
    r.ip_bytes = want;
    r.rtt_ms = static_cast<double>(std::max<int64_t>(0, rx_ns - it->second.sent_ns)) / 1e6;
    outstanding_.erase(it);
    return std::optional<IcmpEvent>(r);
}

Result<std::optional<IcmpEvent>> IcmpSocket::read_error() {
    iovec iov{buf_.data(), buf_.size()};
    alignas(cmsghdr) char control[512];
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(fd_.get(), &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return std::optional<IcmpEvent>{};
        {
            const int saved_errno = errno;  // read before the message is built
            return fail_errno(saved_errno, peer_label_ + ": receive errors");
        }
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
        const bool v4err = c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR;
        const bool v6err = c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR;
        if ((!v4err && !v6err) || c->cmsg_len < CMSG_LEN(sizeof(sock_extended_err))) continue;
        sock_extended_err ee{};
        std::memcpy(&ee, CMSG_DATA(c), sizeof ee);
        IcmpError e;
        e.err = static_cast<int>(ee.ee_errno);
        e.origin = ee.ee_origin;
        e.type = ee.ee_type;
        e.code = ee.ee_code;
        e.info = ee.ee_info;
        // SO_EE_OFFENDER: the address right after the structure.
        const std::size_t data_len = c->cmsg_len - CMSG_LEN(0);
        if (data_len >= sizeof ee + sizeof(sa_family_t)) {
            sockaddr_storage off{};
            const std::size_t len = std::min(sizeof off, data_len - sizeof ee);
            std::memcpy(&off, CMSG_DATA(c) + sizeof ee, len);
            if ((off.ss_family == AF_INET && len >= sizeof(sockaddr_in)) ||
                (off.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)))
                e.from = address_text(reinterpret_cast<const sockaddr*>(&off));
        }
        const auto quoted = codec::parse_quoted_request(
            ipv6_, std::span<const uint8_t>(buf_.data(), static_cast<std::size_t>(n)));
        if (quoted && (kind_ != IcmpSocketKind::Raw || quoted->id == id_)) {
            auto it = outstanding_.find(quoted->seq);
            if (it != outstanding_.end()) {
                e.seq = quoted->seq;
                e.ip_bytes = it->second.ip_bytes;
                outstanding_.erase(it);
            }
        }
        return std::optional<IcmpEvent>(std::move(e));
    }
    return std::optional<IcmpEvent>{};
}

Result<std::optional<IcmpEvent>> IcmpSocket::next(Clock::time_point deadline) {
    for (;;) {
        auto err = read_error();
        if (!err || *err) return err;
        auto reply = read_reply();
        if (!reply || *reply) return reply;
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return std::optional<IcmpEvent>{};
        pollfd p{fd_.get(), POLLIN, 0};
        const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 60000)));
        if (r < 0 && errno != EINTR) {
            const int saved_errno = errno;  // read before the message is built
            return fail_errno(saved_errno, peer_label_ + ": poll");
        }
        // Data that was not ours was consumed above; loop until the deadline.
        if (r > 0 && (p.revents & (POLLIN | POLLERR)) == 0)
            return fail(Errc::Io, peer_label_, "the ICMP socket reported a hang-up");
    }
}

}  // namespace nictune::probe
