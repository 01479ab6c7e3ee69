// The operations nictune offers (audit, plan, apply, rollback, profiles),
// over one Backend, one profile store and one state directory. nictunectl
// --direct and nictuned's D-Bus handlers both call this: one engine.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "engine/audit.hpp"
#include "engine/plan.hpp"
#include "engine/transaction.hpp"
#include "profile/facts.hpp"
#include "profile/loader.hpp"

namespace nictune {

struct ApplyRequest {
    std::string profile;
    std::vector<std::string> interfaces;  // empty: every NIC the profile's [match] fits
    bool force = false;
    bool dry_run = false;
    bool keep_going = false;
};

// The ethtool families (ReadRequest::sections) that planning `profile`
// needs: Link always (MTU limits), and each section it sets.
uint32_t sections_for(const Profile& profile);

class Manager {
  public:
    Manager(Backend& backend, profile::Store store, StateStore state, FactsBook facts);

    Result<AuditReport> audit(const AuditRequest& req);
    // The plan for applying a profile (reads the devices, changes nothing).
    Result<Plan> plan(const ApplyRequest& req);
    // Errors are user errors (unknown profile or interface: nothing changed);
    // every other outcome is in the ApplyResult.
    Result<ApplyResult> apply(const ApplyRequest& req, const ApplyOptions& hooks = {});
    // The same with a profile loaded earlier (the daemon keeps the bound
    // profiles it validated, so a broken file on disk cannot replace them).
    Result<Plan> plan(const Profile& profile, const ApplyRequest& req);
    Result<ApplyResult> apply(const Profile& profile, const ApplyRequest& req,
                              const ApplyOptions& hooks = {});
    // The same on interfaces the caller has just read (no second read).
    Result<ApplyResult> apply_to(const Profile& profile, std::vector<NicState> nics,
                                 const ApplyRequest& req, const ApplyOptions& hooks = {});
    RollbackResult rollback(const std::string& interface);
    // Several at once (one read, one pipelined restore); a result per name.
    std::vector<RollbackResult> rollback(const std::vector<std::string>& interfaces);
    // Transactions a crash left unfinished ("applying" in the state
    // directory): their originals are restored. Corrupt state files are
    // reported (result Refused with the error) and left alone.
    std::vector<RollbackResult> recover();

    [[nodiscard]] const profile::Store& profiles() const { return store_; }
    [[nodiscard]] StateStore& state() { return state_; }
    [[nodiscard]] const FactsBook& facts() const { return facts_; }
    Backend& backend() { return backend_; }

  private:
    Result<std::vector<NicState>> targets(const Profile& profile, const ApplyRequest& req);
    Result<Plan> plan_for(const Profile& profile, std::vector<NicState> nics,
                          const ApplyRequest& req);

    Backend& backend_;
    profile::Store store_;
    StateStore state_;
    FactsBook facts_;
};

}  // namespace nictune
