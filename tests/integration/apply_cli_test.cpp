// `nictunectl apply/diff/rollback --direct` against the real kernel, on veth
// pairs in a namespace the test creates. ip, ethtool and sysctl are the
// oracles: after a rollback the devices read back byte for byte as before.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "support/netns.hpp"
#include "support/oracles.hpp"
#include "support/paths.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;

class ApplyCli : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        auto r = ns_->exec(
            "ip link add name nt0 type veth peer name nt1 && ip link set nt0 up && ip link set nt1 "
            "up && "
            "ip link add link nt0 name mv0 type macvlan");
        ASSERT_EQ(r.status, 0) << r.err;
        char tmpl[] = "/tmp/nictune-apply-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        chmod(tmpl, 0755);
        fs::create_directory(dir_ / "profiles");
        chmod((dir_ / "profiles").c_str(), 0755);
        profile("jumbo-lab", R"(
[profile]
description = "jumbo MTU, queues, offloads and sysctls"
[link]
mtu = 9014
txqueuelen = 5000
[channels]
rx = 2
[features]
gro = true
tso = false
[sysctl]
"net.ipv4.tcp_timestamps" = 0
"net.core.somaxconn" = 8192
)");
    }
    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    void profile(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / "profiles" / (name + ".toml")) << text;
    }
    CommandResult ctl(std::vector<std::string> args) {
        std::vector<std::string> argv = {kCtl, "--profiles-dir", (dir_ / "profiles").string(),
                                         "--state-dir", (dir_ / "state").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return ns_->exec_argv(argv, 60000);
    }
    // Everything the tools report about the devices and the sysctls a
    // profile here touches: equal snapshots mean an exact restore.
    std::string snapshot() {
        return ns_
            ->exec(
                "for d in nt0 nt1 mv0; do ip -d link show $d; ethtool -k $d; ethtool -l $d 2>&1; "
                "done; "
                "sysctl -n net.ipv4.tcp_timestamps net.core.somaxconn")
            .out;
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
    fs::path dir_;
};

TEST_F(ApplyCli, AppliesVerifiesAndRollsBackByteForByte) {
    const std::string before = snapshot();
    const std::string host_sysctl =
        run({"sysctl", "-n", "net.ipv4.tcp_timestamps", "net.core.somaxconn"}).out;

    auto diff = ctl({"diff", "jumbo-lab", "nt0"});
    ASSERT_EQ(diff.status, 0) << diff.err;
    EXPECT_NE(diff.out.find("link.mtu"), std::string::npos);
    // veth's channels change with the carrier off and on (veth_set_channels);
    // its MTU has no ndo_change_mtu and changes in place (driver facts).
    EXPECT_NE(diff.out.find("1500 -> 9014\n"), std::string::npos) << diff.out;
    EXPECT_NE(diff.out.find("1 -> 2  resets link"), std::string::npos) << diff.out;
    EXPECT_EQ(snapshot(), before) << "diff changes nothing";

    auto apply = ctl({"--direct", "apply", "jumbo-lab", "nt0", "--json"});
    ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
    auto j = parse_json(apply.out);
    EXPECT_EQ(j.at("result"), "applied");
    for (const auto& s : j.at("interfaces").at(0).at("steps"))
        EXPECT_TRUE(s.at("outcome") == "applied" || s.at("outcome") == "unchanged") << s.dump();

    // The kernel agrees.
    auto ip = parse_json(ns_->exec("ip -j link show nt0").out).at(0);
    EXPECT_EQ(ip.at("mtu"), 9014);
    EXPECT_EQ(ip.at("txqlen"), 5000);
    auto l = parse_ethtool(ns_->exec("ethtool -l nt0").out);
    EXPECT_EQ(ethtool_number(l, "cur.RX"), 2U);
    auto k = parse_json(ns_->exec("ethtool --json -k nt0").out).at(0);
    EXPECT_EQ(k.at("generic-receive-offload").at("active"), true);
    EXPECT_EQ(k.at("tx-tcp-segmentation").at("active"), false);
    EXPECT_EQ(ns_->exec("sysctl -n net.ipv4.tcp_timestamps").out, "0\n");
    EXPECT_EQ(ns_->exec("sysctl -n net.core.somaxconn").out, "8192\n");
    EXPECT_EQ(run({"sysctl", "-n", "net.ipv4.tcp_timestamps", "net.core.somaxconn"}).out,
              host_sysctl)
        << "the host namespace's sysctls must not change";

    // Audit now finds the profile met.
    auto audit = ctl({"audit", "nt0", "--profile", "jumbo-lab"});
    EXPECT_EQ(audit.status, 0) << audit.out;

    // A second apply changes nothing and keeps the first originals.
    auto again = ctl({"--direct", "apply", "jumbo-lab", "nt0"});
    ASSERT_EQ(again.status, 0) << again.out;
    EXPECT_EQ(again.out.find("applied      "), std::string::npos) << again.out;

    // Rollback runs in a new process: the originals come from the state dir.
    auto rb = ctl({"--direct", "rollback", "nt0"});
    ASSERT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(snapshot(), before);
    EXPECT_FALSE(fs::exists(dir_ / "state" / "interfaces" / "nt0.json"));
    auto none = ctl({"--direct", "rollback", "nt0"});
    EXPECT_EQ(none.status, 0);
    EXPECT_NE(none.out.find("nothing to roll back"), std::string::npos);
}

TEST_F(ApplyCli, AKernelRefusalAfterEarlierStepsRollsEverythingBack) {
    // nt0 takes MTU 9000; macvlan mv0 refuses an MTU above its lower
    // device's, so the second interface fails after the first succeeded.
    profile("mtu9000", "[link]\nmtu = 9000\n");
    ASSERT_EQ(ns_->exec("ip link set nt0 mtu 1500").status, 0);
    const std::string before = snapshot();
    auto r = ctl({"--direct", "apply", "mtu9000", "nt1", "mv0", "--json"});
    EXPECT_EQ(r.status, 3) << r.out << r.err;
    auto j = parse_json(r.out);
    EXPECT_EQ(j.at("result"), "rolled_back");
    EXPECT_EQ(j.at("error").at("errno"), 22);
    EXPECT_NE(j.at("error").at("text").get<std::string>().find("mv0: link.mtu=9000: set"),
              std::string::npos)
        << j.at("error").dump();
    // What it is about, as fields (issue 16 §5), also on the failed step.
    EXPECT_EQ(j.at("error").value("interface", ""), "mv0") << j.at("error").dump();
    EXPECT_EQ(j.at("error").value("setting", ""), "link.mtu") << j.at("error").dump();
    ASSERT_FALSE(j.at("rollback").empty());
    for (const auto& x : j.at("rollback"))
        EXPECT_TRUE(x.at("ok").get<bool>()) << x.dump();
    EXPECT_EQ(snapshot(), before);
}

// A floor in the real kernel: tcp_rmem and tcp_wmem are the namespace's
// own. The one above its floor stays (a throughput profile must not shrink
// the host's larger buffers), the one below is raised number by number, and
// the rollback puts it back; sysctl is the oracle.
TEST_F(ApplyCli, ASysctlFloorKeepsALargerValueAndRaisesASmallerOne) {
    const std::string host = run({"sysctl", "-n", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}).out;
    ASSERT_EQ(ns_->exec("sysctl -qw net.ipv4.tcp_rmem='4096 131072 33554432' "
                        "net.ipv4.tcp_wmem='4096 16384 4194304'")
                  .status,
              0);
    const auto values = [&] {
        return ns_->exec("sysctl -n net.ipv4.tcp_rmem net.ipv4.tcp_wmem").out;
    };
    const std::string before = values();
    ASSERT_EQ(before, "4096\t131072\t33554432\n4096\t16384\t4194304\n");
    profile("floors", R"(
[sysctl]
"net.ipv4.tcp_rmem" = { at_least = [4096, 87380, 16777216] }
net.ipv4.tcp_wmem.at_least = [4096, 65536, 16777216]
)");
    // The audit against the profile: a finding for the one below its floor.
    const auto findings = [&] {
        auto a = ctl({"--direct", "audit", "nt0", "--profile", "floors", "--json", "--no-health"});
        EXPECT_TRUE(a.status == 0 || a.status == 1) << a.out << a.err;
        const auto doc = parse_json(a.out);
        std::vector<std::string> keys;
        for (const auto& f : doc.at("interfaces").at(0).at("findings"))
            keys.push_back(f.at("key").get<std::string>());
        return keys;
    };
    EXPECT_EQ(findings(), std::vector<std::string>{"sysctl.net.ipv4.tcp_wmem"});
    auto r = ctl({"--direct", "apply", "floors", "nt0"});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("unchanged    sysctl.net.ipv4.tcp_rmem"), std::string::npos) << r.out;
    EXPECT_EQ(values(), "4096\t131072\t33554432\n4096\t65536\t16777216\n");
    EXPECT_EQ(findings(), std::vector<std::string>{}) << "both floors are met";
    auto back = ctl({"--direct", "rollback", "nt0"});
    ASSERT_EQ(back.status, 0) << back.out << back.err;
    EXPECT_EQ(values(), before);
    EXPECT_EQ(run({"sysctl", "-n", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}).out, host)
        << "the host's own values are not touched";
}

