#include "backend/irq_read.hpp"

#include <optional>

#include "util/strings.hpp"

namespace nictune {

void read_irq_placements(const sysinfo::IrqFiles& files, std::vector<NicState>& nics,
                         const ReadRequest& req) {
    // Read when the first interface needs them, then handed to each.
    std::optional<Result<sysinfo::InterruptTable>> table;
    std::optional<std::optional<IrqBalance>> ib;
    for (auto& nic : nics) {
        if (const auto* back = req.irq_readback_of(nic.id.name)) {
            nic.irq = files.read_back(back->irqs);
            continue;
        }
        auto bytes = unescape_name(nic.id.name);
        if (!bytes) continue;
        if (!table) table = files.interrupts();
        if (!*table) {
            nic.problems.push_back(
                ReadProblem{Section::Irq, (*table).error().sys_errno, (*table).error().str()});
            continue;
        }
        auto p = files.read(*bytes, **table, req.irq_effective);
        if (!p) {
            nic.problems.push_back(ReadProblem{Section::Irq, p.error().sys_errno, p.error().str()});
            continue;
        }
        if (*p) {
            if (!ib) ib = files.irqbalance();
            (*p)->irqbalance = *ib;
        }
        nic.irq = std::move(*p);
    }
}

void IrqWritesSeen::wrote(int ifindex, unsigned irq,
                          const Result<std::optional<std::string>>& result) {
    Seen& s = by_ifindex_[ifindex];
    if (result && !*result) {
        s.unseen = true;
        return;
    }
    auto [it, fresh] = s.at.try_emplace(irq, s.irqs.size());
    if (fresh) {
        s.irqs.push_back(QueueIrq{irq, {}, {}, {}});
        s.dropped.push_back(false);
    }
    s.dropped[it->second] = !result;
    if (result) s.irqs[it->second].affinity = **result;
}

void IrqWritesSeen::unseen(int ifindex) {
    by_ifindex_[ifindex].unseen = true;
}

std::optional<IrqPlacement> IrqWritesSeen::placement(int ifindex) const {
    const auto it = by_ifindex_.find(ifindex);
    if (it == by_ifindex_.end() || it->second.unseen) return std::nullopt;
    const Seen& s = it->second;
    IrqPlacement out;
    out.irqs.reserve(s.irqs.size());
    for (std::size_t i = 0; i < s.irqs.size(); ++i)
        if (!s.dropped[i]) out.irqs.push_back(s.irqs[i]);
    return out;
}

}  // namespace nictune
