#include "util/json_writer.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "util/strings.hpp"

namespace nictune {

bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string to_valid_utf8(std::string_view s) {
    if (valid_utf8(s)) return std::string(s);
    std::string out;
    out.reserve(s.size() + 8);
    for (std::size_t i = 0; i < s.size();) {
        if (const std::size_t n = utf8_sequence(s, i)) {
            out.append(s.data() + i, n);
            i += n;
        } else {
            out += "\xef\xbf\xbd";  // U+FFFD
            ++i;
        }
    }
    return out;
}

namespace {

// Bytes that go into a JSON string as they are: printable ASCII but the
// quote and the backslash.
constexpr auto kPlain = [] {
    std::array<bool, 256> t{};
    for (std::size_t c = 0x20; c < 0x80; ++c)
        t[c] = c != '"' && c != '\\';
    return t;
}();

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighs = 0x8080808080808080ULL;

// Whether one of the eight bytes of w is zero.
constexpr bool has_zero_byte(uint64_t w) {
    return ((w - kOnes) & ~w & kHighs) != 0;
}

// Whether one of the eight bytes of w is not plain: below 0x20 (the
// subtraction borrows), 0x80 and above (the high bit), a quote or a
// backslash. It may say so of a plain byte after one that is not, never
// the other way round.
constexpr bool needs_care(uint64_t w) {
    return (((w - kOnes * 0x20) | w) & kHighs) != 0 || has_zero_byte(w ^ (kOnes * '"')) ||
           has_zero_byte(w ^ (kOnes * '\\'));
}

// Whether every byte of s is plain: eight at a time, the rest one by one.
bool all_plain(std::string_view s) {
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        if (needs_care(w)) break;
    }
    for (; i < s.size(); ++i)
        if (!kPlain[static_cast<unsigned char>(s[i])]) return false;
    return true;
}

}  // namespace

bool append_json_string(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    // Names, keys and values are nearly always plain ASCII: one copy. A
    // transaction over 512 interfaces writes some 60,000 strings.
    if (all_plain(s)) {
        out.reserve(out.size() + s.size() + 2);
        out += '"';
        out.append(s);
        out += '"';
        return true;
    }
    bool valid = true;
    out += '"';
    std::size_t i = 0;
    while (i < s.size()) {
        // Copy the longest run that needs no escaping in one append: names
        // and keys are almost always plain ASCII.
        std::size_t j = i;
        while (j < s.size() && kPlain[static_cast<unsigned char>(s[j])])
            ++j;
        out.append(s.data() + i, j - i);
        i = j;
        if (i == s.size()) break;
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            if (std::size_t n = utf8_sequence(s, i)) {
                out.append(s.data() + i, n);
                i += n;
            } else {
                out += "\\ufffd";
                valid = false;
                ++i;
            }
            continue;
        }
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                out += "\\u00";
                out += kHex[c >> 4];
                out += kHex[c & 0xf];
        }
        ++i;
    }
    out += '"';
    return valid;
}

void JsonWriter::item() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (depth_ == 0) return;
    if (count(depth_ - 1)++ > 0) out_ += ',';
    if (indent_ <= 0) return;  // compact
    out_ += '\n';
    out_.append(depth_ * static_cast<std::size_t>(indent_), ' ');
}

void JsonWriter::open(char c) {
    item();
    out_ += c;
    if (depth_ >= kShallow) deep_.push_back(0);
    count(depth_++) = 0;
}

void JsonWriter::close(char c) {
    const int n = count(--depth_);
    if (depth_ >= kShallow) deep_.pop_back();
    if (n > 0 && indent_ > 0) {
        out_ += '\n';
        out_.append(depth_ * static_cast<std::size_t>(indent_), ' ');
    }
    out_ += c;
}

void JsonWriter::begin_object() {
    open('{');
}
void JsonWriter::end_object() {
    close('}');
}
void JsonWriter::begin_array() {
    open('[');
}
void JsonWriter::end_array() {
    close(']');
}

void JsonWriter::key(std::string_view k) {
    item();
    replaced_ |= !append_json_string(out_, k);
    out_ += indent_ > 0 ? ": " : ":";
    after_key_ = true;
}

void JsonWriter::quoted_key(std::string_view q) {
    item();
    out_.append(q);
    after_key_ = true;
}

std::string quote_key(std::string_view k) {
    std::string out;
    append_json_string(out, k);
    out += ": ";
    return out;
}

void JsonWriter::value(std::string_view s) {
    item();
    replaced_ |= !append_json_string(out_, s);
}

void JsonWriter::value(bool b) {
    item();
    out_ += b ? "true" : "false";
}

void JsonWriter::value(uint64_t n) {
    item();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, n);
    out_.append(buf, r.ptr);
}

void JsonWriter::value(int64_t n) {
    item();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, n);
    out_.append(buf, r.ptr);
}

void JsonWriter::value(double d) {
    item();
    if (!std::isfinite(d)) {
        out_ += "null";
        return;
    }
    char buf[32];
    const int n = std::snprintf(buf, sizeof buf, "%.6g", d);
    out_.append(buf, static_cast<std::size_t>(n));
}

void JsonWriter::null() {
    item();
    out_ += "null";
}

}  // namespace nictune
