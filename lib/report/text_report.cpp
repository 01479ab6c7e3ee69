#include "report/text_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "model/schema.hpp"
#include "report/health_report.hpp"
#include "report/json_util.hpp"
#include "report/style.hpp"
#include "util/strings.hpp"

namespace nictune::report {
namespace {

using Json = nlohmann::json;

std::string field(const Json& section, std::string_view key) {
    if (!section.is_object()) return "n/a";
    auto it = section.find(std::string(key));
    return it == section.end() ? "n/a" : value_text(*it);
}

bool has(const Json& section, std::string_view key) {
    return section.is_object() && section.contains(std::string(key)) &&
           !section.at(std::string(key)).is_null();
}

void line(std::string& out, const Style& s, std::string_view name,
          const std::vector<std::string>& parts) {
    std::vector<std::string> kept;
    for (const auto& p : parts)
        if (!p.empty()) kept.push_back(p);
    if (!kept.empty()) out += fmt::format("  {} {}\n", s.label(name), join(kept, "  "));
}

// "rx 512/4096": current and maximum side by side.
std::string with_max(const Json& sec, std::string_view cur, std::string_view max) {
    if (!has(sec, cur) && !has(sec, max)) return {};
    return fmt::format("{} {}/{}", cur, field(sec, cur), field(sec, max));
}

void section_line(std::string& out, const Style& s, const Json& iface, Section sec) {
    const std::string name(section_info(sec).name);
    const Json& j = iface.contains(name) ? iface.at(name) : Json();
    if (!j.is_object() || j.empty()) {
        out += fmt::format("  {} {}\n", s.label(name), s.dim("not supported by the driver"));
        return;
    }
    std::vector<std::string> parts;
    for (const auto& k : device_keys())
        if (k.section == sec && has(j, k.name))
            parts.push_back(fmt::format("{} {}", k.name, field(j, k.name)));
    line(out, s, name, parts);
}

// A section whose keys have device maxima (rings, channels), from the
// schema: "rx 512/4096" for a key with its maximum, a key whose maximum is
// 0 left out (the device has no such queue), then the keys without a
// maximum ("rx_buf_len 2048"). The read-only maxima are not listed alone.
void limits_line(std::string& out, const Style& s, const Json& iface, Section sec) {
    const std::string name(section_info(sec).name);
    const Json& j = iface.contains(name) ? iface.at(name) : Json();
    if (!j.is_object() || j.empty()) {
        section_line(out, s, iface, sec);
        return;
    }
    std::vector<std::string> limited;
    std::vector<std::string> plain;
    std::vector<std::string_view> limits;
    for (const auto& k : device_keys())
        if (k.section == sec && k.limit != k.key) limits.push_back(key_info(k.limit).name);
    for (const auto& k : device_keys()) {
        if (k.section != sec) continue;
        if (k.limit != k.key) {
            const std::string_view lim = key_info(k.limit).name;
            if (!has(j, lim) || !j.at(std::string(lim)).is_number() ||
                j.at(std::string(lim)).get<uint64_t>() == 0)
                continue;
            limited.push_back(with_max(j, k.name, lim));
        } else if (std::ranges::find(limits, k.name) == limits.end() && has(j, k.name)) {
            plain.push_back(fmt::format("{} {}", k.name, field(j, k.name)));
        }
    }
    if (limited.empty() && plain.empty()) {
        section_line(out, s, iface, sec);
        return;
    }
    limited.insert(limited.end(), plain.begin(), plain.end());
    line(out, s, name, limited);
}

// [private_flags], [rps], [xps]. Replies of an older nictuned lack the keys:
// no line then.
void queue_lines(std::string& out, const Style& s, const Json& i) {
    if (i.contains("private_flags")) {
        const Json& f = i.at("private_flags");
        std::vector<std::string> parts;
        if (f.is_object())
            for (const auto& [name, v] : f.items())
                parts.push_back(name + (v.is_boolean() && v.get<bool>() ? " on" : " off"));
        if (parts.empty())
            out += fmt::format("  {} {}\n", s.label("private_flags"),
                               s.dim(f.is_object() ? "none" : "not supported by the driver"));
        else
            line(out, s, "private_flags", parts);
    }
    for (const char* sec : {"rps", "xps"}) {
        if (!i.contains(sec)) continue;
        const Json& j = i.at(sec);
        if (!j.is_object() || j.empty()) {
            out += fmt::format("  {} {}\n", s.label(sec), s.dim("no queues in sysfs"));
            continue;
        }
        // One line when every queue holds the same, else one part per queue.
        auto text = [](const Json& q) {
            std::vector<std::string> parts;
            for (const auto& [k, v] : q.items())
                parts.push_back(k + " " +
                                (v.is_string() ? "\"" + v.get<std::string>() + "\""
                                 : v.is_null() ? std::string("-")
                                               : v.dump()));
            return join(parts, " ");
        };
        const std::string first = text(j.begin().value());
        bool same = true;
        for (const auto& [k, q] : j.items())
            same = same && text(q) == first;
        if (same) {
            line(out, s, sec, {fmt::format("{} queues: {}", j.size(), first)});
        } else {
            std::vector<std::string> parts;
            for (const auto& [k, q] : j.items())
                parts.push_back(k + ": " + text(q));
            line(out, s, sec, parts);
        }
    }
}

// [rss]: one line; none for a reply without the key (an older
// nictuned).
void rss_line(std::string& out, const Style& s, const Json& i) {
    if (!i.contains("rss")) return;
    const Json& r = i.at("rss");
    if (!r.is_object()) {
        out += fmt::format("  {} {}\n", s.label("rss"), s.dim("not supported by the driver"));
        return;
    }
    std::vector<std::string> parts;
    if (r.contains("rx_rings") && r.at("rx_rings").is_number())
        parts.push_back(fmt::format("{} RX rings", r.at("rx_rings").get<uint64_t>()));
    if (r.contains("indirection") && r.at("indirection").is_array()) {
        const auto n = r.at("indirection").size();
        if (r.contains("queues") && r.at("queues").is_number())
            parts.push_back(fmt::format("table of {} spread over {} queues", n,
                                        r.at("queues").get<uint64_t>()));
        else
            parts.push_back(fmt::format("table of {} (uneven)", n));
    }
    if (r.contains("hfunc") && r.at("hfunc").is_string())
        parts.push_back(r.at("hfunc").get<std::string>());
    if (r.contains("hash") && r.at("hash").is_object() && !r.at("hash").empty()) {
        const Json& h = r.at("hash");
        auto text = [](const Json& f) {
            return f.is_string() && !f.get<std::string>().empty() ? f.get<std::string>()
                                                                  : std::string("-");
        };
        const std::string first = text(h.begin().value());
        bool same = true;
        for (const auto& [flow, f] : h.items())
            same = same && text(f) == first;
        if (same)
            parts.push_back("hash " + first + " for every flow type");
        else
            for (const auto& [flow, f] : h.items())
                parts.push_back(flow + " " + text(f));
    }
    line(out, s, "rss", parts);
}

// [irq]: one part per queue IRQ. Replies of an older nictuned lack the key.
void irq_line(std::string& out, const Style& s, const Json& i) {
    if (!i.contains("irq")) return;
    const Json& j = i.at("irq");
    if (!j.is_object() || j.empty()) {
        out += fmt::format("  {} {}\n", s.label("irq"), s.dim("no queue IRQs"));
        return;
    }
    auto text = [](const Json& v) {
        return v.is_string() ? v.get<std::string>() : std::string("-");
    };
    std::vector<std::string> parts;
    for (const auto& [n, q] : j.items())
        parts.push_back(n + " " + (q.contains("name") ? text(q.at("name")) : "") + " cpus " +
                        (q.contains("affinity") ? text(q.at("affinity")) : "-") + " effective " +
                        (q.contains("effective") ? text(q.at("effective")) : "-"));
    line(out, s, "irq", parts);
}

void interface_text(std::string& out, const Json& i, const Style& s, const TextOptions& opts) {
    std::string title = s.bold(text_of(i, "name"));
    if (!text_of(i, "driver").empty())
        title += "  " + text_of(i, "driver") +
                 (text_of(i, "driver_version").empty() ? "" : " " + text_of(i, "driver_version"));
    if (!text_of(i, "module_version").empty() &&
        text_of(i, "module_version") != text_of(i, "driver_version"))
        title += " (module " + text_of(i, "module_version") + ")";
    if (!text_of(i, "firmware_version").empty()) title += "  fw " + text_of(i, "firmware_version");
    if (!text_of(i, "kind").empty()) title += "  [" + text_of(i, "kind") + "]";
    out += title + "\n";
    if (i.contains("altnames") && i.at("altnames").is_array() && !i.at("altnames").empty()) {
        std::vector<std::string> alts;
        for (const auto& a : i.at("altnames"))
            if (a.is_string()) alts.push_back(a.get<std::string>());
        line(out, s, "altnames", {join(alts, " ")});
    }
    if (const std::string v = verdict_text(i); !v.empty())
        out += fmt::format("  {} {}\n", s.label("verdict"), v);
    if (!text_of(i, "vendor").empty() || !text_of(i, "model").empty())
        out += fmt::format("  {} {} {}\n", s.label("model"), text_of(i, "vendor"),
                           text_of(i, "model"));
    std::vector<std::string> ident;
    if (!text_of(i, "bus_info").empty()) ident.push_back("bus " + text_of(i, "bus_info"));
    if (!text_of(i, "pci_id").empty())
        ident.push_back(
            "pci " + text_of(i, "pci_id") +
            (text_of(i, "pci_subsystem").empty() ? "" : " sub " + text_of(i, "pci_subsystem")));
    if (!text_of(i, "numa_node").empty()) ident.push_back("numa " + text_of(i, "numa_node"));
    if (i.value("sriov_vf", false)) ident.push_back("SR-IOV VF");
    if (!text_of(i, "mac").empty()) ident.push_back("mac " + text_of(i, "mac"));
    ident.push_back(i.value("physical", false) ? "physical" : "virtual");
    line(out, s, "identity", ident);

    const Json& link = i.contains("link") ? i.at("link") : Json();
    std::vector<std::string> l;
    l.push_back(fmt::format("mtu {} ({}..{})", field(link, "mtu"), field(link, "min_mtu"),
                            field(link, "max_mtu")));
    l.push_back(field(link, "operstate"));
    if (has(link, "carrier"))
        l.push_back(link.at("carrier").get<bool>() ? "carrier" : "no carrier");
    if (has(link, "speed")) l.push_back(field(link, "speed") + "Mb/s");
    if (has(link, "duplex")) l.push_back(field(link, "duplex"));
    if (has(link, "autoneg"))
        l.push_back(link.at("autoneg").get<bool>() ? "autoneg on" : "autoneg off");
    if (has(link, "txqueuelen")) l.push_back("txqueuelen " + field(link, "txqueuelen"));
    line(out, s, "link", l);

    section_line(out, s, i, Section::Coalesce);
    limits_line(out, s, i, Section::Rings);
    limits_line(out, s, i, Section::Channels);
    const Json& f = i.contains("features") ? i.at("features") : Json();
    if (f.is_object()) {
        std::vector<std::string> fixed_names;
        if (i.contains("features_fixed") && i.at("features_fixed").is_array())
            for (const auto& n : i.at("features_fixed"))
                fixed_names.push_back(n.get<std::string>());
        std::vector<std::string> on, off;
        std::size_t fixed = 0;
        for (const auto& [name, v] : f.items()) {
            if (!opts.verbose &&
                std::find(fixed_names.begin(), fixed_names.end(), name) != fixed_names.end()) {
                ++fixed;
                continue;
            }
            (v.get<bool>() ? on : off).push_back(name);
        }
        out += fmt::format("  {} on: {}\n", s.label("features"), on.empty() ? "-" : join(on, " "));
        out += fmt::format("  {:<10} off: {}\n", "", off.empty() ? "-" : join(off, " "));
        if (fixed)
            out +=
                fmt::format("  {:<10} {}\n", "",
                            s.dim(fmt::format("{} fixed features not shown (--verbose)", fixed)));
    } else {
        out += fmt::format("  {} {}\n", s.label("features"), s.dim("not readable"));
    }
    section_line(out, s, i, Section::Pause);
    queue_lines(out, s, i);
    rss_line(out, s, i);
    irq_line(out, s, i);

    out += interface_health_text(i, [&](std::string_view n) { return s.label(n); });

    const Json& prof = i.contains("profile") ? i.at("profile") : Json();
    if (prof.is_object())
        out += fmt::format("  {} {} ({})\n", s.label("profile"), text_of(prof, "name"),
                           text_of(prof, "reason"));
    else
        out += fmt::format("  {} {}\n", s.label("profile"),
                           s.dim("none matched (choose one with --profile)"));
    const Json& findings = i.contains("findings") ? i.at("findings") : Json::array();
    if (findings.empty()) {
        out += fmt::format("  {} none\n", s.label("findings"));
    } else {
        out += fmt::format("  {}\n", s.bold("findings"));
        for (const auto& x : findings) {
            out += fmt::format("    {} {}: {}\n", s.sev(text_of(x, "severity")), text_of(x, "key"),
                               text_of(x, "message"));
            if (!text_of(x, "fix").empty())
                out += fmt::format("         {} {}\n", s.dim("fix:"), text_of(x, "fix"));
        }
    }
}

}  // namespace

std::string value_text(const Json& v) {
    if (v.is_null()) return "n/a";
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

std::string audit_text(const Json& r, const TextOptions& opts) {
    Style s{opts.color};
    std::string out;
    const Json& ifs = r.contains("interfaces") ? r.at("interfaces") : Json::array();
    for (const auto& i : ifs) {
        interface_text(out, i, s, opts);
        out += '\n';
    }
    if (ifs.empty()) out += "no interfaces to audit\n\n";
    out += s.bold("system") + "\n";
    const Json& t = r.contains("tuned") ? r.at("tuned") : Json::object();
    const std::string detail = text_of(t, "detail");
    out += fmt::format("  {} {} ({}{})\n", s.label("tuned"),
                       text_of(t, "active_profile").empty() ? "none" : text_of(t, "active_profile"),
                       text_of(t, "source"), detail.empty() ? "" : ": " + detail);
    bool first = true;
    if (r.contains("sysctl") && r.at("sysctl").is_object())
        for (const auto& [name, v] : r.at("sysctl").items()) {
            if (v.is_null()) continue;
            out +=
                fmt::format("  {} {} = {}\n", first ? s.label("sysctl") : fmt::format("{:<10}", ""),
                            name, v.get<std::string>());
            first = false;
        }
    out += system_health_text(r, [&](std::string_view n) { return s.label(n); });
    if (r.contains("health") && r.at("health").is_object())
        for (const auto& x : r.at("health").value("findings", Json::array())) {
            out += fmt::format("    {} {}: {}\n", s.sev(text_of(x, "severity")), text_of(x, "key"),
                               text_of(x, "message"));
            if (!text_of(x, "fix").empty())
                out += fmt::format("         {} {}\n", s.dim("fix:"), text_of(x, "fix"));
        }
    if (r.contains("warnings"))
        for (const auto& w : r.at("warnings"))
            out += fmt::format("{} {}\n", s.sev("warn"), w.get<std::string>());
    const Json& sum = r.contains("summary") ? r.at("summary") : Json::object();
    out += fmt::format("\n{} interface(s), {} fail, {} warn\n", ifs.size(), sum.value("fail", 0),
                       sum.value("warn", 0));
    return out;
}

}  // namespace nictune::report
