#include "engine/health.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "backend/health.hpp"
#include "model/cpulist.hpp"
#include "util/find.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace {

// What the kernel's standard counters (rtnetlink, `ip -s`) mean; the same
// kinds as the driver facts' counters (profile/facts.hpp). Source:
// include/uapi/linux/if_link.h and Documentation/networking/statistics.rst.
struct StandardCounter {
    std::string_view name, kind, meaning;
};
constexpr StandardCounter kStandard[] = {
    {"rx_missed_errors", "rx_no_buffer",
     "packets the NIC missed for lack of RX descriptors or FIFO space"},
    {"rx_fifo_errors", "rx_no_buffer", "RX FIFO overruns"},
    {"rx_over_errors", "rx_no_buffer", "RX ring buffer overflows"},
    {"rx_crc_errors", "crc", "frames with a bad CRC"},
    {"rx_frame_errors", "crc", "frames with an alignment error"},
    {"rx_length_errors", "crc", "frames of a wrong length"},
    {"rx_dropped", "rx_dropped",
     "packets dropped after the NIC (no memory, unknown protocol, a full backlog)"},
};

const StandardCounter* standard(std::string_view name) {
    return find_first(kStandard, [&](const StandardCounter& c) { return c.name == name; });
}

std::string gbps_text(double g) {
    return g >= 10 ? fmt::format("{:.0f}", g) : fmt::format("{:.1f}", g);
}

std::string speed_text(double gts) {
    return fmt::format("{:g} GT/s", gts);
}

std::string rate_text(double v) {
    if (v >= 100) return group_digits(static_cast<uint64_t>(std::llround(v)));
    return fmt::format("{:.1f}", v);
}

// Loss costs TCP roughly as 1/sqrt(p) (Mathis et al.): a ranking weight,
// not a prediction.
double loss_impact(double ratio) {
    if (ratio <= 0) return 0;
    return std::min(0.8, 10.0 * std::sqrt(ratio));
}

bool latency_profile(const HealthContext& ctx) {
    if (!ctx.profile) return false;
    if (ctx.profile->name.find("latency") != std::string::npos) return true;
    return ctx.profile->tuned_profile &&
           ctx.profile->tuned_profile->find("latency") != std::string::npos;
}

std::optional<uint32_t> best_speed(const std::vector<std::string>& modes,
                                   std::string* best_name = nullptr) {
    std::optional<uint32_t> best;
    for (const auto& m : modes)
        if (auto s = mode_speed(m); s && s->full && (!best || s->mbps > *best)) {
            best = s->mbps;
            if (best_name) *best_name = m;
        }
    return best;
}

struct Ctx {
    const NicState& nic;
    const InterfaceHealth& h;
    const SystemHealth& sys;
    const HealthContext& hc;
    HealthAnalysis& out;
    std::string name() const { return nic.id.name; }
    std::optional<uint64_t> value(Key k) const { return nic.values.get(k); }
    void add(Severity s, std::string key, Scalar expected, Scalar actual, std::string msg,
             std::string fix) {
        out.findings.push_back(Finding{s, std::move(key), std::move(expected), std::move(actual),
                                       std::move(msg), std::move(fix)});
    }
    void limit(std::string key, std::string text, double impact,
               std::optional<double> cap = std::nullopt) {
        out.limits.push_back(Limit{std::move(key), std::move(text), impact, cap});
    }
    // The port's rate in Mb/s: negotiated, else its best mode.
    std::optional<double> line_mbps() const {
        if (auto s = value(Key::LinkSpeed)) return static_cast<double>(*s);
        if (h.modes.known())
            if (auto b = best_speed(h.modes->supported)) return *b;
        return std::nullopt;
    }
    std::optional<double> port_capable_mbps() const {
        if (h.modes.known())
            if (auto b = best_speed(h.modes->supported)) return *b;
        if (auto s = value(Key::LinkSpeed)) return static_cast<double>(*s);
        return std::nullopt;
    }
};

// ---- PCIe

