// [rps] and [xps] on veth pairs with four queues in a namespace the test
// creates, through `nictunectl --direct` run inside it (so that /sys is the
// namespace's). sysfs read by `cat` there is the oracle. The global
// net.core.rps_sock_flow_entries exists only in the initial namespace: here
// the plan reports it unsupported and the host's value must not move (its
// write path is tested over a fake in tests/unit/queues_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "support/ctl_netns.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"
#include "util/strings.hpp"

namespace nictune::test {
namespace {

class Steering : public CtlNetnsTest {
  protected:
    void SetUp() override {
        make(
            "ip link add name sq0 numrxqueues 4 numtxqueues 4 type veth peer name sq1 "
            "numrxqueues 4 numtxqueues 4 && ip link set sq0 up && ip link set sq1 up",
            "steer");
    }
    // Every queue file of sq0, as the kernel shows it in the namespace.
    std::string queues() {
        return ns_
            ->exec(
                "cd /sys/class/net/sq0/queues && for f in rx-*/rps_cpus rx-*/rps_flow_cnt "
                "tx-*/xps_cpus; do echo \"$f $(cat $f)\"; done")
            .out;
    }
    std::string sysfs(const std::string& rel) {
        return std::string(trim(ns_->exec("cat /sys/class/net/sq0/queues/" + rel).out));
    }
};

TEST_F(Steering, AppliesRpsAndXpsToEveryQueueAndRollsBackByteForByte) {
    // Originals that differ per queue, so that "restored" means each its own.
    ASSERT_EQ(ns_->exec("echo 1 > /sys/class/net/sq0/queues/rx-2/rps_cpus && "
                        "echo 1 > /sys/class/net/sq0/queues/tx-1/xps_cpus")
                  .status,
              0);
    const std::string before = queues();
    const std::string host_flow = run({"cat", "/proc/sys/net/core/rps_sock_flow_entries"}).out;
    profile("steer", "[rps]\ncpus = \"0-1\"\nflow_cnt = 1024\n[xps]\ncpus = \"1\"\n");

    auto apply = ctl({"--direct", "apply", "steer", "sq0", "--json"});
    ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
    auto j = parse_json(apply.out);
    EXPECT_EQ(j.at("result"), "applied");
    for (int q = 0; q < 4; ++q) {
        const std::string rx = "rx-" + std::to_string(q), tx = "tx-" + std::to_string(q);
        EXPECT_EQ(sysfs(rx + "/rps_cpus").back(), '3') << rx;  // mask of CPUs 0-1
        EXPECT_EQ(sysfs(rx + "/rps_flow_cnt"), "1024") << rx;
        EXPECT_EQ(sysfs(tx + "/xps_cpus").back(), '2') << tx;  // mask of CPU 1
    }
    EXPECT_EQ(run({"cat", "/proc/sys/net/core/rps_sock_flow_entries"}).out, host_flow)
        << "the host's global sysctl must not change";
    bool sysctl_unsupported = false;
    for (const auto& s : j.at("system"))
        if (s.at("key") == "sysctl.net.core.rps_sock_flow_entries")
            sysctl_unsupported = s.at("outcome") == "unsupported";
    EXPECT_TRUE(sysctl_unsupported) << j.at("system").dump();

    // Audit reads what sysfs holds, in the profile's section names.
    auto audit = ctl({"audit", "sq0", "--json"});
    ASSERT_EQ(audit.status == 0 || audit.status == 1, true) << audit.err;
    auto a = parse_json(audit.out).at("interfaces").at(0);
    EXPECT_EQ(a.at("rps").at("rx-3").at("cpus"), "0-1");
    EXPECT_EQ(a.at("rps").at("rx-3").at("flow_cnt"), 1024);
    EXPECT_EQ(a.at("xps").at("tx-0").at("cpus"), "1");
    EXPECT_TRUE(a.at("private_flags").is_null()) << "veth has no private flags: unsupported";

    auto rb = ctl({"--direct", "rollback", "sq0"});
    ASSERT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(queues(), before);
}

TEST_F(Steering, XpsPolicyOffClearsEveryTxQueue) {
    ASSERT_EQ(ns_->exec("for q in 0 1 2 3; do echo 1 > /sys/class/net/sq0/queues/tx-$q/xps_cpus; "
                        "done")
                  .status,
              0);
    const std::string before = queues();
    profile("noxps", "[xps]\npolicy = \"off\"\n");
    auto apply = ctl({"--direct", "apply", "noxps", "sq0"});
    ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
    for (int q = 0; q < 4; ++q) {
        auto mask = sysfs("tx-" + std::to_string(q) + "/xps_cpus");
        EXPECT_EQ(mask.find_first_not_of("0,"), std::string::npos) << mask;
    }
    ASSERT_EQ(ctl({"--direct", "rollback", "sq0"}).status, 0);
    EXPECT_EQ(queues(), before);
}

// A CPU the machine does not have: the kernel refuses the mask, and what
// was applied before it (the MTU, the first queues) is undone.
TEST_F(Steering, ACpuTheKernelRefusesRollsBackTheWholeTransaction) {
    const std::string before = queues();
    const std::string mtu = ns_->exec("cat /sys/class/net/sq0/mtu").out;
    profile("bad", "[link]\nmtu = 9000\n[rps]\ncpus = \"0,4000\"\n");
    auto apply = ctl({"--direct", "apply", "bad", "sq0"});
    EXPECT_NE(apply.status, 0) << apply.out;
    EXPECT_NE(apply.out.find("rps.rx-0.cpus"), std::string::npos) << apply.out;
    EXPECT_EQ(ns_->exec("cat /sys/class/net/sq0/mtu").out, mtu);
    EXPECT_EQ(queues(), before);
}

// [irq] on a device without queue IRQs (veth has no PCI function and no MSI
// vectors): audit says irq null, the plan says unsupported, nothing changes
// and the rest of the profile still applies.
TEST_F(Steering, IrqOnVethIsUnsupportedAndAuditSaysNull) {
    auto audit = ctl({"--direct", "audit", "sq0", "--json"});
    auto a = parse_json(audit.out);
    ASSERT_TRUE(a.contains("interfaces")) << audit.out << audit.err;
    EXPECT_TRUE(a.at("interfaces").at(0).at("irq").is_null()) << audit.out;
    profile("irq", "[irq]\npolicy = \"local\"\n[xps]\ncpus = \"1\"\n");
    auto apply = ctl({"--direct", "apply", "irq", "sq0", "--json"});
    ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
    auto j = parse_json(apply.out);
    EXPECT_EQ(j.at("result"), "applied");
    bool irq_seen = false;
    for (const auto& st : j.at("interfaces").at(0).at("steps")) {
        if (st.at("key") != "irq.queues") continue;
        irq_seen = true;
        EXPECT_EQ(st.at("outcome"), "unsupported") << st.dump();
        EXPECT_NE(st.at("note").get<std::string>().find("no queue IRQs"), std::string::npos);
    }
    EXPECT_TRUE(irq_seen) << apply.out;
    EXPECT_EQ(sysfs("tx-0/xps_cpus").back(), '2');
}

TEST_F(Steering, AnAuditOfEveryInterfaceReadsWhatANamedAuditReads) {
    // Forty interfaces besides sq0 and sq1: more than the per-device limit
    // (32), so `audit --all` reads with dumps (private flags too) and each
    // interface's sysfs directory opened once, `audit sq0` one by one.
    std::string links = "true";
    for (int i = 0; i < 20; ++i)
        links += " && ip link add name sm" + std::to_string(i) + "a type veth peer name sm" +
                 std::to_string(i) + "b";
    ASSERT_EQ(ns_->exec(links + " && echo 1 > /sys/class/net/sq0/queues/rx-2/rps_cpus && "
                                "echo 16 > /sys/class/net/sq0/queues/rx-1/rps_flow_cnt && "
                                "echo 2 > /sys/class/net/sq0/queues/tx-3/xps_cpus")
                  .status,
              0);
    auto named = ctl({"audit", "sq0", "--json", "--no-health"});
    auto all = ctl({"audit", "--all", "--json", "--no-health"});
    ASSERT_TRUE(named.status == 0 || named.status == 1) << named.err;
    ASSERT_TRUE(all.status == 0 || all.status == 1) << all.err;
    const auto one = parse_json(named.out).at("interfaces").at(0);
    const auto every = parse_json(all.out);
    nlohmann::json from_all;
    std::size_t count = 0;
    for (const auto& j : every.at("interfaces")) {
        ++count;
        if (j.at("name") == "sq0") from_all = j;
        // Nothing unreadable for any veth (a flag, queue or IRQ read that
        // failed would be a "could not read" warning).
        for (const auto& f : j.at("findings"))
            EXPECT_EQ(f.at("message").get<std::string>().find("could not read"), std::string::npos)
                << j.at("name") << ": " << f.dump();
        EXPECT_TRUE(j.at("private_flags").is_null()) << j.at("name");
    }
    EXPECT_EQ(count, 43U) << "lo, sq0, sq1 and 40 more";
    ASSERT_FALSE(from_all.is_null());
    for (const char* key : {"rps", "xps", "private_flags", "irq", "rss"})
        EXPECT_EQ(from_all.at(key), one.at(key)) << key;
    EXPECT_EQ(one.at("rps").at("rx-2").at("cpus"), "0");
    EXPECT_EQ(one.at("rps").at("rx-1").at("flow_cnt"), 16);
    EXPECT_EQ(one.at("xps").at("tx-3").at("cpus"), "1");
    EXPECT_EQ(one.at("rps").size(), 4U);
    EXPECT_EQ(one.at("xps").size(), 4U);
}

}  // namespace
}  // namespace nictune::test
