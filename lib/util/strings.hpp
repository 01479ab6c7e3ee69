// Small string helpers shared by the profile loader, the engine and the CLI.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace nictune {

// The whole of `s` as a decimal number of type T (no sign for unsigned
// types, no spaces, nothing after it), or nullopt.
template <class T>
std::optional<T> parse_number(std::string_view s) {
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

std::string_view trim(std::string_view s);
// A sysctl's value as it compares: surrounding whitespace removed, inner
// runs (the tabs of tcp_rmem) made one space. "4096\t131072 6291456\n"
// and "4096 131072 6291456" are the same value.
std::string normalize_sysctl_value(std::string_view v);
// A floor for a sysctl of numbers ("16777216", "4096 87380 16777216"):
// `current` with each number raised to the floor's at the same place, in
// normal form; nullopt when the two do not hold the same count of
// non-negative integers (nothing to compare).
std::optional<std::string> sysctl_at_least(std::string_view current, std::string_view floor);
std::string to_lower(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// "a.b", in one allocation (setting paths: an apply of 512 interfaces makes
// some 10,000).
std::string dotted(std::string_view a, std::string_view b);

// ---- Names: nictune's one escaping scheme
//
// The kernel takes interface names of up to 15 bytes, and alternative names
// of up to 127, with any byte but NUL, '/' and whitespace (and ':' in
// names), UTF-8 or not. nictune writes every name in one text form, the
// same everywhere: JSON, D-Bus, the journal's INTERFACE= field, log and
// error text, state file names; and takes that form back on the command
// line and in D-Bus calls:
//
//   - a character that is printable UTF-8 stays as it is ("p4p1", "é0");
//   - every other byte, and the backslash itself, is written \xhh (two
//     lower-case hex digits): "\xff\xfeq", "a\x5cb".
//
// "Printable" excludes the C0 and C1 controls, DEL, the space and the other
// whitespace and invisible or text-direction characters (the list is in
// strings.cpp and docs/names.md). Each byte string has exactly one text
// form, and unescape_name() accepts only that form, so the mapping is a
// bijection: two different names never read the same, and a name read back
// from any output finds the same device.
//
// Inside nictune, names (Identity::name, NicRef::name, state records...) are
// held in this text form; only the kernel boundary (rtnl, the GDRVINFO
// ioctl, sysfs paths) sees the real bytes.
std::string escape_name(std::string_view bytes);
// The bytes of a name in text form; InvalidArgument (saying what to write
// instead) for text that is not the form escape_name() gives.
Result<std::string> unescape_name(std::string_view text);

// A name in text form as one word for a POSIX-style shell (bash, zsh), for
// the commands reports suggest ("nictunectl apply x520 p4p1"): as it is when
// it holds only [A-Za-z0-9._@%+=,-], in single quotes when it has other
// printable characters ('a b$', with ' written '\''), and as bash's $'...'
// when it has \xhh escapes, which $'...' reads back as the same bytes.
std::string shell_word(std::string_view text);

// Interface-name glob (bindings, profile [match]): `pattern` and `name` in
// the text form, matched on the names' real bytes, shell-style: `*` any
// bytes, `?` one byte, `[...]` one byte of a set; no backslash quoting (a
// backslash is \x5c like any other). False when either is not valid text.
bool glob_match(std::string_view pattern, std::string_view name);

// The length of the valid UTF-8 sequence at s[i] (shortest form, no
// surrogates, at most U+10FFFF) with its code point in *cp; 0 when there is
// none there.
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t* cp = nullptr);

// The candidate closest to `word` by edit distance, if it is close enough to
// be a plausible typo ("rx_usec" -> "rx_usecs").
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string_view>& candidates);

// Compares driver version strings segment by segment: digit runs as numbers,
// other runs as text ("3.15.1-k" < "4.0.1-k" < "5.3.6"). Returns <0, 0, >0.
int compare_versions(std::string_view a, std::string_view b);

// An interface name (in text form) the kernel could accept: 1..15 bytes, no
// NUL, '/', ':' or whitespace, not "." or "..".
bool valid_ifname(std::string_view name);
// A name (in text form) the kernel could resolve to an interface: its name
// or one of its alternative names (1..127 bytes, ':' and 16 bytes or more
// allowed). Names with '/' or whitespace, "." and ".." are refused.
bool valid_name_or_altname(std::string_view name);

// Quote a user-supplied string for messages: 'p4p1', in the text form of
// escape_name() ('a\x5cb', 'x\x0a').
std::string quote(std::string_view s);
// Quote a name given in text form: as it is when it holds only printable
// characters and backslashes ('\xff\xfeq', 'a\q'), else as quote() does.
std::string quote_name(std::string_view text);

}  // namespace nictune
