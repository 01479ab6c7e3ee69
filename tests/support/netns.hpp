// A network namespace made by a test, removed (with everything in it) when
// the object goes. Tests change interfaces only inside such namespaces.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "support/process.hpp"

namespace nictune::test {

class TestNetns {
  public:
    // Creates "ntt-<pid>-<n>" with `ip netns add` and brings its lo up.
    // Returns nullptr (and sets why) when not root or iproute2 is missing.
    static std::unique_ptr<TestNetns> create(std::string* why);
    ~TestNetns();
    TestNetns(const TestNetns&) = delete;
    TestNetns& operator=(const TestNetns&) = delete;

    [[nodiscard]] const std::string& name() const { return name_; }

    // `ip netns exec NAME sh -c script`: sees the namespace's links and its
    // own /sys, like a process started there by an operator.
    CommandResult exec(const std::string& script, int timeout_ms = 20000) const;
    // `ip netns exec NAME argv...`
    CommandResult exec_argv(const std::vector<std::string>& argv, int timeout_ms = 20000) const;

    // `count` veth pairs NAME<i> / PEER<i>, i from 0, both ends in this
    // namespace, made by one `ip -batch` run.
    CommandResult add_veth_pairs(const std::string& name, const std::string& peer, int count,
                                 int timeout_ms = 60000) const;

    // Runs fn on a thread that joined the namespace (setns). Sockets opened
    // there belong to the namespace; /sys still shows the host's view.
    void run_inside(const std::function<void()>& fn) const;

  private:
    explicit TestNetns(std::string name) : name_(std::move(name)) {}
    std::string name_;
};

// GTest helper: skips the current test with a reason when there is no netns.
#define NICTUNE_REQUIRE_NETNS(var)                             \
    std::string var##_why;                                     \
    auto var = ::nictune::test::TestNetns::create(&var##_why); \
    if (!var) GTEST_SKIP() << var##_why

}  // namespace nictune::test
