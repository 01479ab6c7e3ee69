#include "watch/watcher.hpp"

#include <linux/if.h>

#include <algorithm>
#include <unordered_map>

namespace nictune::watch {

Watcher::Watcher(Manager& manager, WatcherEvents events)
    : manager_(manager), events_(std::move(events)) {}

namespace {

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The values `ir` leaves in effect, one per key (the last one given, as a
// map would keep), in a block sized once.
std::vector<BaselineValue> baseline_of(const InterfaceResult& ir) {
    std::vector<BaselineValue> out;
    out.reserve(ir.steps.size());
    for (const auto& s : ir.steps) {
        switch (s.outcome) {
            case Outcome::Applied:
            case Outcome::Translated:
            case Outcome::Adjusted:
            case Outcome::Unchanged:
                break;
            default:
                continue;
        }
        if (std::holds_alternative<std::monostate>(s.actual)) continue;
        const std::string* key = setting_key(s.step.setting.path());
        auto same =
            std::find_if(out.begin(), out.end(), [&](const auto& b) { return b.key == key; });
        if (same != out.end())
            same->value = s.actual;
        else
            out.push_back({key, s.actual});
    }
    return out;
}

// A feature whose request (wanted bit) is still what nictune set while the
// kernel keeps it at the other value: not drift, nothing to re-apply.
bool kernel_holds(const SettingId& id, const NicState& nic, const Scalar& want) {
    const bool* on = std::get_if<bool>(&want);
    if (id.section != Section::Features || !on || !nic.features) return false;
    auto idx = nic.features->index_of(id.name);
    return idx && nic.features->is_wanted(*idx) == *on && nic.features->is_active(*idx) != *on;
}

// A value in a log message: an empty CPU list (a queue without RPS/XPS)
// would read as nothing at all.
std::string shown(const Scalar& v) {
    std::string s = to_string(v);
    return s.empty() ? "(none)" : s;
}

bool is_placement(Section s) {
    return (kPlacementSections & ReadRequest::bit(s)) != 0;
}

bool placement_key(const std::string& key) {
    auto id = SettingId::parse(key);
    return id && is_placement(id->section);
}

// The baseline's values after an apply step that left `actual` in place.
bool settled(Outcome o) {
    return o == Outcome::Applied || o == Outcome::Translated || o == Outcome::Adjusted ||
           o == Outcome::Unchanged;
}

}  // namespace

const Scalar* Tracked::expected(std::string_view key) const {
    return baseline.find(key);
}

void Watcher::set_config(DaemonConfig cfg, std::map<std::string, Profile> profiles) {
    cfg_ = std::move(cfg);
    profiles_ = std::move(profiles);
    // Under a burst of new links every request waits for the kernel's RTNL
    // lock behind the link creations: read only what the plans need.
    read_sections_ = 0;
    for (const auto& b : cfg_.bindings) {
        auto it = profiles_.find(b.profile);
        read_sections_ |=
            it == profiles_.end() ? ReadRequest::kAllSections : sections_for(it->second);
    }
    places_ = (read_sections_ & kPlacementSections) != 0;
    placement_interval = std::chrono::seconds(cfg_.placement_check_interval);
    next_placement_ = now() + placement_interval;
    rebuilt_.clear();
    // Re-evaluate which tracked interfaces are bound; a binding that no
    // longer matches stops enforcing but leaves the settings as they are.
    for (auto& [idx, t] : tracked_) {
        t.binding = nullptr;
        t.enforcement_suspended = false;
        t.enforcements.clear();
    }
}

Watcher::Recorded::Recorded(const ApplyResult& r)
    : transaction(r.transaction),
      profile(r.profile),
      result(r.result),
      check(r.check ? r.check->name : std::string()),
      error(r.error ? r.error->str() : std::string()) {}

void Watcher::record(Tracked& t, const ApplyResult& r, const std::string& reason) {
    if (r.result != TxResult::Applied) return record(t, Recorded(r), std::nullopt, reason);
    const auto ir = std::find_if(r.interfaces.begin(), r.interfaces.end(),
                                 [&](const auto& x) { return x.name == t.name; });
    record(t, Recorded(r),
           ir == r.interfaces.end() ? std::vector<BaselineValue>() : baseline_of(*ir), reason);
}

void Watcher::record(Tracked& t, const Recorded& o,
                     std::optional<std::vector<BaselineValue>> baseline,
                     const std::string& reason) {
    t.profile = o.profile;
    t.transaction = o.transaction;
    t.last_result = tx_result_name(o.result);
    t.last_result_at = unix_now();
    t.drifted.clear();
    // Pending: the values are in effect but may still be undone; the
    // baseline waits for the verdict (drift checks skip it meanwhile).
    t.held = o.result == TxResult::Pending;
    if (o.result == TxResult::Applied && baseline) t.baseline = baselines_.intern(*baseline);
    LogFields f{t.name, o.profile, "", o.transaction};
    f.event = o.result == TxResult::Applied   ? Event::Applied
              : o.result == TxResult::Pending ? Event::None
                                              : Event::Failed;
    f.result = tx_result_name(o.result);
    f.reason = reason;
    if (o.result == TxResult::Applied)
        log(Level::Notice, "applied profile " + o.profile + " (" + reason + ")", f);
    else if (o.result == TxResult::Pending)
        log(Level::Notice,
            "applied profile " + o.profile + " (" + reason + "), waiting for " +
                (o.check.empty() ? std::string("confirmation") : o.check),
            f);
    else
        log(Level::Error,
            "profile " + o.profile + " (" + reason + "): " + tx_result_name(o.result) +
                (o.error.empty() ? std::string() : ": " + o.error),
            f);
    if (events_.applied)
        events_.applied(o.transaction, t.name, o.profile, tx_result_name(o.result), reason);
}

Result<const Profile*> Watcher::bound_profile(const std::string& name,
                                              std::optional<Profile>& holder) {
    if (auto it = profiles_.find(name); it != profiles_.end()) return &it->second;
    auto loaded = manager_.profiles().load(name);
    if (!loaded) return std::unexpected(loaded.error());
    holder = std::move(*loaded);
    return &*holder;
}

void Watcher::apply_binding(Tracked& t, const NicState& st, const std::string& reason) {
    // Once bound, an interface stays bound under a new name (tracked by
    // ifindex); a new ifindex or a reload looks the binding up again.
    if (!t.binding) t.binding = cfg_.binding_for(st.id);
    if (!t.binding) return;
    const Binding* b = t.binding;
    // The interface was just read: plan from that state, no second read.
    const ApplyRequest req{b->profile, {st.id.name}, false, false, false};
    std::optional<Profile> holder;
    auto p = bound_profile(b->profile, holder);
    // verify_peer: held open for nictune-verify@.service's verdict.
    ApplyOptions hooks;
    std::unique_ptr<HeldTransaction> held;
    if (b->verify_peer && events_.held) {
        hooks.hold = &held;
        hooks.check_name = "peer " + *b->verify_peer;
    }
    Result<ApplyResult> r = p ? manager_.apply_to(**p, {st}, req, hooks)
                              : Result<ApplyResult>(std::unexpected(p.error()));
    if (!r) {
        t.profile = b->profile;
        t.last_result = "error";
        t.last_result_at = unix_now();
        LogFields f{t.name, b->profile, "", ""};
        f.event = Event::Failed;
        f.result = "error";
        f.reason = reason;
        log(Level::Error, "profile " + b->profile + " (" + reason + "): " + r.error().str(), f);
        if (events_.applied) events_.applied("", t.name, b->profile, "error", reason);
        return;
    }
    if (held) {
        events_.held(std::move(held), *b, reason);  // notes the result back (note_request)
        return;
    }
    record(t, *r, reason);
}

void Watcher::apply_all(const std::string& reason) {
    auto nics = manager_.backend().read_interfaces(ReadRequest{{}, true});
    if (!nics) {
        log(Level::Error, "cannot read the interfaces: " + nics.error().str());
        return;
    }
    std::set<int> present;
    std::vector<NicState> bound;
    for (auto& st : *nics) {
        present.insert(st.id.ifindex);
        track(st).binding = nullptr;
        if (cfg_.binding_for(st.id)) bound.push_back(std::move(st));
    }
    std::erase_if(tracked_, [&](const auto& kv) { return !present.contains(kv.first); });
    dirty_.clear();
    notified_.clear();
    must_read_.clear();
    appeared_.clear();
    rebuilt_.clear();  // a full apply places the queues too
    apply_bindings(std::move(bound), reason);
}

// Hundreds of interfaces may appear at once (SR-IOV VFs created, a driver
// loaded, a boot): one transaction per profile reads nothing again, sends
// the SETs of all of them pipelined and verifies them with one re-read,
// where a transaction each would pay its saves, round trips and re-reads
// per interface. A transaction that does not apply cleanly (an interface
// vanished under it, a driver refused a value) has rolled back or changed
// nothing; its interfaces are then applied one by one from a fresh read, so
// that one bad NIC cannot leave the others untuned.
void Watcher::apply_bindings(std::vector<NicState> nics, const std::string& reason) {
    std::vector<std::pair<std::string, std::vector<NicState>>> groups;  // in order of appearance
    std::vector<NicState> alone;  // bindings with verify_peer: a check each
    for (auto& st : nics) {
        auto it = tracked_.find(st.id.ifindex);
        if (it == tracked_.end()) continue;
        Tracked& t = it->second;
        if (!t.binding) t.binding = cfg_.binding_for(st.id);
        if (!t.binding) continue;
        if (t.binding->verify_peer) {
            alone.push_back(std::move(st));
            continue;
        }
        auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& x) { return x.first == t.binding->profile; });
        if (g == groups.end()) g = groups.insert(groups.end(), {t.binding->profile, {}});
        g->second.push_back(std::move(st));
    }
    for (auto& [profile, group] : groups) {
        if (group.size() == 1) {
            apply_binding(tracked_.at(group.front().id.ifindex), group.front(), reason);
            continue;
        }
        std::vector<int> members;
        for (const auto& st : group)
            members.push_back(st.id.ifindex);
        if (apply_together(profile, std::move(group), members, reason)) continue;
        for (int idx : members) {
            Tracked& t = tracked_.at(idx);
            auto fresh = manager_.backend().read_interfaces(ReadRequest{{t.name}, true});
            if (!fresh || fresh->empty() || fresh->front().id.ifindex != t.ifindex)
                continue;  // gone: its RTM_DELLINK will say so
            apply_binding(t, fresh->front(), reason);
        }
    }
    for (const auto& st : alone)
        apply_binding(tracked_.at(st.id.ifindex), st, reason);
}