void check_pcie(Ctx& c) {
    if (!c.h.pcie.known()) return;
    const PcieLink& p = *c.h.pcie;
    const auto cur = pcie_gbps(p.link.current_gts, p.link.current_width);
    if (!cur) return;
    // What the card could get: its own maximum, limited by the slot's.
    std::optional<double> max_gts = p.link.max_gts;
    std::optional<unsigned> max_w = p.link.max_width;
    if (p.upstream) {
        if (p.upstream->max_gts && max_gts) max_gts = std::min(*max_gts, *p.upstream->max_gts);
        if (p.upstream->max_width && max_w) max_w = std::min(*max_w, *p.upstream->max_width);
    }
    const auto best = pcie_gbps(max_gts, max_w);
    const auto port = c.port_capable_mbps();
    const std::size_t ports = std::max<std::size_t>(1, p.port_functions.size());
    const std::string link_text = fmt::format("x{} at {}", p.link.current_width.value_or(0),
                                              speed_text(p.link.current_gts.value_or(0)));
    const std::string ports_text =
        ports > 1
            ? fmt::format(
                  "the {} ports of this card ({}) share it", ports,
                  join(p.port_interfaces.empty() ? p.port_functions : p.port_interfaces, ", "))
            : "one port";
    const bool trained_down = best && *cur + 0.01 < *best;
    std::string capable;
    if (p.link.max_width && p.link.max_gts)
        capable = fmt::format("x{} at {}", *p.link.max_width, speed_text(*p.link.max_gts));
    if (!port) {
        if (trained_down)
            c.add(Severity::Warn, "health.pcie", capable, link_text,
                  fmt::format("PCIe link runs {} ({} Gbit/s) below what card and slot support "
                              "({} Gbit/s)",
                              link_text, gbps_text(*cur), gbps_text(*best)),
                  "reseat the card; check the slot's link speed and width in the firmware setup");
        return;
    }
    const double need = *port / 1000.0 * static_cast<double>(ports);
    const double per_port = *cur / static_cast<double>(ports);
    const std::string evidence = fmt::format(
        "PCIe {} gives about {} Gbit/s per direction (before protocol overhead); {} "
        "at {} Gbit/s need {} Gbit/s",
        link_text, gbps_text(*cur), ports_text, gbps_text(*port / 1000.0), gbps_text(need));
    if (*cur + 0.01 < need) {
        std::string fix;
        if (trained_down && *best + 0.01 >= need)
            fix = fmt::format(
                "the link trained below what card and slot support ({}, {} Gbit/s): reseat the "
                "card, check the slot and firmware PCIe settings",
                capable, gbps_text(*best));
        else if (p.link.max_width && p.link.max_gts &&
                 pcie_gbps(p.link.max_gts, p.link.max_width).value_or(0) + 0.01 >= need)
            fix = fmt::format("move the card to a slot that gives it {} (the slot allows less)",
                              capable);
        else
            fix = "this card cannot reach line rate on all ports at once in any slot";
        c.add(Severity::Fail, "health.pcie", fmt::format(">= {} Gbit/s", gbps_text(need)),
              fmt::format("{} Gbit/s", gbps_text(*cur)), evidence, fix);
        c.limit("health.pcie",
                fmt::format("PCIe {} caps this port at about {} Gbit/s", link_text,
                            gbps_text(std::min(per_port, *port / 1000.0))),
                std::max(0.0, 1.0 - per_port / (*port / 1000.0)), per_port);
    } else if (trained_down) {
        c.add(Severity::Info, "health.pcie", capable, link_text,
              evidence + fmt::format("; it runs below its {} but that is enough", capable), "");
    }
}

// ---- link negotiation

void check_link(Ctx& c) {
    if (c.h.modes.known()) {
        const LinkModes& m = *c.h.modes;
        std::vector<std::string> common;
        if (!m.partner.empty()) {
            for (const auto& a : m.advertised)
                if (std::find(m.partner.begin(), m.partner.end(), a) != m.partner.end())
                    common.push_back(a);
        }
        std::string best_name;
        const auto best = best_speed(m.partner.empty() ? m.advertised : common, &best_name);
        const auto cur = c.value(Key::LinkSpeed);
        const bool carrier = c.value(Key::LinkCarrier).value_or(0) != 0;
        if (best && cur && carrier && *cur < *best) {
            const std::string who =
                m.partner.empty() ? "this port advertises" : "both ends support";
            c.add(Severity::Warn, "health.link.speed", std::to_string(*best) + " Mb/s",
                  std::to_string(*cur) + " Mb/s",
                  fmt::format("negotiated {} Mb/s while {} {}{}", *cur, who, best_name,
                              m.partner.empty() ? " (the link partner's modes are unknown)" : ""),
                  "check the cable (category, length) or the optics and the peer port's settings");
            c.limit("health.link.speed",
                    fmt::format("negotiated {} Mb/s instead of {} Mb/s", *cur, *best),
                    1.0 - static_cast<double>(*cur) / static_cast<double>(*best),
                    static_cast<double>(*cur) / 1000.0);
        }
    }
    if (auto d = c.value(Key::LinkDuplex); d && *d == 0 && c.value(Key::LinkCarrier).value_or(0)) {
        c.add(Severity::Fail, "health.link.duplex", std::string("full"), std::string("half"),
              "the link runs half duplex: collisions and at most half the rate each way",
              "check autonegotiation on both ends (one end forced, the other auto, ends in half "
              "duplex)");
        c.limit("health.link.duplex", "half duplex", 0.5);
    }
    if (c.hc.rates && c.hc.rates->carrier_changes > 0)
        c.add(Severity::Warn, "health.link.carrier", 0U,
              static_cast<uint64_t>(c.hc.rates->carrier_changes),
              fmt::format("the link went down or up {} times during the {:.0f} s sample",
                          c.hc.rates->carrier_changes, c.hc.rates->seconds),
              "check the cable, optics and peer; each flap stalls traffic");
    else if (c.h.carrier_changes.known() && *c.h.carrier_changes > 20)
        c.add(Severity::Info, "health.link.carrier", Scalar{}, *c.h.carrier_changes,
              fmt::format("{} carrier changes since boot (driver resets and ring or channel "
                          "changes count too)",
                          *c.h.carrier_changes),
              "");
}

// ---- counters

struct KindTotal {
    uint64_t driver = 0, standard = 0;
    double driver_rate = 0, standard_rate = 0;
    std::vector<std::string> evidence;
    std::string meaning;
    [[nodiscard]] uint64_t total() const { return std::max(driver, standard); }
    [[nodiscard]] double rate() const { return std::max(driver_rate, standard_rate); }
};

