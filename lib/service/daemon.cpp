#include "service/daemon.hpp"

#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

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

}  // namespace

int run_daemon(const DaemonOptions& opts) {
    init_log(opts.debug);
    ::signal(SIGPIPE, SIG_IGN);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    // Owned: the early returns below (no netlink, no bus) close it too.
    const UniqueFd sigfd_owner(signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
    const int sigfd = sigfd_owner.get();
    if (!sigfd_owner) {
        log(Level::Error, std::string("signalfd: ") + std::strerror(errno));
        return 1;
    }

    // The first configuration; a bad file at start means no bindings (the
    // D-Bus API still works) and a loud error, so that Status can say why.
    std::string config_error;
    DaemonConfig first_cfg;
    first_cfg.file = opts.config;
    const auto loaded_cfg = load_config(opts.config, geteuid() == 0);
    if (loaded_cfg) {
        first_cfg.profiles_dirs = loaded_cfg->profiles_dirs;
        first_cfg.state_dir = loaded_cfg->state_dir;
    }

    auto kernel = open_kernel_backend();
    if (!kernel) {
        log(Level::Error, "cannot open netlink sockets: " + kernel.error().str());
        return 1;
    }
    const std::shared_ptr<const FeatureNames> feature_names = kernel->feature_names;
    const FeatureNames* runtime_names = feature_names.get();
    // The same function decides nictunectl --direct's: one directory, one set of locks.
    const std::filesystem::path state_dir = state_dir_for(opts.state_dir, loaded_cfg);
    Manager manager(*kernel->backend, make_store(opts, first_cfg, runtime_names),
                    StateStore(state_dir), FactsBook::builtin());

    // Tests that must overflow the queues with few events shrink them.
    int queue_bytes = EventSource::kDefaultQueueBytes;
    if (const char* q = std::getenv("NICTUNE_TEST_NETLINK_QUEUE_BYTES"); q && std::atoi(q) > 0)
        queue_bytes = std::atoi(q);
    auto events = EventSource::open(
        queue_bytes,
        [feature_names]() -> Result<std::shared_ptr<const FeatureNames>> { return feature_names; });
    if (!events) {
        log(Level::Error, "cannot listen for notifications: " + events.error().str());
        return 1;
    }
    const auto [link_fd, ethtool_fd] = (*events)->fds();

    std::unique_ptr<sdbus::IConnection> conn;
    try {
        conn = opts.bus_address.empty()
                   ? sdbus::createSystemBusConnection()
                   : sdbus::createSessionBusConnectionWithAddress(opts.bus_address);
    } catch (const sdbus::Error& e) {
        log(Level::Error, "cannot connect to the bus: " + e.getMessage());
        return 1;
    }
    auto authorizer = make_polkit_authorizer(opts.bus_address);

    // Signals go out from the event loop and from inside D-Bus handlers
    // (an Apply notes its result): a signal that cannot be sent is logged,
    // and neither stops the daemon nor fails the call. Names are in text
    // form; the other strings are made valid UTF-8, which sd-bus requires.
    ManagerObject* object = nullptr;
    const auto emit = [](const char* what, const std::function<void()>& send) {
        try {
            send();
        } catch (const std::exception& e) {
            log(Level::Error, std::string("cannot send the ") + what + " signal: " + e.what());
        }
    };
    // The watcher reported something: the metrics file is due (the
    // placement timer's findings come without any event on a socket).
    bool reported = false;
    watch::WatcherEvents ev;
    ev.log = [](Level level, std::string_view message, const LogFields& fields) {
        log(level, message, fields);
    };
    ev.applied = [&](const std::string& tx, const std::string& iface, const std::string& profile,
                     const std::string& result, const std::string& reason) {
        reported = true;
        if (!object) return;
        emit("Applied", [&] {
            object->emitApplied(to_valid_utf8(tx), to_valid_utf8(iface), to_valid_utf8(profile),
                                result, reason);
        });
    };
    ev.drift = [&](const std::string& iface, const std::string& key, const std::string& expected,
                   const std::string& actual, bool enforced) {
        reported = true;
        if (!object) return;
        emit("Drift", [&] {
            object->emitDrift(to_valid_utf8(iface), to_valid_utf8(key), to_valid_utf8(expected),
                              to_valid_utf8(actual), enforced);
        });
    };
    ev.held = [&](std::unique_ptr<HeldTransaction> held, const Binding& b,
                  const std::string& reason) {
        if (!object) return;  // destroyed unresolved: recovered like a crash
        object->hold(std::move(held), "", PendingCheck{*b.verify_peer, b.min_gbps},
                     std::chrono::seconds(b.confirm_timeout), reason);
    };
    watch::Watcher watcher(manager, ev);

    auto reload = [&]() -> Result<void> {
        sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
                   static_cast<unsigned long long>(now_usec()));
        auto loaded = load_everything(opts, manager.profiles());
        if (!loaded) {
            config_error = loaded.error().str();
            log(Level::Error, config_error + "; keeping the previous configuration");
            sd_notify(0, "READY=1");
            return std::unexpected(loaded.error());
        }
        config_error.clear();
        log(Level::Info, "configuration " + opts.config.string() + ": " +
                             std::to_string(loaded->cfg.bindings.size()) + " binding(s)");
        watcher.set_config(std::move(loaded->cfg), std::move(loaded->profiles));
        watcher.apply_all("reload");
        sd_notify(0, "READY=1");
        return {};
    };
    auto status_extra = [&]() {
        return nlohmann::json{
            {"version", NICTUNE_VERSION},
            {"state_dir", state_dir.string()},
            {"config_error",
             config_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(config_error)}};
    };

    MetricsExport metrics(
        manager, watcher,
        [&]() -> std::filesystem::path {
            if (opts.metrics_dir) return *opts.metrics_dir;
            const auto& c = watcher.config().metrics_dir;
            return c ? std::filesystem::path(*c) : std::filesystem::path(kDefaultMetricsDir);
        },
        [&] { return config_error.empty(); });

    std::unique_ptr<ManagerObject> obj;
    try {
        obj = std::make_unique<ManagerObject>(*conn, manager, watcher, *authorizer, reload,
                                              status_extra);
        object = obj.get();
        conn->requestName(kBusName);
    } catch (const sdbus::Error& e) {
        log(Level::Error, std::string("cannot own ") + kBusName + ": " + e.getMessage());
        return 1;
    }

    // A transaction that was running when nictuned (or nictunectl --direct)
    // died: put the originals back before anything else.
    for (const auto& r : manager.recover()) {
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
        ev.applied("", r.interface, r.profile, ok ? "recovered" : "recovery_failed", "crash");
    }

    // Bind and apply at start.
    if (auto loaded = load_everything(opts, manager.profiles())) {
        watcher.set_config(std::move(loaded->cfg), std::move(loaded->profiles));
    } else {
        config_error = loaded.error().str();
        log(Level::Error, config_error + "; starting without bindings");
        watcher.set_config(first_cfg, {});
    }
    try {
        watcher.apply_all("boot");
    } catch (const std::exception& e) {
        log(Level::Error, std::string("internal error while applying the bindings: ") + e.what());
    }
    metrics.changed(now_usec());

    uint64_t wd_usec = 0;
    const bool watchdog = sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec > 0;
    uint64_t next_ping = watchdog ? now_usec() + wd_usec / 2 : std::numeric_limits<uint64_t>::max();
    sd_notifyf(0, "READY=1\nSTATUS=%zu binding(s), watching %zu interface(s)",
               watcher.config().bindings.size(), watcher.tracked().size());
    log(Level::Info, "ready on " + (opts.bus_address.empty() ? std::string("the system bus")
                                                             : opts.bus_address));

    // After a burst of work, give freed memory back to the kernel once the
    // loop has been idle for a second (glibc keeps it otherwise); when
    // nothing happens there is no timer at all.
    bool trim_pending = false;
    constexpr int kTrimAfterMs = 1000;
    bool running = true;
    while (running) {
        try {
            while (conn->processPendingRequest()) {
            }
        } catch (const std::exception& e) {
            log(Level::Error, std::string("bus: ") + e.what());
        }
        auto pd = conn->getEventLoopPollData();
        // A pending transaction's confirm deadline (confirmed apply).
        uint64_t deadline = std::min({pd.timeout_usec, next_ping, obj->next_deadline()});
        int timeout_ms = -1;
        if (deadline != std::numeric_limits<uint64_t>::max()) {
            const uint64_t now = now_usec();
            timeout_ms =
                deadline <= now
                    ? 0
                    : static_cast<int>(std::min<uint64_t>((deadline - now + 999) / 1000, 1U << 30));
        }
        pollfd fds[4] = {{pd.fd, pd.events, 0},
                         {link_fd, POLLIN, 0},
                         {ethtool_fd, POLLIN, 0},
                         {sigfd, POLLIN, 0}};
        if (trim_pending && (timeout_ms < 0 || timeout_ms > kTrimAfterMs))
            timeout_ms = kTrimAfterMs;
        // The watcher has work it could not finish (links that could not be
        // read while they kept changing): try again soon, not on the next
        // event, which may never come. Idle, it has none.
        constexpr int kRetryAfterMs = 20;
        if (watcher.pending() && (timeout_ms < 0 || timeout_ms > kRetryAfterMs))
            timeout_ms = kRetryAfterMs;
        // The placement drift check's timer (none when nothing places queues).
        if (const int p = watcher.placement_timeout_ms();
            p >= 0 && (timeout_ms < 0 || timeout_ms > p))
            timeout_ms = p;
        timeout_ms = metrics.timeout_ms(now_usec(), timeout_ms);
        int n = poll(fds, 4, timeout_ms);
        if (n < 0 && errno != EINTR) {
            log(Level::Error, std::string("poll: ") + std::strerror(errno));
            break;
        }
        if (n == 0 && trim_pending) {
            // The netlink receive buffers first: freed, their pages go back too.
            manager.backend().release_buffers();
            (*events)->release_buffers();
            malloc_trim(0);
            trim_pending = false;
        }
        if (n > 0) trim_pending = true;
        if (n > 0) metrics.changed(now_usec());
        if (watchdog && now_usec() >= next_ping) {
            sd_notify(0, "WATCHDOG=1");
            next_ping = now_usec() + wd_usec / 2;
        }
        // Nothing the kernel sends may stop the daemon: whatever escapes the
        // handling of one round of events is logged, and the loop goes on.
        try {
            WatcherFeed feed(watcher);
            (*events)->receive(feed, (fds[1].revents & POLLIN) != 0,
                               (fds[2].revents & POLLIN) != 0);
            if (fds[3].revents & POLLIN) {
                signalfd_siginfo si{};
                while (read(sigfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
                    if (si.ssi_signo == SIGHUP) {
                        log(Level::Info, "SIGHUP: reloading");
                        (void)reload();
                    } else {
                        log(Level::Info, "stopping");
                        running = false;
                    }
                }
            }
            if (feed.resync) watcher.resync();
            watcher.process();
            if (reported) metrics.changed(now_usec());
            reported = false;
            obj->expire(now_usec());
        } catch (const std::exception& e) {
            log(Level::Error, std::string("internal error while handling events: ") + e.what());
        }
        metrics.write_if_due(now_usec());
    }
    sd_notify(0, "STOPPING=1");
    try {
        obj->abort_all("nictuned is stopping");
    } catch (const std::exception& e) {
        log(Level::Error, std::string("internal error while rolling back: ") + e.what());
    }
    object = nullptr;
    obj.reset();
    try {
        conn->releaseName(kBusName);
    } catch (const sdbus::Error&) {
    }
    return 0;
}

}  // namespace nictune::service