bool Watcher::apply_together(const std::string& profile, std::vector<NicState> group,
                             const std::vector<int>& members, const std::string& reason) {
    std::optional<Profile> holder;
    auto p = bound_profile(profile, holder);
    if (!p) return false;  // each interface reports the error on its own
    ApplyRequest req{profile, {}, false, false, false};
    for (const auto& st : group)
        req.interfaces.push_back(st.id.name);
    // What the members keep of the result is taken out of it and the result
    // freed before they keep it: the steps hold the plan's strings, and
    // baselines made among them would pin their pages once they are freed
    // (after a boot apply of 512 interfaces, 1.6 MiB of heap stayed resident
    // for 0.85 MiB in use; 1.1 MiB now).
    Recorded outcome;
    std::vector<std::vector<BaselineValue>> baselines;
    {
        auto r = manager_.apply_to(**p, std::move(group), req);
        if (!r || r->result != TxResult::Applied) {
            std::string why = r ? std::string(tx_result_name(r->result)) +
                                      (r->error ? ": " + r->error->str() : std::string())
                                : r.error().str();
            log(Level::Info,
                "profile " + profile + " (" + reason + "): one transaction for " +
                    std::to_string(members.size()) + " interfaces did not apply (" + why +
                    "); applying them one by one",
                {"", profile, "", r ? r->transaction : ""});
            return false;
        }
        std::unordered_map<std::string_view, const InterfaceResult*> by_name;
        by_name.reserve(r->interfaces.size());
        for (const auto& ir : r->interfaces)
            by_name.emplace(ir.name, &ir);
        baselines.reserve(members.size());
        for (int idx : members) {
            auto it = by_name.find(tracked_.at(idx).name);
            baselines.push_back(it == by_name.end() ? std::vector<BaselineValue>()
                                                    : baseline_of(*it->second));
        }
        outcome = Recorded(*r);
    }
    // Interned now that the result is gone: the members that hold the same
    // values share one block (BaselinePool).
    for (std::size_t i = 0; i < members.size(); ++i)
        record(tracked_.at(members[i]), outcome, std::move(baselines[i]), reason);
    return true;
}