void check_counters(Ctx& c) {
    const DriverFacts* facts =
        c.hc.facts && c.nic.id.driver ? c.hc.facts->find(*c.nic.id.driver) : nullptr;
    std::map<std::string, KindTotal> kinds;
    std::map<std::string, double> driver_rates, link_rates;
    if (c.hc.rates) {
        for (const auto& r : c.hc.rates->driver)
            driver_rates[r.name] = r.per_second;
        for (const auto& r : c.hc.rates->link)
            link_rates[r.name] = r.per_second;
    }
    if (c.h.driver_stats.known() && facts)
        for (const auto& k : *c.h.driver_stats) {
            const CounterFact* f = facts->counter(k.name);
            if (!f || k.value == 0) continue;
            auto& t = kinds[f->kind];
            t.driver += k.value;
            t.driver_rate += driver_rates[k.name];
            t.evidence.push_back(fmt::format("{} {}", k.name, group_digits(k.value)));
            if (t.meaning.empty()) t.meaning = f->meaning;
        }
    uint64_t rx_packets = 0;
    double rx_pps = link_rates["rx_packets"];
    if (c.h.link_stats.known()) {
        rx_packets = c.h.link_stats->rx_packets;
        for (const auto& k : c.h.link_stats->list()) {
            const StandardCounter* s = standard(k.name);
            if (!s || k.value == 0) continue;
            auto& t = kinds[std::string(s->kind)];
            t.standard += k.value;
            t.standard_rate += link_rates[k.name];
            // Drivers that copy the kernel's counters into `ethtool -S` show the
            // same name twice: the evidence names it once.
            const std::string ev = fmt::format("{} {}", k.name, group_digits(k.value));
            if (std::find(t.evidence.begin(), t.evidence.end(), ev) == t.evidence.end())
                t.evidence.push_back(ev + " (rtnetlink)");
            if (t.meaning.empty()) t.meaning = std::string(s->meaning);
        }
    }
    const bool sampled = c.hc.rates != nullptr;
    const std::string since = sampled ? fmt::format("in the {:.0f} s sample", c.hc.rates->seconds)
                                      : "since the driver loaded (totals; audit --sample SECONDS "
                                        "shows whether they still grow)";
    auto amount = [&](const KindTotal& t, const char* what) {
        if (sampled) return fmt::format("{} {}/s", rate_text(t.rate()), what);
        return fmt::format("{} {}", group_digits(t.total()), what);
    };
    // The counters of `kind`, when they moved (in the sample, or at all).
    auto moving = [&](const char* kind) -> const KindTotal* {
        auto it = kinds.find(kind);
        if (it == kinds.end()) return nullptr;
        const KindTotal& t = it->second;
        return (sampled ? t.rate() > 0 : t.total() > 0) ? &t : nullptr;
    };
    const double ratio = [&] {
        auto it = kinds.find("rx_no_buffer");
        if (it == kinds.end()) return 0.0;
        if (sampled) return rx_pps > 0 ? it->second.rate() / (rx_pps + it->second.rate()) : 0.0;
        return rx_packets > 0 ? static_cast<double>(it->second.total()) /
                                    static_cast<double>(rx_packets + it->second.total())
                              : 0.0;
    }();

    if (const KindTotal* t = moving("rx_no_buffer")) {
        const auto rx = c.value(Key::RingsRx);
        const auto rx_max = c.value(Key::RingsRxMax);
        std::string rings_text = rx && rx_max ? fmt::format("rings at {} of {}", *rx, *rx_max)
                                              : std::string("rings unknown");
        std::string fix;
        if (rx && rx_max && *rx < *rx_max)
            fix = fmt::format(
                "raise rings.rx (now {} of {}): a profile with [rings] rx = \"max\" "
                "(x520-throughput, x710-throughput) or ethtool -G {} rx {}",
                *rx, *rx_max, shell_word(c.name()), *rx_max);
        else
            fix =
                "the rings are at their maximum: spread the load over more queues and CPUs "
                "(channels, IRQ placement) and check the CPUs' power settings";
        const Severity sev = sampled || ratio >= 1e-4 ? Severity::Warn : Severity::Info;
        c.add(sev, "health.rx_drops", 0U,
              sampled ? Scalar{rate_text(t->rate()) + "/s"} : Scalar{t->total()},
              fmt::format("{} dropped for lack of RX buffers {} ({:.3g}% of received): {}; {}",
                          amount(*t, "packets"), since, ratio * 100, join(t->evidence, ", "),
                          rings_text),
              fix);
        if (sev == Severity::Warn)
            c.limit("health.rx_drops",
                    fmt::format("{} with {}", amount(*t, sampled ? "RX drops" : "RX drops so far"),
                                rings_text),
                    loss_impact(ratio));
    }
    if (const KindTotal* t = moving("crc")) {
        c.add(Severity::Warn, "health.crc_errors", 0U, t->total(),
              fmt::format("{} {}: {}", amount(*t, "frames with CRC or framing errors"), since,
                          join(t->evidence, ", ")),
              "the cable, the optics (SFP+) or the peer port is bad: reseat or replace them");
        c.limit("health.crc_errors", amount(*t, "CRC errors") + " (cable or optics)",
                std::max(0.05, loss_impact(rx_packets ? static_cast<double>(t->total()) /
                                                            static_cast<double>(rx_packets)
                                                      : 0)));
    }
    // Pause frames, either way: the side that asks for them does not keep
    // up. A warning while they still come; those received also bound what
    // the link carries.
    struct Pause {
        const char* kind;
        const char* counted;
        const char* meaning;
        const char* fix;
        double impact;  // of the limit, when sampled (0: none)
    };
    static constexpr Pause kPause[] = {
        {"pause_rx", "pause frames received",
         "the peer or switch is congested and asked this port to pause",
         "look at the switch port (egress congestion, buffers) or the peer host; turning pause.rx "
         "off only moves the drops there",
         0.2},
        {"pause_tx", "pause frames sent",
         "this port's RX buffer filled up and it asked the peer to pause",
         "this host does not keep up with what it receives: raise rings.rx, spread the queue IRQs "
         "over the local CPUs",
         0},
    };
    for (const Pause& p : kPause) {
        const KindTotal* t = moving(p.kind);
        if (!t) continue;
        const std::string key = std::string("health.") + p.kind;
        c.add(sampled ? Severity::Warn : Severity::Info, key, 0U, t->total(),
              fmt::format("{} {}: {} ({})", amount(*t, p.counted), since, p.meaning,
                          join(t->evidence, ", ")),
              p.fix);
        if (sampled && p.impact > 0) c.limit(key, amount(*t, p.counted), p.impact);
    }
    if (const KindTotal* t = moving("tx_timeout")) {
        c.add(Severity::Warn, "health.tx_timeout", 0U, t->total(),
              fmt::format("{} {}: the driver reset the adapter after TX hangs ({})",
                          amount(*t, "TX timeouts"), since, join(t->evidence, ", ")),
              "update the driver and the NIC firmware; check dmesg for 'Tx Unit Hang' and the "
              "PCIe link");
        c.limit("health.tx_timeout", amount(*t, "TX timeouts (adapter resets)"), 0.3);
    }
    if (const KindTotal* t = moving("alloc_fail")) {
        c.add(Severity::Warn, "health.alloc_fail", 0U, t->total(),
              fmt::format("{} {} ({})", amount(*t, "RX buffer allocations failed"), since,
                          join(t->evidence, ", ")),
              "memory pressure: raise vm.min_free_kbytes, or find what fills memory");
    }
    if (const KindTotal* t = moving("rx_dropped")) {
        c.add(Severity::Info, "health.rx_dropped", 0U, t->total(),
              fmt::format("{} {} by the kernel after the NIC ({}): unknown protocols, no memory "
                          "or a full backlog; see the softnet findings",
                          amount(*t, "packets dropped"), since, join(t->evidence, ", ")),
              "");
    }
}

