#include "model/rss.hpp"

#include <linux/ethtool.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "util/find.hpp"

namespace nictune {
namespace {

constexpr std::array<RssFlowType, 9> kFlows = {{
    {"tcp4", "", TCP_V4_FLOW},
    {"udp4", "", UDP_V4_FLOW},
    {"sctp4", "", SCTP_V4_FLOW},
    {"ah4", "esp4", AH_ESP_V4_FLOW},
    {"tcp6", "", TCP_V6_FLOW},
    {"udp6", "", UDP_V6_FLOW},
    {"sctp6", "", SCTP_V6_FLOW},
    {"ah6", "esp6", AH_ESP_V6_FLOW},
    {"ether", "", ETHER_FLOW},
}};

struct Letter {
    char c;
    uint64_t bit;
};
constexpr std::array<Letter, 8> kLetters = {{
    {'m', RXH_L2DA},
    {'v', RXH_VLAN},
    {'t', RXH_L3_PROTO},
    {'s', RXH_IP_SRC},
    {'d', RXH_IP_DST},
    {'f', RXH_L4_B_0_1},
    {'n', RXH_L4_B_2_3},
    {'r', static_cast<uint32_t>(RXH_DISCARD)},
}};

std::string hex(uint64_t v) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, 16);
    return "0x" + std::string(buf, end);
}

std::optional<uint64_t> number(std::string_view s, int base = 10) {
    uint64_t v = 0;
    if (s.empty()) return std::nullopt;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

// The N for which entry i holds i % N, or nullopt.
std::optional<uint64_t> equal_spread(std::span<const uint32_t> table) {
    if (table.empty()) return std::nullopt;
    const uint64_t n = uint64_t{*std::max_element(table.begin(), table.end())} + 1;
    for (std::size_t i = 0; i < table.size(); ++i)
        if (table[i] != i % n) return std::nullopt;
    return n;
}

}  // namespace

std::span<const RssFlowType> rss_flow_types() {
    return kFlows;
}

const RssFlowType* find_rss_flow_type(std::string_view name) {
    return find_first(kFlows, [&](const RssFlowType& f) {
        return f.name == name || (!f.alias.empty() && f.alias == name);
    });
}

std::string format_rss_hash_fields(uint64_t bits) {
    uint64_t known = 0;
    std::string out;
    for (const auto& l : kLetters) {
        known |= l.bit;
        if (bits & l.bit) out += l.c;
    }
    if (bits & ~known) return hex(bits);
    return out;
}

std::optional<uint64_t> parse_rss_hash_fields(std::string_view text) {
    if (text.starts_with("0x")) return number(text.substr(2), 16);
    uint64_t bits = 0;
    for (char c : text) {
        auto it = std::find_if(kLetters.begin(), kLetters.end(),
                               [&](const Letter& l) { return l.c == c; });
        if (it == kLetters.end() || (bits & it->bit)) return std::nullopt;
        bits |= it->bit;
    }
    return bits;
}

std::string format_rss_indirection(std::span<const uint32_t> table, uint64_t rx_rings) {
    if (auto n = equal_spread(table)) {
        // The kernel's default (ethtool_rxfh_indir_default: i % rx_rings).
        bool dflt = rx_rings > 0;
        for (std::size_t i = 0; dflt && i < table.size(); ++i)
            dflt = table[i] == i % rx_rings;
        if (dflt) return "default";
        return "equal " + std::to_string(*n);
    }
    std::string out;
    for (std::size_t i = 0; i < table.size(); ++i) {
        if (i) out += ' ';
        out += std::to_string(table[i]);
    }
    return out;
}

std::optional<std::vector<uint32_t>> rss_indirection_table(std::string_view form, std::size_t size,
                                                           uint64_t rx_rings) {
    std::optional<uint64_t> n;
    if (form == "default") {
        if (rx_rings == 0) return std::nullopt;
        n = rx_rings;
    } else if (form.starts_with("equal ")) {
        n = number(form.substr(6));
        if (!n || *n == 0) return std::nullopt;
    }
    std::vector<uint32_t> out;
    out.reserve(size);
    if (n) {
        for (std::size_t i = 0; i < size; ++i)
            out.push_back(static_cast<uint32_t>(i % *n));
        return out;
    }
    while (!form.empty()) {
        const auto sp = form.find(' ');
        auto q = number(form.substr(0, sp));
        if (!q || *q > UINT32_MAX) return std::nullopt;
        out.push_back(static_cast<uint32_t>(*q));
        if (sp == std::string_view::npos) break;
        form.remove_prefix(sp + 1);
    }
    if (out.size() != size) return std::nullopt;
    return out;
}

std::optional<uint64_t> rss_equal_queues(std::string_view form, uint64_t rx_rings) {
    if (form == "default") return rx_rings > 0 ? std::optional<uint64_t>(rx_rings) : std::nullopt;
    if (form.starts_with("equal ")) return number(form.substr(6));
    return std::nullopt;
}

std::string format_rss_hfunc(uint8_t hfunc) {
    // The kernel's bits (include/linux/ethtool.h, not in the uapi headers:
    // ETH_RSS_HASH_TOP_BIT 0, _XOR_BIT 1, _CRC32_BIT 2) and the names of its
    // string set ETH_SS_RSS_HASH_FUNCS (rss_hash_func_strings), which ethtool
    // -x prints.
    static constexpr std::array<std::string_view, 3> kNames = {"toeplitz", "xor", "crc32"};
    std::string out;
    for (unsigned b = 0; b < 8; ++b) {
        if (!(hfunc & (1U << b))) continue;
        if (b >= kNames.size()) return hex(hfunc);
        if (!out.empty()) out += ',';
        out += kNames[b];
    }
    return out;
}

}  // namespace nictune