// New links are read and tuned in chunks of kReadChunk: a chunk is read
// with one request per device, which the kernel answers even while links
// keep coming (a dump of every link is interrupted by each new one, and
// costs as much for two new links as for all of them); each chunk is tuned
// as soon as it is read, so the first links of a burst do not wait for the
// last.
void Watcher::take_appeared() {
    if (appeared_.empty()) return;
    std::vector<std::pair<int, Appeared>> all;
    all.reserve(appeared_.size());
    for (auto& [idx, a] : appeared_)
        all.emplace_back(idx, std::move(a));
    appeared_.clear();
    for (std::size_t from = 0; from < all.size(); from += kReadChunk) {
        const std::size_t to = std::min(all.size(), from + kReadChunk);
        std::span<std::pair<int, Appeared>> chunk(all.data() + from, to - from);
        auto nics = read_new(chunk);
        if (!nics) {
            // Links keep coming (a dump the kernel interrupted again and
            // again): they stay noted, and the daemon calls process() again
            // shortly (pending()).
            log(++read_retries_ == 1 ? Level::Info : Level::Debug,
                "cannot read the new interfaces yet (" + nics.error().str() + "); will retry");
            for (std::size_t i = from; i < all.size(); ++i)
                appeared_.insert(std::move(all[i]));
            return;
        }
        read_retries_ = 0;
        std::vector<NicState> fresh;
        for (auto& st : *nics) {
            const bool noted = std::any_of(chunk.begin(), chunk.end(),
                                           [&](const auto& a) { return a.first == st.id.ifindex; });
            if (!noted || tracked_.contains(st.id.ifindex)) continue;
            // New to us: hotplug, driver reload (a new ifindex), or a link moved
            // into this namespace.
            track(st);
            fresh.push_back(std::move(st));
        }
        apply_bindings(std::move(fresh), "hotplug");
    }
}

