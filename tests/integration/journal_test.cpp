// nictuned's journal fields, read the way journald reads them: nictuned runs
// in a mount namespace of its own where /run/systemd/journal/socket is a
// datagram socket this test bound, with stderr a file whose device:inode is
// in JOURNAL_STREAM (what systemd sets for a service). So log.cpp takes its
// journal path and sd_journal_sendv() delivers the native protocol here:
// each event must carry its MESSAGE_ID= (systemd/nictune.catalog) and fields.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "service/log.hpp"
#include "support/dbus.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Entry = std::map<std::string, std::string>;

// One journal datagram: "FIELD=value\n" per field, or, for a value holding a
// newline, "FIELD\n", its length as 64-bit little endian, the value, "\n".
Entry parse_native(const std::string& d) {
    Entry e;
    std::size_t p = 0;
    while (p < d.size()) {
        const auto nl = d.find('\n', p);
        const auto eq = d.find('=', p);
        if (eq != std::string::npos && (nl == std::string::npos || eq < nl)) {
            const auto end = nl == std::string::npos ? d.size() : nl;
            e[d.substr(p, eq - p)] = d.substr(eq + 1, end - eq - 1);
            p = end + 1;
            continue;
        }
        if (nl == std::string::npos || nl + 9 > d.size()) break;
        uint64_t len = 0;
        for (int i = 7; i >= 0; --i)
            len = (len << 8) | static_cast<unsigned char>(d[nl + 1 + static_cast<std::size_t>(i)]);
        if (nl + 9 + len > d.size()) break;
        e[d.substr(p, nl - p)] = d.substr(nl + 9, len);
        p = nl + 9 + len + 1;
    }
    return e;
}

class JournalFieldsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        if (!have_program("dbus-daemon") || !have_program("unshare"))
            GTEST_SKIP() << "needs dbus-daemon and unshare";
        // jt0: tuned to MTU 9014. jf0: a profile that asks for more RX
        // queues than a veth can have (as many as CPUs): refused by the plan.
        ASSERT_EQ(ns_->exec("ip link add name jt0 type veth peer name jp0 && "
                            "ip link add name jf0 type veth peer name jq0")
                      .status,
                  0);
        char tmpl[] = "/tmp/nictune-journal-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        chmod(tmpl, 0755);
        fs::create_directories(dir_ / "profiles");
        chmod((dir_ / "profiles").c_str(), 0755);
        fs::create_directories(dir_ / "journal");
        write("profiles/jumbo.toml", "[link]\nmtu = 9014\n");
        write("profiles/queues.toml", "[channels]\nrx = 4096\n");
        write("nictune.toml",
              "[[bind]]\nprofile = \"jumbo\"\ninterface = \"jt0\"\n\n"
              "[[bind]]\nprofile = \"queues\"\ninterface = \"jf0\"\n");

        sock_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ASSERT_GE(sock_, 0);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        const std::string path = (dir_ / "journal" / "socket").string();
        ASSERT_LT(path.size(), sizeof sa.sun_path);
        std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
        ASSERT_EQ(bind(sock_, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0) << strerror(errno);
        int big = 4 << 20;
        setsockopt(sock_, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);

        std::string why;
        bus_ = PrivateBus::start(NICTUNE_TEST_BUS_CONF, &why);
        ASSERT_TRUE(bus_) << why;

        // What systemd gives a service: stderr connected to the journal,
        // named by JOURNAL_STREAM.
        const fs::path log = dir_ / "stderr.log";
        std::ofstream(log).flush();
        struct stat st {};
        ASSERT_EQ(stat(log.c_str(), &st), 0);
        Child::Options o;
        o.stderr_log = log;
        o.env = {"JOURNAL_STREAM=" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)};
        // A private /run in the daemon's own mount namespace (inside the
        // test's network namespace), holding only the test's socket.
        const std::string script =
            "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal && "
            "mount --bind \"$0\" /run/systemd/journal && exec \"$@\"";
        daemon_ = Child::start({"ip",
                                "netns",
                                "exec",
                                ns_->name(),
                                "unshare",
                                "--mount",
                                "--propagation",
                                "private",
                                "sh",
                                "-c",
                                script,
                                (dir_ / "journal").string(),
                                NICTUNED_PATH,
                                "--bus-address",
                                bus_->address(),
                                "--config",
                                (dir_ / "nictune.toml").string(),
                                "--profiles-dir",
                                (dir_ / "profiles").string(),
                                "--state-dir",
                                (dir_ / "state").string()},
                               o, &why);
        ASSERT_TRUE(daemon_) << why;
    }
    void TearDown() override {
        daemon_.reset();
        bus_.reset();
        if (sock_ >= 0) close(sock_);
        if (!dir_.empty()) fs::remove_all(dir_);
    }
    void write(const std::string& rel, const std::string& text) {
        std::ofstream(dir_ / rel) << text;
        chmod((dir_ / rel).c_str(), 0644);
    }
    CommandResult ctl(std::vector<std::string> args) {
        std::vector<std::string> argv = {NICTUNECTL_PATH, "--bus-address", bus_->address()};
        argv.insert(argv.end(), args.begin(), args.end());
        return ns_->exec_argv(argv, 60000);
    }
    // Everything received so far.
    const std::vector<Entry>& drain() {
        char buf[65536];
        for (;;) {
            const ssize_t n = recv(sock_, buf, sizeof buf, 0);
            if (n <= 0) break;
            entries_.push_back(parse_native(std::string(buf, static_cast<std::size_t>(n))));
        }
        return entries_;
    }
    // The first entry with `id` whose fields include `want`, waiting for it.
    const Entry* wait_for(service::Event id, const Entry& want) {
        const std::string mid(service::message_id(id));
        const auto end = std::chrono::steady_clock::now() + 10s;
        do {
            for (const auto& e : drain()) {
                auto m = e.find("MESSAGE_ID");
                if (m == e.end() || m->second != mid) continue;
                bool all = true;
                for (const auto& [k, v] : want) {
                    auto f = e.find(k);
                    all &= f != e.end() && f->second == v;
                }
                if (all) return &e;
            }
            std::this_thread::sleep_for(50ms);
        } while (std::chrono::steady_clock::now() < end);
        return nullptr;
    }
    std::string dump() {
        std::string out;
        for (const auto& e : drain()) {
            for (const auto& [k, v] : e)
                out += k + "=" + v + " ";
            out += "\n";
        }
        std::ifstream in(dir_ / "stderr.log");
        return out + "stderr: " + std::string(std::istreambuf_iterator<char>(in), {});
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
    fs::path dir_;
    int sock_ = -1;
    std::unique_ptr<PrivateBus> bus_;
    std::unique_ptr<Child> daemon_;
    std::vector<Entry> entries_;
};

