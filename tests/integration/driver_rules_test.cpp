// What the driver accepts, not what it reports, against the real kernel: veth
// pairs in a namespace the test creates, ethtool as the oracle. The kernel's
// own feature logic (netdev_fix_features: TSO needs scatter-gather) makes
// "requested on, kept off" features; veth's channels show a value the driver
// table refuses exactly where the kernel does.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/ctl_netns.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;

class DriverRules : public CtlNetnsTest {
  protected:
    void SetUp() override {
        make(
            "ip link add name dr0 type veth peer name dr1 && ip link set dr0 up && "
            "ip link set dr1 up",
            "rules");
    }
    std::string snapshot() {
        return ns_->exec("ip -d link show dr0; ethtool -k dr0; ethtool -l dr0").out;
    }
    // ethtool's view of one feature of dr0: {active, requested}.
    std::pair<bool, bool> feature(const std::string& name) {
        auto k = parse_json(ns_->exec("ethtool --json -k dr0").out).at(0).at(name);
        return {k.at("active").get<bool>(), k.at("requested").get<bool>()};
    }
};

TEST_F(DriverRules, AFeatureTheKernelKeepsOffIsBlockedNotFailedAndNothingChanges) {
    // Without scatter-gather the kernel drops TSO (netdev_fix_features):
    // ethtool says "off [requested on]".
    ASSERT_EQ(ns_->exec("ethtool -K dr0 sg off").status, 0);
    ASSERT_EQ(feature("tx-tcp-segmentation"), std::make_pair(false, true));
    profile("want-tso", "[features]\ntx-tcp-segmentation = true\n");
    const std::string before = snapshot();

    auto diff = ctl({"diff", "want-tso", "dr0"});
    EXPECT_EQ(diff.status, 0) << diff.out << diff.err;
    EXPECT_NE(diff.out.find("blocked (false)"), std::string::npos) << diff.out;
    EXPECT_NE(diff.out.find("the kernel keeps tx-tcp-segmentation off although it is requested"),
              std::string::npos)
        << diff.out;

    auto apply = ctl({"--direct", "apply", "want-tso", "dr0", "--json"});
    EXPECT_EQ(apply.status, 0) << apply.out << apply.err;
    auto j = parse_json(apply.out);
    EXPECT_EQ(j.at("result"), "applied");
    EXPECT_EQ(j.at("interfaces").at(0).at("steps").at(0).at("outcome"), "blocked");
    EXPECT_EQ(snapshot(), before);

    // Audit says so without calling it a problem.
    auto audit = ctl({"audit", "dr0", "--all", "--profile", "want-tso", "--json"});
    EXPECT_EQ(audit.status, 0) << audit.out;
    bool found = false;
    const auto report = parse_json(audit.out);
    for (const auto& f : report.at("interfaces").at(0).at("findings"))
        if (f.at("key") == "features.tx-tcp-segmentation") {
            found = true;
            EXPECT_EQ(f.at("severity"), "info");
            EXPECT_NE(f.at("message").get<std::string>().find("blocked"), std::string::npos);
        }
    EXPECT_TRUE(found) << audit.out;
}

TEST_F(DriverRules, AFeatureTheKernelRefusesAfterTheSetIsBlockedAndTheRestApplies) {
    ASSERT_EQ(ns_->exec("ethtool -K dr0 sg off tso off").status, 0);
    ASSERT_EQ(feature("tx-tcp-segmentation"), std::make_pair(false, false));
    const std::string before = snapshot();
    profile("tso-gro", "[link]\nmtu = 9000\n[features]\ntx-tcp-segmentation = true\ngro = false\n");
    auto apply = ctl({"--direct", "apply", "tso-gro", "dr0", "--json"});
    ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
    auto j = parse_json(apply.out);
    EXPECT_EQ(j.at("result"), "applied");
    for (const auto& s : j.at("interfaces").at(0).at("steps")) {
        if (s.at("key") == "features.tx-tcp-segmentation") {
            EXPECT_EQ(s.at("outcome"), "blocked") << s.dump();
        } else {
            EXPECT_TRUE(s.at("outcome") == "applied" || s.at("outcome") == "unchanged") << s.dump();
        }
    }
    // The kernel took the request and keeps the feature off; the rest applied.
    EXPECT_EQ(feature("tx-tcp-segmentation"), std::make_pair(false, true));
    EXPECT_EQ(feature("generic-receive-offload").first, false);
    EXPECT_EQ(parse_json(ns_->exec("ip -j link show dr0").out).at(0).at("mtu"), 9000);
    // And a rollback restores every bit, the request included.
    auto rb = ctl({"--direct", "rollback", "dr0"});
    ASSERT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(snapshot(), before);
}

TEST_F(DriverRules, AValueTheDriverRefusesIsRefusedBeforeAnyChangeAsTheKernelWould) {
    // The oracle first: the kernel refuses rx 0 on veth.
    EXPECT_NE(ns_->exec("ethtool -L dr0 rx 0").status, 0);
    profile("no-rx", "[link]\nmtu = 9000\n[channels]\nrx = 0\n");
    const std::string before = snapshot();
    auto r = ctl({"--direct", "apply", "no-rx", "dr0"});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.out.find("veth accepts channels.rx 1..the device's maximum "
                         "(drivers/net/veth.c veth_set_channels (!rx_count -> EINVAL))"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("nothing was changed"), std::string::npos) << r.out;
    EXPECT_EQ(snapshot(), before);
    EXPECT_FALSE(fs::exists(dir_ / "state" / "interfaces" / "dr0.json"));
}

}  // namespace
}  // namespace nictune::test
