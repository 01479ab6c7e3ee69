// Small string helpers shared by the profile loader, the engine and the CLI.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nictune {

std::string_view trim(std::string_view s);
std::string to_lower(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// Shell-style glob (fnmatch, no FNM_PATHNAME).
bool glob_match(std::string_view pattern, std::string_view text);

// The candidate closest to `word` by edit distance, if it is close enough to
// be a plausible typo ("rx_usec" -> "rx_usecs").
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string_view>& candidates);

// Compares driver version strings segment by segment: digit runs as numbers,
// other runs as text ("3.15.1-k" < "4.0.1-k" < "5.3.6"). Returns <0, 0, >0.
int compare_versions(std::string_view a, std::string_view b);

// An interface name the kernel could accept: 1..15 bytes, no '/', ':' or
// whitespace, not "." or "..".
bool valid_ifname(std::string_view name);

// Quote a user-supplied string for messages: 'p4p1' (non-printables escaped).
std::string quote(std::string_view s);

}  // namespace nictune
