// nictuned for real: a private dbus-daemon with the shipped policy file, the
// daemon inside a network namespace the test creates, driven by nictunectl
// over the bus; veth pairs appear, get renamed, drift and disappear.
#include <gtest/gtest.h>
#include <sdbus-c++/sdbus-c++.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "support/dbus.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"
#include "support/paths.hpp"
#include "support/process.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

class DaemonTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon";
        ASSERT_EQ(ns_->exec("ip link add name nt0 type veth peer name xt0").status, 0);
        char tmpl[] = "/tmp/nictune-daemon-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        chmod(tmpl, 0755);
        fs::create_directory(dir_ / "profiles");
        chmod((dir_ / "profiles").c_str(), 0755);
        write("profiles/jumbo.toml", "[link]\nmtu = 9014\n[features]\ngro = true\n");
        write("profiles/small.toml", "[link]\nmtu = 1400\n");
        config(
            "[[bind]]\nprofile = \"jumbo\"\ninterface = \"nt*\"\n\n[[bind]]\nprofile = \"jumbo\"\n"
            "interface = \"hp*\"\nenforce = true\n");
        std::string why;
        bus_ = PrivateBus::start(NICTUNE_TEST_BUS_CONF, &why);
        ASSERT_TRUE(bus_) << why;
        start_daemon();
    }
    void TearDown() override {
        daemon_.reset();
        bus_.reset();
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    void write(const std::string& rel, const std::string& text) {
        std::ofstream(dir_ / rel) << text;
        chmod((dir_ / rel).c_str(), 0644);
    }
    void config(const std::string& text) { write("nictune.toml", text); }

    void start_daemon() {
        Child::Options o;
        o.stderr_log = dir_ / "nictuned.log";
        std::string why;
        daemon_ = Child::start(
            {"ip", "netns", "exec", ns_->name(), kDaemon, "--bus-address", bus_->address(),
             "--config", (dir_ / "nictune.toml").string(), "--profiles-dir",
             (dir_ / "profiles").string(), "--state-dir", (dir_ / "state").string()},
            o, &why);
        ASSERT_TRUE(daemon_) << why;
        ASSERT_TRUE(eventually([&] { return ctl({"status"}).status == 0; })) << log();
    }
    std::string log() {
        std::ifstream in(dir_ / "nictuned.log");
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    CommandResult ctl(std::vector<std::string> args, const std::string& as_user = "") {
        std::vector<std::string> argv;
        if (!as_user.empty())
            argv = {"setpriv", "--reuid=" + as_user, "--regid=" + as_user, "--clear-groups"};
        argv.push_back(kCtl);
        argv.push_back("--bus-address");
        argv.push_back(bus_->address());
        argv.insert(argv.end(), args.begin(), args.end());
        return ns_->exec_argv(argv, 60000);
    }
    uint64_t mtu(const std::string& dev) {
        auto r = ns_->exec("ip -j link show " + dev);
        if (r.status != 0) return 0;
        return parse_json(r.out).at(0).at("mtu").get<uint64_t>();
    }
    nlohmann::json status() { return parse_json(ctl({"status", "--json"}).out); }
    // The same command in this process (--direct), with nictuned's profiles.
    CommandResult direct_ctl(std::vector<std::string> args) {
        std::vector<std::string> argv = {kCtl,
                                         "--direct",
                                         "--profiles-dir",
                                         (dir_ / "profiles").string(),
                                         "--state-dir",
                                         (dir_ / "direct-state").string(),
                                         "--config",
                                         (dir_ / "no-nictune.toml").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return ns_->exec_argv(argv, 60000);
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
    fs::path dir_;
    std::unique_ptr<PrivateBus> bus_;
    std::unique_ptr<Child> daemon_;
};

TEST_F(DaemonTest, AppliesBindingsAtStart) {
    EXPECT_EQ(mtu("nt0"), 9014U) << log();
    EXPECT_EQ(mtu("xt0"), 1500U) << "xt0 is not bound";
    auto s = status();
    ASSERT_EQ(s.at("interfaces").size(), 1U) << s.dump(2);
    EXPECT_EQ(s.at("interfaces").at(0).at("name"), "nt0");
    EXPECT_EQ(s.at("interfaces").at(0).at("last_result"), "applied");
    EXPECT_EQ(s.at("bindings").size(), 2U);
}

TEST_F(DaemonTest, ServesAuditPlanApplyAndRollbackOverTheBus) {
    auto audit = ctl({"audit", "xt0", "--profile", "small", "--json"});
    EXPECT_EQ(audit.status, 1) << audit.err;
    EXPECT_EQ(parse_json(audit.out).at("interfaces").at(0).at("name"), "xt0");

    auto plan = ctl({"diff", "small", "xt0", "--json"});
    ASSERT_EQ(plan.status, 0) << plan.err;
    EXPECT_EQ(parse_json(plan.out).at("interfaces").at(0).at("steps").at(0).at("key"), "link.mtu");
    EXPECT_EQ(mtu("xt0"), 1500U) << "a plan changes nothing";

    auto apply = ctl({"apply", "small", "xt0"});
    ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
    EXPECT_NE(apply.out.find("result: applied and verified"), std::string::npos) << apply.out;
    EXPECT_EQ(mtu("xt0"), 1400U);
    bool listed = false;
    const auto st = status();
    for (const auto& i : st.at("interfaces"))
        listed |=
            i.at("name") == "xt0" && i.at("profile") == "small" && i.at("last_result") == "applied";
    EXPECT_TRUE(listed) << status().dump(2);

    auto rb = ctl({"rollback", "xt0"});
    ASSERT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(mtu("xt0"), 1500U);

    auto profiles = ctl({"profiles", "--json"});
    ASSERT_EQ(profiles.status, 0) << profiles.err;
    std::vector<std::string> names;
    const auto list = parse_json(profiles.out);
    for (const auto& p : list.at("profiles"))
        names.push_back(p.at("name"));
    EXPECT_NE(std::find(names.begin(), names.end(), "jumbo"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "small"), names.end());
}

// `nictunectl rollback A B` through nictuned is one RollbackInterfaces
// call; each interface gets what Rollback alone would say, an unknown one
// its own error, and the others are still rolled back.
TEST_F(DaemonTest, RollsBackSeveralInterfacesInOneCall) {
    ASSERT_EQ(ctl({"apply", "small", "xt0"}).status, 0);
    ASSERT_EQ(mtu("xt0"), 1400U);
    auto rb = ctl({"rollback", "nosuch0", "xt0"});
    EXPECT_EQ(rb.status, 2) << rb.out << rb.err;
    EXPECT_NE(rb.err.find("nosuch0: no such interface"), std::string::npos) << rb.err;
    EXPECT_NE(rb.out.find("xt0"), std::string::npos) << rb.out;
    EXPECT_EQ(mtu("xt0"), 1500U);

    // The method by hand: one result per name, in order, with the error
    // Rollback would raise and the reports as a JSON array.
    ASSERT_EQ(ctl({"apply", "small", "xt0"}).status, 0);
    auto call = run({"busctl", "--address=" + bus_->address(), "--json=short", "call",
                     "org.nictune1", "/org/nictune1", "org.nictune1.Manager", "RollbackInterfaces",
                     "as", "2", "xt0", "nosuch0"});
    ASSERT_EQ(call.status, 0) << call.err;
    const auto reply = parse_json(call.out).at("data");
    const auto& results = reply.at(0);
    ASSERT_EQ(results.size(), 2U) << call.out;
    EXPECT_EQ(results.at(0).at(0), "xt0");
    EXPECT_EQ(results.at(0).at(1), "rolled_back");
    EXPECT_EQ(results.at(0).at(2), "");
    EXPECT_EQ(results.at(1).at(0), "nosuch0");
    EXPECT_EQ(results.at(1).at(2), "org.nictune1.Error.NoSuchInterface");
    EXPECT_EQ(results.at(1).at(3), "nosuch0: no such interface");
    const auto reports = parse_json(reply.at(1).get<std::string>());
    ASSERT_EQ(reports.size(), 2U);
    EXPECT_EQ(reports.at(0).at("result"), "rolled_back") << reports.dump(2);
    // The error's fields, as its JSON error object.
    EXPECT_EQ(reports.at(1).at("error").at("code"), "NoSuchInterface") << reports.dump(2);
    EXPECT_EQ(reports.at(1).at("error").at("interface"), "nosuch0") << reports.dump(2);
    EXPECT_EQ(reports.at(1).at("error").at("text"), "nosuch0: no such interface");
    EXPECT_EQ(mtu("xt0"), 1500U);

    // Not authorized: the whole call is refused, nothing changes.
    ASSERT_EQ(ctl({"apply", "small", "xt0"}).status, 0);
    auto nobody = ctl({"rollback", "xt0", "nt0"}, "65534");
    EXPECT_EQ(nobody.status, 5) << nobody.err;
    EXPECT_EQ(mtu("xt0"), 1400U);
    EXPECT_EQ(mtu("nt0"), 9014U);
}

TEST_F(DaemonTest, NamedErrorsReachTheCaller) {
    auto r = ctl({"apply", "small", "nosuch0"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("nosuch0: no such interface"), std::string::npos) << r.err;
    auto p = ctl({"apply", "no-such-profile", "xt0"});
    EXPECT_EQ(p.status, 2);
    EXPECT_NE(p.err.find("no profile named 'no-such-profile'"), std::string::npos) << p.err;
    // Hand-made calls with bad arguments get named errors, and the daemon stays up.
    auto busctl = run({"busctl", "--address=" + bus_->address(), "call", "org.nictune1",
                       "/org/nictune1", "org.nictune1.Manager", "Apply", "sasa{sv}", "small", "1",
                       std::string(300, 'x'), "0"});
    EXPECT_NE(busctl.status, 0);
    EXPECT_NE(busctl.err.find("is not valid"), std::string::npos) << busctl.err;
    auto sig = run({"busctl", "--address=" + bus_->address(), "call", "org.nictune1",
                    "/org/nictune1", "org.nictune1.Manager", "Rollback", "i", "5"});
    EXPECT_NE(sig.status, 0);
    EXPECT_TRUE(daemon_->running());
    EXPECT_EQ(ctl({"status"}).status, 0);
}

// What an error is about travels in the report's JSON (issue 16 §5): the
// same "interface" and "setting" as a --direct run gives.
TEST_F(DaemonTest, ARefusedApplyNamesItsInterfaceAndSettingInTheReport) {
    write("profiles/huge.toml", "[link]\nmtu = 9000\n[channels]\nrx = 4096\n");
    auto r = ctl({"apply", "huge", "xt0", "--json"});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    auto e = parse_json(r.out).at("error");
    EXPECT_EQ(e.value("interface", ""), "xt0") << e.dump();
    EXPECT_EQ(e.value("setting", ""), "channels.rx") << e.dump();
    EXPECT_NE(mtu("xt0"), 9000U) << "a refused plan changes nothing";
}

// An error nictuned raises (no report: the call itself fails) carries its
// fields across the bus (issue 16 §5): `nictunectl --json` prints the same
// error object and exits with the same status as a --direct run.
TEST_F(DaemonTest, ARaisedErrorNamesItsInterfaceAsADirectRunDoes) {
    for (const auto& command : std::vector<std::vector<std::string>>{
             {"apply", "small", "nosuch0", "--json"}, {"audit", "nosuch0", "--json"}}) {
        auto bus = ctl(command);
        auto direct = direct_ctl(command);
        EXPECT_EQ(bus.status, 2) << bus.out << bus.err;
        EXPECT_EQ(bus.status, direct.status) << direct.out << direct.err;
        const auto error = parse_json(bus.out).at("error");
        EXPECT_EQ(error.at("code"), "NoSuchInterface") << error.dump();
        EXPECT_EQ(error.value("interface", ""), "nosuch0") << error.dump();
        EXPECT_EQ(error.at("text"), "nosuch0: no such interface") << error.dump();
        EXPECT_EQ(error, parse_json(direct.out).at("error")) << direct.out;
    }
}

// One interface of several cannot be rolled back: --json names it with its
// error object, the same through nictuned as directly.
TEST_F(DaemonTest, ARollbackErrorNamesItsInterfaceAsADirectRunDoes) {
    const std::vector<std::string> command{"rollback", "xt0", "nosuch0", "--json"};
    auto bus = ctl(command);
    auto direct = direct_ctl(command);
    EXPECT_EQ(bus.status, 2) << bus.out << bus.err;
    EXPECT_EQ(bus.status, direct.status) << direct.out << direct.err;
    const auto all = parse_json(bus.out).at("rollbacks");
    ASSERT_EQ(all.size(), 2U) << bus.out;
    EXPECT_EQ(all.at(0).at("interface"), "xt0");
    EXPECT_EQ(all.at(1).at("interface"), "nosuch0");
    EXPECT_EQ(all.at(1).at("result"), "refused");
    const auto error = all.at(1).at("error");
    EXPECT_EQ(error.at("code"), "NoSuchInterface") << error.dump();
    EXPECT_EQ(error.value("interface", ""), "nosuch0") << error.dump();
    EXPECT_EQ(error.at("text"), "nosuch0: no such interface") << error.dump();
    EXPECT_EQ(all.at(1), parse_json(direct.out).at("rollbacks").at(1)) << direct.out;
    EXPECT_NE(bus.err.find("nosuch0: no such interface"), std::string::npos) << bus.err;
}

TEST_F(DaemonTest, ARaisedProfileErrorNamesItsSettingAsADirectRunDoes) {
    write("profiles/toobig.toml", "[link]\nmtu = 99999999\n");
    auto bus = ctl({"apply", "toobig", "xt0", "--json"});
    auto direct = direct_ctl({"apply", "toobig", "xt0", "--json"});
    EXPECT_EQ(bus.status, 2) << bus.out << bus.err;
    EXPECT_EQ(bus.status, direct.status) << direct.out << direct.err;
    const auto error = parse_json(bus.out).at("error");
    EXPECT_EQ(error.at("code"), "InvalidProfile") << error.dump();
    EXPECT_EQ(error.value("setting", ""), "link.mtu") << error.dump();
    EXPECT_EQ(error.at("context"), (dir_ / "profiles" / "toobig.toml").string() + ":2:7")
        << error.dump();
    EXPECT_EQ(error, parse_json(direct.out).at("error")) << direct.out;
    EXPECT_EQ(mtu("xt0"), 1500U);
}

// The fields travel after the message, so a client that reads only the
// error's name and message (an older nictunectl, busctl, sd_bus_call) gets
// what it always got: the whole text as the message.
TEST_F(DaemonTest, AClientThatReadsOnlyNameAndMessageGetsTheWholeText) {
    auto conn = sdbus::createSessionBusConnectionWithAddress(bus_->address());
    auto proxy = sdbus::createProxy(*conn, "org.nictune1", "/org/nictune1");
    try {
        std::string tx, result, report;
        std::vector<sdbus::Struct<std::string, std::string, std::string, std::string, std::string,
                                  std::string>>
            outcomes;
        proxy->callMethod("Apply")
            .onInterface("org.nictune1.Manager")
            .withArguments(std::string("small"), std::vector<std::string>{"nosuch0"},
                           std::map<std::string, sdbus::Variant>{})
            .storeResultsTo(tx, result, outcomes, report);
        ADD_FAILURE() << "Apply to an unknown interface succeeded: " << report;
    } catch (const sdbus::Error& e) {
        EXPECT_EQ(e.getName(), "org.nictune1.Error.NoSuchInterface");
        EXPECT_EQ(e.getMessage(), "nosuch0: no such interface");
    }
    auto busctl =
        run({"busctl", "--address=" + bus_->address(), "call", "org.nictune1", "/org/nictune1",
             "org.nictune1.Manager", "Apply", "sasa{sv}", "small", "1", "nosuch0", "0"});
    EXPECT_NE(busctl.status, 0);
    EXPECT_NE(busctl.err.find("nosuch0: no such interface"), std::string::npos) << busctl.err;
    EXPECT_TRUE(daemon_->running());
}

TEST_F(DaemonTest, AnUnprivilegedCallerMayAuditButNotApply) {
    auto audit = ctl({"audit", "xt0", "--json"}, "65534");
    EXPECT_TRUE(audit.status == 0 || audit.status == 1) << audit.err;
    EXPECT_EQ(parse_json(audit.out).at("interfaces").at(0).at("name"), "xt0");
    auto apply = ctl({"apply", "small", "xt0"}, "65534");
    EXPECT_EQ(apply.status, 5) << apply.out << apply.err;
    EXPECT_NE(apply.err.find("may not change settings: only root may"), std::string::npos)
        << apply.err;
    auto rb = ctl({"rollback", "nt0"}, "65534");
    EXPECT_EQ(rb.status, 5);
    EXPECT_EQ(mtu("xt0"), 1500U);
    EXPECT_EQ(mtu("nt0"), 9014U);
}

TEST_F(DaemonTest, OnlyRootMayOwnTheBusName) {
    Child::Options o;
    o.uid = 65534;
    o.gid = 65534;
    o.stderr_log = dir_ / "nobody.log";
    std::string why;
    auto impostor =
        Child::start({kDaemon, "--bus-address", bus_->address(), "--config",
                      "/nonexistent/nictune.toml", "--state-dir", (dir_ / "nobody-state").string()},
                     o, &why);
    ASSERT_TRUE(impostor) << why;
    EXPECT_EQ(impostor->wait(10000ms), 1);
    std::ifstream in(dir_ / "nobody.log");
    std::string text(std::istreambuf_iterator<char>(in), {});
    EXPECT_NE(text.find("cannot own org.nictune1"), std::string::npos) << text;
}

TEST_F(DaemonTest, AppliesToAMatchingInterfaceThatAppearsAndFollowsItsRenames) {
    ASSERT_EQ(ns_->exec("ip link add name hp0 type veth peer name yp0").status, 0);
    EXPECT_TRUE(eventually([&] { return mtu("hp0") == 9014; })) << log();
    int ifindex = parse_json(ns_->exec("ip -j link show hp0").out).at(0).at("ifindex");
    ASSERT_EQ(ns_->exec("ip link set hp0 name zz0").status, 0);
    EXPECT_TRUE(eventually([&] {
        const auto st = status();
        for (const auto& i : st.at("interfaces"))
            if (i.at("ifindex") == ifindex) return i.at("name") == "zz0";
        return false;
    })) << status().dump(2);
    // Still enforced under its new name (the binding said hp*, enforce).
    ASSERT_EQ(ns_->exec("ip link set zz0 mtu 1500").status, 0);
    EXPECT_TRUE(eventually([&] { return mtu("zz0") == 9014; })) << log();
}

// A new link's read takes its rtnetlink part from the RTM_NEWLINK the daemon
// heard (no second GET): what it saves must still be what the kernel had.
TEST_F(DaemonTest, ANewLinkIsSavedAsTheKernelHadItAndRollsBackToIt) {
    ASSERT_EQ(ns_->exec("ip link add name hp3 mtu 1280 type veth peer name yp3").status, 0);
    EXPECT_TRUE(eventually([&] { return mtu("hp3") == 9014; })) << log();
    const auto st = status();
    bool seen = false;
    for (const auto& i : st.at("interfaces"))
        if (i.at("name") == "hp3") seen = i.at("last_result") == "applied";
    EXPECT_TRUE(seen) << st.dump(2);
    auto rb = ctl({"rollback", "hp3"});
    ASSERT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(mtu("hp3"), 1280U) << rb.out;
}

TEST_F(DaemonTest, ReportsDriftAndRepairsItWhenEnforced) {
    auto conn = sdbus::createSessionBusConnectionWithAddress(bus_->address());
    std::mutex m;
    std::vector<std::tuple<std::string, std::string, std::string, bool>> drifts;
    auto proxy = sdbus::createProxy(*conn, "org.nictune1", "/org/nictune1");
    proxy->uponSignal("Drift")
        .onInterface("org.nictune1.Manager")
        .call([&](const std::string& iface, const std::string& key, const std::string&,
                  const std::string& actual, bool enforced) {
            std::lock_guard g(m);
            drifts.emplace_back(iface, key, actual, enforced);
        });
    proxy->finishRegistration();
    conn->enterEventLoopAsync();

    // nt* is bound without enforce: drift is reported, not repaired.
    ASSERT_EQ(ns_->exec("ip link set nt0 mtu 1500").status, 0);
    EXPECT_TRUE(eventually([&] {
        std::lock_guard g(m);
        return !drifts.empty();
    })) << log();
    {
        std::lock_guard g(m);
        ASSERT_FALSE(drifts.empty());
        EXPECT_EQ(std::get<0>(drifts[0]), "nt0");
        EXPECT_EQ(std::get<1>(drifts[0]), "link.mtu");
        EXPECT_EQ(std::get<2>(drifts[0]), "1500");
        EXPECT_FALSE(std::get<3>(drifts[0]));
    }
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(mtu("nt0"), 1500U);
    auto s = status();
    EXPECT_EQ(s.at("interfaces").at(0).at("drifted"), nlohmann::json::array({"link.mtu"}))
        << s.dump(2);

    // With enforce (after a reload), the value comes back on its own.
    config("[[bind]]\nprofile = \"jumbo\"\ninterface = \"nt*\"\nenforce = true\n");
    auto reload = ctl({"reload"});
    ASSERT_EQ(reload.status, 0) << reload.err;
    EXPECT_EQ(mtu("nt0"), 9014U) << "a reload applies the bindings";
    ASSERT_EQ(ns_->exec("ethtool -K nt0 gro off").status, 0);
    EXPECT_TRUE(eventually([&] {
        return parse_json(ns_->exec("ethtool --json -k nt0").out)
                   .at(0)
                   .at("generic-receive-offload")
                   .at("active") == true;
    })) << log();
    conn->leaveEventLoop();
}

TEST_F(DaemonTest, ABrokenConfigurationOnReloadKeepsTheOldBindings) {
    config("[[bind]]\nprofile = \"jumbo\"\ninterfaces = \"nt*\"\n");
    auto r = ctl({"reload"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find((dir_ / "nictune.toml").string() + ":3:1: unknown key 'interfaces'"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(status().at("bindings").size(), 2U);
    // SIGHUP with the same broken file: logged with file:line:column, old bindings kept.
    kill(daemon_->pid(), SIGHUP);
    EXPECT_TRUE(eventually(
        [&] { return log().find(":3:1: unknown key 'interfaces'") != std::string::npos; }));
    auto s = status();
    EXPECT_EQ(s.at("bindings").size(), 2U);
    EXPECT_FALSE(s.at("config_error").is_null());
    // The old binding still works for a new interface.
    ASSERT_EQ(ns_->exec("ip link add name hp5 type veth peer name yp5").status, 0);
    EXPECT_TRUE(eventually([&] { return mtu("hp5") == 9014; })) << log();
}

TEST_F(DaemonTest, InterfacesVanishingDuringApplyDoNotHurtTheDaemon) {
    // Create and delete matching interfaces as fast as possible: some vanish
    // while the daemon applies to them.
    for (int i = 0; i < 20; ++i)
        ns_->exec("ip link add name hp" + std::to_string(i) + " type veth peer name yq" +
                  std::to_string(i) + " && ip link del hp" + std::to_string(i));
    EXPECT_TRUE(eventually([&] { return ctl({"status"}).status == 0; }));
    EXPECT_TRUE(daemon_->running()) << log();
    const auto st = status();
    for (const auto& i : st.at("interfaces"))
        EXPECT_FALSE(i.at("name").get<std::string>().starts_with("hp"));
    // And it still does its job.
    ASSERT_EQ(ns_->exec("ip link add name hp99 type veth peer name yq99").status, 0);
    EXPECT_TRUE(eventually([&] { return mtu("hp99") == 9014; })) << log();
}

TEST_F(DaemonTest, StopsCleanlyOnSigterm) {
    kill(daemon_->pid(), SIGTERM);
    EXPECT_EQ(daemon_->wait(10000ms), 0) << log();
    EXPECT_NE(log().find("stopping"), std::string::npos);
}

}  // namespace
}  // namespace nictune::test
