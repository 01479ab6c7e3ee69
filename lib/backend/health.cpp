#include "backend/health.hpp"

namespace nictune {

CounterSnapshot counters_of(std::span<const NicState* const> nics, const HealthRead& read) {
    CounterSnapshot s;
    for (std::size_t i = 0; i < nics.size() && i < read.interfaces.size(); ++i) {
        const auto& h = read.interfaces[i];
        const int ifindex = nics[i]->id.ifindex;
        if (h.driver_stats.known()) s.driver_stats[ifindex] = *h.driver_stats;
        if (h.link_stats.known()) s.link_stats[ifindex] = *h.link_stats;
        if (h.carrier_changes.known()) s.carrier_changes[ifindex] = *h.carrier_changes;
        if (h.irqs.known())
            for (const auto& q : *h.irqs)
                s.irq_per_cpu[q.irq] = q.per_cpu;
    }
    if (read.system.softnet.known()) s.softnet = *read.system.softnet;
    s.irq_cpus = read.system.irq_cpus;
    return s;
}

}  // namespace nictune
