// Faults: a process killed in the middle of a transaction (stopped at a
// known step by the test-only pause points NICTUNE_TEST_PAUSE_AT_CHANGE and
// NICTUNE_TEST_PAUSE_BEFORE_COMMIT, engine/manager.cpp, then SIGKILLed) must not leave a card
// half-tuned: nictuned restores the originals when it starts again, and `nictunectl --direct
// rollback` can.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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

// State 'T' in /proc/PID/stat: the process stopped itself at the pause point.
bool stopped(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    auto paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'T';
}

class FaultTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        ASSERT_EQ(ns_->exec("ip link add name ft0 type veth peer name ft1 && ip link set ft0 up && "
                            "ip link set ft1 up")
                      .status,
                  0);
        char tmpl[] = "/tmp/nictune-fault-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        chmod(tmpl, 0755);
        fs::create_directory(dir_ / "profiles");
        chmod((dir_ / "profiles").c_str(), 0755);
        std::ofstream(dir_ / "profiles" / "lab.toml")
            << "[channels]\nrx = 2\n[link]\nmtu = 9014\ntxqueuelen = 4000\n[features]\ngro = "
               "true\ntso = false\n";
        chmod((dir_ / "profiles" / "lab.toml").c_str(), 0644);
        std::ofstream(dir_ / "nictune.toml") << "";
    }
    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }
    std::string snapshot() {
        return ns_->exec("ip -d link show ft0; ethtool -k ft0; ethtool -l ft0").out;
    }
    std::unique_ptr<Child> daemon(const PrivateBus& bus, std::vector<std::string> env) {
        Child::Options o;
        o.env = std::move(env);
        o.stderr_log = dir_ / "nictuned.log";
        std::string why;
        auto d = Child::start(
            {"ip", "netns", "exec", ns_->name(), kDaemon, "--bus-address", bus.address(),
             "--config", (dir_ / "nictune.toml").string(), "--profiles-dir",
             (dir_ / "profiles").string(), "--state-dir", (dir_ / "state").string()},
            o, &why);
        EXPECT_TRUE(d) << why;
        EXPECT_TRUE(eventually([&] {
            return ns_->exec_argv({kCtl, "--bus-address", bus.address(), "status"}).status == 0;
        }));
        return d;
    }
    std::string log() {
        std::ifstream in(dir_ / "nictuned.log");
        return std::string(std::istreambuf_iterator<char>(in), {});
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
    fs::path dir_;
};

TEST_F(FaultTest, ADaemonKilledMidTransactionRestoresTheOriginalsWhenItStarts) {
    std::string why;
    auto bus = PrivateBus::start(NICTUNE_TEST_BUS_CONF, &why);
    ASSERT_TRUE(bus) << why;
    const std::string before = snapshot();
    // Before the second and the third change, and once every change is made
    // and verified but the outcome not yet written.
    for (const std::string pause :
         {"NICTUNE_TEST_PAUSE_AT_CHANGE=2", "NICTUNE_TEST_PAUSE_AT_CHANGE=3",
          "NICTUNE_TEST_PAUSE_BEFORE_COMMIT=1"}) {
        SCOPED_TRACE("killed at " + pause);
        auto d = daemon(*bus, {pause});
        ASSERT_TRUE(d);
        Child::Options o;
        auto client = Child::start({"ip", "netns", "exec", ns_->name(), kCtl, "--bus-address",
                                    bus->address(), "apply", "lab", "ft0"},
                                   o, &why);
        ASSERT_TRUE(client) << why;
        ASSERT_TRUE(eventually([&] { return stopped(d->pid()); })) << log();
        EXPECT_NE(snapshot(), before) << "earlier steps were applied before the pause";
        d->kill_hard();
        EXPECT_EQ(client->wait(30000ms), 5) << "the caller learns the daemon went away";
        // The originals are in the transaction's journal; the interface
        // file is written only when a transaction ends.
        EXPECT_FALSE(fs::exists(dir_ / "state/interfaces/ft0.json"));
        auto rec = ns_->exec("cat " + (dir_ / "state/journal").string() + "/*.json");
        EXPECT_NE(rec.out.find("\"name\":\"ft0\""), std::string::npos) << rec.out;
        EXPECT_NE(rec.out.find("\"applying\""), std::string::npos) << rec.out;

        auto again = daemon(*bus, {});
        ASSERT_TRUE(again);
        EXPECT_TRUE(eventually([&] { return snapshot() == before; })) << log();
        EXPECT_NE(log().find("unfinished transaction found: original settings restored"),
                  std::string::npos)
            << log();
        EXPECT_FALSE(fs::exists(dir_ / "state/interfaces/ft0.json"));
        EXPECT_TRUE(fs::is_empty(dir_ / "state/journal")) << "the journal was replayed";
        again->stop();
    }
}

TEST_F(FaultTest, ADirectApplyKilledMidTransactionCanBeRolledBack) {
    const std::string before = snapshot();
    Child::Options o;
    o.env = {"NICTUNE_TEST_PAUSE_AT_CHANGE=3"};
    std::string why;
    auto ctl = Child::start(
        {"ip", "netns", "exec", ns_->name(), kCtl, "--profiles-dir", (dir_ / "profiles").string(),
         "--state-dir", (dir_ / "state").string(), "--direct", "apply", "lab", "ft0"},
        o, &why);
    ASSERT_TRUE(ctl) << why;
    ASSERT_TRUE(eventually([&] { return stopped(ctl->pid()); }));
    ctl->kill_hard();
    EXPECT_NE(snapshot(), before);
    auto rb = ns_->exec_argv({kCtl, "--profiles-dir", (dir_ / "profiles").string(), "--state-dir",
                              (dir_ / "state").string(), "--direct", "rollback", "ft0"});
    EXPECT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(snapshot(), before);
}

