// [rss] on a veth pair in a namespace the test creates: veth has none of the
// RSS ioctls (no get_rxnfc, get_rxfh or set_rxfh in its ethtool_ops), so the
// section is reported unsupported, audit shows "rss": null, and an apply
// changes nothing. `ethtool -x` / `ethtool -n rx-flow-hash` in the namespace
// are the oracle that the device has no RSS. The table and hash writes are
// exercised only on the fake backend and fixture replies
// (tests/unit/rss_test.cpp): no device on these machines has RSS.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "support/ctl_netns.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"

namespace nictune::test {
namespace {

class Rss : public CtlNetnsTest {
  protected:
    void SetUp() override {
        make(
            "ip link add name rs0 numrxqueues 4 numtxqueues 4 type veth peer name rs1 && "
            "ip link set rs0 up && ip link set rs1 up",
            "rss");
    }
};

TEST_F(Rss, VethHasNoRssTheAuditSaysSoAndAnApplyChangesNothing) {
    // The oracle: ethtool's own RSS requests fail the same way.
    auto x = ns_->exec("ethtool -x rs0 2>&1");
    EXPECT_NE(x.status, 0);
    EXPECT_NE(x.out.find("Operation not supported"), std::string::npos) << x.out;
    auto n = ns_->exec("ethtool -n rs0 rx-flow-hash tcp4 2>&1");
    EXPECT_NE(n.status, 0);
    EXPECT_NE(n.out.find("Operation not supported"), std::string::npos) << n.out;

    auto audit = ctl({"audit", "rs0", "--json"});
    ASSERT_TRUE(audit.status == 0 || audit.status == 1) << audit.out << audit.err;
    auto a = parse_json(audit.out).at("interfaces").at(0);
    ASSERT_TRUE(a.contains("rss")) << a.dump();
    EXPECT_TRUE(a.at("rss").is_null()) << a.at("rss").dump();
    auto audit_text = ctl({"audit", "rs0"});
    EXPECT_NE(audit_text.out.find("\n  rss        not supported by the driver\n"),
              std::string::npos)
        << audit_text.out;

    const std::string before = ns_->exec("ip -d link show rs0; ethtool -l rs0").out;
    profile("spread", "[rss]\nqueues = 2\n[rss.hash]\ntcp4 = \"sdfn\"\n");
    auto apply = ctl({"--direct", "apply", "spread", "rs0", "--json"});
    auto j = parse_json(apply.out);
    std::vector<std::string> keys;
    for (const auto& s : j.at("interfaces").at(0).at("steps")) {
        keys.push_back(s.at("key").get<std::string>());
        EXPECT_EQ(s.at("outcome"), "unsupported") << s.dump();
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"rss.indirection", "rss.hash.tcp4"})) << apply.out;
    EXPECT_EQ(ns_->exec("ip -d link show rs0; ethtool -l rs0").out, before);
    EXPECT_NE(ns_->exec("ethtool -x rs0 2>&1").status, 0);

    // The text view says why.
    auto text = ctl({"--direct", "apply", "spread", "rs0", "--dry-run"});
    EXPECT_NE(text.out.find("no RSS indirection table"), std::string::npos) << text.out;
}

// The read side on a real driver, read only: the host's first device-backed
// interface (virtio_net here, which answers GRXRINGS, GRSSH without a table
// and GRXFH), audited by nictunectl in the host's namespace and compared with
// what ethtool -x and ethtool -n rx-flow-hash print for it. Nothing is
// written.
std::string first_device_interface() {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/sys/class/net", ec))
        if (std::filesystem::exists(e.path() / "device")) return e.path().filename().string();
    return {};
}

// ethtool's words for the RXH_* bits (unparse_rxfhashopts) as its letters.
std::string letters_of(const std::string& ethtool_out) {
    if (ethtool_out.find("None") != std::string::npos) return "";
    const std::pair<const char*, char> words[] = {
        {"L2DA", 'm'},  {"VLAN tag", 'v'},       {"L3 proto", 't'},       {"IP SA", 's'},
        {"IP DA", 'd'}, {"L4 bytes 0 & 1", 'f'}, {"L4 bytes 2 & 3", 'n'},
    };
    std::string out;
    for (const auto& [w, c] : words)
        if (ethtool_out.find(w) != std::string::npos) out += c;
    return out;
}

TEST(RssHost, AuditReadsWhatEthtoolShowsForARealDriver) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    const std::string dev = first_device_interface();
    if (dev.empty()) GTEST_SKIP() << "no device-backed interface on this host";
    auto x = run({"ethtool", "-x", dev});
    auto audit = run({NICTUNECTL_PATH, "audit", dev, "--json"});
    ASSERT_TRUE(audit.status == 0 || audit.status == 1) << audit.out << audit.err;
    const auto rss = parse_json(audit.out).at("interfaces").at(0).at("rss");
    if (x.status != 0) {
        EXPECT_TRUE(rss.is_null() || rss.at("rx_rings").is_null()) << x.out << x.err << rss.dump();
        return;
    }
    ASSERT_TRUE(rss.is_object()) << x.out;
    // The text view has its line, with the ring count.
    auto text = run({NICTUNECTL_PATH, "audit", dev});
    EXPECT_NE(text.out.find("\n  rss        " + std::to_string(rss.at("rx_rings").get<uint64_t>()) +
                            " RX rings"),
              std::string::npos)
        << text.out;
    // "RX flow hash indirection table for eth0 with 1 RX ring(s):"
    const auto at = x.out.find(" with ");
    ASSERT_NE(at, std::string::npos) << x.out;
    EXPECT_EQ(rss.at("rx_rings"), std::stoull(x.out.substr(at + 6))) << x.out;
    // The table: "    0:      0     1 ..." lines, or "Operation not supported".
    std::vector<uint64_t> table;
    std::istringstream lines(x.out);
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line) && line.find("RSS hash key") == std::string::npos) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::istringstream nums(line.substr(colon + 1));
        for (uint64_t q; nums >> q;)
            table.push_back(q);
    }
    if (table.empty())
        EXPECT_TRUE(rss.at("indirection").is_null()) << rss.dump();
    else
        EXPECT_EQ(rss.at("indirection").get<std::vector<uint64_t>>(), table);
    // "    toeplitz: on" for each function the device uses.
    std::string on;
    for (const char* f : {"toeplitz", "xor", "crc32"})
        if (x.out.find(std::string(f) + ": on") != std::string::npos)
            on += (on.empty() ? "" : ",") + std::string(f);
    if (on.empty())
        EXPECT_TRUE(rss.at("hfunc").is_null()) << rss.dump();
    else
        EXPECT_EQ(rss.at("hfunc"), on);
    for (const char* flow : {"tcp4", "udp4", "tcp6", "udp6"}) {
        auto n = run({"ethtool", "-n", dev, "rx-flow-hash", flow});
        if (n.status != 0) {
            EXPECT_FALSE(rss.at("hash").contains(flow)) << flow << " " << n.err;
            continue;
        }
        ASSERT_TRUE(rss.at("hash").contains(flow)) << flow << rss.dump();
        EXPECT_EQ(rss.at("hash").at(flow), letters_of(n.out)) << flow << "\n" << n.out;
    }
}

}  // namespace
}  // namespace nictune::test
