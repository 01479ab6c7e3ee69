#include "report/prometheus.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>
#include <type_traits>

#include "model/cpulist.hpp"
#include "model/health.hpp"
#include "report/json_util.hpp"
#include "util/strings.hpp"

namespace nictune::report {
namespace {

using Json = nlohmann::json;
using Labels = std::vector<std::pair<std::string_view, std::string>>;

// A sample value: integers as integers (a speed of 125000000, not
// 1.25e+08), other numbers in their shortest exact form.
std::string number(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
        return fmt::format("{:.0f}", v);
    return fmt::format("{}", v);
}

// The families in the order they were first named; samples grouped under
// their family, each label set once.
class Exposition {
  public:
    void add(std::string_view name, std::string_view help, const Labels& labels, double value) {
        add_sample(family(name, help, "gauge"), labels, value);
    }
    // A counter: only ever grows (until the driver or the machine restarts).
    void add_counter(std::string_view name, std::string_view help, const Labels& labels,
                     double value) {
        add_sample(family(name, help, "counter"), labels, value);
    }
    // Announces a family that may have no samples (kept in order).
    void declare(std::string_view name, std::string_view help, std::string_view type = "gauge") {
        family(name, help, type);
    }

    [[nodiscard]] std::string text() const {
        std::string out;
        for (const auto& f : families_) {
            if (f.samples.empty()) continue;
            out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, f.help, f.name, f.type);
            out += f.samples;
        }
        return out;
    }

