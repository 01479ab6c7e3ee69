// The tools operators use (ip, ethtool) as oracles: tests compare nictune's
// readings with what they print. Test code only; the product never parses
// their output.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace nictune::test {

// "key: value" lines of `ethtool -c/-g/-l/-a/-i/<dev>` output, keyed by
// section prefix for -g/-l ("max." for pre-set maximums, "cur." for current),
// values as printed ("n/a" kept). Coalesce's "Adaptive RX: on  TX: off" and
// "CQE mode RX: n/a  TX: n/a" lines become adaptive-rx/adaptive-tx and
// cqe-mode-rx/cqe-mode-tx; "rx-frame-low" is normalised to "rx-frames-low".
std::map<std::string, std::string> parse_ethtool(const std::string& text);

// A JSON document from a command's stdout (ip -j, ethtool --json, nictunectl --json).
nlohmann::json parse_json(const std::string& text);

// ethtool's printed number for a key (nullopt for "n/a" or missing).
std::optional<uint64_t> ethtool_number(const std::map<std::string, std::string>& m,
                                       const std::string& key);
// "on"/"off" -> bool (nullopt for "n/a" or missing).
std::optional<bool> ethtool_bool(const std::map<std::string, std::string>& m,
                                 const std::string& key);

}  // namespace nictune::test
