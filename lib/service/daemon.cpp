#include "service/daemon.hpp"

#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include "backend/event_source.hpp"
#include "engine/manager.hpp"
#include "service/authorizer.hpp"
#include "service/log.hpp"
#include "service/manager_object.hpp"
#include "service/metrics.hpp"
#include "util/json_writer.hpp"
#include "util/unique_fd.hpp"
#include "watch/config.hpp"
#include "watch/watcher.hpp"

namespace nictune::service {
namespace {

uint64_t now_usec() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000U + static_cast<uint64_t>(ts.tv_nsec) / 1000U;
}

// What the kernel announces, to the watcher. `resync`: notifications were
// dropped, every interface is read again once this round is handled.
class WatcherFeed final : public EventSink {
  public:
    explicit WatcherFeed(watch::Watcher& watcher) : watcher_(watcher) {}

    void link(const LinkEvent& l) override {
        if (!l.deleted && !watcher_.tracks(l.ifindex))
            watcher_.link_seen(link_state(l));
        else
            watcher_.link_event(l.ifindex, l.name, l.deleted, &l.values, &l.altnames, l.flags);
    }
    void settings(int ifindex, const std::string&, Section section,
                  const DeviceValues& values) override {
        // LINKMODES is read-only (no baseline holds it): nothing to compare.
        if (section == Section::Link) return;
        watcher_.device_notified(ifindex, section, values);
        // A channel change frees and re-creates queues (their RPS/XPS masks
        // start empty); on most drivers both make it request its IRQs again.
        if (section == Section::Channels) watcher_.queues_rebuilt(ifindex, "channels changed");
        if (section == Section::Rings) watcher_.queues_rebuilt(ifindex, "rings changed");
    }
    void features(int ifindex, const std::string&, std::optional<FeatureSet> features) override {
        if (features)
            watcher_.features_notified(ifindex, std::move(*features));
        else
            watcher_.device_changed(ifindex);
    }
    // A message that did not decode is left out, as it always was; only
    // dropped notifications call for a resync.
    void missed(const Error&, bool overrun) override { resync = resync || overrun; }

    bool resync = false;

  private:
    watch::Watcher& watcher_;
};

struct Loaded {
    DaemonConfig cfg;
    std::map<std::string, Profile> profiles;
};

// Reads the configuration and every bound profile; nothing is kept unless
// all of it is valid.
Result<Loaded> load_everything(const DaemonOptions& opts, const profile::Store& store) {
    auto cfg = load_config(opts.config, geteuid() == 0);
    if (!cfg) return std::unexpected(cfg.error());
    if (auto ok = validate_bindings(*cfg, store); !ok) return std::unexpected(ok.error());
    Loaded out;
    for (const auto& b : cfg->bindings) {
        if (out.profiles.contains(b.profile)) continue;
        auto p = store.load(b.profile);
        if (!p) return std::unexpected(p.error());
        out.profiles.emplace(b.profile, std::move(*p));
    }
    out.cfg = std::move(*cfg);
    return out;
}

profile::Store make_store(const DaemonOptions& opts, const DaemonConfig& cfg,
                          const FeatureNames* names) {
    profile::StoreOptions so;
    std::vector<std::filesystem::path> dirs = opts.profiles_dirs;
    for (const auto& d : cfg.profiles_dirs)
        dirs.emplace_back(d);
    so.search_path = profile::default_search_path(dirs);
    so.parse.runtime_features = names;
    return profile::Store(so);
}

// One nictuned: what it opens, in the order each part needs the others, and
// the loop over them. Members are declared in that order, so that they go
// in the reverse one; the destructor takes the bus object, the metrics and
// the watcher down first, while the rest is still there (a held
// transaction the watcher drops finds no bus object and is left to crash
// recovery, as before).
class Daemon {
  public:
    explicit Daemon(const DaemonOptions& opts) : opts_(opts) {}
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;
    ~Daemon() {
        object_.reset();
        metrics_.reset();
        watcher_.reset();
    }

    // The signalfd, the netlink sockets, the bus and the bus name; false
    // (logged) when one of them cannot be had.
    bool open();
    // Crash recovery, then the bindings applied at start, then READY=1.
    void start();
    // Until SIGTERM or SIGINT (or poll fails).
    void loop();
    // Pending transactions rolled back, the bus name released.
    void stop();

