// Any name the kernel takes (issue 13): veth pairs in a test namespace named
// with bytes that are not UTF-8, a backslash, a UTF-8 letter and 15 bytes
// with an invisible character, audited, applied and rolled back through
// nictunectl --direct and through nictuned on a private bus, and a burst of
// them hotplugged under an `interface = "*"` binding while a client keeps
// calling Status and Audit. sysfs (by the names' real bytes) is the oracle.
#include <gtest/gtest.h>
#include <sdbus-c++/sdbus-c++.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "integration/daemon_harness.hpp"
#include "util/strings.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Name {
    std::string raw;   // the bytes the kernel holds
    std::string text;  // nictune's text form of them
    std::string peer;
};

const std::vector<Name> kNames = {
    {"\xff\xfeq", "\\xff\\xfeq", "pe0"},
    {"a\\b", "a\\x5cb", "pe1"},
    {"\xc3\xa9t0", "ét0", "pe2"},  // U+00E9
    // 15 bytes, the most a name holds, ending in U+200B (zero-width space).
    {std::string(12, 'q') + "\xe2\x80\x8b", "qqqqqqqqqqqq\\xe2\\x80\\x8b", "pe3"},
};

const char* kJumbo = "[link]\nmtu = 9000\n";

// The names' real bytes are passed as they are: argv, no shell.
void add_pairs(const TestNetns& ns) {
    for (const auto& n : kNames) {
        ASSERT_EQ(n.raw.size() <= 15, true);
        ASSERT_EQ(escape_name(n.raw), n.text) << "the test's own table";
        auto r = ns.exec_argv(
            {"ip", "link", "add", "name", n.raw, "type", "veth", "peer", "name", n.peer});
        ASSERT_EQ(r.status, 0) << r.err;
    }
}

// sysfs in the namespace, by the real bytes: "" when there is no such link.
std::string sysfs(const TestNetns& ns, const std::string& raw, const std::string& file) {
    auto r = ns.exec_argv({"cat", "/sys/class/net/" + raw + "/" + file});
    if (r.status != 0) return "";
    return std::string(trim(r.out));
}

nlohmann::json json_of(const CommandResult& r) {
    try {
        return nlohmann::json::parse(r.out);
    } catch (const nlohmann::json::exception& e) {
        ADD_FAILURE() << "not JSON (" << e.what() << "): " << r.out.substr(0, 400) << r.err;
        return nlohmann::json::object();
    }
}

class NamesDirect : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        char tmpl[] = "/tmp/nictune-names-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        fs::create_directory(dir_ / "profiles");
        std::ofstream(dir_ / "profiles" / "jumbo.toml") << kJumbo;
        add_pairs(*ns_);
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

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
    fs::path dir_;
};

TEST_F(NamesDirect, EachNameIsAuditedAppliedAndRolledBackInItsTextForm) {
    for (const auto& n : kNames) {
        SCOPED_TRACE("interface " + n.text);
        const std::string ifindex = sysfs(*ns_, n.raw, "ifindex");
        ASSERT_FALSE(ifindex.empty());

        auto audit = ctl({"audit", "--json", n.text});
        ASSERT_LE(audit.status, 1) << audit.err;
        auto a = json_of(audit);
        ASSERT_EQ(a.at("interfaces").size(), 1U);
        EXPECT_EQ(a.at("interfaces")[0].at("name"), n.text);
        EXPECT_EQ(std::to_string(a.at("interfaces")[0].at("ifindex").get<int>()), ifindex);
        EXPECT_EQ(std::to_string(a.at("interfaces")[0].at("link").at("mtu").get<int>()),
                  sysfs(*ns_, n.raw, "mtu"));
        auto text = ctl({"audit", n.text});
        EXPECT_NE(text.out.find(n.text), std::string::npos) << text.out;

        auto apply = ctl({"apply", "jumbo", n.text, "--json"});
        ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
        EXPECT_EQ(json_of(apply).at("interfaces")[0].at("name"), n.text);
        EXPECT_EQ(sysfs(*ns_, n.raw, "mtu"), "9000");
        // The record is filed under the text form, and says the same inside.
        const fs::path record = dir_ / "state" / "interfaces" / (n.text + ".json");
        ASSERT_TRUE(fs::exists(record));
        std::ifstream in(record);
        EXPECT_EQ(nlohmann::json::parse(in).at("name"), n.text);

        auto rollback = ctl({"rollback", n.text});
        ASSERT_EQ(rollback.status, 0) << rollback.out << rollback.err;
        EXPECT_NE(rollback.out.find(n.text), std::string::npos) << rollback.out;
        EXPECT_EQ(sysfs(*ns_, n.raw, "mtu"), "1500");
        EXPECT_FALSE(fs::exists(record));
    }
    // All of them at once, with their peers.
    auto all = ctl({"audit", "--all", "--json"});
    ASSERT_LE(all.status, 1) << all.err;
    std::set<std::string> seen;
    const auto report = json_of(all);  // a temporary's member would not outlive the loop's init
    for (const auto& i : report.at("interfaces"))
        seen.insert(i.at("name").get<std::string>());
    for (const auto& n : kNames) {
        EXPECT_TRUE(seen.contains(n.text)) << n.text;
        EXPECT_TRUE(seen.contains(n.peer)) << n.peer;
    }
}

