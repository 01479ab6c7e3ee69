// The support the D-Bus tests stand on (tests/support/dbus.hpp): child
// processes that start, report, stop and die with the test; private buses
// that answer and clean up; the stand-in tuned. A flaw here would make the
// tuned and daemon tests pass or fail for the wrong reason.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/dbus.hpp"
#include "support/process.hpp"

namespace nictune::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;
constexpr gid_t kExtraGroup = 100;
constexpr const char* kTunedName = "com.redhat.tuned";
constexpr const char* kTunedIface = "com.redhat.tuned.control";

fs::path bus_config() {
    return fs::path(NICTUNE_TEST_DATA) / "tuned" / "bus.conf";
}

// A scratch directory removed at the end of the test.
class TempDir {
  public:
    TempDir() {
        char tmpl[] = "/tmp/nictune-support-XXXXXX";
        if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] const fs::path& path() const { return path_; }

  private:
    fs::path path_;
};

std::string slurp(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Collects the child's stdout until `needle` shows up or the time is over.
std::string read_until(Child& child, const std::string& needle, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    std::string out;
    while (out.find(needle) == std::string::npos && Clock::now() < deadline) {
        out += child.read_available_stdout();
        std::this_thread::sleep_for(5ms);
    }
    return out;
}

// One line of /proc/PID/status, e.g. "Uid:\t0\t0\t0\t0".
std::string status_line(const std::string& status, const std::string& key) {
    std::istringstream lines(status);
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with(key + ":")) return line;
    return {};
}

bool bus_has_owner(const std::string& address, const std::string& name) {
    auto conn = sdbus::createSessionBusConnectionWithAddress(address);
    auto driver = sdbus::createProxy(*conn, "org.freedesktop.DBus", "/org/freedesktop/DBus");
    bool owned = false;
    driver->callMethod("NameHasOwner")
        .onInterface("org.freedesktop.DBus")
        .withTimeout(5s)
        .withArguments(name)
        .storeResultsTo(owned);
    return owned;
}

// Starts a Child from a forked process that then dies without stopping it,
// and returns how that Child ended. The test process is made a subreaper so
// that the orphan is re-parented to it and can be reaped by PID.
std::optional<int> fate_of_orphaned_child(const Child::Options& opts, std::string* why) {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        *why = std::string("PR_SET_CHILD_SUBREAPER: ") + std::strerror(errno);
        return std::nullopt;
    }
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        *why = std::string("pipe: ") + std::strerror(errno);
        return std::nullopt;
    }
    const pid_t middle = fork();
    if (middle == 0) {
        close(report[0]);
        std::string child_why;
        auto child = Child::start({"sleep", "60"}, opts, &child_why);
        const pid_t pid = child ? child->pid() : -1;
        (void)!write(report[1], &pid, sizeof pid);
        // _exit: no destructor runs, so nothing but the kernel stops `child`.
        _exit(0);
    }
    close(report[1]);
    pid_t orphan = -1;
    pollfd p{report[0], POLLIN, 0};
    if (middle > 0 && poll(&p, 1, 10000) == 1) (void)!read(report[0], &orphan, sizeof orphan);
    close(report[0]);
    if (middle > 0) waitpid(middle, nullptr, 0);

    std::optional<int> fate;
    if (orphan > 0) {
        const auto deadline = Clock::now() + 5s;
        int raw = 0;
        while (Clock::now() < deadline) {
            if (waitpid(orphan, &raw, WNOHANG) == orphan) {
                fate = WIFSIGNALED(raw) ? 128 + WTERMSIG(raw) : WEXITSTATUS(raw);
                break;
            }
            std::this_thread::sleep_for(10ms);
        }
        if (!fate) {
            *why = "the child outlived the process that started it";
            kill(orphan, SIGKILL);
            waitpid(orphan, nullptr, 0);
        }
    } else {
        *why = "the forked process could not start its child";
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    return fate;
}

