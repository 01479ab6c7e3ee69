// The fuzz targets' bodies (tests/fuzz/harness.cpp) in the ordinary build:
// every minimal reproducer of a bug that fuzzing found
// (tests/fuzz/regressions/<target>/) and every seed (tests/fuzz/corpus/<target>/)
// goes through the same code as under libFuzzer, so a fixed crash stays fixed
// in every CI build, with or without clang.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/harness.hpp"

namespace nictune::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzDir = fs::path(NICTUNE_SOURCE_DIR) / "tests" / "fuzz";

[[noreturn]] void throw_violation(const std::string& problem) {
    throw std::runtime_error(problem);
}

// A broken invariant fails the test instead of aborting the test binary.
class FuzzInputs : public ::testing::Test {
  protected:
    void SetUp() override { set_violation_handler(throw_violation); }
    void TearDown() override { set_violation_handler(nullptr); }
};

std::vector<uint8_t> read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in) << path;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<fs::path> files_in(const fs::path& dir) {
    std::vector<fs::path> out;
    if (!fs::is_directory(dir)) return out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file()) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// Runs one input through its target: whether it was accepted, or the
// invariant it broke.
struct Outcome {
    bool accepted = false;
    std::string violation;
};

Outcome run(std::string_view target, const fs::path& file) {
    const Target* t = find_target(target);
    if (t == nullptr) throw std::logic_error("no fuzz target " + std::string(target));
    const auto bytes = read_bytes(file);
    try {
        return {t->run(bytes), {}};
    } catch (const std::runtime_error& e) {
        return {false, e.what()};
    }
}

// A reproducer under regressions/<target>/.
Outcome reproducer(std::string_view target, std::string_view name) {
    const fs::path file = kFuzzDir / "regressions" / target / name;
    EXPECT_TRUE(fs::is_regular_file(file)) << file;
    return run(target, file);
}

TEST_F(FuzzInputs, EveryTargetHasASeedCorpusAndEveryCorpusATarget) {
    for (const Target& t : targets())
        EXPECT_FALSE(files_in(kFuzzDir / "corpus" / t.name).empty()) << t.name;
    for (const auto* kind : {"corpus", "regressions"}) {
        if (!fs::is_directory(kFuzzDir / kind)) continue;
        for (const auto& dir : fs::directory_iterator(kFuzzDir / kind)) {
            if (!dir.is_directory()) continue;
            EXPECT_NE(find_target(dir.path().filename().string()), nullptr)
                << dir.path() << " names no fuzz target";
        }
    }
}

// The seeds are inputs the parsers accept (a rejected seed only teaches the
// fuzzer the first error path) and hold every invariant.
TEST_F(FuzzInputs, EverySeedIsAcceptedAndHoldsTheInvariants) {
    for (const Target& t : targets()) {
        for (const auto& file : files_in(kFuzzDir / "corpus" / t.name)) {
            const Outcome o = run(t.name, file);
            EXPECT_EQ(o.violation, "") << file;
            EXPECT_TRUE(o.accepted) << file << " is rejected by " << t.what;
        }
    }
}

// Every reproducer, whatever its bug: it must go through without breaking an
// invariant. (Memory errors show only under the sanitizers: the tests for
// each bug below also check the outcome.)
TEST_F(FuzzInputs, EveryReproducerHoldsTheInvariants) {
    for (const Target& t : targets())
        for (const auto& file : files_in(kFuzzDir / "regressions" / t.name))
            EXPECT_EQ(run(t.name, file).violation, "") << file;
}

// ---- Bugs fuzzing found, one test each (the reproducers are minimal).

// ethnl: a compact bitset of size 0 with a VALUE attribute, as a FEATURES
// reply (and encode_features() for 0 bits) can carry, makes read_words()
// call memcpy(nullptr, p, 0): undefined behaviour, "null pointer passed as
// argument 1" under UBSan. The plain build cannot see it; the sanitizer
// build (NICTUNE_SANITIZE) and the fuzzer fail until it is fixed.
TEST_F(FuzzInputs, AZeroBitFeatureBitsetDecodesWithoutUndefinedBehaviour) {
    const Outcome o = reproducer("ethnl", "features-zero-bit-compact-bitset.bin");
    EXPECT_EQ(o.violation, "");
    EXPECT_TRUE(o.accepted) << "a 0-bit bitset is well-formed";
}

// config and profile: toml++ 3.3.0's is_non_ascii_horizontal_whitespace()
// reached TOML_UNREACHABLE (undefined behaviour; "execution reached an
// unreachable program point" under UBSan) for U+FEDF after "fM" and U+FCFF
// inside a dotted key. profile/toml.hpp replaces that function. The plain
// build cannot see it; the sanitizer build and the fuzzer fail until fixed.
TEST_F(FuzzInputs, NonAsciiNextToAKeyIsAParseErrorWithoutUndefinedBehaviour) {
    const Outcome config = reproducer("config", "toml-non-ascii-after-a-key-ubsan-unreachable.bin");
    EXPECT_EQ(config.violation, "");
    EXPECT_FALSE(config.accepted);
    const Outcome profile = reproducer("profile", "toml-non-ascii-in-a-key-ubsan-unreachable.bin");
    EXPECT_EQ(profile.violation, "");
    EXPECT_FALSE(profile.accepted);
}

// rtnl: decode_link() keeps any IFLA_OPERSTATE byte, so link.operstate can
// hold 7..255, values the schema's enum does not name (reports then show a
// number where they show a name), while the ethtool decoders drop enum
// values they cannot name (is_unknown_value). Reproducer: RTM_NEWLINK for
// eth0 with IFLA_OPERSTATE = 7.
TEST_F(FuzzInputs, AnOperstateTheSchemaDoesNotNameIsNotKept) {
    const Outcome o = reproducer("rtnl", "operstate-beyond-the-enum.bin");
    EXPECT_EQ(o.violation, "");
    EXPECT_TRUE(o.accepted) << "the link itself is well-formed";
}

}  // namespace
}  // namespace nictune::fuzz
