// `nictunectl probe` against the real kernel, between network namespaces the
// test creates (traffic only between them): a "switch" namespace whose Linux
// bridge drops jumbo frames silently, a router namespace with a 1500-byte
// link that answers with ICMP, a stock `iperf3 -s` as the throughput peer
// (and `iperf3 -c -J` as the oracle), ping as the RTT oracle, and the
// failures: unreachable, nothing listening, a busy server, a server killed
// or stopped during the test, names that do not resolve, link-local
// addresses without an interface, no permission for ICMP.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/dbus.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"
#include "support/paths.hpp"

namespace nictune::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Timed {
    CommandResult r;
    double seconds = 0;
};

class Probe : public ::testing::Test {
  protected:
    // n namespaces; skips when they cannot be made.
    bool make_namespaces(int n) {
        for (int i = 0; i < n; ++i) {
            std::string why;
            auto ns = TestNetns::create(&why);
            if (!ns) {
                why_ = why;
                return false;
            }
            ns_.push_back(std::move(ns));
        }
        return true;
    }
    const TestNetns& ns(int i) const { return *ns_.at(static_cast<std::size_t>(i)); }

    // A veth pair between two of our namespaces.
    void link(int a, const std::string& an, int b, const std::string& bn) {
        auto r = run({"ip", "link", "add", "name", an, "netns", ns(a).name(), "type", "veth",
                      "peer", "name", bn, "netns", ns(b).name()});
        ASSERT_EQ(r.status, 0) << r.err;
    }
    void in(int i, const std::string& script) {
        auto r = ns(i).exec(script);
        ASSERT_EQ(r.status, 0) << script << ": " << r.err;
    }

    Timed ctl(int i, std::vector<std::string> args, int timeout_ms = 120000) {
        args.insert(args.begin(), {kCtl, "probe"});
        const auto t0 = Clock::now();
        Timed t;
        t.r = ns(i).exec_argv(args, timeout_ms);
        t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        return t;
    }

    // A: a0 -- [sa  br0  sb] -- b0 :B, A and B at 9000, the bridge's port
    // towards B at `port_b_mtu`.
    void switch_topology(int port_b_mtu) {
        ASSERT_TRUE(make_namespaces(3)) << why_;
        link(0, "a0", 1, "sa");
        link(2, "b0", 1, "sb");
        in(1,
           "ip link add name br0 type bridge && ip link set sa master br0 && "
           "ip link set sb master br0 && ip link set sa mtu 9000 && ip link set sb mtu " +
               std::to_string(port_b_mtu) +
               " && ip link set sa up && ip link set sb up && ip link set br0 up");
        in(0,
           "ip link set a0 mtu 9000 && ip addr add 10.50.0.1/24 dev a0 && "
           "ip addr add fd50::1/64 dev a0 nodad && ip link set a0 up");
        in(2,
           "ip link set b0 mtu 9000 && ip addr add 10.50.0.2/24 dev b0 && "
           "ip addr add fd50::2/64 dev b0 nodad && ip link set b0 up");
        settle(0, {"10.50.0.2", "fd50::2"});
    }

    // A: a0 (9000) -- ra [router R] rb (1500) -- b0 :B.
    void router_topology() {
        ASSERT_TRUE(make_namespaces(3)) << why_;
        link(0, "a0", 1, "ra");
        link(2, "b0", 1, "rb");
        in(1,
           "sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 && "
           "ip link set ra mtu 9000 && ip addr add 10.51.1.254/24 dev ra && "
           "ip addr add fd51:1::fe/64 dev ra nodad && ip addr add 10.51.2.254/24 dev rb && "
           "ip addr add fd51:2::fe/64 dev rb nodad && ip link set ra up && ip link set rb up");
        in(0,
           "ip link set a0 mtu 9000 && ip addr add 10.51.1.1/24 dev a0 && "
           "ip addr add fd51:1::1/64 dev a0 nodad && ip link set a0 up && "
           "ip route add default via 10.51.1.254 && ip -6 route add default via fd51:1::fe");
        in(2,
           "ip addr add 10.51.2.2/24 dev b0 && ip addr add fd51:2::2/64 dev b0 nodad && "
           "ip link set b0 up && ip route add default via 10.51.2.254 && "
           "ip -6 route add default via fd51:2::fe");
        settle(0, {"10.51.2.2", "fd51:2::2"});
    }

