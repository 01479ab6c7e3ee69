#include "support/netns.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <thread>

namespace nictune::test {

std::unique_ptr<TestNetns> TestNetns::create(std::string* why) {
    if (!is_root()) {
        *why = "needs root to create a network namespace";
        return nullptr;
    }
    if (!have_program("ip")) {
        *why = "needs iproute2 (ip) to create a network namespace";
        return nullptr;
    }
    static std::atomic<int> counter{0};
    std::string name = "ntt-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    auto r = run({"ip", "netns", "add", name});
    if (r.status != 0) {
        *why = "ip netns add failed: " + r.err;
        return nullptr;
    }
    std::unique_ptr<TestNetns> ns(new TestNetns(name));
    ns->exec("ip link set lo up");
    return ns;
}

TestNetns::~TestNetns() {
    run({"ip", "netns", "del", name_});
}

CommandResult TestNetns::exec(const std::string& script, int timeout_ms) const {
    return run({"ip", "netns", "exec", name_, "sh", "-c", script}, timeout_ms);
}

CommandResult TestNetns::add_veth_pairs(const std::string& name, const std::string& peer, int count,
                                        int timeout_ms) const {
    return exec("for i in $(seq 0 " + std::to_string(count - 1) + "); do echo \"link add name " +
                    name + "$i type veth peer name " + peer + "$i\"; done | ip -batch -",
                timeout_ms);
}

CommandResult TestNetns::exec_argv(const std::vector<std::string>& argv, int timeout_ms) const {
    std::vector<std::string> full = {"ip", "netns", "exec", name_};
    full.insert(full.end(), argv.begin(), argv.end());
    return run(full, timeout_ms);
}

void TestNetns::run_inside(const std::function<void()>& fn) const {
    std::exception_ptr error;
    std::thread t([&] {
        try {
            int fd = open(("/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) throw std::runtime_error("open /run/netns/" + name_);
            if (setns(fd, CLONE_NEWNET) != 0) {
                close(fd);
                throw std::runtime_error("setns " + name_);
            }
            close(fd);
            fn();
        } catch (...) {
            error = std::current_exception();
        }
    });
    t.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace nictune::test