  private:
    struct Family {
        std::string name;
        std::string help;
        std::string type;
        std::string samples;
        std::set<std::string> seen;
    };
    Family& family(std::string_view name, std::string_view help, std::string_view type) {
        for (auto& f : families_)
            if (f.name == name) return f;
        families_.push_back({std::string(name), std::string(help), std::string(type), {}, {}});
        return families_.back();
    }
    static void add_sample(Family& f, const Labels& labels, double value) {
        std::string series(f.name);
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
        f.samples += fmt::format("{} {}\n", series, number(value));
    }
    std::vector<Family> families_;
};

constexpr Severity kSeverities[] = {Severity::Info, Severity::Warn, Severity::Fail};

std::optional<Severity> severity_of(std::string_view name) {
    for (Severity s : kSeverities)
        if (name == severity_name(s)) return s;
    return std::nullopt;
}

constexpr double kBytesPerMbit = 125000;  // Mb/s -> bytes per second
constexpr double kBytesPerGbit = 1.25e8;  // Gbit/s -> bytes per second

// The fastest full-duplex mode of a list, in Mb/s.
std::optional<uint64_t> fastest(const std::vector<std::string>& modes) {
    std::optional<uint64_t> best;
    for (const auto& m : modes)
        if (auto s = mode_speed(m); s && s->full && (!best || s->mbps > *best)) best = s->mbps;
    return best;
}

void declare_health(Exposition& x) {
    x.declare("nictune_health_pcie_link_speed_transfers_per_second",
              "The PCIe link's current transfer rate (sysfs current_link_speed; 5e9 is 5 GT/s).");
    x.declare("nictune_health_pcie_link_max_speed_transfers_per_second",
              "The highest PCIe transfer rate the device supports (max_link_speed).");
    x.declare("nictune_health_pcie_link_width_lanes",
              "The PCIe link's current width (current_link_width).");
    x.declare("nictune_health_pcie_link_max_width_lanes",
              "The widest PCIe link the device supports (max_link_width).");
    x.declare("nictune_health_pcie_bandwidth_bytes_per_second",
              "What the PCIe link carries per direction at its current rate and width, after "
              "line coding.");
    x.declare("nictune_health_pcie_max_bandwidth_bytes_per_second",
              "What the PCIe link would carry per direction at the device's maximum rate and "
              "width.");
    x.declare("nictune_health_pcie_link_ports",
              "Network ports sharing this PCIe link (a dual-port card: 2).");
    x.declare("nictune_health_link_speed_bytes_per_second",
              "The negotiated link speed (no sample without a link).");
    x.declare("nictune_health_link_max_speed_bytes_per_second",
              "The fastest full-duplex link mode the port supports.");
    x.declare("nictune_health_link_partner_max_speed_bytes_per_second",
              "The fastest full-duplex link mode the link partner advertises.");
    x.declare("nictune_health_link_full_duplex", "1 when the link runs full duplex, 0 half.");
    x.declare("nictune_health_counter_total",
              "The interface's counters that point at a cause of lost throughput (cause: "
              "rx_no_buffer, rx_dropped, crc, pause_rx, pause_tx, tx_timeout, alloc_fail), as "
              "the driver (source=driver, ethtool -S) or the kernel (source=kernel) counts them.",
              "counter");
    x.declare("nictune_health_queue_irqs", "Interrupts of the interface's queues.");
    x.declare("nictune_health_queue_irq_cpus",
              "CPUs that handle the interface's queue interrupts (1 with several queues: one "
              "core does the work of all).");
    x.declare("nictune_health_queue_irqs_remote_node",
              "Queue interrupts handled on CPUs of another NUMA node than the device's.");
    x.declare("nictune_health_limits", "Limits the health checks found for the interface.");
    x.declare("nictune_health_limit_impact_ratio",
              "Each limit's estimated share of the line rate it costs (0..1; for ranking).");
    x.declare("nictune_health_limit_cap_bytes_per_second",
              "The throughput a limit caps the interface at, where it is known.");
    x.declare("nictune_health_softnet_dropped_total",
              "Packets the kernel dropped because a CPU's backlog was full (all CPUs; "
              "/proc/net/softnet_stat).",
              "counter");
    x.declare("nictune_health_softnet_times_squeezed_total",
              "Times a CPU's packet processing ran out of budget or time with work left (all "
              "CPUs).",
              "counter");
    x.declare("nictune_health_irqbalance_active", "1 when irqbalance runs (it moves IRQs).");
}

void add_interface_health(Exposition& x, const AuditMetrics::Interface& i) {
    const Labels who = {{"interface", i.name}};
    if (i.speed_mbps)
        x.add("nictune_health_link_speed_bytes_per_second", "", who,
              static_cast<double>(*i.speed_mbps) * kBytesPerMbit);
    if (i.full_duplex) x.add("nictune_health_link_full_duplex", "", who, *i.full_duplex ? 1 : 0);
    const InterfaceHealthReport& r = *i.health;
    const InterfaceHealth& h = r.data;
    if (h.pcie.known()) {
        const PcieEnd& e = h.pcie->link;
        auto put = [&](const char* name, auto v, double scale) {
            if (v) x.add(name, "", who, static_cast<double>(*v) * scale);
        };
        put("nictune_health_pcie_link_speed_transfers_per_second", e.current_gts, 1e9);
        put("nictune_health_pcie_link_max_speed_transfers_per_second", e.max_gts, 1e9);
        put("nictune_health_pcie_link_width_lanes", e.current_width, 1);
        put("nictune_health_pcie_link_max_width_lanes", e.max_width, 1);
        put("nictune_health_pcie_bandwidth_bytes_per_second",
            pcie_gbps(e.current_gts, e.current_width), kBytesPerGbit);
        put("nictune_health_pcie_max_bandwidth_bytes_per_second", pcie_gbps(e.max_gts, e.max_width),
            kBytesPerGbit);
        if (!h.pcie->port_functions.empty())
            x.add("nictune_health_pcie_link_ports", "", who,
                  static_cast<double>(h.pcie->port_functions.size()));
    }
    if (h.modes.known()) {
        if (auto s = fastest(h.modes->supported))
            x.add("nictune_health_link_max_speed_bytes_per_second", "", who,
                  static_cast<double>(*s) * kBytesPerMbit);
        if (auto s = fastest(h.modes->partner))
            x.add("nictune_health_link_partner_max_speed_bytes_per_second", "", who,
                  static_cast<double>(*s) * kBytesPerMbit);
    }
    for (const auto& c : r.causes)
        x.add_counter("nictune_health_counter_total", "",
                      {{"interface", i.name},
                       {"cause", c.kind},
                       {"source", c.driver ? "driver" : "kernel"},
                       {"counter", c.name}},
                      static_cast<double>(c.value));
    if (h.irqs.known()) {
        std::set<unsigned> cpus;
        unsigned queues = 0, remote = 0;
        // The device's node as a plain int (-1: unknown): g++ 12 warns of an
        // optional<int> here as maybe uninitialized.
        const int node = h.numa.known() && h.numa->node ? *h.numa->node : -1;
        for (const auto& q : *h.irqs) {
            if (!q.queue) continue;
            ++queues;
            if (auto list =
                    parse_cpulist(q.effective_affinity.empty() ? q.affinity : q.effective_affinity))
                cpus.insert(list->begin(), list->end());
            if (node >= 0 && q.node && *q.node != node) ++remote;
        }
        x.add("nictune_health_queue_irqs", "", who, queues);
        if (queues) {
            x.add("nictune_health_queue_irq_cpus", "", who, static_cast<double>(cpus.size()));
            if (node >= 0) x.add("nictune_health_queue_irqs_remote_node", "", who, remote);
        }
    }
    x.add("nictune_health_limits", "", who, static_cast<double>(r.limits.size()));
    for (const auto& l : r.limits) {
        const Labels which = {{"interface", i.name}, {"limit", l.key}};
        x.add("nictune_health_limit_impact_ratio", "", which, l.impact);
        if (l.cap_gbps)
            x.add("nictune_health_limit_cap_bytes_per_second", "", which,
                  *l.cap_gbps * kBytesPerGbit);
    }
}

void add_system_health(Exposition& x, const SystemHealthReport& r) {
    if (r.data.softnet.known()) {
        double dropped = 0, squeezed = 0;
        for (const auto& c : *r.data.softnet) {
            dropped += static_cast<double>(c.dropped);
            squeezed += static_cast<double>(c.time_squeeze);
        }
        x.add_counter("nictune_health_softnet_dropped_total", "", {}, dropped);
        x.add_counter("nictune_health_softnet_times_squeezed_total", "", {}, squeezed);
    }
    if (r.data.irqbalance_active.known())
        x.add("nictune_health_irqbalance_active", "", {}, *r.data.irqbalance_active ? 1 : 0);
}

void add_audit(Exposition& x, const AuditMetrics& a) {
    x.add("nictune_audit_timestamp_seconds", "When the audit read the interfaces (Unix time).", {},
          static_cast<double>(a.time));
    x.add("nictune_audit_interfaces", "Interfaces the audit covered.", {},
          static_cast<double>(a.interfaces.size()));
    x.declare("nictune_audit_profile_info", "The profile an interface was audited against.");
    x.declare("nictune_audit_findings", "Audit findings per interface and severity.");
    x.declare("nictune_audit_setting_findings",
              "Audit findings per interface, setting (or check) and severity.");
    declare_health(x);
    for (const auto& i : a.interfaces) {
        if (!i.profile.empty())
            x.add("nictune_audit_profile_info", "", {{"interface", i.name}, {"profile", i.profile}},
                  1);
        for (Severity s : kSeverities)
            x.add("nictune_audit_findings", "",
                  {{"interface", i.name}, {"severity", severity_name(s)}},
                  static_cast<double>(i.by_severity[static_cast<std::size_t>(s)]));
        for (const auto& [key, n] : i.by_setting)
            x.add("nictune_audit_setting_findings", "",
                  {{"interface", i.name},
                   {"setting", key.first},
                   {"severity", severity_name(key.second)}},
                  static_cast<double>(n));
        if (i.health) add_interface_health(x, i);
    }
    if (a.health) add_system_health(x, *a.health);
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
                x.add("nictune_last_apply_timestamp_seconds", "", who,
                      static_cast<double>(i.last_apply));
        }
        for (const auto& [key, drifted] : i.settings)
            x.add("nictune_setting_drifted", "",
                  {{"interface", i.name}, {"profile", i.profile}, {"setting", key}},
                  drifted ? 1 : 0);
    }
}

