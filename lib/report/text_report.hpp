// The audit report for people, rendered from its JSON form (the same JSON
// the daemon sends), grouped by interface and section, findings last with
// their fix. Colour only when asked (the CLI asks on a TTY).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace nictune::report {

struct TextOptions {
    bool color = false;
    bool verbose = false;  // list fixed features too
};

std::string audit_text(const nlohmann::json& report, const TextOptions& opts);

// "9014", "true", "UP"; "n/a" for null or missing.
std::string value_text(const nlohmann::json& v);

}  // namespace nictune::report
