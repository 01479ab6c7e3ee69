#include "report/prometheus.hpp"

#include <fmt/format.h>

#include <set>

namespace nictune::report {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], 0 if there is none.
// (The same rule as the JSON writer's, which replaces such bytes instead.)
std::size_t utf8_length(std::string_view s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = b(0);
    std::size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) return 1;
    if ((c & 0xe0U) == 0xc0U) {
        n = 2;
        cp = c & 0x1fU;
    } else if ((c & 0xf0U) == 0xe0U) {
        n = 3;
        cp = c & 0x0fU;
    } else if ((c & 0xf8U) == 0xf0U) {
        n = 4;
        cp = c & 0x07U;
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(k) & 0xc0U) != 0x80U) return 0;
        cp = (cp << 6) | (b(k) & 0x3fU);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return n;
}

using Labels = std::vector<std::pair<std::string_view, std::string>>;

// The families in the order they were first named; samples grouped under
// their family, each label set once.
class Exposition {
  public:
    void add(std::string_view name, std::string_view help, const Labels& labels, int64_t value) {
        Family& f = family(name, help);
        std::string series(name);
        if (!labels.empty()) {
            series += '{';
            for (std::size_t i = 0; i < labels.size(); ++i)
                series += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first,
                                      label_value(labels[i].second));
            series += '}';
        }
        // Two names the JSON path made equal (bytes it replaced) must not
        // become a duplicate series: node_exporter would drop the file.
        if (!f.seen.insert(series).second) return;
        f.samples += fmt::format("{} {}\n", series, value);
    }
    // Announces a family that may have no samples (kept in order).
    void declare(std::string_view name, std::string_view help) { family(name, help); }

    [[nodiscard]] std::string text() const {
        std::string out;
        for (const auto& f : families_) {
            if (f.samples.empty()) continue;
            out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
            out += f.samples;
        }
        return out;
    }

  private:
    struct Family {
        std::string name;
        std::string help;
        std::string samples;
        std::set<std::string> seen;
    };
    Family& family(std::string_view name, std::string_view help) {
        for (auto& f : families_)
            if (f.name == name) return f;
        families_.push_back({std::string(name), std::string(help), {}, {}});
        return families_.back();
    }
    std::vector<Family> families_;
};

constexpr Severity kSeverities[] = {Severity::Info, Severity::Warn, Severity::Fail};

std::optional<Severity> severity_of(std::string_view name) {
    for (Severity s : kSeverities)
        if (name == severity_name(s)) return s;
    return std::nullopt;
}

void add_audit(Exposition& x, const AuditMetrics& a) {
    x.add("nictune_audit_timestamp_seconds", "When the audit read the interfaces (Unix time).", {},
          a.time);
    x.add("nictune_audit_interfaces", "Interfaces the audit covered.", {},
          static_cast<int64_t>(a.interfaces.size()));
    x.declare("nictune_audit_profile_info", "The profile an interface was audited against.");
    x.declare("nictune_audit_findings", "Audit findings per interface and severity.");
    x.declare("nictune_audit_setting_findings",
              "Audit findings per interface, setting (or check) and severity.");
    for (const auto& i : a.interfaces) {
        if (!i.profile.empty())
            x.add("nictune_audit_profile_info", "", {{"interface", i.name}, {"profile", i.profile}},
                  1);
        for (Severity s : kSeverities)
            x.add("nictune_audit_findings", "",
                  {{"interface", i.name}, {"severity", severity_name(s)}},
                  static_cast<int64_t>(i.by_severity[static_cast<std::size_t>(s)]));
        for (const auto& [key, n] : i.by_setting)
            x.add("nictune_audit_setting_findings", "",
                  {{"interface", i.name},
                   {"setting", key.first},
                   {"severity", severity_name(key.second)}},
                  static_cast<int64_t>(n));
    }
}

