// nictune's metrics in the Prometheus text exposition format (version
// 0.0.4): what node_exporter's textfile collector reads from the file
// nictuned keeps (lib/service/metrics), and what `nictunectl audit
// --prometheus` prints for cron jobs. Both print the audit's metrics the
// same way; nictuned adds its own (bindings, last apply, drift).
//
// Every metric is a gauge named nictune_*, with the unit in the name
// (_seconds) and the labels interface, profile, setting, severity, result.
// Each family is written once with its HELP and TYPE lines and all its
// samples together, and a label set appears at most once per family: a file
// that breaks either rule makes node_exporter drop all of it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/audit.hpp"

namespace nictune::report {

// What the metrics take from an audit: built from the report itself
// (nictuned, nictunectl in this process) or from its JSON (a reply from
// nictuned), so both print the same.
struct AuditMetrics {
    struct Interface {
        std::string name;
        std::string profile;                    // the profile audited against, "" if none
        std::array<uint64_t, 3> by_severity{};  // findings: info, warn, fail
        std::map<std::pair<std::string, Severity>, uint64_t> by_setting;  // (key, severity)
    };
    std::vector<Interface> interfaces;
    int64_t time = 0;  // when it was read, Unix seconds
};
AuditMetrics audit_metrics(const AuditReport& r, int64_t time);
// From the audit JSON (report::audit_json); a malformed document gives the
// interfaces that are well formed.
AuditMetrics audit_metrics(const nlohmann::json& audit, int64_t time);

// What nictuned knows beyond an audit.
struct DaemonMetrics {
    struct Interface {
        std::string name;
        std::string profile;  // bound, or last applied by request
        bool bound = false;
        bool enforce = false;
        bool enforcement_suspended = false;
        std::string last_result;  // tx_result_name, "error"; "" before any apply
        int64_t last_apply = 0;   // Unix seconds; 0 before any apply
        std::vector<std::pair<std::string, bool>> settings;  // baseline keys, drifted
    };
    std::vector<Interface> interfaces;
    bool config_ok = true;  // the last (re)load of nictune.toml worked
};

// Both parts are optional (nullptr: left out).
std::string prometheus_text(const AuditMetrics* audit, const DaemonMetrics* daemon);

// A label value as the exposition format wants it, without the quotes:
// '\', '"' and newline escaped, and valid UTF-8, which the format requires
// (node_exporter 1.5 drops a whole file with one invalid label). Interface
// names come in nictune's text form (lib/util's escape_name once the shared
// scheme is merged: bytes that are not printable UTF-8, and '\' itself, as
// \xhh), so distinct names give distinct labels; a byte that is not UTF-8
// in a raw name is written \xhh the same way here.
std::string label_value(std::string_view raw);

}  // namespace nictune::report