    // A: a0 -- b0 :B, MTU 1500, with a link-local address on b0.
    void direct_topology() {
        ASSERT_TRUE(make_namespaces(2)) << why_;
        link(0, "a0", 1, "b0");
        in(0,
           "ip addr add 10.52.0.1/24 dev a0 && ip addr add fd52::1/64 dev a0 nodad && "
           "ip link set a0 up");
        in(1,
           "ip addr add 10.52.0.2/24 dev b0 && ip addr add fd52::2/64 dev b0 nodad && "
           "ip addr add fe80::b2/64 dev b0 nodad && ip link set b0 up");
        settle(0, {"10.52.0.2", "fd52::2"});
    }

    // The topology works for small packets (ping is the oracle), and the
    // neighbours are resolved before anything is measured.
    void settle(int from, const std::vector<std::string>& peers) {
        for (const auto& p : peers) {
            bool ok = false;
            for (int i = 0; i < 20 && !ok; ++i)
                ok = ns(from).exec("ping -c 1 -W 1 " + p + " >/dev/null").status == 0;
            ASSERT_TRUE(ok) << "no ping answer from " << p << ": the test's topology is wrong";
        }
    }

    // `iperf3 -s` in namespace i, started and stopped by PID.
    std::unique_ptr<Child> iperf_server(int i, int port = 5201) {
        Child::Options o;
        o.ready_line = "Server listening on " + std::to_string(port) + " (test #1)";
        o.stderr_log = dir() / ("iperf3-s-" + std::to_string(port) + ".log");
        std::string why;
        auto c = Child::start({"ip", "netns", "exec", ns(i).name(), "iperf3", "-s", "-p",
                               std::to_string(port), "--forceflush"},
                              o, &why);
        EXPECT_TRUE(c) << why;
        return c;
    }
    // Established TCP connections to the local port in namespace i.
    int established(int i, int port) {
        auto r = ns(i).exec("ss -Htn state established '( sport = :" + std::to_string(port) +
                            " )' | wc -l");
        return std::atoi(r.out.c_str());
    }
    // iperf3 -s takes a moment after a test before it accepts the next
    // client (a client that comes too early is told it is busy, or cut off).
    void wait_server_idle(int i, int port = 5201) {
        for (int k = 0; k < 100 && established(i, port) > 0; ++k)
            std::this_thread::sleep_for(20ms);
        std::this_thread::sleep_for(100ms);
    }

    const fs::path& dir() {
        if (dir_.empty()) {
            char tmpl[] = "/tmp/nictune-probe-XXXXXX";
            EXPECT_NE(mkdtemp(tmpl), nullptr);
            dir_ = tmpl;
            chmod(tmpl, 0755);
        }
        return dir_;
    }
    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    std::string why_;
    std::vector<std::unique_ptr<TestNetns>> ns_;
    fs::path dir_;
};

// ---- path MTU