Result<std::vector<NicState>> Watcher::read_new(std::span<std::pair<int, Appeared>> chunk) {
    ReadRequest req{{}, true};
    req.sections = read_sections_;
    for (auto& [idx, a] : chunk) {
        req.names.push_back(a.name);
        // Moved: a read that fails keeps the chunk noted by name alone, and
        // the next read asks the kernel (which the retries' links need).
        if (a.link) req.linked.push_back(std::move(*a.link));
        a.link.reset();
    }
    // Those already gone are left out.
    auto nics = read_present(manager_.backend(), req);
    if (nics) return nics;
    // Not a vanished link: try every link at once (the caller keeps those
    // it noted).
    req.names.clear();
    return manager_.backend().read_interfaces(req);
}

Tracked& Watcher::track(const NicState& st) {
    Tracked& t = tracked_[st.id.ifindex];
    t.ifindex = st.id.ifindex;
    t.name = st.id.name;
    t.altnames = st.id.altnames;
    // Until an RTM_NEWLINK says IFF_UP: a link that is not running (admin
    // down, or no carrier) counts as down, so that its coming up re-checks
    // the placement (an IRQ requested at open has no affinity yet).
    if (!t.up)
        if (auto op = st.values.get(Key::LinkOperstate))
            t.up = *op == IF_OPER_UP || *op == IF_OPER_UNKNOWN;
    return t;
}

void Watcher::link_event(int ifindex, const std::string& name, bool deleted,
                         const DeviceValues* link, const std::vector<std::string>* altnames,
                         std::optional<uint32_t> flags) {
    if (deleted) {
        if (auto it = tracked_.find(ifindex); it != tracked_.end()) {
            log(Level::Info, "interface removed", {it->second.name, it->second.profile, "", ""});
            tracked_.erase(it);
        }
        dirty_.erase(ifindex);
        notified_.erase(ifindex);
        must_read_.erase(ifindex);
        appeared_.erase(ifindex);
        rebuilt_.erase(ifindex);
        return;
    }
    auto it = tracked_.find(ifindex);
    if (it == tracked_.end()) {
        // The latest name, if renamed before process(); what an earlier
        // RTM_NEWLINK said is no longer the latest.
        appeared_[ifindex] = Appeared{name, std::nullopt};
        return;
    }
    Tracked& t = it->second;
    // Up after down: the driver has requested its IRQs again and may have
    // rebuilt its queues. Only IFF_UP: a carrier change (operstate) neither
    // frees IRQs nor queues, and comes with a burst of RTM_NEWLINKs.
    if (flags) {
        const bool up = (*flags & IFF_UP) != 0;
        if (t.up && !*t.up && up) queues_rebuilt(ifindex, "link up");
        t.up = up;
    }
    const bool renamed = t.name != name;
    const bool new_altnames = altnames && *altnames != t.altnames;
    if (new_altnames) t.altnames = *altnames;
    if (renamed) follow_rename(t, name);
    // A binding by name may start matching under the new name, or one of
    // the new alternative names.
    if ((renamed || new_altnames) && !t.binding) {
        auto st = manager_.backend().read_interfaces(ReadRequest{{name}, true});
        if (st && !st->empty() && cfg_.binding_for(st->front().id))
            apply_binding(t, st->front(), "rename");
        return;
    }
    dirty_.insert(ifindex);
    if (!link) {
        must_read_.insert(ifindex);
        return;
    }
    Notified& n = notified_[ifindex];
    for (const auto& k : device_keys())
        if (k.section == Section::Link)
            if (auto v = link->get(k.key)) n.state.values.set(k.key, *v);
    n.sections |= ReadRequest::bit(Section::Link);
}

