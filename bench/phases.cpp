// nictune_bench_phases: where the time of nictune's audit, apply and hotplug
// paths goes, measured inside one process with the real library and kernel.
// For bench/run's analysis of a missed target; run it inside the
// benchmark's namespace (`ip netns exec NS nictune_bench_phases ...`).
//
//   nictune_bench_phases audit   --profiles-dir DIR [--reps R]
//   nictune_bench_phases apply   --profiles-dir DIR --state-dir DIR --profile NAME [--reps R]
//   nictune_bench_phases hotplug --profiles-dir DIR --state-dir DIR --profile NAME
//
// audit: the steps of `nictunectl audit --all --json` (set-up, run_audit and
//   its read, the JSON document, its pretty and compact text), each the
//   median of R runs.
// apply: the steps of `nictunectl --direct apply PROFILE IFACES...` on every
//   interface but lo: plan (the read), the transaction split by the
//   before_change hook (locks and saved originals, the SETs, verification and
//   final records), then the pieces on their own: one dump read of all named
//   interfaces vs one read per interface (for comparison; verification uses one dump read), the
//   state store, and the rollback of every interface.
// hotplug: what nictuned does for new interfaces (Watcher::link_event and
//   process, without D-Bus): one per drain, timed per interface, then all in
//   one drain (a burst); then the steps of one interface one by one.
//
// Prints one JSON object on stdout (milliseconds).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/netlink_backend.hpp"
#include "engine/manager.hpp"
#include "engine/state_store.hpp"
#include "engine/transaction.hpp"
#include "profile/facts.hpp"
#include "profile/loader.hpp"
#include "report/json_report.hpp"
#include "service/log.hpp"
#include "watch/config.hpp"
#include "watch/watcher.hpp"

