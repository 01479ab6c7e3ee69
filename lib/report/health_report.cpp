#include "report/health_report.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "model/cpulist.hpp"
#include "model/value_json.hpp"
#include "report/json_util.hpp"
#include "util/strings.hpp"

namespace nictune::report {
namespace {

// What a Known holds, or an empty one (for JsonWriter::objects_or_null).
template <class T>
const T& known_or_empty(const Known<T>& k) {
    static const T empty{};
    return k.known() ? *k : empty;
}

using Json = nlohmann::json;

template <class T>
void unknown_entry(std::vector<std::pair<std::string, std::string>>& u, const char* part,
                   const Known<T>& k) {
    if (!k.known()) u.emplace_back(part, k.unknown);
}

void pcie_end(JsonWriter& w, const PcieEnd& e) {
    w.field("current_speed", e.current_gts);
    w.field("current_width", e.current_width);
    w.field("max_speed", e.max_gts);
    w.field("max_width", e.max_width);
}

void counters(JsonWriter& w, const std::vector<Counter>& cs) {
    w.begin_object();
    std::set<std::string_view> seen;
    // A name some driver repeats keeps its first value (JSON keys are unique).
    for (const auto& c : cs)
        if (seen.insert(c.name).second) w.field(c.name, c.value);
    w.end_object();
}

void rates(JsonWriter& w, const std::vector<Rate>& rs) {
    w.begin_object();
    for (const auto& r : rs)
        w.field(r.name, r.per_second);
    w.end_object();
}

}  // namespace

void write_findings(JsonWriter& w, const std::vector<Finding>& findings) {
    w.objects("findings", findings, [&](const Finding& f) {
        w.field("severity", severity_name(f.severity));
        w.field("key", f.key);
        w.key("expected");
        json_value(w, f.expected);
        w.key("actual");
        json_value(w, f.actual);
        w.field("message", f.message);
        string_or_null(w, "fix", f.fix);
    });
}

namespace {

void foreign_json(JsonWriter& w, const ForeignConfig& f) {
    w.begin_object();
    w.field("tool", f.tool);
    w.field("source", f.source);
    w.field("note", f.note);
    w.objects("settings", f.settings, [&](const auto& s) {
        w.field("key", s.key);
        w.field("value", s.value);
        w.field("source_key", s.source_key);
        w.field("file", s.file.empty() ? f.source : s.file);
        w.field("line", s.line ? std::optional(s.line) : std::nullopt);
    });
    w.end_object();
}

void cpus_json(JsonWriter& w, const std::vector<CpuPower>& cpus) {
    // Grouped by value: "performance": "0-7", not one object per CPU.
    std::map<std::string, std::vector<unsigned>> gov, epp, drv;
    std::map<std::pair<std::string, uint64_t>, std::vector<unsigned>> idle;
    std::vector<unsigned> all;
    for (const auto& p : cpus) {
        all.push_back(p.cpu);
        if (p.governor) gov[*p.governor].push_back(p.cpu);
        if (p.epp) epp[*p.epp].push_back(p.cpu);
        if (p.driver) drv[*p.driver].push_back(p.cpu);
        for (const auto& s : p.idle)
            if (!s.disabled) idle[{s.name, s.latency_us}].push_back(p.cpu);
    }
    auto group = [&](const char* k, const std::map<std::string, std::vector<unsigned>>& m) {
        w.key(k);
        w.begin_object();
        for (const auto& [v, list] : m)
            w.field(v, format_cpulist(list));
        w.end_object();
    };
    w.begin_object();
    w.field("cpulist", format_cpulist(all));
    group("governor", gov);
    group("energy_performance_preference", epp);
    group("scaling_driver", drv);
    w.objects("cstates", idle, [&](const auto& state) {
        w.field("name", state.first.first);
        w.field("latency_us", state.first.second);
        w.field("enabled_on", format_cpulist(state.second));
    });
    w.end_object();
}

}  // namespace

void write_interface_health(JsonWriter& w, const InterfaceHealthReport& r) {
    const InterfaceHealth& h = r.data;
    std::vector<std::pair<std::string, std::string>> unknown;
    w.begin_object();
    w.objects("limits", r.limits, [&](const auto& l) {
        w.field("key", l.key);
        w.field("text", l.text);
        w.field("impact", l.impact);
        w.field("cap_gbps", l.cap_gbps);
    });

    w.object_or_null("pcie", h.pcie.known(), [&] {
        const PcieLink& p = *h.pcie;
        w.field("function", p.function);
        pcie_end(w, p.link);
        w.field("gbps", pcie_gbps(p.link.current_gts, p.link.current_width));
        w.field("max_gbps", pcie_gbps(p.link.max_gts, p.link.max_width));
        w.field("upstream_port", p.upstream_port);
        w.object_or_null("upstream", p.upstream.has_value(), [&] { pcie_end(w, *p.upstream); });
        w.values("port_functions", p.port_functions);
        w.values("port_interfaces", p.port_interfaces);
    });
    unknown_entry(unknown, "pcie", h.pcie);

    w.object_or_null("link_modes", h.modes.known(), [&] {
        w.values("supported", h.modes->supported);
        w.values("advertised", h.modes->advertised);
        w.values("partner", h.modes->partner);
    });
    unknown_entry(unknown, "link_modes", h.modes);
    w.field("carrier_changes",
            h.carrier_changes.known() ? std::optional<uint64_t>(*h.carrier_changes) : std::nullopt);
    unknown_entry(unknown, "carrier_changes", h.carrier_changes);

    w.key("counters");
    w.begin_object();
    write_or_null(w, "driver", h.driver_stats.value, counters);
    write_or_null(w, "kernel", h.link_stats.value,
                  [](JsonWriter& jw, const LinkStats& s) { counters(jw, s.list()); });
    w.field("since", r.rates ? "totals since the driver loaded; rates over the sample"
                             : "totals since the driver loaded (or the counters were reset)");
    // The counters above that point at a cause (the driver facts' and the
    // kernel's standard ones), with the cause.
    w.objects("causes", r.causes, [&](const auto& c) {
        w.field("name", c.name);
        w.field("source", c.driver ? "driver" : "kernel");
        w.field("kind", c.kind);
        w.field("value", c.value);
    });
    w.end_object();
    unknown_entry(unknown, "counters.driver", h.driver_stats);
    unknown_entry(unknown, "counters.kernel", h.link_stats);

    w.objects_or_null("irqs", h.irqs.known(), known_or_empty(h.irqs), [&](const auto& q) {
        w.field("irq", q.irq);
        w.field("name", q.name);
        w.field("queue", q.queue);
        w.field("affinity", q.affinity);
        w.field("effective_affinity", q.effective_affinity);
        w.field("node", q.node);
        w.field("count", q.count);
    });
    unknown_entry(unknown, "irqs", h.irqs);

    w.object_or_null("numa", h.numa.known(), [&] {
        w.field("node", h.numa->node);
        w.field("local_cpulist", h.numa->local_cpulist);
        w.field("local_cpus", h.numa->local_cpus);
    });
    unknown_entry(unknown, "numa", h.numa);

    write_or_null(w, "cpus", h.cpus.value, cpus_json);
    unknown_entry(unknown, "cpus", h.cpus);

    w.object_or_null("driver", h.driver.known(), [&] {
        const DriverFiles& d = *h.driver;
        w.field("module", d.module);
        w.field("loaded_version", d.loaded_version);
        w.field("loaded_srcversion", d.loaded_srcversion);
        w.field("builtin", d.builtin);
        w.field("disk_path", d.disk_path);
        w.field("disk_version", d.disk_version);
        w.field("disk_srcversion", d.disk_srcversion);
        w.field("initramfs", d.initramfs);
    });
    unknown_entry(unknown, "driver", h.driver);

    w.key("foreign");
    w.begin_array();
    for (const auto& f : h.foreign)
        foreign_json(w, f);
    w.end_array();
    w.values("foreign_unknown", h.foreign_unknown);

    w.object_or_null("rates", r.rates.has_value(), [&] {
        const HealthRates& rt = *r.rates;
        w.field("seconds", rt.seconds);
        w.key("driver");
        rates(w, rt.driver);
        w.key("kernel");
        rates(w, rt.link);
        w.objects("irqs", rt.irqs, [&](const auto& q) {
            w.field("irq", q.irq);
            w.field("queue", q.queue);
            w.field("per_second", q.per_second);
            w.field("share", q.share);
        });
        w.objects("cpus", rt.cpus, [&](const auto& c) {
            w.field("cpu", c.cpu);
            w.field("interrupts", c.interrupts);
        });
        w.field("carrier_changes", rt.carrier_changes);
    });

    w.key("unknown");
    w.begin_object();
    for (const auto& [k, why] : unknown)
        w.field(k, why);
    w.end_object();
    w.end_object();
}

void write_system_health(JsonWriter& w, const SystemHealthReport& r) {
    const SystemHealth& s = r.data;
    w.begin_object();
    w.field("rtt_ms", r.rtt_ms);
    w.field("sample_seconds", r.sample_seconds);
    w.objects_or_null("softnet", s.softnet.known(), known_or_empty(s.softnet), [&](const auto& c) {
        w.field("cpu", c.cpu);
        w.field("processed", c.processed);
        w.field("dropped", c.dropped);
        w.field("time_squeeze", c.time_squeeze);
    });
    w.objects_or_null("softnet_rates", r.sample_seconds.has_value(), r.softnet_rates,
                      [&](const auto& c) {
                          w.field("cpu", c.cpu);
                          w.field("dropped", c.softnet_dropped);
                          w.field("time_squeeze", c.time_squeeze);
                      });
    w.key("irqbalance");
    w.begin_object();
    w.field("active", s.irqbalance_active.value);
    w.field("detail", s.irqbalance_detail);
    w.end_object();
    w.key("sysctl");
    w.begin_object();
    w.field("tcp_rmem_max", s.sysctls.tcp_rmem_max);
    w.field("tcp_wmem_max", s.sysctls.tcp_wmem_max);
    w.field("rmem_max", s.sysctls.rmem_max);
    w.field("wmem_max", s.sysctls.wmem_max);
    w.field("netdev_max_backlog", s.sysctls.netdev_max_backlog);
    w.field("netdev_budget", s.sysctls.netdev_budget);
    w.field("netdev_budget_usecs", s.sysctls.netdev_budget_usecs);
    w.end_object();
    w.key("tuned");
    w.begin_object();
    w.field("profile", s.tuned_profile);
    w.field("detail", s.tuned_detail);
    write_or_null(w, "config", s.tuned_net, foreign_json);
    w.end_object();
    write_findings(w, r.findings);
    w.key("unknown");
    w.begin_object();
    if (!s.softnet.known()) w.field("softnet", s.softnet.unknown);
    if (!s.irqbalance_active.known()) w.field("irqbalance", s.irqbalance_active.unknown);
    if (!s.interrupts_unknown.empty()) w.field("interrupts", s.interrupts_unknown);
    w.end_object();
    w.end_object();
}

namespace {

std::string num(const Json& v) {
    if (v.is_number_float()) return fmt::format("{:g}", v.get<double>());
    return v.is_null() ? "n/a" : v.dump();
}

}  // namespace

std::string verdict_text(const Json& iface) {
    if (!iface.contains("health") || !iface.at("health").is_object()) return {};
    const Json& lim = member(iface.at("health"), "limits");
    if (lim.empty()) return "no limit found in what could be read";
    std::vector<std::string> parts;
    for (const auto& l : lim)
        parts.push_back(text_of(l, "text"));
    return join(parts, "; ");
}

std::string interface_health_text(const Json& iface, const Label& label) {
    if (!iface.contains("health") || !iface.at("health").is_object()) return {};
    const Json& h = iface.at("health");
    const Json& unknown = member(h, "unknown");
    std::string out;
    auto line = [&](std::string_view name, const std::string& text) {
        out += fmt::format("  {} {}\n", label(name), text);
    };
    auto why = [&](const char* part) {
        auto it = unknown.find(part);
        return it == unknown.end() ? std::string("n/a") : "unknown: " + it->get<std::string>();
    };
    if (h.contains("pcie") && h.at("pcie").is_object()) {
        const Json& p = h.at("pcie");
        std::string t = fmt::format("{} x{} at {} GT/s (max x{} at {} GT/s), {} Gbit/s",
                                    text_of(p, "function"), num(member(p, "current_width")),
                                    num(member(p, "current_speed")), num(member(p, "max_width")),
                                    num(member(p, "max_speed")), num(member(p, "gbps")));
        if (p.contains("port_functions") && p.at("port_functions").size() > 1)
            t += fmt::format(", shared by {} ports", p.at("port_functions").size());
        line("pcie", t);
    } else {
        line("pcie", why("pcie"));
    }
    if (h.contains("link_modes") && h.at("link_modes").is_object()) {
        const Json& m = h.at("link_modes");
        auto list = [&](const char* k) {
            std::vector<std::string> v;
            for (const auto& x : m.value(k, Json::array()))
                v.push_back(x.get<std::string>());
            return v.empty() ? std::string("-") : join(v, " ");
        };
        if (member(m, "supported").empty() && member(m, "advertised").empty())
            line("modes", "not reported by the driver");
        else
            line("modes", "advertised " + list("advertised") + "; partner " + list("partner"));
    }
    if (!member(h, "carrier_changes").is_null())
        line("carrier", fmt::format("{} changes since boot", num(h.at("carrier_changes"))));
    if (h.contains("irqs") && h.at("irqs").is_array()) {
        std::vector<std::string> parts;
        for (const auto& q : h.at("irqs")) {
            const std::string eff = text_of(q, "effective_affinity");
            parts.push_back(
                fmt::format("{}{}->{}", text_of(q, "irq"),
                            member(q, "queue").is_null() ? "" : "(q" + text_of(q, "queue") + ")",
                            eff.empty() ? text_of(q, "affinity") : eff));
        }
        line("irqs", parts.empty() ? "-" : join(parts, " "));
    } else {
        line("irqs", why("irqs"));
    }
    if (h.contains("numa") && h.at("numa").is_object())
        line("numa", fmt::format("node {}, local CPUs {}", num(h.at("numa").value("node", Json())),
                                 text_of(h.at("numa"), "local_cpulist")));
    if (h.contains("cpus") && h.at("cpus").is_object()) {
        const Json& c = h.at("cpus");
        std::vector<std::string> parts;
        for (const auto& [g, list] : member(c, "governor").items())
            parts.push_back("governor " + g + " (" + list.get<std::string>() + ")");
        for (const auto& [g, list] : member(c, "energy_performance_preference").items())
            parts.push_back("epp " + g + " (" + list.get<std::string>() + ")");
        if (parts.empty()) parts.push_back("no cpufreq on CPUs " + text_of(c, "cpulist"));
        line("cpu", join(parts, ", "));
    }
    if (h.contains("driver") && h.at("driver").is_object()) {
        const Json& d = h.at("driver");
        std::string t = text_of(d, "module") + " loaded " +
                        (text_of(d, "loaded_version").empty() ? std::string("(no version)")
                                                              : text_of(d, "loaded_version"));
        if (d.value("builtin", false)) t += " (built in)";
        if (!text_of(d, "disk_path").empty())
            t += ", on disk " + text_of(d, "disk_path") +
                 (text_of(d, "disk_version").empty() ? "" : " " + text_of(d, "disk_version"));
        line("module", t);
    } else {
        line("module", why("driver"));
    }
    for (const auto& f : member(h, "foreign")) {
        std::vector<std::string> kv;
        for (const auto& s : member(f, "settings"))
            kv.push_back(text_of(s, "source_key") + "=" + text_of(s, "value"));
        line("other",
             fmt::format("{} {}: {}", text_of(f, "tool"), text_of(f, "source"),
                         kv.empty() ? std::string("nothing nictune sets") : join(kv, ", ")));
    }
    if (h.contains("rates") && h.at("rates").is_object()) {
        const Json& r = h.at("rates");
        std::vector<std::string> parts;
        for (const auto& [k, v] : member(r, "kernel").items())
            if (k == "rx_packets" || k == "tx_packets" || k.find("drop") != std::string::npos ||
                k.find("error") != std::string::npos)
                parts.push_back(fmt::format("{} {:.1f}/s", k, v.get<double>()));
        line("rates",
             fmt::format("over {:.1f} s: {}", r.value("seconds", 0.0),
                         parts.empty() ? std::string("nothing moved") : join(parts, ", ")));
    }
    return out;
}

std::string system_health_text(const Json& report, const Label& label) {
    if (!report.contains("health") || !report.at("health").is_object()) return {};
    const Json& h = report.at("health");
    std::string out;
    auto line = [&](std::string_view name, const std::string& text) {
        out += fmt::format("  {} {}\n", label(name), text);
    };
    if (h.contains("softnet") && h.at("softnet").is_array()) {
        uint64_t drops = 0, squeeze = 0;
        for (const auto& c : h.at("softnet")) {
            drops += c.value("dropped", uint64_t{0});
            squeeze += c.value("time_squeeze", uint64_t{0});
        }
        line("softnet", fmt::format("{} CPUs, {} backlog drops, {} time squeezes since boot",
                                    h.at("softnet").size(), drops, squeeze));
    }
    const Json& ib = member(h, "irqbalance");
    line("irqbalance", text_of(ib, "detail"));
    const Json& sc = member(h, "sysctl");
    line("buffers", fmt::format("tcp_rmem max {}, tcp_wmem max {}, netdev_max_backlog {}, "
                                "netdev_budget {} (RTT assumed {} ms)",
                                num(member(sc, "tcp_rmem_max")), num(member(sc, "tcp_wmem_max")),
                                num(member(sc, "netdev_max_backlog")),
                                num(member(sc, "netdev_budget")), num(member(h, "rtt_ms"))));
    return out;
}

}  // namespace nictune::report
