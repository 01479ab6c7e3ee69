// rollback_interfaces, step by step: find the devices, lock and replay,
// load the records (and those under a renamed device's earlier names),
// order the restores (the reverse of the apply order), restore and verify,
// then forget the records that are back or keep what is left.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "engine/transaction.hpp"
#include "engine/tx_steps.hpp"
#include "util/strings.hpp"

namespace nictune {

using tx::Write;

namespace {

// One rollback of several interfaces: per name asked for, its result and
// what the steps found. A name whose work is done (refused, nothing saved,
// named twice) is no longer active.
struct Batch {
    explicit Batch(StateStore& s, const std::vector<std::string>& requested)
        : store(s),
          out(requested.size()),
          active(requested.size(), true),
          names(requested.size()),
          device(requested.size(), nullptr),
          records(requested.size()),
          earlier(requested.size()) {
        for (std::size_t i = 0; i < requested.size(); ++i)
            out[i].interface = requested[i];
    }

    StateStore& store;
    std::vector<RollbackResult> out;
    std::vector<bool> active;
    std::vector<std::string> names;       // the record's name, per request
    std::vector<const NicState*> device;  // into present; null: not here
    std::vector<NicState> present;        // the named devices that are here
    std::vector<std::optional<InterfaceRecord>> records;
    std::vector<std::vector<std::string>> earlier;  // earlier names whose records merged in
    std::vector<StateLock> locks;
    std::vector<std::string> locked;
    std::optional<Error> features_error;  // the read of saved features' devices failed

    [[nodiscard]] std::size_t size() const { return out.size(); }
    void refuse(std::size_t i, Error e) {
        if (e.interface.empty()) e.interface = out[i].interface;
        out[i].result = TxResult::Refused;
        out[i].error = std::move(e);
        active[i] = false;
    }
    void nothing_saved(std::size_t i) {
        out[i].nothing_saved = true;
        out[i].result = TxResult::Applied;
        active[i] = false;
    }
    // Whether `owner` is a name a record of interface i was saved under.
    [[nodiscard]] bool called_before(std::size_t i, const std::string& owner) const {
        return owner == names[i] || std::ranges::find(earlier[i], owner) != earlier[i].end();
    }
};

// ---- Find the devices.

// The record's name for one name asked for, as the kernel resolves it (a
// name or an alternative name): the device's current name.
void resolve_name(Batch& b, std::size_t i, const std::string& word,
                  const std::unordered_map<std::string_view, const NicState*>& called) {
    if (!valid_name_or_altname(word)) {
        b.refuse(
            i,
            Error{Errc::InvalidArgument, 0, "", "invalid interface name " + quote_name(word), {}});
        return;
    }
    if (auto it = called.find(word); it != called.end()) {
        b.device[i] = it->second;
        b.names[i] = it->second->id.name;
        b.out[i].interface = b.names[i];
        return;
    }
    // Not here: a record it has is under this name. A name that is neither
    // is the caller's mistake, and leaves no lock file behind.
    if (!valid_ifname(word) || !b.store.has_interface(word)) {
        b.refuse(i, Error{Errc::NoSuchInterface, 0, word, "no such interface", {}});
        return;
    }
    b.names[i] = word;
}

// One read of the named devices that are here, which the restore then
// uses: their names, alternative names, ifindex and MACs, which the link
// attributes carry. No ethtool family and no driver identity: the writes
// need the device's state only for features (read_features). False when
// that read failed (every name is refused).
bool find_devices(Backend& be, Batch& b, const std::vector<std::string>& requested) {
    std::vector<std::string> lookup;
    for (const auto& n : requested)
        if (valid_name_or_altname(n)) lookup.push_back(n);
    ReadRequest req{lookup, true};
    req.sections = ReadRequest::bit(Section::Link);
    req.identity = false;
    auto now = read_present(be, req);
    if (!now) {
        for (std::size_t i = 0; i < b.size(); ++i)
            b.refuse(i, now.error());
        return false;
    }
    b.present = std::move(*now);
    std::unordered_map<std::string_view, const NicState*> called;
    called.reserve(b.present.size());
    for (const auto& n : b.present) {
        called.emplace(n.id.name, &n);
        for (const auto& alt : n.id.altnames)
            called.emplace(alt, &n);
    }
    for (std::size_t i = 0; i < b.size(); ++i)
        resolve_name(b, i, requested[i], called);
    return true;
}

// ---- Lock and replay.

// False when the replay failed (every name still active is refused).
bool lock_and_replay(Batch& b) {
    std::unordered_set<std::string_view> seen;
    std::vector<std::size_t> which;
    std::vector<std::string_view> names;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (!b.active[i]) continue;
        // Named twice (or by a name and an alternative name): the first one
        // does the work.
        if (!seen.insert(b.names[i]).second) {
            b.nothing_saved(i);
            continue;
        }
        which.push_back(i);
        names.push_back(b.names[i]);
    }
    auto locks = b.store.lock_each(names);
    for (std::size_t k = 0; k < which.size(); ++k) {
        if (!locks[k]) {
            b.refuse(which[k], locks[k].error());
            continue;
        }
        b.locks.push_back(std::move(*locks[k]));
        b.locked.push_back(b.names[which[k]]);
    }
    if (auto ok = b.store.replay_journals(b.locked); !ok) {
        for (std::size_t i = 0; i < b.size(); ++i)
            if (b.active[i]) b.refuse(i, ok.error());
        return false;
    }
    return true;
}

// ---- Load the records.

void load_records(Batch& b) {
    std::vector<std::size_t> which;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < b.size(); ++i)
        if (b.active[i]) {
            which.push_back(i);
            names.push_back(b.names[i]);
        }
    // Together: the records of one transaction share a file, read once.
    auto recs = b.store.load_each(names);
    for (std::size_t k = 0; k < which.size(); ++k) {
        if (!recs[k])
            b.refuse(which[k], recs[k].error());
        else
            b.records[which[k]] = std::move(*recs[k]);
    }
}