TEST_F(Probe, FindsTheSilentBlackHoleOfABridgeThatDropsJumboFrames) {
    switch_topology(1500);
    if (HasFatalFailure()) return;
    // What a probe could change if it changed anything: the interface's
    // MTU, its addresses, the routes (the kernel's PMTU cache aside).
    const std::string kState =
        "ip -o link show a0 | grep -o 'mtu [0-9]*'; ip -br addr show dev a0 scope global; "
        "ip route show table main; ip -6 route show table main";
    const std::string before = ns(0).exec(kState).out;
    // The oracle: ping with DF passes at 1500, a byte more is lost.
    EXPECT_EQ(ns(0).exec("ping -c 1 -W 1 -M do -s 1472 10.50.0.2").status, 0);
    EXPECT_NE(ns(0).exec("ping -c 1 -W 1 -M do -s 1473 10.50.0.2").status, 0);

    for (const char* peer : {"10.50.0.2", "fd50::2"}) {
        auto t = ctl(0, {peer, "--json"});
        ASSERT_EQ(t.r.status, 6) << peer << t.r.out << t.r.err;
        auto j = parse_json(t.r.out);
        EXPECT_EQ(j.at("path_mtu"), 1500) << peer;
        EXPECT_EQ(j.at("path_mtu_source"), "black_hole") << peer;
        EXPECT_TRUE(j.at("next_hop_mtu").is_null()) << peer;
        EXPECT_EQ(j.at("interface").at("name"), "a0");
        EXPECT_EQ(j.at("interface").at("mtu"), 9000);
        EXPECT_EQ(j.at("address"), peer);
    }
    auto text = ctl(0, {"10.50.0.2"});
    EXPECT_EQ(text.r.status, 6);
    EXPECT_NE(text.r.out.find("1500  black hole"), std::string::npos) << text.r.out;
    EXPECT_EQ(ns(0).exec(kState).out, before) << "probe changes nothing";

    // The switch carries jumbo frames now: the whole MTU gets through.
    in(1, "ip link set sb mtu 9000");
    for (const char* peer : {"10.50.0.2", "fd50::2"}) {
        auto t = ctl(0, {peer, "--json"});
        ASSERT_EQ(t.r.status, 0) << peer << t.r.out << t.r.err;
        auto j = parse_json(t.r.out);
        EXPECT_EQ(j.at("path_mtu"), 9000) << peer;
        EXPECT_EQ(j.at("path_mtu_source"), "interface") << peer;
    }
    EXPECT_EQ(ns(0).exec("ping -c 1 -W 1 -M do -s 8972 10.50.0.2").status, 0);
}

// The peer's own end of the veth at 1500: the kernel drops the larger
// frames on this side and the send says ENOBUFS (veth_xmit's NET_XMIT_DROP),
// no ICMP comes back. Found by the VM suite's verify_unit: the probe called it
// an error instead of the black hole it is. veth forwards up to the peer's
// MTU plus a VLAN tag (is_skb_forwardable): 1504-byte packets pass, as ping
// shows.
TEST_F(Probe, APeerWithASmallerMtuOnTheSameLinkIsABlackHole) {
    direct_topology();
    if (HasFatalFailure()) return;
    in(0, "ip link set a0 mtu 9000");
    in(1, "ip link set b0 mtu 1500");
    // The oracle: ping with DF passes at 1476 + 28 = 1504 bytes, a byte more does not.
    EXPECT_EQ(ns(0).exec("ping -c 1 -W 1 -M do -s 1476 10.52.0.2").status, 0);
    EXPECT_NE(ns(0).exec("ping -c 1 -W 1 -M do -s 1477 10.52.0.2").status, 0);
    for (const char* peer : {"10.52.0.2", "fd52::2"}) {
        auto t = ctl(0, {peer, "--json"});
        ASSERT_EQ(t.r.status, 6) << peer << t.r.out << t.r.err;
        auto j = parse_json(t.r.out);
        EXPECT_EQ(j.at("path_mtu"), 1504) << peer << j.dump();
        EXPECT_EQ(j.at("path_mtu_source"), "black_hole") << peer;
    }
}

TEST_F(Probe, ReportsTheNextHopMtuARouterAnswersWith) {
    router_topology();
    if (HasFatalFailure()) return;
    const std::map<std::string, std::string> routers = {{"10.51.2.2", "10.51.1.254"},
                                                        {"fd51:2::2", "fd51:1::fe"}};
    for (const auto& [peer, router] : routers) {
        // Twice: the second time the kernel has cached PMTU 1500 for the
        // peer (ip route get shows it), which must not cap the test.
        for (int run_no = 0; run_no < 2; ++run_no) {
            auto t = ctl(0, {peer, "--json"});
            ASSERT_EQ(t.r.status, 6) << peer << t.r.out << t.r.err;
            auto j = parse_json(t.r.out);
            EXPECT_EQ(j.at("path_mtu"), 1500) << peer;
            EXPECT_EQ(j.at("path_mtu_source"), "icmp") << peer << " run " << run_no;
            EXPECT_EQ(j.at("next_hop_mtu"), 1500) << peer;
            EXPECT_EQ(j.at("icmp_from"), router) << peer;
            EXPECT_EQ(j.at("interface").at("gateway"), router) << peer;
            // ip is the oracle for the way out and the interface's MTU.
            auto route = parse_json(ns(0).exec("ip -j route get " + peer).out).at(0);
            EXPECT_EQ(j.at("interface").at("name"), route.at("dev")) << peer;
            EXPECT_EQ(j.at("interface").at("gateway"), route.at("gateway")) << peer;
            auto link = parse_json(ns(0).exec("ip -j link show a0").out).at(0);
            EXPECT_EQ(j.at("interface").at("mtu"), link.at("mtu")) << peer;
            EXPECT_EQ(j.at("interface").at("ifindex"), link.at("ifindex")) << peer;
        }
        auto cached = ns(0).exec("ip route get " + peer);
        EXPECT_NE(cached.out.find("mtu 1500"), std::string::npos) << cached.out;
    }
    auto text = ctl(0, {"fd51:2::2"});
    EXPECT_NE(text.r.out.find("packet too big"), std::string::npos) << text.r.out;
    text = ctl(0, {"10.51.2.2"});
    EXPECT_NE(text.r.out.find("fragmentation needed"), std::string::npos) << text.r.out;
}

