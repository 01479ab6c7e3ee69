#include "engine/tx_steps.hpp"

#include <chrono>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "util/strings.hpp"

namespace nictune::tx {

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

bool skipped_irq(const Write& w, const std::optional<Error>& e) {
    return e && w.id.section == Section::Irq && e->code == Errc::Unsupported;
}

bool same_value(const SettingId& id, const Scalar& a, const Scalar& b) {
    if (id.section == Section::Sysctl) {
        const auto* x = std::get_if<std::string>(&a);
        const auto* y = std::get_if<std::string>(&b);
        return x && y && normalize_sysctl_value(*x) == normalize_sysctl_value(*y);
    }
    return a == b;
}

namespace {

// Sections whose writes take one value each (queue files, IRQ files, RSS
// ioctls, sysctls, tuned): never grouped into one message.
bool one_value_per_write(Section s) {
    return s == Section::Sysctl || s == Section::Tuned || s == Section::Rps || s == Section::Xps ||
           s == Section::Rss || s == Section::Irq;
}

bool same_group(const Write& a, const Write& b) {
    if (one_value_per_write(a.id.section) || a.id.section != b.id.section) return false;
    return a.nic && b.nic && a.nic->ifindex == b.nic->ifindex;
}

// Writes whose messages go to the backend together with those of other
// interfaces (pipelined: one round trip for hundreds of interfaces).
bool batchable(const Write& w) {
    return w.nic.has_value() && !one_value_per_write(w.id.section) &&
           w.id.section != Section::PrivateFlags;
}

struct Group {
    std::size_t first = 0, last = 0;  // [first, last) in writes
};

// Consecutive writes to one interface and section: one message.
std::vector<Group> groups_of(const std::vector<Write>& writes) {
    std::vector<Group> groups;
    for (std::size_t i = 0; i < writes.size();) {
        std::size_t j = i + 1;
        while (j < writes.size() && same_group(writes[i], writes[j]))
            ++j;
        groups.push_back({i, j});
        i = j;
    }
    return groups;
}

// The batch that starts at group gi: the following groups of the same kind
// (features or not) and phase. Returns one past its last group.
std::size_t batch_end(const std::vector<Write>& writes, const std::vector<Group>& groups,
                      std::size_t gi) {
    const Write& w0 = writes[groups[gi].first];
    std::size_t gj = gi + 1;
    if (!batchable(w0)) return gj;
    const bool features = w0.id.section == Section::Features;
    while (gj < groups.size()) {
        const Write& w = writes[groups[gj].first];
        if (!batchable(w) || (w.id.section == Section::Features) != features ||
            phase_of(w.id.section) != phase_of(w0.id.section))
            break;
        ++gj;
    }
    return gj;
}

Result<void> send_irq(Backend& be, const Write& w) {
    const auto* v = std::get_if<std::string>(&w.value);
    if (!v) return fail(Errc::Internal, w.id.path(), "no value to write");
    if (w.id.name == SettingId::kIrqbalanceBanned) return be.set_irqbalance_banned(*w.nic, *v);
    if (const auto n = parse_irq_setting(w.id.name)) return be.set_irq_affinity(*w.nic, *n, *v);
    return fail(Errc::Internal, w.id.path(), "not an IRQ setting");
}

Result<void> send_private_flags(Backend& be, const std::vector<Write>& writes, Group g) {
    std::vector<PrivateFlag> flags;
    for (std::size_t k = g.first; k < g.last; ++k) {
        const auto* b = std::get_if<bool>(&writes[k].value);
        flags.push_back(PrivateFlag{writes[k].id.name, b && *b});
    }
    return be.set_private_flags(*writes[g.first].nic, flags);
}

// A group that is sent alone: one message, one result.
Result<void> send_alone(Backend& be, const std::vector<Write>& writes, Group g) {
    const Write& w = writes[g.first];
    const auto* text = std::get_if<std::string>(&w.value);
    switch (w.id.section) {
        case Section::Sysctl:
            return text ? be.set_sysctl(w.id.name, *text)
                        : fail(Errc::Internal, w.id.path(), "no value to write");
        case Section::Tuned:
            return text ? be.set_tuned_profile(*text)
                        : fail(Errc::Unsupported, "tuned.profile",
                               "there was no active tuned profile to return to");
        case Section::PrivateFlags:
            return send_private_flags(be, writes, g);
        case Section::Rps:
        case Section::Xps: {
            auto q = parse_queue_setting(w.id.section, w.id.name);
            return q ? be.set_queue(*w.nic, w.id.section, q->queue, q->what, w.value)
                     : fail(Errc::Internal, w.id.path(), "not a queue setting");
        }
        case Section::Rss:  // [rss]
            return be.set_rss(*w.nic, w.id.name, w.value);
        case Section::Irq:
            return send_irq(be, w);
        default:
            return fail(Errc::Internal, w.id.path(), "not a setting written alone");
    }
}

// Feature changes of several interfaces: one pipelined batch.
std::vector<Result<void>> send_features(Backend& be, const std::vector<Write>& writes,
                                        std::span<const Group> batch) {
    std::vector<FeatureChange> changes;
    changes.reserve(batch.size());
    for (const Group& g : batch) {
        FeatureChange c{*writes[g.first].nic, writes[g.first].feature_bits, {}};
        c.bits.reserve(g.last - g.first);
        for (std::size_t k = g.first; k < g.last; ++k) {
            const auto* b = std::get_if<bool>(&writes[k].value);
            c.bits.emplace_back(writes[k].feature_index, b && *b);
        }
        changes.push_back(std::move(c));
    }
    return be.set_features_many(changes);
}

// Device settings (link, rings, channels, ...) of several interfaces: one
// pipelined batch.
std::vector<Result<void>> send_devices(Backend& be, const std::vector<Write>& writes,
                                       std::span<const Group> batch) {
    std::vector<DeviceChange> changes;
    changes.reserve(batch.size());
    for (const Group& g : batch) {
        const Write& w = writes[g.first];
        DeviceChange c{*w.nic, w.id.section, {}};
        c.values.reserve(g.last - g.first);
        for (std::size_t k = g.first; k < g.last; ++k)
            if (auto v = device_value_of(*writes[k].id.key, writes[k].value))
                c.values.emplace_back(*writes[k].id.key, *v);
        changes.push_back(std::move(c));
    }
    return be.set_devices(changes);
}

// One result per group of the batch.
std::vector<Result<void>> send_batch(Backend& be, const std::vector<Write>& writes,
                                     std::span<const Group> batch) {
    const Write& w0 = writes[batch.front().first];
    if (!batchable(w0)) return {send_alone(be, writes, batch.front())};
    if (w0.id.section == Section::Features) return send_features(be, writes, batch);
    return send_devices(be, writes, batch);
}

// Notes a group's result on each of its writes; true when it is a failure
// (a skipped IRQ is not).
bool record(Executed& out, const std::vector<Write>& writes, Group g, const Result<void>& r) {
    for (std::size_t k = g.first; k < g.last; ++k)
        out.attempted[k] = true;
    if (r) return false;
    Error e = r.error();
    const Write& w = writes[g.first];
    if (w.nic && !e.context.starts_with(w.nic->name)) e.context = w.nic->name + ": " + e.context;
    if (w.nic) e.interface = w.nic->name;
    for (std::size_t k = g.first; k < g.last; ++k) {
        Error ek = e;
        ek.setting = writes[k].id.path();
        out.errors.set(k, std::move(ek));
    }
    return !skipped_irq(w, e);
}

}  // namespace

// Consecutive writes to one interface and section are one message, and
// consecutive messages of the same phase on different interfaces go to the
// backend together (send_batch).
Executed execute(Backend& be, const std::vector<Write>& writes, bool stop_on_error,
                 const std::function<void(int group)>& before) {
    Executed out;
    out.attempted.assign(writes.size(), false);
    const std::vector<Group> groups = groups_of(writes);
    int group_no = 0;
    for (std::size_t gi = 0; gi < groups.size();) {
        const std::size_t gj = batch_end(writes, groups, gi);
        if (before)
            for (std::size_t g = gi; g < gj; ++g)
                before(++group_no);
        const std::span<const Group> batch(groups.data() + gi, gj - gi);
        const auto results = send_batch(be, writes, batch);
        bool failed = false;
        for (std::size_t g = 0; g < batch.size(); ++g)
            failed |= record(out, writes, batch[g], results[g]);
        if (failed && stop_on_error) break;
        gi = gj;
    }
    return out;
}

const std::optional<Error>& WriteErrors::operator[](std::size_t i) const {
    static const std::optional<Error> none;
    const auto it = errors_.find(i);
    return it == errors_.end() ? none : it->second;
}

void WriteErrors::set(std::size_t i, Error e) {
    errors_[i] = std::move(e);
}

void Reread::add(NicState n) {
    by_ifindex[n.id.ifindex] = nics.size();
    nics.push_back(std::move(n));
}

const NicState* Reread::find(int ifindex) const {
    auto it = by_ifindex.find(ifindex);
    return it == by_ifindex.end() ? nullptr : &nics[it->second];
}

namespace {

// Per interface, the families the writes touched.
std::vector<Backend::ObserveRequest> touched_families(const std::vector<Write>& writes) {
    std::vector<Backend::ObserveRequest> wanted;
    std::unordered_map<int, std::size_t> at;
    for (const auto& w : writes) {
        if (!w.nic) continue;
        auto [it, fresh] = at.try_emplace(w.nic->ifindex, wanted.size());
        if (fresh) wanted.push_back({*w.nic, 0});
        wanted[it->second].sections |= ReadRequest::bit(w.id.section);
    }
    return wanted;
}

// The system settings the writes touched, read again.
void reread_system(Backend& be, const std::vector<Write>& writes, Reread& out) {
    std::vector<std::string> sysctls;
    bool tuned = false;
    for (const auto& w : writes) {
        if (w.id.section == Section::Sysctl) sysctls.push_back(w.id.name);
        tuned |= w.id.section == Section::Tuned;
    }
    if (sysctls.empty() && !tuned) return;
    auto s = be.read_system(SystemQuery{sysctls, false, tuned});
    if (s) out.sys = std::move(*s);
}

}  // namespace

std::size_t interfaces_written(const std::vector<Write>& writes) {
    std::unordered_set<int> seen;
    for (const auto& w : writes)
        if (w.nic) seen.insert(w.nic->ifindex);
    return seen.size();
}

Reread reread(Backend& be, const std::vector<Write>& writes) {
    Reread out;
    const auto wanted = touched_families(writes);
    out.by_ifindex.reserve(wanted.size());
    // What the kernel's change notifications already said (when the backend
    // observes them)...
    auto seen = be.observed(wanted);
    out.nics = std::move(seen.nics);
    for (std::size_t i = 0; i < out.nics.size(); ++i)
        out.by_ifindex[out.nics[i].id.ifindex] = i;
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
            // Taken whole when nothing was observed (a read back of many:
            // 512 NicStates, 850 KB, not copied into a second vector).
            if (out.nics.empty()) {
                out.nics = std::move(*all);
                for (std::size_t i = 0; i < out.nics.size(); ++i)
                    out.by_ifindex[out.nics[i].id.ifindex] = i;
            } else {
                out.nics.reserve(out.nics.size() + all->size());
                for (auto& n : *all)
                    out.add(std::move(n));
            }
        } else {
            out.nics_error = std::move(all.error());
        }
    }
    reread_system(be, writes, out);
    return out;
}

