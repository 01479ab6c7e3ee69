#include "engine/audit.hpp"

#include <sys/utsname.h>

#include <algorithm>

#include "engine/health.hpp"
#include "engine/plan.hpp"
#include "engine/resolve.hpp"
#include "engine/translate.hpp"
#include "util/enum_names.hpp"
#include "util/strings.hpp"

namespace nictune {

const char* severity_name(Severity s) {
    static constexpr EnumNames<Severity> kNames{"info", "warn", "fail"};
    return kNames[s];
}

std::optional<int> match_score(const ProfileMatch& m, const Identity& id) {
    int score = 0;
    if (!m.drivers.empty()) {
        if (!id.driver ||
            std::find(m.drivers.begin(), m.drivers.end(), *id.driver) == m.drivers.end())
            return std::nullopt;
        score += 2;
    }
    if (!m.pci_ids.empty()) {
        if (!id.pci_id ||
            std::find(m.pci_ids.begin(), m.pci_ids.end(), *id.pci_id) == m.pci_ids.end())
            return std::nullopt;
        score += 4;
    }
    if (!m.interfaces.empty()) {
        if (std::none_of(m.interfaces.begin(), m.interfaces.end(),
                         [&](const std::string& g) { return glob_match(g, id.name); }))
            return std::nullopt;
        score += 1;
    }
    return score;
}

std::string match_reason(const ProfileMatch& m, const Identity& id) {
    std::vector<std::string> parts;
    if (!m.drivers.empty() && id.driver) parts.push_back("driver " + *id.driver);
    if (!m.pci_ids.empty() && id.pci_id) parts.push_back("PCI id " + *id.pci_id);
    if (!m.interfaces.empty()) parts.push_back("interface name " + id.name);
    if (parts.empty()) return "generic profile";
    return "matches " + join(parts, ", ");
}

std::optional<ProfileChoice> choose_profile(std::span<const Profile> profiles, const Identity& id) {
    const Profile* best = nullptr;
    int best_score = 0;
    for (const auto& p : profiles) {
        if (p.match.empty()) continue;
        auto s = match_score(p.match, id);
        if (!s) continue;
        auto better = [&] {
            if (!best) return true;
            if (*s != best_score) return *s > best_score;
            if (p.priority.value_or(0) != best->priority.value_or(0))
                return p.priority.value_or(0) > best->priority.value_or(0);
            return p.name < best->name;
        };
        if (better()) {
            best = &p;
            best_score = *s;
        }
    }
    if (!best) return std::nullopt;
    return ProfileChoice{std::make_shared<const Profile>(*best), match_reason(best->match, id)};
}

namespace {

std::string apply_fix(const Profile& p, const Identity& id) {
    return "nictunectl apply " + shell_word(p.name) + " " + shell_word(id.name);
}

void driver_findings(const NicState& state, const Profile* profile, const AuditContext& ctx,
                     std::vector<Finding>& out) {
    const auto& id = state.id;
    if (!id.driver) return;
    const auto& version = id.effective_driver_version();
    const DriverFacts* facts = ctx.facts ? ctx.facts->find(*id.driver) : nullptr;

    if (version && facts) {
        for (const auto& bad : facts->bad_versions) {
            if (bad.version != *version) continue;
            out.push_back(Finding{Severity::Fail, "driver.version", "not " + bad.version, *version,
                                  *id.driver + " " + *version + " is known bad: " + bad.reason,
                                  bad.fix});
        }
    }
    if (version && profile) {
        for (const auto& bad : profile->driver.bad_versions) {
            if (bad != *version) continue;
            if (facts && std::any_of(facts->bad_versions.begin(), facts->bad_versions.end(),
                                     [&](const BadVersion& b) { return b.version == bad; }))
                continue;  // already reported with the facts' reason
            out.push_back(
                Finding{Severity::Fail, "driver.version", "not " + bad, *version,
                        "profile " + profile->name + " lists " + *id.driver + " " + bad + " as bad",
                        "install a different " + *id.driver + " driver version"});
        }
        if (const auto& min = profile->driver.min_version) {
            const bool in_tree = !id.module_version && *version == ctx.kernel_release;
            if (in_tree) {
                out.push_back(
                    Finding{Severity::Info, "driver.version", ">= " + *min, *version,
                            *id.driver +
                                " is the kernel's in-tree driver (version = kernel release); "
                                "min_version " +
                                *min + " applies to out-of-tree builds",
                            ""});
            } else if (compare_versions(*version, *min) < 0) {
                out.push_back(Finding{Severity::Warn, "driver.version", ">= " + *min, *version,
                                      *id.driver + " " + *version +
                                          " is older than the profile's min_version " + *min,
                                      "install " + *id.driver + " " + *min + " or newer"});
            }
        }
    }

    // What rx-usecs means on drivers that express adaptive moderation
    // through it (no adaptive-rx switch): explained, and "off" warned about.
    if (auto usecs = state.values.get(Key::CoalRxUsecs);
        usecs && !state.values.has(Key::CoalAdaptiveRx)) {
        const DriverRule* rule = find_rule(*id.driver, Key::CoalAdaptiveRx, 1);
        const bool profile_sets = profile && (profile->setting(Key::CoalRxUsecs) ||
                                              profile->setting(Key::CoalAdaptiveRx));
        const std::string* mode = facts ? facts->rx_usecs_mode(*usecs) : nullptr;
        if (*usecs == 0 && rule && rule->action == RuleAction::Rewrite &&
            rule->to == Key::CoalRxUsecs) {
            if (!profile_sets) {
                std::string note =
                    facts && !facts->coalesce_note.empty() ? " (" + facts->coalesce_note + ")" : "";
                out.push_back(
                    Finding{Severity::Warn, "coalesce.rx_usecs", rule->to_value, *usecs,
                            "interrupt moderation is off: one interrupt per packet" + note,
                            "a profile with [coalesce] adaptive_rx = true (rx_usecs " +
                                std::to_string(rule->to_value) + " on " + *id.driver + ")"});
            }
        } else if (mode) {
            out.push_back(Finding{Severity::Info, "coalesce.rx_usecs", Scalar{}, *usecs,
                                  "rx-usecs " + std::to_string(*usecs) + " on " + *id.driver +
                                      ": " + *mode + "; " + *id.driver +
                                      " has no adaptive-rx switch",
                                  ""});
        } else if (rule && rule->action == RuleAction::Rewrite && *usecs == rule->to_value) {
            out.push_back(Finding{Severity::Info, "coalesce.rx_usecs", Scalar{}, *usecs,
                                  "adaptive interrupt moderation: " + std::string(rule->why), ""});
        }
    }
}

void profile_findings(const NicState& state, const Profile& profile, const AuditContext& ctx,
                      std::vector<Finding>& out) {
    const auto& id = state.id;
    const std::string fix = apply_fix(profile, id);
    auto res = resolve(profile, state, ResolveContext{ctx.facts, ctx.system});
    for (const auto& r : res.settings) {
        const std::string req = key_path(r.requested);
        const Scalar want_req =
            r.target.is_max ? Scalar{std::string("max")} : scalar_of(r.requested, r.target.value);
        switch (r.resolution) {
            case Resolution::Native:
            case Resolution::Translated:
            case Resolution::Adjusted:
            case Resolution::Covered: {
                auto actual = state.values.get(r.key);
                const Scalar want = scalar_of(r.key, r.value);
                const Scalar have = actual ? scalar_of(r.key, *actual) : Scalar{};
                std::string via =
                    r.resolution == Resolution::Native
                        ? ""
                        : " (" + req + " = " + to_string(want_req) + ": " + r.note + ")";
                if (!actual || *actual != r.value) {
                    out.push_back(Finding{Severity::Warn, key_path(r.key), want, have,
                                          key_path(r.key) + " is " + to_string(have) +
                                              ", profile " + profile.name + " wants " +
                                              to_string(want) + via,
                                          fix});
                } else if (r.resolution == Resolution::Translated) {
                    out.push_back(Finding{Severity::Info, req, want_req, have,
                                          req + " = " + to_string(want_req) + " is " +
                                              key_path(r.key) + " = " + to_string(want) +
                                              " here: " + r.note,
                                          ""});
                }
                break;
            }
            case Resolution::Unsupported:
                out.push_back(Finding{Severity::Info, req, want_req, Scalar{},
                                      req + " is not supported here: " + r.note, ""});
                break;
            case Resolution::OutOfRange:
            case Resolution::NotSettable:
            case Resolution::DriverRefuses:
                out.push_back(Finding{
                    Severity::Fail, req, want_req,
                    state.values.get(r.key) ? scalar_of(r.key, *state.values.get(r.key)) : Scalar{},
                    "profile " + profile.name + " asks " + req + " = " + to_string(want_req) +
                        ", which this device refuses: " + r.note,
                    "change " + req + " in " + profile.file});
                break;
            case Resolution::Conflict:
                out.push_back(Finding{
                    Severity::Fail, req, want_req, Scalar{},
                    "profile " + profile.name + " contradicts itself on this driver: " + r.note,
                    "remove one of the two settings from " + profile.file});
                break;
        }
    }
    for (const auto& f : res.features) {
        const std::string key = "features." + (f.name.empty() ? f.requested : f.name);
        switch (f.status) {
            case FeatureStatus::NotOnDevice:
                out.push_back(Finding{Severity::Info, key, f.on, Scalar{},
                                      "feature " + f.requested + " does not exist on this device",
                                      ""});
                break;
            case FeatureStatus::Fixed:
                out.push_back(Finding{Severity::Info, key, f.on, !f.on, f.why, ""});
                break;
            case FeatureStatus::Blocked:
                // Nothing nictune can set changes it: said, not counted as a problem.
                out.push_back(Finding{Severity::Info, key, f.on, state.features->is_active(f.index),
                                      f.name + " is blocked: " + f.why, ""});
                break;
            case FeatureStatus::Ok: {
                bool active = state.features->is_active(f.index);
                if (active != f.on) {
                    std::string alias = f.requested != f.name ? " (from " + f.requested + ")" : "";
                    out.push_back(Finding{Severity::Warn, key, f.on, active,
                                          f.name + " is " + (active ? "on" : "off") + ", profile " +
                                              profile.name + " wants it " + (f.on ? "on" : "off") +
                                              alias,
                                          fix});
                }
                break;
            }
        }
    }
    if (ctx.system) {
        for (const auto& s : profile.sysctl) {
            auto it = std::find_if(ctx.system->sysctl.begin(), ctx.system->sysctl.end(),
                                   [&](const SysctlValue& v) { return v.name == s.name; });
            const std::string key = "sysctl." + s.name;
            if (it == ctx.system->sysctl.end() || !it->value) {
                out.push_back(Finding{
                    Severity::Info, key, s.value, Scalar{},
                    s.name + " does not exist on this kernel (or in this network namespace)", ""});
                continue;
            }
            if (s.at_least) {
                // Met when no number is below the floor's.
                const auto raised = sysctl_at_least(*it->value, s.value);
                if (!raised || *raised != normalize_sysctl_value(*it->value))
                    out.push_back(Finding{Severity::Warn, key, s.value, *it->value,
                                          s.name + " is " + normalize_sysctl_value(*it->value) +
                                              ", profile " + profile.name + " wants at least " +
                                              s.value,
                                          fix});
            } else if (normalize_sysctl_value(*it->value) != normalize_sysctl_value(s.value)) {
                out.push_back(Finding{Severity::Warn, key, s.value, *it->value,
                                      s.name + " is " + *it->value + ", profile " + profile.name +
                                          " wants " + s.value,
                                      fix});
            }
        }
        if (profile.tuned_profile) {
            const auto& t = ctx.system->tuned;
            if (t.source == TunedSource::NotInstalled) {
                out.push_back(Finding{Severity::Info, "tuned.profile", *profile.tuned_profile,
                                      Scalar{},
                                      "tuned is not installed; profile " + profile.name +
                                          " wants tuned profile " + *profile.tuned_profile,
                                      "apt-get install tuned"});
            } else if (t.active_profile != profile.tuned_profile) {
                out.push_back(Finding{Severity::Warn, "tuned.profile", *profile.tuned_profile,
                                      t.active_profile ? Scalar{*t.active_profile} : Scalar{},
                                      "tuned profile is " + t.active_profile.value_or("none") +
                                          ", profile " + profile.name + " wants " +
                                          *profile.tuned_profile,
                                      fix});
            }
        }
    }
}

}  // namespace

std::vector<Finding> audit_interface(const NicState& state, const Profile* profile,
                                     const AuditContext& ctx) {
    std::vector<Finding> out;
    driver_findings(state, profile, ctx, out);
    if (profile) profile_findings(state, *profile, ctx, out);
    for (const auto& p : state.problems)
        out.push_back(Finding{
            Severity::Warn, std::string(section_info(p.section).name), Scalar{}, Scalar{},
            "could not read " + std::string(section_info(p.section).name) + ": " + p.message, ""});
    std::stable_sort(out.begin(), out.end(),
                     [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
    return out;
}

Result<AuditReport> run_audit(Backend& backend, const profile::Store& store, const FactsBook& facts,
                              const AuditRequest& req) {
    AuditReport report;
    std::shared_ptr<const Profile> named;
    if (req.profile) {
        auto p = store.load(*req.profile);
        if (!p) return std::unexpected(p.error());
        named = std::make_shared<const Profile>(std::move(*p));
    }
    auto nics = backend.read_interfaces(ReadRequest{req.interfaces, req.include_virtual});
    if (!nics) return std::unexpected(nics.error());

    std::vector<Profile> candidates;
    if (!named && !nics->empty()) {
        for (auto& e : store.list()) {
            if (e.profile)
                candidates.push_back(*e.profile);
            else if (e.error)
                report.warnings.push_back("profile " + e.name + " skipped: " + e.error->str());
        }
    }
    std::vector<std::string> sysctls;
    for (auto& st : *nics) {
        InterfaceAudit a;
        a.state = std::move(st);
        if (named)
            a.profile = ProfileChoice{named, "named with --profile"};
        else
            a.profile = choose_profile(candidates, a.state.id);
        if (a.profile)
            for (const auto& name : plan_sysctls(*a.profile->profile))
                if (std::find(sysctls.begin(), sysctls.end(), name) == sysctls.end())
                    sysctls.push_back(name);
        report.interfaces.push_back(std::move(a));
    }
    auto sys = backend.read_system(SystemQuery{sysctls, true, true});
    if (!sys) return std::unexpected(sys.error());
    report.system = std::move(*sys);

    utsname u{};
    uname(&u);
    AuditContext ctx{&facts, &report.system, u.release};
    for (auto& a : report.interfaces)
        a.findings = audit_interface(a.state, a.profile ? a.profile->profile.get() : nullptr, ctx);
    if (req.health) add_health(backend, facts, req, report);
    return report;
}

Severity worst_severity(std::span<const Finding> findings) {
    Severity w = Severity::Info;
    for (const auto& f : findings)
        w = std::max(w, f.severity);
    return w;
}

bool has_problems(const AuditReport& report) {
    if (report.health && worst_severity(report.health->findings) >= Severity::Warn) return true;
    return std::any_of(
        report.interfaces.begin(), report.interfaces.end(),
        [](const InterfaceAudit& i) { return worst_severity(i.findings) >= Severity::Warn; });
}

}  // namespace nictune
