// tuned's D-Bus API on a private dbus-daemon (tests/data/tuned/bus.conf) with
// a stand-in tuned: a forked copy of this test process that owns
// com.redhat.tuned and serves /Tuned through sdbus-c++. Every process the
// tests start is stopped by its PID; nothing touches the system bus.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "support/process.hpp"
#include "tuned/tuned_client.hpp"

namespace nictune::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kIface = "com.redhat.tuned.control";

// Reads one line from fd within the time limit.
std::string read_line(int fd, std::chrono::milliseconds limit) {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return {};
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        char c = 0;
        const ssize_t n = read(fd, &c, 1);
        if (n <= 0) return {};
        if (c == '\n') return line;
        line += c;
    }
}

void stop_child(pid_t& pid) {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(10ms);
    }
    pid = -1;
}

// The stand-in tuned: profile state, active_profile and switch_profile, as
// tuned answers them. Runs in the forked child until it is killed.
[[noreturn]] void serve_fake_tuned(const std::string& address, const std::string& initial,
                                   int ready_fd) {
    try {
        std::string profile = initial;
        const std::set<std::string> known = {"balanced", "latency-performance",
                                             "throughput-performance", "virtual-guest"};
        auto conn = sdbus::createSessionBusConnectionWithAddress(address);
        auto obj = sdbus::createObject(*conn, "/Tuned");
        obj->registerMethod("active_profile").onInterface(kIface).implementedAs([&] {
            return profile;
        });
        obj->registerMethod("switch_profile")
            .onInterface(kIface)
            .implementedAs([&](const std::string& name) {
                if (!known.contains(name))
                    return sdbus::make_struct(false,
                                              "Requested profile '" + name + "' doesn't exist.");
                profile = name;
                return sdbus::make_struct(true, std::string("OK"));
            });
        obj->finishRegistration();
        conn->requestName("com.redhat.tuned");
        (void)!write(ready_fd, "1", 1);
        close(ready_fd);
        conn->enterEventLoop();
    } catch (...) {
    }
    _exit(1);
}

class TunedBus : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon for a private bus";
        char tmpl[] = "/tmp/nictune-tunedbus-XXXXXX";
        const char* dir = mkdtemp(tmpl);
        ASSERT_NE(dir, nullptr) << std::strerror(errno);
        dir_ = dir;
        marker_ = dir_ / "activated";
        opts_.config_dir = dir_ / "etc-tuned";
        opts_.active_profile_file = opts_.config_dir / "active_profile";
        start_bus();
        ASSERT_FALSE(address_.empty()) << "dbus-daemon did not print its address";
        opts_.bus_address = address_;
    }
    void TearDown() override {
        stop_child(tuned_pid_);
        stop_child(bus_pid_);
        std::error_code ec;
        if (!dir_.empty()) fs::remove_all(dir_, ec);
    }

    void start_bus() {
        const std::string config = std::string(NICTUNE_TEST_DATA) + "/tuned/bus.conf";
        int out[2];
        ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
        const pid_t parent = getpid();
        bus_pid_ = fork();
        ASSERT_GE(bus_pid_, 0);
        if (bus_pid_ == 0) {
            // Dies with the test process even if it crashes.
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent) _exit(1);
            dup2(out[1], 1);
            // Its warnings (e.g. about the fd limit) go to a log beside the socket.
            const int log = open((dir_ / "dbus-daemon.log").c_str(),
                                 O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (log >= 0) dup2(log, 2);
            // The activatable stand-in (services/) leaves this marker.
            setenv("NICTUNE_TUNED_ACTIVATION_MARKER", marker_.c_str(), 1);
            const std::string conf_arg = "--config-file=" + config;
            const std::string addr_arg = "--address=unix:dir=" + dir_.string();
            execlp("dbus-daemon", "dbus-daemon", conf_arg.c_str(), addr_arg.c_str(), "--nofork",
                   "--nopidfile", "--print-address=1", static_cast<char*>(nullptr));
            _exit(127);
        }
        close(out[1]);
        address_ = read_line(out[0], 10s);
        close(out[0]);
    }

    void start_tuned(const std::string& profile) {
        int ready[2];
        ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
        const pid_t parent = getpid();
        tuned_pid_ = fork();
        ASSERT_GE(tuned_pid_, 0);
        if (tuned_pid_ == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent) _exit(1);
            close(ready[0]);
            serve_fake_tuned(address_, profile, ready[1]);
        }
        close(ready[1]);
        const std::string ok = [&] {
            pollfd p{ready[0], POLLIN, 0};
            char c = 0;
            if (poll(&p, 1, 10000) == 1 && read(ready[0], &c, 1) == 1) return std::string(1, c);
            return std::string();
        }();
        close(ready[0]);
        ASSERT_EQ(ok, "1") << "the stand-in tuned did not take its name";
    }

    void write_active_file(const std::string& text) {
        fs::create_directories(opts_.config_dir);
        std::ofstream(opts_.active_profile_file) << text;
    }

    fs::path dir_;
    fs::path marker_;
    std::string address_;
    pid_t bus_pid_ = -1;
    pid_t tuned_pid_ = -1;
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
    auto conn = sdbus::createSessionBusConnectionWithAddress(address_);
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
    setenv("DBUS_SYSTEM_BUS_ADDRESS", address_.c_str(), 1);
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
    stop_child(tuned_pid_);
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