// ---- interrupts and NUMA

void check_irqs(Ctx& c) {
    if (!c.h.irqs.known()) return;
    std::vector<const IrqInfo*> queues;
    for (const auto& q : *c.h.irqs)
        if (q.queue) queues.push_back(&q);
    if (queues.empty()) return;
    std::optional<unsigned> only_cpu;
    bool all_one = queues.size() >= 2;
    for (const IrqInfo* q : queues) {
        auto cpus =
            parse_cpulist(q->effective_affinity.empty() ? q->affinity : q->effective_affinity);
        if (!cpus || cpus->size() != 1 || (only_cpu && *only_cpu != cpus->front())) {
            all_one = false;
            break;
        }
        only_cpu = cpus->front();
    }
    const unsigned local = c.h.numa.known() ? c.h.numa->local_cpus : c.sys.online_cpus;
    const std::string local_list =
        c.h.numa.known() ? c.h.numa->local_cpulist : std::string("the other CPUs");
    if (all_one && only_cpu && local > 1) {
        c.add(Severity::Warn, "health.irqs.one_cpu", "spread over " + local_list,
              "CPU " + std::to_string(*only_cpu),
              fmt::format("all {} queue interrupts of {} are handled by CPU {}: one core does "
                          "the work of every queue",
                          queues.size(), c.name(), *only_cpu),
              fmt::format("pin one queue IRQ per local CPU ({}): echo CPU > "
                          "/proc/irq/IRQ/smp_affinity_list for each, or Intel's "
                          "set_irq_affinity -x local {}",
                          local_list, c.name()));
        c.limit("health.irqs.one_cpu",
                fmt::format("all {} queue IRQs on CPU {}", queues.size(), *only_cpu), 0.3);
    }
    if (c.h.numa.known() && c.h.numa->node) {
        std::size_t remote = 0;
        std::set<int> nodes;
        for (const IrqInfo* q : queues)
            if (q->node && *q->node != *c.h.numa->node) {
                ++remote;
                nodes.insert(*q->node);
            }
        if (remote > 0) {
            std::vector<std::string> ns;
            for (int n : nodes)
                ns.push_back(std::to_string(n));
            c.add(Severity::Warn, "health.irqs.remote_node",
                  "node " + std::to_string(*c.h.numa->node), "node " + join(ns, ", "),
                  fmt::format("{} of {} queue interrupts run on CPUs of node {}, the NIC sits on "
                              "node {}: every packet crosses the interconnect",
                              remote, queues.size(), join(ns, ", "), *c.h.numa->node),
                  fmt::format("pin them to the NIC's local CPUs ({})", c.h.numa->local_cpulist));
            c.limit("health.irqs.remote_node",
                    fmt::format("{} queue IRQs on a remote NUMA node", remote), 0.15);
        }
    }
    std::set<int> qnums;
    for (const IrqInfo* q : queues)
        qnums.insert(*q->queue);
    if (c.h.numa.known() && c.h.numa->local_cpus > 0 && qnums.size() > c.h.numa->local_cpus)
        c.add(Severity::Info, "health.irqs.queues", c.h.numa->local_cpus, uint64_t{qnums.size()},
              fmt::format("{} queues for {} local CPUs ({}): queues share CPUs", qnums.size(),
                          c.h.numa->local_cpus, c.h.numa->local_cpulist),
              fmt::format("as many queues as local cores: [channels] combined = {}",
                          c.h.numa->local_cpus));
    if (c.hc.rates && c.hc.rates->irqs.size() >= 2) {
        double total = 0;
        const IrqRate* top = nullptr;
        for (const auto& r : c.hc.rates->irqs) {
            total += r.per_second;
            if (!top || r.per_second > top->per_second) top = &r;
        }
        if (top && total >= 1000 && top->share >= 0.9)
            c.add(Severity::Info, "health.irqs.imbalance", Scalar{},
                  fmt::format("{:.0f}%", top->share * 100),
                  fmt::format("queue {} (IRQ {}) takes {:.0f}% of {}'s {} interrupts/s: one flow, "
                              "or RSS does not spread the flows",
                              top->queue.value_or(-1), top->irq, top->share * 100, c.name(),
                              rate_text(total)),
                  "several flows (iperf3 -P 4) spread over queues; one flow always uses one");
    }
}

