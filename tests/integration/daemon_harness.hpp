// nictuned under test, shared by the storm, load and bad-input tests: a
// network namespace, a private dbus-daemon with the shipped policy, a
// directory with profiles and nictune.toml, and nictuned started inside the
// namespace (`ip netns exec` execs it, so Child::pid() is nictuned's PID and
// /proc/PID tells its fds and memory). Header-only: the storm and load tests
// are binaries of their own (tests/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/dbus.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"
#include "support/process.hpp"

namespace nictune::test {

// Open file descriptors of a process (entries of /proc/PID/fd), -1 if gone.
inline int fd_count(pid_t pid) {
    std::error_code ec;
    std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec);
    if (ec) return -1;
    int n = 0;
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (ec) return -1;
        ++n;
    }
    return n;
}

// A field of /proc/PID/status in kB (VmRSS, VmHWM, ...), -1 if absent.
inline long proc_status_kb(pid_t pid, const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.starts_with(field + ":")) return std::stol(line.substr(field.size() + 1));
    return -1;
}

// How often `needle` occurs in `hay`.
inline int count_of(const std::string& hay, const std::string& needle) {
    int n = 0;
    for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1))
        ++n;
    return n;
}

class DaemonHarness {
  public:
    // Creates the namespace, the directory (profiles: name -> TOML text) and
    // the bus, and starts nictuned with `config` as its nictune.toml. Sets
    // *skip when the test cannot run here (not root, no dbus-daemon); failures
    // to start are ADD_FAILUREs and leave ok() false.
    DaemonHarness(const std::map<std::string, std::string>& profiles, const std::string& config,
                  std::string* skip) {
        ns_ = TestNetns::create(skip);
        if (!ns_) return;
        if (!have_program("dbus-daemon") || !have_program("busctl")) {
            *skip = "needs dbus-daemon and busctl";
            ns_.reset();
            return;
        }
        char tmpl[] = "/tmp/nictune-stress-XXXXXX";
        if (!mkdtemp(tmpl)) {
            ADD_FAILURE() << "mkdtemp failed";
            return;
        }
        dir_ = tmpl;
        chmod(tmpl, 0755);
        std::filesystem::create_directory(dir_ / "profiles");
        chmod((dir_ / "profiles").c_str(), 0755);
        for (const auto& [name, text] : profiles)
            write("profiles/" + name + ".toml", text);
        write("nictune.toml", config);
        std::string why;
        bus_ = PrivateBus::start(NICTUNE_TEST_BUS_CONF, &why);
        if (!bus_) {
            ADD_FAILURE() << why;
            return;
        }
        ok_ = true;
    }
    ~DaemonHarness() {
        daemon_.reset();
        // In the sanitizer build nictuned's reports go to its stderr, this
        // log (UBSan with g++'s combined runtime ignores log_path); they stop
        // it, and must fail the test even when nothing else noticed.
        if (!dir_.empty()) {
            const std::string text = log();
            for (const char* mark : {"runtime error:", "Sanitizer"}) {
                auto at = text.find(mark);
                if (at != std::string::npos)
                    ADD_FAILURE() << "nictuned's log has a sanitizer report:\n"
                                  << text.substr(at > 300 ? at - 300 : 0, 4000);
            }
        }
        bus_.reset();
        if (!dir_.empty()) std::filesystem::remove_all(dir_);
    }
    DaemonHarness(const DaemonHarness&) = delete;
    DaemonHarness& operator=(const DaemonHarness&) = delete;

    [[nodiscard]] bool ok() const { return ok_; }
    [[nodiscard]] const TestNetns& ns() const { return *ns_; }
    [[nodiscard]] const PrivateBus& bus() const { return *bus_; }
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
    [[nodiscard]] Child& daemon() { return *daemon_; }

    void write(const std::string& rel, const std::string& text) {
        std::ofstream(dir_ / rel) << text;
        chmod((dir_ / rel).c_str(), 0644);
    }

    // Starts nictuned and waits until it answers Status (limit: `ready`).
    // `env`: extra environment for nictuned (test hooks).
    bool start_daemon(std::chrono::milliseconds ready = std::chrono::milliseconds(20000),
                      std::vector<std::string> env = {}) {
        Child::Options o;
        o.env = std::move(env);
        o.stderr_log = dir_ / "nictuned.log";
        std::string why;
        std::vector<std::string> argv = {"ip",
                                         "netns",
                                         "exec",
                                         ns_->name(),
                                         NICTUNED_PATH,
                                         "--bus-address",
                                         bus_->address(),
                                         "--config",
                                         (dir_ / "nictune.toml").string(),
                                         "--profiles-dir",
                                         (dir_ / "profiles").string()};
        if (state_dir_option_) argv.insert(argv.end(), {"--state-dir", (dir_ / "state").string()});
        daemon_ = Child::start(argv, o, &why);
        if (!daemon_) {
            ADD_FAILURE() << why;
            return false;
        }
        if (!eventually([&] { return ctl({"status"}).status == 0; }, ready)) {
            ADD_FAILURE() << "nictuned does not answer Status: " << log();
            return false;
        }
        return true;
    }

    // nictuned starts without --state-dir: nictune.toml decides.
    void without_state_dir_option() { state_dir_option_ = false; }

    [[nodiscard]] std::string log() const {
        std::ifstream in(dir_ / "nictuned.log");
        return std::string(std::istreambuf_iterator<char>(in), {});
    }

    // nictunectl over the private bus, inside the namespace.
    [[nodiscard]] CommandResult ctl(std::vector<std::string> args, int timeout_ms = 60000) const {
        std::vector<std::string> argv = {NICTUNECTL_PATH, "--bus-address", bus_->address()};
        argv.insert(argv.end(), args.begin(), args.end());
        return ns_->exec_argv(argv, timeout_ms);
    }

    // `ip -j link show` in the namespace: name -> the link's JSON object.
    [[nodiscard]] std::map<std::string, nlohmann::json> links() const {
        std::map<std::string, nlohmann::json> out;
        auto r = ns_->exec("ip -j link show", 60000);
        if (r.status != 0) return out;
        for (auto& l : parse_json(r.out))
            out[l.at("ifname").get<std::string>()] = l;
        return out;
    }

    [[nodiscard]] nlohmann::json status() const {
        auto r = ctl({"status", "--json"});
        if (r.status != 0) return nlohmann::json::object();
        return parse_json(r.out);
    }

  private:
    bool ok_ = false;
    bool state_dir_option_ = true;
    std::unique_ptr<TestNetns> ns_;
    std::filesystem::path dir_;
    std::unique_ptr<PrivateBus> bus_;
    std::unique_ptr<Child> daemon_;
};

}  // namespace nictune::test