// On the command line a name is its text form; an argument that cannot be
// text (bash's $'\xff\xfeq') is taken as the bytes themselves, and text
// that only looks wrong is refused, saying how to write it.
TEST_F(NamesDirect, TheCommandLineTakesTheTextFormOrTheRawBytes) {
    auto raw = ctl({"audit", "--json", kNames[0].raw});
    ASSERT_LE(raw.status, 1) << raw.err;
    EXPECT_EQ(json_of(raw).at("interfaces")[0].at("name"), kNames[0].text);

    auto bad = ctl({"rollback", "a\\b"});
    EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("not in nictune's text form"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("\\x5c"), std::string::npos) << bad.err;

    auto upper = ctl({"audit", "\\xFF\\xFEq"});
    EXPECT_EQ(upper.status, 2) << upper.err;
    EXPECT_NE(upper.err.find("lower-case"), std::string::npos) << upper.err;
}

// ---- through nictuned

class NamesDaemon : public ::testing::Test {
  protected:
    void start(const std::string& config) {
        std::string skip;
        h_ = std::make_unique<DaemonHarness>(std::map<std::string, std::string>{{"jumbo", kJumbo}},
                                             config, &skip);
        if (!skip.empty()) GTEST_SKIP() << skip;
        ASSERT_TRUE(h_->ok());
    }
    std::unique_ptr<DaemonHarness> h_;
};

TEST_F(NamesDaemon, EachNameIsAuditedAppliedAndRolledBackOverDBus) {
    start("");
    add_pairs(h_->ns());
    ASSERT_TRUE(h_->start_daemon());
    for (const auto& n : kNames) {
        SCOPED_TRACE("interface " + n.text);
        auto audit = h_->ctl({"audit", "--json", n.text});
        ASSERT_LE(audit.status, 1) << audit.err;
        EXPECT_EQ(json_of(audit).at("interfaces")[0].at("name"), n.text);

        auto apply = h_->ctl({"apply", "jumbo", n.text});
        ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
        EXPECT_NE(apply.out.find(n.text), std::string::npos) << apply.out;
        EXPECT_EQ(sysfs(h_->ns(), n.raw, "mtu"), "9000");
        EXPECT_TRUE(fs::exists(h_->dir() / "state" / "interfaces" / (n.text + ".json")));

        bool listed = false;
        const auto status = h_->status();
        for (const auto& i : status.at("interfaces"))
            listed |= i.at("name") == n.text && i.at("last_result") == "applied";
        EXPECT_TRUE(listed) << h_->status().dump(2);

        auto rollback = h_->ctl({"rollback", n.text, "--json"});
        ASSERT_EQ(rollback.status, 0) << rollback.out << rollback.err;
        EXPECT_EQ(json_of(rollback).at("rollbacks")[0].at("interface"), n.text);
        EXPECT_EQ(sysfs(h_->ns(), n.raw, "mtu"), "1500");
    }
    EXPECT_TRUE(h_->daemon().running()) << h_->log();
}