void Watcher::follow_rename(Tracked& t, const std::string& name) {
    log(Level::Info, "renamed from " + t.name, {name, t.profile, "", ""});
    // The saved originals follow the device, not the name: under both
    // names' locks (nictunectl --direct may run a transaction on either),
    // after the journals of a transaction that died on them are replayed.
    StateStore& store = manager_.state();
    if (store.has_interface(t.name)) {
        auto from = store.lock(t.name);
        auto to = from ? store.lock(name) : Result<StateLock>(std::unexpected(from.error()));
        const std::string held[] = {t.name, name};
        Result<void> moved = to ? store.replay_journals(held) : std::unexpected(to.error());
        if (moved) moved = store.rename_interface(t.name, name);
        if (!moved)
            log(moved.error().code == Errc::Busy ? Level::Warning : Level::Error,
                "cannot move the saved originals from " + t.name + " now (" + moved.error().str() +
                    "); the next transaction or rollback on " + name + " finds them by its ifindex",
                {name, t.profile, "", ""});
    }
    t.name = name;
}

void Watcher::device_changed(int ifindex) {
    if (!tracked_.contains(ifindex)) return;
    dirty_.insert(ifindex);
    must_read_.insert(ifindex);
}

void Watcher::queues_rebuilt(int ifindex, const std::string& why) {
    if (!tracked_.contains(ifindex)) return;
    rebuilt_.emplace(ifindex, why);  // the first reason of a round is logged
}

void Watcher::device_notified(int ifindex, Section section, const DeviceValues& values) {
    if (!tracked_.contains(ifindex)) return;
    dirty_.insert(ifindex);
    Notified& n = notified_[ifindex];
    for (const auto& k : device_keys())
        if (k.section == section)
            if (auto v = values.get(k.key)) n.state.values.set(k.key, *v);
    n.sections |= ReadRequest::bit(section);
}

void Watcher::link_seen(NicState link) {
    const int ifindex = link.id.ifindex;
    if (tracked_.contains(ifindex)) return;
    std::string name = link.id.name;
    appeared_[ifindex] = Appeared{std::move(name), std::move(link)};
}

void Watcher::features_notified(int ifindex, FeatureSet features) {
    if (!tracked_.contains(ifindex)) return;
    dirty_.insert(ifindex);
    Notified& n = notified_[ifindex];
    n.state.features = std::move(features);
    n.sections |= ReadRequest::bit(Section::Features);
}

void Watcher::resync() {
    log(Level::Warning, "netlink dropped notifications; re-reading every interface");
    // Keep what we know about tracked interfaces (baselines), re-check all,
    // and pick up interfaces that appeared unseen.
    auto nics = manager_.backend().read_interfaces(ReadRequest{{}, true});
    if (!nics) {
        // Tried again from process() (the daemon calls it again shortly).
        log(Level::Error, "resync failed: " + nics.error().str() + "; will retry");
        resync_again_ = true;
        return;
    }
    resync_again_ = false;
    std::set<int> present;
    std::vector<NicState> fresh;
    appeared_.clear();  // the dump has them all
    for (auto& st : *nics) {
        present.insert(st.id.ifindex);
        auto it = tracked_.find(st.id.ifindex);
        if (it == tracked_.end()) {
            track(st);
            if (cfg_.binding_for(st.id)) fresh.push_back(std::move(st));
        } else {
            // A rename may have been among the lost notifications: do what
            // link_event would have done with it.
            Tracked& t = it->second;
            const bool renamed = t.name != st.id.name;
            const bool new_altnames = t.altnames != st.id.altnames;
            t.altnames = st.id.altnames;
            if (renamed) follow_rename(t, st.id.name);
            if ((renamed || new_altnames) && !t.binding) {
                if (cfg_.binding_for(st.id)) apply_binding(t, st, "rename");
                continue;
            }
            // Lost notifications: what they said is unknown, read it. One
            // of them may have been a channel change: re-check the placement.
            dirty_.insert(st.id.ifindex);
            must_read_.insert(st.id.ifindex);
            queues_rebuilt(st.id.ifindex, "resync");
        }
    }
    std::erase_if(tracked_, [&](const auto& kv) { return !present.contains(kv.first); });
    std::erase_if(dirty_, [&](int i) { return !present.contains(i); });
    std::erase_if(rebuilt_, [&](const auto& kv) { return !present.contains(kv.first); });
    notified_.clear();
    apply_bindings(std::move(fresh), "hotplug");
}

