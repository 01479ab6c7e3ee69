// The audit report as JSON (nictunectl audit --json, and the D-Bus Audit
// reply). Section and key names are the schema's: a profile key and its JSON
// key are the same string. Unsupported settings are absent, never 0.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/audit.hpp"

namespace nictune::report {

nlohmann::json scalar_json(const Scalar& s);
nlohmann::json finding_json(const Finding& f);
// One interface: identity, sections, features, profile and findings.
nlohmann::json interface_json(const InterfaceAudit& a);
nlohmann::json system_json(const SystemState& s);
// {"interfaces": [...], "tuned": {...}, "sysctl": {...}, "summary": {...}}
nlohmann::json audit_json(const AuditReport& r);

}  // namespace nictune::report
