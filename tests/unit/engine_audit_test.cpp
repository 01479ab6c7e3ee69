#include <gtest/gtest.h>

#include <algorithm>

#include "engine/audit.hpp"
#include "fakes/states.hpp"
#include "profile/loader.hpp"
#include "support/profile_text.hpp"

namespace nictune {
void PrintTo(Severity s, std::ostream* os);  // for gtest messages
void PrintTo(Severity s, std::ostream* os) {
    *os << severity_name(s);
}
namespace {
using ::nictune::test::profile_of;

const Finding* find(const std::vector<Finding>& fs, const std::string& key) {
    for (const auto& f : fs)
        if (f.key == key) return &f;
    return nullptr;
}

struct AuditFixture : ::testing::Test {
    SystemState system;
    AuditContext ctx() { return AuditContext{&FactsBook::builtin(), &system, "6.1.0-27-amd64"}; }
};

TEST_F(AuditFixture, FailsOnTheKnownBadIxgbeVersion) {
    auto fs = audit_interface(test::ixgbe_port("p4p1", "4.0.1-k"), nullptr, ctx());
    const Finding* f = find(fs, "driver.version");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Fail);
    EXPECT_EQ(f->expected, Scalar{std::string("not 4.0.1-k")});
    EXPECT_EQ(f->actual, Scalar{std::string("4.0.1-k")});
    EXPECT_NE(f->message.find("8.32 Gbit/s"), std::string::npos);
    EXPECT_FALSE(f->fix.empty());
}

TEST_F(AuditFixture, FailsOnTheWithdrawnI40eVersion) {
    auto fs = audit_interface(test::i40e_port(), nullptr, ctx());
    const Finding* f = find(fs, "driver.version");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Fail);
    EXPECT_NE(f->message.find("withdrew"), std::string::npos);
}

TEST_F(AuditFixture, PrefersTheOutOfTreeModuleVersion) {
    auto st = test::ixgbe_port("p4p1", "4.0.1-k");
    st.id.module_version = "5.3.6";
    auto fs = audit_interface(st, nullptr, ctx());
    EXPECT_EQ(find(fs, "driver.version"), nullptr);
}

TEST_F(AuditFixture, ExplainsIxgbeAdaptiveModeration) {
    auto fs = audit_interface(test::ixgbe_port(), nullptr, ctx());
    const Finding* f = find(fs, "coalesce.rx_usecs");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Info);
    EXPECT_EQ(f->message,
              "rx-usecs 1 on ixgbe: adaptive interrupt moderation (ixgbe's default); ixgbe has no "
              "adaptive-rx switch");
}

TEST_F(AuditFixture, ExplainsE1000eDefaultDynamicConservativeMode) {
    auto st = test::ixgbe_port("eth0");
    st.id.driver = "e1000e";
    st.values.set(Key::CoalRxUsecs, 3);
    auto fs = audit_interface(st, nullptr, ctx());
    const Finding* f = find(fs, "coalesce.rx_usecs");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Info);
    EXPECT_NE(f->message.find("dynamic conservative (adaptive)"), std::string::npos) << f->message;
}

TEST_F(AuditFixture, WarnsWhenIxgbeModerationIsOff) {
    auto st = test::ixgbe_port();
    st.values.set(Key::CoalRxUsecs, 0);
    auto fs = audit_interface(st, nullptr, ctx());
    const Finding* f = find(fs, "coalesce.rx_usecs");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warn);
    EXPECT_NE(f->message.find("RSC"), std::string::npos) << f->message;
}

