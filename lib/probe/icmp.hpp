// An ICMP (IPv4) or ICMPv6 echo socket connected to one peer, sending
// requests of a chosen IP packet size with DF set and the route's cached
// path MTU ignored (IP_PMTUDISC_PROBE / IPV6_PMTUDISC_PROBE: the interface's
// MTU is the only local limit), and returning replies with their RTT and
// the ICMP errors the kernel queues for it (IP_RECVERR / IPV6_RECVERR:
// "fragmentation needed" / "packet too big" with the next-hop MTU,
// unreachable, ...).
//
// The socket is an unprivileged ping socket (SOCK_DGRAM + IPPROTO_ICMP[V6])
// when net.ipv4.ping_group_range includes one of this process's groups, else
// a raw socket (CAP_NET_RAW). Both are tried, in that order, by Auto.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "probe/peer.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace nictune::probe {

// The probes' sockets: closed on every exit path.
using Fd = UniqueFd;

enum class IcmpSocketKind { Auto, Ping, Raw };
const char* icmp_socket_name(IcmpSocketKind kind);  // "auto", "ping", "raw"

struct EchoReply {
    uint16_t seq = 0;
    uint32_t ip_bytes = 0;  // the request's (and reply's) IP packet size
    double rtt_ms = 0;
};

// An error the kernel queued for one of our requests (or for the socket).
struct IcmpError {
    std::optional<uint16_t> seq;       // the request it answers, when the quote shows it
    std::optional<uint32_t> ip_bytes;  // that request's size
    int err = 0;                       // ee_errno: EMSGSIZE, EHOSTUNREACH, ...
    uint8_t origin = 0;                // SO_EE_ORIGIN_LOCAL, _ICMP, _ICMP6
    uint8_t type = 0;
    uint8_t code = 0;
    uint32_t info = 0;  // the next-hop MTU when too_big()
    std::string from;   // who sent it (numeric), empty when the kernel says nothing

    // "Fragmentation needed" (ICMP), "packet too big" (ICMPv6), or the
    // local interface's own limit: info is the MTU that fits.
    [[nodiscard]] bool too_big() const;
    // "host unreachable (ICMP from 10.0.0.1)".
    [[nodiscard]] std::string describe() const;
};

using IcmpEvent = std::variant<EchoReply, IcmpError>;

class IcmpSocket {
  public:
    using Clock = std::chrono::steady_clock;

    // `bind_device` (may be empty): send through that interface only
    // (SO_BINDTODEVICE). Errors name the peer; "neither kind allowed"
    // explains both ways to get one.
    static Result<std::unique_ptr<IcmpSocket>> open(const Peer& peer, IcmpSocketKind kind,
                                                    const std::string& bind_device);

    [[nodiscard]] IcmpSocketKind kind() const { return kind_; }
    [[nodiscard]] bool ipv6() const { return ipv6_; }
    // The smallest IP packet a request can be (headers and our token) and
    // the largest IP allows.
    [[nodiscard]] uint32_t min_packet() const;
    static constexpr uint32_t kMaxPacket = 65535;

    // Sends one request making an IP packet of `ip_bytes`; returns its
    // sequence number. A size the interface cannot send is an error with
    // sys_errno EMSGSIZE.
    Result<uint16_t> send(uint32_t ip_bytes);
    // The next reply or error, waiting until `deadline` at most; nullopt
    // when nothing came by then. Replies to requests already answered, to
    // other sockets' requests and from other hosts are skipped.
    Result<std::optional<IcmpEvent>> next(Clock::time_point deadline);

    [[nodiscard]] unsigned sent() const { return sent_; }

  private:
    IcmpSocket() = default;
    Result<std::optional<IcmpEvent>> read_reply();
    Result<std::optional<IcmpEvent>> read_error();

    struct Outstanding {
        uint32_t ip_bytes = 0;
        int64_t sent_ns = 0;  // CLOCK_REALTIME, the clock of SO_TIMESTAMPNS
    };

    Fd fd_;
    IcmpSocketKind kind_ = IcmpSocketKind::Ping;
    bool ipv6_ = false;
    std::string peer_label_;
    uint16_t id_ = 0;  // raw sockets: ours; ping sockets: the kernel's
    uint64_t token_ = 0;
    uint16_t next_seq_ = 1;
    unsigned sent_ = 0;
    std::unordered_map<uint16_t, Outstanding> outstanding_;
    std::vector<uint8_t> buf_;
};

}  // namespace nictune::probe
