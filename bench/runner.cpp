// nictune_bench_runner: times command sequences ("variants") against each
// other, alternating, for bench/run.
//
//   nictune_bench_runner [--reps R] [--warmup W] [--min-reps M] [--max-seconds S]
//                        --variant NAME=FILE [--variant NAME=FILE ...]
//
// FILE holds one command per line, run in order without a shell (argv split
// on blanks; no quoting). Lines:
//   # comment
//   @phase NAME          the following commands are timed as phase NAME
//   [rc=0,1|rc=any] [ns=NETNS] ARGV
//                        the allowed exit statuses (default rc=0); the network
//                        namespace /run/netns/NETNS to run it in (default: the
//                        runner's own), entered with setns() around the spawn
//
// One sample of a variant runs all of its commands once; each command's
// stdout is read to the end (as a script that parses it would) and dropped,
// its stderr is kept for error messages. Repetition r runs the variants in
// rotated order (r, r+1, ...) so that no variant always goes first. After
// `warmup` unrecorded repetitions, it records R repetitions, or stops early
// once at least M are recorded and S seconds have passed.
//
// Prints one JSON object on stdout: per variant, the total and per-phase wall
// times of each sample in milliseconds. A command that exits with a status
// its line does not allow stops the run (exit status 3) with its stderr.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Command {
    std::string netns;  // run in /run/netns/<netns> (empty: the runner's own)
    std::vector<std::string> argv;
    std::vector<int> allowed;  // empty: any normal exit
    std::size_t phase = 0;
    std::string text;
};

struct Variant {
    std::string name;
    std::vector<std::string> phases;
    std::vector<Command> commands;
    std::vector<std::vector<double>> phase_ms;  // [phase][sample]
    std::vector<double> total_ms;
    std::size_t stdout_bytes = 0;  // of the last sample
};

double now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

[[noreturn]] void die(const std::string& msg, int code = 2) {
    std::fprintf(stderr, "nictune_bench_runner: %s\n", msg.c_str());
    std::exit(code);
}

std::vector<std::string> split(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    std::string w;
    while (in >> w)
        out.push_back(w);
    return out;
}

Variant load_variant(const std::string& spec) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) die("--variant wants NAME=FILE, got " + spec);
    Variant v;
    v.name = spec.substr(0, eq);
    const std::string file = spec.substr(eq + 1);
    std::ifstream in(file);
    if (!in) die("cannot read " + file);
    v.phases.push_back("all");
    std::string line;
    std::size_t phase = 0;
    bool phase_used = false;
    while (std::getline(in, line)) {
        auto words = split(line);
        if (words.empty() || words[0].starts_with("#")) continue;
        if (words[0] == "@phase") {
            if (words.size() != 2) die(file + ": @phase wants one name");
            // The implicit "all" phase is replaced when nothing ran in it.
            if (!phase_used && v.phases.size() == 1) {
                v.phases[0] = words[1];
            } else {
                v.phases.push_back(words[1]);
                ++phase;
            }
            phase_used = false;
            continue;
        }
        Command c;
        c.allowed = {0};
        if (words[0].starts_with("rc=")) {
            const std::string list = words[0].substr(3);
            c.allowed.clear();
            if (list != "any") {
                std::istringstream l(list);
                std::string n;
                while (std::getline(l, n, ','))
                    c.allowed.push_back(std::atoi(n.c_str()));
            }
            words.erase(words.begin());
        }
        if (!words.empty() && words[0].starts_with("ns=")) {
            c.netns = words[0].substr(3);
            words.erase(words.begin());
        }
        if (words.empty()) die(file + ": empty command");
        c.argv = words;
        c.phase = phase;
        c.text = line;
        v.commands.push_back(std::move(c));
        phase_used = true;
    }
    if (v.commands.empty()) die(file + ": no commands");
    v.phase_ms.resize(v.phases.size());
    return v;
}

// Network namespace files, opened once: the runner enters a command's
// namespace around posix_spawn (it is single-threaded, so setns() moves the
// whole process) and goes back to its own right after.
int netns_fd(const std::string& name) {
    static std::map<std::string, int> fds;
    auto it = fds.find(name);
    if (it != fds.end()) return it->second;
    const std::string path = name.empty() ? "/proc/self/ns/net" : "/run/netns/" + name;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("cannot open " + path + ": " + std::strerror(errno));
    fds[name] = fd;
    return fd;
}

void enter_netns(const std::string& name) {
    if (setns(netns_fd(name), CLONE_NEWNET) != 0)
        die("setns " + (name.empty() ? std::string("back") : name) + ": " + std::strerror(errno));
}

void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
}

