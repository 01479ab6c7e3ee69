#include "report/json_report.hpp"

#include <array>

#include "model/rss.hpp"
#include "model/value_json.hpp"
#include "report/health_report.hpp"
#include "report/json_util.hpp"
#include "util/json_writer.hpp"

namespace nictune::report {
namespace {

// Quoted keys, made once per report: feature names repeat on every
// interface, schema keys in every section.
struct KeyCache {
    std::array<std::string, kKeyCount> device;
    const FeatureNames* feature_names = nullptr;
    std::vector<std::string> features;

    KeyCache() {
        for (const auto& k : device_keys())
            device[key_index(k.key)] = quote_key(k.name);
    }
    const std::vector<std::string>& for_features(const FeatureNames& names) {
        if (feature_names != &names) {
            features.clear();
            for (const auto& n : names)
                features.push_back(quote_key(n));
            feature_names = &names;
        }
        return features;
    }
};

void section(JsonWriter& w, const NicState& st, Section s, const KeyCache& keys) {
    w.key(section_info(s).name);
    if (!st.values.any_in(s)) {
        w.null();
        return;
    }
    w.begin_object();
    for (const auto& k : device_keys()) {
        if (k.section != s) continue;
        if (auto v = st.values.get(k.key)) {
            w.quoted_key(keys.device[key_index(k.key)]);
            json_value(w, scalar_of(k.key, *v));
        }
    }
    w.end_object();
}

void interface(JsonWriter& w, const InterfaceAudit& a, KeyCache& keys) {
    const auto& st = a.state;
    const auto& id = st.id;
    w.begin_object();
    w.field("name", id.name);
    w.key("altnames");
    w.begin_array();
    for (const auto& alt : id.altnames)
        w.value(alt);
    w.end_array();
    w.field("ifindex", id.ifindex);
    string_or_null(w, "mac", id.mac);
    w.field("perm_mac", id.perm_mac);
    w.field("kind", id.kind);
    w.field("physical", id.physical);
    w.field("driver", id.driver);
    w.field("driver_version", id.driver_version);
    w.field("module_version", id.module_version);
    w.field("firmware_version", id.firmware_version);
    w.field("bus_info", id.bus_info);
    w.field("pci_slot", id.pci_slot);
    w.field("pci_id", id.pci_id);
    w.field("pci_subsystem", id.pci_subsystem);
    w.field("numa_node", id.numa_node);
    w.field("vendor", id.vendor_name);
    w.field("model", id.model_name);
    w.field("sriov_vf", id.sriov_vf);
    for (Section s :
         {Section::Link, Section::Coalesce, Section::Rings, Section::Channels, Section::Pause})
        section(w, st, s, keys);
    if (st.features && st.features->names) {
        const auto& fs = *st.features;
        const auto& quoted = keys.for_features(*fs.names);
        w.key("features");
        w.begin_object();
        for (std::size_t i = 0; i < fs.size(); ++i) {
            if ((*fs.names)[i].empty()) continue;
            w.quoted_key(quoted[i]);
            w.value(fs.is_active(i));
        }
        w.end_object();
        w.key("features_fixed");
        w.begin_array();
        for (std::size_t i = 0; i < fs.size(); ++i)
            if (!(*fs.names)[i].empty() && fs.is_fixed(i)) w.value((*fs.names)[i]);
        w.end_array();
    } else {
        w.key("features");
        w.null();
        w.key("features_fixed");
        w.null();
    }
    // null: the driver has none / the device has no queues (unsupported).
    w.object_or_null("private_flags", st.private_flags.has_value(), [&] {
        for (const auto& f : *st.private_flags)
            w.field(f.name, f.on);
    });
    w.object_or_null("rps", st.queues && !st.queues->rx.empty(), [&] {
        for (std::size_t q = 0; q < st.queues->rx.size(); ++q)
            w.object("rx-" + std::to_string(q), [&] {
                w.field("cpus", st.queues->rx[q].rps_cpus);
                w.field("flow_cnt", st.queues->rx[q].rps_flow_cnt);
            });
    });
    w.object_or_null("xps", st.queues && !st.queues->tx.empty(), [&] {
        for (std::size_t q = 0; q < st.queues->tx.size(); ++q)
            w.object("tx-" + std::to_string(q),
                     [&] { w.field("cpus", st.queues->tx[q].xps_cpus); });
    });
    // [rss]: null when the driver answers no RSS ioctl.
    w.key("rss");
    if (st.rss) {
        const RssState& r = *st.rss;
        w.begin_object();
        w.field("rx_rings", r.rx_rings);
        w.key("indirection");
        if (r.indirection && !r.indirection->empty()) {
            w.begin_array();
            for (uint32_t q : *r.indirection)
                w.value(static_cast<uint64_t>(q));
            w.end_array();
        } else {
            w.null();
        }
        // The profile's key: N when entry i holds i % N (an equal spread).
        std::optional<uint64_t> queues;
        if (r.indirection && !r.indirection->empty())
            queues =
                rss_equal_queues(format_rss_indirection(*r.indirection, r.rx_rings.value_or(0)),
                                 r.rx_rings.value_or(0));
        w.field("queues", queues);
        w.field("key_size", r.key_size);
        w.key("hfunc");
        if (r.hfunc && *r.hfunc)
            w.value(format_rss_hfunc(*r.hfunc));
        else
            w.null();
        w.key("hash");
        w.begin_object();
        for (const auto& h : r.hash)
            w.field(h.flow, format_rss_hash_fields(h.fields));
        w.end_object();
        w.end_object();
    } else {
        w.null();
    }
    // [irq]: the queue IRQs by number; null when the device has none (veth).
    w.object_or_null("irq", st.irq && !st.irq->irqs.empty(), [&] {
        for (const auto& q : st.irq->irqs)
            w.object(std::to_string(q.irq), [&] {
                w.field("name", q.name);
                w.field("affinity", q.affinity);
                w.field("effective", q.effective);
            });
    });
    w.object_or_null("profile", a.profile && a.profile->profile, [&] {
        w.field("name", a.profile->profile->name);
        w.field("reason", a.profile->reason);
        w.field("file", a.profile->profile->file);
    });
    write_findings(w, a.findings);
    write_or_null(w, "health", a.health, write_interface_health);
    w.end_object();
}

}  // namespace

nlohmann::json scalar_json(const Scalar& s) {
    return scalar_to_json<nlohmann::json>(s);
}

void write_audit_json(const AuditReport& r, const std::function<void(std::string_view)>& sink,
                      std::size_t chunk) {
    std::string out;
    out.reserve(chunk + 8192);
    JsonWriter w(out);
    w.begin_object();
    w.key("interfaces");
    w.begin_array();
    uint64_t counts[3] = {0, 0, 0};
    KeyCache keys;
    for (const auto& a : r.interfaces) {
        interface(w, a, keys);
        for (const auto& f : a.findings)
            ++counts[static_cast<int>(f.severity)];
        // The writer keeps its state apart from the text: the text so far
        // can go out, and the buffer be used again while it is in the cache.
        if (out.size() >= chunk) {
            sink(out);
            out.clear();
        }
    }
    w.end_array();
    w.key("tuned");
    w.begin_object();
    w.field("active_profile", r.system.tuned.active_profile);
    w.field("source", tuned_source_name(r.system.tuned.source));
    w.field("detail", r.system.tuned.detail);
    w.end_object();
    w.key("sysctl");
    w.begin_object();
    for (const auto& v : r.system.sysctl)
        w.field(v.name, v.value);
    w.end_object();
    w.key("health");
    if (r.health) {
        write_system_health(w, *r.health);
        for (const auto& f : r.health->findings)
            ++counts[static_cast<int>(f.severity)];
    } else {
        w.null();
    }
    w.key("summary");
    w.begin_object();
    w.field("info", counts[0]);
    w.field("warn", counts[1]);
    w.field("fail", counts[2]);
    w.end_object();
    w.key("warnings");
    w.begin_array();
    for (const auto& x : r.warnings)
        w.value(x);
    w.end_array();
    w.field("nictune_version", NICTUNE_VERSION);
    w.end_object();
    sink(out);
}

std::string audit_json_text(const AuditReport& r) {
    std::string text;
    text.reserve(1024 + r.interfaces.size() * 4096);
    write_audit_json(
        r, [&](std::string_view part) { text.append(part); }, 64 * 1024);
    return text;
}

nlohmann::json audit_json(const AuditReport& r) {
    return nlohmann::json::parse(audit_json_text(r));
}

}  // namespace nictune::report
