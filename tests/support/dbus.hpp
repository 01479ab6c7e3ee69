// Private D-Bus daemons and stand-in services for tests. Every process is
// started by the test, dies with it (PR_SET_PDEATHSIG) and is stopped by its
// PID; nothing touches the system bus.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace nictune::test {

// A child process started by a test. stop() sends SIGTERM, then SIGKILL after
// a grace period, and reaps it; the destructor calls stop().
class Child {
  public:
    struct Options {
        std::vector<std::string> env;      // extra "NAME=value" entries
        std::filesystem::path stderr_log;  // stderr goes here (default: inherited)
        // Wait until the child prints this line on stdout (empty: don't wait).
        std::string ready_line;
        std::chrono::milliseconds ready_timeout{10000};
        uid_t uid = static_cast<uid_t>(-1);  // run as this uid/gid (when set)
        gid_t gid = static_cast<gid_t>(-1);
    };
    // Returns nullptr and sets *why when it cannot start or never gets ready.
    static std::unique_ptr<Child> start(const std::vector<std::string>& argv, const Options& opts,
                                        std::string* why);
    ~Child();
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    [[nodiscard]] pid_t pid() const { return pid_; }
    // Lines the child printed on stdout after the ready line (drained on demand).
    std::string read_available_stdout();
    // Exit status (or 128+signal), waiting at most `limit`; -1 on timeout.
    int wait(std::chrono::milliseconds limit);
    bool running();
    void stop();
    // SIGKILL without grace (crash tests).
    void kill_hard();

  private:
    Child() = default;
    pid_t pid_ = -1;
    int stdout_fd_ = -1;
    int status_ = -1;
};

// A dbus-daemon with the given configuration file, listening on a socket in
// a fresh temporary directory. address() is what clients connect to.
class PrivateBus {
  public:
    // config: a busconfig file; its <listen> is overridden with --address.
    static std::unique_ptr<PrivateBus> start(const std::filesystem::path& config, std::string* why);
    ~PrivateBus();
    [[nodiscard]] const std::string& address() const { return address_; }
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
    [[nodiscard]] pid_t pid() const { return child_ ? child_->pid() : -1; }

  private:
    PrivateBus() = default;
    std::filesystem::path dir_;
    std::string address_;
    std::unique_ptr<Child> child_;
};

// The stand-in tuned (tests/support/fake_tuned.cpp, built as
// nictune_fake_tuned): owns com.redhat.tuned on `bus` with `profile` active,
// answers active_profile() and switch_profile(s) like tuned (known profiles:
// balanced, latency-performance, network-latency, network-throughput,
// throughput-performance, virtual-guest).
std::unique_ptr<Child> start_fake_tuned(const PrivateBus& bus, const std::string& profile,
                                        std::string* why);

}  // namespace nictune::test
