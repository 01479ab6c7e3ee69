#include "engine/resolve.hpp"

#include <algorithm>
#include <array>

#include "engine/translate.hpp"
#include "model/value.hpp"
#include "profile/features.hpp"
#include "util/enum_names.hpp"
#include "util/find.hpp"

namespace nictune {

const char* resolution_name(Resolution r) {
    static constexpr EnumNames<Resolution> kNames{"native",      "translated",   "covered",
                                                  "unsupported", "out_of_range", "conflict",
                                                  "adjusted",    "not_settable", "driver_refuses"};
    return kNames[r];
}

namespace {

bool will_set(Resolution r) {
    return r == Resolution::Native || r == Resolution::Translated || r == Resolution::Adjusted;
}

constexpr std::string_view kLro = "rx-lro";
constexpr std::array<std::string_view, 2> kForwarding = {"net.ipv4.ip_forward",
                                                         "net.ipv6.conf.all.forwarding"};

// The forwarding sysctl that is on, if any.
const SysctlValue* forwarding_on(const SystemState* sys) {
    if (!sys) return nullptr;
    return find_first(sys->sysctl, [](const SysctlValue& s) {
        return std::find(kForwarding.begin(), kForwarding.end(), s.name) != kForwarding.end() &&
               s.value && s.value->find_first_not_of("0 \n") != std::string::npos;
    });
}

void check_limits(ResolvedSetting& r, const NicState& state) {
    const auto& info = key_info(r.key);
    if (r.key == Key::LinkMtu) {
        auto lo = state.values.get(Key::LinkMinMtu);
        auto hi = state.values.get(Key::LinkMaxMtu);
        // A maximum of 0 means "no limit" (lo, software links).
        if ((lo && r.value < *lo) || (hi && *hi > 0 && r.value > *hi)) {
            r.resolution = Resolution::OutOfRange;
            r.note = "the device accepts MTU " + (lo ? std::to_string(*lo) : std::string("?")) +
                     ".." + (hi ? std::to_string(*hi) : std::string("?"));
        }
        return;
    }
    if (info.limit != info.key && !r.target.is_max) {
        if (auto max = state.values.get(info.limit); max && r.value > *max) {
            r.resolution = Resolution::OutOfRange;
            r.note = "the device's maximum is " + std::to_string(*max) + " (" +
                     key_path(info.limit) + ")";
        }
    }
}

// The driver facts' view of one requested value: refused when the driver
// does not take the key or the value, adjusted when it stores another.
void apply_driver_facts(ResolvedSetting& r, const NicState& state, const DriverFacts& df) {
    const auto cur = state.values.get(r.key);
    const bool changes = !cur || *cur != r.value;
    if (!changes) return;
    if (!df.settable(r.key)) {
        r.resolution = Resolution::NotSettable;
        r.note = df.accepts_text(key_info(r.key).section);
        return;
    }
    const ValueRule* rule = df.value_rule(r.key);
    if (!rule) return;
    if (!rule->accepts(r.value)) {
        r.resolution = Resolution::OutOfRange;
        r.note = df.driver + " accepts " + key_path(r.key) + " " + rule->describe() + " (" +
                 rule->source + ")";
        return;
    }
    const uint64_t settled = rule->settles_on(r.value);
    if (settled == r.value) return;
    std::string why = df.driver + " stores " + key_path(r.key) + " " + std::to_string(r.value) +
                      " as " + std::to_string(settled) + ": " + rule->describe() + " (" +
                      rule->source + ")";
    r.value = settled;
    if (r.resolution == Resolution::Native) {
        r.resolution = Resolution::Adjusted;
        r.note = std::move(why);
    } else {
        r.note += "; " + why;
    }
}

}  // namespace

const std::vector<std::string>& FeatureExpansions::expand(
    const std::string& name, const std::shared_ptr<const FeatureNames>& names) {
    auto [it, fresh] = done_.try_emplace({names.get(), name});
    if (fresh) {
        it->second = features::expand(name, *names);
        if (std::find(keep_.begin(), keep_.end(), names) == keep_.end()) keep_.push_back(names);
    }
    return it->second;
}

namespace {

void resolve_features(const Profile& profile, const NicState& state, FeatureExpansions* expansions,
                      Resolved& out) {
    std::vector<std::string> expanded;
    for (const auto& f : profile.features) {
        if (!state.features || !state.features->names) {
            out.features.push_back(
                ResolvedFeature{f.name, "", 0, f.on, FeatureStatus::NotOnDevice, {}, false});
            continue;
        }
        if (!expansions) expanded = features::expand(f.name, *state.features->names);
        const auto& names =
            expansions ? expansions->expand(f.name, state.features->names) : expanded;
        if (names.empty()) {
            out.features.push_back(
                ResolvedFeature{f.name, "", 0, f.on, FeatureStatus::NotOnDevice, {}, false});
            continue;
        }
        std::size_t added = 0;
        for (const auto& n : names) {
            auto idx = state.features->index_of(n);
            if (!idx) continue;
            ResolvedFeature rf{f.name, n, *idx, f.on, FeatureStatus::Ok, {}, false};
            if (state.features->is_fixed(*idx) && state.features->is_active(*idx) != f.on)
                rf.status = FeatureStatus::Fixed;
            // An alias asks only for what can change: ethtool leaves fixed members alone.
            if (rf.status == FeatureStatus::Fixed && names.size() > 1 && f.name != n) continue;
            // A later request for the same kernel name wins.
            auto it = std::find_if(out.features.begin(), out.features.end(),
                                   [&](const ResolvedFeature& x) { return x.name == n; });
            if (it != out.features.end())
                *it = rf;
            else
                out.features.push_back(std::move(rf));
            ++added;
        }
        if (added == 0) {
            // Every member of the alias is fixed at the other value.
            auto idx = state.features->index_of(names.front()).value_or(0);
            out.features.push_back(
                ResolvedFeature{f.name, names.front(), idx, f.on, FeatureStatus::Fixed, {}, false});
        }
    }
}

// Why features cannot be had: fixed ones (the reason), and those the kernel
// keeps at the other value (Blocked): LRO on a forwarding host, and those
// whose request (wanted) already stands while the kernel keeps them off or
// on (a dependency such as scatter-gather, an upper device such as a
// bridge, XDP). The last is certain only when the plan changes no other
// feature of the device, which might lift the cause; otherwise the SET is
// sent and verification reports it.
void block_features(const NicState& state, const ResolveContext& ctx, const DriverFacts* df,
                    Resolved& out) {
    const std::string driver = state.id.driver.value_or("the driver");
    const auto changing = [&](const ResolvedFeature& f) {
        return f.status == FeatureStatus::Ok && state.features->is_wanted(f.index) != f.on;
    };
    const auto others_change = [&](const ResolvedFeature& self) {
        return std::any_of(out.features.begin(), out.features.end(),
                           [&](const auto& f) { return &f != &self && changing(f); });
    };
    const SysctlValue* fwd = forwarding_on(ctx.system);
    for (auto& f : out.features) {
        if (f.status == FeatureStatus::Fixed) {
            f.why = f.name + " is fixed " + (state.features->is_active(f.index) ? "on" : "off") +
                    " on this device (" + driver + " cannot change it)";
            continue;
        }
        if (f.status != FeatureStatus::Ok) continue;
        const bool active = state.features->is_active(f.index);
        const bool wanted = state.features->is_wanted(f.index);
        if (f.on && f.name == kLro && fwd) {
            f.status = FeatureStatus::Blocked;
            f.why = "IP forwarding is on (" + fwd->name + " = " + *fwd->value +
                    "): the kernel turns LRO off on a forwarding host (dev_disable_lro, "
                    "net/core/dev.c), and aggregated packets must not be forwarded";
            continue;
        }
        if (active != f.on && wanted == f.on && !others_change(f)) {
            f.status = FeatureStatus::Blocked;
            f.why = std::string("the kernel keeps ") + f.name + (active ? " on" : " off") +
                    " although it is requested (wanted " + (wanted ? "on" : "off") + ", active " +
                    (active ? "on" : "off") +
                    "): a feature it depends on, an upper device (a bridge or bond) or XDP "
                    "overrides it";
            continue;
        }
        if (df && active != f.on)
            if (auto r = df->resets("features." + f.name)) f.resets_link = *r;
    }
}

}  // namespace

std::vector<std::string> consulted_sysctls(const Profile& profile) {
    std::vector<std::string> out;
    if (std::any_of(profile.features.begin(), profile.features.end(),
                    [](const FeatureRequest& f) { return f.on; }))
        out.assign(kForwarding.begin(), kForwarding.end());
    return out;
}

Resolved resolve(const Profile& profile, const NicState& state, const ResolveContext& ctx) {
    Resolved out;
    const std::string driver = state.id.driver.value_or("");
    const DriverFacts* df = ctx.facts ? ctx.facts->find(driver) : nullptr;
    // The table describes the in-tree driver: an out-of-tree build (it has a
    // module version; no in-tree driver here declares one) is its own code.
    const DriverFacts* table =
        df && df->knows_settable() && !state.id.module_version ? df : nullptr;

    for (const auto& info : device_keys()) {
        const auto& t = profile.setting(info.key);
        if (!t) continue;
        ResolvedSetting r{info.key, *t, info.key, t->value, Resolution::Native, {}, false, {}};
        if (const KeyAlias* alias = find_alias(driver, info.key); alias && !t->is_max) {
            r.key = alias->to;
            r.resolution = Resolution::Translated;
            r.note = std::string(alias->why);
        }
        if (state.values.has(r.key)) {
            if (t->is_max) {
                if (auto max = state.values.get(info.limit)) {
                    r.value = *max;
                    r.note = "max = " + std::to_string(*max);
                } else {
                    r.resolution = Resolution::Unsupported;
                    r.note = "the device reports no maximum for " + key_path(info.key);
                }
            }
            if (will_set(r.resolution)) check_limits(r, state);
        } else if (const DriverRule* rule = find_rule(driver, info.key, t->value);
                   rule && !t->is_max) {
            if (rule->action == RuleAction::Rewrite) {
                r.key = rule->to;
                r.value = rule->to_value;
                r.resolution = Resolution::Translated;
                r.note = std::string(rule->why);
            } else {
                const auto& explicit_to = profile.setting(rule->to);
                if (explicit_to && explicit_to->value != rule->to_value) {
                    r.key = rule->to;
                    r.value = explicit_to->value;
                    r.resolution = Resolution::Covered;
                    r.note = "covered by " + key_path(rule->to) + " = " +
                             std::to_string(explicit_to->value) + " (" + std::string(rule->why) +
                             ")";
                } else {
                    r.resolution = Resolution::Unsupported;
                    r.note = std::string(rule->why);
                }
            }
        } else {
            r.resolution = Resolution::Unsupported;
            r.note = driver.empty() ? "the device does not report " + key_path(info.key)
                                    : driver + " does not report " + key_path(info.key);
            if (table && !table->settable(r.key))
                r.note += "; " + table->accepts_text(key_info(r.key).section);
        }
        if (table && will_set(r.resolution)) apply_driver_facts(r, state, *table);
        out.settings.push_back(std::move(r));
    }

    // Two requests that end on the same device key must agree.
    for (std::size_t i = 0; i < out.settings.size(); ++i) {
        auto& a = out.settings[i];
        if (!will_set(a.resolution)) continue;
        for (std::size_t j = i + 1; j < out.settings.size(); ++j) {
            auto& b = out.settings[j];
            if (!will_set(b.resolution)) continue;
            if (a.key != b.key || a.value == b.value) continue;
            auto& t = a.resolution == Resolution::Translated ? a : b;
            const auto& other = &t == &a ? b : a;
            t.resolution = Resolution::Conflict;
            t.note = key_path(t.requested) + " = " +
                     to_string(scalar_of(t.requested, t.target.value)) + " means " +
                     key_path(t.key) + " = " + std::to_string(t.value) + " on " + driver +
                     ", but the profile also sets " + key_path(other.requested) + " = " +
                     std::to_string(other.value);
        }
    }
    // Settings on the same device key as a rewrite are applied once: keep
    // the explicit one, mark translations that agree with it as covered.
    for (auto& a : out.settings) {
        if (a.resolution != Resolution::Translated) continue;
        for (const auto& b : out.settings)
            if (&a != &b &&
                (b.resolution == Resolution::Native || b.resolution == Resolution::Adjusted) &&
                b.key == a.key && b.value == a.value) {
                a.resolution = Resolution::Covered;
                a.note = "covered by " + key_path(b.requested) + " = " + std::to_string(b.value) +
                         " (" + a.note + ")";
            }
    }
    // Two translations to the same key/value: apply once.
    for (std::size_t i = 0; i < out.settings.size(); ++i) {
        auto& a = out.settings[i];
        if (a.resolution != Resolution::Translated) continue;
        for (std::size_t j = i + 1; j < out.settings.size(); ++j) {
            auto& b = out.settings[j];
            if (b.resolution == Resolution::Translated && b.key == a.key && b.value == a.value) {
                b.resolution = Resolution::Covered;
                b.note = "covered by " + key_path(a.requested) + " (" + b.note + ")";
            }
        }
    }

    resolve_features(profile, state, ctx.expansions, out);

    // What the device will have once the plan is applied, for the checks
    // that depend on the other requests.
    const Outlook after{state,
                        [&](Key k) -> std::optional<uint64_t> {
                            for (const auto& r : out.settings)
                                if (r.key == k && will_set(r.resolution)) return r.value;
                            return state.values.get(k);
                        },
                        [&](std::string_view name) -> std::optional<bool> {
                            for (const auto& f : out.features)
                                if (f.name == name && f.status == FeatureStatus::Ok) return f.on;
                            if (!state.features) return std::nullopt;
                            return state.features->active_by_name(name);
                        }};
    for (auto& r : out.settings) {
        if (!will_set(r.resolution)) continue;
        const auto cur = state.values.get(r.key);
        if (cur && *cur == r.value) continue;
        if (table) {
            if (const DriverCheck* c = refusing_check(driver, r.key, r.value, after)) {
                r.resolution = Resolution::DriverRefuses;
                r.note = std::string(c->why);
                continue;
            }
        }
        r.resets_link =
            table ? table->resets(key_path(r.key)).value_or(false) : key_info(r.key).resets_link;
        if (table && cur && !r.resets_link)
            if (const ResetCheck* c = resetting_check(driver, r.key, *cur, r.value, after)) {
                r.resets_link = true;
                r.reset_note = std::string(c->why);
            }
    }
    if (state.features) block_features(state, ctx, table, out);
    return out;
}

}  // namespace nictune
