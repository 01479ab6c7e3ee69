// The audit report for people: grouped by interface and section, findings
// last with their fix. Colour only when asked (the CLI asks on a TTY).
#pragma once

#include <string>

#include "engine/audit.hpp"

namespace nictune::report {

struct TextOptions {
    bool color = false;
    bool verbose = false;  // list every feature, not only the changeable ones
};

std::string audit_text(const AuditReport& r, const TextOptions& opts);

}  // namespace nictune::report
