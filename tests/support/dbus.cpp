#include "support/dbus.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

extern char** environ;

namespace nictune::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kStopGrace = 5s;
// A child reaped by someone else (ECHILD): its status is lost, but it must
// be marked gone so that its PID, possibly reused by now, is never signalled.
constexpr int kStatusLost = 255;

// What the forked child reports over the CLOEXEC pipe when it fails before
// exec succeeds. Anything it writes there means "not started".
struct StartFailure {
    int step = 0;
    int err = 0;
};
constexpr const char* kSteps[] = {"redirect stdout", "redirect stderr",  "setgroups", "setgid",
                                  "setuid",          "PR_SET_PDEATHSIG", "exec"};
enum Step : int { kDupStdout, kDupStderr, kSetgroups, kSetgid, kSetuid, kPdeathsig, kExec };

[[noreturn]] void fail_in_child(int report_fd, Step step) {
    const StartFailure f{step, errno};
    (void)!write(report_fd, &f, sizeof f);
    _exit(127);
}

std::string errno_text(int err) {
    return std::generic_category().message(err);
}

int decode_status(int raw) {
    if (WIFEXITED(raw)) return WEXITSTATUS(raw);
    if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
    return kStatusLost;
}

// The environment the child gets: ours, with `extra` added or replacing
// entries of the same name.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
    auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
    std::vector<std::string> env = extra;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry(*e);
        const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) {
            return name_of(x) == name_of(entry);
        });
        if (!replaced) env.push_back(entry);
    }
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (auto& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// The end of a log file, for error messages: why a daemon did not start is
// usually in its last lines.
std::string log_tail(const fs::path& path) {
    constexpr std::streamoff kTail = 1500;
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    in.seekg(std::max<std::streamoff>(0, size - kTail));
    std::ostringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

std::string with_log(std::string message, const fs::path& log) {
    if (log.empty()) return message;
    const std::string tail = log_tail(log);
    if (!tail.empty()) message += "; its stderr (" + log.string() + "):\n" + tail;
    return message;
}

int poll_ms(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, 1000));
}

// Waits for the forked child to exec (the CLOEXEC pipe closes: 0) or to
// report why it could not (>0), or for the time limit (-1).
int read_start_report(int fd, StartFailure& failure, Clock::time_point deadline) {
    size_t got = 0;
    auto* bytes = reinterpret_cast<char*>(&failure);
    while (true) {
        pollfd p{fd, POLLIN, 0};
        const int n = poll(&p, 1, poll_ms(deadline));
        if (n < 0 && errno != EINTR) return -1;
        if (n <= 0) {
            if (Clock::now() >= deadline) return -1;
            continue;
        }
        const ssize_t r = read(fd, bytes + got, sizeof failure - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return got == 0 ? 0 : 1;
        got += static_cast<size_t>(r);
        if (got == sizeof failure) return 1;
    }
}

enum class Ready { Yes, Eof, Timeout };

// Reads stdout a byte at a time up to and including the ready line, so that
// whatever follows it stays in the pipe for read_available_stdout().
Ready await_line(int fd, const std::string& wanted, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    std::string line;
    while (true) {
        pollfd p{fd, POLLIN, 0};
        const int n = poll(&p, 1, poll_ms(deadline));
        if (n < 0 && errno != EINTR) return Ready::Eof;
        if (n <= 0) {
            if (Clock::now() >= deadline) return Ready::Timeout;
            continue;
        }
        char c = 0;
        const ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return Ready::Eof;
        if (c != '\n') {
            line += c;
            continue;
        }
        if (line == wanted) return Ready::Yes;
        line.clear();
    }
}

void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
}

}  // namespace