TEST_F(Probe, TheLoopbackCarriesWhatIpCan) {
    ASSERT_TRUE(make_namespaces(1)) << why_;
    // lo's MTU is 65536; an IP packet is at most 65535 bytes, and that is
    // the whole of what the path can carry: not a failed check.
    auto t = ctl(0, {"127.0.0.1", "--json", "--count", "3"});
    ASSERT_EQ(t.r.status, 0) << t.r.out << t.r.err;
    auto j = parse_json(t.r.out);
    EXPECT_EQ(j.at("interface").at("name"), "lo");
    EXPECT_EQ(j.at("interface").at("mtu"), 65536);
    EXPECT_EQ(j.at("path_mtu"), 65535);
    EXPECT_EQ(j.at("path_mtu_source"), "interface");
}

// ---- latency

TEST_F(Probe, RttFiguresAgreeWithPing) {
    direct_topology();
    if (HasFatalFailure()) return;
    auto ping = ns(0).exec("ping -q -c 20 -i 0.01 10.52.0.2");
    ASSERT_EQ(ping.status, 0) << ping.err;
    // "rtt min/avg/max/mdev = 0.031/0.045/0.080/0.010 ms" (std::regex is
    // avoided: g++ 12 warns inside it under -fsanitize).
    const auto eq = ping.out.find("rtt min/avg/max/mdev = ");
    ASSERT_NE(eq, std::string::npos) << ping.out;
    double ping_min = 0, ping_avg = 0, ping_max = 0;
    ASSERT_EQ(std::sscanf(ping.out.c_str() + eq, "rtt min/avg/max/mdev = %lf/%lf/%lf", &ping_min,
                          &ping_avg, &ping_max),
              3)
        << ping.out;

    auto t = ctl(0, {"10.52.0.2", "--json", "--count", "20"});
    ASSERT_EQ(t.r.status, 0) << t.r.out << t.r.err;
    auto j = parse_json(t.r.out);
    const auto& r = j.at("rtt_ms");
    const double p50 = r.at("p50"), p99 = r.at("p99"), max = r.at("max"), min = r.at("min");
    EXPECT_EQ(j.at("echo").at("sent"), 20);
    EXPECT_EQ(j.at("echo").at("received"), 20);
    EXPECT_EQ(j.at("echo").at("bytes"), 84);  // ping's default size
    EXPECT_GT(min, 0);
    EXPECT_LE(min, p50);
    EXPECT_LE(p50, p99);
    EXPECT_LE(p99, max);
    // Same order of magnitude as ping on the same path (not a timing
    // assertion: a loaded machine moves both).
    EXPECT_GE(p50, ping_min / 20) << ping.out;
    EXPECT_LE(p50, ping_max * 20 + 1.0) << ping.out;
    EXPECT_EQ(j.at("path_mtu"), 1500);
    EXPECT_EQ(j.at("path_mtu_source"), "interface");
}

// ---- throughput, with iperf3 as the oracle

// iperf3 -J reports a failed test with exit status 0 and an "error" key.
double iperf3_gbps(const CommandResult& r) {
    auto j = parse_json(r.out);
    if (j.contains("error")) {
        ADD_FAILURE() << "iperf3: " << j.at("error");
        return 0;
    }
    return j.at("end").at("sum_received").at("bits_per_second").get<double>() / 1e9;
}

