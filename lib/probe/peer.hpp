// The peer of a probe: what the caller named and the address it stands for.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace nictune::probe {

struct Peer {
    std::string spec;         // as given: "10.0.0.2", "peer-b", "fe80::2%a0"
    std::string address;      // numeric, with the zone of a link-local IPv6 address
    sockaddr_storage addr{};  // port 0; sin6_scope_id set for a link-local address
    socklen_t addr_len = 0;

    [[nodiscard]] int family() const { return addr.ss_family; }
    [[nodiscard]] bool ipv6() const { return addr.ss_family == AF_INET6; }
    // The interface a link-local IPv6 address is reached through, else 0.
    [[nodiscard]] int scope_ifindex() const;
    // The address with a port, for connect().
    [[nodiscard]] sockaddr_storage with_port(uint16_t port) const;
    // For messages: "peer 10.0.0.2", or "peer 'peer-b' (10.0.0.2)".
    [[nodiscard]] std::string label() const;
};

// Resolves `spec`: a numeric address (IPv6 with an optional %IFACE zone) or a
// host name, looked up by the system's resolver within `timeout` (a lookup
// still running then is abandoned). `scope_ifindex` (from --interface) is
// the zone of a link-local IPv6 address; such an address without one is
// refused, since the kernel could not tell which link it is on. A name that
// does not resolve, and an address that is not unicast, are
// Errc::InvalidArgument.
Result<Peer> resolve_peer(std::string_view spec, int scope_ifindex,
                          std::chrono::milliseconds timeout);

// "10.0.0.2", "fe80::2%3" (numeric; the zone as an index).
std::string address_text(const sockaddr* sa);

}  // namespace nictune::probe
