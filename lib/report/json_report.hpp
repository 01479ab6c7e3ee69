// The audit report as JSON (nictunectl audit --json, and the D-Bus Audit
// reply). Section and key names are the schema's: a profile key and its JSON
// key are the same string. Unsupported settings are absent, never 0.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/audit.hpp"

namespace nictune::report {

nlohmann::json scalar_json(const Scalar& s);

// The report as text, written in one pass (the fast path: --json output and
// the D-Bus reply).
std::string audit_json_text(const AuditReport& r);
// The same text handed to `sink` in parts of about `chunk` bytes (whole
// interfaces), so that an audit of hundreds of interfaces goes out through
// one small buffer instead of being held whole (2 MB at 512).
void write_audit_json(const AuditReport& r, const std::function<void(std::string_view)>& sink,
                      std::size_t chunk);
// The same document as a tree (for the text view).
nlohmann::json audit_json(const AuditReport& r);

}  // namespace nictune::report
