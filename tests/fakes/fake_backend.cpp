#include "fakes/fake_backend.hpp"

#include <algorithm>
#include <cstring>

#include "model/cpulist.hpp"
#include "model/rss.hpp"

namespace nictune::test {

NicState* FakeBackend::nic(const std::string& name) {
    for (auto& n : nics)
        if (n.id.name == name) return &n;
    return nullptr;
}

NicState* FakeBackend::by_index(int ifindex) {
    for (auto& n : nics)
        if (n.id.ifindex == ifindex) return &n;
    return nullptr;
}

Result<std::vector<NicState>> FakeBackend::read_interfaces(const ReadRequest& req) {
    ++read_calls;
    requests.push_back(req);
    if (vanish_after_ && set_calls_ >= vanish_after_->first) {
        std::erase_if(nics, [&](const NicState& n) { return n.id.name == vanish_after_->second; });
        vanish_after_.reset();
    }
    if (fail_reads > 0 && read_calls > fail_reads_after) {
        --fail_reads;
        return fail(Errc::Busy, "links: dump", "netlink: Dump inconsistency detected, interrupted");
    }
    std::vector<NicState> out;
    if (req.names.empty()) {
        out = nics;
    } else {
        for (const auto& n : req.names) {
            // As the kernel: by name or alternative name.
            auto* s = nic(n);
            for (auto& x : nics)
                if (!s && std::ranges::find(x.id.altnames, n) != x.id.altnames.end()) s = &x;
            if (!s) return fail_on(Errc::NoSuchInterface, n, "no such interface");
            out.push_back(*s);
        }
    }
    if (!req.identity)
        for (auto& s : out)
            s.id.driver.reset();
    // As the real one: the feature set only when the family is asked for.
    if (!req.wants(Section::Features))
        for (auto& s : out)
            s.features.reset();
    return out;
}

Result<SystemState> FakeBackend::read_system(const SystemQuery&) {
    return system;
}

Result<void> FakeBackend::before_set(const std::string& what) {
    ++set_calls_;
    calls.push_back(Call{what});
    if (vanish_ && vanish_->first == set_calls_) {
        std::erase_if(nics, [&](const NicState& n) { return n.id.name == vanish_->second; });
    }
    if (auto it = failures_.find(set_calls_); it != failures_.end()) {
        Error e{Errc::Kernel, it->second.first, what, std::strerror(it->second.first),
                it->second.second};
        return std::unexpected(e);
    }
    return {};
}

Result<void> FakeBackend::after_set(const std::string& name) const {
    if (std::find(lost_.begin(), lost_.end(), set_calls_) == lost_.end()) return {};
    return std::unexpected(Error{Errc::Io, ETIMEDOUT, name, "netlink: no acknowledgement", ""});
}

Result<void> FakeBackend::set_device(const NicRef& ref, Section section,
                                     std::span<const std::pair<Key, uint64_t>> values) {
    if (auto r =
            before_set("set_device " + std::string(section_info(section).name) + " " + ref.name);
        !r)
        return r;
    if (fail_set && fail_set(ref.name, section))
        return std::unexpected(Error{Errc::Kernel, EINVAL, ref.name, "Invalid argument", ""});
    NicState* n = by_index(ref.ifindex);
    if (!n) return fail_on(Errc::NoSuchInterface, ref.name, "No such device");
    for (const auto& [k, v] : values) {
        if (key_info(k).section != section)
            return fail(Errc::Internal, ref.name, "key in the wrong section");
        if (!n->values.has(k))
            return std::unexpected(Error{Errc::Unsupported, EOPNOTSUPP, ref.name,
                                         "Operation not supported",
                                         "cannot modify an unsupported parameter"});
        if (std::find(ignored_.begin(), ignored_.end(), k) != ignored_.end()) continue;
        auto a = adjust_.find(k);
        const uint64_t now = a != adjust_.end() ? a->second(v) : v;
        if (n->values.get(k) != now) notify(ref.ifindex, ReadRequest::bit(section));
        n->values.set(k, now);
    }
    // [rss]: the RX rings follow the channels.
    if (section == Section::Channels && n->rss && n->rss->rx_rings) {
        const uint64_t rings =
            n->values.get(Key::ChanCombined).value_or(0) + n->values.get(Key::ChanRx).value_or(0);
        n->rss->rx_rings = rings;
        if (n->rss->indirection && rings > 0 &&
            std::find(rss_configured.begin(), rss_configured.end(), ref.ifindex) ==
                rss_configured.end())
            for (std::size_t i = 0; i < n->rss->indirection->size(); ++i)
                (*n->rss->indirection)[i] = static_cast<uint32_t>(i % rings);
    }
    return after_set(ref.name);
}

Result<void> FakeBackend::set_features(const NicRef& ref, uint32_t,
                                       std::span<const std::pair<std::size_t, bool>> bits) {
    if (auto r = before_set("set_features " + ref.name); !r) return r;
    NicState* n = by_index(ref.ifindex);
    if (!n) return fail_on(Errc::NoSuchInterface, ref.name, "No such device");
    if (!n->features) return fail(Errc::Unsupported, ref.name, "no features");
    for (const auto& [i, on] : bits) {
        auto& fs = *n->features;
        if (fs.is_fixed(i)) continue;  // the kernel leaves fixed features alone
        const uint32_t bit = 1U << (i % 32);
        if (fs.is_active(i) != on || fs.is_wanted(i) != on)
            notify(ref.ifindex, ReadRequest::bit(Section::Features));
        const bool kept =
            fs.names && i < fs.names->size() &&
            std::find(kept_off.begin(), kept_off.end(), (*fs.names)[i]) != kept_off.end();
        if (on) {
            if (!kept) fs.active[i / 32] |= bit;
            fs.wanted[i / 32] |= bit;
        } else {
            fs.active[i / 32] &= ~bit;
            fs.wanted[i / 32] &= ~bit;
        }
    }
    return after_set(ref.name);
}

Result<void> FakeBackend::set_private_flags(const NicRef& ref, std::span<const PrivateFlag> flags) {
    if (auto r = before_set("set_private_flags " + ref.name); !r) return r;
    NicState* n = by_index(ref.ifindex);
    if (!n) return fail_on(Errc::NoSuchInterface, ref.name, "no such interface");
    if (!n->private_flags) return fail(Errc::Unsupported, ref.name, "no private flags");
    auto copy = *n->private_flags;
    for (const auto& f : flags) {
        auto it = std::find_if(copy.begin(), copy.end(),
                               [&](const PrivateFlag& x) { return x.name == f.name; });
        if (it == copy.end()) {
            Error e{Errc::Kernel, EINVAL, ref.name + ": private_flags: set", "Invalid argument",
                    "bit name not found"};
            return std::unexpected(e);
        }
        it->on = f.on;
    }
    n->private_flags = std::move(copy);
    return {};
}

Result<void> FakeBackend::set_queue(const NicRef& ref, Section section, std::size_t queue,
                                    std::string_view what, const Scalar& value) {
    if (auto r = before_set("set_queue " + ref.name + " " + std::to_string(queue)); !r) return r;
    NicState* n = by_index(ref.ifindex);
    if (!n) return fail_on(Errc::NoSuchInterface, ref.name, "no such interface");
    if (!n->queues) return fail(Errc::Unsupported, ref.name, "no queues");
    const auto* text = std::get_if<std::string>(&value);
    const auto* num = std::get_if<uint64_t>(&value);
    if (section == Section::Xps && queue < n->queues->tx.size() && text)
        n->queues->tx[queue].xps_cpus = *text;
    else if (section == Section::Rps && queue < n->queues->rx.size() && what == "cpus" && text)
        n->queues->rx[queue].rps_cpus = *text;
    else if (section == Section::Rps && queue < n->queues->rx.size() && what == "flow_cnt" && num)
        n->queues->rx[queue].rps_flow_cnt = *num;
    else
        return fail(Errc::Unsupported, ref.name, "no such queue");
    return {};
}

// [rss]
Result<void> FakeBackend::set_rss(const NicRef& ref, std::string_view what, const Scalar& value) {
    if (auto r = before_set("set_rss " + ref.name + " " + std::string(what)); !r) return r;
    NicState* n = by_index(ref.ifindex);
    if (!n) return fail_on(Errc::NoSuchInterface, ref.name, "no such interface");
    const auto* text = std::get_if<std::string>(&value);
    if (!n->rss || !text)
        return std::unexpected(
            Error{Errc::Unsupported, EOPNOTSUPP, ref.name, "Operation not supported", ""});
    RssState& r = *n->rss;
    if (what == "indirection") {
        if (!r.indirection || r.indirection->empty() || !r.rx_rings)
            return std::unexpected(
                Error{Errc::Unsupported, EOPNOTSUPP, ref.name, "Operation not supported", ""});
        auto table = rss_indirection_table(*text, r.indirection->size(), *r.rx_rings);
        if (!table) return fail(Errc::InvalidArgument, ref.name, "not a table");
        for (uint32_t q : *table)
            if (q >= *r.rx_rings)
                return std::unexpected(
                    Error{Errc::Kernel, EINVAL, ref.name, "Invalid argument", ""});
        r.indirection = std::move(*table);
        std::erase(rss_configured, ref.ifindex);
        if (*text != "default") rss_configured.push_back(ref.ifindex);
        return after_set(ref.name);
    }
    auto bits = parse_rss_hash_fields(*text);
    for (auto& h : r.hash)
        if (what == "hash." + h.flow && bits) {
            h.fields = *bits;
            return after_set(ref.name);
        }
    return std::unexpected(
        Error{Errc::Unsupported, EOPNOTSUPP, ref.name, "Operation not supported", ""});
}

Result<void> FakeBackend::set_irq_affinity(const NicRef& ref, unsigned irq, std::string_view cpus) {
    if (auto r = before_set("set_irq " + ref.name + " " + std::to_string(irq)); !r) return r;
    NicState* n = by_index(ref.ifindex);
    if (!n) return fail_on(Errc::NoSuchInterface, ref.name, "no such interface");
    const std::string context = ref.name + ": irq." + std::to_string(irq) + ".cpus: set";
    if (std::find(managed_irqs.begin(), managed_irqs.end(), irq) != managed_irqs.end()) {
        Error e{Errc::Unsupported,
                EIO,
                context,
                "IRQ " + std::to_string(irq) + " is managed by the kernel (EIO)",
                {}};
        return std::unexpected(e);
    }
    auto list = parse_cpulist(cpus);
    if (!list || list->empty()) return fail(Errc::Kernel, context, "Invalid argument");
    if (n->irq)
        for (auto& q : n->irq->irqs)
            if (q.irq == irq) {
                q.affinity = format_cpulist(*list);
                q.effective = std::to_string(list->front());
                return {};
            }
    return fail(Errc::Unsupported, context, "IRQ " + std::to_string(irq) + " is gone");
}

Result<void> FakeBackend::set_irqbalance_banned(const NicRef& ref, std::string_view irqs) {
    if (auto r = before_set("set_irqbalance " + ref.name); !r) return r;
    NicState* n = by_index(ref.ifindex);
    if (!n) return fail_on(Errc::NoSuchInterface, ref.name, "no such interface");
    if (!n->irq || !n->irq->irqbalance || !n->irq->irqbalance->banned)
        return fail(Errc::Unsupported, ref.name, "irqbalance is not running");
    auto wanted = parse_cpulist(irqs);
    if (!wanted) return fail(Errc::InvalidArgument, ref.name, "not a list of IRQs");
    std::vector<unsigned> mine = *wanted;
    for (const auto& q : n->irq->irqs)
        mine.push_back(q.irq);
    std::vector<unsigned> list;
    for (unsigned b : *n->irq->irqbalance->banned)
        if (std::find(mine.begin(), mine.end(), b) == mine.end()) list.push_back(b);
    list.insert(list.end(), wanted->begin(), wanted->end());
    std::sort(list.begin(), list.end());
    for (auto& other : nics)
        if (other.irq && other.irq->irqbalance) other.irq->irqbalance->banned = list;
    return {};
}

Result<void> FakeBackend::set_sysctl(const std::string& name, const std::string& value) {
    if (auto r = before_set("set_sysctl " + name); !r) return r;
    for (auto& s : system.sysctl)
        if (s.name == name && s.value) {
            s.value = value;
            return {};
        }
    return fail(Errc::Unsupported, "sysctl." + name, "no such sysctl");
}

Result<void> FakeBackend::set_tuned_profile(const std::string& profile) {
    if (auto r = before_set("set_tuned " + profile); !r) return r;
    if (system.tuned.source != TunedSource::Dbus)
        return fail(Errc::Unsupported, "tuned", "tuned is not running");
    system.tuned.active_profile = profile;
    return {};
}

void FakeBackend::notify(int ifindex, uint32_t section_bit) {
    if (observing_ > 0) notified_[ifindex] |= section_bit;
}

bool FakeBackend::observe_changes(bool on) {
    if (!notifies) return false;
    if (on) {
        ++observing_;
    } else if (observing_ > 0 && --observing_ == 0) {
        notified_.clear();
    }
    return observing_ > 0;
}

Backend::Observed FakeBackend::observed(std::span<const ObserveRequest> wanted) {
    ++observed_calls;
    Observed out;
    for (const auto& w : wanted) {
        auto it = notified_.find(w.nic.ifindex);
        const NicState* n = by_index(w.nic.ifindex);
        if (observing_ == 0 || !n || it == notified_.end() ||
            (it->second & w.sections) != w.sections) {
            out.missing.push_back(w.nic.name);
            continue;
        }
        NicState st = *n;
        st.id.driver.reset();
        out.nics.push_back(std::move(st));
    }
    return out;
}

}  // namespace nictune::test