// ---- reading the health parts back from the audit JSON

template <class T>
std::optional<T> opt(const Json& j, const char* k) {
    const Json& v = member(j, k);
    if constexpr (std::is_same_v<T, double>) {
        if (v.is_number()) return v.get<double>();
    } else if constexpr (std::is_same_v<T, bool>) {
        if (v.is_boolean()) return v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (v.is_string()) return v.get<std::string>();
    } else if constexpr (std::is_unsigned_v<T>) {
        if (v.is_number_unsigned() && v.get<uint64_t>() <= std::numeric_limits<T>::max())
            return static_cast<T>(v.get<uint64_t>());
    } else {
        if (v.is_number_integer() && !v.is_number_unsigned() &&
            v.get<int64_t>() >= std::numeric_limits<T>::min() &&
            v.get<int64_t>() <= std::numeric_limits<T>::max())
            return static_cast<T>(v.get<int64_t>());
        if (v.is_number_unsigned() &&
            v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max()))
            return static_cast<T>(v.get<uint64_t>());
    }
    return std::nullopt;
}

std::vector<std::string> strings(const Json& a) {
    std::vector<std::string> out;
    if (a.is_array())
        for (const auto& s : a)
            if (s.is_string()) out.push_back(s.get<std::string>());
    return out;
}

template <class T>
Known<T> known_if(bool present, T v) {
    return present ? Known<T>::of(std::move(v)) : Known<T>::none("not in the report");
}

// A list the report holds as an array of objects, each read by read(item).
template <class Read>
auto known_list(const Json& a, Read read) {
    std::vector<decltype(read(a))> out;
    if (a.is_array())
        for (const auto& item : a)
            out.push_back(read(item));
    return known_if(a.is_array(), std::move(out));
}