std::unique_ptr<Child> Child::start(const std::vector<std::string>& argv, const Options& opts,
                                    std::string* why) {
    auto failed = [&](std::string message) -> std::unique_ptr<Child> {
        if (why) *why = std::move(message);
        return nullptr;
    };
    if (argv.empty()) return failed("no program to start");
    const std::string& name = argv.front();

    // Everything the child needs is built before fork(): the test process may
    // have threads (sdbus-c++ connections), so the child may only make
    // async-signal-safe calls until exec.
    std::vector<std::string> args = argv;
    std::vector<std::string> env = child_environment(opts.env);
    std::vector<char*> c_args = c_strings(args);
    std::vector<char*> c_env = c_strings(env);
    const bool set_uid = opts.uid != static_cast<uid_t>(-1);
    const bool set_gid = opts.gid != static_cast<gid_t>(-1);

    int log_fd = -1;
    if (!opts.stderr_log.empty()) {
        log_fd = open(opts.stderr_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (log_fd < 0) return failed(opts.stderr_log.string() + ": " + errno_text(errno));
    }
    int out[2] = {-1, -1};
    int report[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0) {
        const int err = errno;
        for (int fd : {out[0], out[1], log_fd})
            if (fd >= 0) close(fd);
        return failed("pipe: " + errno_text(err));
    }

    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        close(out[0]);
        close(report[0]);
        if (dup2(out[1], STDOUT_FILENO) < 0) fail_in_child(report[1], kDupStdout);
        if (log_fd >= 0 && dup2(log_fd, STDERR_FILENO) < 0) fail_in_child(report[1], kDupStderr);
        if (set_uid || set_gid) {
            // Root's supplementary groups would otherwise survive the drop.
            if (geteuid() == 0 && setgroups(0, nullptr) != 0) fail_in_child(report[1], kSetgroups);
            // gid before uid: after setuid() the right to change it is gone.
            if (set_gid && setgid(opts.gid) != 0) fail_in_child(report[1], kSetgid);
            if (set_uid && setuid(opts.uid) != 0) fail_in_child(report[1], kSetuid);
        }
        // After the credential change, which clears the parent-death signal.
        // It fires when the thread that forked us ends, which for tests is
        // the test's main thread.
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) fail_in_child(report[1], kPdeathsig);
        // The test died before prctl() took effect: nobody would stop us.
        if (getppid() != parent) _exit(1);
        execvpe(c_args[0], c_args.data(), c_env.data());
        fail_in_child(report[1], kExec);
    }
    const int fork_errno = errno;
    close(out[1]);
    close(report[1]);
    close_fd(log_fd);
    if (pid < 0) {
        close(out[0]);
        close(report[0]);
        return failed("fork: " + errno_text(fork_errno));
    }

    std::unique_ptr<Child> child(new Child());
    child->pid_ = pid;
    child->stdout_fd_ = out[0];

    StartFailure failure;
    const int reported = read_start_report(report[0], failure, Clock::now() + opts.ready_timeout);
    close(report[0]);
    if (reported != 0) {
        child->stop();
        if (reported < 0) return failed(name + ": did not exec within the time limit");
        const int step = std::clamp(failure.step, 0, static_cast<int>(std::size(kSteps)) - 1);
        return failed(name + ": " + kSteps[step] + ": " + errno_text(failure.err));
    }

    if (!opts.ready_line.empty()) {
        const Ready ready = await_line(child->stdout_fd_, opts.ready_line, opts.ready_timeout);
        if (ready != Ready::Yes) {
            std::string message;
            if (ready == Ready::Timeout) {
                message = name + ": did not print \"" + opts.ready_line + "\" within " +
                          std::to_string(opts.ready_timeout.count()) + " ms";
            } else {
                const int status = child->wait(1s);
                message = name + ": exited (status " + std::to_string(status) +
                          ") before printing \"" + opts.ready_line + "\"";
            }
            child->stop();
            return failed(with_log(std::move(message), opts.stderr_log));
        }
    }
    // Only our end: the child's stdout stays blocking.
    fcntl(child->stdout_fd_, F_SETFL, fcntl(child->stdout_fd_, F_GETFL) | O_NONBLOCK);
    return child;
}

Child::~Child() {
    stop();
}

