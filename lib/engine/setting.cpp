#include "engine/setting.hpp"

#include <algorithm>
#include <charconv>

#include "model/cpulist.hpp"
#include "model/rss.hpp"
#include "util/strings.hpp"

namespace nictune {

std::string SettingId::path() const {
    if (key) return key_path(*key);
    return dotted(section_info(section).name, name);
}

Result<SettingId> SettingId::parse(std::string_view path) {
    auto dot = path.find('.');
    if (dot == std::string_view::npos || dot + 1 >= path.size())
        return fail(Errc::InvalidArgument, std::string(path), "not a setting path (section.key)");
    auto sec = find_section(path.substr(0, dot));
    if (!sec) return fail(Errc::InvalidArgument, std::string(path), "unknown section");
    std::string_view rest = path.substr(dot + 1);
    switch (*sec) {
        case Section::Features:
            return SettingId::feature(std::string(rest));
        case Section::Sysctl:
            return SettingId::sysctl(std::string(rest));
        case Section::Tuned:
            if (rest == "profile") return SettingId::tuned();
            break;
        case Section::PrivateFlags:
            return SettingId::private_flag(std::string(rest));
        case Section::Rps:
        case Section::Xps:
            if (parse_queue_setting(*sec, rest))
                return SettingId{*sec, std::nullopt, std::string(rest)};
            break;
        case Section::Rss:  // [rss]
            if (rest == "indirection" ||
                (rest.starts_with("hash.") && find_rss_flow_type(rest.substr(5)) &&
                 find_rss_flow_type(rest.substr(5))->name == rest.substr(5)))
                return SettingId::rss(std::string(rest));
            break;
        case Section::Irq:
            if (rest == SettingId::kIrqbalanceBanned) return SettingId::irqbalance_banned();
            if (auto n = parse_irq_setting(rest)) return SettingId::irq(*n);
            break;
        default:
            if (auto k = find_key(*sec, rest)) return SettingId::device(*k);
            break;
    }
    return fail(Errc::InvalidArgument, std::string(path), "unknown setting");
}

std::optional<QueueSettingName> parse_queue_setting(Section s, std::string_view name) {
    const std::string_view prefix = s == Section::Rps ? "rx-" : s == Section::Xps ? "tx-" : "";
    if (prefix.empty() || !name.starts_with(prefix)) return std::nullopt;
    name.remove_prefix(prefix.size());
    const auto dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    QueueSettingName out;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, out.queue);
    if (ec != std::errc() || end != name.data() + dot) return std::nullopt;
    out.what = name.substr(dot + 1);
    if (out.what == "cpus" || (s == Section::Rps && out.what == "flow_cnt")) return out;
    return std::nullopt;
}

std::optional<unsigned> parse_irq_setting(std::string_view name) {
    if (!name.ends_with(".cpus")) return std::nullopt;
    name.remove_suffix(5);
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
    if (ec != std::errc() || end != name.data() + name.size() || name.empty()) return std::nullopt;
    return n;
}

std::optional<uint64_t> device_value_of(Key k, const Scalar& s) {
    if (const auto* b = std::get_if<bool>(&s)) return *b ? 1U : 0U;
    if (const auto* n = std::get_if<uint64_t>(&s)) return *n;
    if (const auto* t = std::get_if<std::string>(&s)) return enum_value(k, *t);
    return std::nullopt;
}

Scalar value_in(const SettingId& id, const NicState* nic, const SystemState* sys) {
    if (id.key && nic) {
        if (auto v = nic->values.get(*id.key)) return scalar_of(*id.key, *v);
        return {};
    }
    if (id.section == Section::Features && nic && nic->features) {
        if (auto v = nic->features->active_by_name(id.name)) return *v;
        return {};
    }
    if (id.section == Section::PrivateFlags && nic && nic->private_flags) {
        for (const auto& f : *nic->private_flags)
            if (f.name == id.name) return f.on;
        return {};
    }
    if ((id.section == Section::Rps || id.section == Section::Xps) && nic && nic->queues) {
        auto q = parse_queue_setting(id.section, id.name);
        if (!q) return {};
        if (id.section == Section::Xps) {
            if (q->queue < nic->queues->tx.size() && nic->queues->tx[q->queue].xps_cpus)
                return *nic->queues->tx[q->queue].xps_cpus;
            return {};
        }
        if (q->queue >= nic->queues->rx.size()) return {};
        const auto& rx = nic->queues->rx[q->queue];
        if (q->what == "cpus" && rx.rps_cpus) return *rx.rps_cpus;
        if (q->what == "flow_cnt" && rx.rps_flow_cnt) return *rx.rps_flow_cnt;
        return {};
    }
    // [rss]
    if (id.section == Section::Rss && nic && nic->rss) {
        const RssState& r = *nic->rss;
        if (id.name == "indirection") {
            if (!r.indirection || r.indirection->empty()) return {};
            return format_rss_indirection(*r.indirection, r.rx_rings.value_or(0));
        }
        for (const auto& h : r.hash)
            if ("hash." + h.flow == id.name) return format_rss_hash_fields(h.fields);
        return {};
    }
    if (id.section == Section::Irq && nic && nic->irq) {
        if (id.name == SettingId::kIrqbalanceBanned) {
            const auto& ib = nic->irq->irqbalance;
            if (!ib || !ib->banned) return {};
            std::vector<unsigned> mine;
            for (const auto& q : nic->irq->irqs)
                if (std::find(ib->banned->begin(), ib->banned->end(), q.irq) != ib->banned->end())
                    mine.push_back(q.irq);
            return format_cpulist(mine);
        }
        auto n = parse_irq_setting(id.name);
        if (!n) return {};
        for (const auto& q : nic->irq->irqs)
            if (q.irq == *n && q.affinity) return *q.affinity;
        return {};
    }
    if (id.section == Section::Sysctl && sys) {
        for (const auto& s : sys->sysctl)
            if (s.name == id.name && s.value) return *s.value;
        return {};
    }
    if (id.section == Section::Tuned && sys) {
        if (sys->tuned.active_profile) return *sys->tuned.active_profile;
    }
    return {};
}

}  // namespace nictune