std::shared_ptr<const InterfaceHealthReport> interface_health(const Json& h) {
    auto r = std::make_shared<InterfaceHealthReport>();
    InterfaceHealth& d = r->data;
    const Json& p = member(h, "pcie");
    PcieLink link;
    link.link.current_gts = opt<double>(p, "current_speed");
    link.link.max_gts = opt<double>(p, "max_speed");
    link.link.current_width = opt<unsigned>(p, "current_width");
    link.link.max_width = opt<unsigned>(p, "max_width");
    link.port_functions = strings(member(p, "port_functions"));
    d.pcie = known_if(p.is_object(), std::move(link));
    const Json& m = member(h, "link_modes");
    d.modes = known_if(m.is_object(),
                       LinkModes{strings(member(m, "supported")), strings(member(m, "advertised")),
                                 strings(member(m, "partner"))});
    d.irqs = known_list(member(h, "irqs"), [](const Json& q) {
        IrqInfo i;
        i.irq = opt<unsigned>(q, "irq").value_or(0);
        i.queue = opt<int>(q, "queue");
        i.affinity = opt<std::string>(q, "affinity").value_or("");
        i.effective_affinity = opt<std::string>(q, "effective_affinity").value_or("");
        i.node = opt<int>(q, "node");
        return i;
    });
    const Json& numa = member(h, "numa");
    NumaInfo n;
    n.node = opt<int>(numa, "node");
    d.numa = known_if(numa.is_object(), std::move(n));
    const Json& limits = member(h, "limits");
    if (limits.is_array())
        for (const auto& l : limits)
            if (auto key = opt<std::string>(l, "key"))
                r->limits.push_back(Limit{*key, opt<std::string>(l, "text").value_or(""),
                                          opt<double>(l, "impact").value_or(0),
                                          opt<double>(l, "cap_gbps")});
    const Json& causes = member(member(h, "counters"), "causes");
    if (causes.is_array())
        for (const auto& c : causes) {
            auto name = opt<std::string>(c, "name");
            auto kind = opt<std::string>(c, "kind");
            auto value = opt<uint64_t>(c, "value");
            if (name && kind && value)
                r->causes.push_back(
                    CauseCounter{*name, *kind, opt<std::string>(c, "source") == "driver", *value});
        }
    return r;
}

std::shared_ptr<const SystemHealthReport> system_health(const Json& h) {
    auto r = std::make_shared<SystemHealthReport>();
    r->data.softnet = known_list(member(h, "softnet"), [](const Json& c) {
        SoftnetCpu s;
        s.cpu = opt<unsigned>(c, "cpu").value_or(0);
        s.dropped = opt<uint64_t>(c, "dropped").value_or(0);
        s.time_squeeze = opt<uint64_t>(c, "time_squeeze").value_or(0);
        return s;
    });
    auto active = opt<bool>(member(h, "irqbalance"), "active");
    r->data.irqbalance_active =
        active ? Known<bool>::of(*active) : Known<bool>::none("not in the report");
    return r;
}

}  // namespace

std::string label_value(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size();) {
        const auto c = static_cast<unsigned char>(raw[i]);
        const std::size_t n = utf8_sequence(raw, i);
        if (n == 0) {
            // The text \xhh, its backslash escaped for the format.
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
    m.health = r.health;
    for (const auto& a : r.interfaces) {
        AuditMetrics::Interface i;
        i.name = a.state.id.name;
        if (a.profile && a.profile->profile) i.profile = a.profile->profile->name;
        for (const auto& f : a.findings) {
            ++i.by_severity[static_cast<std::size_t>(f.severity)];
            ++i.by_setting[{f.key, f.severity}];
        }
        i.health = a.health;
        i.speed_mbps = a.state.values.get(Key::LinkSpeed);
        if (auto d = a.state.values.get(Key::LinkDuplex)) i.full_duplex = *d == 1;
        m.interfaces.push_back(std::move(i));
    }
    return m;
}

AuditMetrics audit_metrics(const Json& audit, int64_t time) {
    AuditMetrics m;
    m.time = time;
    if (!audit.is_object() || !audit.contains("interfaces") || !audit.at("interfaces").is_array())
        return m;
    if (member(audit, "health").is_object()) m.health = system_health(audit.at("health"));
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
        if (member(a, "health").is_object()) i.health = interface_health(a.at("health"));
        i.speed_mbps = opt<uint64_t>(member(a, "link"), "speed");
        if (auto d = opt<std::string>(member(a, "link"), "duplex")) i.full_duplex = *d == "full";
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