// The record under an earlier name, taken under that name's lock after its
// journals are replayed; nullopt inside: rolled back meanwhile.
Result<std::optional<InterfaceRecord>> load_earlier(Batch& b, const std::string& name) {
    auto lock = b.store.lock(name);
    if (!lock) return std::unexpected(lock.error());
    const std::string held[] = {name};
    if (auto ok = b.store.replay_journals(held); !ok) return std::unexpected(ok.error());
    auto then = b.store.load_interface(name);
    if (then && *then) b.locks.push_back(std::move(*lock));
    return then;
}

// Merges the records found under interface i's earlier names, newest first
// in `found` (the earlier originals come first).
void merge_earlier(Batch& b, std::size_t i, const std::vector<InterfaceRecord>& found) {
    for (auto r = found.rbegin(); r != found.rend() && b.active[i]; ++r) {
        auto then = load_earlier(b, r->name);
        if (!then) {
            Error e = std::move(then.error());
            e.message += " (" + b.names[i] + "'s earlier name, where saved originals are)";
            b.refuse(i, std::move(e));
            break;
        }
        if (!*then) continue;
        b.earlier[i].push_back(r->name);
        auto& rec = b.records[i];
        if (!rec) {
            rec = std::move(**then);
            rec->name = b.names[i];
            continue;
        }
        std::vector<SavedValue> later = std::move(rec->originals);
        rec->originals = std::move((*then)->originals);
        rec->add_originals(std::move(later));
    }
}

// A device renamed while nobody followed it (nictuned stopped) has its
// record, or its first originals, under an earlier name: found by ifindex
// and MAC, and merged; the earlier files go with the record.
void take_earlier_records(Batch& b) {
    std::vector<DeviceRef> refs;
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < b.size(); ++i)
        if (b.active[i] && b.device[i]) {
            const Identity& id = b.device[i]->id;
            refs.push_back(DeviceRef{b.names[i], id.ifindex, id.mac, id.perm_mac});
            at.push_back(i);
        }
    if (refs.empty()) return;
    const auto found = b.store.earlier_records(refs, b.locked);
    for (std::size_t k = 0; k < found.size(); ++k)
        merge_earlier(b, at[k], found[k]);
}

void settle_unsaved(Batch& b) {
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (!b.active[i]) continue;
        if (!b.records[i])
            b.nothing_saved(i);
        else
            b.out[i].profile = b.records[i]->profile;
    }
}

// ---- The features of the devices whose records have saved features.

bool saves_features(const InterfaceRecord& r) {
    return std::ranges::any_of(r.originals, [](const SavedValue& o) {
        auto id = SettingId::parse(o.key);
        return id && id->section == Section::Features;
    });
}