// ---- CPU power

void check_cpu(Ctx& c) {
    if (!c.h.cpus.known() || c.h.cpus->empty()) return;
    const bool latency = latency_profile(c.hc);
    std::map<std::string, std::vector<unsigned>> governors, epps;
    std::vector<unsigned> deep;
    uint64_t deepest = 0;
    std::string deepest_name;
    for (const auto& p : *c.h.cpus) {
        if (p.governor && *p.governor != "performance") governors[*p.governor].push_back(p.cpu);
        if (p.epp && (*p.epp == "power" || *p.epp == "balance_power"))
            epps[*p.epp].push_back(p.cpu);
        for (const auto& s : p.idle)
            if (!s.disabled && s.latency_us > 20) {
                if (deep.empty() || deep.back() != p.cpu) deep.push_back(p.cpu);
                if (s.latency_us > deepest) {
                    deepest = s.latency_us;
                    deepest_name = s.name;
                }
            }
    }
    std::string tuned_cover;
    if (c.sys.tuned_net)
        for (const auto& s : c.sys.tuned_net->settings)
            if (s.key.starts_with("tuned.cpu."))
                tuned_cover +=
                    fmt::format("; tuned profile {} sets {} = {}",
                                c.sys.tuned_profile.value_or("?"), s.key.substr(10), s.value);
    const std::string tuned_fix =
        "the tuned profile latency-performance (or network-latency) sets the performance "
        "governor and limits C-state latency: [tuned] profile = \"latency-performance\" in a "
        "nictune profile";
    for (const auto& [g, cpus] : governors)
        c.add(latency ? Severity::Warn : Severity::Info, "health.cpu.governor",
              std::string("performance"), g,
              fmt::format("scaling governor {} on the NIC's local CPUs {}: clocks ramp up only "
                          "after load arrives{}",
                          g, format_cpulist(cpus), tuned_cover),
              tuned_fix);
    for (const auto& [e, cpus] : epps)
        c.add(latency ? Severity::Warn : Severity::Info, "health.cpu.epp",
              std::string("performance"), e,
              fmt::format("energy_performance_preference {} on CPUs {}{}", e, format_cpulist(cpus),
                          tuned_cover),
              tuned_fix);
    if (latency && !deep.empty())
        c.add(Severity::Warn, "health.cpu.cstates", std::string("<= 20 us"),
              fmt::format("{} us", deepest),
              fmt::format("deep C-states are enabled on the NIC's local CPUs {} ({} wakes in {} "
                          "us) under latency profile {}{}",
                          format_cpulist(deep), deepest_name, deepest,
                          c.hc.profile ? c.hc.profile->name : "?", tuned_cover),
              tuned_fix);
    if (latency && !governors.empty())
        c.limit("health.cpu.governor", "CPU frequency scaling on the NIC's CPUs", 0.05);
}

// ---- driver on disk

void check_driver(Ctx& c) {
    if (!c.h.driver.known()) return;
    const DriverFiles& d = *c.h.driver;
    if (!d.disk_path) return;
    const bool src_differs =
        d.disk_srcversion && d.loaded_srcversion && *d.disk_srcversion != *d.loaded_srcversion;
    const bool ver_differs =
        d.disk_version && d.loaded_version && *d.disk_version != *d.loaded_version;
    if (!src_differs && !ver_differs) return;
    c.add(Severity::Warn, "health.driver.stale", d.disk_version.value_or(*d.disk_path),
          d.loaded_version.value_or(d.loaded_srcversion.value_or("?")),
          fmt::format("{} {} is installed at {} (srcversion {}) but {} is loaded (srcversion {}): "
                      "modprobe would load another build than the one running",
                      d.module, d.disk_version.value_or("(no version)"), *d.disk_path,
                      d.disk_srcversion.value_or("?"), d.loaded_version.value_or("another build"),
                      d.loaded_srcversion.value_or("?")),
          fmt::format("reload the driver (modprobe -r {0} && modprobe {0}: the links go down "
                      "briefly) or reboot; rebuild the initramfs too (update-initramfs -u) if it "
                      "carries {0}",
                      d.module));
}

// ---- who else sets these values

std::optional<Key> key_of(const std::string& path) {
    const auto dot = path.find('.');
    if (dot == std::string::npos) return std::nullopt;
    auto s = find_section(path.substr(0, dot));
    if (!s) return std::nullopt;
    return find_key(*s, path.substr(dot + 1));
}