TEST_F(Probe, ThroughputAgreesWithIperf3sOwnClient) {
    if (!have_program("iperf3")) GTEST_SKIP() << "needs iperf3";
    direct_topology();
    if (HasFatalFailure()) return;
    // A 1 Gbit/s link each way (tbf on both ends): the figure is the
    // path's, not whatever CPU this shared machine has to spare at that
    // moment. How fast the client is when the CPU is the limit, against
    // iperf3's own, is the benchmark's question (bench/, "probe").
    for (int i : {0, 1})
        in(i, std::string("tc qdisc add dev ") + (i == 0 ? "a0" : "b0") +
                  " root tbf rate 1gbit burst 512k latency 50ms");
    auto server = iperf_server(1);
    ASSERT_TRUE(server);
    struct Case {
        std::vector<std::string> ours;
        std::vector<std::string> oracle;
        unsigned streams;
        bool reverse;
    };
    const std::vector<Case> cases = {
        {{}, {}, 1, false},
        {{"--reverse", "--streams", "2"}, {"-R", "-P", "2"}, 2, true},
    };
    for (const auto& c : cases) {
        // Alternating 2-second runs, the best of each side so far compared
        // after every pair: the machine is shared, and load only ever lowers
        // a figure, so the best runs converge on what each client can do.
        // A client 10% slower than iperf3's own stays outside the band
        // however many pairs run; at most 6.
        double ours = 0, theirs = 0;
        for (int rep = 0; rep < 6; ++rep) {
            std::vector<std::string> a = {"10.52.0.2", "--json", "--throughput", "--time", "2"};
            a.insert(a.end(), c.ours.begin(), c.ours.end());
            wait_server_idle(1);
            auto t = ctl(0, a);
            ASSERT_EQ(t.r.status, 0) << t.r.out << t.r.err;
            auto j = parse_json(t.r.out);
            const auto& tp = j.at("throughput");
            EXPECT_EQ(tp.at("streams"), c.streams);
            EXPECT_EQ(tp.at("reverse"), c.reverse);
            EXPECT_TRUE(tp.at("retransmits").is_number_unsigned()) << tp.dump();
            EXPECT_GT(tp.at("bytes").get<uint64_t>(), 0U);
            EXPECT_NEAR(tp.at("seconds").get<double>(), 2.0, 0.5);
            EXPECT_LT(tp.at("gbps").get<double>(), 1.1) << "the link is shaped to 1 Gbit/s";
            ours = std::max(ours, tp.at("gbps").get<double>());

            std::vector<std::string> o = {"iperf3", "-c", "10.52.0.2", "-t", "2", "-J"};
            o.insert(o.end(), c.oracle.begin(), c.oracle.end());
            wait_server_idle(1);
            auto ir = ns(0).exec_argv(o, 30000);
            ASSERT_EQ(ir.status, 0) << ir.out << ir.err;
            theirs = std::max(theirs, iperf3_gbps(ir));
            if (rep >= 1 && std::abs(ours / theirs - 1.0) <= 0.10) break;
        }
        ASSERT_GT(theirs, 0);
        EXPECT_NEAR(ours / theirs, 1.0, 0.10) << "nictune " << ours << " Gbit/s, iperf3 " << theirs
                                              << " Gbit/s" << (c.reverse ? " (reverse)" : "");
    }
}

// ---- failures: a clear error naming the peer, in bounded time

TEST_F(Probe, AnUnreachablePeerIsAnErrorWithinTheTimeout) {
    direct_topology();
    if (HasFatalFailure()) return;
    // On the link, but nobody has the address.
    auto t = ctl(0, {"10.52.0.99", "--count", "5", "--timeout", "1"});
    EXPECT_EQ(t.r.status, 5) << t.r.out << t.r.err;
    EXPECT_NE(t.r.err.find("peer 10.52.0.99: no answer to 5 echo requests"), std::string::npos)
        << t.r.err;
    EXPECT_TRUE(t.r.out.empty()) << t.r.out;
    EXPECT_LT(t.seconds, 5.0);
    // No route at all.
    t = ctl(0, {"192.0.2.1", "--timeout", "1"});
    EXPECT_EQ(t.r.status, 5) << t.r.err;
    EXPECT_NE(t.r.err.find("peer 192.0.2.1: no route to it"), std::string::npos) << t.r.err;
    EXPECT_LT(t.seconds, 3.0);
}

