// One state, one lock (issue 13): nictunectl --direct and nictuned take the
// state directory from the same place (state_dir_for: --state-dir, else
// nictune.toml's [daemon] state_dir), so a transaction of one blocks the
// other on the same NIC, and crash recovery finds the other's journal.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>

#include "integration/daemon_harness.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The state of a process ('T': stopped), from /proc/PID/stat.
char proc_state(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string all((std::istreambuf_iterator<char>(in)), {});
    const auto close = all.rfind(')');
    return close == std::string::npos || close + 2 >= all.size() ? '?' : all[close + 2];
}

uint64_t mtu_of(const TestNetns& ns, const std::string& dev) {
    auto r = ns.exec("ip -j link show " + dev);
    if (r.status != 0) return 0;
    return parse_json(r.out).at(0).at("mtu").get<uint64_t>();
}

TEST(StateDir, DirectModeAndTheDaemonShareTheConfiguredStateDirectory) {
    std::string skip;
    // Two changes: the link, then the features (a veth's GRO is off; the
    // direct apply is stopped between them, with the MTU already changed).
    DaemonHarness h({{"two", "[link]\nmtu = 9000\n[features]\ngro = true\n"},
                     {"small", "[link]\nmtu = 1400\n"}},
                    "", &skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    ASSERT_TRUE(h.ok());
    const fs::path shared = h.dir() / "shared-state";
    h.write("nictune.toml", "[daemon]\nstate_dir = \"" + shared.string() + "\"\n");
    h.without_state_dir_option();
    ASSERT_EQ(h.ns().exec("ip link add name sd0 type veth peer name sd1").status, 0);
    ASSERT_TRUE(h.start_daemon());
    EXPECT_EQ(h.status().value("state_dir", ""), shared.string());

    // nictunectl --direct with the same nictune.toml, stopped (SIGSTOP, the
    // test pause point) just before its second change.
    Child::Options o;
    o.env = {"NICTUNE_TEST_PAUSE_AT_CHANGE=2"};
    std::string why;
    auto direct = Child::start({"ip", "netns", "exec", h.ns().name(), NICTUNECTL_PATH, "--direct",
                                "--config", (h.dir() / "nictune.toml").string(), "--profiles-dir",
                                (h.dir() / "profiles").string(), "apply", "two", "sd0"},
                               o, &why);
    ASSERT_TRUE(direct) << why;
    ASSERT_TRUE(eventually([&] { return proc_state(direct->pid()) == 'T'; }, 20000ms))
        << "the direct apply never reached its pause point (state " << proc_state(direct->pid())
        << ")";
    EXPECT_EQ(mtu_of(h.ns(), "sd0"), 9000U);
    EXPECT_TRUE(fs::exists(shared / "locks" / "sd0.lock"));

    // The daemon cannot run a transaction on that NIC meanwhile.
    auto busy = h.ctl({"apply", "small", "sd0"});
    EXPECT_NE(busy.status, 0) << busy.out;
    EXPECT_NE(busy.err.find("another transaction is running on sd0"), std::string::npos)
        << busy.err << busy.out;
    EXPECT_EQ(mtu_of(h.ns(), "sd0"), 9000U);

    // The direct process dies there; nictuned's next start finds its
    // journal and puts the original MTU back.
    direct->kill_hard();
    h.daemon().stop();
    ASSERT_TRUE(h.start_daemon());
    EXPECT_TRUE(eventually([&] { return mtu_of(h.ns(), "sd0") == 1500; })) << h.log();
    EXPECT_NE(h.log().find("unfinished transaction found"), std::string::npos) << h.log();
}

}  // namespace
}  // namespace nictune::test
