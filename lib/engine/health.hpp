// Health checks: why a link is slower than its rating. From what the
// HealthReader read (model/health.hpp) and the interface's state, findings
// with keys "health.*" (each with its cause and its fix) and a verdict: the
// likely limits, ranked by how much of the line rate each one costs.
//
// Counters are totals since the driver loaded unless a sample gave rates;
// the findings say which.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/audit.hpp"
#include "model/health.hpp"

namespace nictune {

struct Rate {
    std::string name;
    double per_second = 0;
};

struct IrqRate {
    unsigned irq = 0;
    std::optional<int> queue;
    double per_second = 0;
    double share = 0;  // of this interface's interrupts in the sample
};

struct CpuRate {
    unsigned cpu = 0;
    double interrupts = 0;  // this interface's, per second
    double softnet_dropped = 0;
    double time_squeeze = 0;
};

// Rates over a sample of `seconds`: counters that moved, per second.
struct HealthRates {
    double seconds = 0;
    std::vector<Rate> driver;  // `ethtool -S` names
    std::vector<Rate> link;    // rtnetlink names
    std::vector<IrqRate> irqs;
    std::vector<CpuRate> cpus;
    uint64_t carrier_changes = 0;
};

struct Limit {
    std::string key;    // the finding it comes from
    std::string text;   // "PCIe x4 at 2.5 GT/s caps this port at about 8 Gbit/s"
    double impact = 0;  // share of the line rate it costs, 0..1 (ranking)
    std::optional<double> cap_gbps;
};

struct HealthContext {
    const FactsBook* facts = nullptr;
    const Profile* profile = nullptr;
    double rtt_ms = 1.0;  // for the bandwidth-delay product
    const HealthRates* rates = nullptr;
    std::optional<std::string> tuned_active;  // tuned's active profile
};

struct HealthAnalysis {
    std::vector<Finding> findings;
    std::vector<Limit> limits;  // most costly first
};

HealthAnalysis analyze_health(const NicState& nic, const InterfaceHealth& health,
                              const SystemHealth& system, const HealthContext& ctx);
// Findings about the machine rather than one interface (softnet, irqbalance).
std::vector<Finding> analyze_system_health(const SystemHealth& system, const HealthRates* any_rates,
                                           const std::vector<CpuRate>& softnet_rates,
                                           double seconds);

// Rates between two counter snapshots taken `seconds` apart, for one
// interface (its IRQs as `health` lists them).
HealthRates rates_between(const CounterSnapshot& before, const CounterSnapshot& after, int ifindex,
                          const InterfaceHealth& health, double seconds);
// softnet drops and squeezes per CPU per second.
std::vector<CpuRate> softnet_rates(const CounterSnapshot& before, const CounterSnapshot& after,
                                   double seconds);

// A counter that points at a cause of lost throughput: one of the driver's
// statistics its facts name ([[DRIVER.counters]]) or one of the kernel's
// standard ones, with its kind (profile/facts.hpp: rx_no_buffer, crc,
// pause_rx, ...). Zeros included: what can be watched, not what moved.
struct CauseCounter {
    std::string name;     // `ethtool -S` or rtnetlink name
    std::string kind;     // the cause
    bool driver = false;  // the driver's statistic; else rtnetlink's
    uint64_t value = 0;
};
std::vector<CauseCounter> cause_counters(const NicState& nic, const InterfaceHealth& health,
                                         const FactsBook* facts);

// What an audit reports per interface and for the machine (InterfaceAudit::
// health, AuditReport::health).
struct InterfaceHealthReport {
    InterfaceHealth data;
    std::optional<HealthRates> rates;
    std::vector<Limit> limits;
    std::vector<CauseCounter> causes;
};
struct SystemHealthReport {
    SystemHealth data;
    std::vector<Finding> findings;
    std::optional<double> sample_seconds;  // measured, when sampled
    double rtt_ms = 1.0;
    std::vector<CpuRate> softnet_rates;
};

// Reads health for every interface of `report` (and the machine), samples
// when asked, and adds the findings and verdicts. Without a HealthReader
// the report is left without health.
void add_health(Backend& backend, const FactsBook& facts, const AuditRequest& req,
                AuditReport& report);

// "1,200", "8.0": numbers as the verdict prints them.
std::string group_digits(uint64_t v);

}  // namespace nictune