TEST_F(AuditFixture, ComparesEveryProfileSettingWithTheDevice) {
    auto p = profile_of("x520", R"(
[link]
mtu = 9014
[coalesce]
adaptive_rx = true
[rings]
rx = "max"
[features]
lro = true
gro = true
)");
    auto st = test::ixgbe_port();
    auto fs = audit_interface(st, &p, ctx());
    const Finding* mtu = find(fs, "link.mtu");
    ASSERT_NE(mtu, nullptr);
    EXPECT_EQ(mtu->severity, Severity::Warn);
    EXPECT_EQ(mtu->expected, Scalar{uint64_t{9014}});
    EXPECT_EQ(mtu->actual, Scalar{uint64_t{1500}});
    EXPECT_EQ(mtu->fix, "nictunectl apply x520 p4p1");
    const Finding* rx = find(fs, "rings.rx");
    ASSERT_NE(rx, nullptr);
    EXPECT_EQ(rx->expected, Scalar{uint64_t{4096}});
    const Finding* lro = find(fs, "features.rx-lro");
    ASSERT_NE(lro, nullptr);
    EXPECT_EQ(lro->severity, Severity::Warn);
    EXPECT_EQ(lro->expected, Scalar{true});
    EXPECT_EQ(find(fs, "features.rx-gro"), nullptr) << "rx-gro is already on";
    const Finding* adaptive = find(fs, "coalesce.adaptive_rx");
    ASSERT_NE(adaptive, nullptr) << "translation is explained";
    EXPECT_EQ(adaptive->severity, Severity::Info);
}

TEST_F(AuditFixture, ReportsUnsupportedSettingsAsInfoNotZero) {
    auto p = profile_of("t", "[coalesce]\nrx_usecs = 10\n");
    auto fs = audit_interface(test::veth(), &p, ctx());
    const Finding* f = find(fs, "coalesce.rx_usecs");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Info);
    EXPECT_EQ(f->actual, Scalar{});
}

TEST_F(AuditFixture, FailsWhenTheProfileAsksMoreThanTheDeviceAllows) {
    auto p = profile_of("t", "[link]\nmtu = 9800\n");
    auto fs = audit_interface(test::ixgbe_port(), &p, ctx());
    const Finding* f = find(fs, "link.mtu");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Fail);
}

TEST_F(AuditFixture, ChecksSysctlsAndTuned) {
    system.sysctl = {{"net.core.rmem_max", "212992"},
                     {"net.ipv4.tcp_rmem", "4096\t131072  6291456"}};
    system.tuned = TunedState{"balanced", TunedSource::Dbus, ""};
    auto p = profile_of("t", R"(
[sysctl]
"net.core.rmem_max" = 16777216
"net.ipv4.tcp_rmem" = [4096, 131072, 6291456]
"net.core.busy_poll" = 50
[tuned]
profile = "latency-performance"
)");
    auto fs = audit_interface(test::ixgbe_port(), &p, ctx());
    ASSERT_NE(find(fs, "sysctl.net.core.rmem_max"), nullptr);
    EXPECT_EQ(find(fs, "sysctl.net.core.rmem_max")->severity, Severity::Warn);
    EXPECT_EQ(find(fs, "sysctl.net.ipv4.tcp_rmem"), nullptr)
        << "whitespace differences are not drift";
    ASSERT_NE(find(fs, "sysctl.net.core.busy_poll"), nullptr);
    EXPECT_EQ(find(fs, "sysctl.net.core.busy_poll")->severity, Severity::Info);
    const Finding* t = find(fs, "tuned.profile");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->severity, Severity::Warn);
    EXPECT_EQ(t->actual, Scalar{std::string("balanced")});
    system.tuned = TunedState{std::nullopt, TunedSource::NotInstalled, ""};
    auto fs2 = audit_interface(test::ixgbe_port(), &p, ctx());
    ASSERT_NE(find(fs2, "tuned.profile"), nullptr);
    EXPECT_EQ(find(fs2, "tuned.profile")->severity, Severity::Info);
}

TEST_F(AuditFixture, ASysctlAboveItsFloorIsNoFinding) {
    system.sysctl = {{"net.core.rmem_max", "33554432"},
                     {"net.ipv4.tcp_rmem", "4096\t131072\t6291456"}};
    auto p = profile_of("t", R"(
[sysctl]
"net.core.rmem_max" = { at_least = 16777216 }
"net.ipv4.tcp_rmem" = { at_least = [4096, 87380, 16777216] }
)");
    auto fs = audit_interface(test::ixgbe_port(), &p, ctx());
    EXPECT_EQ(find(fs, "sysctl.net.core.rmem_max"), nullptr) << "above the floor is met";
    const Finding* f = find(fs, "sysctl.net.ipv4.tcp_rmem");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warn);
    EXPECT_EQ(f->message,
              "net.ipv4.tcp_rmem is 4096 131072 6291456, profile t wants at least 4096 87380 "
              "16777216");
}

