#include "support/oracles.hpp"

#include <sstream>

#include "util/strings.hpp"

namespace nictune::test {

std::map<std::string, std::string> parse_ethtool(const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    std::string line;
    std::string prefix;
    while (std::getline(in, line)) {
        if (line.starts_with("Pre-set maximums")) {
            prefix = "max.";
            continue;
        }
        if (line.starts_with("Current hardware settings")) {
            prefix = "cur.";
            continue;
        }
        auto t = std::string(trim(line));
        if (t.starts_with("Adaptive RX:") || t.starts_with("CQE mode RX:")) {
            const std::string base = t.starts_with("Adaptive") ? "adaptive-" : "cqe-mode-";
            auto rx = t.substr(t.find(':') + 1);
            auto tx_pos = rx.find("TX:");
            out[base + "rx"] = std::string(trim(rx.substr(0, tx_pos)));
            if (tx_pos != std::string::npos)
                out[base + "tx"] = std::string(trim(rx.substr(tx_pos + 3)));
            continue;
        }
        auto colon = t.find(':');
        if (colon == std::string::npos || colon == 0) continue;
        std::string key = std::string(trim(t.substr(0, colon)));
        std::string val = std::string(trim(t.substr(colon + 1)));
        for (const char* frame : {"rx-frame-low", "tx-frame-low", "rx-frame-high", "tx-frame-high"})
            if (key == frame) key.insert(8, "s");
        out[prefix + key] = val;
    }
    return out;
}

nlohmann::json parse_json(const std::string& text) {
    return nlohmann::json::parse(text);
}

std::optional<uint64_t> ethtool_number(const std::map<std::string, std::string>& m,
                                       const std::string& key) {
    auto it = m.find(key);
    if (it == m.end() || it->second == "n/a" || it->second.empty()) return std::nullopt;
    return std::stoull(it->second);
}

std::optional<bool> ethtool_bool(const std::map<std::string, std::string>& m,
                                 const std::string& key) {
    auto it = m.find(key);
    if (it == m.end() || it->second == "n/a") return std::nullopt;
    if (it->second.starts_with("on")) return true;
    if (it->second.starts_with("off")) return false;
    return std::nullopt;
}

}  // namespace nictune::test
