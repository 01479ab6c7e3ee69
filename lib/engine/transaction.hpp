// Transactions: apply a plan safely and undo it.
//
//   save originals (state store, atomically, before the first change)
//   -> SET only what differs, one message per section, in the plan's order
//   -> re-read and verify every step
//   -> on a failure, restore everything this transaction changed, in reverse
//
// Every step ends as exactly one outcome, and every failure carries errno and
// the kernel's extack text.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "engine/plan.hpp"
#include "engine/state_store.hpp"

namespace nictune {

enum class Outcome : uint8_t {
    Unchanged,    // already at the target
    Applied,      // set and read back as asked
    Translated,   // set in the driver's own form (see the step's note)
    Adjusted,     // set; the driver settled on a nearby value (read back differs, accepted)
    Unsupported,  // the device or the system does not offer it
    Failed,       // the kernel refused it, or it did not take effect
    NotReached,   // not attempted: an earlier step failed
    RolledBack,   // applied, then undone because a later step failed
    Refused,      // outside the device's limits or contradictory: nothing was changed
    Blocked,      // a feature the kernel keeps at the other value (the note says why)
};
const char* outcome_name(Outcome o);

struct StepResult {
    PlanStep step;
    Outcome outcome = Outcome::NotReached;
    Scalar actual;               // read back after applying (verify)
    std::optional<Error> error;  // Failed: errno, context, kernel message
};

struct RestoreResult {
    std::string interface;  // empty for system settings
    std::string key;
    Scalar value;  // restored to
    bool ok = false;
    std::string message;  // why not, or a note ("interface is gone")
};

enum class TxResult : uint8_t {
    Applied,     // everything applied and verified (or nothing to do)
    DryRun,      // plan only
    Refused,     // nothing changed: plan refused (limits, [match]), or originals could not be saved
    RolledBack,  // a step failed; everything this transaction changed was restored
    Partial,     // a step failed and the rollback did not complete (see `left`)
};
const char* tx_result_name(TxResult r);

struct InterfaceResult {
    std::string name;
    std::vector<StepResult> steps;
    std::vector<std::string> warnings;
};

struct ApplyResult {
    std::string transaction;
    std::string profile;
    TxResult result = TxResult::Applied;
    std::vector<InterfaceResult> interfaces;
    std::vector<StepResult> system;
    std::vector<RestoreResult> rollback;  // what the rollback restored (or could not)
    std::vector<std::string> refusals;
    std::optional<Error> error;  // the first failure, or why nothing was done
    [[nodiscard]] std::vector<std::string> left() const;  // settings not restored
};

struct ApplyOptions {
    bool dry_run = false;
    bool keep_going = false;  // do not roll back after a failure
    // Test hook: called before each SET (1-based change number); lets tests
    // fail or kill the process at a chosen step.
    std::function<void(int change)> before_change;
};

ApplyResult apply_plan(Backend& backend, StateStore& store, const Plan& plan,
                       const ApplyOptions& opts = {});

struct RollbackResult {
    // The device's current name: the name asked for, resolved as the kernel
    // does (an alternative name gives the device's name); as asked when the
    // device is not here.
    std::string interface;
    std::string profile;
    TxResult result = TxResult::RolledBack;
    std::vector<RestoreResult> restored;
    std::optional<Error> error;
    bool nothing_saved = false;  // no record for the interface: nothing to do
};

// Restores the saved originals of an interface (and of the system settings it
// was the last user of), verifies them, and forgets the record. `name` may
// be the interface's name or one of its alternative names.
RollbackResult rollback_interface(Backend& backend, StateStore& store, const std::string& name);
// The same for several interfaces at once: one read, one restore (pipelined)
// and one verification read for all; a result per name, in order.
std::vector<RollbackResult> rollback_interfaces(Backend& backend, StateStore& store,
                                                const std::vector<std::string>& names);

std::string new_transaction_id();

}  // namespace nictune