TEST_F(Probe, NoIperf3ServerIsAnErrorNamingThePort) {
    direct_topology();
    if (HasFatalFailure()) return;
    auto t = ctl(0, {"10.52.0.2", "--throughput", "--port", "5299", "--timeout", "1"});
    EXPECT_EQ(t.r.status, 5) << t.r.out << t.r.err;
    EXPECT_NE(t.r.err.find("peer 10.52.0.2 port 5299"), std::string::npos) << t.r.err;
    EXPECT_NE(t.r.err.find("connection refused"), std::string::npos) << t.r.err;
    EXPECT_LT(t.seconds, 5.0);
}

TEST_F(Probe, ABusyIperf3ServerIsAnError) {
    if (!have_program("iperf3") || !have_program("ss")) GTEST_SKIP() << "needs iperf3 and ss";
    direct_topology();
    if (HasFatalFailure()) return;
    auto server = iperf_server(1);
    ASSERT_TRUE(server);
    std::string why;
    Child::Options o;
    o.stderr_log = dir() / "other-client.log";
    auto other = Child::start(
        {"ip", "netns", "exec", ns(0).name(), "iperf3", "-c", "10.52.0.2", "-t", "30"}, o, &why);
    ASSERT_TRUE(other) << why;
    // The other client's test is running once its stream is connected.
    bool running = false;
    for (int i = 0; i < 100 && !running; ++i) {
        running = established(1, 5201) >= 2;
        if (!running) std::this_thread::sleep_for(50ms);
    }
    ASSERT_TRUE(running);
    auto t = ctl(0, {"10.52.0.2", "--throughput", "--timeout", "1"});
    EXPECT_EQ(t.r.status, 5) << t.r.out << t.r.err;
    EXPECT_NE(t.r.err.find("peer 10.52.0.2 port 5201: the iperf3 server is busy"),
              std::string::npos)
        << t.r.err;
    EXPECT_LT(t.seconds, 5.0);
    other->stop();
}

// Bytes the iperf3 server's established connections (port 5201) in namespace
// b have sent and received, from ss's TCP info (the test's oracle).
std::uint64_t server_bytes_moved(const TestNetns& b) {
    const auto r = b.exec("ss -Htni state established '( sport = :5201 )'");
    std::uint64_t total = 0;
    for (const char* key : {"bytes_sent:", "bytes_received:"}) {
        for (auto at = r.out.find(key); at != std::string::npos; at = r.out.find(key, at + 1))
            total += std::strtoull(r.out.c_str() + at + std::strlen(key), nullptr, 10);
    }
    return total;
}

// nictunectl probe --throughput (with --reverse: the server sends) started
// in the background; `disturb` runs once the test's data flows.
Timed probe_disturbed(const TestNetns& a, const TestNetns& b, const std::function<void()>& disturb,
                      const fs::path& log, bool reverse = false) {
    Child::Options o;
    o.stderr_log = log;
    std::string why;
    std::vector<std::string> argv{"ip",     "netns", "exec",      a.name(),
                                  kCtl,     "probe", "10.52.0.2", "--throughput",
                                  "--time", "20",    "--timeout", "1"};
    if (reverse) argv.push_back("--reverse");
    auto c = Child::start(argv, o, &why);
    Timed t;
    EXPECT_TRUE(c) << why;
    if (!c) return t;
    // Both connections up is not enough: until the server has moved data
    // the test has not started, and a disturbance then is a start-of-test
    // failure. Wait until the server's sockets have moved 1 MB.
    bool flowing = false;
    for (int i = 0; i < 200 && !flowing; ++i) {
        flowing = server_bytes_moved(b) >= (1u << 20);
        if (!flowing) std::this_thread::sleep_for(25ms);
    }
    EXPECT_TRUE(flowing) << "the test never started";
    const auto disturbed = Clock::now();
    disturb();
    t.r.status = c->wait(30s);
    t.seconds = std::chrono::duration<double>(Clock::now() - disturbed).count();
    t.r.out = c->read_available_stdout();
    std::ifstream in(log);
    t.r.err.assign(std::istreambuf_iterator<char>(in), {});
    return t;
}

