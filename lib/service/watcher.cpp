#include "service/watcher.hpp"

#include <algorithm>

#include "service/log.hpp"

namespace nictune::service {

Watcher::Watcher(Manager& manager, WatcherEvents events)
    : manager_(manager), events_(std::move(events)) {}

void Watcher::set_config(DaemonConfig cfg, std::map<std::string, Profile> profiles) {
    cfg_ = std::move(cfg);
    profiles_ = std::move(profiles);
    // Re-evaluate which tracked interfaces are bound; a binding that no
    // longer matches stops enforcing but leaves the settings as they are.
    for (auto& [idx, t] : tracked_) {
        t.binding.reset();
        t.enforcement_suspended = false;
        t.enforcements.clear();
    }
}

void Watcher::record(Tracked& t, const ApplyResult& r, const std::string& reason) {
    t.profile = r.profile;
    t.transaction = r.transaction;
    t.last_result = tx_result_name(r.result);
    t.drifted.clear();
    if (r.result == TxResult::Applied) {
        t.baseline.clear();
        for (const auto& ir : r.interfaces) {
            if (ir.name != t.name) continue;
            for (const auto& s : ir.steps) {
                switch (s.outcome) {
                    case Outcome::Applied:
                    case Outcome::Translated:
                    case Outcome::Adjusted:
                    case Outcome::Unchanged:
                        if (!std::holds_alternative<std::monostate>(s.actual))
                            t.baseline[s.step.setting.path()] = s.actual;
                        break;
                    default:
                        break;
                }
            }
        }
    }
    LogFields f{t.name, r.profile, "", r.transaction};
    if (r.result == TxResult::Applied)
        log(Level::Notice, "applied profile " + r.profile + " (" + reason + ")", f);
    else
        log(Level::Error,
            "profile " + r.profile + " (" + reason + "): " + tx_result_name(r.result) +
                (r.error ? ": " + r.error->str() : std::string()),
            f);
    if (events_.applied)
        events_.applied(r.transaction, t.name, r.profile, tx_result_name(r.result), reason);
}

void Watcher::apply_binding(Tracked& t, const NicState& st, const std::string& reason) {
    // Once bound, an interface stays bound under a new name (tracked by
    // ifindex); a new ifindex or a reload looks the binding up again.
    if (!t.binding) {
        const Binding* b = cfg_.binding_for(st.id);
        if (!b) return;
        t.binding = *b;
    }
    const Binding* b = &*t.binding;
    // The interface was just read: plan from that state, no second read.
    const ApplyRequest req{b->profile, {st.id.name}, false, false, false};
    auto p = profiles_.find(b->profile);
    Result<ApplyResult> r = fail(Errc::Internal, "", "no profile");
    if (p != profiles_.end()) {
        r = manager_.apply_to(p->second, {st}, req);
    } else if (auto loaded = manager_.profiles().load(b->profile)) {
        r = manager_.apply_to(*loaded, {st}, req);
    } else {
        r = std::unexpected(loaded.error());
    }
    if (!r) {
        t.profile = b->profile;
        t.last_result = "error";
        log(Level::Error, "profile " + b->profile + " (" + reason + "): " + r.error().str(),
            {t.name, b->profile, "", ""});
        if (events_.applied) events_.applied("", t.name, b->profile, "error", reason);
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
    for (const auto& st : *nics) {
        present.insert(st.id.ifindex);
        auto& t = tracked_[st.id.ifindex];
        t.ifindex = st.id.ifindex;
        t.name = st.id.name;
        t.binding.reset();
        if (cfg_.binding_for(st.id)) apply_binding(t, st, reason);
    }
    std::erase_if(tracked_, [&](const auto& kv) { return !present.contains(kv.first); });
    dirty_.clear();
}

void Watcher::link_event(int ifindex, const std::string& name, bool deleted) {
    if (deleted) {
        if (auto it = tracked_.find(ifindex); it != tracked_.end()) {
            log(Level::Info, "interface removed", {it->second.name, it->second.profile, "", ""});
            tracked_.erase(it);
        }
        dirty_.erase(ifindex);
        return;
    }
    auto it = tracked_.find(ifindex);
    if (it == tracked_.end()) {
        // New to us: hotplug, driver reload (a new ifindex), or a link
        // moved into this namespace.
        auto st = manager_.backend().read_interfaces(ReadRequest{{name}, true});
        if (!st || st->empty() || st->front().id.ifindex != ifindex)
            return;  // gone or renamed again already
        Tracked& t = tracked_[ifindex];
        t.ifindex = ifindex;
        t.name = name;
        if (cfg_.binding_for(st->front().id)) apply_binding(t, st->front(), "hotplug");
        return;
    }
    Tracked& t = it->second;
    if (t.name != name) {
        follow_rename(t, name);
        // A binding by name may start matching under the new name.
        if (!t.binding) {
            auto st = manager_.backend().read_interfaces(ReadRequest{{name}, true});
            if (st && !st->empty() && cfg_.binding_for(st->front().id))
                apply_binding(t, st->front(), "rename");
            return;
        }
    }
    dirty_.insert(ifindex);
}

void Watcher::follow_rename(Tracked& t, const std::string& name) {
    log(Level::Info, "renamed from " + t.name, {name, t.profile, "", ""});
    // The saved originals follow the device, not the name.
    auto rec = manager_.state().load_interface(t.name);
    if (rec && *rec) {
        InterfaceRecord moved = **rec;
        moved.name = name;
        if (auto saved = manager_.state().save_interface(moved); saved)
            (void)manager_.state().remove_interface(t.name);
        else
            log(Level::Error,
                "cannot move the saved originals from " + t.name + ": " + saved.error().str(),
                {name, t.profile, "", ""});
    }
    t.name = name;
}

void Watcher::device_changed(int ifindex) {
    if (tracked_.contains(ifindex)) dirty_.insert(ifindex);
}

void Watcher::resync() {
    log(Level::Warning, "netlink dropped notifications; re-reading every interface");
    // Keep what we know about tracked interfaces (baselines), re-check all,
    // and pick up interfaces that appeared unseen.
    auto nics = manager_.backend().read_interfaces(ReadRequest{{}, true});
    if (!nics) {
        log(Level::Error, "resync failed: " + nics.error().str());
        return;
    }
    std::set<int> present;
    for (const auto& st : *nics) {
        present.insert(st.id.ifindex);
        auto it = tracked_.find(st.id.ifindex);
        if (it == tracked_.end()) {
            Tracked& t = tracked_[st.id.ifindex];
            t.ifindex = st.id.ifindex;
            t.name = st.id.name;
            if (cfg_.binding_for(st.id)) apply_binding(t, st, "hotplug");
        } else {
            // A rename may have been among the lost notifications: do what
            // link_event would have done with it.
            Tracked& t = it->second;
            if (t.name != st.id.name) {
                follow_rename(t, st.id.name);
                if (!t.binding) {
                    if (cfg_.binding_for(st.id)) apply_binding(t, st, "rename");
                    continue;
                }
            }
            dirty_.insert(st.id.ifindex);
        }
    }
    std::erase_if(tracked_, [&](const auto& kv) { return !present.contains(kv.first); });
    std::erase_if(dirty_, [&](int i) { return !present.contains(i); });
}

void Watcher::check_drift(Tracked& t) {
    if (t.baseline.empty()) return;
    auto st = manager_.backend().read_interfaces(ReadRequest{{t.name}, true});
    if (!st || st->empty() || st->front().id.ifindex != t.ifindex)
        return;  // gone: link_event will say so
    const NicState& nic = st->front();
    std::vector<std::pair<std::string, Scalar>> changed;
    for (const auto& [key, want] : t.baseline) {
        auto id = SettingId::parse(key);
        if (!id) continue;
        Scalar actual = value_in(*id, &nic, nullptr);
        if (actual != want) changed.emplace_back(key, actual);
    }
    t.drifted.clear();
    if (changed.empty()) return;
    const bool enforce = t.binding && t.binding->enforce && !t.enforcement_suspended;
    for (const auto& [key, actual] : changed) {
        t.drifted.push_back(key);
        log(Level::Warning,
            key + " drifted: " + to_string(actual) + ", expected " + to_string(t.baseline[key]) +
                (enforce ? "; re-applying" : ""),
            {t.name, t.profile, key, ""});
        if (events_.drift)
            events_.drift(t.name, key, to_string(t.baseline[key]), to_string(actual), enforce);
    }
    if (!enforce) return;
    const auto t_now = now();
    while (!t.enforcements.empty() && t_now - t.enforcements.front() > std::chrono::minutes(1))
        t.enforcements.pop_front();
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
    apply_binding(t, nic, "drift");
}

void Watcher::process() {
    auto dirty = std::move(dirty_);
    dirty_.clear();
    for (int idx : dirty) {
        auto it = tracked_.find(idx);
        if (it != tracked_.end()) check_drift(it->second);
    }
}

void Watcher::note_request(const ApplyResult& r) {
    for (const auto& ir : r.interfaces) {
        for (auto& [idx, t] : tracked_) {
            if (t.name != ir.name) continue;
            record(t, r, "request");
        }
    }
}

void Watcher::note_rollback(const std::string& interface) {
    for (auto& [idx, t] : tracked_) {
        if (t.name != interface) continue;
        // The operator asked for the originals: stop holding the profile.
        t.baseline.clear();
        t.drifted.clear();
        t.last_result = "rolled_back";
    }
}

}  // namespace nictune::service