namespace {

constexpr const char* kGone = "the interface is gone; its settings went with it";

// Whether write w (with error e, if any) is back at its value.
RestoreResult judge_restore(const Write& w, const std::optional<Error>& e, const Reread& again) {
    RestoreResult r{w.nic ? w.nic->name : "", w.id.path(), w.value, true, ""};
    const NicState* nic = w.nic ? again.find(w.nic->ifindex) : nullptr;
    if (w.nic && !nic && again.nics_error) {
        // Unverified is not restored: the saved originals must stay.
        r.ok = false;
        r.message = "cannot read it back: " + again.nics_error->str();
    } else if ((w.nic && !nic) || (e && e->code == Errc::NoSuchInterface)) {
        r.message = kGone;
    } else if (skipped_irq(w, e)) {
        r.message = e->message;  // never changed, so nothing to put back
    } else if (e) {
        r.ok = false;
        r.message = e->str();
    } else if (const Scalar now = again.value_of(w, nic); !same_value(w.id, now, w.value)) {
        r.ok = false;
        r.message = "reads back as " + to_string(now) + " after the restore";
    }
    return r;
}

}  // namespace

std::vector<RestoreResult> restore(Backend& be, const std::vector<Write>& writes) {
    std::vector<RestoreResult> out;
    Observing observing(be, writes);
    // A restore goes on after a failure: every value it can put back, it must.
    auto errors = execute(be, writes, false).errors;
    auto again = reread(be, writes);
    out.reserve(writes.size());
    for (std::size_t i = 0; i < writes.size(); ++i)
        out.push_back(judge_restore(writes[i], errors[i], again));
    return out;
}

}  // namespace nictune::tx
