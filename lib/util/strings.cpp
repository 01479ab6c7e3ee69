#include "util/strings.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>

namespace nictune {

std::string_view trim(std::string_view s) {
    const auto* ws = " \t\r\n\v\f";
    auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

std::string normalize_sysctl_value(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    bool pending_space = false;
    for (char c : v) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            pending_space = !out.empty();
            continue;
        }
        if (pending_space) out += ' ';
        pending_space = false;
        out += c;
    }
    return out;
}

std::optional<std::string> sysctl_at_least(std::string_view current, std::string_view floor) {
    const std::string cur = normalize_sysctl_value(current);
    const std::string low = normalize_sysctl_value(floor);
    std::string_view c = cur, f = low;
    std::string out;
    while (!c.empty() || !f.empty()) {
        const auto cw = c.substr(0, c.find(' '));
        const auto fw = f.substr(0, f.find(' '));
        const auto a = parse_number<uint64_t>(cw);
        const auto b = parse_number<uint64_t>(fw);
        if (!a || !b) return std::nullopt;
        if (!out.empty()) out += ' ';
        out += std::to_string(std::max(*a, *b));
        c.remove_prefix(std::min(c.size(), cw.size() + 1));
        f.remove_prefix(std::min(f.size(), fw.size() + 1));
    }
    if (out.empty()) return std::nullopt;
    return out;
}

std::string to_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string dotted(std::string_view a, std::string_view b) {
    std::string out;
    out.reserve(a.size() + 1 + b.size());
    out += a;
    out += '.';
    out += b;
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

std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t* cp) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    std::size_t n = 0;
    char32_t v = 0;
    if (c < 0x80) {
        n = 1;
        v = c;
    } else if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        v = c & 0x1fU;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        v = c & 0x0fU;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        v = c & 0x07U;
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xc0U) != 0x80U) return 0;
        v = (v << 6) | (b(i + k) & 0x3fU);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid.
    if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) || (n == 4 && v < 0x10000) ||
        (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
        return 0;
    if (cp) *cp = v;
    return n;
}

namespace {

// Characters a name keeps as they are: printable, visible, not whitespace.
// The others would make a name unreadable, ambiguous in space-separated
// text, or look like another name (a zero-width space, a right-to-left
// override). docs/names.md lists the same ranges.
bool kept_as_is(char32_t c) {
    struct Range {
        char32_t first, last;
    };
    static constexpr Range kEscaped[] = {
        {0x00, 0x20},        // C0 controls, space
        {0x5c, 0x5c},        // the backslash: it starts an escape
        {0x7f, 0xa0},        // DEL, C1 controls, no-break space
        {0xad, 0xad},        // soft hyphen
        {0x61c, 0x61c},      // Arabic letter mark
        {0x1680, 0x1680},    // Ogham space mark
        {0x180e, 0x180e},    // Mongolian vowel separator
        {0x2000, 0x200f},    // spaces, zero-width characters, LRM, RLM
        {0x2028, 0x202f},    // line and paragraph separators, embeddings, narrow no-break space
        {0x205f, 0x206f},    // math space, word joiner, invisible operators, isolates
        {0x3000, 0x3000},    // ideographic space
        {0xfdd0, 0xfdef},    // noncharacters
        {0xfeff, 0xfeff},    // zero-width no-break space (byte order mark)
        {0xfff9, 0xfffb},    // interlinear annotation
        {0xe0000, 0xe007f},  // tags
    };
    for (const auto& r : kEscaped)
        if (c >= r.first && c <= r.last) return false;
    // The other noncharacters: U+FFFE, U+FFFF, U+1FFFE, ..., U+10FFFF.
    return (c & 0xfffeU) != 0xfffeU;
}

constexpr char kHex[] = "0123456789abcdef";

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

}  // namespace

std::string escape_name(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size();) {
        char32_t cp = 0;
        const std::size_t n = utf8_sequence(bytes, i, &cp);
        if (n > 0 && kept_as_is(cp)) {
            out.append(bytes.data() + i, n);
            i += n;
            continue;
        }
        // Byte by byte: the next byte of an invalid sequence may start a valid one.
        const auto b = static_cast<unsigned char>(bytes[i]);
        out += "\\x";
        out += kHex[b >> 4];
        out += kHex[b & 0xf];
        ++i;
    }
    return out;
}