// A feature is written by its bit index in the device's feature set, so the
// devices with saved features are read again for that family alone (the
// only one whose state a write needs). A device that read does not find
// keeps its features unread: those writes fail, its originals stay saved.
void read_features(Backend& be, Batch& b) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < b.size(); ++i)
        if (b.active[i] && b.device[i] && b.records[i] && saves_features(*b.records[i]))
            names.push_back(b.names[i]);
    if (names.empty()) return;
    ReadRequest req{names, true};
    req.sections = ReadRequest::bit(Section::Features);
    req.identity = false;
    auto now = read_present(be, req);
    if (!now) {
        b.features_error = std::move(now.error());
        return;
    }
    for (auto& fresh : *now)
        for (auto& n : b.present)
            if (n.id.ifindex == fresh.id.ifindex && n.id.name == fresh.id.name)
                n.features = std::move(fresh.features);
}

// ---- The writes: the saved originals, each with the index of its interface.

using Writes = std::vector<std::pair<Write, std::size_t>>;

// Why interface i's originals may not be written to the device here, or
// nullopt.
std::optional<Error> not_restorable(const Batch& b, std::size_t i) {
    const std::string& name = b.names[i];
    const InterfaceRecord& record = *b.records[i];
    const NicState* st = b.device[i];
    if (!st)
        return Error{Errc::NoSuchInterface,
                     0,
                     name,
                     "not present; its saved originals are kept in " + b.store.dir().string(),
                     {}};
    if (!record.mac.empty() && st->id.mac != record.mac &&
        (!st->id.perm_mac || st->id.perm_mac != record.perm_mac))
        return Error{Errc::InvalidArgument,
                     0,
                     name,
                     "is now a different device (MAC " + st->id.mac + ", saved " + record.mac +
                         "); refusing to restore another device's settings",
                     {}};
    return std::nullopt;
}

void add_device_writes(Batch& b, std::size_t i, Writes& writes) {
    if (auto why = not_restorable(b, i)) {
        b.refuse(i, std::move(*why));
        return;
    }
    const std::string& name = b.names[i];
    const NicState* st = b.device[i];
    const NicRef nic{st->id.ifindex, name};
    const uint32_t bits = st->features && st->features->names
                              ? static_cast<uint32_t>(st->features->names->size())
                              : 0;
    for (const auto& o : b.records[i]->originals) {
        auto id = SettingId::parse(o.key);
        if (!id) {
            b.out[i].restored.push_back(
                RestoreResult{name, o.key, o.value, false, id.error().str()});
            continue;
        }
        Write w{nic, *id, o.value, 0, bits};
        if (id->section == Section::Features) {
            auto idx = st->features ? st->features->index_of(id->name) : std::nullopt;
            if (!idx) {
                std::string why = st->features ? "the device has no such feature now"
                                  : b.features_error
                                      ? "cannot read its features: " + b.features_error->str()
                                      : "cannot read its features";
                b.out[i].restored.push_back(
                    RestoreResult{name, o.key, o.value, false, std::move(why)});
                continue;
            }
            w.feature_index = *idx;
        }
        writes.emplace_back(std::move(w), i);
    }
}

// System settings whose last users these interfaces were leave `sysrec`
// and are restored with (and reported by) the interface that released
// them last.
void release_system_settings(const Batch& b, SystemRecord& sysrec, Writes& writes) {
    for (auto it = sysrec.entries.begin(); it != sysrec.entries.end();) {
        std::size_t last = b.size();
        for (std::size_t i = 0; i < b.size(); ++i) {
            if (!b.active[i]) continue;
            const auto gone = std::erase_if(
                it->owners, [&](const std::string& o) { return b.called_before(i, o); });
            if (gone != 0) last = i;
        }
        if (last == b.size() || !it->owners.empty()) {
            ++it;
            continue;
        }
        if (auto id = SettingId::parse(it->key))
            writes.emplace_back(Write{std::nullopt, *id, it->original, 0, 0}, last);
        it = sysrec.entries.erase(it);
    }
}

// ---- Restore, in the reverse of the apply order.

void restore_all(Backend& be, Batch& b, Writes& writes) {
    tx::order_by_phase(
        writes, [](const auto& w) { return w.first.id.section; }, tx::Direction::Undo);
    std::vector<Write> all;
    all.reserve(writes.size());
    for (auto& [w, i] : writes)
        all.push_back(std::move(w));
    auto restored = all.empty() ? std::vector<RestoreResult>{} : tx::restore(be, all);
    for (std::size_t k = 0; k < restored.size(); ++k)
        b.out[writes[k].second].restored.push_back(std::move(restored[k]));
}

// ---- Forget what is back, keep what is left.

