// apply_plan, step by step: settle what needs no kernel, lock and replay,
// order the changes, save the originals, write, verify and classify, then
// check, hold or commit, or undo.
#include <algorithm>
#include <string>
#include <utility>

#include "engine/transaction.hpp"
#include "engine/tx_steps.hpp"

namespace nictune {

using tx::Write;

namespace {

// Where a step lives: interface index (or kSystem) and step index.
struct StepRef {
    std::size_t iface;
    std::size_t step;
};
constexpr std::size_t kSystem = static_cast<std::size_t>(-1);

}  // namespace

// An applied transaction before its commit: what the commit or the undo
// needs (apply_plan's state once its originals are saved).
struct HeldTransaction::State {
    Backend& be;
    StateStore& store;
    ApplyResult res;
    std::vector<StateLock> locks;
    std::vector<StepRef> refs;  // per write: its step in res
    std::vector<Write> writes;
    tx::Executed run;
    std::vector<InterfaceRecord> records;
    SystemRecord sysrec, sys_before;
    Journal journal;
    bool failed = false;
    // A record changed after the journal was written (beyond its status):
    // the commit encodes the records again instead of restamping the
    // journal's lines.
    bool records_changed = false;

    StepResult& step(StepRef r) {
        return r.iface == kSystem ? res.system[r.step] : res.interfaces[r.iface].steps[r.step];
    }
};

namespace {

using TxState = HeldTransaction::State;

// ---- Before any change: the outcomes that need no kernel.

void settle_without_kernel(StepResult& s) {
    using K = StepKind;
    const K k = s.step.kind;
    if (k == K::Change || k == K::Covered) return;  // the kernel decides
    s.outcome = k == K::Unchanged     ? Outcome::Unchanged
                : k == K::Unsupported ? Outcome::Unsupported
                : k == K::Refused     ? Outcome::Refused
                                      : Outcome::Blocked;
    if (k == K::Unchanged || k == K::Blocked) s.actual = s.step.current;
}

// The result before any change, its steps moved out of the plan (whose
// steps are empty afterwards; apply_plan then releases its interfaces).
ApplyResult first_result(Plan& plan, std::string transaction) {
    ApplyResult res;
    res.transaction = std::move(transaction);
    res.profile = plan.profile;
    res.interfaces.reserve(plan.interfaces.size());
    for (auto& ip : plan.interfaces) {
        InterfaceResult ir{ip.id.name, {}, ip.warnings};
        ir.steps.reserve(ip.steps.size());
        for (auto& s : ip.steps)
            ir.steps.push_back(StepResult{std::move(s), Outcome::NotReached, {}, {}});
        std::vector<PlanStep>().swap(ip.steps);
        res.interfaces.push_back(std::move(ir));
    }
    for (auto& s : plan.system)
        res.system.push_back(StepResult{std::move(s), Outcome::NotReached, {}, {}});
    plan.system.clear();
    for (auto& ir : res.interfaces)
        for (auto& s : ir.steps)
            settle_without_kernel(s);
    for (auto& s : res.system)
        settle_without_kernel(s);
    return res;
}

ApplyResult refused(ApplyResult res, Error why) {
    res.result = TxResult::Refused;
    res.error = std::move(why);
    return res;
}

// Why nothing was done, about the first step the plan refused (the one
// the refusals list first).
Error plan_refused(const Plan& plan) {
    Error e{Errc::InvalidArgument, 0, "", "the plan was refused; nothing was changed", {}};
    for (const auto& i : plan.interfaces) {
        if (!i.matches) return std::move(e).about(i.id.name);
        for (const auto& st : i.steps)
            if (st.kind == StepKind::Refused)
                return std::move(e).about(i.id.name, st.setting.path());
    }
    for (const auto& st : plan.system)
        if (st.kind == StepKind::Refused) return std::move(e).about("", st.setting.path());
    return e;
}

Error nothing_changed(Error e) {
    e.message += "; nothing was changed";
    return e;
}

// ---- Lock and replay.

// Serialises against any other transaction on these interfaces; a
// transaction on them that died left its journal: its records (and
// originals) go into the interface files before they are read.
Result<std::vector<StateLock>> lock_and_replay(StateStore& store,
                                               const std::vector<std::string>& names) {
    std::vector<StateLock> locks;
    locks.reserve(names.size());
    const std::vector<std::string_view> views(names.begin(), names.end());
    for (auto& l : store.lock_each(views)) {
        if (!l) return std::unexpected(nothing_changed(l.error()));
        locks.push_back(std::move(*l));
    }
    if (auto ok = store.replay_journals(names); !ok)
        return std::unexpected(nothing_changed(ok.error()));
    return locks;
}

// ---- Order.

const PlanStep& plan_step(const Plan& plan, StepRef r) {
    return r.iface == kSystem ? plan.system[r.step] : plan.interfaces[r.iface].steps[r.step];
}

// The changes in apply order: phase by phase across interfaces (each
// interface keeps its own order), so that the same phase on many
// interfaces goes out as one batch.
std::vector<StepRef> changes_in_apply_order(const Plan& plan) {
    std::vector<StepRef> refs;
    for (std::size_t i = 0; i < plan.interfaces.size(); ++i) {
        const auto& steps = plan.interfaces[i].steps;
        for (std::size_t k = 0; k < steps.size(); ++k)
            if (steps[k].kind == StepKind::Change) refs.push_back({i, k});
    }
    for (std::size_t k = 0; k < plan.system.size(); ++k)
        if (plan.system[k].kind == StepKind::Change) refs.push_back({kSystem, k});
    tx::order_by_phase(
        refs, [&](StepRef r) { return plan_step(plan, r).setting.section; }, tx::Direction::Apply);
    return refs;
}

std::vector<Write> writes_of(const Plan& plan, const std::vector<StepRef>& refs) {
    std::vector<Write> writes;
    writes.reserve(refs.size());
    for (StepRef r : refs) {
        const PlanStep& s = plan_step(plan, r);
        if (r.iface == kSystem) {
            writes.push_back(Write{std::nullopt, s.setting, s.target, 0, 0});
            continue;
        }
        const auto& ip = plan.interfaces[r.iface];
        writes.push_back(Write{NicRef{ip.id.ifindex, ip.id.name}, s.setting, s.target,
                               s.feature_index, ip.feature_bits});
    }
    return writes;
}

// ---- Save originals.

// The interface's record for this transaction (status applying): the
// originals it had, and those of the settings this one changes first.
InterfaceRecord record_for(const InterfacePlan& ip, std::optional<InterfaceRecord>& prev,
                           const std::string& profile, const std::string& transaction) {
    InterfaceRecord rec = prev ? std::move(*prev) : InterfaceRecord{};
    // A record of another device under the same name (renamed, replaced)
    // holds no originals of this one.
    if (prev && rec.mac != ip.id.mac) rec = InterfaceRecord{};
    rec.name = ip.id.name;
    rec.ifindex = ip.id.ifindex;
    rec.mac = ip.id.mac;
    rec.perm_mac = ip.id.perm_mac;
    rec.bus_info = ip.id.bus_info;
    rec.profile = profile;
    rec.transaction = transaction;
    rec.status = TxStatus::Applying;
    rec.updated_at = tx::unix_now();
    rec.targets.clear();
    rec.targets.reserve(ip.steps.size());
    std::vector<SavedValue> first;  // the originals, of the keys not saved before
    first.reserve(ip.steps.size());
    for (const auto& s : ip.steps) {
        if (s.kind != StepKind::Change && s.kind != StepKind::Unchanged &&
            s.kind != StepKind::Covered)
            continue;
        std::string path = s.setting.path();
        if (s.kind == StepKind::Change) first.push_back(SavedValue{path, s.current});
        rec.targets.push_back(SavedValue{std::move(path), s.target});
    }
    rec.add_originals(std::move(first));
    return rec;
}

// The system settings the plan changes or keeps: their originals (when
// first changed) and these interfaces among their owners.
void own_system_settings(const Plan& plan, SystemRecord& sysrec) {
    for (const auto& s : plan.system) {
        if (s.kind != StepKind::Change && s.kind != StepKind::Unchanged) continue;
        SystemEntry* e = sysrec.find(s.setting.path());
        if (!e && s.kind == StepKind::Change) {
            sysrec.entries.push_back(SystemEntry{s.setting.path(), s.current, {}});
            e = &sysrec.entries.back();
        }
        if (!e) continue;
        for (const auto& ip : plan.interfaces)
            if (std::find(e->owners.begin(), e->owners.end(), ip.id.name) == e->owners.end())
                e->owners.push_back(ip.id.name);
    }
}

struct Originals {
    std::vector<InterfaceRecord> records;
    SystemRecord sysrec, sys_before;
    Journal journal;
};

Error cannot_save(Error e) {
    e.message = "cannot save the original settings (" + e.message + "); nothing was changed";
    return e;
}

// Saves the originals before the first change: the journal (the interface
// files are not written before the transaction ends) and system.json.
Result<Originals> save_originals(StateStore& store, const Plan& plan,
                                 const std::vector<std::string>& names,
                                 const std::string& transaction) {
    // A record written for another MAC address is dropped by record_for()
    // anyway; passing the addresses spares parsing it.
    std::vector<std::string_view> macs;
    macs.reserve(plan.interfaces.size());
    for (const auto& ip : plan.interfaces)
        macs.push_back(ip.id.mac);
    auto saved = store.load_interfaces(names, macs);
    if (!saved) return std::unexpected(nothing_changed(saved.error()));
    auto sysrec = store.load_system();
    if (!sysrec) return std::unexpected(nothing_changed(sysrec.error()));
    Originals o;
    for (std::size_t i = 0; i < plan.interfaces.size(); ++i)
        o.records.push_back(record_for(plan.interfaces[i], (*saved)[i], plan.profile, transaction));
    o.sys_before = *sysrec;
    o.sysrec = std::move(*sysrec);
    own_system_settings(plan, o.sysrec);
    auto journal = store.begin_journal(transaction, o.records);
    if (!journal) return std::unexpected(cannot_save(journal.error()));
    // Untouched when the profile has no system settings (the common case).
    if (!(o.sysrec == o.sys_before))
        if (auto ok = store.save_system(o.sysrec); !ok) {
            journal->finish();
            return std::unexpected(cannot_save(ok.error()));
        }
    o.journal = std::move(*journal);
    return o;
}

// ---- Write.

// One message per interface and section, in apply order. A write the
// kernel refused fails its step; a skipped IRQ is unsupported, with no
// target for drift checks. True when a step failed.
bool write_changes(TxState& s, const ApplyOptions& opts) {
    s.run = tx::execute(s.be, s.writes, !opts.keep_going, opts.before_change);
    bool failed = false;
    for (std::size_t i = 0; i < s.writes.size(); ++i) {
        if (!s.run.attempted[i] || !s.run.errors[i]) continue;
        auto& sr = s.step(s.refs[i]);
        if (tx::skipped_irq(s.writes[i], s.run.errors[i])) {
            sr.outcome = Outcome::Unsupported;
            sr.step.note = s.run.errors[i]->message;
            if (s.refs[i].iface != kSystem) {
                std::erase_if(
                    s.records[s.refs[i].iface].targets,
                    [key = s.writes[i].id.path()](const SavedValue& v) { return v.key == key; });
                s.records_changed = true;
            }
            continue;
        }
        sr.outcome = Outcome::Failed;
        sr.error = s.run.errors[i];
        if (!s.res.error) s.res.error = s.run.errors[i];
        failed = true;
    }
    return failed;
}

// ---- Verify and classify.

// A feature SET the kernel took (the wanted bit is the target) while it
// keeps the feature at the other value: why, or nullopt.
std::optional<std::string> kernel_keeps_feature(const Write& w, const NicState* nic,
                                                const Scalar& target) {
    const bool* on = std::get_if<bool>(&target);
    if (w.id.section != Section::Features || !on || !nic || !nic->features) return std::nullopt;
    const auto& fs = *nic->features;
    auto idx = fs.index_of(w.id.name);
    if (!idx || fs.is_wanted(*idx) != *on || fs.is_active(*idx) == *on) return std::nullopt;
    return "the kernel keeps " + w.id.name + (*on ? " off" : " on") +
           " although the request stands (wanted " + (*on ? "on" : "off") +
           "): a feature it depends on, an upper device (a bridge or bond) or XDP overrides it";
}

void add_note(PlanStep& step, const std::string& note) {
    step.note = (step.note.empty() ? "" : step.note + "; ") + note;
}

// The outcome of a write the kernel accepted, from the value read back
// (`nic`: the interface as read back, null for a system setting). False
// when it failed.
bool classify_read_back(StepResult& sr, const Write& w, const NicState* nic,
                        const tx::Reread& after) {
    sr.actual = after.value_of(w, nic);
    if (tx::same_value(w.id, sr.actual, sr.step.target)) {
        sr.outcome = sr.step.resolution == Resolution::Translated ? Outcome::Translated
                     : sr.step.resolution == Resolution::Adjusted ? Outcome::Adjusted
                                                                  : Outcome::Applied;
    } else if (const auto why = kernel_keeps_feature(w, nic, sr.step.target)) {
        // Requested and accepted, but the kernel holds it (a dependency, an
        // upper device, XDP): not a failure to undo.
        sr.outcome = Outcome::Blocked;
        add_note(sr.step, *why);
    } else if (!tx::same_value(w.id, sr.actual, sr.step.current) &&
               !std::holds_alternative<std::monostate>(sr.actual) &&
               w.id.section != Section::Features && w.id.section != Section::Tuned) {
        sr.outcome = Outcome::Adjusted;
        add_note(sr.step,
                 "asked " + to_string(sr.step.target) + ", the driver set " + to_string(sr.actual));
    } else {
        sr.outcome = Outcome::Failed;
        sr.error =
            Error{Errc::Kernel,
                  0,
                  (w.nic ? w.nic->name + ": " : "") + w.id.path(),
                  "the request was accepted but the value reads back as " + to_string(sr.actual),
                  {},
                  w.nic ? w.nic->name : "",
                  w.id.path()};
        return false;
    }
    return true;
}

// Re-reads what was written and classifies every step that was sent and
// not refused. True when a step failed.
bool verify_changes(TxState& s, tx::Reread& after) {
    bool failed = false;
    for (std::size_t i = 0; i < s.writes.size(); ++i) {
        if (!s.run.attempted[i]) continue;
        auto& sr = s.step(s.refs[i]);
        if (sr.outcome == Outcome::Failed || sr.outcome == Outcome::Unsupported) continue;
        const Write& w = s.writes[i];
        const NicState* nic = w.nic ? after.find(w.nic->ifindex) : nullptr;
        if (w.nic && !nic) {
            sr.outcome = Outcome::Failed;
            sr.error = after.nics_error ? *after.nics_error
                                        : Error{Errc::NoSuchInterface,
                                                0,
                                                w.nic->name,
                                                "interface vanished during the apply",
                                                {}};
            sr.error = std::move(*sr.error).about(w.nic->name, w.id.path());
        } else if (classify_read_back(sr, w, nic, after)) {
            continue;
        }
        if (!s.res.error && sr.error) s.res.error = *sr.error;
        failed = true;
    }
    return failed;
}

// Covered steps end as their covering value does. The interface's record
// (one per planned interface, in the plan's order) names the device.
void settle_covered(TxState& s, tx::Reread& after) {
    for (std::size_t i = 0; i < s.res.interfaces.size(); ++i) {
        for (auto& sr : s.res.interfaces[i].steps) {
            if (sr.step.kind != StepKind::Covered) continue;
            const InterfaceRecord& rec = s.records[i];
            const NicState* nic = after.find(rec.ifindex);
            if (!nic) {
                auto fresh = s.be.read_interfaces(ReadRequest{{rec.name}, true});
                if (fresh && !fresh->empty()) after.add(std::move(fresh->front()));
                nic = after.find(rec.ifindex);
            }
            sr.actual = value_in(sr.step.setting, nic, nullptr);
            sr.outcome = sr.actual == sr.step.target ? Outcome::Translated : Outcome::Failed;
        }
    }
}

// ---- The check between verify and commit (nictunectl's peer probe).

// True when it ran and failed: that undoes everything.
bool run_check(TxState& s, const ApplyOptions& opts) {
    if (!opts.after_verify) return false;
    if (s.failed) {
        s.res.check = CheckResult{opts.check_name, CheckOutcome::NotReached, {}};
        return false;
    }
    s.res.check = CheckResult{opts.check_name, CheckOutcome::Passed, {}};
    auto ok = opts.after_verify(s.res);
    if (ok) return false;
    s.res.check->outcome = CheckOutcome::Failed;
    s.res.check->error = ok.error();
    if (!s.res.error) s.res.error = std::move(ok.error());
    return true;
}

// ---- Undo, commit, hold.

// The writes to undo, newest first, with the values before the
// transaction; `undone` gets each one's index into s.writes.
std::vector<Write> undo_writes(TxState& s, std::vector<std::size_t>& undone) {
    std::vector<Write> undo;
    for (std::size_t i = s.writes.size(); i-- > 0;) {
        // A write the kernel refused (or never saw) did not change
        // anything. One that got no answer (Errc::Io: a timeout, a lost
        // reply) may have: it is undone too.
        if (!s.run.attempted[i] || (s.run.errors[i] && s.run.errors[i]->code != Errc::Io)) continue;
        Write w = s.writes[i];
        w.value = s.step(s.refs[i]).step.current;
        undo.push_back(std::move(w));
        undone.push_back(i);
    }
    return undo;
}

// Applied then undone: rolled_back (or, if the undo failed, what it was: it
// is still in effect, and listed in left()); never sent: not_reached.
void mark_undone(TxState& s, const std::vector<std::size_t>& undone) {
    for (std::size_t i = 0; i < s.writes.size(); ++i)
        if (!s.run.attempted[i]) s.step(s.refs[i]).outcome = Outcome::NotReached;
    for (std::size_t j = 0; j < undone.size(); ++j) {
        auto& sr = s.step(s.refs[undone[j]]);
        if (s.res.rollback[j].ok && sr.outcome != Outcome::Failed) sr.outcome = Outcome::RolledBack;
    }
}

// Everything is as before: the interface files were never written, the
// system record goes back and the journal goes.
void forget_undone(TxState& s) {
    if (!(s.sysrec == s.sys_before))
        if (auto ok = s.store.save_system(s.sys_before); !ok) {
            // The settings are back, system.json is not. The journal stays:
            // the next transaction on these interfaces, their rollback or
            // nictuned's start replays it, and that puts the owners of the
            // system settings right.
            for (auto& ir : s.res.interfaces)
                ir.warnings.push_back("the settings are restored but the state directory is not (" +
                                      ok.error().str() +
                                      "); the next transaction on this interface, its rollback or "
                                      "nictuned's start completes it");
            return;
        }
    s.journal.finish();
}

// Undoes the transaction, newest first, to the values before it. Returns
// s.res (a caller that owns s moves it out: 512 interfaces' steps).
ApplyResult& undo_all(TxState& s) {
    std::vector<std::size_t> undone;  // index into writes, per undo entry
    s.res.rollback = tx::restore(s.be, undo_writes(s, undone));
    const bool complete = std::all_of(s.res.rollback.begin(), s.res.rollback.end(),
                                      [](const RestoreResult& r) { return r.ok; });
    s.res.result = complete ? TxResult::RolledBack : TxResult::Partial;
    mark_undone(s, undone);
    if (complete) {
        forget_undone(s);
        return s.res;
    }
    for (auto& r : s.records) {
        r.status = TxStatus::Failed;
        r.updated_at = tx::unix_now();
    }
    // Kept when the records cannot be written: replay puts them (applying)
    // in place, and recovery restores the originals.
    if (s.store.save_interfaces(s.records)) s.journal.finish();
    return s.res;
}

// Saves the interface records (applied, or failed with keep_going) and
// removes the journal. Returns s.res, as undo_all() does.
ApplyResult& commit_all(TxState& s) {
    for (auto& r : s.records) {
        r.status = s.failed ? TxStatus::Failed : TxStatus::Applied;
        r.updated_at = tx::unix_now();
    }
    const std::string_view written = s.records_changed ? "" : s.journal.record_lines();
    if (auto ok = s.store.save_interfaces(s.records, written); !ok) {
        if (!s.res.error) s.res.error = ok.error();
    } else {
        s.journal.finish();
    }
    s.res.result = s.failed ? TxResult::Partial : TxResult::Applied;
    return s.res;
}

// Hands the transaction over open (ApplyOptions::hold): result pending.
ApplyResult hand_over(TxState&& s, const ApplyOptions& opts) {
    if (!s.res.check) s.res.check = CheckResult{opts.check_name, CheckOutcome::Pending, {}};
    s.res.check->outcome = CheckOutcome::Pending;
    s.res.result = TxResult::Pending;
    ApplyResult out = s.res;
    *opts.hold = std::make_unique<HeldTransaction>(std::make_unique<TxState>(std::move(s)));
    return out;
}

std::vector<std::string> interface_names(const Plan& plan) {
    std::vector<std::string> names;
    names.reserve(plan.interfaces.size());
    for (const auto& ip : plan.interfaces)
        names.push_back(ip.id.name);
    return names;
}

}  // namespace

HeldTransaction::HeldTransaction(std::unique_ptr<State> state) : s_(std::move(state)) {}
HeldTransaction::~HeldTransaction() = default;

const ApplyResult& HeldTransaction::result() const {
    return s_->res;
}

std::vector<std::string> HeldTransaction::interfaces() const {
    std::vector<std::string> out;
    for (const auto& i : s_->res.interfaces)
        out.push_back(i.name);
    return out;
}

ApplyResult HeldTransaction::commit() {
    if (resolved_) return s_->res;
    resolved_ = true;
    if (s_->res.check) s_->res.check->outcome = CheckOutcome::Passed;
    ApplyResult r = commit_all(*s_);
    s_->locks.clear();
    return r;
}

ApplyResult HeldTransaction::abort(Error why) {
    if (resolved_) return s_->res;
    resolved_ = true;
    if (!s_->res.check) s_->res.check = CheckResult{};
    s_->res.check->outcome = CheckOutcome::Failed;
    s_->res.check->error = why;
    s_->res.error = std::move(why);
    ApplyResult r = undo_all(*s_);
    s_->locks.clear();
    return r;
}

ApplyResult apply_plan(Backend& be, StateStore& store, const Plan& plan, const ApplyOptions& opts) {
    return apply_plan(be, store, Plan(plan), opts);
}

// The plan's steps are read (refusals, order, writes, originals) before they
// move into the result: an apply of 512 interfaces copied 4,608 of them.
ApplyResult apply_plan(Backend& be, StateStore& store, Plan&& plan, const ApplyOptions& opts) {
    std::string transaction = new_transaction_id();
    if (auto refusals = plan.refusals(); !refusals.empty()) {
        Error why = plan_refused(plan);
        ApplyResult res = first_result(plan, std::move(transaction));
        res.refusals = std::move(refusals);
        return refused(std::move(res), std::move(why));
    }
    if (opts.dry_run) {
        ApplyResult res = first_result(plan, std::move(transaction));
        res.result = TxResult::DryRun;
        return res;
    }
    // The interfaces' names: for the locks, the journal replay and the
    // saved records.
    const auto names = interface_names(plan);
    auto locks = lock_and_replay(store, names);
    if (!locks)
        return refused(first_result(plan, std::move(transaction)), std::move(locks.error()));
    auto refs = changes_in_apply_order(plan);
    auto writes = writes_of(plan, refs);
    auto originals = save_originals(store, plan, names, transaction);
    if (!originals)
        return refused(first_result(plan, std::move(transaction)), std::move(originals.error()));
    // The kernel's notifications of these changes verify them, or a read
    // where that costs less (see reread).
    tx::Observing observing(be, writes);
    // From here the plan's steps are the result's, and the records name the
    // interfaces: the plan's identities go before the read back needs memory
    // (512 interfaces: 410 KB less at the transaction's live peak).
    TxState s{be,
              store,
              first_result(plan, std::move(transaction)),
              std::move(*locks),
              std::move(refs),
              std::move(writes),
              {},
              std::move(originals->records),
              std::move(originals->sysrec),
              std::move(originals->sys_before),
              std::move(originals->journal),
              false};
    std::vector<InterfacePlan>().swap(plan.interfaces);
    s.failed = write_changes(s, opts);
    if (!s.failed || opts.keep_going) {
        tx::Reread after = tx::reread(be, s.writes);
        s.failed |= verify_changes(s, after);
        settle_covered(s, after);
    }
    if (run_check(s, opts) || (s.failed && !opts.keep_going)) return std::move(undo_all(s));
    if (!s.failed && opts.hold) return hand_over(std::move(s), opts);
    return std::move(commit_all(s));
}

}  // namespace nictune