TEST_F(Probe, AServerKilledDuringTheTestIsAnError) {
    if (!have_program("iperf3") || !have_program("ss")) GTEST_SKIP() << "needs iperf3 and ss";
    direct_topology();
    if (HasFatalFailure()) return;
    auto server = iperf_server(1);
    ASSERT_TRUE(server);
    auto t = probe_disturbed(
        ns(0), ns(1), [&] { server->kill_hard(); }, dir() / "killed.log");
    EXPECT_EQ(t.r.status, 5) << t.r.out << t.r.err;
    EXPECT_NE(t.r.err.find("peer 10.52.0.2 port 5201"), std::string::npos) << t.r.err;
    EXPECT_NE(t.r.err.find("during the test"), std::string::npos) << t.r.err;
    EXPECT_LT(t.seconds, 5.0) << "a 20 s test must end once its server is gone";
}

TEST_F(Probe, AServerThatGoesSilentDuringTheTestIsAnError) {
    if (!have_program("iperf3") || !have_program("ss")) GTEST_SKIP() << "needs iperf3 and ss";
    direct_topology();
    if (HasFatalFailure()) return;
    auto server = iperf_server(1);
    ASSERT_TRUE(server);
    const pid_t pid = server->pid();
    auto t = probe_disturbed(
        ns(0), ns(1), [&] { kill(pid, SIGSTOP); }, dir() / "stopped.log");
    kill(pid, SIGCONT);
    EXPECT_EQ(t.r.status, 5) << t.r.out << t.r.err;
    EXPECT_NE(t.r.err.find("peer 10.52.0.2 port 5201"), std::string::npos) << t.r.err;
    EXPECT_NE(t.r.err.find("took no data"), std::string::npos) << t.r.err;
    // The stopped server's socket buffers take a few MB first; then the
    // 1 s progress limit.
    EXPECT_LT(t.seconds, 8.0);
}

TEST_F(Probe, AServerThatGoesSilentWhileItSendsIsAnError) {
    if (!have_program("iperf3") || !have_program("ss")) GTEST_SKIP() << "needs iperf3 and ss";
    direct_topology();
    if (HasFatalFailure()) return;
    auto server = iperf_server(1);
    ASSERT_TRUE(server);
    const pid_t pid = server->pid();
    auto t = probe_disturbed(
        ns(0), ns(1), [&] { kill(pid, SIGSTOP); }, dir() / "stopped-reverse.log", true);
    kill(pid, SIGCONT);
    EXPECT_EQ(t.r.status, 5) << t.r.out << t.r.err;
    EXPECT_NE(t.r.err.find("peer 10.52.0.2 port 5201"), std::string::npos) << t.r.err;
    EXPECT_NE(t.r.err.find("no data from the iperf3 server"), std::string::npos) << t.r.err;
    // What was in flight is read at once; then the 1 s progress limit.
    EXPECT_LT(t.seconds, 5.0);
}

// Runs nictunectl in namespace i with its own /etc/hosts, resolv.conf (a
// name server on the namespace's loopback, where nothing listens: every
// DNS query is refused at once) and nsswitch.conf, bind-mounted in the
// private mount namespace of `ip netns exec`.
Timed with_private_resolver(const TestNetns& ns, const fs::path& dir, const std::string& hosts,
                            const std::vector<std::string>& args) {
    std::ofstream(dir / "hosts") << "127.0.0.1 localhost\n" << hosts;
    std::ofstream(dir / "resolv.conf") << "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n";
    std::ofstream(dir / "nsswitch.conf") << "hosts: files dns\n";
    std::string script;
    for (const char* f : {"hosts", "resolv.conf", "nsswitch.conf"})
        script += "mount --bind " + (dir / f).string() + " \"$(readlink -f /etc/" + f + ")\" && ";
    script += "exec " + kCtl + " probe";
    for (const auto& a : args)
        script += " '" + a + "'";
    const auto t0 = Clock::now();
    Timed t;
    t.r = ns.exec(script, 60000);
    t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return t;
}

