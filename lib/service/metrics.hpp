// nictuned's metrics for node_exporter's textfile collector: DIR/nictune.prom
// (report/prometheus.hpp says what is in it), replaced atomically (a
// temporary file in DIR renamed over it, so a scrape never reads half a
// file), world-readable (node_exporter runs as its own user).
//
// The daemon stays event driven: anything that happens (a link or ethtool
// notification, a D-Bus call) marks the metrics stale, and they are written
// once things have been quiet for a second (at most ten seconds after the
// first change of a burst that does not stop). Nothing happening means no
// timer and no write. Each write audits the NICs, so the findings follow
// changes made by anyone.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "engine/manager.hpp"
#include "report/prometheus.hpp"
#include "service/watcher.hpp"
#include "util/error.hpp"

namespace nictune::service {

// The default directory: Debian's prometheus-node-exporter reads it.
inline constexpr const char* kDefaultMetricsDir = "/var/lib/prometheus/node-exporter";
inline constexpr const char* kMetricsFile = "nictune.prom";

// Replaces dir/name with `text` atomically; mode 0644.
Result<void> write_textfile(const std::filesystem::path& dir, std::string_view name,
                            std::string_view text);

// What the watcher knows, as metrics.
report::DaemonMetrics daemon_metrics(const Watcher& watcher, bool config_ok);

// The audit nictuned exports: every device-backed NIC against its best
// matching profile, and every bound interface against its bound profile.
Result<report::AuditMetrics> daemon_audit(Manager& manager, const Watcher& watcher, int64_t now);

class MetricsExport {
  public:
    static constexpr uint64_t kQuietUsec = 1000000;      // write after 1 s without events
    static constexpr uint64_t kMaxDelayUsec = 10000000;  // or 10 s after the first

    // dir(): where to write now ("" = off); config_ok(): the last load of
    // nictune.toml worked.
    MetricsExport(Manager& manager, const Watcher& watcher,
                  std::function<std::filesystem::path()> dir, std::function<bool()> config_ok);

    // Something happened at `now` (CLOCK_MONOTONIC, microseconds).
    void changed(uint64_t now);
    // The poll timeout that keeps the next write on time: `timeout_ms`
    // (-1 = none) or less.
    [[nodiscard]] int timeout_ms(uint64_t now, int timeout_ms) const;
    // Writes when due.
    void write_if_due(uint64_t now);
    // Writes now (start-up, tests); false when it could not.
    bool write();

  private:
    Manager& manager_;
    const Watcher& watcher_;
    std::function<std::filesystem::path()> dir_;
    std::function<bool()> config_ok_;
    bool pending_ = false;
    uint64_t first_ = 0;        // first change since the last write
    uint64_t last_ = 0;         // latest change
    std::string last_problem_;  // said once, not at every write
};

}  // namespace nictune::service