  private:
    watch::WatcherEvents watcher_events();
    // Signals go out from the event loop and from inside D-Bus handlers
    // (an Apply notes its result): one that cannot be sent is logged, and
    // neither stops the daemon nor fails the call.
    static void emit(const char* what, const std::function<void()>& send);
    // A transaction's end, as the Applied signal (and for the metrics).
    void applied(const std::string& tx, const std::string& iface, const std::string& profile,
                 const std::string& result, const std::string& reason);
    Result<void> reload();
    [[nodiscard]] nlohmann::json status_extra() const;
    void recover();
    // The poll timeout: the bus's, the watchdog's, a pending transaction's
    // deadline, and the timers below, whichever comes first (-1: none).
    [[nodiscard]] int poll_timeout_ms(uint64_t bus_timeout_usec) const;
    // One round: the notifications, the signals, then the watcher's work.
    void handle(const pollfd& link, const pollfd& ethtool, const pollfd& signals);
    void read_signals();
    void ping_watchdog();
    void give_memory_back();

    const DaemonOptions& opts_;
    UniqueFd sigfd_;
    // Why the last load of the configuration failed ("" when it did not).
    std::string config_error_;
    DaemonConfig first_cfg_;
    KernelBackend kernel_;
    std::filesystem::path state_dir_;
    std::optional<Manager> manager_;
    std::unique_ptr<EventSource> events_;
    std::unique_ptr<sdbus::IConnection> conn_;
    std::unique_ptr<Authorizer> authorizer_;
    std::optional<watch::Watcher> watcher_;
    std::optional<MetricsExport> metrics_;
    std::unique_ptr<ManagerObject> object_;

