// ICMP and ICMPv6 echo messages as bytes: built for sending, recognised in
// what a socket returns (replies, and the quoted request of an error-queue
// message). Pure functions, tested on byte fixtures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace nictune::probe::codec {

constexpr std::size_t kIcmpHeader = 8;   // type, code, checksum, id, sequence
constexpr std::size_t kTokenBytes = 8;   // marks our requests' payload
constexpr std::size_t kIpv4Header = 20;  // no options: what the kernel sends
constexpr std::size_t kIpv6Header = 40;  // no extension headers

// The IP header bytes in front of an echo message of this family.
constexpr std::size_t ip_header_bytes(bool ipv6) {
    return ipv6 ? kIpv6Header : kIpv4Header;
}

// RFC 1071 Internet checksum.
uint16_t checksum(std::span<const uint8_t> bytes);

// An echo request of `icmp_bytes` (header + payload, >= kIcmpHeader +
// kTokenBytes): the token first in the payload, then a counting pattern.
// The IPv4 checksum is filled in (raw sockets send it as it is; ping
// sockets and ICMPv6 recompute it).
std::vector<uint8_t> echo_request(bool ipv6, uint16_t id, uint16_t seq, uint64_t token,
                                  std::size_t icmp_bytes);

struct Echo {
    uint16_t id = 0;
    uint16_t seq = 0;
    uint64_t token = 0;
    std::size_t icmp_bytes = 0;  // header + payload as received
};

// An echo reply. `with_ip_header`: IPv4 raw sockets return the IP header
// too; everything else starts at the ICMP header. Anything else (another
// type, a truncated message, a payload too short for a token) is nullopt.
std::optional<Echo> parse_echo_reply(bool ipv6, bool with_ip_header,
                                     std::span<const uint8_t> bytes);

// The request quoted by an ICMP error (the error queue's payload starts at
// the quoted ICMP header). Routers quote at least the 8 header bytes, often
// not the token: that is nullopt only when even the header is missing or
// the message is not one of our echo requests.
std::optional<Echo> parse_quoted_request(bool ipv6, std::span<const uint8_t> bytes);

}  // namespace nictune::probe::codec