namespace {

// Text whose characters are all kept as they are or backslashes: it can be
// shown as it is in a message.
bool plain_text(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        const std::size_t n = utf8_sequence(text, i, &cp);
        if (n == 0 || (cp != '\\' && !kept_as_is(cp))) return false;
        i += n;
    }
    return true;
}

}  // namespace

std::string quote_name(std::string_view text) {
    return plain_text(text) ? "'" + std::string(text) + "'" : quote(text);
}

Result<std::string> unescape_name(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\') {
            out += text[i];
            continue;
        }
        int hi = -1, lo = -1;
        if (i + 3 < text.size() && text[i + 1] == 'x') {
            hi = hex_digit(text[i + 2]);
            lo = hex_digit(text[i + 3]);
        }
        if (hi < 0 || lo < 0)
            return fail(Errc::InvalidArgument, "",
                        quote_name(text) +
                            " is not in nictune's text form of a name (a byte is written \\x and "
                            "two lower-case hex digits, a backslash \\x5c)");
        out += static_cast<char>(hi * 16 + lo);
        i += 3;
    }
    // One text per name: what escape_name() writes differently (a "\x41"
    // for 'A', a raw control byte, a raw space) is not that name's text.
    std::string canonical = escape_name(out);
    if (canonical == text) return out;
    if (!plain_text(text))
        return fail(Errc::InvalidArgument, "",
                    "must be written '" + canonical +
                        "' in nictune's text form (bytes that are not printable UTF-8, "
                        "whitespace and the backslash are written \\xhh)");
    return fail(Errc::InvalidArgument, "",
                quote_name(text) + " is written '" + canonical +
                    "' in nictune's text form (\\xhh stands only for a byte that is not "
                    "printable UTF-8, whitespace or a backslash)");
}

std::string shell_word(std::string_view text) {
    const auto plain = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("._@%+=,-").find(c) != std::string_view::npos;
    };
    if (!text.empty() && std::all_of(text.begin(), text.end(), plain)) return std::string(text);
    // Only \xhh escapes hold a backslash in the text form: $'...' turns
    // them into their bytes, where '...' would keep them as written. Each
    // form has its own way of writing a quote inside.
    const bool escapes = text.find("\\x") != std::string_view::npos;
    std::string out = escapes ? "$'" : "'";
    for (char c : text) {
        if (c == '\'')
            out += escapes ? "\\'" : "'\\''";
        else
            out += c;
    }
    out += '\'';
    return out;
}

bool glob_match(std::string_view pattern, std::string_view name) {
    auto p = unescape_name(pattern);
    auto n = unescape_name(name);
    if (!p || !n || p->find('\0') != std::string::npos || n->find('\0') != std::string::npos)
        return false;
    // nictune never calls setlocale(): in the C locale fnmatch compares bytes.
    return fnmatch(p->c_str(), n->c_str(), FNM_NOESCAPE) == 0;
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

namespace {

// The kernel's isspace() (lib/ctype.c): a name with one of these is refused.
bool kernel_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

// Text of a name of 1..max bytes without NUL, '/' or whitespace (nor ':'
// unless `colon`), not "." or "..".
bool valid_name_bytes(std::string_view text, std::size_t max, bool colon) {
    if (text.empty() || text.size() > 4 * max) return false;  // \xhh per byte at most
    auto raw = unescape_name(text);
    if (!raw || raw->empty() || raw->size() > max || *raw == "." || *raw == "..") return false;
    for (char c : *raw) {
        const auto u = static_cast<unsigned char>(c);
        if (u == 0 || c == '/' || (c == ':' && !colon) || kernel_space(u)) return false;
    }
    return true;
}

}  // namespace

bool valid_ifname(std::string_view name) {
    return valid_name_bytes(name, 15, false);  // IFNAMSIZ - 1
}

bool valid_name_or_altname(std::string_view name) {
    return valid_name_bytes(name, 127, true);  // ALTIFNAMSIZ - 1
}

std::string quote(std::string_view s) {
    std::string out = "'";
    out += escape_name(s);
    out += '\'';
    return out;
}

}  // namespace nictune
