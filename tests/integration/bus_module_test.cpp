// nictunectl's bus module (lib/buslink/): loaded when a command needs the
// bus, not at start, and a module that is missing is an error message, not a
// crash. The D-Bus commands themselves are tested against nictuned
// (daemon_test.cpp, health_audit_test.cpp's stand-ins for systemd and
// NetworkManager, tuned_test.cpp); the loader prints which files it loads
// (LD_DEBUG=files), the oracle here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/process.hpp"

namespace nictune::test {
namespace {

namespace fs = std::filesystem;

bool loads(const std::string& ld_debug, const std::string& file) {
    return ld_debug.find("file=" + file) != std::string::npos;
}

TEST(BusModule, VersionLoadsNoDbusLibrary) {
    const auto r = run({"env", "LD_DEBUG=files", NICTUNECTL_PATH, "--version"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(loads(r.err, "libsystemd.so")) << r.err;
    EXPECT_FALSE(loads(r.err, "libsdbus-c++.so")) << r.err;
    EXPECT_EQ(r.err.find("nictune-bus.so"), std::string::npos) << r.err;
}

TEST(BusModule, ACommandForNictunedOpensTheModuleAndItsLibraries) {
    // No bus at this address: the module answers, so it was loaded.
    const auto r = run({"env", "LD_DEBUG=files", NICTUNECTL_PATH, "--bus-address",
                        "unix:path=/nonexistent/nictune-test/bus", "status"});
    EXPECT_NE(r.status, 0);
    EXPECT_LT(r.status, 128) << "killed by a signal: " << r.err;
    EXPECT_TRUE(loads(r.err, "libsdbus-c++.so")) << r.err;
    EXPECT_NE(r.err.find("nictune-bus.so"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nictunectl: status: no D-Bus connection"), std::string::npos) << r.err;
}

TEST(BusModule, WithoutTheModuleTheCommandSaysWhatIsMissing) {
    // A copy of nictunectl where no module is next to it.
    const fs::path dir = fs::temp_directory_path() / ("nictune-busmod-" + std::to_string(getpid()));
    fs::create_directories(dir / "bin");
    const fs::path ctl = dir / "bin" / "nictunectl";
    fs::copy_file(NICTUNECTL_PATH, ctl);
    const auto version = run({ctl.string(), "--version"});
    const auto status = run({ctl.string(), "status"});
    fs::remove_all(dir);
    EXPECT_EQ(version.status, 0) << version.err;
    EXPECT_NE(status.status, 0);
    EXPECT_LT(status.status, 128) << "killed by a signal: " << status.err;
    EXPECT_NE(status.err.find("nictunectl: status: cannot load "), std::string::npos) << status.err;
    EXPECT_NE(status.err.find("nictune-bus.so: "), std::string::npos) << status.err;
}

}  // namespace
}  // namespace nictune::test
