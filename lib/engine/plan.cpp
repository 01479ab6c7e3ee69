#include "engine/plan.hpp"

#include <algorithm>
#include <charconv>

#include "engine/audit.hpp"
#include "model/cpulist.hpp"
#include "model/irq.hpp"
#include "model/rss.hpp"
#include "util/enum_names.hpp"
#include "util/strings.hpp"

namespace nictune {

const char* step_kind_name(StepKind k) {
    static constexpr EnumNames<StepKind> kNames{"change",      "unchanged", "covered",
                                                "unsupported", "refused",   "blocked"};
    return kNames[k];
}

namespace {

std::string requested_text(Key k, const Target& t) {
    return key_path(k) + " = " +
           (t.is_max ? std::string("\"max\"") : to_string(scalar_of(k, t.value)));
}

PlanStep device_step(const ResolvedSetting& r, const NicState& st) {
    PlanStep s;
    s.phase = phase_of(key_info(r.key).section);
    s.setting = SettingId::device(r.key);
    s.requested = requested_text(r.requested, r.target);
    s.resolution = r.resolution;
    s.note = r.note;
    s.resets_link = r.resets_link;
    if (!r.reset_note.empty()) s.note += (s.note.empty() ? "" : "; ") + r.reset_note;
    auto cur = st.values.get(r.key);
    s.current = cur ? scalar_of(r.key, *cur) : Scalar{};
    s.target = scalar_of(r.key, r.value);
    switch (r.resolution) {
        case Resolution::Native:
        case Resolution::Translated:
        case Resolution::Adjusted:
            s.kind = cur && *cur == r.value ? StepKind::Unchanged : StepKind::Change;
            break;
        case Resolution::Covered:
            s.kind = StepKind::Covered;
            break;
        case Resolution::Unsupported:
            s.kind = StepKind::Unsupported;
            // Nothing is set: show the request, not a device form.
            s.setting = SettingId::device(r.requested);
            s.target = r.target.is_max ? Scalar{std::string("max")}
                                       : scalar_of(r.requested, r.target.value);
            s.current = Scalar{};
            break;
        case Resolution::OutOfRange:
        case Resolution::Conflict:
        case Resolution::NotSettable:
        case Resolution::DriverRefuses:
            s.kind = StepKind::Refused;
            break;
    }
    if (s.kind != StepKind::Change) s.resets_link = false;
    return s;
}

PlanStep feature_step(const ResolvedFeature& f, const NicState& st) {
    PlanStep s;
    s.phase = Phase::Features;
    s.setting = SettingId::feature(f.name.empty() ? f.requested : f.name);
    // In one allocation: 3,072 of these in a plan for 512 interfaces.
    const std::string_view on = f.on ? "true" : "false";
    s.requested.reserve(9 + f.requested.size() + 3 + on.size());
    s.requested.append("features.").append(f.requested).append(" = ").append(on);
    s.target = f.on;
    s.feature_index = f.index;
    switch (f.status) {
        case FeatureStatus::Ok: {
            bool active = st.features->is_active(f.index);
            s.current = active;
            s.kind = active == f.on ? StepKind::Unchanged : StepKind::Change;
            if (f.requested != f.name) s.note = "from " + f.requested;
            s.resets_link = s.kind == StepKind::Change && f.resets_link;
            break;
        }
        case FeatureStatus::Fixed:
        case FeatureStatus::Blocked:
            s.current = st.features->is_active(f.index);
            s.kind = s.current == Scalar{f.on} ? StepKind::Unchanged : StepKind::Blocked;
            s.note = f.why;
            break;
        case FeatureStatus::NotOnDevice:
            s.kind = StepKind::Unsupported;
            s.note = "the device has no feature " + f.requested;
            break;
    }
    return s;
}

// [private_flags]: each flag by the driver's own name. A name the driver
// does not list refuses the plan, naming where the profile wrote it.
void private_flag_steps(const Profile& profile, const NicState& st, InterfacePlan& ip) {
    for (const auto& req : profile.private_flags) {
        PlanStep s;
        s.phase = Phase::PrivateFlags;
        s.setting = SettingId::private_flag(req.name);
        s.requested = "private_flags." + req.name + " = " + (req.on ? "true" : "false");
        s.target = req.on;
        const std::string driver = st.id.driver.value_or("the driver");
        if (!st.private_flags || st.private_flags->empty()) {
            s.kind = StepKind::Unsupported;
            s.note = driver + " has no private flags";
        } else {
            auto it = std::find_if(st.private_flags->begin(), st.private_flags->end(),
                                   [&](const PrivateFlag& f) { return f.name == req.name; });
            if (it == st.private_flags->end()) {
                std::vector<std::string> names;
                for (const auto& f : *st.private_flags)
                    names.push_back(f.name);
                s.kind = StepKind::Refused;
                s.note = req.loc.str() + ": " + driver + " has no private flag " + quote(req.name) +
                         " (its flags: " + join(names, ", ") + ")";
            } else {
                s.current = it->on;
                s.kind = it->on == req.on ? StepKind::Unchanged : StepKind::Change;
            }
        }
        ip.steps.push_back(std::move(s));
    }
}

// [rps] and [xps]: one step per queue, so that each queue's original is
// saved and restored as it was.
void queue_steps(const Profile& profile, const NicState& st, InterfacePlan& ip) {
    auto one = [&](Section sec, std::size_t q, std::string_view what, const Scalar& target,
                   const std::optional<Scalar>& current, std::string requested) {
        PlanStep s;
        s.phase = phase_of(sec);
        s.setting = SettingId::queue(sec, q, what);
        s.requested = std::move(requested);
        s.target = target;
        if (!current) {
            s.kind = StepKind::Unsupported;
            s.note = s.setting.path() + " cannot be read (no RPS/XPS in this kernel, or a " +
                     "single-queue device)";
        } else {
            s.current = *current;
            s.kind = *current == target ? StepKind::Unchanged : StepKind::Change;
        }
        ip.steps.push_back(std::move(s));
    };
    auto missing = [&](Section sec, std::string requested) {
        PlanStep s;
        s.phase = phase_of(sec);
        s.setting = SettingId{sec, std::nullopt, "queues"};
        s.requested = std::move(requested);
        s.kind = StepKind::Unsupported;
        s.note = "the interface has no " + std::string(sec == Section::Rps ? "RX" : "TX") +
                 " queues in sysfs";
        ip.steps.push_back(std::move(s));
    };
    auto opt = [](const auto& v) -> std::optional<Scalar> {
        if (!v) return std::nullopt;
        return Scalar{*v};
    };
    if (profile.rps_cpus) {
        const std::string list = format_cpulist(profile.rps_cpus->cpus);
        const std::string req = "rps.cpus = \"" + list + "\"";
        if (!st.queues || st.queues->rx.empty()) missing(Section::Rps, req);
        if (st.queues)
            for (std::size_t q = 0; q < st.queues->rx.size(); ++q)
                one(Section::Rps, q, "cpus", Scalar{list}, opt(st.queues->rx[q].rps_cpus), req);
    }
    if (profile.rps_flow_cnt) {
        const uint64_t n = profile.rps_flow_cnt->value;
        const std::string req = "rps.flow_cnt = " + std::to_string(n);
        if (!st.queues || st.queues->rx.empty()) missing(Section::Rps, req);
        if (st.queues)
            for (std::size_t q = 0; q < st.queues->rx.size(); ++q)
                one(Section::Rps, q, "flow_cnt", Scalar{n}, opt(st.queues->rx[q].rps_flow_cnt),
                    req);
    }
    if (profile.xps_cpus) {
        const std::string list = format_cpulist(profile.xps_cpus->cpus);
        const std::string req =
            list.empty() ? "xps.policy = \"off\"" : "xps.cpus = \"" + list + "\"";
        if (!st.queues || st.queues->tx.empty()) missing(Section::Xps, req);
        if (st.queues)
            for (std::size_t q = 0; q < st.queues->tx.size(); ++q)
                one(Section::Xps, q, "cpus", Scalar{list}, opt(st.queues->tx[q].xps_cpus), req);
    }
}

// [rss]: the indirection table as one step, the hash fields of
// each flow type as one step each, so that each keeps its own original.
void rss_steps(const Profile& profile, const NicState& st, const Resolved& res, InterfacePlan& ip) {
    if (!profile.rss_queues && profile.rss_hash.empty()) return;
    const std::string driver = st.id.driver.value_or("the driver");
    // The channel counts this plan sets (their resolved targets), which the
    // table is written after.
    bool channels_change = false;
    bool have_channels = st.values.has(Key::ChanCombined) || st.values.has(Key::ChanRx);
    uint64_t combined = st.values.get(Key::ChanCombined).value_or(0);
    uint64_t rx = st.values.get(Key::ChanRx).value_or(0);
    for (const auto& r : res.settings) {
        if (key_info(r.key).section != Section::Channels) continue;
        if (r.resolution != Resolution::Native && r.resolution != Resolution::Translated &&
            r.resolution != Resolution::Adjusted)
            continue;
        if (st.values.get(r.key) != r.value) channels_change = true;
        if (r.key == Key::ChanCombined) combined = r.value, have_channels = true;
        if (r.key == Key::ChanRx) rx = r.value, have_channels = true;
    }
    const RssState* rss = st.rss ? &*st.rss : nullptr;
    // The RX queues the table may name once the channels are set: the
    // channels' count when this plan changes them, else what GRXRINGS says.
    bool rings_known = rss && rss->rx_rings;
    uint64_t limit = rings_known ? *rss->rx_rings : 0;
    if (channels_change && have_channels) {
        limit = combined + rx;
        rings_known = true;
    }

    if (profile.rss_queues) {
        const uint64_t n = profile.rss_queues->value;
        PlanStep s;
        s.phase = Phase::Rss;
        s.setting = SettingId::rss("indirection");
        s.requested = "rss.queues = " + std::to_string(n);
        const bool table = rss && rss->indirection && !rss->indirection->empty();
        if (!table) {
            s.kind = StepKind::Unsupported;
            s.target = "equal " + std::to_string(n);
            s.note = driver + " has no RSS indirection table (ETHTOOL_GRSSH " +
                     (rss && rss->indirection ? "reports none" : "is not supported") + ")";
        } else if (!rings_known) {
            s.kind = StepKind::Unsupported;
            s.target = "equal " + std::to_string(n);
            s.note = driver + " does not report its RX ring count (ETHTOOL_GRXRINGS)";
        } else if (n > limit) {
            s.kind = StepKind::Refused;
            s.target = "equal " + std::to_string(n);
            s.note = profile.rss_queues->loc.str() + ": " + st.id.name + " has " +
                     std::to_string(limit) + " RX queue" + (limit == 1 ? "" : "s") +
                     (channels_change ? " after the profile's [channels]" : "") +
                     ": the table cannot spread over " + std::to_string(n);
        } else if (n > rss->indirection->size()) {
            s.kind = StepKind::Refused;
            s.target = "equal " + std::to_string(n);
            s.note = profile.rss_queues->loc.str() + ": " + st.id.name +
                     "'s indirection table has " + std::to_string(rss->indirection->size()) +
                     " entries: it cannot spread over " + std::to_string(n) + " queues";
        } else {
            // The target as a table of this size reads back.
            std::vector<uint32_t> want(rss->indirection->size());
            for (std::size_t i = 0; i < want.size(); ++i)
                want[i] = static_cast<uint32_t>(i % n);
            s.target = format_rss_indirection(want, limit);
            s.current = format_rss_indirection(*rss->indirection, rss->rx_rings.value_or(0));
            s.kind =
                s.current == s.target && !channels_change ? StepKind::Unchanged : StepKind::Change;
            if (channels_change && s.current == s.target)
                s.note = "written again after the channel change (a driver may keep its table)";
        }
        ip.steps.push_back(std::move(s));
    }
    for (const auto& req : profile.rss_hash) {
        PlanStep s;
        s.phase = Phase::Rss;
        s.setting = SettingId::rss("hash." + req.flow);
        s.target = format_rss_hash_fields(req.fields);
        s.requested = "rss.hash." + req.flow + " = \"" + std::get<std::string>(s.target) + "\"";
        const RssHashFields* cur = nullptr;
        if (rss)
            for (const auto& h : rss->hash)
                if (h.flow == req.flow) cur = &h;
        if (!cur) {
            s.kind = StepKind::Unsupported;
            s.note = driver + " reports no hash fields for " + req.flow + " (ETHTOOL_GRXFH)";
        } else {
            s.current = format_rss_hash_fields(cur->fields);
            s.kind = s.current == s.target ? StepKind::Unchanged : StepKind::Change;
        }
        ip.steps.push_back(std::move(s));
    }
}

// [irq]: the irqbalance step first (it must leave the IRQs alone before
// they are placed), then one step per queue IRQ, so that each IRQ's own
// original is saved and restored.
void irq_steps(const Profile& profile, const NicState& st, InterfacePlan& ip) {
    if (!profile.irq) return;
    const IrqRequest& req = *profile.irq;
    using P = IrqRequest::Policy;
    const std::string requested = req.policy == P::Local ? "irq.policy = \"local\""
                                  : req.policy == P::All
                                      ? "irq.policy = \"all\""
                                      : "irq.cpus = \"" + format_cpulist(req.cpus) + "\"";
    auto unsupported = [&](std::string note) {
        PlanStep s;
        s.phase = Phase::Irq;
        s.setting = SettingId{Section::Irq, std::nullopt, "queues"};
        s.requested = requested;
        s.kind = StepKind::Unsupported;
        s.note = std::move(note);
        ip.steps.push_back(std::move(s));
    };
    if (!st.irq || st.irq->irqs.empty()) {
        unsupported(
            "no queue IRQs: no MSI vectors of its own named as queues in /proc/interrupts (a "
            "virtual device such as veth, or a driver that requests them only while the "
            "interface is up)");
        return;
    }
    const IrqPlacement& pl = *st.irq;
    // Where the IRQs go, and why.
    std::vector<unsigned> cpus;
    std::string where;
    bool round_robin = true;
    if (req.policy == P::Local && pl.numa_node && !pl.node_cpus.empty()) {
        cpus = pl.node_cpus;
        where = "one CPU each of NUMA node " + std::to_string(*pl.numa_node) + " (" +
                format_cpulist(cpus) + "), round robin";
    } else if (req.policy == P::Local || req.policy == P::All) {
        cpus = pl.online_cpus;
        where = "one CPU each of all online CPUs (" + format_cpulist(cpus) + "), round robin";
        if (req.policy == P::Local)
            where += pl.numa_node
                         ? ": NUMA node " + std::to_string(*pl.numa_node) + " has no online CPU"
                         : ": the device has no NUMA node (numa_node -1), so every "
                           "online CPU is local";
    } else {
        round_robin = false;
        for (unsigned c : req.cpus)
            if (pl.online_cpus.empty() ||
                std::binary_search(pl.online_cpus.begin(), pl.online_cpus.end(), c))
                cpus.push_back(c);
        if (cpus.empty()) {
            PlanStep s;
            s.phase = Phase::Irq;
            s.setting = SettingId{Section::Irq, std::nullopt, "cpus"};
            s.requested = requested;
            s.kind = StepKind::Refused;
            s.note = req.loc.str() + ": none of CPUs " + format_cpulist(req.cpus) +
                     " is online (online: " + format_cpulist(pl.online_cpus) +
                     "); the kernel refuses such an affinity";
            ip.steps.push_back(std::move(s));
            return;
        }
        cpus = req.cpus;  // as written: the kernel keeps offline CPUs in the mask
        where = "CPUs " + format_cpulist(cpus) + " for every queue IRQ";
    }
    if (cpus.empty()) {
        unsupported("the online CPUs could not be read (/sys/devices/system/cpu/online)");
        return;
    }

    std::vector<unsigned> all;
    for (const auto& q : pl.irqs)
        all.push_back(q.irq);
    std::string irqbalance_note;
    if (!pl.irqbalance) {
        irqbalance_note = "irqbalance is not running";
    } else {
        const IrqBalance& ib = *pl.irqbalance;
        PlanStep s;
        s.phase = Phase::Irq;
        s.setting = SettingId::irqbalance_banned();
        s.requested = requested;
        s.target = format_cpulist(all);
        if (!ib.banned) {
            s.kind = StepKind::Unsupported;
            s.note = "irqbalance (pid " + std::to_string(ib.pid) +
                     ") runs and cannot be told to leave these IRQs alone (" + ib.problem +
                     "): it will move them again within its interval (10 s). nictune does not "
                     "stop it: stop it (systemctl disable --now irqbalance, Intel's advice) or "
                     "start it with --banirq=N for each";
        } else {
            std::vector<unsigned> mine, others;
            for (unsigned b : *ib.banned)
                (std::find(all.begin(), all.end(), b) != all.end() ? mine : others).push_back(b);
            s.current = format_cpulist(mine);
            std::vector<unsigned> after = others;
            after.insert(after.end(), all.begin(), all.end());
            const std::size_t length = irqbalance_ban_message(after).size();
            s.note = "irqbalance (pid " + std::to_string(ib.pid) + ") is told over " + ib.socket +
                     " to leave IRQs " + format_cpulist(all) +
                     " alone (settings ban irqs); it keeps running and balancing the others, "
                     "and forgets the ban when it restarts. nictune does not stop it";
            if (length > kIrqbalanceMessageLimit) {
                s.kind = StepKind::Unsupported;
                s.note = "irqbalance (pid " + std::to_string(ib.pid) +
                         ") runs, and the IRQs it would have to leave alone do not fit in the " +
                         std::to_string(kIrqbalanceMessageLimit) +
                         " bytes it reads from its socket: it will move them again. nictune "
                         "does not stop it: stop it (systemctl disable --now irqbalance) or "
                         "start it with --banirq=N for each";
            } else {
                s.kind = mine == all ? StepKind::Unchanged : StepKind::Change;
            }
        }
        ip.steps.push_back(std::move(s));
    }

    for (std::size_t i = 0; i < pl.irqs.size(); ++i) {
        const QueueIrq& q = pl.irqs[i];
        PlanStep s;
        s.phase = Phase::Irq;
        s.setting = SettingId::irq(q.irq);
        s.requested = requested;
        const std::string target =
            round_robin ? std::to_string(cpus[i % cpus.size()]) : format_cpulist(cpus);
        s.target = target;
        s.note = q.name + ": " + where;
        if (i == 0 && !irqbalance_note.empty()) s.note += "; " + irqbalance_note;
        if (!q.affinity) {
            s.kind = StepKind::Unsupported;
            s.note = "IRQ " + std::to_string(q.irq) + " (" + q.name +
                     ") has no readable smp_affinity_list";
        } else {
            s.current = *q.affinity;
            s.kind = *q.affinity == target ? StepKind::Unchanged : StepKind::Change;
        }
        ip.steps.push_back(std::move(s));
    }
}

// The smallest power of two >= n (the kernel rounds rps_sock_flow_entries so).
uint64_t pow2_at_least(uint64_t n) {
    uint64_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

// Device sections whose SET the driver facts judge.
bool judged_by_facts(Phase p) {
    return p == Phase::Channels || p == Phase::Rings || p == Phase::Pause || p == Phase::Coalesce;
}

}  // namespace

std::vector<std::string> plan_sysctls(const Profile& profile) {
    std::vector<std::string> out;
    for (const auto& s : profile.sysctl)
        out.push_back(s.name);
    if (profile.rps_flow_cnt && profile.rps_flow_cnt->value > 0)
        out.emplace_back(kRpsSockFlowEntries);
    for (auto& s : consulted_sysctls(profile))
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    return out;
}

std::vector<std::string> Plan::refusals() const {
    std::vector<std::string> out;
    for (const auto& i : interfaces) {
        if (!i.matches)
            out.push_back(i.id.name + ": " + i.match_note + " (use --force to apply anyway)");
        for (const auto& s : i.steps)
            if (s.kind == StepKind::Refused)
                out.push_back(i.id.name + ": " + s.requested + ": " + s.note);
    }
    for (const auto& s : system)
        if (s.kind == StepKind::Refused) out.push_back(s.requested + ": " + s.note);
    return out;
}

bool Plan::has_changes() const {
    auto changes = [](const std::vector<PlanStep>& steps) {
        return std::any_of(steps.begin(), steps.end(),
                           [](const PlanStep& s) { return s.kind == StepKind::Change; });
    };
    return changes(system) || std::any_of(interfaces.begin(), interfaces.end(),
                                          [&](const InterfacePlan& i) { return changes(i.steps); });
}

namespace {

// Sorts an interface's steps by phase, keeping their order within a phase:
// a handful of steps, so the order is found on their indices and each step
// moved once (std::stable_sort allocated a buffer and moved the large steps
// around for each of 512 interfaces, 4% of an apply).
void in_phase_order(std::vector<PlanStep>& steps) {
    const auto by_phase = [&](std::size_t a, std::size_t b) {
        return steps[a].phase < steps[b].phase;
    };
    std::vector<std::size_t> order(steps.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    if (std::is_sorted(order.begin(), order.end(), by_phase)) return;
    for (std::size_t i = 1; i < order.size(); ++i)  // insertion sort: stable
        for (std::size_t j = i; j > 0 && by_phase(order[j], order[j - 1]); --j)
            std::swap(order[j], order[j - 1]);
    std::vector<PlanStep> sorted;
    sorted.reserve(steps.size());
    for (std::size_t i : order)
        sorted.push_back(std::move(steps[i]));
    steps = std::move(sorted);
}

}  // namespace

Plan make_plan(const Profile& profile, std::span<const NicState> nics, const SystemState& system,
               const PlanOptions& opts) {
    Plan plan;
    plan.profile = profile.name;
    plan.profile_file = profile.file;
    int order = 0;
    uint64_t rfs_entries = 0;  // RFS flow entries the interfaces' queues ask for
    plan.interfaces.reserve(nics.size());
    FeatureExpansions expansions;  // the interfaces share the kernel's feature names
    for (const auto& st : nics) {
        InterfacePlan ip;
        ip.id = st.id;
        if (st.features && st.features->names)
            ip.feature_bits = static_cast<uint32_t>(st.features->names->size());
        if (!profile.match.empty() && !match_score(profile.match, st.id)) {
            ip.matches = opts.force;
            std::vector<std::string> want;
            if (!profile.match.drivers.empty())
                want.push_back("drivers " + join(profile.match.drivers, ", "));
            if (!profile.match.pci_ids.empty())
                want.push_back("PCI ids " + join(profile.match.pci_ids, ", "));
            if (!profile.match.interfaces.empty())
                want.push_back("interfaces " + join(profile.match.interfaces, ", "));
            ip.match_note = "profile " + profile.name + " is written for " + join(want, "; ") +
                            ", not " + st.id.name + " (driver " + st.id.driver.value_or("unknown") +
                            (st.id.pci_id ? ", PCI id " + *st.id.pci_id : "") + ")";
            if (opts.force) ip.warnings.push_back(ip.match_note + "; applying because of --force");
        }
        if (const auto& v = st.id.effective_driver_version()) {
            for (const auto& bad : profile.driver.bad_versions)
                if (bad == *v)
                    ip.warnings.push_back(st.id.driver.value_or("driver") + " " + bad +
                                          " is listed as bad by profile " + profile.name +
                                          ": tuning will not fix the driver");
        }
        auto res = resolve(profile, st, ResolveContext{opts.facts, &system, &expansions});
        ip.steps.reserve(res.settings.size() + res.features.size());
        for (const auto& r : res.settings)
            ip.steps.push_back(device_step(r, st));
        for (const auto& f : res.features)
            ip.steps.push_back(feature_step(f, st));
        private_flag_steps(profile, st, ip);
        irq_steps(profile, st, ip);
        queue_steps(profile, st, ip);
        rss_steps(profile, st, res, ip);  // [rss]
        if (profile.rps_flow_cnt && st.queues)
            rfs_entries += profile.rps_flow_cnt->value * st.queues->rx.size();
        const DriverFacts* df =
            opts.facts && st.id.driver ? opts.facts->find(*st.id.driver) : nullptr;
        const std::string driver = st.id.driver.value_or("this driver");
        if ((!df || !df->knows_settable() || st.id.module_version) &&
            std::any_of(ip.steps.begin(), ip.steps.end(), [](const PlanStep& s) {
                return s.kind == StepKind::Change && judged_by_facts(s.phase);
            }))
            ip.warnings.push_back(
                (df && df->knows_settable()
                     ? driver + " is an out-of-tree build (module version " +
                           st.id.module_version.value_or("?") +
                           "), which nictune's driver table does not describe"
                     : "nictune's driver table does not cover " + driver) +
                ": whether it accepts what it reports is unknown, the kernel will judge each "
                "value");
        if (profile.irq && std::any_of(ip.steps.begin(), ip.steps.end(), [](const PlanStep& s) {
                return s.kind == StepKind::Change && s.phase == Phase::Channels;
            }))
            ip.warnings.push_back(
                "the channel change makes the driver request its IRQs again, possibly under "
                "other numbers: [irq] is planned on the IRQs it has now; apply again afterwards "
                "(nictuned does) to place new ones");
        in_phase_order(ip.steps);
        for (auto& s : ip.steps)
            if (s.kind == StepKind::Change) s.order = ++order;
        plan.interfaces.push_back(std::move(ip));
    }

    for (const auto& req : profile.sysctl) {
        PlanStep s;
        s.phase = Phase::Sysctl;
        s.setting = SettingId::sysctl(req.name);
        s.requested = "sysctl." + req.name + (req.at_least ? " >= " : " = ") + req.value;
        s.target = req.value;
        auto it = std::find_if(system.sysctl.begin(), system.sysctl.end(),
                               [&](const SysctlValue& v) { return v.name == req.name; });
        if (it == system.sysctl.end() || !it->value) {
            s.kind = StepKind::Unsupported;
            s.note = "no such sysctl on this system (or in this network namespace)";
        } else if (req.at_least) {
            // A floor: each number raised to it, none lowered.
            s.current = *it->value;
            const auto raised = sysctl_at_least(*it->value, req.value);
            if (!raised) {
                s.kind = StepKind::Unsupported;
                s.note = "at_least compares numbers, and " + req.name + " is " +
                         quote(normalize_sysctl_value(*it->value)) + " (the floor: " + req.value +
                         ")";
            } else {
                s.target = *raised;
                s.kind = *raised == normalize_sysctl_value(*it->value) ? StepKind::Unchanged
                                                                       : StepKind::Change;
                if (*raised != normalize_sysctl_value(req.value))
                    s.note = "at least " + req.value + "; what is above it here is kept";
            }
        } else {
            s.current = *it->value;
            s.kind = normalize_sysctl_value(*it->value) == normalize_sysctl_value(req.value)
                         ? StepKind::Unchanged
                         : StepKind::Change;
        }
        plan.system.push_back(std::move(s));
    }
    // The global socket flow table behind rps_flow_cnt: raised to what the
    // interfaces' queues ask for, never lowered (other interfaces may need
    // it), unless the profile's [sysctl] names it itself.
    if (rfs_entries > 0 &&
        std::none_of(profile.sysctl.begin(), profile.sysctl.end(),
                     [](const SysctlRequest& r) { return r.name == kRpsSockFlowEntries; })) {
        PlanStep s;
        s.phase = Phase::Sysctl;
        s.setting = SettingId::sysctl(std::string(kRpsSockFlowEntries));
        const uint64_t want = pow2_at_least(rfs_entries);
        s.requested = "rps.flow_cnt = " + std::to_string(profile.rps_flow_cnt->value) + " (" +
                      std::string(kRpsSockFlowEntries) + " >= " + std::to_string(want) + ")";
        auto it = std::find_if(system.sysctl.begin(), system.sysctl.end(),
                               [](const SysctlValue& v) { return v.name == kRpsSockFlowEntries; });
        if (it == system.sysctl.end() || !it->value) {
            s.kind = StepKind::Unsupported;
            s.target = std::to_string(want);
            s.note = "no " + std::string(kRpsSockFlowEntries) +
                     " here: it is global and exists only in the initial network namespace";
        } else {
            s.current = *it->value;
            uint64_t cur = 0;
            const auto& t = *it->value;
            std::from_chars(t.data(), t.data() + t.size(), cur);
            s.target = std::to_string(std::max(cur, want));
            s.kind = cur >= want ? StepKind::Unchanged : StepKind::Change;
        }
        plan.system.push_back(std::move(s));
    }
    if (profile.tuned_profile) {
        PlanStep s;
        s.phase = Phase::Tuned;
        s.setting = SettingId::tuned();
        s.requested = "tuned.profile = " + *profile.tuned_profile;
        s.target = *profile.tuned_profile;
        const auto& t = system.tuned;
        if (t.source != TunedSource::Dbus) {
            s.kind = StepKind::Unsupported;
            s.current = t.active_profile ? Scalar{*t.active_profile} : Scalar{};
            s.note = t.source == TunedSource::NotInstalled
                         ? "tuned is not installed"
                         : "tuned is not running (" + t.detail + ")";
        } else {
            s.current = t.active_profile ? Scalar{*t.active_profile} : Scalar{};
            s.kind =
                t.active_profile == profile.tuned_profile ? StepKind::Unchanged : StepKind::Change;
        }
        plan.system.push_back(std::move(s));
    }
    for (auto& s : plan.system)
        if (s.kind == StepKind::Change) s.order = ++order;
    return plan;
}

}  // namespace nictune