TEST(Child, StopEndsTheProcessWithSigterm) {
    std::string why;
    auto child = Child::start({"sleep", "60"}, {}, &why);
    ASSERT_TRUE(child) << why;
    EXPECT_TRUE(child->running());
    const auto began = Clock::now();
    child->stop();
    EXPECT_LT(Clock::now() - began, 2s);
    EXPECT_FALSE(child->running());
    EXPECT_EQ(child->wait(0ms), 128 + SIGTERM);
}

TEST(Child, StopKillsAProcessThatIgnoresSigterm) {
    std::string why;
    Child::Options opts;
    // The ready line proves the trap is in place before stop() is called.
    opts.ready_line = "ready";
    auto child = Child::start({"sh", "-c", "trap '' TERM; echo ready; exec sleep 60"}, opts, &why);
    ASSERT_TRUE(child) << why;
    const auto began = Clock::now();
    child->stop();
    EXPECT_GE(Clock::now() - began, 4s) << "SIGTERM should have been ignored";
    EXPECT_EQ(child->wait(0ms), 128 + SIGKILL);
}

TEST(Child, KillHardDoesNotWaitForTheGracePeriod) {
    std::string why;
    Child::Options opts;
    opts.ready_line = "ready";
    auto child = Child::start({"sh", "-c", "trap '' TERM; echo ready; exec sleep 60"}, opts, &why);
    ASSERT_TRUE(child) << why;
    const auto began = Clock::now();
    child->kill_hard();
    EXPECT_LT(Clock::now() - began, 2s);
    EXPECT_EQ(child->wait(0ms), 128 + SIGKILL);
}

TEST(Child, DiesWithTheProcessThatStartedIt) {
    std::string why;
    const auto fate = fate_of_orphaned_child({}, &why);
    ASSERT_TRUE(fate) << why;
    EXPECT_EQ(*fate, 128 + SIGTERM);
}

// The kernel clears the parent-death signal when credentials change, so this
// fails if Child sets it before dropping to nobody.
TEST(Child, RunningAsNobodyStillDiesWithTheProcessThatStartedIt) {
    if (!is_root()) GTEST_SKIP() << "needs root to run a child as nobody";
    Child::Options opts;
    opts.uid = kNobody;
    opts.gid = kNogroup;
    std::string why;
    const auto fate = fate_of_orphaned_child(opts, &why);
    ASSERT_TRUE(fate) << why;
    EXPECT_EQ(*fate, 128 + SIGTERM);
}

TEST(Child, RunsAsNobodyWithoutRootsGroups) {
    if (!is_root()) GTEST_SKIP() << "needs root to run a child as nobody";
    // A supplementary group for the child to shed; the test runner may have
    // none of its own.
    const int count = getgroups(0, nullptr);
    ASSERT_GE(count, 0) << std::strerror(errno);
    std::vector<gid_t> saved(static_cast<size_t>(count));
    ASSERT_EQ(getgroups(count, saved.data()), count) << std::strerror(errno);
    std::vector<gid_t> with_extra = saved;
    with_extra.push_back(kExtraGroup);
    ASSERT_EQ(setgroups(with_extra.size(), with_extra.data()), 0) << std::strerror(errno);
    Child::Options opts;
    opts.uid = kNobody;
    opts.gid = kNogroup;
    std::string why;
    auto child = Child::start({"cat", "/proc/self/status"}, opts, &why);
    ASSERT_EQ(setgroups(saved.size(), saved.data()), 0) << std::strerror(errno);
    ASSERT_TRUE(child) << why;
    ASSERT_EQ(child->wait(5s), 0);
    const std::string status = child->read_available_stdout();
    // Real, effective, saved and filesystem ids.
    EXPECT_EQ(status_line(status, "Uid"), "Uid:\t65534\t65534\t65534\t65534") << status;
    EXPECT_EQ(status_line(status, "Gid"), "Gid:\t65534\t65534\t65534\t65534") << status;
    // No supplementary groups: "Groups:" and blanks.
    const std::string groups = status_line(status, "Groups");
    EXPECT_EQ(groups.substr(0, groups.find_last_not_of(" \t") + 1), "Groups:") << status;
}

