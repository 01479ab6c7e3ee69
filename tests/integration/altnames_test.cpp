// Alternative names (issue 13): `ip link property add dev X altname p4p1`.
// Every command resolves a name as the kernel does, altnames included;
// records are the device's (filed under its current name) whatever name the
// operator typed; reports list the altnames. Real altnames on veths in a
// test namespace, through nictunectl --direct and through nictuned; `ip -j`
// and sysfs are the oracles.
#include <gtest/gtest.h>

#include <filesystem>

#include "integration/daemon_harness.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

const char* kJumbo = "[link]\nmtu = 9000\n";
const std::string kLong = "lk0-a-long-alternative-name";  // more than IFNAMSIZ

nlohmann::json json_of(const CommandResult& r) {
    try {
        return nlohmann::json::parse(r.out);
    } catch (const nlohmann::json::exception& e) {
        ADD_FAILURE() << "not JSON (" << e.what() << "): " << r.out.substr(0, 400) << r.err;
        return nlohmann::json::object();
    }
}

// `ip -j link show DEV`: its object, with "altnames" when it has any.
nlohmann::json link_of(const TestNetns& ns, const std::string& dev) {
    auto r = ns.exec_argv({"ip", "-j", "link", "show", "dev", dev});
    if (r.status != 0) return nlohmann::json::object();
    return parse_json(r.out).at(0);
}

uint64_t mtu_of(const TestNetns& ns, const std::string& dev) {
    auto l = link_of(ns, dev);
    return l.contains("mtu") ? l.at("mtu").get<uint64_t>() : 0;
}

void add_altnamed_pair(const TestNetns& ns) {
    ASSERT_EQ(ns.exec("ip link add name lk0 type veth peer name lk1").status, 0);
    ASSERT_EQ(ns.exec("ip link property add dev lk0 altname p4p1").status, 0);
    auto r = ns.exec_argv({"ip", "link", "property", "add", "dev", "lk0", "altname", kLong});
    ASSERT_EQ(r.status, 0) << r.err;
}

