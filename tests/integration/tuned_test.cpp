// tuned's D-Bus API on a private dbus-daemon (tests/data/tuned/bus.conf) with
// the stand-in tuned (nictune_fake_tuned). Every process the tests start is
// stopped by its PID; nothing touches the system bus.
#include <gtest/gtest.h>
#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "support/dbus.hpp"
#include "support/process.hpp"
#include "tuned/tuned_client.hpp"

namespace nictune::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kIface = "com.redhat.tuned.control";

class TunedBus : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon for a private bus";
        std::string why;
        bus_ = PrivateBus::start(fs::path(NICTUNE_TEST_DATA) / "tuned" / "bus.conf", &why);
        ASSERT_TRUE(bus_) << why;
        // The bus's directory goes away with the bus, and so does all of this.
        marker_ = bus_->dir() / "activated";
        opts_.config_dir = bus_->dir() / "etc-tuned";
        opts_.active_profile_file = opts_.config_dir / "active_profile";
        opts_.bus_address = bus_->address();
        // The activatable stand-in (tests/data/tuned/services) leaves the
        // marker this variable names. Set on the bus rather than in our own
        // environment, so that it reaches only this bus's activations.
        auto conn = sdbus::createSessionBusConnectionWithAddress(bus_->address());
        auto driver = sdbus::createProxy(*conn, "org.freedesktop.DBus", "/org/freedesktop/DBus");
        driver->callMethod("UpdateActivationEnvironment")
            .onInterface("org.freedesktop.DBus")
            .withTimeout(5s)
            .withArguments(std::map<std::string, std::string>{
                {"NICTUNE_TUNED_ACTIVATION_MARKER", marker_.string()}});
    }
    void TearDown() override {
        tuned_.reset();
        bus_.reset();
    }

    void start_tuned(const std::string& profile) {
        std::string why;
        tuned_ = start_fake_tuned(*bus_, profile, &why);
        ASSERT_TRUE(tuned_) << why;
    }

    void write_active_file(const std::string& text) {
        fs::create_directories(opts_.config_dir);
        std::ofstream(opts_.active_profile_file) << text;
    }

    std::unique_ptr<PrivateBus> bus_;
    std::unique_ptr<Child> tuned_;
    fs::path marker_;
    tuned::Options opts_;
};

TEST_F(TunedBus, ReadsTheActiveProfileFromTunedOnTheBus) {
    start_tuned("virtual-guest");
    // The file says something else: the running daemon wins.
    write_active_file("balanced\n");
    const TunedState st = tuned::read_state(opts_);
    EXPECT_EQ(st.source, TunedSource::Dbus) << st.detail;
    EXPECT_EQ(st.active_profile, "virtual-guest");
}

TEST_F(TunedBus, SwitchProfileChangesTheActiveProfile) {
    start_tuned("virtual-guest");
    auto r = tuned::switch_profile(opts_, "latency-performance");
    ASSERT_TRUE(r) << r.error().str();
    const TunedState st = tuned::read_state(opts_);
    EXPECT_EQ(st.source, TunedSource::Dbus) << st.detail;
    EXPECT_EQ(st.active_profile, "latency-performance");
}

TEST_F(TunedBus, SwitchProfileReportsTunedsOwnRefusal) {
    start_tuned("virtual-guest");
    auto r = tuned::switch_profile(opts_, "no-such-profile");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::Kernel);
    EXPECT_NE(r.error().message.find("Requested profile 'no-such-profile' doesn't exist."),
              std::string::npos)
        << r.error().str();
    EXPECT_NE(r.error().context.find("no-such-profile"), std::string::npos);
    EXPECT_EQ(tuned::read_state(opts_).active_profile, "virtual-guest");
}

TEST_F(TunedBus, UsesTheFileWhenNobodyOwnsTheNameAndNeverStartsTuned) {
    write_active_file("throughput-performance\n");
    const TunedState st = tuned::read_state(opts_);
    EXPECT_EQ(st.source, TunedSource::File);
    EXPECT_EQ(st.active_profile, "throughput-performance");
    EXPECT_NE(st.detail.find("not running"), std::string::npos) << st.detail;

    auto r = tuned::switch_profile(opts_, "balanced");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::Unsupported);

    // Give an activation, had one been requested, time to leave its marker.
    std::this_thread::sleep_for(300ms);
    EXPECT_FALSE(fs::exists(marker_)) << "reading tuned's state D-Bus-activated tuned";
}

// The control for the test above: a call to the well-known name does start
// the activatable stand-in, so a missing marker there means something.
TEST_F(TunedBus, ActivationLeavesTheMarkerWhenACallNamesTuned) {
    auto conn = sdbus::createSessionBusConnectionWithAddress(bus_->address());
    auto proxy = sdbus::createProxy(*conn, "com.redhat.tuned", "/Tuned");
    std::string profile;
    // The stand-in exits without taking the name, so this call fails.
    EXPECT_THROW(proxy->callMethod("active_profile")
                     .onInterface(kIface)
                     .withTimeout(500ms)
                     .storeResultsTo(profile),
                 sdbus::Error);
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!fs::exists(marker_) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(fs::exists(marker_));
}

TEST_F(TunedBus, ReportsNoActiveProfileWhenTunedAnswersEmpty) {
    start_tuned("");
    const TunedState st = tuned::read_state(opts_);
    EXPECT_EQ(st.source, TunedSource::Dbus) << st.detail;
    EXPECT_FALSE(st.active_profile);
}

TEST_F(TunedBus, HonoursDbusSystemBusAddressForTheSystemBus) {
    start_tuned("balanced");
    const char* old = std::getenv("DBUS_SYSTEM_BUS_ADDRESS");
    const std::string saved = old ? old : "";
    setenv("DBUS_SYSTEM_BUS_ADDRESS", bus_->address().c_str(), 1);
    tuned::Options system_bus = opts_;
    system_bus.bus_address.clear();
    const TunedState st = tuned::read_state(system_bus);
    if (old)
        setenv("DBUS_SYSTEM_BUS_ADDRESS", saved.c_str(), 1);
    else
        unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
    EXPECT_EQ(st.source, TunedSource::Dbus) << st.detail;
    EXPECT_EQ(st.active_profile, "balanced");
}

TEST_F(TunedBus, FallsBackWhenTunedHasGoneAway) {
    start_tuned("balanced");
    ASSERT_EQ(tuned::read_state(opts_).source, TunedSource::Dbus);
    tuned_->stop();
    // The bus drops the name when the owner's connection closes.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    TunedState st;
    do {
        st = tuned::read_state(opts_);
    } while (st.source == TunedSource::Dbus && std::chrono::steady_clock::now() < deadline);
    EXPECT_EQ(st.source, TunedSource::NotInstalled) << st.detail;
    EXPECT_FALSE(fs::exists(marker_));
}

}  // namespace
}  // namespace nictune::test
