#include "engine/transaction.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "sysinfo/procsys.hpp"
#include "util/strings.hpp"

namespace nictune {

const char* outcome_name(Outcome o) {
    switch (o) {
        case Outcome::Unchanged:
            return "unchanged";
        case Outcome::Applied:
            return "applied";
        case Outcome::Translated:
            return "translated";
        case Outcome::Adjusted:
            return "adjusted";
        case Outcome::Unsupported:
            return "unsupported";
        case Outcome::Failed:
            return "failed";
        case Outcome::NotReached:
            return "not_reached";
        case Outcome::RolledBack:
            return "rolled_back";
        case Outcome::Refused:
            return "refused";
        case Outcome::Blocked:
            return "blocked";
    }
    return "failed";
}

const char* tx_result_name(TxResult r) {
    switch (r) {
        case TxResult::Applied:
            return "applied";
        case TxResult::DryRun:
            return "dry_run";
        case TxResult::Refused:
            return "refused";
        case TxResult::RolledBack:
            return "rolled_back";
        case TxResult::Partial:
            return "partial";
        case TxResult::Pending:
            return "pending";
    }
    return "partial";
}

const char* check_outcome_name(CheckOutcome o) {
    switch (o) {
        case CheckOutcome::NotReached:
            return "not_reached";
        case CheckOutcome::Passed:
            return "passed";
        case CheckOutcome::Failed:
            return "failed";
        case CheckOutcome::Pending:
            return "pending";
    }
    return "failed";
}

std::vector<std::string> ApplyResult::left() const {
    std::vector<std::string> out;
    for (const auto& r : rollback)
        if (!r.ok)
            out.push_back((r.interface.empty() ? "" : r.interface + ": ") + r.key + " (" +
                          r.message + ")");
    return out;
}

std::string new_transaction_id() {
    static std::atomic<unsigned> counter{0};
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return std::string(buf) + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

namespace {

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Phase phase_of_setting(const SettingId& id) {
    return phase_of(id.section);
}

// One value to write. Consecutive writes to the same interface and section
// go out as one message.
struct Write {
    std::optional<NicRef> nic;
    SettingId id;
    Scalar value;
    std::size_t feature_index = 0;
    uint32_t feature_bits = 0;
};

bool same_group(const Write& a, const Write& b) {
    if (a.id.section == Section::Sysctl || a.id.section == Section::Tuned ||
        a.id.section == Section::Rps || a.id.section == Section::Xps ||
        a.id.section == Section::Rss || a.id.section == Section::Irq)
        return false;  // one value, one write (queue files, IRQ files and RSS ioctls take one value
                       // each)
    if (a.id.section != b.id.section) return false;
    return a.nic && b.nic && a.nic->ifindex == b.nic->ifindex;
}

// Executes the writes, grouped: consecutive writes to one interface and
// section are one message, and consecutive messages of the same phase on
// different interfaces go to the backend together (pipelined: one round trip
// for hundreds of interfaces). Returns one result per write (a message's
// error applies to each of its writes) and which were attempted: with
// stop_on_error, nothing after a batch with a failure is sent.
struct Executed {
    std::vector<std::optional<Error>> errors;
    std::vector<bool> attempted;
};

struct Group {
    std::size_t first = 0, last = 0;  // [first, last) in writes
};

// [irq]: an IRQ the kernel does not let anyone place (a managed IRQ answers
// EIO) or that went away is skipped and reported, not a failure to undo.
bool skipped_irq(const Write& w, const std::optional<Error>& e) {
    return e && w.id.section == Section::Irq && e->code == Errc::Unsupported;
}

bool batchable(const Write& w) {
    return w.nic.has_value() && w.id.section != Section::Sysctl && w.id.section != Section::Tuned &&
           w.id.section != Section::PrivateFlags && w.id.section != Section::Rps &&
           w.id.section != Section::Xps && w.id.section != Section::Rss &&
           w.id.section != Section::Irq;
}

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

Executed execute(Backend& be, const std::vector<Write>& writes, bool stop_on_error,
                 const std::function<void(int group)>& before = {}) {
    Executed out;
    out.errors.resize(writes.size());
    out.attempted.assign(writes.size(), false);
    std::vector<Group> groups;
    for (std::size_t i = 0; i < writes.size();) {
        std::size_t j = i + 1;
        while (j < writes.size() && same_group(writes[i], writes[j]))
            ++j;
        groups.push_back({i, j});
        i = j;
    }
    auto record = [&](const Group& g, const Result<void>& r) {
        for (std::size_t k = g.first; k < g.last; ++k)
            out.attempted[k] = true;
        if (r) return false;
        Error e = r.error();
        const Write& w = writes[g.first];
        if (w.nic && !e.context.starts_with(w.nic->name))
            e.context = w.nic->name + ": " + e.context;
        for (std::size_t k = g.first; k < g.last; ++k)
            out.errors[k] = e;
        return !skipped_irq(w, e);
    };
    int group_no = 0;
    for (std::size_t gi = 0; gi < groups.size();) {
        const Write& w0 = writes[groups[gi].first];
        // The batch: following groups of the same kind and phase.
        std::size_t gj = gi + 1;
        if (batchable(w0)) {
            const bool features = w0.id.section == Section::Features;
            while (gj < groups.size()) {
                const Write& w = writes[groups[gj].first];
                if (!batchable(w) || (w.id.section == Section::Features) != features ||
                    phase_of_setting(w.id) != phase_of_setting(w0.id))
                    break;
                ++gj;
            }
        }
        if (before)
            for (std::size_t g = gi; g < gj; ++g)
                before(++group_no);
        bool failed = false;
        if (w0.id.section == Section::Sysctl) {
            const auto* v = std::get_if<std::string>(&w0.value);
            failed =
                record(groups[gi], v ? be.set_sysctl(w0.id.name, *v)
                                     : fail(Errc::Internal, w0.id.path(), "no value to write"));
        } else if (w0.id.section == Section::Tuned) {
            const auto* v = std::get_if<std::string>(&w0.value);
            failed = record(groups[gi], v ? be.set_tuned_profile(*v)
                                          : fail(Errc::Unsupported, "tuned.profile",
                                                 "there was no active tuned profile to return to"));
        } else if (w0.id.section == Section::PrivateFlags) {
            std::vector<PrivateFlag> flags;
            for (std::size_t k = groups[gi].first; k < groups[gi].last; ++k) {
                const auto* b = std::get_if<bool>(&writes[k].value);
                flags.push_back(PrivateFlag{writes[k].id.name, b && *b});
            }
            failed = record(groups[gi], be.set_private_flags(*w0.nic, flags));
        } else if (w0.id.section == Section::Rps || w0.id.section == Section::Xps) {
            auto q = parse_queue_setting(w0.id.section, w0.id.name);
            failed = record(groups[gi],
                            q ? be.set_queue(*w0.nic, w0.id.section, q->queue, q->what, w0.value)
                              : fail(Errc::Internal, w0.id.path(), "not a queue setting"));
        } else if (w0.id.section == Section::Rss) {  // [rss]
            failed = record(groups[gi], be.set_rss(*w0.nic, w0.id.name, w0.value));
        } else if (w0.id.section == Section::Irq) {
            const auto* v = std::get_if<std::string>(&w0.value);
            const auto n = parse_irq_setting(w0.id.name);
            failed =
                record(groups[gi], !v ? fail(Errc::Internal, w0.id.path(), "no value to write")
                                   : w0.id.name == SettingId::kIrqbalanceBanned
                                       ? be.set_irqbalance_banned(*w0.nic, *v)
                                   : n ? be.set_irq_affinity(*w0.nic, *n, *v)
                                       : fail(Errc::Internal, w0.id.path(), "not an IRQ setting"));
        } else if (w0.id.section == Section::Features) {
            std::vector<FeatureChange> changes;
            for (std::size_t g = gi; g < gj; ++g) {
                FeatureChange c{
                    *writes[groups[g].first].nic, writes[groups[g].first].feature_bits, {}};
                for (std::size_t k = groups[g].first; k < groups[g].last; ++k) {
                    const auto* b = std::get_if<bool>(&writes[k].value);
                    c.bits.emplace_back(writes[k].feature_index, b && *b);
                }
                changes.push_back(std::move(c));
            }
            auto rs = be.set_features_many(changes);
            for (std::size_t g = gi; g < gj; ++g)
                failed |= record(groups[g], rs[g - gi]);
        } else {
            std::vector<DeviceChange> changes;
            for (std::size_t g = gi; g < gj; ++g) {
                const Write& w = writes[groups[g].first];
                DeviceChange c{*w.nic, w.id.section, {}};
                for (std::size_t k = groups[g].first; k < groups[g].last; ++k)
                    if (auto v = device_value_of(*writes[k].id.key, writes[k].value))
                        c.values.emplace_back(*writes[k].id.key, *v);
                changes.push_back(std::move(c));
            }
            auto rs = be.set_devices(changes);
            for (std::size_t g = gi; g < gj; ++g)
                failed |= record(groups[g], rs[g - gi]);
        }
        if (failed && stop_on_error) break;
        gi = gj;
    }
    return out;
}

bool same_value(const SettingId& id, const Scalar& a, const Scalar& b) {
    if (id.section == Section::Sysctl) {
        const auto* x = std::get_if<std::string>(&a);
        const auto* y = std::get_if<std::string>(&b);
        return x && y && sysinfo::normalize_sysctl_value(*x) == sysinfo::normalize_sysctl_value(*y);
    }
    return a == b;
}

std::vector<std::string> sysctl_names(const std::vector<Write>& writes) {
    std::vector<std::string> out;
    for (const auto& w : writes)
        if (w.id.section == Section::Sysctl) out.push_back(w.id.name);
    return out;
}

// Re-reads what the writes touched and says, per write, whether the value
// is now `value`. Interfaces that are gone count as restored (their settings
// went with them).
struct Reread {
    std::vector<NicState> nics;
    std::unordered_map<int, std::size_t> by_ifindex;  // into nics
    void add(NicState n) {
        by_ifindex[n.id.ifindex] = nics.size();
        nics.push_back(std::move(n));
    }
    [[nodiscard]] const NicState* find(int ifindex) const {
        auto it = by_ifindex.find(ifindex);
        return it == by_ifindex.end() ? nullptr : &nics[it->second];
    }
    std::optional<SystemState> sys;
    // The interfaces could not be read again (not: one of them is gone).
    std::optional<Error> nics_error;
};

Reread reread(Backend& be, const std::vector<Write>& writes) {
    Reread out;
    // Per interface, the families the writes touched.
    std::vector<Backend::ObserveRequest> wanted;
    std::unordered_map<int, std::size_t> at;
    for (const auto& w : writes) {
        if (!w.nic) continue;
        auto [it, fresh] = at.try_emplace(w.nic->ifindex, wanted.size());
        if (fresh) wanted.push_back({*w.nic, 0});
        wanted[it->second].sections |= ReadRequest::bit(w.id.section);
    }
    // What the kernel's change notifications already said (when the backend
    // observes them)...
    auto seen = be.observed(wanted);
    for (auto& n : seen.nics)
        out.add(std::move(n));
    // ...and one read for the rest (dumps when there are many, one by one
    // when that fails); only the families the writes touched, and no driver
    // identity.
    if (!seen.missing.empty()) {
        ReadRequest req{std::move(seen.missing), true};
        req.sections = 0;
        req.identity = false;
        for (const auto& w : wanted)
            req.sections |= w.sections;
        for (const auto& w : writes)  // [irq]: only the IRQs written
            if (w.nic && w.id.section == Section::Irq)
                req.read_back_irq(w.nic->name, parse_irq_setting(w.id.name));
        if (auto all = read_present(be, req)) {
            for (auto& n : *all)
                out.add(std::move(n));
        } else {
            out.nics_error = std::move(all.error());
        }
    }
    auto names_sys = sysctl_names(writes);
    const bool tuned = std::any_of(writes.begin(), writes.end(),
                                   [](const Write& w) { return w.id.section == Section::Tuned; });
    if (!names_sys.empty() || tuned) {
        auto s = be.read_system(SystemQuery{names_sys, false, tuned});
        if (s) out.sys = std::move(*s);
    }
    return out;
}

// Observes the kernel's change notifications for as long as it lives
// (Backend::observe_changes).
class Observing {
  public:
    explicit Observing(Backend& be) : be_(be) { be_.observe_changes(true); }
    ~Observing() { be_.observe_changes(false); }
    Observing(const Observing&) = delete;
    Observing& operator=(const Observing&) = delete;

  private:
    Backend& be_;
};

// Writes `writes` (restoring values) and verifies them.
std::vector<RestoreResult> restore(Backend& be, const std::vector<Write>& writes) {
    std::vector<RestoreResult> out;
    Observing observing(be);
    // A restore goes on after a failure: every value it can put back, it must.
    auto errors = execute(be, writes, false).errors;
    auto again = reread(be, writes);
    for (std::size_t i = 0; i < writes.size(); ++i) {
        const auto& w = writes[i];
        RestoreResult r{w.nic ? w.nic->name : "", w.id.path(), w.value, true, ""};
        const NicState* nic = w.nic ? again.find(w.nic->ifindex) : nullptr;
        if (w.nic && !nic && again.nics_error) {
            // Unverified is not restored: the saved originals must stay.
            r.ok = false;
            r.message = "cannot read it back: " + again.nics_error->str();
        } else if (w.nic && !nic) {
            r.message = "the interface is gone; its settings went with it";
        } else if (errors[i] && errors[i]->code == Errc::NoSuchInterface) {
            r.message = "the interface is gone; its settings went with it";
        } else if (skipped_irq(w, errors[i])) {
            r.message = errors[i]->message;  // never changed, so nothing to put back
        } else if (errors[i]) {
            r.ok = false;
            r.message = errors[i]->str();
        } else if (!same_value(w.id, value_in(w.id, nic, again.sys ? &*again.sys : nullptr),
                               w.value)) {
            r.ok = false;
            r.message = "reads back as " +
                        to_string(value_in(w.id, nic, again.sys ? &*again.sys : nullptr)) +
                        " after the restore";
        }
        out.push_back(std::move(r));
    }
    return out;
}

// Where a step lives: interface index (or npos for system) and step index.
struct StepRef {
    std::size_t iface;
    std::size_t step;
};
constexpr std::size_t kSystem = static_cast<std::size_t>(-1);

}  // namespace

// An applied transaction before its commit: what the commit or the undo
// needs (apply_plan's state once every change is verified).
struct HeldTransaction::State {
    Backend& be;
    StateStore& store;
    ApplyResult res;
    std::vector<StateLock> locks;
    std::vector<StepRef> refs;  // per write: its step in res
    std::vector<Write> writes;
    Executed run;
    std::vector<InterfaceRecord> records;
    SystemRecord sysrec, sys_before;
    Journal journal;
    bool failed = false;

    StepResult& step(StepRef r) {
        return r.iface == kSystem ? res.system[r.step] : res.interfaces[r.iface].steps[r.step];
    }
};

namespace {

using TxState = HeldTransaction::State;

// Undoes the transaction, newest first, to the values before it.
ApplyResult undo_all(TxState& s) {
    ApplyResult& res = s.res;
    std::vector<Write> undo;
    std::vector<std::size_t> undone;  // index into writes, per undo entry
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
    res.rollback = restore(s.be, undo);
    bool complete = std::all_of(res.rollback.begin(), res.rollback.end(),
                                [](const RestoreResult& r) { return r.ok; });
    res.result = complete ? TxResult::RolledBack : TxResult::Partial;
    // Applied then undone: rolled_back (or, if the undo failed, what it
    // was: it is still in effect, and listed in left()); never sent:
    // not_reached.
    for (std::size_t i = 0; i < s.writes.size(); ++i)
        if (!s.run.attempted[i]) s.step(s.refs[i]).outcome = Outcome::NotReached;
    for (std::size_t j = 0; j < undone.size(); ++j) {
        auto& sr = s.step(s.refs[undone[j]]);
        if (res.rollback[j].ok && sr.outcome != Outcome::Failed) sr.outcome = Outcome::RolledBack;
    }
    if (complete) {
        // Everything is as before: the interface files were never
        // written, the system record goes back.
        if (!(s.sysrec == s.sys_before))
            if (auto ok = s.store.save_system(s.sys_before); !ok) {
                // The settings are back, system.json is not. The journal
                // stays: the next transaction on these interfaces, their
                // rollback or nictuned's start replays it, and that
                // puts the owners of the system settings right.
                for (auto& ir : res.interfaces)
                    ir.warnings.push_back(
                        "the settings are restored but the state directory is not (" +
                        ok.error().str() +
                        "); the next transaction on this interface, its rollback or "
                        "nictuned's start completes it");
                return res;
            }
        s.journal.finish();
    } else {
        for (auto& r : s.records) {
            r.status = TxStatus::Failed;
            r.updated_at = unix_now();
        }
        // Kept when the records cannot be written: replay puts them
        // (applying) in place, and recovery restores the originals.
        if (s.store.save_interfaces(s.records)) s.journal.finish();
    }
    return res;
}

// Saves the interface records (applied, or failed with keep_going) and
// removes the journal.
ApplyResult commit_all(TxState& s) {
    ApplyResult& res = s.res;
    for (auto& r : s.records) {
        r.status = s.failed ? TxStatus::Failed : TxStatus::Applied;
        r.updated_at = unix_now();
    }
    if (auto ok = s.store.save_interfaces(s.records); !ok) {
        if (!res.error) res.error = ok.error();
    } else {
        s.journal.finish();
    }
    res.result = s.failed ? TxResult::Partial : TxResult::Applied;
    return res;
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
    ApplyResult res;
    res.transaction = new_transaction_id();
    res.profile = plan.profile;
    for (const auto& ip : plan.interfaces) {
        InterfaceResult ir{ip.id.name, {}, ip.warnings};
        for (const auto& s : ip.steps)
            ir.steps.push_back(StepResult{s, Outcome::NotReached, {}, {}});
        res.interfaces.push_back(std::move(ir));
    }
    for (const auto& s : plan.system)
        res.system.push_back(StepResult{s, Outcome::NotReached, {}, {}});
    auto step_result = [&](StepRef r) -> StepResult& {
        return r.iface == kSystem ? res.system[r.step] : res.interfaces[r.iface].steps[r.step];
    };
    // Outcomes that need no kernel.
    auto settle_static = [&](StepResult& s) {
        switch (s.step.kind) {
            case StepKind::Unchanged:
                s.outcome = Outcome::Unchanged;
                s.actual = s.step.current;
                break;
            case StepKind::Unsupported:
                s.outcome = Outcome::Unsupported;
                break;
            case StepKind::Refused:
                s.outcome = Outcome::Refused;
                break;
            case StepKind::Blocked:
                s.outcome = Outcome::Blocked;
                s.actual = s.step.current;
                break;
            default:
                break;
        }
    };
    for (auto& ir : res.interfaces)
        for (auto& s : ir.steps)
            settle_static(s);
    for (auto& s : res.system)
        settle_static(s);

    res.refusals = plan.refusals();
    if (!res.refusals.empty()) {
        res.result = TxResult::Refused;
        res.error =
            Error{Errc::InvalidArgument, 0, "", "the plan was refused; nothing was changed", {}};
        return res;
    }
    if (opts.dry_run) {
        res.result = TxResult::DryRun;
        return res;
    }

    // The interfaces' names: for the locks, the journal replay and the
    // saved records.
    std::vector<std::string> names;
    names.reserve(plan.interfaces.size());
    for (const auto& ip : plan.interfaces)
        names.push_back(ip.id.name);

    // Serialise against any other transaction on these interfaces.
    std::vector<StateLock> locks;
    for (const auto& name : names) {
        auto l = store.lock(name);
        if (!l) {
            res.result = TxResult::Refused;
            res.error = l.error();
            res.error->message += "; nothing was changed";
            return res;
        }
        locks.push_back(std::move(*l));
    }
    // A transaction on these interfaces that died left its journal: its
    // records (and originals) go into the interface files before we read them.
    if (auto ok = store.replay_journals(names); !ok) {
        res.result = TxResult::Refused;
        res.error = ok.error();
        res.error->message += "; nothing was changed";
        return res;
    }

    // The writes, in apply order, each remembering its step: phase by phase
    // across interfaces (each interface keeps its own order), so that the
    // same phase on many interfaces goes out as one batch. The steps are
    // ordered first and copied once.
    std::vector<StepRef> refs;
    for (std::size_t i = 0; i < plan.interfaces.size(); ++i) {
        const auto& steps = plan.interfaces[i].steps;
        for (std::size_t k = 0; k < steps.size(); ++k)
            if (steps[k].kind == StepKind::Change) refs.push_back({i, k});
    }
    for (std::size_t k = 0; k < plan.system.size(); ++k)
        if (plan.system[k].kind == StepKind::Change) refs.push_back({kSystem, k});
    const auto plan_step = [&](StepRef r) -> const PlanStep& {
        return r.iface == kSystem ? plan.system[r.step] : plan.interfaces[r.iface].steps[r.step];
    };
    std::stable_sort(refs.begin(), refs.end(), [&](StepRef a, StepRef b) {
        return phase_of_setting(plan_step(a).setting) < phase_of_setting(plan_step(b).setting);
    });
    std::vector<Write> writes;
    writes.reserve(refs.size());
    for (StepRef r : refs) {
        const PlanStep& s = plan_step(r);
        if (r.iface == kSystem) {
            writes.push_back(Write{std::nullopt, s.setting, s.target, 0, 0});
            continue;
        }
        const auto& ip = plan.interfaces[r.iface];
        writes.push_back(Write{NicRef{ip.id.ifindex, ip.id.name}, s.setting, s.target,
                               s.feature_index, ip.feature_bits});
    }

    // Save the originals before the first change.
    std::vector<InterfaceRecord> records;
    auto saved = store.load_interfaces(names);
    if (!saved) {
        res.result = TxResult::Refused;
        res.error = saved.error();
        res.error->message += "; nothing was changed";
        return res;
    }
    for (std::size_t i = 0; i < plan.interfaces.size(); ++i) {
        const auto& ip = plan.interfaces[i];
        std::optional<InterfaceRecord>& prev = (*saved)[i];
        InterfaceRecord rec = prev ? std::move(*prev) : InterfaceRecord{};
        // A record of another device under the same name (renamed, replaced)
        // holds no originals of this one.
        if (prev && rec.mac != ip.id.mac) rec = InterfaceRecord{};
        rec.name = ip.id.name;
        rec.ifindex = ip.id.ifindex;
        rec.mac = ip.id.mac;
        rec.perm_mac = ip.id.perm_mac;
        rec.bus_info = ip.id.bus_info;
        rec.profile = plan.profile;
        rec.transaction = res.transaction;
        rec.status = TxStatus::Applying;
        rec.updated_at = unix_now();
        rec.targets.clear();
        for (const auto& s : ip.steps) {
            if (s.kind != StepKind::Change && s.kind != StepKind::Unchanged &&
                s.kind != StepKind::Covered)
                continue;
            std::string path = s.setting.path();
            if (s.kind == StepKind::Change && !rec.original(path))
                rec.originals.push_back(SavedValue{path, s.current});
            rec.targets.push_back(SavedValue{std::move(path), s.target});
        }
        records.push_back(std::move(rec));
    }
    auto sysrec = store.load_system();
    if (!sysrec) {
        res.result = TxResult::Refused;
        res.error = sysrec.error();
        res.error->message += "; nothing was changed";
        return res;
    }
    const SystemRecord sys_before = *sysrec;
    for (const auto& s : plan.system) {
        if (s.kind != StepKind::Change && s.kind != StepKind::Unchanged) continue;
        SystemEntry* e = sysrec->find(s.setting.path());
        if (!e && s.kind == StepKind::Change) {
            sysrec->entries.push_back(SystemEntry{s.setting.path(), s.current, {}});
            e = &sysrec->entries.back();
        }
        if (!e) continue;
        for (const auto& ip : plan.interfaces)
            if (std::find(e->owners.begin(), e->owners.end(), ip.id.name) == e->owners.end())
                e->owners.push_back(ip.id.name);
    }
    // The originals could not be saved: refuse before any change. The
    // interface files are not written before the transaction ends.
    const auto refuse = [&](const Error& e) {
        res.result = TxResult::Refused;
        res.error = e;
        res.error->message =
            "cannot save the original settings (" + res.error->message + "); nothing was changed";
        return res;
    };
    auto journal = store.begin_journal(res.transaction, records);
    if (!journal) return refuse(journal.error());
    // Untouched when the profile has no system settings (the common case).
    if (auto ok = *sysrec == sys_before ? Result<void>{} : store.save_system(*sysrec); !ok) {
        journal->finish();
        return refuse(ok.error());
    }

    // Apply: one message per interface and section, in plan order. The
    // kernel's notifications of these changes verify them (see reread).
    Observing observing(be);
    auto run = execute(be, writes, !opts.keep_going, opts.before_change);
    bool failed = false;
    for (std::size_t i = 0; i < writes.size(); ++i) {
        if (!run.attempted[i] || !run.errors[i]) continue;
        auto& sr = step_result(refs[i]);
        if (skipped_irq(writes[i], run.errors[i])) {
            sr.outcome = Outcome::Unsupported;
            sr.step.note = run.errors[i]->message;
            // Nothing to hold it to: no target for drift checks.
            if (refs[i].iface != kSystem)
                std::erase_if(records[refs[i].iface].targets,
                              [&](const SavedValue& v) { return v.key == writes[i].id.path(); });
            continue;
        }
        sr.outcome = Outcome::Failed;
        sr.error = run.errors[i];
        if (!res.error) res.error = run.errors[i];
        failed = true;
    }

    // Verify what was applied.
    Reread after;
    if (!failed || opts.keep_going) {
        after = reread(be, writes);
        for (std::size_t i = 0; i < writes.size(); ++i) {
            if (!run.attempted[i]) continue;
            auto& sr = step_result(refs[i]);
            if (sr.outcome == Outcome::Failed || sr.outcome == Outcome::Unsupported) continue;
            const NicState* nic = writes[i].nic ? after.find(writes[i].nic->ifindex) : nullptr;
            if (writes[i].nic && !nic) {
                sr.outcome = Outcome::Failed;
                sr.error = after.nics_error ? *after.nics_error
                                            : Error{Errc::NoSuchInterface,
                                                    0,
                                                    writes[i].nic->name,
                                                    "interface vanished during the apply",
                                                    {}};
                if (!res.error) res.error = sr.error;
                failed = true;
                continue;
            }
            sr.actual = value_in(writes[i].id, nic, after.sys ? &*after.sys : nullptr);
            if (same_value(writes[i].id, sr.actual, sr.step.target)) {
                sr.outcome = sr.step.resolution == Resolution::Translated ? Outcome::Translated
                             : sr.step.resolution == Resolution::Adjusted ? Outcome::Adjusted
                                                                          : Outcome::Applied;
            } else if (const auto why = kernel_keeps_feature(writes[i], nic, sr.step.target)) {
                // Requested and accepted, but the kernel holds it (a
                // dependency, an upper device, XDP): not a failure to undo.
                sr.outcome = Outcome::Blocked;
                sr.step.note = (sr.step.note.empty() ? "" : sr.step.note + "; ") + *why;
            } else if (!same_value(writes[i].id, sr.actual, sr.step.current) &&
                       !std::holds_alternative<std::monostate>(sr.actual) &&
                       writes[i].id.section != Section::Features &&
                       writes[i].id.section != Section::Tuned) {
                sr.outcome = Outcome::Adjusted;
                sr.step.note = (sr.step.note.empty() ? "" : sr.step.note + "; ") + "asked " +
                               to_string(sr.step.target) + ", the driver set " +
                               to_string(sr.actual);
            } else {
                sr.outcome = Outcome::Failed;
                sr.error = Error{
                    Errc::Kernel,
                    0,
                    (writes[i].nic ? writes[i].nic->name + ": " : "") + writes[i].id.path(),
                    "the request was accepted but the value reads back as " + to_string(sr.actual),
                    {}};
                if (!res.error) res.error = sr.error;
                failed = true;
            }
        }
        // Covered steps end as their covering value does.
        for (std::size_t i = 0; i < res.interfaces.size(); ++i) {
            for (auto& sr : res.interfaces[i].steps) {
                if (sr.step.kind != StepKind::Covered) continue;
                const NicState* nic = after.find(plan.interfaces[i].id.ifindex);
                if (!nic) {
                    auto fresh =
                        be.read_interfaces(ReadRequest{{plan.interfaces[i].id.name}, true});
                    if (fresh && !fresh->empty()) after.add(std::move(fresh->front()));
                    nic = after.find(plan.interfaces[i].id.ifindex);
                }
                sr.actual = value_in(sr.step.setting, nic, nullptr);
                sr.outcome = sr.actual == sr.step.target ? Outcome::Translated : Outcome::Failed;
            }
        }
    }

    TxState tx{be,
               store,
               std::move(res),
               std::move(locks),
               std::move(refs),
               std::move(writes),
               std::move(run),
               std::move(records),
               std::move(*sysrec),
               sys_before,
               std::move(*journal),
               failed};
    // The step between verify and commit: a check of what was applied
    // (nictunectl's peer probe). Its failure undoes everything.
    bool check_failed = false;
    if (!failed && opts.after_verify) {
        tx.res.check = CheckResult{opts.check_name, CheckOutcome::Passed, {}};
        if (auto ok = opts.after_verify(tx.res); !ok) {
            tx.res.check->outcome = CheckOutcome::Failed;
            tx.res.check->error = ok.error();
            if (!tx.res.error) tx.res.error = std::move(ok.error());
            check_failed = true;
        }
    } else if (opts.after_verify) {
        tx.res.check = CheckResult{opts.check_name, CheckOutcome::NotReached, {}};
    }
    if (check_failed || (failed && !opts.keep_going)) return undo_all(tx);
    if (!failed && opts.hold) {
        if (!tx.res.check) tx.res.check = CheckResult{opts.check_name, CheckOutcome::Pending, {}};
        tx.res.check->outcome = CheckOutcome::Pending;
        tx.res.result = TxResult::Pending;
        ApplyResult out = tx.res;
        *opts.hold = std::make_unique<HeldTransaction>(std::make_unique<TxState>(std::move(tx)));
        return out;
    }
    return commit_all(tx);
}

RollbackResult rollback_interface(Backend& be, StateStore& store, const std::string& name) {
    return std::move(rollback_interfaces(be, store, {name}).front());
}

// Every interface gets the result rollback_interface alone would give it;
// what they share is one read, one restore (all SETs pipelined, reverse
// apply order across interfaces, one verification read) and one write of
// the system record.
std::vector<RollbackResult> rollback_interfaces(Backend& be, StateStore& store,
                                                const std::vector<std::string>& requested) {
    std::vector<RollbackResult> out(requested.size());
    for (std::size_t i = 0; i < requested.size(); ++i)
        out[i].interface = requested[i];
    const auto refuse = [&](std::size_t i, Error e) {
        out[i].result = TxResult::Refused;
        out[i].error = std::move(e);
    };
    std::vector<bool> active(requested.size(), true);
    // Each name as the kernel resolves it, a name or an alternative name:
    // the record is the device's, under its current name. One read of the
    // named devices that are here, which the restore then uses.
    std::vector<std::string> lookup;
    for (const auto& n : requested)
        if (valid_name_or_altname(n)) lookup.push_back(n);
    auto now = read_present(be, ReadRequest{lookup, true});
    if (!now) {
        for (std::size_t i = 0; i < requested.size(); ++i)
            refuse(i, now.error());
        return out;
    }
    std::unordered_map<std::string_view, const NicState*> called;
    called.reserve(now->size());
    for (const auto& n : *now) {
        called.emplace(n.id.name, &n);
        for (const auto& alt : n.id.altnames)
            called.emplace(alt, &n);
    }
    std::vector<std::string> names(requested.size());  // the record's name, per request
    std::vector<const NicState*> device(requested.size(), nullptr);
    for (std::size_t i = 0; i < requested.size(); ++i) {
        const std::string& word = requested[i];
        if (!valid_name_or_altname(word)) {
            refuse(i, Error{Errc::InvalidArgument,
                            0,
                            "",
                            "invalid interface name " + quote_name(word),
                            {}});
            active[i] = false;
            continue;
        }
        if (auto it = called.find(word); it != called.end()) {
            device[i] = it->second;
            names[i] = it->second->id.name;
            out[i].interface = names[i];
            continue;
        }
        // Not here: a record it has is under this name. A name that is
        // neither is the caller's mistake, and leaves no lock file behind.
        if (!valid_ifname(word) || !store.has_interface(word)) {
            refuse(i, Error{Errc::NoSuchInterface, 0, word, "no such interface", {}});
            active[i] = false;
            continue;
        }
        names[i] = word;
    }
    std::vector<StateLock> locks;
    std::vector<std::string> locked;
    std::unordered_set<std::string_view> seen;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (!active[i]) continue;
        // Named twice (or by a name and an alternative name): the first one
        // does the work.
        if (!seen.insert(names[i]).second) {
            out[i].nothing_saved = true;
            out[i].result = TxResult::Applied;
            active[i] = false;
            continue;
        }
        auto lock = store.lock(names[i]);
        if (!lock) {
            refuse(i, lock.error());
            active[i] = false;
            continue;
        }
        locks.push_back(std::move(*lock));
        locked.push_back(names[i]);
    }
    if (auto ok = store.replay_journals(locked); !ok) {
        for (std::size_t i = 0; i < names.size(); ++i)
            if (active[i]) refuse(i, ok.error());
        return out;
    }
    std::vector<std::optional<InterfaceRecord>> records(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (!active[i]) continue;
        auto rec = store.load_interface(names[i]);
        if (!rec) {
            refuse(i, rec.error());
            active[i] = false;
        } else {
            records[i] = std::move(*rec);
        }
    }
    // A device renamed while nobody followed it (nictuned stopped) has its
    // record, or its first originals, under an earlier name: found by
    // ifindex and MAC, taken under that name's lock, and merged (the
    // earlier originals come first); the earlier files go with the record.
    std::vector<std::vector<std::string>> earlier(names.size());
    {
        std::vector<DeviceRef> refs;
        std::vector<std::size_t> at;
        for (std::size_t i = 0; i < names.size(); ++i)
            if (active[i] && device[i]) {
                refs.push_back(DeviceRef{names[i], device[i]->id.ifindex, device[i]->id.mac,
                                         device[i]->id.perm_mac});
                at.push_back(i);
            }
        const auto found = refs.empty() ? std::vector<std::vector<InterfaceRecord>>{}
                                        : store.earlier_records(refs, locked);
        for (std::size_t k = 0; k < found.size(); ++k) {
            const std::size_t i = at[k];
            for (auto r = found[k].rbegin(); r != found[k].rend() && active[i]; ++r) {
                auto lock = store.lock(r->name);
                const std::string held[] = {r->name};
                Result<void> ok = lock ? store.replay_journals(held)
                                       : Result<void>(std::unexpected(lock.error()));
                auto then =
                    ok ? store.load_interface(r->name)
                       : Result<std::optional<InterfaceRecord>>(std::unexpected(ok.error()));
                if (!then) {
                    Error e = std::move(then.error());
                    e.message += " (" + names[i] + "'s earlier name, where saved originals are)";
                    refuse(i, std::move(e));
                    active[i] = false;
                    break;
                }
                if (!*then) continue;  // rolled back meanwhile
                locks.push_back(std::move(*lock));
                earlier[i].push_back(r->name);
                if (!records[i]) {
                    records[i] = std::move(**then);
                    records[i]->name = names[i];
                    continue;
                }
                std::vector<SavedValue> merged = std::move((*then)->originals);
                for (auto& v : records[i]->originals)
                    if (std::ranges::none_of(merged,
                                             [&](const SavedValue& m) { return m.key == v.key; }))
                        merged.push_back(std::move(v));
                records[i]->originals = std::move(merged);
            }
        }
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (!active[i]) continue;
        if (!records[i]) {
            out[i].nothing_saved = true;
            out[i].result = TxResult::Applied;
            active[i] = false;
        } else {
            out[i].profile = records[i]->profile;
        }
    }
    // The names a record of interface i was saved under, for the system
    // record's owners.
    const auto called_before = [&](std::size_t i, const std::string& owner) {
        return owner == names[i] || std::ranges::find(earlier[i], owner) != earlier[i].end();
    };

    // The writes of every interface, each with the index of its interface.
    std::vector<std::pair<Write, std::size_t>> writes;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (!active[i]) continue;
        const std::string& name = names[i];
        const InterfaceRecord& record = *records[i];
        const NicState* st = device[i];
        if (!st) {
            refuse(i, Error{Errc::NoSuchInterface,
                            0,
                            name,
                            "not present; its saved originals are kept in " + store.dir().string(),
                            {}});
            active[i] = false;
            continue;
        }
        if (!record.mac.empty() && st->id.mac != record.mac &&
            (!st->id.perm_mac || st->id.perm_mac != record.perm_mac)) {
            refuse(i, Error{Errc::InvalidArgument,
                            0,
                            name,
                            "is now a different device (MAC " + st->id.mac + ", saved " +
                                record.mac + "); refusing to restore another device's settings",
                            {}});
            active[i] = false;
            continue;
        }
        NicRef nic{st->id.ifindex, name};
        uint32_t bits = st->features && st->features->names
                            ? static_cast<uint32_t>(st->features->names->size())
                            : 0;
        for (const auto& o : record.originals) {
            auto id = SettingId::parse(o.key);
            if (!id) {
                out[i].restored.push_back(
                    RestoreResult{name, o.key, o.value, false, id.error().str()});
                continue;
            }
            Write w{nic, *id, o.value, 0, bits};
            if (id->section == Section::Features) {
                auto idx = st->features ? st->features->index_of(id->name) : std::nullopt;
                if (!idx) {
                    out[i].restored.push_back(RestoreResult{name, o.key, o.value, false,
                                                            "the device has no such feature now"});
                    continue;
                }
                w.feature_index = *idx;
            }
            writes.emplace_back(std::move(w), i);
        }
    }

    // System settings whose last users these interfaces were: restored with
    // (and reported by) the interface that released them last.
    auto sys = store.load_system();
    SystemRecord sysrec;
    if (sys) {
        sysrec = *sys;
        for (auto it = sysrec.entries.begin(); it != sysrec.entries.end();) {
            auto& owners = it->owners;
            std::size_t last = names.size();
            for (std::size_t i = 0; i < names.size(); ++i) {
                if (!active[i]) continue;
                const auto gone = std::erase_if(
                    owners, [&](const std::string& o) { return called_before(i, o); });
                if (gone == 0) continue;
                last = i;
            }
            if (last != names.size() && owners.empty()) {
                if (auto id = SettingId::parse(it->key))
                    writes.emplace_back(Write{std::nullopt, *id, it->original, 0, 0}, last);
                it = sysrec.entries.erase(it);
            } else {
                ++it;
            }
        }
    } else {
        for (std::size_t i = 0; i < names.size(); ++i)
            if (active[i])
                out[i].restored.push_back(
                    RestoreResult{"", "system", {}, false, sys.error().str()});
    }

    // Reverse apply order (tuned and sysctls come last in apply order, so
    // first here; then coalescing before features before MTU before
    // rings...), the same phase of every interface together so that it goes
    // out as one batch.
    std::stable_sort(writes.begin(), writes.end(), [](const auto& a, const auto& b) {
        return phase_of_setting(a.first.id) > phase_of_setting(b.first.id);
    });
    std::vector<Write> all;
    all.reserve(writes.size());
    for (auto& [w, i] : writes)
        all.push_back(std::move(w));
    auto restored = all.empty() ? std::vector<RestoreResult>{} : restore(be, all);
    for (std::size_t k = 0; k < restored.size(); ++k)
        out[writes[k].second].restored.push_back(std::move(restored[k]));

    bool system_changed = false;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (!active[i]) continue;
        const bool complete = std::all_of(out[i].restored.begin(), out[i].restored.end(),
                                          [](const RestoreResult& r) { return r.ok; });
        if (complete) {
            for (const auto& name : earlier[i])
                if (auto ok = store.remove_interface(name); !ok && !out[i].error)
                    out[i].error = ok.error();
            if (auto ok = store.remove_interface(names[i]); !ok) out[i].error = ok.error();
            out[i].result = TxResult::RolledBack;
            system_changed = true;
        } else {
            InterfaceRecord keep = *records[i];
            keep.status = TxStatus::Failed;
            keep.updated_at = unix_now();
            // The originals stay saved either way; the record says what is left.
            if (auto ok = store.save_interface(keep); !ok) {
                if (!out[i].error) out[i].error = ok.error();
            } else {
                // Merged into it: the earlier files are not needed.
                for (const auto& name : earlier[i])
                    if (auto gone = store.remove_interface(name); !gone && !out[i].error)
                        out[i].error = gone.error();
                system_changed |= !earlier[i].empty();
            }
            out[i].result = TxResult::Partial;
            // Still an owner of what it uses (under whichever name): put it back.
            if (sys)
                for (const auto& e : sys->entries)
                    if (std::ranges::any_of(
                            e.owners, [&](const std::string& o) { return called_before(i, o); })) {
                        SystemEntry* kept = sysrec.find(e.key);
                        if (!kept) {
                            sysrec.entries.push_back(SystemEntry{e.key, e.original, {}});
                            kept = &sysrec.entries.back();
                        }
                        kept->owners.push_back(names[i]);
                    }
        }
    }
    // Written only when one of these interfaces was an owner.
    if (sys && system_changed && !(sysrec == *sys)) {
        if (auto ok = store.save_system(sysrec); !ok)
            for (std::size_t i = 0; i < names.size(); ++i)
                if (active[i] && !out[i].error) out[i].error = ok.error();
    }
    return out;
}

}  // namespace nictune
