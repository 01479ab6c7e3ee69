#include "report/text_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/strings.hpp"

namespace nictune::report {
namespace {

struct Style {
    bool on;
    [[nodiscard]] std::string wrap(std::string_view code, std::string_view s) const {
        if (!on) return std::string(s);
        return fmt::format("\033[{}m{}\033[0m", code, s);
    }
    [[nodiscard]] std::string bold(std::string_view s) const { return wrap("1", s); }
    [[nodiscard]] std::string dim(std::string_view s) const { return wrap("2", s); }
    [[nodiscard]] std::string sev(Severity v) const {
        switch (v) {
            case Severity::Fail:
                return wrap("1;31", "FAIL");
            case Severity::Warn:
                return wrap("1;33", "WARN");
            case Severity::Info:
                return wrap("36", "info");
        }
        return "info";
    }
};

std::string value_text(const NicState& st, Key k) {
    auto v = st.values.get(k);
    if (!v) return "n/a";
    return to_string(scalar_of(k, *v));
}

// "rx 512/4096": current and maximum side by side.
std::string with_max(const NicState& st, Key cur, Key max) {
    if (!st.values.has(cur) && !st.values.has(max)) return {};
    return fmt::format("{} {}/{}", key_info(cur).name, value_text(st, cur), value_text(st, max));
}

void line(std::string& out, const Style& s, std::string_view label,
          const std::vector<std::string>& parts) {
    std::vector<std::string> kept;
    for (const auto& p : parts)
        if (!p.empty()) kept.push_back(p);
    if (kept.empty()) return;
    out += fmt::format("  {} {}\n", s.bold(fmt::format("{:<10}", label)), join(kept, "  "));
}

void section_line(std::string& out, const Style& s, const NicState& st, Section sec) {
    const auto& name = section_info(sec).name;
    if (!st.values.any_in(sec)) {
        out += fmt::format("  {} {}\n", s.bold(fmt::format("{:<10}", name)),
                           s.dim("not supported by the driver"));
        return;
    }
    std::vector<std::string> parts;
    for (const auto& k : device_keys())
        if (k.section == sec && st.values.has(k.key))
            parts.push_back(fmt::format("{} {}", k.name, value_text(st, k.key)));
    line(out, s, name, parts);
}

void interface_text(std::string& out, const InterfaceAudit& a, const Style& s,
                    const TextOptions& opts) {
    const auto& st = a.state;
    const auto& id = st.id;
    std::string title = s.bold(id.name);
    if (id.driver) title += "  " + *id.driver + (id.driver_version ? " " + *id.driver_version : "");
    if (id.module_version && id.module_version != id.driver_version)
        title += " (module " + *id.module_version + ")";
    if (id.firmware_version) title += "  fw " + *id.firmware_version;
    if (id.kind) title += "  [" + *id.kind + "]";
    out += title + "\n";
    if (id.vendor_name || id.model_name)
        out += fmt::format("  {} {} {}\n", s.bold(fmt::format("{:<10}", "model")),
                           id.vendor_name.value_or(""), id.model_name.value_or(""));
    std::vector<std::string> ident;
    if (id.bus_info) ident.push_back("bus " + *id.bus_info);
    if (id.pci_id)
        ident.push_back("pci " + *id.pci_id +
                        (id.pci_subsystem ? " sub " + *id.pci_subsystem : ""));
    if (id.numa_node) ident.push_back("numa " + std::to_string(*id.numa_node));
    if (id.sriov_vf) ident.push_back("SR-IOV VF");
    if (!id.mac.empty()) ident.push_back("mac " + id.mac);
    ident.push_back(id.physical ? "physical" : "virtual");
    line(out, s, "identity", ident);

    std::vector<std::string> link;
    link.push_back(fmt::format("mtu {} ({}..{})", value_text(st, Key::LinkMtu),
                               value_text(st, Key::LinkMinMtu), value_text(st, Key::LinkMaxMtu)));
    link.push_back(value_text(st, Key::LinkOperstate));
    if (auto c = st.values.get(Key::LinkCarrier)) link.push_back(*c ? "carrier" : "no carrier");
    if (st.values.has(Key::LinkSpeed)) link.push_back(value_text(st, Key::LinkSpeed) + "Mb/s");
    if (st.values.has(Key::LinkDuplex)) link.push_back(value_text(st, Key::LinkDuplex));
    if (auto an = st.values.get(Key::LinkAutoneg))
        link.push_back(*an ? "autoneg on" : "autoneg off");
    if (st.values.has(Key::LinkTxqueuelen))
        link.push_back("txqueuelen " + value_text(st, Key::LinkTxqueuelen));
    line(out, s, "link", link);

    section_line(out, s, st, Section::Coalesce);
    if (st.values.any_in(Section::Rings)) {
        line(out, s, "rings",
             {with_max(st, Key::RingsRx, Key::RingsRxMax),
              with_max(st, Key::RingsTx, Key::RingsTxMax),
              st.values.get(Key::RingsRxJumboMax).value_or(0)
                  ? with_max(st, Key::RingsRxJumbo, Key::RingsRxJumboMax)
                  : "",
              st.values.get(Key::RingsRxMiniMax).value_or(0)
                  ? with_max(st, Key::RingsRxMini, Key::RingsRxMiniMax)
                  : ""});
    } else {
        section_line(out, s, st, Section::Rings);
    }
    if (st.values.any_in(Section::Channels)) {
        std::vector<std::string> parts;
        for (auto [cur, max] : {std::pair{Key::ChanCombined, Key::ChanCombinedMax},
                                {Key::ChanRx, Key::ChanRxMax},
                                {Key::ChanTx, Key::ChanTxMax},
                                {Key::ChanOther, Key::ChanOtherMax}})
            if (st.values.get(max).value_or(0) > 0) parts.push_back(with_max(st, cur, max));
        if (parts.empty()) parts.push_back(with_max(st, Key::ChanCombined, Key::ChanCombinedMax));
        line(out, s, "channels", parts);
    } else {
        section_line(out, s, st, Section::Channels);
    }
    if (st.features && st.features->names) {
        const auto& fs = *st.features;
        std::vector<std::string> on, off;
        std::size_t fixed = 0;
        for (std::size_t i = 0; i < fs.size(); ++i) {
            if (fs.is_fixed(i) && !opts.verbose) {
                ++fixed;
                continue;
            }
            ((fs.is_active(i)) ? on : off).push_back((*fs.names)[i]);
        }
        out += fmt::format("  {} on: {}\n", s.bold(fmt::format("{:<10}", "features")),
                           on.empty() ? "-" : join(on, " "));
        out += fmt::format("  {:<10} off: {}\n", "", off.empty() ? "-" : join(off, " "));
        if (fixed)
            out +=
                fmt::format("  {:<10} {}\n", "",
                            s.dim(fmt::format("{} fixed features not shown (--verbose)", fixed)));
    } else {
        out += fmt::format("  {} {}\n", s.bold(fmt::format("{:<10}", "features")),
                           s.dim("not readable"));
    }
    section_line(out, s, st, Section::Pause);

    if (a.profile && a.profile->profile)
        out += fmt::format("  {} {} ({})\n", s.bold(fmt::format("{:<10}", "profile")),
                           a.profile->profile->name, a.profile->reason);
    else
        out += fmt::format("  {} {}\n", s.bold(fmt::format("{:<10}", "profile")),
                           s.dim("none matched (choose one with --profile)"));
    if (a.findings.empty()) {
        out += fmt::format("  {} none\n", s.bold(fmt::format("{:<10}", "findings")));
    } else {
        out += fmt::format("  {}\n", s.bold("findings"));
        for (const auto& f : a.findings) {
            out += fmt::format("    {} {}: {}\n", s.sev(f.severity), f.key, f.message);
            if (!f.fix.empty()) out += fmt::format("         {} {}\n", s.dim("fix:"), f.fix);
        }
    }
}

}  // namespace

std::string audit_text(const AuditReport& r, const TextOptions& opts) {
    Style s{opts.color};
    std::string out;
    for (const auto& a : r.interfaces) {
        interface_text(out, a, s, opts);
        out += '\n';
    }
    if (r.interfaces.empty()) out += "no interfaces to audit\n\n";
    out += s.bold("system") + "\n";
    const auto& t = r.system.tuned;
    std::string tuned = t.active_profile ? *t.active_profile : std::string("none");
    out += fmt::format("  {} {} ({}{})\n", s.bold(fmt::format("{:<10}", "tuned")), tuned,
                       tuned_source_name(t.source), t.detail.empty() ? "" : ": " + t.detail);
    std::vector<std::string> sys;
    for (const auto& v : r.system.sysctl)
        if (v.value) sys.push_back(v.name + " = " + *v.value);
    for (std::size_t i = 0; i < sys.size(); ++i)
        out += fmt::format(
            "  {} {}\n",
            i == 0 ? s.bold(fmt::format("{:<10}", "sysctl")) : fmt::format("{:<10}", ""), sys[i]);
    std::size_t warn = 0, failc = 0;
    for (const auto& a : r.interfaces)
        for (const auto& f : a.findings) {
            warn += f.severity == Severity::Warn;
            failc += f.severity == Severity::Fail;
        }
    for (const auto& w : r.warnings)
        out += fmt::format("{} {}\n", s.sev(Severity::Warn), w);
    out += fmt::format("\n{} interface(s), {} fail, {} warn\n", r.interfaces.size(), failc, warn);
    return out;
}

}  // namespace nictune::report
