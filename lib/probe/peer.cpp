#include "probe/peer.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "util/strings.hpp"

namespace nictune::probe {
namespace {

using Clock = std::chrono::steady_clock;

bool is_link_local6(const in6_addr& a) {
    return a.s6_addr[0] == 0xfe && (a.s6_addr[1] & 0xc0) == 0x80;
}

// A v4-mapped IPv6 address ("::ffff:10.0.0.2") is the IPv4 peer it names:
// ICMPv6 sockets cannot reach it.
void unmap_v4(sockaddr_storage& ss, socklen_t& len) {
    if (ss.ss_family != AF_INET6) return;
    sockaddr_in6 s6{};
    std::memcpy(&s6, &ss, sizeof s6);
    if (!IN6_IS_ADDR_V4MAPPED(&s6.sin6_addr)) return;
    sockaddr_in s4{};
    s4.sin_family = AF_INET;
    std::memcpy(&s4.sin_addr, s6.sin6_addr.s6_addr + 12, 4);
    ss = {};
    std::memcpy(&ss, &s4, sizeof s4);
    len = sizeof s4;
}

// Not a single host: ICMP echo and iperf3 need exactly one peer.
const char* not_unicast(const sockaddr_storage& ss) {
    if (ss.ss_family == AF_INET) {
        sockaddr_in s4{};
        std::memcpy(&s4, &ss, sizeof s4);
        const uint32_t a = ntohl(s4.sin_addr.s_addr);
        if (a == 0) return "the unspecified address";
        if (a == 0xffffffffu) return "the broadcast address";
        if ((a >> 28) == 0xe) return "a multicast address";
        return nullptr;
    }
    sockaddr_in6 s6{};
    std::memcpy(&s6, &ss, sizeof s6);
    if (IN6_IS_ADDR_UNSPECIFIED(&s6.sin6_addr)) return "the unspecified address";
    if (IN6_IS_ADDR_MULTICAST(&s6.sin6_addr)) return "a multicast address";
    return nullptr;
}

struct AddrinfoDeleter {
    void operator()(addrinfo* a) const {
        if (a != nullptr) freeaddrinfo(a);
    }
};
using AddrinfoPtr = std::unique_ptr<addrinfo, AddrinfoDeleter>;

// One asynchronous look-up. glibc's resolver thread writes into it until
// the look-up ends, so one that cannot be cancelled in time is left to it
// (a few hundred bytes, once per abandoned look-up).
struct Lookup {
    std::string name;
    addrinfo hints{};
    gaicb cb{};
    gaicb* list[1] = {&cb};
};

Result<AddrinfoPtr> lookup_name(const std::string& name, std::chrono::milliseconds timeout) {
    const std::string context = "peer " + quote(name);
    auto lk = std::make_unique<Lookup>();
    lk->name = name;
    lk->hints.ai_family = AF_UNSPEC;
    lk->hints.ai_socktype = SOCK_DGRAM;
    // Only families this host has an address of (a v6-only name on a v4-only
    // host is as unreachable as no name at all).
    lk->hints.ai_flags = AI_ADDRCONFIG;
    lk->cb.ar_name = lk->name.c_str();
    lk->cb.ar_request = &lk->hints;
    if (int rc = getaddrinfo_a(GAI_NOWAIT, lk->list, 1, nullptr); rc != 0)
        return fail(Errc::Io, context,
                    std::string("cannot start the look-up: ") + gai_strerror(rc));
    const auto deadline = Clock::now() + timeout;
    while (gai_error(&lk->cb) == EAI_INPROGRESS) {
        const auto left = deadline - Clock::now();
        if (left <= Clock::duration::zero()) break;
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        timespec ts{};
        ts.tv_sec = ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        (void)gai_suspend(lk->list, 1, &ts);  // returns on completion, time-out or a signal
    }
    int rc = gai_error(&lk->cb);
    if (rc == EAI_INPROGRESS) {
        const int c = gai_cancel(&lk->cb);
        if (c == EAI_NOTCANCELED) {
            (void)lk.release();  // the resolver thread still owns it
            return fail(
                Errc::InvalidArgument, context,
                "the name did not resolve within " + std::to_string(timeout.count()) + " ms");
        }
        rc = gai_error(&lk->cb);
        if (rc == EAI_CANCELED)
            return fail(
                Errc::InvalidArgument, context,
                "the name did not resolve within " + std::to_string(timeout.count()) + " ms");
    }
    AddrinfoPtr result(lk->cb.ar_result);
    if (rc == EAI_SYSTEM) {
        const int saved_errno = errno;  // read before the message is built
        return fail_errno(saved_errno, context + ": resolve");
    }
    if (rc == EAI_MEMORY) return fail(Errc::Internal, context, "out of memory");
    if (rc != 0)
        return fail(Errc::InvalidArgument, context,
                    std::string("cannot resolve: ") + gai_strerror(rc));
    if (!result) return fail(Errc::InvalidArgument, context, "cannot resolve: no address");
    return result;
}

}  // namespace

std::string address_text(const sockaddr* sa) {
    char buf[INET6_ADDRSTRLEN + 16] = {};
    if (sa->sa_family == AF_INET) {
        sockaddr_in s4{};
        std::memcpy(&s4, sa, sizeof s4);
        inet_ntop(AF_INET, &s4.sin_addr, buf, sizeof buf);
        return buf;
    }
    if (sa->sa_family == AF_INET6) {
        sockaddr_in6 s6{};
        std::memcpy(&s6, sa, sizeof s6);
        inet_ntop(AF_INET6, &s6.sin6_addr, buf, sizeof buf);
        std::string out = buf;
        if (s6.sin6_scope_id != 0) out += "%" + std::to_string(s6.sin6_scope_id);
        return out;
    }
    return "address family " + std::to_string(sa->sa_family);
}

int Peer::scope_ifindex() const {
    if (addr.ss_family != AF_INET6) return 0;
    sockaddr_in6 s6{};
    std::memcpy(&s6, &addr, sizeof s6);
    return static_cast<int>(s6.sin6_scope_id);
}

sockaddr_storage Peer::with_port(uint16_t port) const {
    sockaddr_storage out = addr;
    if (out.ss_family == AF_INET) {
        sockaddr_in s4{};
        std::memcpy(&s4, &out, sizeof s4);
        s4.sin_port = htons(port);
        std::memcpy(&out, &s4, sizeof s4);
    } else {
        sockaddr_in6 s6{};
        std::memcpy(&s6, &out, sizeof s6);
        s6.sin6_port = htons(port);
        std::memcpy(&out, &s6, sizeof s6);
    }
    return out;
}

std::string Peer::label() const {
    if (spec == address) return "peer " + address;
    return "peer " + quote(spec) + " (" + address + ")";
}

Result<Peer> resolve_peer(std::string_view spec_in, int scope_ifindex,
                          std::chrono::milliseconds timeout) {
    const std::string spec(spec_in);
    if (spec.empty()) return fail(Errc::InvalidArgument, "peer", "no peer given");
    // The longest DNS name is 253 characters; an IPv6 address with a zone
    // is shorter.
    if (spec.size() > 253)
        return fail(Errc::InvalidArgument, "peer " + quote(spec.substr(0, 40) + "..."),
                    "longer than any host name (253 characters)");
    const std::string context = "peer " + quote(spec);

    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICHOST;
    addrinfo* numeric = nullptr;
    AddrinfoPtr found;
    if (getaddrinfo(spec.c_str(), nullptr, &hints, &numeric) == 0) {
        found.reset(numeric);
    } else {
        if (spec.find('%') != std::string::npos)
            return fail(Errc::InvalidArgument, context,
                        "not an address with a zone (ADDRESS%IFACE names an existing interface)");
        auto r = lookup_name(spec, timeout);
        if (!r) return std::unexpected(std::move(r.error()));
        found = std::move(*r);
    }

    Peer peer;
    peer.spec = spec;
    const addrinfo* ai = found.get();
    if (ai->ai_addrlen > sizeof peer.addr ||
        (ai->ai_family != AF_INET && ai->ai_family != AF_INET6))
        return fail(Errc::InvalidArgument, context, "not an IPv4 or IPv6 address");
    std::memcpy(&peer.addr, ai->ai_addr, ai->ai_addrlen);
    peer.addr_len = static_cast<socklen_t>(ai->ai_addrlen);
    unmap_v4(peer.addr, peer.addr_len);
    if (const char* what = not_unicast(peer.addr))
        return fail(Errc::InvalidArgument, context,
                    std::string("is ") + what + ", not one host to probe");

    if (peer.addr.ss_family == AF_INET6) {
        sockaddr_in6 s6{};
        std::memcpy(&s6, &peer.addr, sizeof s6);
        if (is_link_local6(s6.sin6_addr)) {
            if (s6.sin6_scope_id == 0 && scope_ifindex <= 0)
                return fail(Errc::InvalidArgument, context,
                            "a link-local address needs an interface: give --interface IFACE "
                            "or write it as ADDRESS%IFACE");
            if (s6.sin6_scope_id != 0 && scope_ifindex > 0 &&
                static_cast<int>(s6.sin6_scope_id) != scope_ifindex)
                return fail(Errc::InvalidArgument, context,
                            "its zone names another interface than --interface");
            if (s6.sin6_scope_id == 0) s6.sin6_scope_id = static_cast<uint32_t>(scope_ifindex);
        } else {
            s6.sin6_scope_id = 0;
        }
        std::memcpy(&peer.addr, &s6, sizeof s6);
    }
    peer.address = address_text(reinterpret_cast<const sockaddr*>(&peer.addr));
    return peer;
}

}  // namespace nictune::probe
