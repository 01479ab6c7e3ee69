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

}  // namespace nictune
