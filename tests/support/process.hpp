// Running commands from tests (oracles such as ip and ethtool, the CLI under
// test). Test code only: the product never starts processes.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace nictune::test {

struct CommandResult {
    int status = -1;  // exit status, or 128+signal
    std::string out;  // stdout
    std::string err;  // stderr
};

// Runs argv (no shell) with a time limit; kills the child (by PID) on timeout.
CommandResult run(const std::vector<std::string>& argv, int timeout_ms = 20000);
// Runs `sh -c script`.
CommandResult sh(const std::string& script, int timeout_ms = 20000);

bool is_root();
bool have_program(const std::string& name);

// Polls `pred` every `step` for up to `limit`; its last answer.
template <class F>
bool eventually(F&& pred, std::chrono::milliseconds limit = std::chrono::milliseconds(8000),
                std::chrono::milliseconds step = std::chrono::milliseconds(50)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) return true;
        std::this_thread::sleep_for(step);
    }
    return pred();
}

}  // namespace nictune::test