// Everything of these interfaces is back: their files go (their earlier
// names' first), all in one removal (one directory sync), and the system
// record loses them as owners.
void forget_restored(Batch& b, const std::vector<std::size_t>& done) {
    std::vector<std::string> files;
    std::vector<std::pair<std::size_t, bool>> whose;  // per file: interface, its own name
    for (std::size_t i : done) {
        for (const auto& name : b.earlier[i]) {
            files.push_back(name);
            whose.emplace_back(i, false);
        }
        files.push_back(b.names[i]);
        whose.emplace_back(i, true);
        b.out[i].result = TxResult::RolledBack;
    }
    auto removed = b.store.remove_interfaces(files);
    for (std::size_t k = 0; k < removed.size(); ++k) {
        if (removed[k]) continue;
        RollbackResult& r = b.out[whose[k].first];
        if (whose[k].second || !r.error) r.error = removed[k].error();
    }
}

// Something of interface i is not back: the originals stay saved, the
// record says what is left, and it stays an owner (under whichever name)
// of the system settings it uses. True when its earlier files went.
bool keep_partial(Batch& b, std::size_t i, const SystemRecord* before, SystemRecord& sysrec) {
    RollbackResult& r = b.out[i];
    InterfaceRecord keep = *b.records[i];
    keep.status = TxStatus::Failed;
    keep.updated_at = tx::unix_now();
    bool changed = false;
    if (auto ok = b.store.save_interface(keep); !ok) {
        if (!r.error) r.error = ok.error();
    } else {
        // Merged into it: the earlier files are not needed.
        for (const auto& name : b.earlier[i])
            if (auto gone = b.store.remove_interface(name); !gone && !r.error)
                r.error = gone.error();
        changed = !b.earlier[i].empty();
    }
    r.result = TxResult::Partial;
    if (!before) return changed;
    for (const auto& e : before->entries) {
        if (std::ranges::none_of(e.owners,
                                 [&](const std::string& o) { return b.called_before(i, o); }))
            continue;
        SystemEntry* kept = sysrec.find(e.key);
        if (!kept) {
            sysrec.entries.push_back(SystemEntry{e.key, e.original, {}});
            kept = &sysrec.entries.back();
        }
        kept->owners.push_back(b.names[i]);
    }
    return changed;
}

// Settles every active interface; true when the system record may have
// changed (one of them was an owner).
bool settle_records(Batch& b, const SystemRecord* before, SystemRecord& sysrec) {
    bool system_changed = false;
    std::vector<std::size_t> complete;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (!b.active[i]) continue;
        const auto& restored = b.out[i].restored;
        if (std::all_of(restored.begin(), restored.end(),
                        [](const RestoreResult& r) { return r.ok; }))
            complete.push_back(i);
        else
            system_changed |= keep_partial(b, i, before, sysrec);
    }
    if (!complete.empty()) {
        forget_restored(b, complete);
        system_changed = true;
    }
    return system_changed;
}

}  // namespace

RollbackResult rollback_interface(Backend& be, StateStore& store, const std::string& name) {
    return std::move(rollback_interfaces(be, store, {name}).front());
}

// Every interface gets the result rollback_interface alone would give it;
// what they share is one read, one restore (all SETs pipelined, reverse
// apply order across interfaces, one verification read) and one write of
// the system record.
std::vector<RollbackResult> rollback_interfaces(Backend& be, StateStore& store,
                                                const std::vector<std::string>& requested) {
    Batch b(store, requested);
    if (!find_devices(be, b, requested) || !lock_and_replay(b)) return std::move(b.out);
    load_records(b);
    take_earlier_records(b);
    settle_unsaved(b);
    read_features(be, b);
    Writes writes;
    for (std::size_t i = 0; i < b.size(); ++i)
        if (b.active[i]) add_device_writes(b, i, writes);
    auto sys = store.load_system();
    SystemRecord sysrec;
    if (sys) {
        sysrec = *sys;
        release_system_settings(b, sysrec, writes);
    } else {
        for (std::size_t i = 0; i < b.size(); ++i)
            if (b.active[i])
                b.out[i].restored.push_back(
                    RestoreResult{"", "system", {}, false, sys.error().str()});
    }
    restore_all(be, b, writes);
    const bool system_changed = settle_records(b, sys ? &*sys : nullptr, sysrec);
    // Written only when one of these interfaces was an owner.
    if (sys && system_changed && !(sysrec == *sys))
        if (auto ok = store.save_system(sysrec); !ok)
            for (std::size_t i = 0; i < b.size(); ++i)
                if (b.active[i] && !b.out[i].error) b.out[i].error = ok.error();
    return std::move(b.out);
}

}  // namespace nictune
