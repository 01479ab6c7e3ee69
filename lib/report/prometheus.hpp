// nictune's metrics in the Prometheus text exposition format (version
// 0.0.4): what node_exporter's textfile collector reads from the file
// nictuned keeps (lib/service/metrics), and what `nictunectl audit
// --prometheus` prints for cron jobs. Both print the audit's metrics the
// same way; nictuned adds its own (bindings, last apply, drift).
//
// Every metric is named nictune_*, with its unit in the name (_seconds,
// _bytes_per_second, _ratio, _lanes) and the labels interface, profile,
// setting, severity, result (health figures: cause, source, counter,
// limit). States are gauges; the counters the health checks read are
// counters (_total). Each family is written once with its HELP and TYPE
// lines and all its samples together, and a label set appears at most once
// per family: a file that breaks either rule makes node_exporter drop all
// of it. A figure that could not be read has no sample (never a 0).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/audit.hpp"
#include "engine/health.hpp"

namespace nictune::report {

// What the metrics take from an audit: built from the report itself
// (nictuned, nictunectl in this process) or from its JSON (a reply from
// nictuned), so both print the same. The health figures are computed from
// the health reports when the exposition is written; from JSON, the parts
// they need are read back into those reports, so nictuned never builds
// and parses the audit's JSON to write its file.
struct AuditMetrics {
    struct Interface {
        std::string name;
        std::string profile;                    // the profile audited against, "" if none
        std::array<uint64_t, 3> by_severity{};  // findings: info, warn, fail
        std::map<std::pair<std::string, Severity>, uint64_t> by_setting;  // (key, severity)
        // The health checks' report; null when they did not run.
        std::shared_ptr<const InterfaceHealthReport> health;
        std::optional<uint64_t> speed_mbps;  // negotiated (link.speed)
        std::optional<bool> full_duplex;     // link.duplex
    };
    std::vector<Interface> interfaces;
    std::shared_ptr<const SystemHealthReport> health;  // the machine's; null: not checked
    int64_t time = 0;                                  // when it was read, Unix seconds
};
AuditMetrics audit_metrics(const AuditReport& r, int64_t time);
// From the audit JSON (report::audit_json); a malformed document gives the
// interfaces that are well formed, and health parts that are not are left out.
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
// names come in nictune's text form (util/strings.hpp escape_name: bytes
// that are not printable UTF-8, and '\' itself, as \xhh), so distinct names
// give distinct labels; should a byte that is not UTF-8 come in any other
// string, it is written \xhh the same way, so the file stays readable.
std::string label_value(std::string_view raw);

}  // namespace nictune::report
