#include "backend/irq_read.hpp"

#include <optional>

#include "util/strings.hpp"

namespace nictune {

void read_irq_placements(const sysinfo::IrqFiles& files, std::vector<NicState>& nics,
                         const ReadRequest& req) {
    IrqPlacementReader reader(files, req);
    for (auto& nic : nics)
        reader.read(nic);
}

void IrqPlacementReader::read(NicState& nic, int ifdir) {
    if (const auto* back = req_.irq_readback_of(nic.id.name)) {
        nic.irq = files_.read_back(back->irqs);
        return;
    }
    auto bytes = unescape_name(nic.id.name);
    if (!bytes) return;
    // Read when the first interface needs them, then handed to each.
    if (!table_) table_ = files_.interrupts();
    if (!*table_) {
        nic.problems.push_back(
            ReadProblem{Section::Irq, (*table_).error().sys_errno, (*table_).error().str()});
        return;
    }
    auto p = files_.read_at(ifdir, *bytes, **table_, req_.irq_effective);
    if (!p) {
        nic.problems.push_back(ReadProblem{Section::Irq, p.error().sys_errno, p.error().str()});
        return;
    }
    if (*p) {
        if (!irqbalance_) irqbalance_ = files_.irqbalance();
        (*p)->irqbalance = *irqbalance_;
    }
    nic.irq = std::move(*p);
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