TEST_F(ApplyCli, ARejectedSysctlAfterDeviceStepsRollsBackTheDevices) {
    profile("bad-sysctl",
            "[link]\nmtu = 9000\n[sysctl]\n\"net.ipv4.tcp_timestamps\" = \"banana\"\n");
    const std::string before = snapshot();
    auto r = ctl({"--direct", "apply", "bad-sysctl", "nt0"});
    EXPECT_EQ(r.status, 3) << r.out << r.err;
    EXPECT_NE(r.out.find("sysctl.net.ipv4.tcp_timestamps=\"banana\": set: Invalid argument"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("restored"), std::string::npos);
    EXPECT_EQ(snapshot(), before);
}

TEST_F(ApplyCli, AValueAboveTheDeviceLimitIsRefusedBeforeAnyChange) {
    // veth has as many RX channels as CPUs; ask for more.
    auto l = parse_ethtool(ns_->exec("ethtool -l nt0").out);
    auto max = ethtool_number(l, "max.RX");
    ASSERT_TRUE(max);
    profile("too-many", "[link]\nmtu = 9000\n[channels]\nrx = " + std::to_string(*max + 1) + "\n");
    const std::string before = snapshot();
    auto r = ctl({"--direct", "apply", "too-many", "nt0"});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.out.find("the device's maximum is " + std::to_string(*max)), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("nothing was changed"), std::string::npos) << r.out;
    EXPECT_EQ(snapshot(), before);
    EXPECT_FALSE(fs::exists(dir_ / "state" / "interfaces" / "nt0.json"));

    // The JSON result's error names the step the plan refused.
    auto j = ctl({"--direct", "apply", "too-many", "nt0", "--json"});
    EXPECT_EQ(j.status, 2) << j.out << j.err;
    auto e = parse_json(j.out).at("error");
    EXPECT_EQ(e.at("code"), "InvalidArgument") << e.dump();
    EXPECT_EQ(e.value("interface", ""), "nt0") << e.dump();
    EXPECT_EQ(e.value("setting", ""), "channels.rx") << e.dump();
    EXPECT_EQ(snapshot(), before);
}

