#include "model/cpulist.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace nictune {
namespace {

std::optional<unsigned> number(std::string_view s) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v > kMaxCpu)
        return std::nullopt;
    return v;
}

}  // namespace

std::optional<std::vector<unsigned>> parse_cpulist(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    std::vector<unsigned> out;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view part = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        if (comma != std::string_view::npos && text.empty()) return std::nullopt;  // "1,"
        const auto dash = part.find('-');
        auto lo = number(part.substr(0, dash));
        if (!lo) return std::nullopt;
        unsigned hi = *lo;
        if (dash != std::string_view::npos) {
            auto h = number(part.substr(dash + 1));
            if (!h || *h < *lo) return std::nullopt;
            hi = *h;
        }
        for (unsigned c = *lo; c <= hi; ++c)
            out.push_back(c);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::string format_cpulist(const std::vector<unsigned>& cpus) {
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
            ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(cpus[i]);
        if (j > i) out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

std::optional<std::vector<unsigned>> parse_cpumask(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.remove_suffix(1);
    if (text.empty()) return std::nullopt;
    std::vector<uint32_t> words;  // least significant first
    while (true) {
        const auto comma = text.rfind(',');
        const std::string_view part =
            comma == std::string_view::npos ? text : text.substr(comma + 1);
        if (part.empty() || part.size() > 8) return std::nullopt;
        uint32_t w = 0;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), w, 16);
        if (ec != std::errc() || end != part.data() + part.size()) return std::nullopt;
        words.push_back(w);
        if (comma == std::string_view::npos) break;
        text = text.substr(0, comma);
    }
    if (words.size() * 32 > kMaxCpu + 1) return std::nullopt;
    std::vector<unsigned> out;
    for (std::size_t i = 0; i < words.size(); ++i)
        for (unsigned b = 0; b < 32; ++b)
            if ((words[i] >> b) & 1U) out.push_back(static_cast<unsigned>(i * 32 + b));
    return out;
}

std::string format_cpumask(const std::vector<unsigned>& cpus) {
    if (cpus.empty()) return "0";
    const unsigned top = *std::max_element(cpus.begin(), cpus.end());
    std::vector<uint32_t> words(top / 32 + 1, 0);
    for (unsigned c : cpus)
        words[c / 32] |= 1U << (c % 32);
    std::string out;
    char buf[16];
    for (std::size_t i = words.size(); i-- > 0;) {
        // The first word without leading zeros, the others all 8 digits.
        const bool first = i + 1 == words.size();
        const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, words[i], 16);
        std::string w(buf, end);
        if (!first) w.insert(0, 8 - w.size(), '0');
        if (!first) out += ',';
        out += w;
    }
    return out;
}

}  // namespace nictune
