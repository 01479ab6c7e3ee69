// tuned's state without a reachable bus: the file fallbacks and the reasons
// the report shows. The D-Bus path is in tests/integration/tuned_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tuned/tuned_client.hpp"

namespace nictune::tuned {
namespace {

namespace fs = std::filesystem;

class TunedFallback : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-tuned-XXXXXX";
        const char* dir = mkdtemp(tmpl);
        ASSERT_NE(dir, nullptr) << std::strerror(errno);
        root_ = dir;
        // A socket path that cannot exist: the bus is "not running".
        opts_.bus_address = "unix:path=" + (root_ / "no-bus").string();
        opts_.config_dir = root_ / "etc-tuned";
        opts_.active_profile_file = opts_.config_dir / "active_profile";
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    void write_active(const std::string& text) {
        fs::create_directories(opts_.config_dir);
        std::ofstream(opts_.active_profile_file) << text;
    }

    fs::path root_;
    Options opts_;
};

TEST_F(TunedFallback, ReadsTheActiveProfileFileWhenTheBusIsUnreachable) {
    write_active("latency-performance\n");
    const TunedState st = read_state(opts_);
    EXPECT_EQ(st.source, TunedSource::File);
    EXPECT_EQ(st.active_profile, "latency-performance");
    EXPECT_NE(st.detail.find("not reachable"), std::string::npos) << st.detail;
    EXPECT_NE(st.detail.find(opts_.active_profile_file.string()), std::string::npos) << st.detail;
}

TEST_F(TunedFallback, TakesAnEmptyFileAsNoActiveProfile) {
    write_active(" \n");
    const TunedState st = read_state(opts_);
    EXPECT_EQ(st.source, TunedSource::File);
    EXPECT_FALSE(st.active_profile);
    EXPECT_NE(st.detail.find("no active profile"), std::string::npos) << st.detail;
}

TEST_F(TunedFallback, ReportsInstalledWithoutProfileWhenOnlyTheConfigDirExists) {
    fs::create_directories(opts_.config_dir);
    const TunedState st = read_state(opts_);
    EXPECT_EQ(st.source, TunedSource::File);
    EXPECT_FALSE(st.active_profile);
    EXPECT_NE(st.detail.find("tuned installed, no active profile"), std::string::npos) << st.detail;
}

TEST_F(TunedFallback, ReportsNotInstalledWhenNothingIsThere) {
    const TunedState st = read_state(opts_);
    EXPECT_EQ(st.source, TunedSource::NotInstalled);
    EXPECT_FALSE(st.active_profile);
    EXPECT_FALSE(st.detail.empty());
}

TEST_F(TunedFallback, DoesNotThrowOnAMalformedBusAddress) {
    opts_.bus_address = "this is not an address";
    write_active("balanced\n");
    TunedState st;
    EXPECT_NO_THROW(st = read_state(opts_));
    EXPECT_EQ(st.source, TunedSource::File);
    EXPECT_EQ(st.active_profile, "balanced");
}

TEST_F(TunedFallback, SwitchingWithoutABusIsUnsupported) {
    write_active("balanced\n");
    auto r = switch_profile(opts_, "latency-performance");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::Unsupported);
    EXPECT_NE(r.error().context.find("latency-performance"), std::string::npos);
    // The file is tuned's, not ours: it stays as it was.
    std::ifstream in(opts_.active_profile_file);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "balanced");
}

TEST_F(TunedFallback, RefusesAnEmptyProfileName) {
    auto r = switch_profile(opts_, "");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::InvalidArgument);
}

}  // namespace
}  // namespace nictune::tuned
