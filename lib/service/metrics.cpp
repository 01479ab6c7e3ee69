#include "service/metrics.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "service/log.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"

namespace nictune::service {
namespace fs = std::filesystem;

Result<void> write_textfile(const fs::path& dir, std::string_view name, std::string_view text) {
    // Under a ".NAME.XXXXXX" name first: node_exporter reads only *.prom.
    // No sync: after a crash the next write replaces whatever is there, and
    // a scrape only needs the rename to be atomic. nictuned's umask is 077;
    // node_exporter reads as another user.
    return write_file_atomically(dir / std::string(name), text,
                                 {.sync_file = false, .sync_dir = false, .mode = 0644});
}

report::DaemonMetrics daemon_metrics(const watch::Watcher& watcher, bool config_ok) {
    report::DaemonMetrics m;
    m.config_ok = config_ok;
    for (const auto& [idx, t] : watcher.tracked()) {
        if (!t.binding && t.last_result.empty()) continue;
        report::DaemonMetrics::Interface i;
        i.name = t.name;
        i.profile = t.binding ? t.binding->profile : t.profile;
        i.bound = t.binding != nullptr;
        i.enforce = t.binding && t.binding->enforce;
        i.enforcement_suspended = t.enforcement_suspended;
        i.last_result = t.last_result;
        i.last_apply = t.last_result_at;
        // The last apply's profile, which a request may have replaced.
        if (!t.last_result.empty() && !t.profile.empty()) i.profile = t.profile;
        for (const auto& b : t.baseline)
            i.settings.emplace_back(
                *b.key, std::find(t.drifted.begin(), t.drifted.end(), *b.key) != t.drifted.end());
        m.interfaces.push_back(std::move(i));
    }
    return m;
}

Result<report::AuditMetrics> daemon_audit(Manager& manager, const watch::Watcher& watcher,
                                          int64_t now) {
    // With the health checks (their figures are in the metrics), totals
    // only: a sample would stop the event loop for its length.
    AuditRequest all;
    all.health = true;
    auto nics = manager.audit(all);
    if (!nics) return std::unexpected(nics.error());
    report::AuditMetrics m = report::audit_metrics(*nics, now);
    // Bound interfaces (virtual ones too) against the profile bound to them.
    std::map<std::string, std::vector<std::string>> bound;
    for (const auto& [idx, t] : watcher.tracked())
        if (t.binding) bound[t.binding->profile].push_back(t.name);
    for (const auto& [profile, names] : bound) {
        AuditRequest req;
        req.interfaces = names;
        req.profile = profile;
        req.health = true;
        auto r = manager.audit(req);
        if (!r) {
            // An interface gone under us, a profile broken on disk: the
            // others still count; the next change writes again.
            log(Level::Debug, "metrics: audit against " + quote(profile) + ": " + r.error().str());
            continue;
        }
        for (auto& i : report::audit_metrics(*r, now).interfaces) {
            auto same = std::find_if(m.interfaces.begin(), m.interfaces.end(),
                                     [&](const auto& x) { return x.name == i.name; });
            if (same != m.interfaces.end())
                *same = std::move(i);
            else
                m.interfaces.push_back(std::move(i));
        }
    }
    return m;
}

MetricsExport::MetricsExport(Manager& manager, const watch::Watcher& watcher,
                             std::function<fs::path()> dir, std::function<bool()> config_ok)
    : manager_(manager),
      watcher_(watcher),
      dir_(std::move(dir)),
      config_ok_(std::move(config_ok)) {}

void MetricsExport::changed(uint64_t now) {
    if (!pending_) first_ = now;
    pending_ = true;
    last_ = now;
}

int MetricsExport::timeout_ms(uint64_t now, int timeout_ms) const {
    uint64_t due = 0;
    if (pending_)
        due = std::min(last_ + kQuietUsec, first_ + kMaxDelayUsec);
    else if (refresh_)
        due = refresh_;
    else
        return timeout_ms;
    const int ms = due <= now ? 0 : static_cast<int>((due - now + 999) / 1000);
    return timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
}

void MetricsExport::write_if_due(uint64_t now) {
    if (pending_) {
        if (now < last_ + kQuietUsec && now < first_ + kMaxDelayUsec) return;
    } else if (!refresh_ || now < refresh_) {
        return;
    }
    // Only a file that could be written is kept fresh: without the
    // directory there is no timer until something happens.
    refresh_ = write() ? now + kRefreshUsec : 0;
}

bool MetricsExport::write() {
    pending_ = false;
    const fs::path dir = dir_();
    if (dir.empty()) return false;
    // Not there (node_exporter not installed): nothing to read it, so no
    // audit either.
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        const std::string problem = "metrics: " + dir.string() +
                                    " is not a directory (node_exporter's textfile "
                                    "directory); not writing metrics";
        if (problem != last_problem_) log(Level::Info, problem);
        last_problem_ = problem;
        return false;
    }
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    const report::DaemonMetrics d = daemon_metrics(watcher_, config_ok_());
    auto audit = daemon_audit(manager_, watcher_, now);
    if (!audit) log(Level::Warning, "metrics: the audit failed: " + audit.error().str());
    const std::string text = report::prometheus_text(audit ? &*audit : nullptr, &d);
    if (auto w = write_textfile(dir, kMetricsFile, text); !w) {
        const std::string problem = "metrics: " + w.error().str();
        if (problem != last_problem_) log(Level::Warning, problem);
        last_problem_ = problem;
        return false;
    }
    if (!last_problem_.empty())
        log(Level::Info, "metrics: writing " + (dir / kMetricsFile).string());
    last_problem_.clear();
    return true;
}

}  // namespace nictune::service
