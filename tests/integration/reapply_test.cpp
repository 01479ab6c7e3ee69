// nictuned puts the queue placement ([rps], [xps]) back when the kernel
// rebuilds an interface's queues or the link comes up again, and reports a
// mask another tool wrote as drift. A veth pair with four RX and four TX
// queues in a namespace the test creates, the real nictuned in it, and
// sysfs read by `cat` there as the oracle. veth implements ethtool -L
// (veth_set_channels, no XDP needed): `rx 2` frees rx-2 and rx-3, `rx 4`
// re-creates them with rps_cpus 0 and rps_flow_cnt 0, and the kernel sends
// ETHTOOL_MSG_CHANNELS_NTF to the monitor group.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "daemon_harness.hpp"
#include "util/strings.hpp"

namespace nictune::test {
namespace {

// CPUs 0-1 (mask 3) on every RX queue, CPU 1 (mask 2) on every TX queue;
// the MTU is there to show that a placement re-apply leaves the rest of the
// profile alone and that rollback still restores all of it.
const char* kSteer =
    "[link]\nmtu = 9000\n[rps]\ncpus = \"0-1\"\nflow_cnt = 256\n[xps]\ncpus = \"1\"\n";

class Reapply : public ::testing::Test {
  protected:
    void start(bool enforce) {
        h_ = std::make_unique<DaemonHarness>(
            std::map<std::string, std::string>{{"steer", kSteer}},
            std::string("[[bind]]\nprofile = \"steer\"\ninterface = \"rq0\"\nenforce = ") +
                (enforce ? "true" : "false") + "\n",
            &skip_);
        if (!skip_.empty()) GTEST_SKIP() << skip_;
        ASSERT_TRUE(h_->ok());
        // node_exporter's textfile directory: what the timer finds shows
        // there too.
        std::filesystem::create_directory(h_->dir() / "textfile");
        h_->write("nictune.toml", "[daemon]\nmetrics_dir = \"" + (h_->dir() / "textfile").string() +
                                      "\"\nplacement_check_interval = 1\n[[bind]]\nprofile = "
                                      "\"steer\"\ninterface = \"rq0\"\nenforce = " +
                                      (enforce ? "true" : "false") + "\n");
        ASSERT_EQ(h_->ns()
                      .exec("ip link add name rq0 numrxqueues 4 numtxqueues 4 type veth peer name "
                            "rp0 numrxqueues 4 numtxqueues 4 && ip link set rq0 up && ip link set "
                            "rp0 up")
                      .status,
                  0);
        ASSERT_TRUE(h_->start_daemon());
        ASSERT_TRUE(eventually([&] { return placed(4, 4); })) << queues() << h_->log();
    }

    std::string sysfs(const std::string& rel) {
        return std::string(trim(h_->ns().exec("cat /sys/class/net/rq0/queues/" + rel).out));
    }
    std::string queues() {
        return h_->ns()
            .exec(
                "cd /sys/class/net/rq0/queues && for f in rx-*/rps_cpus rx-*/rps_flow_cnt "
                "tx-*/xps_cpus; do echo \"$f $(cat $f)\"; done")
            .out;
    }
    // The profile's placement on rx-0..rx-(rx-1) and tx-0..tx-(tx-1).
    bool placed(int rx, int tx) {
        for (int q = 0; q < rx; ++q) {
            const std::string d = "rx-" + std::to_string(q);
            if (sysfs(d + "/rps_cpus") != "3" || sysfs(d + "/rps_flow_cnt") != "256") return false;
        }
        for (int q = 0; q < tx; ++q)
            if (sysfs("tx-" + std::to_string(q) + "/xps_cpus") != "2") return false;
        return true;
    }
    bool logged(const std::string& text) { return h_->log().find(text) != std::string::npos; }
    std::string metrics() {
        std::ifstream in(h_->dir() / "textfile" / "nictune.prom");
        return std::string(std::istreambuf_iterator<char>(in), {});
    }

    std::string skip_;
    std::unique_ptr<DaemonHarness> h_;
};

// Without enforce: the queues the kernel re-created come back placed (a
// rebuild is not someone's choice), a hand-written mask is reported and
// left alone, and link up after down puts the profile's placement back.
TEST_F(Reapply, RebuiltQueuesArePlacedAgainWithoutEnforce) {
    start(false);
    if (IsSkipped() || HasFatalFailure()) return;

    ASSERT_EQ(h_->ns().exec("ethtool -L rq0 rx 2 && ethtool -L rq0 rx 4").status, 0);
    EXPECT_TRUE(eventually([&] { return placed(4, 4); })) << queues() << h_->log();
    EXPECT_TRUE(eventually([&] {
        return logged(
            "re-applied the queue placement of profile steer "
            "(channels changed)");
    })) << h_->log();
    ASSERT_EQ(h_->ns().exec("ethtool -L rq0 tx 1 && ethtool -L rq0 tx 4").status, 0);
    EXPECT_TRUE(eventually([&] { return placed(4, 4); })) << queues() << h_->log();
    // A rebuild is not drift, and the queues that were gone for a while
    // neither.
    EXPECT_FALSE(logged("drifted")) << h_->log();

    // The metrics written after those events, and quiet since.
    const std::string rx1 =
        "nictune_setting_drifted{interface=\"rq0\",profile=\"steer\",setting=\"rps.rx-1.cpus\"} ";
    EXPECT_TRUE(eventually([&] { return metrics().find(rx1 + "0") != std::string::npos; }))
        << metrics();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));

