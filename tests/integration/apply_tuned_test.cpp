// `nictunectl apply` with a [tuned] section (issue 3): the profile switch goes
// through tuned's D-Bus API, is saved for rollback, and rollback switches
// back. tuned is the stand-in (nictune_fake_tuned) on a private dbus-daemon
// that nictunectl reaches through DBUS_SYSTEM_BUS_ADDRESS; the device part
// runs on a veth pair in a namespace this test creates. Without tuned on the
// bus the tuned step is unsupported and the rest still applies; whether the
// product then says "not installed" or "not running" depends on /etc/tuned,
// which each test sets in its own view of the host (support/host_view.hpp),
// both ways, whatever the host has installed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/dbus.hpp"
#include "support/host_view.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"
#include "support/paths.hpp"
#include "tuned/tuned_client.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;

class ApplyTuned : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon for a private bus";
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        // The default of the view; a test that wants tuned installed says so.
        ASSERT_EQ(set_tuned(HostTuned::NotInstalled), "");
        ASSERT_EQ(ns_->exec("ip link add name tt0 type veth peer name tt1 && ip link set tt0 up && "
                            "ip link set tt1 up")
                      .status,
                  0);
        bus_ = PrivateBus::start(fs::path(NICTUNE_TEST_DATA) / "tuned" / "bus.conf", &why_);
        ASSERT_TRUE(bus_) << why_;
        char tmpl[] = "/tmp/nictune-tuned-apply-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        chmod(tmpl, 0755);
        fs::create_directory(dir_ / "profiles");
        chmod((dir_ / "profiles").c_str(), 0755);
        std::ofstream(dir_ / "profiles" / "lowlat.toml")
            << "[link]\nmtu = 9000\n[tuned]\nprofile = \"latency-performance\"\n";
    }
    void TearDown() override {
        tuned_.reset();
        bus_.reset();
        if (!dir_.empty()) fs::remove_all(dir_);
    }
    CommandResult ctl(const std::vector<std::string>& args) {
        std::vector<std::string> argv = {"env",
                                         "DBUS_SYSTEM_BUS_ADDRESS=" + bus_->address(),
                                         kCtl,
                                         "--direct",
                                         "--profiles-dir",
                                         (dir_ / "profiles").string(),
                                         "--state-dir",
                                         (dir_ / "state").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return ns_->exec_argv(argv, 60000);
    }
    // What tuned says is active, asked over the bus as tuned-adm would.
    std::string active() {
        tuned::Options o;
        o.bus_address = bus_->address();
        o.config_dir = dir_ / "no-etc-tuned";
        o.active_profile_file = o.config_dir / "active_profile";
        return tuned::read_state(o).active_profile.value_or("(none)");
    }
    unsigned mtu() {
        auto j = parse_json(ns_->exec("ip -j link show tt0").out);
        return j.is_array() && !j.empty() ? j.at(0).value("mtu", 0U) : 0U;
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
    std::unique_ptr<PrivateBus> bus_;
    std::unique_ptr<Child> tuned_;
    fs::path dir_;
};

TEST_F(ApplyTuned, SwitchesTunedAndRollbackSwitchesBack) {
    tuned_ = start_fake_tuned(*bus_, "balanced", &why_);
    ASSERT_TRUE(tuned_) << why_;
    ASSERT_EQ(active(), "balanced");

    auto r = ctl({"apply", "lowlat", "tt0", "--json"});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.at("system").size(), 1U) << r.out;
    const auto& step = j.at("system").at(0);
    EXPECT_EQ(step.at("key"), "tuned.profile");
    EXPECT_EQ(step.at("current"), "balanced");
    EXPECT_EQ(step.at("outcome"), "applied") << step.dump();
    EXPECT_EQ(step.at("actual"), "latency-performance");
    EXPECT_EQ(active(), "latency-performance") << "tuned itself says so";
    EXPECT_EQ(mtu(), 9000U);

    auto rb = ctl({"rollback", "tt0"});
    EXPECT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(active(), "balanced") << rb.out;
    EXPECT_EQ(mtu(), 1500U);
}

// Nobody owns com.redhat.tuned on this bus in the tests below (and it is
// not activatable without the marker the stand-in's activation file needs).
// The tuned step is unsupported, the note says why, and the rest applies
// and rolls back.
void expect_tuned_step_unsupported(const CommandResult& r, const std::string& note) {
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("result"), "applied");
    ASSERT_EQ(j.at("system").size(), 1U) << r.out;
    EXPECT_EQ(j.at("system").at(0).at("outcome"), "unsupported") << r.out;
    EXPECT_NE(j.at("system").at(0).at("note").get<std::string>().find(note), std::string::npos)
        << "expected \"" << note << "\" in " << r.out;
}

TEST_F(ApplyTuned, WhenTunedIsNotInstalledTheTunedStepIsUnsupportedAndTheRestApplies) {
    ASSERT_EQ(set_tuned(HostTuned::NotInstalled), "");
    auto audit = ctl({"audit", "tt0", "--profile", "lowlat", "--json"});
    auto a = parse_json(audit.out);
    ASSERT_TRUE(a.is_object()) << audit.out << audit.err;
    EXPECT_EQ(a.at("tuned").at("source"), "not installed") << audit.out;
    bool info = false;
    for (const auto& f : a.at("interfaces").at(0).at("findings"))
        if (f.at("key") == "tuned.profile")
            info = f.at("severity") == "info" && f.at("message").get<std::string>().find(
                                                     "tuned is not installed") != std::string::npos;
    EXPECT_TRUE(info) << audit.out;

    auto r = ctl({"apply", "lowlat", "tt0", "--json"});
    expect_tuned_step_unsupported(r, "tuned is not installed");
    EXPECT_EQ(mtu(), 9000U);
    auto rb = ctl({"rollback", "tt0"});
    EXPECT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(mtu(), 1500U);
}

TEST_F(ApplyTuned, WhenTunedIsInstalledButNotRunningTheTunedStepIsUnsupportedAndTheRestApplies) {
    // What a machine with the tuned package but no tuned daemon has.
    ASSERT_EQ(set_tuned(HostTuned::Installed, "balanced"), "");
    auto audit = ctl({"audit", "tt0", "--profile", "lowlat", "--json"});
    auto a = parse_json(audit.out);
    ASSERT_TRUE(a.is_object()) << audit.out << audit.err;
    EXPECT_EQ(audit.status, 1) << "a tuned profile other than the wanted one is a warning";
    EXPECT_EQ(a.at("tuned").at("source"), "file") << audit.out;
    EXPECT_EQ(a.at("tuned").at("active_profile"), "balanced") << audit.out;
    bool warned = false;
    for (const auto& f : a.at("interfaces").at(0).at("findings"))
        if (f.at("key") == "tuned.profile")
            warned = f.at("severity") == "warn" && f.at("actual") == "balanced";
    EXPECT_TRUE(warned) << audit.out;

    auto r = ctl({"apply", "lowlat", "tt0", "--json"});
    expect_tuned_step_unsupported(r, "tuned is not running");
    EXPECT_EQ(mtu(), 9000U);
    auto rb = ctl({"rollback", "tt0"});
    EXPECT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(mtu(), 1500U);
}

}  // namespace
}  // namespace nictune::test
