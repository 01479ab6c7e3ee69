#include "util/strings.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace nictune {

std::string_view trim(std::string_view s) {
    const auto* ws = " \t\r\n\v\f";
    auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

std::string to_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i) out += sep;
        out += parts[i];
    }
    return out;
}

bool glob_match(std::string_view pattern, std::string_view text) {
    return fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}
}  // namespace

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string_view>& candidates) {
    std::optional<std::string> best;
    std::size_t best_d = 0;
    for (auto c : candidates) {
        std::size_t d = edit_distance(word, c);
        if (!best || d < best_d) {
            best = std::string(c);
            best_d = d;
        }
    }
    // A typo is a small fraction of the word; beyond that a suggestion is noise.
    if (best && best_d <= std::max<std::size_t>(2, word.size() / 3) && best_d < word.size())
        return best;
    return std::nullopt;
}

int compare_versions(std::string_view a, std::string_view b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        if (i >= a.size()) return -1;
        if (j >= b.size()) return 1;
        bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
        bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
        if (da && db) {
            while (i < a.size() && a[i] == '0')
                ++i;
            while (j < b.size() && b[j] == '0')
                ++j;
            std::size_t si = i, sj = j;
            while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i])))
                ++i;
            while (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j])))
                ++j;
            auto na = a.substr(si, i - si), nb = b.substr(sj, j - sj);
            if (na.size() != nb.size()) return na.size() < nb.size() ? -1 : 1;
            if (int c = na.compare(nb); c != 0) return c < 0 ? -1 : 1;
        } else if (da != db) {
            // A number sorts after a separator or suffix: "5.3" > "5-k".
            return da ? 1 : -1;
        } else {
            if (a[i] != b[j]) return a[i] < b[j] ? -1 : 1;
            ++i;
            ++j;
        }
    }
    return 0;
}

bool valid_ifname(std::string_view name) {
    if (name.empty() || name.size() >= 16 || name == "." || name == "..") return false;
    for (char c : name) {
        auto u = static_cast<unsigned char>(c);
        if (c == '/' || c == ':' || std::isspace(u) || u < 0x20 || u == 0x7f) return false;
    }
    return true;
}

std::string quote(std::string_view s) {
    std::string out = "'";
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else if (c == '\'' || c == '\\') {
            out += '\\';
            out += c;
        } else {
            out += c;
        }
    }
    out += '\'';
    return out;
}

}  // namespace nictune