void Watcher::check_drift(Tracked& t, const NicState& nic, uint32_t sections) {
    // Its queues are being re-checked after a rebuild (take_rebuilt, later
    // in this round): empty masks are the rebuild's, not drift.
    if (rebuilt_.contains(t.ifindex)) sections &= ~kPlacementSections;
    const auto section_checked = [&](const Result<SettingId>& id) {
        return id && (sections & ReadRequest::bit(id->section)) != 0;
    };
    std::vector<std::pair<std::string, Scalar>> changed;
    std::vector<std::pair<std::string, bool>> blocked;  // key, the value nictune requested
    bool queues_gone = false;
    for (const auto& [key, want] : t.baseline) {
        auto id = SettingId::parse(*key);
        if (!section_checked(id)) continue;
        Scalar actual = value_in(*id, &nic, nullptr);
        if (actual == want) continue;
        // A queue the baseline places is gone (fewer channels): not drift,
        // a rebuild; its re-check makes the baseline follow the queues.
        if (is_placement(id->section) && std::holds_alternative<std::monostate>(actual)) {
            queues_gone = true;
            continue;
        }
        if (kernel_holds(*id, nic, want))
            blocked.emplace_back(*key, std::get<bool>(want));
        else
            changed.emplace_back(*key, actual);
    }
    const auto checked = [&](const std::string& key) {
        return section_checked(SettingId::parse(key));
    };
    // Keys of families not checked keep what the last check said.
    const std::vector<std::string> before = t.drifted;
    std::erase_if(t.drifted, checked);
    // The request stands and the kernel overrides it: re-applying would send
    // the same bit again. Listed as differing, said once, never enforced.
    for (const auto& [key, on] : blocked) {
        t.drifted.push_back(key);
        if (std::find(before.begin(), before.end(), key) != before.end()) continue;
        log(Level::Notice,
            key + " is blocked: the kernel keeps it " + (on ? "off" : "on") +
                " although nictune's request stands (a feature it depends on, an upper device "
                "or XDP); not re-applying",
            {t.name, t.profile, key, ""});
    }
    if (queues_gone) queues_rebuilt(t.ifindex, "queues changed");
    if (changed.empty()) return;
    const bool enforce = t.binding && t.binding->enforce && !t.enforcement_suspended;
    for (const auto& [key, actual] : changed) {
        t.drifted.push_back(key);
        // The timer reads the placement again and again: a mask reported
        // and left alone is not reported anew on every check.
        if (!enforce && placement_key(key) &&
            std::find(before.begin(), before.end(), key) != before.end())
            continue;
        const std::string expected = to_string(*t.expected(key));
        LogFields f{t.name, t.profile, key, t.transaction};
        f.event = Event::Drift;
        f.expected = expected;
        f.actual = to_string(actual);
        log(Level::Warning,
            key + " drifted: " + shown(actual) + ", expected " + shown(*t.expected(key)) +
                (enforce ? "; re-applying" : ""),
            f);
        if (events_.drift) events_.drift(t.name, key, expected, to_string(actual), enforce);
    }
    if (!enforce) return;
    const auto t_now = now();
    std::erase_if(t.enforcements,
                  [&](const auto& at) { return t_now - at > std::chrono::minutes(1); });
    if (t.enforcements.size() >= kMaxEnforcementsPerMinute) {
        t.enforcement_suspended = true;
        log(Level::Error,
            "enforcement suspended: the settings changed " +
                std::to_string(kMaxEnforcementsPerMinute) +
                " times within a minute (another tool is fighting nictune?); SIGHUP or Reload "
                "resumes it",
            {t.name, t.profile, "", ""});
        return;
    }
    t.enforcements.push_back(t_now);
    // The drift check read only the families of the baseline; the plan
    // needs all of them and the driver's identity.
    auto full = manager_.backend().read_interfaces(ReadRequest{{t.name}, true});
    if (!full || full->empty() || full->front().id.ifindex != t.ifindex) return;  // gone
    apply_binding(t, full->front(), "drift");
}

void Watcher::process() {
    if (resync_again_) resync();
    take_appeared();
    check_dirty();
    check_placement();
    take_rebuilt();
}

