#include "model/cpulist.hpp"

#include <algorithm>
#include <charconv>

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

}  // namespace nictune