TEST_F(Probe, NamesResolveOrFailClearly) {
    direct_topology();
    if (HasFatalFailure()) return;
    auto t = with_private_resolver(ns(0), dir(), "10.52.0.2 peer-b\n",
                                   {"peer-b", "--json", "--timeout", "1"});
    ASSERT_EQ(t.r.status, 0) << t.r.out << t.r.err;
    auto j = parse_json(t.r.out);
    EXPECT_EQ(j.at("peer"), "peer-b");
    EXPECT_EQ(j.at("address"), "10.52.0.2");

    t = with_private_resolver(ns(0), dir(), "", {"no-such-peer.invalid", "--timeout", "1"});
    EXPECT_EQ(t.r.status, 2) << t.r.out << t.r.err;
    EXPECT_NE(t.r.err.find("peer 'no-such-peer.invalid'"), std::string::npos) << t.r.err;
    EXPECT_LT(t.seconds, 5.0);
}

TEST_F(Probe, LinkLocalPeersNeedTheirInterface) {
    direct_topology();
    if (HasFatalFailure()) return;
    auto t = ctl(0, {"fe80::b2"});
    EXPECT_EQ(t.r.status, 2) << t.r.err;
    EXPECT_NE(t.r.err.find("peer 'fe80::b2': a link-local address needs an interface"),
              std::string::npos)
        << t.r.err;
    EXPECT_LT(t.seconds, 2.0);

    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"fe80::b2", "--interface", "a0", "--json"},
          std::vector<std::string>{"fe80::b2%a0", "--json"}}) {
        t = ctl(0, args);
        ASSERT_EQ(t.r.status, 0) << t.r.out << t.r.err;
        auto j = parse_json(t.r.out);
        EXPECT_EQ(j.at("address"), "fe80::b2%a0");
        EXPECT_EQ(j.at("interface").at("name"), "a0");
        EXPECT_EQ(j.at("echo").at("received"), 20);
    }

    t = ctl(0, {"10.52.0.2", "--interface", "nope0"});
    EXPECT_EQ(t.r.status, 2);
    EXPECT_NE(t.r.err.find("interface 'nope0': no such interface"), std::string::npos) << t.r.err;
    t = ctl(0, {"10.52.0.2", "--reverse"});
    EXPECT_EQ(t.r.status, 2) << "--reverse needs --throughput";
}

TEST_F(Probe, UsesAnUnprivilegedPingSocketOrSaysWhatIsMissing) {
    if (!have_program("setpriv")) GTEST_SKIP() << "needs setpriv (util-linux)";
    direct_topology();
    if (HasFatalFailure()) return;
    const std::string nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    // A new namespace allows no group ping sockets ("1 0"); nobody has no
    // CAP_NET_RAW either.
    in(0, "sysctl -qw net.ipv4.ping_group_range='1 0'");
    auto r = ns(0).exec(nobody + kCtl + " probe 10.52.0.2 --timeout 1");
    EXPECT_EQ(r.status, 5) << r.out << r.err;
    EXPECT_NE(r.err.find("peer 10.52.0.2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("CAP_NET_RAW"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("ping_group_range"), std::string::npos) << r.err;

    in(0, "sysctl -qw net.ipv4.ping_group_range='0 2147483647'");
    for (const char* peer : {"10.52.0.2", "fd52::2"}) {
        r = ns(0).exec(nobody + kCtl + " probe " + peer + " --json --timeout 1");
        ASSERT_EQ(r.status, 0) << peer << r.out << r.err;
        auto j = parse_json(r.out);
        EXPECT_EQ(j.at("icmp_socket"), "ping");
        EXPECT_EQ(j.at("path_mtu"), 1500);
        EXPECT_EQ(j.at("echo").at("received"), 20);
    }
    // Root without the sysctl: a raw socket.
    in(0, "sysctl -qw net.ipv4.ping_group_range='1 0'");
    auto t = ctl(0, {"10.52.0.2", "--json"});
    ASSERT_EQ(t.r.status, 0) << t.r.err;
    EXPECT_EQ(parse_json(t.r.out).at("icmp_socket"), "raw");
}

}  // namespace
}  // namespace nictune::test