    // The watcher reported something: the metrics file is due (the
    // placement timer's findings come without any event on a socket).
    bool reported_ = false;
    bool running_ = true;
    // After a burst of work, freed memory goes back to the kernel once the
    // loop has been idle for a second (glibc keeps it otherwise); when
    // nothing happens there is no timer at all.
    static constexpr int kTrimAfterMs = 1000;
    bool trim_pending_ = false;
    // The watcher has work it could not finish (links that could not be
    // read while they kept changing): tried again soon, not on the next
    // event, which may never come. Idle, it has none.
    static constexpr int kRetryAfterMs = 20;
    uint64_t watchdog_usec_ = 0;  // 0: no watchdog
    uint64_t next_ping_ = std::numeric_limits<uint64_t>::max();
};

bool Daemon::open() {
    ::signal(SIGPIPE, SIG_IGN);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    sigfd_ = UniqueFd(signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
    if (!sigfd_) {
        log(Level::Error, std::string("signalfd: ") + std::strerror(errno));
        return false;
    }

    // The first configuration; a bad file at start means no bindings (the
    // D-Bus API still works) and a loud error, so that Status can say why.
    first_cfg_.file = opts_.config;
    const auto loaded_cfg = load_config(opts_.config, geteuid() == 0);
    if (loaded_cfg) {
        first_cfg_.profiles_dirs = loaded_cfg->profiles_dirs;
        first_cfg_.state_dir = loaded_cfg->state_dir;
    }

    auto kernel = open_kernel_backend();
    if (!kernel) {
        log(Level::Error, "cannot open netlink sockets: " + kernel.error().str());
        return false;
    }
    kernel_ = std::move(*kernel);
    // The same function decides nictunectl --direct's: one directory, one set of locks.
    state_dir_ = state_dir_for(opts_.state_dir, loaded_cfg);
    manager_.emplace(*kernel_.backend, make_store(opts_, first_cfg_, kernel_.feature_names.get()),
                     StateStore(state_dir_), FactsBook::builtin());

    // Tests that must overflow the queues with few events shrink them.
    int queue_bytes = EventSource::kDefaultQueueBytes;
    if (const char* q = std::getenv("NICTUNE_TEST_NETLINK_QUEUE_BYTES"); q && std::atoi(q) > 0)
        queue_bytes = std::atoi(q);
    auto events = EventSource::open(
        queue_bytes,
        [names = kernel_.feature_names]() -> Result<std::shared_ptr<const FeatureNames>> {
            return names;
        });
    if (!events) {
        log(Level::Error, "cannot listen for notifications: " + events.error().str());
        return false;
    }
    events_ = std::move(*events);

    try {
        conn_ = opts_.bus_address.empty()
                    ? sdbus::createSystemBusConnection()
                    : sdbus::createSessionBusConnectionWithAddress(opts_.bus_address);
    } catch (const sdbus::Error& e) {
        log(Level::Error, "cannot connect to the bus: " + e.getMessage());
        return false;
    }
    authorizer_ = make_polkit_authorizer(opts_.bus_address);
    watcher_.emplace(*manager_, watcher_events());
    metrics_.emplace(
        *manager_, *watcher_,
        [this]() -> std::filesystem::path {
            if (opts_.metrics_dir) return *opts_.metrics_dir;
            const auto& c = watcher_->config().metrics_dir;
            return c ? std::filesystem::path(*c) : std::filesystem::path(kDefaultMetricsDir);
        },
        [this] { return config_error_.empty(); });
    try {
        object_ = std::make_unique<ManagerObject>(
            *conn_, *manager_, *watcher_, *authorizer_, [this] { return reload(); },
            [this] { return status_extra(); });
        conn_->requestName(kBusName);
    } catch (const sdbus::Error& e) {
        log(Level::Error, std::string("cannot own ") + kBusName + ": " + e.getMessage());
        return false;
    }
    return true;
}

void Daemon::emit(const char* what, const std::function<void()>& send) {
    try {
        send();
    } catch (const std::exception& e) {
        log(Level::Error, std::string("cannot send the ") + what + " signal: " + e.what());
    }
}

// Names are in text form; the other strings are made valid UTF-8, which
// sd-bus requires.
void Daemon::applied(const std::string& tx, const std::string& iface, const std::string& profile,
                     const std::string& result, const std::string& reason) {
    reported_ = true;
    if (!object_) return;
    emit("Applied", [&] {
        object_->emitApplied(to_valid_utf8(tx), to_valid_utf8(iface), to_valid_utf8(profile),
                             result, reason);
    });
}

watch::WatcherEvents Daemon::watcher_events() {
    watch::WatcherEvents ev;
    ev.log = [](Level level, std::string_view message, const LogFields& fields) {
        log(level, message, fields);
    };
    ev.applied = [this](const std::string& tx, const std::string& iface, const std::string& profile,
                        const std::string& result,
                        const std::string& reason) { applied(tx, iface, profile, result, reason); };
    ev.drift = [this](const std::string& iface, const std::string& key, const std::string& expected,
                      const std::string& actual, bool enforced) {
        reported_ = true;
        if (!object_) return;
        emit("Drift", [&] {
            object_->emitDrift(to_valid_utf8(iface), to_valid_utf8(key), to_valid_utf8(expected),
                               to_valid_utf8(actual), enforced);
        });
    };
    ev.held = [this](std::unique_ptr<HeldTransaction> held, const Binding& b,
                     const std::string& reason) {
        if (!object_) return;  // destroyed unresolved: recovered like a crash
        object_->hold(std::move(held), "", PendingCheck{*b.verify_peer, b.min_gbps},
                      std::chrono::seconds(b.confirm_timeout), reason);
    };
    return ev;
}

Result<void> Daemon::reload() {
    sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu", static_cast<unsigned long long>(now_usec()));
    auto loaded = load_everything(opts_, manager_->profiles());
    if (!loaded) {
        config_error_ = loaded.error().str();
        log(Level::Error, config_error_ + "; keeping the previous configuration");
        sd_notify(0, "READY=1");
        return std::unexpected(loaded.error());
    }
    config_error_.clear();
    log(Level::Info, "configuration " + opts_.config.string() + ": " +
                         std::to_string(loaded->cfg.bindings.size()) + " binding(s)");
    watcher_->set_config(std::move(loaded->cfg), std::move(loaded->profiles));
    watcher_->apply_all("reload");
    sd_notify(0, "READY=1");
    return {};
}

nlohmann::json Daemon::status_extra() const {
    return nlohmann::json{{"version", NICTUNE_VERSION},
                          {"state_dir", state_dir_.string()},
                          {"config_error", config_error_.empty() ? nlohmann::json(nullptr)
                                                                 : nlohmann::json(config_error_)}};
}

// A transaction that was running when nictuned (or nictunectl --direct)
// died: the originals go back before anything else.
void Daemon::recover() {
    for (const auto& r : manager_->recover()) {
        if (r.error && r.interface.empty()) {
            log(Level::Error, "state directory: " + r.error->str() + "; left alone");
            continue;
        }
        const bool ok = r.result == TxResult::RolledBack;
        LogFields f{r.interface, r.profile, "", ""};
        f.event = ok ? Event::RolledBack : Event::Failed;
        f.result = ok ? "rolled_back" : "recovery_failed";
        f.reason = "crash";
        log(ok ? Level::Warning : Level::Error,
            std::string("unfinished transaction found: ") +
                (ok ? "original settings restored" : "restoring the original settings failed") +
                (r.error ? ": " + r.error->str() : std::string()),
            f);
        applied("", r.interface, r.profile, ok ? "recovered" : "recovery_failed", "crash");
    }
}

void Daemon::start() {
    recover();
    // Bind and apply at start.
    if (auto loaded = load_everything(opts_, manager_->profiles())) {
        watcher_->set_config(std::move(loaded->cfg), std::move(loaded->profiles));
    } else {
        config_error_ = loaded.error().str();
        log(Level::Error, config_error_ + "; starting without bindings");
        watcher_->set_config(first_cfg_, {});
    }
    try {
        watcher_->apply_all("boot");
    } catch (const std::exception& e) {
        log(Level::Error, std::string("internal error while applying the bindings: ") + e.what());
    }
    metrics_->changed(now_usec());

    if (sd_watchdog_enabled(0, &watchdog_usec_) <= 0) watchdog_usec_ = 0;
    if (watchdog_usec_ > 0) next_ping_ = now_usec() + watchdog_usec_ / 2;
    sd_notifyf(0, "READY=1\nSTATUS=%zu binding(s), watching %zu interface(s)",
               watcher_->config().bindings.size(), watcher_->tracked().size());
    log(Level::Info, "ready on " + (opts_.bus_address.empty() ? std::string("the system bus")
                                                              : opts_.bus_address));
}

int Daemon::poll_timeout_ms(uint64_t bus_timeout_usec) const {
    const uint64_t deadline = std::min({bus_timeout_usec, next_ping_, object_->next_deadline()});
    int timeout_ms = -1;
    if (deadline != std::numeric_limits<uint64_t>::max()) {
        const uint64_t now = now_usec();
        timeout_ms =
            deadline <= now
                ? 0
                : static_cast<int>(std::min<uint64_t>((deadline - now + 999) / 1000, 1U << 30));
    }
    const auto at_most = [&](int ms) {
        if (timeout_ms < 0 || timeout_ms > ms) timeout_ms = ms;
    };
    if (trim_pending_) at_most(kTrimAfterMs);
    if (watcher_->pending()) at_most(kRetryAfterMs);
    // The placement drift check's timer (none when nothing places queues).
    if (const int p = watcher_->placement_timeout_ms(); p >= 0) at_most(p);
    return metrics_->timeout_ms(now_usec(), timeout_ms);
}

void Daemon::loop() {
    while (running_) {
        try {
            while (conn_->processPendingRequest()) {
            }
        } catch (const std::exception& e) {
            log(Level::Error, std::string("bus: ") + e.what());
        }
        const auto pd = conn_->getEventLoopPollData();
        const auto [link_fd, ethtool_fd] = events_->fds();
        pollfd fds[4] = {{pd.fd, pd.events, 0},
                         {link_fd, POLLIN, 0},
                         {ethtool_fd, POLLIN, 0},
                         {sigfd_.get(), POLLIN, 0}};
        const int n = poll(fds, 4, poll_timeout_ms(pd.timeout_usec));
        if (n < 0 && errno != EINTR) {
            log(Level::Error, std::string("poll: ") + std::strerror(errno));
            break;
        }
        if (n == 0 && trim_pending_) give_memory_back();
        if (n > 0) {
            trim_pending_ = true;
            metrics_->changed(now_usec());
        }
        ping_watchdog();
        handle(fds[1], fds[2], fds[3]);
        metrics_->write_if_due(now_usec());
    }
}

void Daemon::give_memory_back() {
    // The netlink receive buffers first: freed, their pages go back too.
    manager_->backend().release_buffers();
    events_->release_buffers();
    malloc_trim(0);
    trim_pending_ = false;
}

void Daemon::ping_watchdog() {
    if (watchdog_usec_ == 0 || now_usec() < next_ping_) return;
    sd_notify(0, "WATCHDOG=1");
    next_ping_ = now_usec() + watchdog_usec_ / 2;
}

// Nothing the kernel sends may stop the daemon: whatever escapes the
// handling of one round of events is logged, and the loop goes on.
void Daemon::handle(const pollfd& link, const pollfd& ethtool, const pollfd& signals) {
    try {
        WatcherFeed feed(*watcher_);
        events_->receive(feed, (link.revents & POLLIN) != 0, (ethtool.revents & POLLIN) != 0);
        if (signals.revents & POLLIN) read_signals();
        if (feed.resync) watcher_->resync();
        watcher_->process();
        if (reported_) metrics_->changed(now_usec());
        reported_ = false;
        object_->expire(now_usec());
    } catch (const std::exception& e) {
        log(Level::Error, std::string("internal error while handling events: ") + e.what());
    }
}

void Daemon::read_signals() {
    signalfd_siginfo si{};
    while (read(sigfd_.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        if (si.ssi_signo == SIGHUP) {
            log(Level::Info, "SIGHUP: reloading");
            (void)reload();
        } else {
            log(Level::Info, "stopping");
            running_ = false;
        }
    }
}

void Daemon::stop() {
    sd_notify(0, "STOPPING=1");
    try {
        object_->abort_all("nictuned is stopping");
    } catch (const std::exception& e) {
        log(Level::Error, std::string("internal error while rolling back: ") + e.what());
    }
    object_.reset();
    try {
        conn_->releaseName(kBusName);
    } catch (const sdbus::Error&) {
    }
}

}  // namespace

int run_daemon(const DaemonOptions& opts) {
    init_log(opts.debug);
    Daemon daemon(opts);
    if (!daemon.open()) return 1;
    daemon.start();
    daemon.loop();
    daemon.stop();
    return 0;
}

}  // namespace nictune::service