TEST(Child, PassesItsEnvironmentAndKeepsOutputAfterTheReadyLine) {
    TempDir tmp;
    ASSERT_FALSE(tmp.path().empty());
    Child::Options opts;
    opts.env = {"NICTUNE_SUPPORT_TEST=from the test", "HOME=/nonexistent/home"};
    opts.stderr_log = tmp.path() / "stderr.log";
    opts.ready_line = "ready";
    std::string why;
    auto child = Child::start({"sh", "-c",
                               "echo early; echo ready; echo to-stderr >&2; "
                               "echo \"$NICTUNE_SUPPORT_TEST $HOME\"; exec sleep 60"},
                              opts, &why);
    ASSERT_TRUE(child) << why;
    // Nothing up to the ready line, nothing lost after it; HOME replaced,
    // not duplicated.
    EXPECT_EQ(read_until(*child, "\n", 5s), "from the test /nonexistent/home\n");
    child->stop();
    EXPECT_EQ(slurp(opts.stderr_log), "to-stderr\n");
}

TEST(Child, ExplainsAProgramThatCannotStart) {
    std::string why;
    auto child = Child::start({"/nonexistent/nictune-program"}, {}, &why);
    EXPECT_FALSE(child);
    EXPECT_NE(why.find("/nonexistent/nictune-program: exec: No such file or directory"),
              std::string::npos)
        << why;
}

TEST(Child, ExplainsAProgramThatExitsBeforeItIsReady) {
    TempDir tmp;
    ASSERT_FALSE(tmp.path().empty());
    Child::Options opts;
    opts.ready_line = "ready";
    opts.stderr_log = tmp.path() / "stderr.log";
    std::string why;
    auto child = Child::start({"sh", "-c", "echo 'cannot listen' >&2; exit 3"}, opts, &why);
    EXPECT_FALSE(child);
    EXPECT_NE(why.find("exited (status 3) before printing \"ready\""), std::string::npos) << why;
    EXPECT_NE(why.find("cannot listen"), std::string::npos) << why;
}

TEST(Child, GivesUpOnAProgramThatNeverGetsReady) {
    Child::Options opts;
    opts.ready_line = "ready";
    opts.ready_timeout = 200ms;
    std::string why;
    const auto began = Clock::now();
    auto child = Child::start({"sleep", "60"}, opts, &why);
    EXPECT_FALSE(child);
    EXPECT_LT(Clock::now() - began, 3s);
    EXPECT_NE(why.find("did not print \"ready\" within 200 ms"), std::string::npos) << why;
}

TEST(PrivateBus, AnswersOnItsOwnSocketAndCleansUpAfterwards) {
    if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon for a private bus";
    std::string why;
    auto bus = PrivateBus::start(bus_config(), &why);
    ASSERT_TRUE(bus) << why;
    EXPECT_TRUE(bus->address().starts_with("unix:path=" + bus->dir().string() + "/"))
        << bus->address();

    std::string id;
    {
        auto conn = sdbus::createSessionBusConnectionWithAddress(bus->address());
        auto driver = sdbus::createProxy(*conn, "org.freedesktop.DBus", "/org/freedesktop/DBus");
        driver->callMethod("GetId")
            .onInterface("org.freedesktop.DBus")
            .withTimeout(5s)
            .storeResultsTo(id);
    }
    EXPECT_EQ(id.size(), 32u) << id;
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;

    const fs::path dir = bus->dir();
    const std::string address = bus->address();
    bus.reset();
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_THROW(sdbus::createSessionBusConnectionWithAddress(address), sdbus::Error);
}

TEST(PrivateBus, ExplainsAConfigurationTheDaemonRejects) {
    if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon for a private bus";
    TempDir tmp;
    ASSERT_FALSE(tmp.path().empty());
    const fs::path config = tmp.path() / "broken.conf";
    std::ofstream(config) << "<busconfig><no-such-element/></busconfig>\n";
    std::string why;
    auto bus = PrivateBus::start(config, &why);
    EXPECT_FALSE(bus);
    EXPECT_NE(why.find("before printing its address"), std::string::npos) << why;
    // dbus-daemon's own complaint, from its stderr.
    EXPECT_NE(why.find("no-such-element"), std::string::npos) << why;
}