// Runs one command; returns the bytes it wrote on stdout. Exits the runner
// when its status is not allowed.
std::size_t run(const Command& c) {
    int out[2];
    int err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) die("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
    std::vector<char*> argv;
    for (const auto& a : c.argv)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (!c.netns.empty()) enter_netns(c.netns);
    const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    if (!c.netns.empty()) enter_netns("");
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    if (rc != 0) die("cannot start " + c.argv[0] + ": " + std::strerror(rc), 3);

    std::size_t bytes = 0;
    std::string errtext;
    int fds[2] = {out[0], err[0]};
    char buf[65536];
    while (fds[0] >= 0 || fds[1] >= 0) {
        pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
        // A hung command is a failed benchmark, not a hung one.
        const int n = poll(p, 2, 600000);
        if (n == 0) {
            kill(pid, SIGKILL);
            die("timed out after 600 s: " + c.text, 3);
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            die("poll failed");
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i] < 0 || p[i].revents == 0) continue;
            const ssize_t r = read(fds[i], buf, sizeof buf);
            if (r > 0) {
                if (i == 0)
                    bytes += static_cast<std::size_t>(r);
                else if (errtext.size() < 8192)
                    errtext.append(buf, static_cast<std::size_t>(r));
            } else if (r == 0 || errno != EINTR) {
                close_fd(fds[i]);
            }
        }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) die("waitpid failed");
    bool ok = WIFEXITED(status);
    if (ok && !c.allowed.empty())
        ok = std::find(c.allowed.begin(), c.allowed.end(), WEXITSTATUS(status)) != c.allowed.end();
    if (!ok) {
        std::string why = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                            : "signal " + std::to_string(WTERMSIG(status));
        die(why + ": " + c.text + "\n" + errtext, 3);
    }
    return bytes;
}

void sample(Variant& v, bool record) {
    std::vector<double> phase(v.phases.size(), 0.0);
    std::size_t bytes = 0;
    const double t0 = now_ms();
    for (const auto& c : v.commands) {
        const double s = now_ms();
        bytes += run(c);
        phase[c.phase] += now_ms() - s;
    }
    const double total = now_ms() - t0;
    if (!record) return;
    v.total_ms.push_back(total);
    for (std::size_t i = 0; i < phase.size(); ++i)
        v.phase_ms[i].push_back(phase[i]);
    v.stdout_bytes = bytes;
}

std::string json_str(const std::string& s) {
    std::string o = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') o += '\\';
        o += ch;
    }
    return o + "\"";
}

std::string json_list(const std::vector<double>& xs) {
    std::string o = "[";
    for (std::size_t i = 0; i < xs.size(); ++i) {
        char b[32];
        std::snprintf(b, sizeof b, "%s%.3f", i ? ", " : "", xs[i]);
        o += b;
    }
    return o + "]";
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 5;
    int warmup = 1;
    int min_reps = 3;
    double max_seconds = 1e9;
    std::vector<Variant> variants;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--reps")
            reps = std::atoi(value().c_str());
        else if (a == "--warmup")
            warmup = std::atoi(value().c_str());
        else if (a == "--min-reps")
            min_reps = std::atoi(value().c_str());
        else if (a == "--max-seconds")
            max_seconds = std::atof(value().c_str());
        else if (a == "--variant")
            variants.push_back(load_variant(value()));
        else
            die("unknown argument " + a +
                "\nusage: nictune_bench_runner [--reps R] [--warmup W] [--min-reps M] "
                "[--max-seconds S] --variant NAME=FILE...");
    }
    if (variants.empty()) die("no --variant given");
    reps = std::clamp(reps, 1, 1000);
    warmup = std::clamp(warmup, 0, 100);
    min_reps = std::clamp(min_reps, 1, reps);

    const double start = now_ms();
    int recorded = 0;
    for (int r = 0; r < warmup + reps; ++r) {
        const bool record = r >= warmup;
        for (std::size_t k = 0; k < variants.size(); ++k)
            sample(variants[(static_cast<std::size_t>(r) + k) % variants.size()], record);
        if (record) ++recorded;
        if (recorded >= min_reps && (now_ms() - start) / 1e3 > max_seconds) break;
    }

    std::printf("{\"reps\": %d, \"warmup\": %d, \"variants\": [", recorded, warmup);
    for (std::size_t k = 0; k < variants.size(); ++k) {
        const Variant& v = variants[k];
        std::printf("%s{\"name\": %s, \"commands\": %zu, \"stdout_bytes\": %zu, \"total_ms\": %s",
                    k ? ", " : "", json_str(v.name).c_str(), v.commands.size(), v.stdout_bytes,
                    json_list(v.total_ms).c_str());
        std::printf(", \"phases\": {");
        for (std::size_t p = 0; p < v.phases.size(); ++p)
            std::printf("%s%s: %s", p ? ", " : "", json_str(v.phases[p]).c_str(),
                        json_list(v.phase_ms[p]).c_str());
        std::printf("}}");
    }
    std::printf("]}\n");
    return 0;
}