// An error before there is any result (an unknown interface, a bad value in
// the profile) is one JSON object too with --json, naming what it is about;
// the line on stderr stays for people.
TEST_F(ApplyCli, WithJsonAnErrorBeforeAnyResultIsAnObjectThatNamesItsInterfaceAndSetting) {
    const std::string before = snapshot();
    auto r = ctl({"--direct", "apply", "jumbo-lab", "nt9", "--json"});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("nictunectl: nt9: no such interface"), std::string::npos) << r.err;
    auto e = parse_json(r.out).at("error");
    EXPECT_EQ(e.at("code"), "NoSuchInterface") << e.dump();
    EXPECT_EQ(e.value("interface", ""), "nt9") << e.dump();
    EXPECT_FALSE(e.contains("setting")) << e.dump();
    EXPECT_EQ(e.at("text"), "nt9: no such interface");

    profile("too-big", "[link]\nmtu = 70000\n");
    auto bad = ctl({"--direct", "apply", "too-big", "nt0", "--json"});
    EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
    auto b = parse_json(bad.out).at("error");
    EXPECT_EQ(b.at("code"), "InvalidProfile") << b.dump();
    EXPECT_EQ(b.value("setting", ""), "link.mtu") << b.dump();
    EXPECT_FALSE(b.contains("interface")) << b.dump();
    EXPECT_NE(b.at("context").get<std::string>().find("too-big.toml:2:7"), std::string::npos)
        << b.dump();

    // diff (plan) answers the same way.
    auto d = ctl({"--direct", "diff", "jumbo-lab", "nt9", "--json"});
    EXPECT_EQ(d.status, 2) << d.out << d.err;
    EXPECT_EQ(parse_json(d.out).at("error").value("interface", ""), "nt9") << d.out;
    EXPECT_EQ(snapshot(), before);
}