class FakeTuned : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon for a private bus";
        std::string why;
        bus_ = PrivateBus::start(bus_config(), &why);
        ASSERT_TRUE(bus_) << why;
        conn_ = sdbus::createSessionBusConnectionWithAddress(bus_->address());
    }

    void start(const std::string& profile) {
        std::string why;
        tuned_ = start_fake_tuned(*bus_, profile, &why);
        ASSERT_TRUE(tuned_) << why;
        proxy_ = sdbus::createProxy(*conn_, kTunedName, "/Tuned");
    }

    std::string active_profile() {
        std::string profile;
        proxy_->callMethod("active_profile")
            .onInterface(kTunedIface)
            .withTimeout(5s)
            .storeResultsTo(profile);
        return profile;
    }

    sdbus::Struct<bool, std::string> switch_profile(const std::string& name) {
        sdbus::Struct<bool, std::string> result;
        proxy_->callMethod("switch_profile")
            .onInterface(kTunedIface)
            .withTimeout(5s)
            .withArguments(name)
            .storeResultsTo(result);
        return result;
    }

    std::unique_ptr<PrivateBus> bus_;
    std::unique_ptr<Child> tuned_;
    std::unique_ptr<sdbus::IConnection> conn_;
    std::unique_ptr<sdbus::IProxy> proxy_;
};

TEST_F(FakeTuned, SwitchesProfilesAndAnnouncesTheChange) {
    start("balanced");
    // Signals arrive on a second connection whose loop the test drives
    // itself, with a deadline.
    auto listen_conn = sdbus::createSessionBusConnectionWithAddress(bus_->address());
    auto listener = sdbus::createProxy(*listen_conn, kTunedName, "/Tuned");
    std::vector<std::tuple<std::string, bool, std::string>> changes;
    listener->uponSignal("profile_changed")
        .onInterface(kTunedIface)
        .call([&](const std::string& profile, bool ok, const std::string& error) {
            changes.emplace_back(profile, ok, error);
        });
    listener->finishRegistration();

    EXPECT_EQ(active_profile(), "balanced");
    const auto result = switch_profile("network-latency");
    EXPECT_TRUE(result.get<0>());
    EXPECT_EQ(result.get<1>(), "OK");
    EXPECT_EQ(active_profile(), "network-latency");

    const auto deadline = Clock::now() + 5s;
    while (changes.empty() && Clock::now() < deadline) {
        while (listen_conn->processPendingRequest()) {
        }
        if (!changes.empty()) break;
        const auto data = listen_conn->getEventLoopPollData();
        pollfd p{data.fd, data.events, 0};
        poll(&p, 1, 100);
    }
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0], std::make_tuple(std::string("network-latency"), true, std::string("OK")));
}

TEST_F(FakeTuned, RefusesAnUnknownProfileAsTunedDoes) {
    start("");
    EXPECT_EQ(active_profile(), "");
    const auto result = switch_profile("no-such-profile");
    EXPECT_FALSE(result.get<0>());
    EXPECT_EQ(result.get<1>(), "Requested profile 'no-such-profile' doesn't exist.");
    EXPECT_EQ(active_profile(), "");
}

TEST_F(FakeTuned, ExitsCleanlyAndReleasesItsNameOnStop) {
    start("virtual-guest");
    ASSERT_TRUE(bus_has_owner(bus_->address(), kTunedName));
    tuned_->stop();
    // 0, not 128+SIGTERM: it handled the signal and closed its connection.
    EXPECT_EQ(tuned_->wait(0ms), 0);
    // The bus notices the closed connection on its own schedule.
    const auto deadline = Clock::now() + 5s;
    bool owned = true;
    while (owned && Clock::now() < deadline) {
        owned = bus_has_owner(bus_->address(), kTunedName);
        if (owned) std::this_thread::sleep_for(10ms);
    }
    EXPECT_FALSE(owned);
}

}  // namespace
}  // namespace nictune::test