    // Another tool moves rx-1 to CPU 0: reported (the timer's check), not
    // repaired.
    ASSERT_EQ(h_->ns().exec("echo 1 > /sys/class/net/rq0/queues/rx-1/rps_cpus").status, 0);
    EXPECT_TRUE(eventually([&] { return logged("rps.rx-1.cpus drifted: 0, expected 0-1"); }))
        << h_->log();
    EXPECT_FALSE(logged("rps.rx-1.cpus drifted: 0, expected 0-1; re-applying")) << h_->log();
    // In the metrics within seconds (1 s after the report; no D-Bus call meanwhile, which would be
    // an event), not at the next minute's refresh: the timer's finding is an event of its own.
    EXPECT_TRUE(eventually([&] { return metrics().find(rx1 + "1") != std::string::npos; },
                           std::chrono::milliseconds(5000)))
        << metrics();
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // two more checks
    EXPECT_EQ(sysfs("rx-1/rps_cpus"), "1");
    EXPECT_EQ(count_of(h_->log(), "rps.rx-1.cpus drifted"), 1) << h_->log();  // said once
    auto s = h_->status();
    ASSERT_TRUE(s.contains("interfaces")) << s.dump();
    EXPECT_EQ(s.at("interfaces").at(0).at("drifted"), nlohmann::json::array({"rps.rx-1.cpus"}))
        << s.dump();

    // Link down and up: the driver would request its IRQs again; the
    // placement is checked and put back.
    ASSERT_EQ(h_->ns().exec("ip link set rq0 down && ip link set rq0 up").status, 0);
    EXPECT_TRUE(eventually([&] { return placed(4, 4); })) << queues() << h_->log();
    EXPECT_TRUE(eventually([&] {
        return logged("rps.rx-1.cpus is 0 after link up, expected 0-1; re-applying") &&
               logged("re-applied the queue placement of profile steer (link up)");
    })) << h_->log();
    // Once more, with nothing to change: checked and said so.
    ASSERT_EQ(h_->ns().exec("ip link set rq0 down && ip link set rq0 up").status, 0);
    EXPECT_TRUE(eventually([&] {
        return logged("link up: the queue placement of profile steer is in place");
    })) << h_->log();
    EXPECT_TRUE(placed(4, 4)) << queues();

    // The MTU was applied once, at boot: the re-applies did not touch it.
    EXPECT_EQ(count_of(h_->log(), "applied profile steer"), 1) << h_->log();
    EXPECT_EQ(h_->links().at("rq0").at("mtu"), 9000);
    // The originals are still the ones before the first apply: rollback
    // restores the MTU and empties every mask again (veth's queues start
    // at 0), although the last transactions placed queues only.
    auto rb = h_->ctl({"rollback", "rq0"});
    EXPECT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(h_->links().at("rq0").at("mtu"), 1500);
    for (int q = 0; q < 4; ++q) {
        EXPECT_EQ(sysfs("rx-" + std::to_string(q) + "/rps_cpus"), "0") << queues();
        EXPECT_EQ(sysfs("tx-" + std::to_string(q) + "/xps_cpus"), "0") << queues();
    }
    EXPECT_TRUE(h_->daemon().running()) << h_->log();
}

// With enforce: a hand-written mask is drift, found by the timer's check
// (sysfs sends no notification) and repaired.
TEST_F(Reapply, AMaskWrittenByHandIsDriftAndRepairedWhenEnforced) {
    start(true);
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(h_->ns()
                  .exec("echo 1 > /sys/class/net/rq0/queues/rx-1/rps_cpus && echo 1 > "
                        "/sys/class/net/rq0/queues/tx-3/xps_cpus")
                  .status,
              0);
    EXPECT_TRUE(eventually([&] {
        return logged("rps.rx-1.cpus drifted: 0, expected 0-1; re-applying") &&
               logged("xps.tx-3.cpus drifted: 0, expected 1; re-applying");
    })) << h_->log();
    EXPECT_TRUE(eventually([&] { return placed(4, 4); })) << queues() << h_->log();
    EXPECT_TRUE(h_->daemon().running()) << h_->log();
}

// A driver reload is a new device (a new ifindex) under the same name: the
// hotplug path applies the whole profile, placement included.
TEST_F(Reapply, AReloadedDeviceGetsItsPlacementAgain) {
    start(false);
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(h_->ns()
                  .exec("ip link del rq0 && ip link add name rq0 numrxqueues 4 numtxqueues 4 type "
                        "veth peer name rp0 numrxqueues 4 numtxqueues 4")
                  .status,
              0);
    EXPECT_TRUE(eventually([&] { return count_of(h_->log(), "applied profile steer") >= 2; }))
        << h_->log();
    EXPECT_TRUE(eventually([&] { return placed(4, 4); })) << queues() << h_->log();
    EXPECT_TRUE(logged("(hotplug)")) << h_->log();
}

}  // namespace
}  // namespace nictune::test
