// The bodies of the fuzz targets: each feeds one input to the parser or
// decoder it is named after and checks what the result must satisfy (errors
// carry a message and a location, decoded values fit the schema, state records
// survive a round trip, ...). The libFuzzer binaries (fuzz_main.cpp, clang)
// and the regression unit test (tests/unit/fuzz_regressions_test.cpp, every
// build) run the same code, so a crash found by fuzzing stays found.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace nictune::fuzz {

using Bytes = std::span<const uint8_t>;

struct Target {
    std::string_view name;  // tests/fuzz/corpus/<name>, binary nictune_fuzz_<name>
    // Feeds one input; true when the parser or decoder accepted it.
    bool (*run)(Bytes input);
    std::string_view what;  // the entry points it drives
};

// profile, config, facts, state, ethnl, rtnl.
std::span<const Target> targets();
const Target* find_target(std::string_view name);

// Called when a checked property does not hold. The default prints the
// problem and aborts, which libFuzzer reports as a crash with the input; the
// unit test installs one that throws. The harness aborts if it returns.
using ViolationHandler = void (*)(const std::string& problem);
void set_violation_handler(ViolationHandler handler);

}  // namespace nictune::fuzz