// Killed once every change is made and verified, before its records are
// written: the journal still holds the originals, and they come back.
TEST_F(FaultTest, ADirectApplyKilledBeforeItsOutcomeIsWrittenCanBeRolledBack) {
    const std::string before = snapshot();
    Child::Options o;
    o.env = {"NICTUNE_TEST_PAUSE_BEFORE_COMMIT=1"};
    std::string why;
    auto ctl = Child::start(
        {"ip", "netns", "exec", ns_->name(), kCtl, "--profiles-dir", (dir_ / "profiles").string(),
         "--state-dir", (dir_ / "state").string(), "--direct", "apply", "lab", "ft0"},
        o, &why);
    ASSERT_TRUE(ctl) << why;
    ASSERT_TRUE(eventually([&] { return stopped(ctl->pid()); }));
    const std::string applied = snapshot();
    ctl->kill_hard();
    EXPECT_NE(applied, before);
    EXPECT_NE(applied.find("mtu 9014"), std::string::npos) << "every change was made";
    EXPECT_FALSE(fs::exists(dir_ / "state/interfaces/ft0.json"));
    EXPECT_FALSE(fs::is_empty(dir_ / "state/journal"));
    auto rb = ns_->exec_argv({kCtl, "--profiles-dir", (dir_ / "profiles").string(), "--state-dir",
                              (dir_ / "state").string(), "--direct", "rollback", "ft0"});
    EXPECT_EQ(rb.status, 0) << rb.out << rb.err;
    EXPECT_EQ(snapshot(), before);
    EXPECT_TRUE(fs::is_empty(dir_ / "state/journal")) << "the journal was replayed";
    EXPECT_FALSE(fs::exists(dir_ / "state/interfaces/ft0.json"));
}

TEST_F(FaultTest, ACorruptStateFileIsReportedAndChangesNothing) {
    fs::create_directories(dir_ / "state/interfaces");
    std::ofstream(dir_ / "state/interfaces/ft0.json")
        << "{\"version\": 1, \"name\": \"ft0\", \"orig";
    const std::string before = snapshot();
    auto r = ns_->exec_argv({kCtl, "--profiles-dir", (dir_ / "profiles").string(), "--state-dir",
                             (dir_ / "state").string(), "--direct", "apply", "lab", "ft0"});
    EXPECT_EQ(r.status, 5) << r.out << r.err;
    EXPECT_NE(r.out.find("state/interfaces/ft0.json"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nothing was changed"), std::string::npos) << r.out;
    EXPECT_EQ(snapshot(), before);
    auto rb = ns_->exec_argv({kCtl, "--profiles-dir", (dir_ / "profiles").string(), "--state-dir",
                              (dir_ / "state").string(), "--direct", "rollback", "ft0"});
    EXPECT_EQ(rb.status, 5);
    EXPECT_NE(rb.out.find("ft0.json"), std::string::npos) << rb.out;
}

TEST_F(FaultTest, AStateDirectoryThatIsAFileChangesNothing) {
    // A regular file where the state directory should be: no save can work.
    std::ofstream(dir_ / "state") << "";
    const std::string before = snapshot();
    auto r = ns_->exec_argv({kCtl, "--profiles-dir", (dir_ / "profiles").string(), "--state-dir",
                             (dir_ / "state").string(), "--direct", "apply", "lab", "ft0"});
    EXPECT_EQ(r.status, 5) << r.out << r.err;
    EXPECT_NE(r.out.find("nothing was changed"), std::string::npos) << r.out;
    EXPECT_EQ(snapshot(), before);
}

// The state directory as a tmpfs mounted read-only, or one that is full, in
// a mount namespace of the command's own (unshare --mount): nothing outside
// it sees the mount, and it goes away with the process.
class StateMountTest : public FaultTest {
  protected:
    CommandResult apply_with_state_mount(const std::string& mount_and_fill) {
        fs::create_directory(dir_ / "state");
        const std::string state = (dir_ / "state").string();
        return ns_->exec_argv({"unshare", "--mount", "--propagation", "private", "sh", "-c",
                               mount_and_fill + " && exec \"$@\"", "sh", kCtl, "--profiles-dir",
                               (dir_ / "profiles").string(), "--state-dir", state, "--direct",
                               "apply", "lab", "ft0"});
    }
};

TEST_F(StateMountTest, AReadOnlyStateDirectoryChangesNothing) {
    const std::string before = snapshot();
    auto r = apply_with_state_mount("mount -t tmpfs -o ro,mode=0755 nictune-ro " +
                                    (dir_ / "state").string());
    EXPECT_EQ(r.status, 5) << r.out << r.err;
    EXPECT_NE(r.out.find("Read-only file system"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nothing was changed"), std::string::npos) << r.out;
    EXPECT_EQ(snapshot(), before);
}

TEST_F(StateMountTest, AFullStateDirectoryChangesNothing) {
    const std::string before = snapshot();
    const std::string state = (dir_ / "state").string();
    // 16 KiB, filled to the last block before nictunectl starts.
    auto r = apply_with_state_mount("mount -t tmpfs -o size=16k,mode=0755 nictune-full " + state +
                                    " && { dd if=/dev/zero of=" + state +
                                    "/fill bs=4096 2>/dev/null; test -s " + state + "/fill; }");
    EXPECT_EQ(r.status, 5) << r.out << r.err;
    EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nothing was changed"), std::string::npos) << r.out;
    EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace nictune::test
