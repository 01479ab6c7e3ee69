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
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "engine/plan.hpp"
#include "engine/state_store.hpp"
#include "util/boxed.hpp"

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
    Scalar actual;       // read back after applying (verify)
    Boxed<Error> error;  // Failed: errno, context, kernel message (most steps: none)
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
    Pending,     // applied and verified, held open (HeldTransaction): a commit or an abort decides
};
const char* tx_result_name(TxResult r);

struct InterfaceResult {
    std::string name;
    std::vector<StepResult> steps;
    std::vector<std::string> warnings;
};

// The outcome of a check of the applied result beyond the kernel's word
// (ApplyOptions::after_verify, e.g. nictunectl's probe of the path to a peer).
enum class CheckOutcome : uint8_t {
    NotReached,  // not run: a step failed first
    Passed,
    Failed,   // the transaction was undone; `error` says why
    Pending,  // the transaction is held open until the check's verdict comes (commit or abort)
};
const char* check_outcome_name(CheckOutcome o);

struct CheckResult {
    std::string name;  // what is checked ("peer 10.0.0.2")
    CheckOutcome outcome = CheckOutcome::NotReached;
    std::optional<Error> error;  // Failed: why
};

struct ApplyResult {
    std::string transaction;
    std::string profile;
    TxResult result = TxResult::Applied;
    std::vector<InterfaceResult> interfaces;
    std::vector<StepResult> system;
    std::vector<RestoreResult> rollback;  // what the rollback restored (or could not)
    std::vector<std::string> refusals;
    std::optional<Error> error;        // the first failure, or why nothing was done
    std::optional<CheckResult> check;  // with an after_verify hook or when held
    [[nodiscard]] std::vector<std::string> left() const;  // settings not restored
};

class HeldTransaction;

struct ApplyOptions {
    bool dry_run = false;
    bool keep_going = false;  // do not roll back after a failure
    // Test hook: called before each SET (1-based change number); lets tests
    // fail or kill the process at a chosen step.
    std::function<void(int change)> before_change;
    // The step between "verify" and "commit": called once every change is
    // applied and verified (not after a failed step, nor in a dry run or a
    // refused plan), with the locks held and the journal on disk, so a
    // crash during it is recovered like one mid-transaction. An error undoes
    // everything the transaction changed, as a failed step does (also with
    // keep_going), and is the check's outcome (ApplyResult::check, named
    // `check_name`) and the result's error. The engine knows nothing of what
    // is checked: nictunectl probes the path to a peer here.
    std::function<Result<void>(const ApplyResult& so_far)> after_verify;
    std::string check_name;
    // Set: a transaction that applied and verified (and passed after_verify)
    // is not committed but handed over here, open (result Pending, check
    // Pending): its commit or abort comes later (nictuned's confirmed apply:
    // the client probes the peer in its own process).
    std::unique_ptr<HeldTransaction>* hold = nullptr;
};

ApplyResult apply_plan(Backend& backend, StateStore& store, const Plan& plan,
                       const ApplyOptions& opts = {});
// The same, consuming the plan: its steps move into the result instead of
// being copied, and its interfaces are released once the transaction's
// records name them (the moved-from plan has no interfaces).
ApplyResult apply_plan(Backend& backend, StateStore& store, Plan&& plan,
                       const ApplyOptions& opts = {});

// A transaction between "verify" and "commit" (ApplyOptions::hold): its
// interfaces' locks held, its journal on disk (a crash now is recovered as
// one mid-transaction: the originals are restored). It refers to the
// Backend and StateStore it was applied with, which must outlive it.
// Destroyed without commit() or abort(), it releases the locks and keeps
// the journal, as a crash would: the next transaction on its interfaces,
// their rollback or nictuned's start restores the originals.
class HeldTransaction {
  public:
    struct State;
    explicit HeldTransaction(std::unique_ptr<State> state);
    ~HeldTransaction();
    HeldTransaction(const HeldTransaction&) = delete;
    HeldTransaction& operator=(const HeldTransaction&) = delete;

    // As it was handed over (result Pending).
    [[nodiscard]] const ApplyResult& result() const;
    [[nodiscard]] std::vector<std::string> interfaces() const;
    // The check passed: the interface records are saved (status applied),
    // the journal removed and the locks released. Result Applied.
    ApplyResult commit();
    // It did not (or nobody confirmed it): everything the transaction
    // changed is restored, newest first, as after a failed step; `why` is the
    // check's error and the result's. Result RolledBack or Partial.
    ApplyResult abort(Error why);
    // commit() or abort() was called.
    [[nodiscard]] bool resolved() const { return resolved_; }

  private:
    std::unique_ptr<State> s_;
    bool resolved_ = false;
};

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