std::string Child::read_available_stdout() {
    std::string text;
    char buf[4096];
    while (stdout_fd_ >= 0) {
        const ssize_t r = read(stdout_fd_, buf, sizeof buf);
        if (r > 0) {
            text.append(buf, static_cast<size_t>(r));
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else {
            // EOF: the child (and anything that inherited its stdout) is done.
            if (r == 0) close_fd(stdout_fd_);
            break;
        }
    }
    return text;
}

int Child::wait(std::chrono::milliseconds limit) {
    if (status_ >= 0 || pid_ <= 0) return status_;
    const auto deadline = Clock::now() + limit;
    auto nap = 1ms;
    while (true) {
        int raw = 0;
        const pid_t r = waitpid(pid_, &raw, WNOHANG);
        if (r == pid_) {
            status_ = decode_status(raw);
            return status_;
        }
        if (r < 0 && errno == ECHILD) {
            status_ = kStatusLost;
            return status_;
        }
        if (r < 0 && errno != EINTR) return -1;
        const auto now = Clock::now();
        if (now >= deadline) return -1;
        std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(nap, deadline - now));
        nap = std::min(nap * 2, 20ms);
    }
}

bool Child::running() {
    return pid_ > 0 && wait(0ms) < 0;
}

void Child::stop() {
    if (running()) {
        kill(pid_, SIGTERM);
        if (wait(kStopGrace) < 0) kill_hard();
    }
    close_fd(stdout_fd_);
}

void Child::kill_hard() {
    if (!running()) return;
    kill(pid_, SIGKILL);
    // SIGKILL cannot be ignored; the limit only guards against a child stuck
    // in the kernel.
    wait(kStopGrace);
}

std::unique_ptr<PrivateBus> PrivateBus::start(const fs::path& config, std::string* why) {
    auto failed = [&](std::string message) -> std::unique_ptr<PrivateBus> {
        if (why) *why = std::move(message);
        return nullptr;
    };
    char tmpl[] = "/tmp/nictune-bus-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return failed(std::string("mkdtemp: ") + errno_text(errno));
    // From here on the destructor removes the directory.
    std::unique_ptr<PrivateBus> bus(new PrivateBus());
    bus->dir_ = tmpl;
    // Clients that a test runs as another user (Child::Options::uid) must
    // reach the socket, which dbus-daemon creates inside this directory.
    chmod(bus->dir_.c_str(), 0755);

    Child::Options opts;
    // Its warnings (e.g. about the fd limit) stay out of the test output.
    opts.stderr_log = bus->dir_ / "dbus-daemon.log";
    const std::vector<std::string> argv = {"dbus-daemon",
                                           "--config-file=" + config.string(),
                                           "--address=unix:dir=" + bus->dir_.string(),
                                           "--nofork",
                                           "--nopidfile",
                                           "--print-address=1"};
    std::string child_why;
    bus->child_ = Child::start(argv, opts, &child_why);
    if (!bus->child_) return failed(child_why);

    // The address is unknown until the daemon prints it (unix:dir= picks
    // the socket name), so this waits for any first line, not a fixed one.
    const auto deadline = Clock::now() + 10s;
    std::string out;
    while (true) {
        out += bus->child_->read_available_stdout();
        if (out.find('\n') != std::string::npos) break;
        if (!bus->child_->running())
            return failed(with_log("dbus-daemon exited (status " +
                                       std::to_string(bus->child_->wait(0ms)) +
                                       ") before printing its address",
                                   opts.stderr_log));
        if (Clock::now() >= deadline)
            return failed(
                with_log("dbus-daemon did not print its address within 10 s", opts.stderr_log));
        std::this_thread::sleep_for(5ms);
    }
    bus->address_ = out.substr(0, out.find('\n'));
    if (bus->address_.empty()) return failed("dbus-daemon printed an empty address");
    return bus;
}

PrivateBus::~PrivateBus() {
    child_.reset();
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::unique_ptr<Child> start_fake_tuned(const PrivateBus& bus, const std::string& profile,
                                        std::string* why) {
    Child::Options opts;
    opts.ready_line = "ready";
    opts.stderr_log = bus.dir() / "fake-tuned.log";
    return Child::start({NICTUNE_FAKE_TUNED_PATH, "--address", bus.address(), "--profile", profile},
                        opts, why);
}

}  // namespace nictune::test