namespace {

using Json = nlohmann::json;
using namespace nictune;

double now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

[[noreturn]] void die(const std::string& s) {
    std::fprintf(stderr, "nictune_bench_phases: %s\n", s.c_str());
    std::exit(3);
}

template <class T>
T must(Result<T> r, const char* what) {
    if (!r) die(std::string(what) + ": " + r.error().str());
    return std::move(*r);
}

double median(std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    if (xs.empty()) return 0;
    const std::size_t n = xs.size();
    return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

Json dist(std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    if (xs.empty()) return nullptr;
    auto pct = [&](double p) {
        const auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(xs.size() - 1));
        return xs[i];
    };
    double sum = 0;
    for (double x : xs)
        sum += x;
    return Json{
        {"n", xs.size()}, {"sum", sum}, {"p50", median(xs)}, {"p99", pct(99)}, {"max", xs.back()}};
}

struct Options {
    std::string mode, profiles_dir, state_dir, profile;
    int reps = 5;
};

// What `nictunectl` builds before it does anything (ctl/cli.cpp open_direct).
struct Engine {
    std::unique_ptr<NetlinkBackend> backend;
    std::unique_ptr<Manager> manager;
};

Engine open_engine(const Options& o) {
    Engine e;
    e.backend = must(NetlinkBackend::open(), "open the backend");
    auto names = e.backend->kernel_feature_names();
    profile::StoreOptions so;
    so.search_path = profile::default_search_path({o.profiles_dir});
    so.parse.runtime_features = names ? names->get() : nullptr;
    e.manager = std::make_unique<Manager>(
        *e.backend, profile::Store(so),
        StateStore(o.state_dir.empty() ? "/nonexistent" : o.state_dir), FactsBook::builtin());
    return e;
}

std::vector<std::string> interfaces(NetlinkBackend& be) {
    auto nics = must(be.read_interfaces(ReadRequest{{}, true}), "read the interfaces");
    std::vector<std::string> out;
    for (const auto& n : nics)
        if (n.id.name != "lo") out.push_back(n.id.name);
    return out;
}

Json audit_mode(const Options& o) {
    std::map<std::string, std::vector<double>> t;
    std::size_t bytes_pretty = 0, bytes_compact = 0, n = 0;
    for (int r = 0; r < o.reps; ++r) {
        double s = now_ms();
        Engine e = open_engine(o);
        t["1 set-up (sockets, feature names, profile store)"].push_back(now_ms() - s);

        s = now_ms();
        AuditRequest every;
        every.include_virtual = true;
        auto rep = must(e.manager->audit(every), "audit");
        t["2 run_audit (read + profiles + findings)"].push_back(now_ms() - s);
        n = rep.interfaces.size();

        s = now_ms();
        Json j = report::audit_json(rep);
        t["3 report::audit_json (build the document)"].push_back(now_ms() - s);

        s = now_ms();
        std::string pretty = j.dump(2);
        t["4 dump(2) (what --json prints)"].push_back(now_ms() - s);
        bytes_pretty = pretty.size();

        s = now_ms();
        std::string compact = j.dump();
        t["5 dump() compact, for comparison"].push_back(now_ms() - s);
        bytes_compact = compact.size();

        s = now_ms();
        if (FILE* f = std::fopen("/dev/null", "w")) {
            std::fwrite(pretty.data(), 1, pretty.size(), f);
            std::fclose(f);
        }
        t["6 write the pretty text (to /dev/null)"].push_back(now_ms() - s);

        s = now_ms();
        j = Json();
        t["7 free the document"].push_back(now_ms() - s);

        s = now_ms();
        (void)must(e.backend->read_interfaces(ReadRequest{{}, true}), "read");
        t["2a   of which read_interfaces (dumps + ioctl + sysfs)"].push_back(now_ms() - s);

        s = now_ms();
        (void)must(e.backend->read_system({}), "read_system");
        t["2b   of which read_system (sysctls, tuned)"].push_back(now_ms() - s);

        s = now_ms();
        auto all = e.manager->profiles().load_all();
        t["2c   of which loading every profile"].push_back(now_ms() - s);
    }
    Json out{{"interfaces", n},
             {"json_bytes_pretty", bytes_pretty},
             {"json_bytes_compact", bytes_compact}};
    for (auto& [k, v] : t)
        out["median_ms"][k] = median(v);
    return out;
}

// The transaction, split where the before_change hook fires.
struct Split {
    double plan = 0, before_first_set = 0, sets = 0, after_last_set = 0, total = 0;
    int groups = 0;
    std::vector<double> hooks;  // when each group's SET started
    TxResult result = TxResult::Applied;
};

Split timed_apply(Engine& e, const Profile& p, const std::vector<std::string>& names) {
    Split s;
    const double t0 = now_ms();
    auto plan = must(e.manager->plan(p, ApplyRequest{p.name, names, false, false, false}), "plan");
    const double t1 = now_ms();
    double first = 0, last = 0;
    ApplyOptions opts;
    opts.before_change = [&](int) {
        const double t = now_ms();
        if (first == 0) first = t;
        last = t;
        ++s.groups;
        s.hooks.push_back(t);
    };
    auto r = apply_plan(*e.backend, e.manager->state(), plan, opts);
    const double t2 = now_ms();
    s.result = r.result;
    s.plan = t1 - t0;
    if (first == 0) first = last = t2;
    s.before_first_set = first - t1;
    // The last group's SET is counted with the verification (no hook after it).
    s.sets = last - first;
    s.after_last_set = t2 - last;
    s.total = t2 - t0;
    return s;
}

Json apply_mode(const Options& o) {
    Engine e = open_engine(o);
    const auto names = interfaces(*e.backend);
    const Profile p = must(e.manager->profiles().load(o.profile), "load the profile");
    std::map<std::string, std::vector<double>> t;
    std::map<std::size_t, std::vector<double>> set_us;
    int groups = 0;
    for (int r = 0; r < o.reps; ++r) {
        Split s = timed_apply(e, p, names);
        if (s.result != TxResult::Applied) die("apply did not apply");
        groups = s.groups;
        t["1 plan (read every named interface, read_system, plan)"].push_back(s.plan);
        t["2 locks + saved originals (before the first SET)"].push_back(s.before_first_set);
        t["3 SETs (first to last group)"].push_back(s.sets);
        t["4 last SET + verification re-read + final records"].push_back(s.after_last_set);
        t["5 apply total"].push_back(s.total);
        // The groups go out phase by phase, each phase's groups of every
        // interface as one pipelined batch; the hook fires for all of a
        // batch's groups just before it is sent. So a phase's batch is the
        // gap from its last hook to the next phase's first one (the last
        // phase's batch is counted with the verification).
        const std::size_t count = names.size();
        const std::size_t phases = count == 0 ? 0 : s.hooks.size() / count;
        for (std::size_t k = 1; k < phases; ++k)
            set_us[k - 1].push_back((s.hooks[k * count] - s.hooks[k * count - 1]) * 1e3);

        double s0 = now_ms();
        (void)must(e.backend->read_interfaces(ReadRequest{names, true}), "read");
        t["6 one read of all named interfaces (dumps)"].push_back(now_ms() - s0);

        s0 = now_ms();
        for (const auto& n : names)
            (void)must(e.backend->read_interfaces(ReadRequest{{n}, true}), "read one");
        t["7 one read per interface (for comparison; verification uses one dump read)"].push_back(
            now_ms() - s0);

        s0 = now_ms();
        (void)must(e.backend->read_system({}), "read_system");
        t["8 read_system once (sysctls + tuned)"].push_back(now_ms() - s0);

        // Alternately: all at once (as `nictunectl --direct rollback` does),
        // and one interface at a time (as each D-Bus Rollback call does).
        s0 = now_ms();
        int rolled = 0;
        if (r % 2 == 0) {
            for (const auto& res : e.manager->rollback(names))
                rolled += res.result == TxResult::RolledBack;
            t["9 rollback, all interfaces at once (as the CLI does)"].push_back(now_ms() - s0);
        } else {
            for (const auto& n : names)
                rolled += e.manager->rollback(n).result == TxResult::RolledBack;
            t["9b rollback, one interface at a time (one D-Bus call each)"].push_back(now_ms() -
                                                                                      s0);
        }
        if (rolled != static_cast<int>(names.size())) die("rollback did not restore everything");

        // The state store alone: what one transaction writes per interface.
        StateStore scratch(o.state_dir + "/scratch");
        s0 = now_ms();
        for (const auto& n : names) {
            auto lock = must(scratch.lock(n), "lock");
            (void)scratch.load_interface(n);
            InterfaceRecord rec;
            rec.name = n;
            (void)scratch.save_interface(rec);
            (void)scratch.save_interface(rec);
        }
        t["10 state store alone: lock + load + 2 saves per interface"].push_back(now_ms() - s0);
        s0 = now_ms();
        for (const auto& n : names)
            (void)scratch.remove_interface(n);
        t["11 state store alone: remove per interface"].push_back(now_ms() - s0);
    }
    Json out{{"interfaces", names.size()}, {"set_groups", groups}};
    // Plan order on veth: channels, features, link (MTU).
    for (auto& [phase, v] : set_us)
        out["set_batch_us_by_phase"][std::to_string(phase)] = median(v);
    for (auto& [k, v] : t)
        out["median_ms"][k] = median(v);
    return out;
}

Json hotplug_mode(const Options& o) {
    Engine e = open_engine(o);
    const auto names = interfaces(*e.backend);
    const Profile p = must(e.manager->profiles().load(o.profile), "load the profile");
    auto cfg = must(parse_config("[[bind]]\nprofile = \"" + o.profile + "\"\ninterface = \"*\"\n",
                                 "bench.toml"),
                    "config");
    std::map<std::string, Profile> profiles{{o.profile, p}};
    std::map<std::string, int> index;
    for (const auto& n : must(e.backend->read_interfaces(ReadRequest{{}, true}), "read"))
        index[n.id.name] = n.id.ifindex;

    // Pass 1: the daemon's own code path, per interface.
    int applied = 0;
    watch::WatcherEvents ev;
    // nictuned's own sink: its messages are part of the path measured.
    ev.log = [](Level level, std::string_view message, const LogFields& fields) {
        service::log(level, message, fields);
    };
    ev.applied = [&](const std::string&, const std::string&, const std::string&,
                     const std::string& result,
                     const std::string&) { applied += result == "applied"; };
    watch::Watcher w(*e.manager, ev);
    w.set_config(cfg, profiles);
    // 1a: one new link per drain of the daemon's sockets (a trickle).
    std::vector<double> per;
    const double t0 = now_ms();
    for (const auto& n : names) {
        const double s = now_ms();
        w.link_event(index[n], n, false);
        w.process();
        per.push_back(now_ms() - s);
    }
    const double total = now_ms() - t0;
    const int applied_one_by_one = applied;
    // The notifications its own changes cause: one drift check per interface.
    std::vector<double> drift;
    for (const auto& n : names) {
        w.device_changed(index[n]);
        const double s = now_ms();
        w.process();
        drift.push_back(now_ms() - s);
    }
    for (const auto& n : names)
        (void)e.manager->rollback(n);

    // 1b: all of them in one drain (a burst): one read, one transaction.
    for (const auto& n : names)
        w.link_event(index[n], n, true);  // forgotten, so that they are new again
    applied = 0;
    for (const auto& n : names)
        w.link_event(index[n], n, false);
    const double b0 = now_ms();
    w.process();
    const double burst = now_ms() - b0;
    const int applied_burst = applied;
    for (const auto& n : names)
        (void)e.manager->rollback(n);

    // Pass 2: the same steps, one by one.
    std::map<std::string, std::vector<double>> t;
    for (const auto& n : names) {
        double s = now_ms();
        (void)must(e.backend->read_interfaces(ReadRequest{{n}, true}), "read");
        t["1 read_interfaces({name}) (link_event's first read)"].push_back(now_ms() - s);
        s = now_ms();
        (void)must(e.backend->read_system({}), "read_system");
        t["2 read_system (sysctls + tuned), inside plan"].push_back(now_ms() - s);
        Split sp = timed_apply(e, p, {n});
        t["3 plan (read again + read_system + plan)"].push_back(sp.plan);
        t["4 locks + saved originals"].push_back(sp.before_first_set);
        t["5 SETs but the last"].push_back(sp.sets);
        t["6 last SET + verify re-read + final record"].push_back(sp.after_last_set);
    }
    for (const auto& n : names)
        (void)e.manager->rollback(n);
    Json out{{"interfaces", names.size()},     {"applied", applied_one_by_one},
             {"link_event_total_ms", total},   {"link_event_ms", dist(per)},
             {"burst_applied", applied_burst}, {"burst_total_ms", burst},
             {"drift_check_ms", dist(drift)}};
    for (auto& [k, v] : t)
        out["steps_ms"][k] = dist(v);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (argc < 2) die("usage: nictune_bench_phases audit|apply|hotplug --profiles-dir DIR ...");
    o.mode = argv[1];
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        auto v = [&]() -> std::string {
            if (i + 1 >= argc) die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--profiles-dir")
            o.profiles_dir = v();
        else if (a == "--state-dir")
            o.state_dir = v();
        else if (a == "--profile")
            o.profile = v();
        else if (a == "--reps")
            o.reps = std::clamp(std::atoi(v().c_str()), 1, 100);
        else
            die("unknown argument " + a);
    }
    if (o.profiles_dir.empty()) die("--profiles-dir is needed");
    if (o.mode != "audit" && (o.state_dir.empty() || o.profile.empty()))
        die("apply and hotplug need --state-dir and --profile");
    Json out;
    if (o.mode == "audit")
        out = audit_mode(o);
    else if (o.mode == "apply")
        out = apply_mode(o);
    else if (o.mode == "hotplug")
        out = hotplug_mode(o);
    else
        die("unknown mode " + o.mode);
    std::printf("%s\n", out.dump(1).c_str());
    return 0;
}
