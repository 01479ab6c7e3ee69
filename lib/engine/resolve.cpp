#include "engine/resolve.hpp"

#include <algorithm>

#include "engine/translate.hpp"
#include "model/value.hpp"
#include "profile/features.hpp"

namespace nictune {

const char* resolution_name(Resolution r) {
    switch (r) {
        case Resolution::Native:
            return "native";
        case Resolution::Translated:
            return "translated";
        case Resolution::Covered:
            return "covered";
        case Resolution::Unsupported:
            return "unsupported";
        case Resolution::OutOfRange:
            return "out_of_range";
        case Resolution::Conflict:
            return "conflict";
    }
    return "unsupported";
}

namespace {

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

}  // namespace

Resolved resolve(const Profile& profile, const NicState& state) {
    Resolved out;
    const std::string driver = state.id.driver.value_or("");

    for (const auto& info : device_keys()) {
        const auto& t = profile.setting(info.key);
        if (!t) continue;
        ResolvedSetting r{info.key, *t, info.key, t->value, Resolution::Native, {}};
        if (state.values.has(info.key)) {
            if (t->is_max) {
                if (auto max = state.values.get(info.limit)) {
                    r.value = *max;
                    r.note = "max = " + std::to_string(*max);
                } else {
                    r.resolution = Resolution::Unsupported;
                    r.note = "the device reports no maximum for " + key_path(info.key);
                }
            }
            if (r.resolution == Resolution::Native) check_limits(r, state);
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
        }
        out.settings.push_back(std::move(r));
    }

    // Two requests that end on the same device key must agree.
    for (std::size_t i = 0; i < out.settings.size(); ++i) {
        auto& a = out.settings[i];
        if (a.resolution != Resolution::Native && a.resolution != Resolution::Translated) continue;
        for (std::size_t j = i + 1; j < out.settings.size(); ++j) {
            auto& b = out.settings[j];
            if (b.resolution != Resolution::Native && b.resolution != Resolution::Translated)
                continue;
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
            if (&a != &b && b.resolution == Resolution::Native && b.key == a.key &&
                b.value == a.value) {
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

    for (const auto& f : profile.features) {
        if (!state.features || !state.features->names) {
            out.features.push_back(
                ResolvedFeature{f.name, "", 0, f.on, FeatureStatus::NotOnDevice, f.loc});
            continue;
        }
        auto names = features::expand(f.name, *state.features->names);
        if (names.empty()) {
            out.features.push_back(
                ResolvedFeature{f.name, "", 0, f.on, FeatureStatus::NotOnDevice, f.loc});
            continue;
        }
        std::size_t added = 0;
        for (const auto& n : names) {
            auto idx = state.features->index_of(n);
            if (!idx) continue;
            ResolvedFeature rf{f.name, n, *idx, f.on, FeatureStatus::Ok, f.loc};
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
                ResolvedFeature{f.name, names.front(), idx, f.on, FeatureStatus::Fixed, f.loc});
        }
    }
    return out;
}

}  // namespace nictune