class AltnamesDirect : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        char tmpl[] = "/tmp/nictune-alt-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        fs::create_directory(dir_ / "profiles");
        std::ofstream(dir_ / "profiles" / "jumbo.toml") << kJumbo;
        add_altnamed_pair(*ns_);
    }
    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }
    CommandResult ctl(std::vector<std::string> args) {
        std::vector<std::string> argv = {NICTUNECTL_PATH,  "--direct",
                                         "--state-dir",    (dir_ / "state").string(),
                                         "--profiles-dir", (dir_ / "profiles").string(),
                                         "--config",       (dir_ / "no-nictune.toml").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return ns_->exec_argv(argv, 60000);
    }
    fs::path record(const std::string& name) {
        return dir_ / "state" / "interfaces" / (name + ".json");
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
    fs::path dir_;
};

TEST_F(AltnamesDirect, AuditListsTheAltnamesAsTheKernelDoes) {
    const auto oracle = link_of(*ns_, "lk0").at("altnames");
    ASSERT_EQ(oracle, nlohmann::json::array({"p4p1", kLong}));
    for (const std::string& name : std::vector<std::string>{"lk0", "p4p1", kLong}) {
        SCOPED_TRACE("audit " + name);
        auto r = ctl({"audit", "--json", name});
        ASSERT_LE(r.status, 1) << r.err;
        auto j = json_of(r).at("interfaces");
        ASSERT_EQ(j.size(), 1U);
        EXPECT_EQ(j[0].at("name"), "lk0");
        EXPECT_EQ(j[0].at("altnames"), oracle);
        EXPECT_EQ(j[0].at("ifindex"), link_of(*ns_, "lk0").at("ifindex"));
    }
    auto peer = json_of(ctl({"audit", "--json", "lk1"})).at("interfaces");
    EXPECT_EQ(peer[0].at("altnames"), nlohmann::json::array());
    auto text = ctl({"audit", "p4p1"});
    EXPECT_NE(text.out.find("altnames   p4p1 " + kLong), std::string::npos) << text.out;
    // Many names at once take the dump path (more than 32): altnames work there too.
    std::vector<std::string> many = {"audit", "--json"};
    for (int i = 0; i < 20; ++i) {
        many.push_back("p4p1");
        many.push_back(kLong);
    }
    auto dump = ctl(many);
    ASSERT_LE(dump.status, 1) << dump.err;
    auto all = json_of(dump).at("interfaces");
    ASSERT_EQ(all.size(), 1U) << "one device, however it was named";
    EXPECT_EQ(all[0].at("name"), "lk0");
}

// More than 32 names are read from one streamed dump: the devices come in
// the order first named, each once, and a name no link has is the error.
TEST_F(AltnamesDirect, ManyNamesKeepTheirOrderAndAMissingOneIsNamed) {
    std::vector<std::string> many = {"audit", "--json", "p4p1"};
    for (int i = 0; i < 20; ++i) {
        many.push_back("lk1");
        many.push_back(i % 2 == 0 ? "lk0" : kLong);
    }
    auto r = ctl(many);
    ASSERT_LE(r.status, 1) << r.err;
    auto all = json_of(r).at("interfaces");
    ASSERT_EQ(all.size(), 2U) << r.out;
    EXPECT_EQ(all[0].at("name"), "lk0") << "named first, by an altname";
    EXPECT_EQ(all[1].at("name"), "lk1");
    EXPECT_EQ(all[0].at("altnames"), link_of(*ns_, "lk0").at("altnames"));

    many.push_back("nosuch0");
    many.push_back("lk0");
    auto missing = ctl(many);
    EXPECT_NE(missing.status, 0);
    EXPECT_NE(missing.err.find("nosuch0"), std::string::npos) << missing.err;
    EXPECT_NE(missing.err.find("no such interface"), std::string::npos) << missing.err;
}

// The report: rollback p4p1 answered "no such interface" and left
// the MTU changed, because apply had filed the record under lk0.
TEST_F(AltnamesDirect, EveryCommandTakesAnAltname) {
    auto diff = ctl({"diff", "jumbo", "p4p1", "--json"});
    ASSERT_EQ(diff.status, 0) << diff.err;
    auto plan = json_of(diff);
    EXPECT_EQ(plan.at("interfaces")[0].at("name"), "lk0");
    EXPECT_EQ(plan.at("changes"), true);

    for (const std::string& name : std::vector<std::string>{"p4p1", kLong}) {
        SCOPED_TRACE(name);
        auto apply = ctl({"apply", "jumbo", name});
        ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
        EXPECT_EQ(mtu_of(*ns_, "lk0"), 9000U);
        EXPECT_TRUE(fs::exists(record("lk0"))) << "filed under the device's name";
        EXPECT_FALSE(fs::exists(record("p4p1")));

        auto rollback = ctl({"rollback", name, "--json"});
        ASSERT_EQ(rollback.status, 0) << rollback.out << rollback.err;
        auto rb = json_of(rollback).at("rollbacks")[0];
        EXPECT_EQ(rb.at("result"), "rolled_back") << rb.dump(2);
        EXPECT_EQ(rb.at("interface"), "lk0");
        EXPECT_EQ(mtu_of(*ns_, "lk0"), 1500U);
        EXPECT_FALSE(fs::exists(record("lk0")));
    }
}

// `ip link set lk0 name lan0` while nothing watched: rollback under the new
// name finds the originals saved under the old one (by ifindex and MAC).
TEST_F(AltnamesDirect, ARenameWhileNobodyWatchedKeepsTheOriginals) {
    ASSERT_EQ(ctl({"apply", "jumbo", "lk0"}).status, 0);
    ASSERT_EQ(ns_->exec("ip link set lk0 name lan0").status, 0);
    auto rollback = ctl({"rollback", "lan0"});
    ASSERT_EQ(rollback.status, 0) << rollback.out << rollback.err;
    EXPECT_EQ(mtu_of(*ns_, "lan0"), 1500U);
    EXPECT_FALSE(fs::exists(record("lk0")));
    EXPECT_FALSE(fs::exists(record("lan0")));
}

// ---- through nictuned

class AltnamesDaemon : public ::testing::Test {
  protected:
    void start(const std::string& config) {
        std::string skip;
        h_ = std::make_unique<DaemonHarness>(std::map<std::string, std::string>{{"jumbo", kJumbo}},
                                             config, &skip);
        if (!skip.empty()) GTEST_SKIP() << skip;
        ASSERT_TRUE(h_->ok());
    }
    nlohmann::json tracked(const std::string& name) {
        const auto status = h_->status();
        for (const auto& i : status.at("interfaces"))
            if (i.at("name") == name) return i;
        return nlohmann::json::object();
    }
    std::unique_ptr<DaemonHarness> h_;
};

TEST_F(AltnamesDaemon, EveryCommandTakesAnAltnameOverDBus) {
    start("");
    add_altnamed_pair(h_->ns());
    ASSERT_TRUE(h_->start_daemon());
    auto audit = h_->ctl({"audit", "--json", "p4p1"});
    ASSERT_LE(audit.status, 1) << audit.err;
    EXPECT_EQ(json_of(audit).at("interfaces")[0].at("altnames"),
              nlohmann::json::array({"p4p1", kLong}));
    auto diff = h_->ctl({"diff", "jumbo", kLong, "--json"});
    ASSERT_EQ(diff.status, 0) << diff.err;
    EXPECT_EQ(json_of(diff).at("interfaces")[0].at("name"), "lk0");

    ASSERT_EQ(h_->ctl({"apply", "jumbo", "p4p1"}).status, 0);
    EXPECT_EQ(mtu_of(h_->ns(), "lk0"), 9000U);
    auto t = tracked("lk0");
    EXPECT_EQ(t.value("last_result", ""), "applied") << h_->status().dump(2);
    EXPECT_EQ(t.value("altnames", nlohmann::json()), nlohmann::json::array({"p4p1", kLong}));
    auto text = h_->ctl({"status"});
    EXPECT_NE(text.out.find("altnames p4p1 " + kLong), std::string::npos) << text.out;

    auto rollback = h_->ctl({"rollback", "p4p1", "--json"});
    ASSERT_EQ(rollback.status, 0) << rollback.out << rollback.err;
    EXPECT_EQ(json_of(rollback).at("rollbacks")[0].at("interface"), "lk0");
    EXPECT_EQ(mtu_of(h_->ns(), "lk0"), 1500U);
    EXPECT_EQ(tracked("lk0").value("last_result", ""), "rolled_back") << h_->status().dump(2);
    EXPECT_TRUE(h_->daemon().running()) << h_->log();
}

// A binding's `interface =` matches alternative names too (decided in
// issue 13: systemd names NICs by path as altnames, and an operator who
// writes what `ip link show NAME` finds expects it to match), including
// one added after the link appeared. The kernel announces an altname
// change only for a link that is up (netdev_state_change()): one added to
// a link that is down is seen at the link's next event, here its going up.
TEST_F(AltnamesDaemon, ABindingMatchesByAltname) {
    start("[[bind]]\nprofile = \"jumbo\"\ninterface = \"uplink*\"\n");
    ASSERT_EQ(h_->ns().exec("ip link add name ab0 type veth peer name ab1").status, 0);
    ASSERT_EQ(h_->ns().exec("ip link property add dev ab0 altname uplink0").status, 0);
    ASSERT_TRUE(h_->start_daemon());
    EXPECT_EQ(mtu_of(h_->ns(), "ab0"), 9000U) << h_->log();
    EXPECT_EQ(mtu_of(h_->ns(), "ab1"), 1500U);
    // Hotplugged, and given the altname a moment later (as udev does).
    ASSERT_EQ(h_->ns().exec("ip link add name hp0 type veth peer name hp1").status, 0);
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(mtu_of(h_->ns(), "hp0"), 1500U) << "no binding matches it yet";
    ASSERT_EQ(h_->ns().exec("ip link property add dev hp0 altname uplink1").status, 0);
    ASSERT_EQ(h_->ns().exec("ip link set hp0 up").status, 0);
    EXPECT_TRUE(eventually([&] { return mtu_of(h_->ns(), "hp0") == 9000; })) << h_->log();
    // And on a link that is up, at once.
    ASSERT_EQ(h_->ns().exec("ip link add name hq0 type veth peer name hq1").status, 0);
    ASSERT_EQ(h_->ns().exec("ip link set hq0 up").status, 0);
    std::this_thread::sleep_for(300ms);
    ASSERT_EQ(mtu_of(h_->ns(), "hq0"), 1500U);
    ASSERT_EQ(h_->ns().exec("ip link property add dev hq0 altname uplink2").status, 0);
    EXPECT_TRUE(eventually([&] { return mtu_of(h_->ns(), "hq0") == 9000; })) << h_->log();
    EXPECT_EQ(mtu_of(h_->ns(), "hp1"), 1500U);
}

}  // namespace
}  // namespace nictune::test