void add_daemon(Exposition& x, const DaemonMetrics& d) {
    x.add("nictune_config_loaded",
          "1 when nictune.toml loaded at nictuned's start or last reload; 0 when it was refused "
          "(the previous configuration stays in force).",
          {}, d.config_ok ? 1 : 0);
    x.declare("nictune_bound_profile_info", "The profile nictune.toml binds to an interface.");
    x.declare("nictune_enforcement_suspended",
              "1 when drift enforcement of a bound interface is paused (its settings changed too "
              "often); a reload resumes it.");
    x.declare("nictune_last_apply_result",
              "How the last apply on an interface ended (result: applied, rolled_back, partial, "
              "refused, error).");
    x.declare("nictune_last_apply_success", "1 when the last apply on an interface applied.");
    x.declare("nictune_last_apply_timestamp_seconds",
              "When the last apply on an interface ended (Unix time).");
    x.declare("nictune_setting_drifted",
              "1 when a setting nictune applied has since changed (drift), per setting.");
    for (const auto& i : d.interfaces) {
        const Labels who = {{"interface", i.name}, {"profile", i.profile}};
        if (i.bound) {
            x.add("nictune_bound_profile_info", "",
                  {{"interface", i.name},
                   {"profile", i.profile},
                   {"enforce", i.enforce ? "true" : "false"}},
                  1);
            x.add("nictune_enforcement_suspended", "", who, i.enforcement_suspended ? 1 : 0);
        }
        if (!i.last_result.empty()) {
            x.add("nictune_last_apply_result", "",
                  {{"interface", i.name}, {"profile", i.profile}, {"result", i.last_result}}, 1);
            x.add("nictune_last_apply_success", "", who, i.last_result == "applied" ? 1 : 0);
            if (i.last_apply > 0)
                x.add("nictune_last_apply_timestamp_seconds", "", who, i.last_apply);
        }
        for (const auto& [key, drifted] : i.settings)
            x.add("nictune_setting_drifted", "",
                  {{"interface", i.name}, {"profile", i.profile}, {"setting", key}},
                  drifted ? 1 : 0);
    }
}

}  // namespace

std::string label_value(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size();) {
        const auto c = static_cast<unsigned char>(raw[i]);
        const std::size_t n = utf8_length(raw, i);
        if (n == 0) {
            // The text \xHH, its backslash escaped for the format.
            out += fmt::format("\\\\x{:02x}", c);
            ++i;
            continue;
        }
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out.append(raw.substr(i, n));
        i += n;
    }
    return out;
}

AuditMetrics audit_metrics(const AuditReport& r, int64_t time) {
    AuditMetrics m;
    m.time = time;
    for (const auto& a : r.interfaces) {
        AuditMetrics::Interface i;
        i.name = a.state.id.name;
        if (a.profile && a.profile->profile) i.profile = a.profile->profile->name;
        for (const auto& f : a.findings) {
            ++i.by_severity[static_cast<std::size_t>(f.severity)];
            ++i.by_setting[{f.key, f.severity}];
        }
        m.interfaces.push_back(std::move(i));
    }
    return m;
}

AuditMetrics audit_metrics(const nlohmann::json& audit, int64_t time) {
    AuditMetrics m;
    m.time = time;
    if (!audit.is_object() || !audit.contains("interfaces") || !audit.at("interfaces").is_array())
        return m;
    for (const auto& a : audit.at("interfaces")) {
        if (!a.is_object() || !a.contains("name") || !a.at("name").is_string()) continue;
        AuditMetrics::Interface i;
        i.name = a.at("name").get<std::string>();
        if (a.contains("profile") && a.at("profile").is_object())
            i.profile = a.at("profile").value("name", "");
        if (a.contains("findings") && a.at("findings").is_array())
            for (const auto& f : a.at("findings")) {
                if (!f.is_object()) continue;
                auto s = severity_of(f.value("severity", ""));
                if (!s) continue;
                ++i.by_severity[static_cast<std::size_t>(*s)];
                ++i.by_setting[{f.value("key", ""), *s}];
            }
        m.interfaces.push_back(std::move(i));
    }
    return m;
}

std::string prometheus_text(const AuditMetrics* audit, const DaemonMetrics* daemon) {
    Exposition x;
    x.add("nictune_build_info", "nictune's version.", {{"version", NICTUNE_VERSION}}, 1);
    if (daemon) add_daemon(x, *daemon);
    if (audit) add_audit(x, *audit);
    return x.text();
}

}  // namespace nictune::report