void check_foreign(Ctx& c, const ForeignConfig& f) {
    for (const auto& s : f.settings) {
        const std::string where =
            (s.file.empty() ? f.source : s.file) + (s.line ? ":" + std::to_string(s.line) : "");
        auto key = key_of(s.key);
        std::optional<std::string> want, have;
        if (key) {
            if (c.hc.profile)
                if (const auto& t = c.hc.profile->setting(*key))
                    want = t->is_max ? std::string("max") : to_string(scalar_of(*key, t->value));
            if (auto v = c.value(*key)) have = to_string(scalar_of(*key, *v));
        }
        if (want && *want != s.value) {
            c.add(Severity::Warn, "health.foreign." + s.key, *want, s.value,
                  fmt::format("{} {} sets {} = {} ({}), profile {} wants {}: {}", f.tool, where,
                              s.source_key, s.value, s.key, c.hc.profile->name, *want,
                              f.tool == "systemd.link"
                                  ? "udev applies it again whenever the device is added (boot, "
                                    "driver reload), undoing nictune"
                                  : "it will fight nictune over this value"),
                  fmt::format("remove {} from {} or set it to {}", s.source_key, where, *want));
        } else {
            c.add(Severity::Info, "health.foreign." + s.key, want ? Scalar{*want} : Scalar{},
                  s.value,
                  fmt::format("{} {} sets {} = {} ({}){}{}", f.tool, where, s.source_key, s.value,
                              s.key, have ? "; the device has " + *have : "",
                              want ? ", as the profile does" : ""),
                  "");
        }
    }
}

void check_tuned_net(Ctx& c) {
    if (!c.sys.tuned_net || !c.hc.profile) return;
    static const std::pair<std::string_view, Section> kOpts[] = {{"ring", Section::Rings},
                                                                 {"coalesce", Section::Coalesce},
                                                                 {"channels", Section::Channels},
                                                                 {"pause", Section::Pause}};
    for (const auto& s : c.sys.tuned_net->settings) {
        if (!s.key.starts_with("tuned.net.")) continue;
        const std::string opt = s.key.substr(10);
        bool overlaps = opt == "features" && !c.hc.profile->features.empty();
        for (const auto& [name, sec] : kOpts)
            if (opt == name)
                for (const auto& k : device_keys())
                    if (k.section == sec && c.hc.profile->setting(k.key)) overlaps = true;
        if (!overlaps) continue;
        c.add(Severity::Warn, "health.foreign.tuned." + opt, Scalar{}, s.value,
              fmt::format("tuned profile {} ({}) sets [net] {} = {}{}: tuned's net plugin and "
                          "profile {} set the same {} settings",
                          c.sys.tuned_profile.value_or("?"), s.source_key, opt, s.value,
                          c.sys.tuned_net->note.empty() ? "" : " (" + c.sys.tuned_net->note + ")",
                          c.hc.profile->name, opt),
              "remove " + opt + " from the tuned profile's [net] section, or leave it to tuned");
    }
}

// ---- socket buffers

void check_buffers(Ctx& c) {
    const auto mbps = c.line_mbps();
    if (!mbps || c.hc.rtt_ms <= 0) return;
    const double bdp = *mbps * 1e6 / 8.0 * c.hc.rtt_ms / 1000.0;
    const auto& s = c.sys.sysctls;
    auto check = [&](const char* name, std::optional<uint64_t> max, double window_share,
                     const char* side) {
        if (!max) return;
        const double window = static_cast<double>(*max) * window_share;
        if (window >= bdp) return;
        const double cap = window * 8.0 / (c.hc.rtt_ms / 1000.0) / 1e9;
        const uint64_t want = static_cast<uint64_t>(std::ceil(bdp / window_share / 4096.0)) * 4096;
        c.add(Severity::Warn, std::string("health.") + name, want, *max,
              fmt::format("net.ipv4.{} allows {} bytes at most: a {} window of about {} bytes, "
                          "below the bandwidth-delay product of {} Mb/s x {} ms ({} bytes): one "
                          "TCP flow tops out near {} Gbit/s",
                          name, group_digits(*max), side,
                          group_digits(static_cast<uint64_t>(window)), *mbps, c.hc.rtt_ms,
                          group_digits(static_cast<uint64_t>(bdp)), gbps_text(cap)),
              fmt::format("[sysctl] \"net.ipv4.{}\" = {{ at_least = [4096, 131072, {}] }} in a "
                          "profile (and \"net.core.{}\" = {{ at_least = {} }} for applications "
                          "that set the size)",
                          name, want,
                          std::string_view(name) == "tcp_rmem" ? "rmem_max" : "wmem_max", want));
        c.limit(std::string("health.") + name,
                fmt::format("{} max {} bytes caps one flow at about {} Gbit/s at {} ms RTT", name,
                            group_digits(*max), gbps_text(cap), c.hc.rtt_ms),
                std::max(0.0, 1.0 - cap / (*mbps / 1000.0)), cap);
    };
    // The receive window is about half the buffer (tcp_adv_win_scale = 1).
    check("tcp_rmem", s.tcp_rmem_max, 0.5, "receive");
    check("tcp_wmem", s.tcp_wmem_max, 1.0, "send");
}

}  // namespace

