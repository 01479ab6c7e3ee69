// nictuned's metrics for node_exporter's textfile collector: DIR/nictune.prom
// (report/prometheus.hpp says what is in it), replaced atomically (a
// temporary file in DIR renamed over it, so a scrape never reads half a
// file), world-readable (node_exporter runs as its own user).
//
// Anything that happens (a link or ethtool notification, a D-Bus call)
// marks the metrics stale, and they are written once things have been quiet
// for a second (at most ten seconds after the first change of a burst that
// does not stop). Each write audits the NICs with the health checks, so the
// findings and figures follow changes made by anyone.
//
// Some of what the health checks read changes without any event nictuned
// sees: the drop, CRC and pause counters, softnet's, and IRQ placement
// (irqbalance moves IRQs every 10 s). So the file is also rewritten a minute
// after the last write: a rate() over five minutes has five points, and
// node_exporter never serves figures older than that. That is the one
// timer, and it runs only while the directory exists: a host without
// node_exporter keeps an idle daemon at no wake-ups. The cost, measured
// with `nictunectl --direct audit --all --json` on 512 veth interfaces
// (2 shared cores at load 11, 15 runs each): fastest 112 ms with the health
// checks against 36 ms without, medians 340 and 121 ms, so 0.15-0.45 ms per
// interface: under 1 % of one core at one write a minute; a host with a
// few NICs pays a few milliseconds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "engine/manager.hpp"
#include "report/prometheus.hpp"
#include "util/error.hpp"
#include "watch/watcher.hpp"

namespace nictune::service {

// The default directory: Debian's prometheus-node-exporter reads it.
inline constexpr const char* kDefaultMetricsDir = "/var/lib/prometheus/node-exporter";
inline constexpr const char* kMetricsFile = "nictune.prom";

// Replaces dir/name with `text` atomically; mode 0644.
Result<void> write_textfile(const std::filesystem::path& dir, std::string_view name,
                            std::string_view text);

// What the watcher knows, as metrics.
report::DaemonMetrics daemon_metrics(const watch::Watcher& watcher, bool config_ok);

// The audit nictuned exports: every device-backed NIC against its best
// matching profile, and every bound interface against its bound profile.
Result<report::AuditMetrics> daemon_audit(Manager& manager, const watch::Watcher& watcher,
                                          int64_t now);

class MetricsExport {
  public:
    static constexpr uint64_t kQuietUsec = 1000000;      // write after 1 s without events
    static constexpr uint64_t kMaxDelayUsec = 10000000;  // or 10 s after the first
    static constexpr uint64_t kRefreshUsec = 60000000;   // and again 60 s after a write

    // dir(): where to write now ("" = off); config_ok(): the last load of
    // nictune.toml worked.
    MetricsExport(Manager& manager, const watch::Watcher& watcher,
                  std::function<std::filesystem::path()> dir, std::function<bool()> config_ok);

    // Something happened at `now` (CLOCK_MONOTONIC, microseconds).
    void changed(uint64_t now);
    // The poll timeout that keeps the next write on time: `timeout_ms`
    // (-1 = none) or less.
    [[nodiscard]] int timeout_ms(uint64_t now, int timeout_ms) const;
    // Writes when due: after changes, or for the refresh.
    void write_if_due(uint64_t now);
    // Writes now (start-up, tests); false when it could not.
    bool write();

  private:
    Manager& manager_;
    const watch::Watcher& watcher_;
    std::function<std::filesystem::path()> dir_;
    std::function<bool()> config_ok_;
    bool pending_ = false;
    uint64_t first_ = 0;        // first change since the last write
    uint64_t last_ = 0;         // latest change
    uint64_t refresh_ = 0;      // when to write again without changes; 0: never
    std::string last_problem_;  // said once, not at every write
};

}  // namespace nictune::service