TEST_F(ApplyCli, BadProfilesGetFileLineColumnAndChangeNothing) {
    const std::string before = snapshot();
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"[link]\nmtu = 70000\n", ":2:7: link.mtu: 70000 is out of range 68..65535 bytes"},
        {"[link]\nmtu = 9000\n[rings]\nrx = -1\n", ":4:6: rings.rx: -1 is out of range"},
        {"[channels]\ncombined = \"lots\"\n",
         ":2:12: channels.combined: expected a number or \"max\""},
        {"[features]\nturbo = true\n", ":2:1: unknown feature 'turbo'"},
        {"[sysctl]\n\"kernel.panic\" = 1\n",
         ":2:1: sysctl 'kernel.panic' is not on nictune's allowlist"},
        {"[link\nmtu = 9000\n", ":1:"},
    };
    int n = 0;
    for (const auto& [text, expect] : cases) {
        const std::string name = "bad" + std::to_string(n++);
        profile(name, text);
        auto r = ctl({"--direct", "apply", name, "nt0"});
        EXPECT_EQ(r.status, 2) << name << ": " << r.err;
        EXPECT_NE(r.err.find((dir_ / "profiles" / (name + ".toml")).string() + expect),
                  std::string::npos)
            << name << ": " << r.err;
    }
    EXPECT_EQ(snapshot(), before);
}

TEST_F(ApplyCli, UsageErrorsChangeNothing) {
    const std::string before = snapshot();
    EXPECT_EQ(ctl({"--direct", "apply", "jumbo-lab", "nosuch0"}).status, 2);
    EXPECT_EQ(ctl({"--direct", "apply", "no-such-profile", "nt0"}).status, 2);
    EXPECT_EQ(ctl({"--direct", "apply", "../etc/x", "nt0"}).status, 2);
    auto nomatch = ctl({"--direct", "apply", "jumbo-lab"});
    EXPECT_EQ(nomatch.status, 2);
    EXPECT_NE(nomatch.err.find("has no [match]: name the interfaces"), std::string::npos)
        << nomatch.err;
    profile("ixgbe-only", "[match]\ndrivers = [\"ixgbe\"]\n[link]\nmtu = 9000\n");
    auto wrong = ctl({"--direct", "apply", "ixgbe-only", "nt0"});
    EXPECT_EQ(wrong.status, 2);
    EXPECT_NE(wrong.out.find("use --force"), std::string::npos) << wrong.out;
    // Without --direct, apply goes through nictuned: none answers on this bus.
    auto daemonless = ns_->exec_argv({"env", "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/bus",
                                      kCtl, "apply", "jumbo-lab", "nt0"});
    EXPECT_EQ(daemonless.status, 5);
    EXPECT_NE(daemonless.err.find("goes through nictuned, which is not reachable"),
              std::string::npos)
        << daemonless.err;
    // Local options without --direct would be silently ignored by nictuned: refused.
    auto local = ctl({"apply", "jumbo-lab", "nt0"});
    EXPECT_EQ(local.status, 2);
    EXPECT_NE(local.err.find("add --direct"), std::string::npos) << local.err;
    EXPECT_EQ(snapshot(), before);
    auto forced = ctl({"--direct", "apply", "ixgbe-only", "nt0", "--force"});
    EXPECT_EQ(forced.status, 0) << forced.out;
}

TEST_F(ApplyCli, AnUnprivilegedCallerCannotApply) {
    const std::string before = snapshot();
    auto r = ns_->exec_argv({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", kCtl,
                             "--profiles-dir", (dir_ / "profiles").string(), "--state-dir",
                             (dir_ / "state").string(), "--direct", "apply", "jumbo-lab", "nt0"});
    EXPECT_EQ(r.status, 5) << r.out << r.err;
    EXPECT_NE(r.err.find("needs root"), std::string::npos) << r.err;
    EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace nictune::test