// The crash: a veth named \xff\xfeq created while nictuned runs
// with a binding for every interface made it abort in sd-bus. Now it is
// tuned, the Applied signal names it in text form, drift on it is
// repaired, and Status and Audit answer all along.
TEST_F(NamesDaemon, AHotpluggedBurstOfSuchNamesIsTunedWhileClientsCall) {
    start("[[bind]]\nprofile = \"jumbo\"\ninterface = \"*\"\nenforce = true\n");
    ASSERT_TRUE(h_->start_daemon());

    auto conn = sdbus::createSessionBusConnectionWithAddress(h_->bus().address());
    std::mutex m;
    std::vector<std::pair<std::string, std::string>> applied;  // interface, result/reason
    auto proxy = sdbus::createProxy(*conn, "org.nictune1", "/org/nictune1");
    proxy->uponSignal("Applied")
        .onInterface("org.nictune1.Manager")
        .call([&](const std::string&, const std::string& iface, const std::string&,
                  const std::string& result, const std::string& reason) {
            std::lock_guard g(m);
            applied.emplace_back(iface, result + "/" + reason);
        });
    proxy->finishRegistration();
    conn->enterEventLoopAsync();

    // A client calling Status and Audit the whole time (bounded in count
    // and time); every call must answer.
    std::atomic<bool> stop{false};
    std::atomic<int> calls{0};
    std::vector<std::string> failures;
    std::thread client([&] {
        const auto end = std::chrono::steady_clock::now() + 60s;
        for (int i = 0; i < 400 && !stop && std::chrono::steady_clock::now() < end; ++i) {
            auto r = i % 2 ? h_->ctl({"status", "--json"}) : h_->ctl({"audit", "--all", "--json"});
            ++calls;
            const bool ok =
                (r.status == 0 || (i % 2 == 0 && r.status == 1)) && nlohmann::json::accept(r.out);
            if (!ok) {
                std::lock_guard g(m);
                failures.push_back(std::to_string(r.status) + ": " + r.err.substr(0, 300));
            }
        }
    });
    add_pairs(h_->ns());
    const bool tuned = eventually(
        [&] {
            for (const auto& n : kNames)
                if (sysfs(h_->ns(), n.raw, "mtu") != "9000" ||
                    sysfs(h_->ns(), n.peer, "mtu") != "9000")
                    return false;
            return true;
        },
        30000ms);
    // Re-tuned: drift on one of them is repaired like on any other.
    ASSERT_EQ(h_->ns().exec_argv({"ip", "link", "set", "dev", kNames[0].raw, "mtu", "1500"}).status,
              0);
    EXPECT_TRUE(
        eventually([&] { return sysfs(h_->ns(), kNames[0].raw, "mtu") == "9000"; }, 20000ms))
        << h_->log();
    while (calls < 4 && client.joinable() && !stop)
        std::this_thread::sleep_for(50ms);
    stop = true;
    client.join();
    conn->leaveEventLoop();

    EXPECT_TRUE(tuned) << h_->log();
    EXPECT_TRUE(h_->daemon().running()) << h_->log();
    EXPECT_GE(calls.load(), 4);
    {
        std::lock_guard g(m);
        EXPECT_TRUE(failures.empty()) << failures.size() << " calls failed, first: " << failures[0];
        for (const auto& n : kNames) {
            const bool signalled = std::any_of(applied.begin(), applied.end(), [&](const auto& a) {
                return a.first == n.text && a.second.starts_with("applied/");
            });
            EXPECT_TRUE(signalled) << "no Applied signal for " << n.text;
        }
    }
    EXPECT_EQ(h_->log().find("terminate"), std::string::npos) << h_->log();
    EXPECT_EQ(h_->log().find("Failed to serialize"), std::string::npos) << h_->log();
    // The journal's INTERFACE= field and the log text name it the same way.
    EXPECT_NE(h_->log().find(kNames[0].text + ": applied profile jumbo"), std::string::npos)
        << h_->log();
}

}  // namespace
}  // namespace nictune::test
