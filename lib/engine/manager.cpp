#include "engine/manager.hpp"

#include <signal.h>

#include <cstdlib>

namespace nictune {

Manager::Manager(Backend& backend, profile::Store store, StateStore state, FactsBook facts)
    : backend_(backend),
      store_(std::move(store)),
      state_(std::move(state)),
      facts_(std::move(facts)) {}

Result<AuditReport> Manager::audit(const AuditRequest& req) {
    return run_audit(backend_, store_, facts_, req);
}

uint32_t sections_for(const Profile& profile) {
    uint32_t sections = ReadRequest::bit(Section::Link);
    for (const auto& k : device_keys())
        if (profile.setting(k.key)) sections |= ReadRequest::bit(k.section);
    if (!profile.features.empty()) sections |= ReadRequest::bit(Section::Features);
    if (!profile.private_flags.empty()) sections |= ReadRequest::bit(Section::PrivateFlags);
    if (profile.rps_cpus || profile.rps_flow_cnt) sections |= ReadRequest::bit(Section::Rps);
    if (profile.xps_cpus) sections |= ReadRequest::bit(Section::Xps);
    if (profile.rss_queues || !profile.rss_hash.empty())  // [rss]
        sections |= ReadRequest::bit(Section::Rss);
    if (profile.irq) sections |= ReadRequest::bit(Section::Irq);
    return sections;
}

Result<std::vector<NicState>> Manager::targets(const Profile& profile, const ApplyRequest& req) {
    if (req.interfaces.empty() && profile.match.empty())
        return fail(
            Errc::InvalidArgument, "",
            "profile " + profile.name + " has no [match]: name the interfaces to apply it to");
    // The families the profile touches, with the driver's identity
    // (translation rules, [match]).
    ReadRequest read{req.interfaces, false};
    read.sections = sections_for(profile);
    read.irq_effective = false;  // the plan compares smp_affinity_list only
    auto nics = backend_.read_interfaces(read);
    if (!nics) return std::unexpected(nics.error());
    if (req.interfaces.empty()) {
        std::erase_if(*nics, [&](const NicState& n) { return !match_score(profile.match, n.id); });
        if (nics->empty())
            return fail(Errc::NoSuchInterface, "",
                        "no NIC here matches profile " + profile.name + "'s [match]");
    }
    return nics;
}

Result<Plan> Manager::plan_for(const Profile& profile, std::vector<NicState> nics,
                               const ApplyRequest& req) {
    auto sys = backend_.read_system(
        SystemQuery{plan_sysctls(profile), false, profile.tuned_profile.has_value()});
    if (!sys) return std::unexpected(sys.error());
    return make_plan(profile, nics, *sys, PlanOptions{req.force, &facts_});
}

Result<Plan> Manager::plan(const Profile& profile, const ApplyRequest& req) {
    auto nics = targets(profile, req);
    if (!nics) return std::unexpected(nics.error());
    return plan_for(profile, std::move(*nics), req);
}

Result<Plan> Manager::plan(const ApplyRequest& req) {
    auto profile = store_.load(req.profile);
    if (!profile) return std::unexpected(profile.error());
    return plan(*profile, req);
}

namespace {

// Test-only pause points, so that crash tests can kill the process at a
// known step (it stops itself with SIGSTOP):
// NICTUNE_TEST_PAUSE_AT_CHANGE=N just before the N-th SET of a transaction,
// NICTUNE_TEST_PAUSE_BEFORE_COMMIT=1 once every change is made and
// verified, before the outcome is written to the state directory.
int test_pause_at() {
    static const int n = [] {
        const char* v = std::getenv("NICTUNE_TEST_PAUSE_AT_CHANGE");
        return v ? std::atoi(v) : 0;
    }();
    return n;
}

bool test_pause_before_commit() {
    static const bool on = [] {
        const char* v = std::getenv("NICTUNE_TEST_PAUSE_BEFORE_COMMIT");
        return v && std::atoi(v) > 0;
    }();
    return on;
}

}  // namespace

Result<ApplyResult> Manager::apply(const Profile& profile, const ApplyRequest& req,
                                   const ApplyOptions& hooks) {
    auto nics = targets(profile, req);
    if (!nics) return std::unexpected(nics.error());
    return apply_to(profile, std::move(*nics), req, hooks);
}

Result<ApplyResult> Manager::apply_to(const Profile& profile, std::vector<NicState> nics,
                                      const ApplyRequest& req, const ApplyOptions& hooks) {
    auto p = plan_for(profile, std::move(nics), req);
    if (!p) return std::unexpected(p.error());
    ApplyOptions opts = hooks;
    if (!opts.before_change && test_pause_at() > 0)
        opts.before_change = [](int change) {
            if (change == test_pause_at()) raise(SIGSTOP);
        };
    if (!opts.after_verify && test_pause_before_commit())
        opts.after_verify = [](const ApplyResult&) {
            raise(SIGSTOP);
            return Result<void>{};
        };
    opts.dry_run = req.dry_run;
    opts.keep_going = req.keep_going;
    return apply_plan(backend_, state_, std::move(*p), opts);
}

Result<ApplyResult> Manager::apply(const ApplyRequest& req, const ApplyOptions& hooks) {
    auto profile = store_.load(req.profile);
    if (!profile) return std::unexpected(profile.error());
    return apply(*profile, req, hooks);
}

RollbackResult Manager::rollback(const std::string& interface) {
    return rollback_interface(backend_, state_, interface);
}

std::vector<RollbackResult> Manager::rollback(const std::vector<std::string>& interfaces) {
    return rollback_interfaces(backend_, state_, interfaces);
}

std::vector<RollbackResult> Manager::recover() {
    std::vector<RollbackResult> out;
    std::vector<Error> errors;
    // Transactions that died before writing their interface files left
    // journals: their records are what recovery works from.
    if (auto ok = state_.replay_journals(); !ok) errors.push_back(std::move(ok.error()));
    for (const auto& rec : state_.list(&errors)) {
        if (rec.status != TxStatus::Applying) continue;
        auto r = rollback_interface(backend_, state_, rec.name);
        r.profile = rec.profile;
        out.push_back(std::move(r));
    }
    for (auto& e : errors) {
        RollbackResult r;
        r.result = TxResult::Refused;
        r.error = std::move(e);
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace nictune