TEST_F(JournalFieldsTest, EachEventCarriesItsMessageIdAndFields) {
    const Entry* applied = wait_for(service::Event::Applied, {{"INTERFACE", "jt0"},
                                                              {"PROFILE", "jumbo"},
                                                              {"NICTUNE_RESULT", "applied"},
                                                              {"NICTUNE_REASON", "boot"},
                                                              {"SYSLOG_IDENTIFIER", "nictuned"},
                                                              {"PRIORITY", "5"}});
    ASSERT_NE(applied, nullptr) << dump();
    EXPECT_FALSE(applied->at("NICTUNE_TRANSACTION").empty());
    EXPECT_NE(applied->at("MESSAGE").find("applied profile jumbo"), std::string::npos);

    const Entry* failed = wait_for(service::Event::Failed, {{"INTERFACE", "jf0"},
                                                            {"PROFILE", "queues"},
                                                            {"NICTUNE_RESULT", "refused"},
                                                            {"NICTUNE_REASON", "boot"},
                                                            {"PRIORITY", "3"}});
    ASSERT_NE(failed, nullptr) << dump();

    // Someone else changes the MTU: drift, with both values.
    ASSERT_EQ(ns_->exec("ip link set jt0 mtu 1500").status, 0);
    const Entry* drift = wait_for(service::Event::Drift, {{"INTERFACE", "jt0"},
                                                          {"PROFILE", "jumbo"},
                                                          {"SETTING", "link.mtu"},
                                                          {"NICTUNE_EXPECTED", "9014"},
                                                          {"NICTUNE_ACTUAL", "1500"},
                                                          {"PRIORITY", "4"}});
    ASSERT_NE(drift, nullptr) << dump();

    auto r = ctl({"rollback", "jt0"});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const Entry* rolled = wait_for(service::Event::RolledBack, {{"INTERFACE", "jt0"},
                                                                {"PROFILE", "jumbo"},
                                                                {"NICTUNE_RESULT", "rolled_back"},
                                                                {"NICTUNE_REASON", "request"}});
    ASSERT_NE(rolled, nullptr) << dump();

    // Other messages carry no MESSAGE_ID (the catalog explains only these).
    bool ready_seen = false;
    for (const auto& e : drain())
        if (e.count("MESSAGE") && e.at("MESSAGE").starts_with("ready on")) {
            ready_seen = true;
            EXPECT_EQ(e.count("MESSAGE_ID"), 0U);
        }
    EXPECT_TRUE(ready_seen) << dump();
}

}  // namespace
}  // namespace nictune::test
