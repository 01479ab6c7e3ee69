#include "report/json_report.hpp"

#include "model/value_json.hpp"

namespace nictune::report {
namespace {

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json section_json(const NicState& st, Section s) {
    if (!st.values.any_in(s)) return nullptr;
    nlohmann::json out = nlohmann::json::object();
    for (const auto& k : device_keys()) {
        if (k.section != s) continue;
        if (auto v = st.values.get(k.key))
            out[std::string(k.name)] = scalar_json(scalar_of(k.key, *v));
    }
    return out;
}

}  // namespace

nlohmann::json scalar_json(const Scalar& s) {
    return scalar_to_json<nlohmann::json>(s);
}

nlohmann::json finding_json(const Finding& f) {
    return {{"severity", severity_name(f.severity)},
            {"key", f.key},
            {"expected", scalar_json(f.expected)},
            {"actual", scalar_json(f.actual)},
            {"message", f.message},
            {"fix", f.fix.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.fix)}};
}

nlohmann::json interface_json(const InterfaceAudit& a) {
    const auto& st = a.state;
    const auto& id = st.id;
    nlohmann::json j = {
        {"name", id.name},
        {"ifindex", id.ifindex},
        {"mac", id.mac.empty() ? nlohmann::json(nullptr) : nlohmann::json(id.mac)},
        {"perm_mac", opt(id.perm_mac)},
        {"kind", opt(id.kind)},
        {"physical", id.physical},
        {"driver", opt(id.driver)},
        {"driver_version", opt(id.driver_version)},
        {"module_version", opt(id.module_version)},
        {"firmware_version", opt(id.firmware_version)},
        {"bus_info", opt(id.bus_info)},
        {"pci_slot", opt(id.pci_slot)},
        {"pci_id", opt(id.pci_id)},
        {"pci_subsystem", opt(id.pci_subsystem)},
        {"numa_node", opt(id.numa_node)},
        {"vendor", opt(id.vendor_name)},
        {"model", opt(id.model_name)},
        {"sriov_vf", id.sriov_vf},
    };
    for (Section s :
         {Section::Link, Section::Coalesce, Section::Rings, Section::Channels, Section::Pause})
        j[std::string(section_info(s).name)] = section_json(st, s);
    if (st.features && st.features->names) {
        nlohmann::json f = nlohmann::json::object();
        nlohmann::json fixed = nlohmann::json::array();
        const auto& fs = *st.features;
        for (std::size_t i = 0; i < fs.size(); ++i) {
            const auto& name = (*fs.names)[i];
            if (name.empty()) continue;
            f[name] = fs.is_active(i);
            if (fs.is_fixed(i)) fixed.push_back(name);
        }
        j["features"] = std::move(f);
        j["features_fixed"] = std::move(fixed);
    } else {
        j["features"] = nullptr;
        j["features_fixed"] = nullptr;
    }
    if (a.profile && a.profile->profile)
        j["profile"] = {{"name", a.profile->profile->name},
                        {"reason", a.profile->reason},
                        {"file", a.profile->profile->file}};
    else
        j["profile"] = nullptr;
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : a.findings)
        findings.push_back(finding_json(f));
    j["findings"] = std::move(findings);
    return j;
}

nlohmann::json system_json(const SystemState& s) {
    nlohmann::json sysctl = nlohmann::json::object();
    for (const auto& v : s.sysctl)
        sysctl[v.name] = opt(v.value);
    return {{"tuned",
             {{"active_profile", opt(s.tuned.active_profile)},
              {"source", tuned_source_name(s.tuned.source)},
              {"detail", s.tuned.detail}}},
            {"sysctl", std::move(sysctl)}};
}

nlohmann::json audit_json(const AuditReport& r) {
    nlohmann::json ifs = nlohmann::json::array();
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& a : r.interfaces) {
        ifs.push_back(interface_json(a));
        for (const auto& f : a.findings)
            ++counts[static_cast<int>(f.severity)];
    }
    nlohmann::json j = system_json(r.system);
    j["interfaces"] = std::move(ifs);
    j["summary"] = {{"info", counts[0]}, {"warn", counts[1]}, {"fail", counts[2]}};
    j["warnings"] = r.warnings;
    j["nictune_version"] = NICTUNE_VERSION;
    return j;
}

}  // namespace nictune::report