int Watcher::placement_timeout_ms() const {
    if (!places_) return -1;
    const auto left = next_placement_ - now();
    if (left <= std::chrono::steady_clock::duration::zero()) return 0;
    return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

// No notification says that a queue's mask or an IRQ's affinity changed:
// every placement_interval, the next kPlacementChunk interfaces whose
// baseline places queues are read (those families only, no identity) and
// compared. The cost is bounded by the chunk, not by the number of
// interfaces.
void Watcher::check_placement() {
    if (!places_) return;
    const auto t_now = now();
    if (t_now < next_placement_) return;
    // Before anything else: a timer that stays due spins the event loop.
    next_placement_ = t_now + placement_interval;
    if (tracked_.empty()) return;
    ReadRequest req{{}, true};
    req.sections = kPlacementSections;
    req.identity = false;
    std::vector<int> picked;
    auto it = tracked_.upper_bound(placement_cursor_);
    for (std::size_t seen = 0; seen < tracked_.size() && picked.size() < kPlacementChunk;
         ++seen, ++it) {
        if (it == tracked_.end()) it = tracked_.begin();
        placement_cursor_ = it->first;
        const Tracked& t = it->second;
        if (!t.binding || t.held || rebuilt_.contains(it->first)) continue;
        if (std::none_of(t.baseline.begin(), t.baseline.end(),
                         [](const BaselineValue& b) { return placement_key(*b.key); }))
            continue;
        picked.push_back(it->first);
        req.names.push_back(t.name);
    }
    if (picked.empty()) return;
    read_and_check(req, picked, kPlacementSections, "the queue placement");
}

void Watcher::take_rebuilt() {
    auto rebuilt = std::move(rebuilt_);
    rebuilt_.clear();
    for (const auto& [idx, why] : rebuilt) {
        auto it = tracked_.find(idx);
        if (it == tracked_.end()) continue;
        Tracked& t = it->second;
        // Not tuned by a binding, rolled back, or waiting for a verdict
        // (whose end settles the baseline).
        if (!t.binding || t.baseline.empty() || t.held) continue;
        reapply_placement(t, why);
    }
}

// Only the placement sections: a ring or channel change the operator made
// is left to the drift check of [rings] and [channels] (reported, enforced
// only with `enforce`), while the masks the kernel emptied are put back
// whatever `enforce` says. One interface: one read of its link and
// placement families, one plan, SETs only for what differs.
void Watcher::reapply_placement(Tracked& t, const std::string& why) {
    const Binding* b = t.binding;
    std::optional<Profile> holder;
    auto p = bound_profile(b->profile, holder);
    if (!p) {
        log(Level::Error, "profile " + b->profile + " (" + why + "): " + p.error().str(),
            {t.name, b->profile, "", ""});
        return;
    }
    const Profile& profile = **p;
    const uint32_t wanted = sections_for(profile) & kPlacementSections;
    if (!wanted) return;
    ReadRequest req{{t.name}, true};
    req.sections = ReadRequest::bit(Section::Link) | wanted;
    auto nics = manager_.backend().read_interfaces(req);
    if (!nics || nics->empty() || nics->front().id.ifindex != t.ifindex) {
        if (!nics && nics.error().code != Errc::NoSuchInterface)
            log(Level::Warning,
                "cannot read the queue placement (" + why + "): " + nics.error().str(),
                {t.name, b->profile, "", ""});
        return;  // gone: its RTM_DELLINK says so
    }
    // The global flow table behind [rps] flow_cnt grows with the queues.
    SystemQuery sq;
    for (auto& name : plan_sysctls(profile))
        if (name == kRpsSockFlowEntries) sq.sysctls.push_back(name);
    SystemState sys;
    if (!sq.sysctls.empty()) {
        auto read = manager_.backend().read_system(sq);
        if (read) sys = std::move(*read);
    }
    Plan plan = make_plan(profile, *nics, sys, PlanOptions{false, &manager_.facts()});
    const std::string flow_table = SettingId::sysctl(std::string(kRpsSockFlowEntries)).path();
    for (auto& ip : plan.interfaces)
        std::erase_if(ip.steps, [](const PlanStep& s) { return !is_placement(s.setting.section); });
    std::erase_if(plan.system, [&](const PlanStep& s) {
        return sq.sysctls.empty() || s.setting.path() != flow_table;
    });

    // The baseline's placement keys become what the plan covers now.
    const auto rebase = [&](const std::vector<BaselineValue>& values) {
        Baseline::Values kept;
        kept.reserve(t.baseline.size() + values.size());
        for (const auto& v : t.baseline)
            if (!placement_key(*v.key)) kept.push_back(v);
        kept.insert(kept.end(), values.begin(), values.end());
        t.baseline = baselines_.intern(kept);
        std::erase_if(t.drifted, [](const std::string& k) { return placement_key(k); });
    };
    LogFields f{t.name, profile.name, "", t.transaction};
    if (!plan.has_changes()) {
        std::vector<BaselineValue> values;
        for (const auto& ip : plan.interfaces)
            for (const auto& s : ip.steps)
                if ((s.kind == StepKind::Unchanged || s.kind == StepKind::Covered) &&
                    !std::holds_alternative<std::monostate>(s.current))
                    values.push_back({setting_key(s.setting.path()), s.current});
        rebase(values);
        // After a resync every bound interface is re-checked: only a
        // change is worth a line then.
        log(why == "resync" ? Level::Debug : Level::Info,
            why + ": the queue placement of profile " + profile.name + " is in place", f);
        return;
    }
    for (const auto& ip : plan.interfaces)
        for (const auto& s : ip.steps)
            if (s.kind == StepKind::Change)
                log(Level::Notice,
                    s.setting.path() + " is " + shown(s.current) + " after " + why + ", expected " +
                        shown(s.target) + "; re-applying",
                    {t.name, profile.name, s.setting.path(), t.transaction});
    ApplyResult r = apply_plan(manager_.backend(), manager_.state(), plan);
    t.last_result = tx_result_name(r.result);
    t.last_result_at = unix_now();
    f.transaction = r.transaction;
    f.result = tx_result_name(r.result);
    f.reason = "queues";
    if (r.result == TxResult::Applied) {
        t.transaction = r.transaction;
        std::vector<BaselineValue> values;
        for (const auto& ir : r.interfaces) {
            if (ir.name != t.name) continue;
            for (const auto& s : ir.steps)
                if (settled(s.outcome) && !std::holds_alternative<std::monostate>(s.actual))
                    values.push_back({setting_key(s.step.setting.path()), s.actual});
        }
        rebase(values);
        f.event = Event::Applied;
        log(Level::Notice,
            "re-applied the queue placement of profile " + profile.name + " (" + why + ")", f);
    } else {
        f.event = Event::Failed;
        log(Level::Error,
            "queue placement of profile " + profile.name + " (" + why + "): " +
                tx_result_name(r.result) + (r.error ? ": " + r.error->str() : std::string()),
            f);
    }
    if (events_.applied)
        events_.applied(r.transaction, t.name, profile.name, tx_result_name(r.result), "queues");
}

// Every notification about a tracked interface leads here, including those
// nictune's own SETs cause (hundreds after a burst). What a notification
// carried is compared as it is; the rest (changes whose content is unknown)
// is read in one request for all, of the families their baselines hold,
// without driver identity.
void Watcher::check_dirty() {
    auto dirty = std::move(dirty_);
    dirty_.clear();
    auto notified = std::move(notified_);
    notified_.clear();
    auto must_read = std::move(must_read_);
    must_read_.clear();
    ReadRequest req{{}, true};
    req.sections = 0;
    req.identity = false;
    std::vector<int> checked;
    for (int idx : dirty) {
        auto it = tracked_.find(idx);
        if (it == tracked_.end() || it->second.baseline.empty() || it->second.held) continue;
        // The notifications carried the new state: compare it, no read.
        // (A check can enforce, which may add to notified_ and dirty_ for
        // the next round; `it` stays valid.)
        if (auto n = notified.find(idx); n != notified.end() && !must_read.contains(idx)) {
            check_drift(it->second, n->second.state, n->second.sections);
            continue;
        }
        checked.push_back(idx);
        req.names.push_back(it->second.name);
        for (const auto& [key, value] : it->second.baseline)
            if (auto id = SettingId::parse(*key)) req.sections |= ReadRequest::bit(id->section);
    }
    if (checked.empty()) return;
    read_and_check(req, checked, ReadRequest::kAllSections, "the interfaces");
}

void Watcher::read_and_check(const ReadRequest& req, const std::vector<int>& indices,
                             uint32_t sections, std::string_view what) {
    // Those gone are left out (their RTM_DELLINK says so).
    auto nics = read_present(manager_.backend(), req);
    if (!nics) {
        // Not an interrupted dump (read_present falls back to one request
        // each): say so; the next notification or timer checks again.
        log(Level::Warning,
            "cannot read " + std::string(what) + " to check for drift: " + nics.error().str());
        return;
    }
    for (int idx : indices) {
        auto it = tracked_.find(idx);
        if (it == tracked_.end()) continue;
        // By ifindex: a name now held by another device is not this one.
        auto st = std::find_if(nics->begin(), nics->end(),
                               [&](const NicState& n) { return n.id.ifindex == idx; });
        if (st != nics->end()) check_drift(it->second, *st, sections);
    }
}

void Watcher::note_request(const ApplyResult& r, const std::string& reason) {
    for (const auto& ir : r.interfaces) {
        for (auto& [idx, t] : tracked_) {
            if (t.name != ir.name) continue;
            record(t, r, reason);
        }
    }
}

void Watcher::note_rollback(const std::string& interface) {
    for (auto& [idx, t] : tracked_) {
        if (t.name != interface) continue;
        LogFields f{t.name, t.profile, "", ""};
        f.event = Event::RolledBack;
        f.result = "rolled_back";
        f.reason = "request";
        log(Level::Notice, "original settings restored", f);
        // The operator asked for the originals: stop holding the profile.
        t.baseline = {};
        t.drifted.clear();
        t.last_result = "rolled_back";
        t.last_result_at = unix_now();
    }
}

}  // namespace nictune::watch
