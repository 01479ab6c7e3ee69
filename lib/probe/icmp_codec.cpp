#include "probe/icmp_codec.hpp"

#include <cstring>

namespace nictune::probe::codec {
namespace {

constexpr uint8_t kEchoRequest4 = 8;
constexpr uint8_t kEchoReply4 = 0;
constexpr uint8_t kEchoRequest6 = 128;
constexpr uint8_t kEchoReply6 = 129;
constexpr uint8_t kProtoIcmp = 1;

uint16_t be16(const uint8_t* p) {
    return static_cast<uint16_t>((p[0] << 8) | p[1]);
}

void put_be16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v & 0xff);
}

// The token travels in network byte order, like the rest of the header.
uint64_t be64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v = (v << 8) | p[i];
    return v;
}

std::optional<Echo> parse_echo(uint8_t want_type, std::span<const uint8_t> icmp, bool need_token) {
    if (icmp.size() < kIcmpHeader) return std::nullopt;
    if (icmp[0] != want_type || icmp[1] != 0) return std::nullopt;
    Echo e;
    e.id = be16(icmp.data() + 4);
    e.seq = be16(icmp.data() + 6);
    e.icmp_bytes = icmp.size();
    if (icmp.size() >= kIcmpHeader + kTokenBytes)
        e.token = be64(icmp.data() + kIcmpHeader);
    else if (need_token)
        return std::nullopt;
    return e;
}

}  // namespace

uint16_t checksum(std::span<const uint8_t> bytes) {
    uint32_t sum = 0;
    std::size_t i = 0;
    for (; i + 1 < bytes.size(); i += 2)
        sum += be16(bytes.data() + i);
    if (i < bytes.size()) sum += static_cast<uint32_t>(bytes[i]) << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum & 0xffff);
}

std::vector<uint8_t> echo_request(bool ipv6, uint16_t id, uint16_t seq, uint64_t token,
                                  std::size_t icmp_bytes) {
    if (icmp_bytes < kIcmpHeader + kTokenBytes) icmp_bytes = kIcmpHeader + kTokenBytes;
    std::vector<uint8_t> m(icmp_bytes, 0);
    m[0] = ipv6 ? kEchoRequest6 : kEchoRequest4;
    put_be16(m.data() + 4, id);
    put_be16(m.data() + 6, seq);
    for (int i = 0; i < 8; ++i)
        m[kIcmpHeader + i] = static_cast<uint8_t>(token >> (56 - 8 * i));
    for (std::size_t i = kIcmpHeader + kTokenBytes; i < m.size(); ++i)
        m[i] = static_cast<uint8_t>(i);
    if (!ipv6) put_be16(m.data() + 2, checksum(m));
    return m;
}

std::optional<Echo> parse_echo_reply(bool ipv6, bool with_ip_header,
                                     std::span<const uint8_t> bytes) {
    if (ipv6) return parse_echo(kEchoReply6, bytes, true);
    if (with_ip_header) {
        if (bytes.size() < kIpv4Header) return std::nullopt;
        if ((bytes[0] >> 4) != 4) return std::nullopt;
        const std::size_t ihl = static_cast<std::size_t>(bytes[0] & 0x0f) * 4;
        if (ihl < kIpv4Header || ihl > bytes.size()) return std::nullopt;
        if (bytes[9] != kProtoIcmp) return std::nullopt;
        const std::size_t total = be16(bytes.data() + 2);
        if (total < ihl || total > bytes.size()) return std::nullopt;
        bytes = bytes.subspan(ihl, total - ihl);
    }
    return parse_echo(kEchoReply4, bytes, true);
}

std::optional<Echo> parse_quoted_request(bool ipv6, std::span<const uint8_t> bytes) {
    return parse_echo(ipv6 ? kEchoRequest6 : kEchoRequest4, bytes, false);
}

}  // namespace nictune::probe::codec