TEST_F(AuditFixture, ChecksTheProfilesDriverRequirements) {
    auto p = profile_of("t", "[driver]\nmin_version = \"5.3.6\"\nbad_versions = [\"5.1.0\"]\n");
    auto old = test::ixgbe_port("p4p1", "4.2.0");
    auto fs = audit_interface(old, &p, ctx());
    const Finding* f = find(fs, "driver.version");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warn);
    auto bad = test::ixgbe_port("p4p1", "5.1.0");
    auto fs_bad = audit_interface(bad, &p, ctx());
    ASSERT_NE(find(fs_bad, "driver.version"), nullptr);
    EXPECT_EQ(find(fs_bad, "driver.version")->severity, Severity::Fail);
    auto in_tree = test::ixgbe_port("p4p1", "6.1.0-27-amd64");
    auto fs_tree = audit_interface(in_tree, &p, ctx());
    ASSERT_NE(find(fs_tree, "driver.version"), nullptr);
    EXPECT_EQ(find(fs_tree, "driver.version")->severity, Severity::Info);
}

TEST(ProfileChoice, PicksTheMostSpecificMatchThenPriority) {
    std::vector<Profile> ps = {
        profile_of("generic", "[link]\nmtu = 9000\n"),
        profile_of("x520-lowlatency", "[match]\ndrivers = [\"ixgbe\"]\n[link]\nmtu = 1500\n"),
        profile_of(
            "x520-throughput",
            "[profile]\npriority = 10\n[match]\ndrivers = [\"ixgbe\"]\n[link]\nmtu = 9014\n"),
        profile_of("x710", "[match]\ndrivers = [\"i40e\"]\n[link]\nmtu = 9000\n"),
    };
    auto c = choose_profile(ps, test::ixgbe_port().id);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->profile->name, "x520-throughput");
    EXPECT_EQ(c->reason, "matches driver ixgbe");
    ps.push_back(
        profile_of("x520-da2", "[match]\npci_ids = [\"8086:10fb\"]\n[link]\nmtu = 9000\n"));
    EXPECT_EQ(choose_profile(ps, test::ixgbe_port().id)->profile->name, "x520-da2");
    EXPECT_FALSE(choose_profile(ps, test::veth().id))
        << "generic profiles are never picked automatically";
}

TEST(ProfileChoice, AllGivenMatchKeysMustMatch) {
    ProfileMatch m;
    m.drivers = {"ixgbe"};
    m.interfaces = {"p5*"};
    EXPECT_FALSE(match_score(m, test::ixgbe_port("p4p1").id));
    EXPECT_TRUE(match_score(m, test::ixgbe_port("p5p1").id));
}

TEST(Findings, SeverityDecidesTheExitStatus) {
    AuditReport r;
    r.interfaces.push_back(InterfaceAudit{});
    r.interfaces[0].findings.push_back(Finding{Severity::Info, "k", {}, {}, "m", ""});
    EXPECT_FALSE(has_problems(r));
    r.interfaces[0].findings.push_back(Finding{Severity::Warn, "k", {}, {}, "m", ""});
    EXPECT_TRUE(has_problems(r));
}

TEST(DriverFacts, BuiltInFileParsesAndKnowsTheFieldReports) {
    const auto& b = FactsBook::builtin();
    ASSERT_NE(b.find("ixgbe"), nullptr);
    EXPECT_EQ(b.find("ixgbe")->max_mtu, 9710U);
    EXPECT_EQ(b.find("i40e")->max_mtu, 9702U);
    EXPECT_EQ(b.find("ixgbe")->bad_versions.at(0).version, "4.0.1-k");
    EXPECT_EQ(b.find("i40e")->bad_versions.at(0).version, "2.13.10");
    EXPECT_EQ(b.find("nope"), nullptr);
}

TEST(DriverFacts, ErrorsNameFileLineAndColumn) {
    auto r = FactsBook::parse("[ixgbe]\nmax_mtu = 99999\n", "f.toml");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().str(), "f.toml:2:11: ixgbe.max_mtu: expected a number in 68..65535");
    auto r2 = FactsBook::parse("[ixgbe]\ncolour = 1\n", "f.toml");
    EXPECT_EQ(r2.error().str(), "f.toml:2:1: unknown key 'colour' in [ixgbe]");
}

}  // namespace
}  // namespace nictune
