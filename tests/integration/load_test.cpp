// Load (issue 7): 50 concurrent clients, each a thread with its own bus
// connection, call Audit and Apply on nictuned for NICTUNE_LOAD_SECONDS
// (default 60), applying two profiles in turn to a few veths, alone and in
// pairs. Checks:
//   - nictuned neither crashes nor logs an internal error;
//   - no transactions interleave on one interface: every applied result is
//     internally consistent (each setting ends at the requested profile's
//     value), and ordered by transaction number the results of one interface
//     form a chain (what a transaction found is what the one before it left);
//     Busy is an acceptable answer, a mix is not;
//   - the kernel's final state is the profile of each interface's last
//     successful apply, and Status says so;
//   - open file descriptors and resident memory do not grow: sampled after a
//     warm-up and at the end (fds equal, VmRSS growth below 10%; under
//     AddressSanitizer, whose quarantine holds freed memory on purpose, RSS is
//     reported but not judged).
// Prints the figures ("[load] ...").
#include <gtest/gtest.h>
#include <sdbus-c++/sdbus-c++.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "integration/daemon_harness.hpp"

namespace nictune::test {
namespace {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kClients = 50;
constexpr int kInterfaces = 4;
constexpr auto kCallTimeout = 60s;

struct Target {
    unsigned mtu;
    unsigned txqueuelen;
    bool gro;
};
const std::map<std::string, Target> kProfiles = {{"alpha", {9000, 3000, true}},
                                                 {"beta", {1400, 700, false}}};

std::string iface(int i) {
    return "ld" + std::to_string(i);
}

int load_seconds() {
    const char* s = std::getenv("NICTUNE_LOAD_SECONDS");
    const int v = s ? std::atoi(s) : 0;
    return v > 0 ? std::min(v, 3600) : 60;
}

// The transaction number: the counter after the last '-' of
// "<time>-<pid>-<counter>" (nictuned numbers its transactions in order).
long tx_number(const std::string& tx) {
    auto dash = tx.rfind('-');
    return dash == std::string::npos ? -1 : std::atol(tx.c_str() + dash + 1);
}

using Outcome = sdbus::Struct<std::string, std::string, std::string, std::string, std::string,
                              std::string>;  // interface, key, outcome, before, after, error
using Finding = sdbus::Struct<std::string, std::string, std::string, std::string, std::string,
                              std::string, std::string>;
using Flags = std::map<std::string, sdbus::Variant>;

struct Out {
    std::string iface, key, outcome, before, after, error;
};
Out unpack(const Outcome& o) {
    return {std::get<0>(o), std::get<1>(o), std::get<2>(o),
            std::get<3>(o), std::get<4>(o), std::get<5>(o)};
}

struct ApplyRecord {
    std::string profile;
    std::string transaction;
    std::string result;
    std::vector<Outcome> outcomes;
};

struct Tally {
    std::mutex m;
    std::vector<ApplyRecord> applies;
    std::map<std::string, long> errors;  // D-Bus error name -> count
    std::vector<double> latencies_ms;
    long audits = 0;
    long audit_findings = 0;
};

// The value a profile sets for an outcome's key, as the D-Bus API prints it;
// "" for keys the test does not know (then it only checks the chain).
std::string target_text(const Target& t, const std::string& key) {
    if (key == "link.mtu") return std::to_string(t.mtu);
    if (key == "link.txqueuelen") return std::to_string(t.txqueuelen);
    if (key.starts_with("features.") && key.find("gro") != std::string::npos)
        return t.gro ? "true" : "false";
    return "";
}

void client(int id, const std::string& address, Clock::time_point deadline, Tally& tally) {
    std::unique_ptr<sdbus::IConnection> conn;
    try {
        conn = sdbus::createSessionBusConnectionWithAddress(address);
    } catch (const sdbus::Error& e) {
        std::lock_guard g(tally.m);
        ++tally.errors["connect: " + e.getName()];
        return;
    }
    auto proxy = sdbus::createProxy(*conn, "org.nictune1", "/org/nictune1");
    for (long k = 0; Clock::now() < deadline; ++k) {
        const int a = static_cast<int>((id + k) % kInterfaces);
        std::vector<std::string> ifaces = {iface(a)};
        // Every fifth apply takes two interfaces in one transaction.
        if (k % 10 == 3) ifaces.push_back(iface((a + 1) % kInterfaces));
        const std::string profile = ((id + k / 2) % 2) ? "alpha" : "beta";
        const auto t0 = Clock::now();
        try {
            if (k % 2 == 0) {
                std::vector<Finding> findings;
                std::string report;
                proxy->callMethod("Audit")
                    .onInterface("org.nictune1.Manager")
                    .withTimeout(kCallTimeout)
                    .withArguments(ifaces, profile, Flags{})
                    .storeResultsTo(findings, report);
                const double ms =
                    std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                std::lock_guard g(tally.m);
                ++tally.audits;
                tally.audit_findings += static_cast<long>(findings.size());
                tally.latencies_ms.push_back(ms);
            } else {
                ApplyRecord r;
                r.profile = profile;
                std::string report;
                proxy->callMethod("Apply")
                    .onInterface("org.nictune1.Manager")
                    .withTimeout(kCallTimeout)
                    .withArguments(profile, ifaces, Flags{})
                    .storeResultsTo(r.transaction, r.result, r.outcomes, report);
                const double ms =
                    std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                std::lock_guard g(tally.m);
                tally.applies.push_back(std::move(r));
                tally.latencies_ms.push_back(ms);
            }
        } catch (const sdbus::Error& e) {
            std::lock_guard g(tally.m);
            ++tally.errors[e.getName()];
        }
    }
}

struct Sample {
    double at_s;
    int fds;
    long rss_kb;
};

TEST(LoadTest, FiftyClientsAuditAndApplyWithoutInterleavingOrGrowth) {
    std::string skip;
    DaemonHarness h({{"alpha", "[link]\nmtu = 9000\ntxqueuelen = 3000\n[features]\ngro = true\n"},
                     {"beta", "[link]\nmtu = 1400\ntxqueuelen = 700\n[features]\ngro = false\n"}},
                    "", &skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    ASSERT_TRUE(h.ok());
    for (int i = 0; i < kInterfaces; ++i)
        ASSERT_EQ(h.ns()
                      .exec("ip link add name " + iface(i) + " type veth peer name lp" +
                            std::to_string(i))
                      .status,
                  0);
    ASSERT_TRUE(h.start_daemon());
    const pid_t pid = h.daemon().pid();

    // The clients run twice: a warm-up (caches, allocator arenas, the bus
    // connections' buffers), then the measured run. fds and RSS are compared
    // between the two idle moments after each, so that a transaction in
    // flight (its lock file, a socket) does not count; during the runs they
    // are sampled every 5 s.
    const int seconds = load_seconds();
    const auto warmup = std::chrono::seconds(std::max(5, seconds / 6));
    Tally tally;
    std::vector<Sample> samples;
    const auto start = Clock::now();
    auto run_clients = [&](std::chrono::seconds length) {
        const auto deadline = Clock::now() + length;
        std::vector<std::thread> threads;
        threads.reserve(kClients);
        for (int i = 0; i < kClients; ++i)
            threads.emplace_back(client, i, h.bus().address(), deadline, std::ref(tally));
        while (Clock::now() < deadline) {
            std::this_thread::sleep_until(std::min(deadline, Clock::now() + 5s));
            samples.push_back({std::chrono::duration<double>(Clock::now() - start).count(),
                               fd_count(pid), proc_status_kb(pid, "VmRSS")});
        }
        for (auto& t : threads)
            t.join();
    };
    auto idle_sample = [&] {
        // The last replies are out, and nictuned has trimmed its heap (it
        // does after a second of idleness).
        std::this_thread::sleep_for(2s);
        return Sample{std::chrono::duration<double>(Clock::now() - start).count(), fd_count(pid),
                      proc_status_kb(pid, "VmRSS")};
    };
    auto calls_so_far = [&] {
        long n = tally.audits + static_cast<long>(tally.applies.size());
        for (const auto& [name, k] : tally.errors)
            n += k;
        return n;
    };
    run_clients(warmup);
    ASSERT_TRUE(h.daemon().running()) << h.log();
    const Sample ref = idle_sample();
    const long warmup_calls = calls_so_far();
    const auto measured = Clock::now();
    run_clients(std::chrono::seconds(seconds));
    const double elapsed = std::chrono::duration<double>(Clock::now() - measured).count();
    ASSERT_TRUE(h.daemon().running()) << h.log();
    const Sample end = idle_sample();
    int max_fds = 0;
    for (const auto& x : samples)
        max_fds = std::max(max_fds, x.fds);

    // 1. Each applied result is internally consistent; group by interface.
    std::map<std::string, long> results;
    std::map<std::string, std::vector<const ApplyRecord*>> by_iface;
    int inconsistent = 0;
    for (const auto& r : tally.applies) {
        ++results[r.result];
        if (r.result != "applied") continue;
        const Target& t = kProfiles.at(r.profile);
        std::set<std::string> touched;
        for (const auto& raw : r.outcomes) {
            const Out o = unpack(raw);
            touched.insert(o.iface);
            const std::string want = target_text(t, o.key);
            if (!want.empty() && o.after != want && inconsistent++ < 10)
                ADD_FAILURE() << r.transaction << " (" << r.profile << ") " << o.iface << " "
                              << o.key << ": " << o.outcome << " " << o.before << " -> " << o.after
                              << ", expected " << want;
        }
        for (const auto& ifc : touched)
            by_iface[ifc].push_back(&r);
    }
    EXPECT_EQ(inconsistent, 0);

    // 2. The chain per interface: ordered by transaction number, what each
    //    transaction found (before) is what the previous one left (after).
    int broken_links = 0;
    std::map<std::string, const ApplyRecord*> last_ok;
    for (auto& [ifc, list] : by_iface) {
        std::sort(list.begin(), list.end(), [](const ApplyRecord* a, const ApplyRecord* b) {
            return tx_number(a->transaction) < tx_number(b->transaction);
        });
        std::map<std::string, std::string> left;  // key -> after of the previous transaction
        for (const ApplyRecord* r : list) {
            for (const auto& raw : r->outcomes) {
                const Out o = unpack(raw);
                if (o.iface != ifc) continue;
                auto it = left.find(o.key);
                if (it != left.end() && it->second != o.before && broken_links++ < 10)
                    ADD_FAILURE() << ifc << " " << o.key << ": " << r->transaction << " found "
                                  << o.before << " but the transaction before it left "
                                  << it->second << " (interleaved?)";
            }
            for (const auto& raw : r->outcomes) {
                const Out o = unpack(raw);
                if (o.iface == ifc) left[o.key] = o.after;
            }
        }
        if (!list.empty()) last_ok[ifc] = list.back();
    }
    EXPECT_EQ(broken_links, 0);

    // 3. The kernel ends where the last successful apply put it; Status agrees.
    const auto links = h.links();
    const auto status = h.status();
    for (int i = 0; i < kInterfaces; ++i) {
        const std::string ifc = iface(i);
        ASSERT_TRUE(last_ok.contains(ifc)) << "no successful apply on " << ifc;
        const ApplyRecord& r = *last_ok.at(ifc);
        const Target& t = kProfiles.at(r.profile);
        EXPECT_EQ(links.at(ifc).value("mtu", 0U), t.mtu) << ifc << " after " << r.transaction;
        EXPECT_EQ(links.at(ifc).value("txqlen", 0U), t.txqueuelen) << ifc;
        auto k = h.ns().exec("ethtool --json -k " + ifc);
        ASSERT_EQ(k.status, 0) << k.err;
        EXPECT_EQ(parse_json(k.out).at(0).at("generic-receive-offload").at("active").get<bool>(),
                  t.gro)
            << ifc;
        bool listed = false;
        for (const auto& s : status.at("interfaces"))
            if (s.at("name") == ifc) {
                listed = true;
                EXPECT_EQ(s.at("profile"), r.profile) << ifc;
                EXPECT_EQ(s.at("transaction"), r.transaction) << ifc;
            }
        EXPECT_TRUE(listed) << ifc << " missing from Status: " << status.dump();
    }

    // 4. Errors: Busy is an acceptable outcome; nothing else is.
    long total_errors = 0;
    std::string error_text;
    for (const auto& [name, n] : tally.errors) {
        total_errors += n;
        error_text += " " + name + "=" + std::to_string(n);
        if (name != "org.nictune1.Error.Busy") ADD_FAILURE() << n << " x " << name;
    }
    for (const auto& [result, n] : results)
        if (result != "applied") ADD_FAILURE() << n << " applies ended " << result;
    const std::string log = h.log();
    EXPECT_EQ(log.find("internal error"), std::string::npos) << log;

    // 5. No growth.
    EXPECT_EQ(end.fds, ref.fds) << "nictuned's open file descriptors grew";
    // In flight a transaction holds a few more (a lock file, netlink and
    // ioctl sockets), never one per client or per call.
    EXPECT_LE(max_fds, ref.fds + 8) << "fds under load";
    const double rss_growth = 100.0 * static_cast<double>(end.rss_kb - ref.rss_kb) /
                              static_cast<double>(std::max(1L, ref.rss_kb));
#if defined(__SANITIZE_ADDRESS__)
    const bool judge_rss = false;
#else
    const bool judge_rss = true;
    EXPECT_LT(rss_growth, 10.0) << "VmRSS " << ref.rss_kb << " kB -> " << end.rss_kb << " kB";
#endif

    // Figures.
    std::sort(tally.latencies_ms.begin(), tally.latencies_ms.end());
    auto pct = [&](double p) {
        if (tally.latencies_ms.empty()) return 0.0;
        return tally.latencies_ms[static_cast<std::size_t>(
            p * static_cast<double>(tally.latencies_ms.size() - 1))];
    };
    const long calls = calls_so_far() - warmup_calls;
    std::string series;
    for (const auto& s : samples)
        series += " " + std::to_string(static_cast<int>(s.at_s)) + "s:" + std::to_string(s.fds) +
                  "/" + std::to_string(s.rss_kb);
    std::printf(
        "[load] %d clients, %d interfaces, %.1f s after a %lld s warm-up: %ld calls (%.1f/s); "
        "both runs: %ld audits (%ld findings), %zu applies\n"
        "[load] apply results:%s; errors:%s\n"
        "[load] latency ms: p50 %.1f, p90 %.1f, p99 %.1f, max %.1f\n"
        "[load] nictuned idle fds %d -> %d (at most %d under load); VmRSS %ld kB -> %ld kB "
        "(%+.1f%%%s); VmHWM %ld kB\n"
        "[load] samples (s:fds/rss_kB):%s\n",
        kClients, kInterfaces, elapsed, static_cast<long long>(warmup.count()), calls,
        static_cast<double>(calls) / elapsed, tally.audits, tally.audit_findings,
        tally.applies.size(),
        [&] {
            std::string s;
            for (const auto& [r, n] : results)
                s += " " + r + "=" + std::to_string(n);
            return s;
        }()
            .c_str(),
        error_text.empty() ? " none" : error_text.c_str(), pct(0.5), pct(0.9), pct(0.99), pct(1.0),
        ref.fds, end.fds, max_fds, ref.rss_kb, end.rss_kb, rss_growth,
        judge_rss ? "" : ", not judged under ASan", proc_status_kb(pid, "VmHWM"), series.c_str());
    EXPECT_GT(tally.applies.size(), 0U);
}

}  // namespace
}  // namespace nictune::test