std::string group_digits(uint64_t v) {
    const std::string digits = std::to_string(v);
    std::string out;
    out.reserve(digits.size() + digits.size() / 3);
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

HealthAnalysis analyze_health(const NicState& nic, const InterfaceHealth& health,
                              const SystemHealth& system, const HealthContext& hctx) {
    HealthAnalysis out;
    Ctx c{nic, health, system, hctx, out};
    check_pcie(c);
    check_link(c);
    check_counters(c);
    check_irqs(c);
    check_cpu(c);
    check_driver(c);
    for (const auto& f : health.foreign)
        check_foreign(c, f);
    check_tuned_net(c);
    check_buffers(c);
    std::stable_sort(out.limits.begin(), out.limits.end(),
                     [](const Limit& a, const Limit& b) { return a.impact > b.impact; });
    return out;
}

std::vector<Finding> analyze_system_health(const SystemHealth& system, const HealthRates* any_rates,
                                           const std::vector<CpuRate>& rates, double seconds) {
    std::vector<Finding> out;
    if (system.irqbalance_active.known() && *system.irqbalance_active)
        out.push_back(Finding{
            Severity::Info, "health.irqbalance", false, true,
            "irqbalance is running: it moves IRQs about every 10 s and overwrites any manual "
            "pinning of queue interrupts",
            "for pinned 10G queues: systemctl disable --now irqbalance (Intel's advice), or ban "
            "the NIC's IRQs from it (IRQBALANCE_BANNED_CPULIST, --banirq)"});
    if (!system.softnet.known()) return out;
    const bool sampled = any_rates != nullptr || seconds > 0;
    std::vector<unsigned> drop_cpus, squeeze_cpus;
    uint64_t drops = 0, squeezes = 0;
    double drop_rate = 0, squeeze_rate = 0;
    if (sampled) {
        for (const auto& r : rates) {
            if (r.softnet_dropped > 0) drop_cpus.push_back(r.cpu);
            if (r.time_squeeze > 0) squeeze_cpus.push_back(r.cpu);
            drop_rate += r.softnet_dropped;
            squeeze_rate += r.time_squeeze;
        }
    } else {
        for (const auto& c : *system.softnet) {
            if (c.dropped) drop_cpus.push_back(c.cpu);
            if (c.time_squeeze) squeeze_cpus.push_back(c.cpu);
            drops += c.dropped;
            squeezes += c.time_squeeze;
        }
    }
    const auto& s = system.sysctls;
    const std::string since = sampled ? fmt::format("in the {:.0f} s sample", seconds)
                                      : std::string("since boot (totals)");
    // The backlog and budget sysctls are the host's: a network namespace of
    // its own (a container) has no file for them, and cannot set them.
    constexpr std::string_view kHosts = "the host's, not visible in this network namespace";
    const auto where = [](const std::optional<uint64_t>& v) {
        return v ? std::string(" in a profile's [sysctl]")
                 : std::string(" in the host's network namespace (it is one setting for all)");
    };
    if (!drop_cpus.empty())
        out.push_back(
            Finding{sampled ? Severity::Warn : Severity::Info, "health.softnet.dropped", Scalar{},
                    sampled ? Scalar{rate_text(drop_rate) + "/s"} : Scalar{drops},
                    fmt::format("{} packets dropped {} because the backlog of CPUs {} was full "
                                "(net.core.netdev_max_backlog {})",
                                sampled ? rate_text(drop_rate) + "/s" : group_digits(drops), since,
                                format_cpulist(drop_cpus),
                                s.netdev_max_backlog ? "= " + std::to_string(*s.netdev_max_backlog)
                                                     : ": " + std::string(kHosts)),
                    fmt::format("raise net.core.netdev_max_backlog (e.g. {}){}",
                                std::max<uint64_t>(s.netdev_max_backlog.value_or(1000) * 4, 8192),
                                where(s.netdev_max_backlog))});
    if (!squeeze_cpus.empty())
        out.push_back(Finding{
            Severity::Info, "health.softnet.squeeze", Scalar{},
            sampled ? Scalar{rate_text(squeeze_rate) + "/s"} : Scalar{squeezes},
            fmt::format(
                "{} times {} the softirq on CPUs {} ran out of budget with packets left "
                "({})",
                sampled ? rate_text(squeeze_rate) + "/s" : group_digits(squeezes), since,
                format_cpulist(squeeze_cpus),
                s.netdev_budget && s.netdev_budget_usecs
                    ? fmt::format("net.core.netdev_budget = {}, netdev_budget_usecs = {}",
                                  *s.netdev_budget, *s.netdev_budget_usecs)
                    : fmt::format("net.core.netdev_budget and netdev_budget_usecs: {}", kHosts)),
            "if it grows with drops: raise net.core.netdev_budget (e.g. 600) and "
            "netdev_budget_usecs (e.g. 4000)" +
                where(s.netdev_budget)});
    return out;
}

namespace {

template <class M>
const typename M::mapped_type* find_in(const M& m, const typename M::key_type& k) {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
}

double per_s(uint64_t before, uint64_t after, double seconds) {
    // A counter that went backwards was reset (driver reload): no rate.
    if (after < before || seconds <= 0) return 0;
    return static_cast<double>(after - before) / seconds;
}

}  // namespace

HealthRates rates_between(const CounterSnapshot& before, const CounterSnapshot& after, int ifindex,
                          const InterfaceHealth& health, double seconds) {
    HealthRates r;
    r.seconds = seconds;
    if (auto b = find_in(before.driver_stats, ifindex))
        if (auto a = find_in(after.driver_stats, ifindex)) {
            std::map<std::string_view, uint64_t> old;
            for (const auto& c : *b)
                old.emplace(c.name, c.value);
            for (const auto& c : *a)
                if (auto it = old.find(c.name); it != old.end() && c.value != it->second)
                    r.driver.push_back(Rate{c.name, per_s(it->second, c.value, seconds)});
        }
    if (auto b = find_in(before.link_stats, ifindex))
        if (auto a = find_in(after.link_stats, ifindex)) {
            const auto lb = b->list();
            const auto la = a->list();
            for (std::size_t i = 0; i < la.size(); ++i)
                if (la[i].value != lb[i].value)
                    r.link.push_back(Rate{la[i].name, per_s(lb[i].value, la[i].value, seconds)});
        }
    if (auto b = find_in(before.carrier_changes, ifindex))
        if (auto a = find_in(after.carrier_changes, ifindex))
            if (*a > *b) r.carrier_changes = *a - *b;
    if (health.irqs.known()) {
        std::map<unsigned, double> cpu_rate;
        double total = 0;
        for (const auto& q : *health.irqs) {
            auto b = find_in(before.irq_per_cpu, q.irq);
            auto a = find_in(after.irq_per_cpu, q.irq);
            if (!b || !a || a->size() != b->size()) continue;
            double sum = 0;
            for (std::size_t i = 0; i < a->size(); ++i) {
                const double v = per_s((*b)[i], (*a)[i], seconds);
                sum += v;
                const unsigned cpu =
                    i < after.irq_cpus.size() ? after.irq_cpus[i] : static_cast<unsigned>(i);
                cpu_rate[cpu] += v;
            }
            r.irqs.push_back(IrqRate{q.irq, q.queue, sum, 0});
            total += sum;
        }
        for (auto& q : r.irqs)
            q.share = total > 0 ? q.per_second / total : 0;
        for (const auto& [cpu, v] : cpu_rate)
            if (v > 0) r.cpus.push_back(CpuRate{cpu, v, 0, 0});
    }
    return r;
}

std::vector<CpuRate> softnet_rates(const CounterSnapshot& before, const CounterSnapshot& after,
                                   double seconds) {
    std::vector<CpuRate> out;
    for (const auto& a : after.softnet)
        for (const auto& b : before.softnet)
            if (a.cpu == b.cpu) {
                out.push_back(CpuRate{a.cpu, 0, per_s(b.dropped, a.dropped, seconds),
                                      per_s(b.time_squeeze, a.time_squeeze, seconds)});
                break;
            }
    return out;
}

std::vector<CauseCounter> cause_counters(const NicState& nic, const InterfaceHealth& h,
                                         const FactsBook* facts) {
    std::vector<CauseCounter> out;
    const DriverFacts* df = facts && nic.id.driver ? facts->find(*nic.id.driver) : nullptr;
    if (h.driver_stats.known() && df)
        for (const auto& k : *h.driver_stats)
            if (const CounterFact* f = df->counter(k.name))
                out.push_back(CauseCounter{k.name, f->kind, true, k.value});
    if (h.link_stats.known())
        for (const auto& k : h.link_stats->list())
            if (const StandardCounter* s = standard(k.name))
                out.push_back(CauseCounter{k.name, std::string(s->kind), false, k.value});
    return out;
}

void add_health(Backend& backend, const FactsBook& facts, const AuditRequest& req,
                AuditReport& report) {
    HealthReader* reader = backend.health();
    if (!reader) return;
    std::vector<const NicState*> nics;
    nics.reserve(report.interfaces.size());
    for (const auto& a : report.interfaces)
        nics.push_back(&a.state);
    HealthQuery q;
    q.tuned_profile = report.system.tuned.active_profile;
    HealthRead read = reader->read(nics, q);

    auto sys = std::make_shared<SystemHealthReport>();
    sys->rtt_ms = req.rtt_ms;
    std::vector<std::optional<HealthRates>> rates(nics.size());
    if (req.sample_seconds && *req.sample_seconds > 0) {
        const CounterSnapshot before = counters_of(nics, read);
        const auto t0 = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(std::chrono::duration<double>(*req.sample_seconds));
        const CounterSnapshot after = reader->read_counters(nics);
        // The time that really passed, the second read included.
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        sys->sample_seconds = seconds;
        for (std::size_t i = 0; i < nics.size(); ++i)
            rates[i] =
                rates_between(before, after, nics[i]->id.ifindex, read.interfaces[i], seconds);
        sys->softnet_rates = softnet_rates(before, after, seconds);
    }
    for (std::size_t i = 0; i < report.interfaces.size(); ++i) {
        auto& a = report.interfaces[i];
        auto h = std::make_shared<InterfaceHealthReport>();
        h->data = std::move(read.interfaces[i]);
        h->rates = std::move(rates[i]);
        HealthContext ctx;
        ctx.facts = &facts;
        ctx.profile = a.profile ? a.profile->profile.get() : nullptr;
        ctx.rtt_ms = req.rtt_ms;
        ctx.rates = h->rates ? &*h->rates : nullptr;
        ctx.tuned_active = report.system.tuned.active_profile;
        auto analysis = analyze_health(a.state, h->data, read.system, ctx);
        for (auto& f : analysis.findings)
            a.findings.push_back(std::move(f));
        std::stable_sort(
            a.findings.begin(), a.findings.end(),
            [](const Finding& x, const Finding& y) { return x.severity > y.severity; });
        h->limits = std::move(analysis.limits);
        h->causes = cause_counters(a.state, h->data, &facts);
        a.health = std::move(h);
    }
    sys->findings = analyze_system_health(read.system, nullptr, sys->softnet_rates,
                                          sys->sample_seconds.value_or(0));
    sys->data = std::move(read.system);
    report.health = std::move(sys);
}

}  // namespace nictune
