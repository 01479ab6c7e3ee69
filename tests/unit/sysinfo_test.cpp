// GDRVINFO parsing, the sysfs reader on fixture trees (tests/data/sysfs),
// the hwdb lookup and the /proc/sys reader (tests/data/procsys).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/process.hpp"
#include "sysinfo/drvinfo.hpp"
#include "sysinfo/hwdb.hpp"
#include "sysinfo/procsys.hpp"
#include "sysinfo/sysfs.hpp"
#include "sysinfo/text_file.hpp"
#include "sysinfo/udev_device.hpp"

namespace nictune::sysinfo {
namespace {

namespace fs = std::filesystem;

const fs::path kData = NICTUNE_TEST_DATA;

template <std::size_t N>
void fill(char (&dst)[N], std::string_view s) {
    std::memset(dst, 0, N);
    std::memcpy(dst, s.data(), std::min(N, s.size()));
}

// A writable copy of a fixture tree, removed afterwards.
class TreeCopy {
  public:
    explicit TreeCopy(const fs::path& from) {
        char tmpl[] = "/tmp/nictune-sysinfo-XXXXXX";
        const char* dir = mkdtemp(tmpl);
        EXPECT_NE(dir, nullptr) << std::strerror(errno);
        root_ = dir;
        fs::copy(from, root_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
    ~TreeCopy() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    TreeCopy(const TreeCopy&) = delete;
    TreeCopy& operator=(const TreeCopy&) = delete;
    [[nodiscard]] const fs::path& root() const { return root_; }

  private:
    fs::path root_;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// ---- files below an open directory (text_file.hpp)

TEST(FilesBelowADirectory, ReadWhatTheWholePathReads) {
    // Every file of the sysfs fixture, read below its parent's open
    // directory and by its whole path: the same text or the same absence.
    int compared = 0;
    for (const auto& e : fs::recursive_directory_iterator(kData / "sysfs")) {
        if (!e.is_regular_file()) continue;
        const UniqueFd dir = detail::open_dir(e.path().parent_path());
        ASSERT_TRUE(dir) << e.path() << ": " << std::strerror(errno);
        const auto by_path = detail::read_text_file(e.path());
        const auto below = detail::read_value_file_at(dir.get(), e.path().filename().c_str());
        EXPECT_EQ(below.content, by_path.content) << e.path();
        EXPECT_EQ(below.sys_errno, by_path.sys_errno) << e.path();
        EXPECT_EQ(detail::read_value_at(dir.get(), e.path().filename().c_str()),
                  detail::read_value(e.path()))
            << e.path();
        ++compared;
    }
    EXPECT_GT(compared, 20);
    // Two components below the directory, as queues/rx-0/rps_cpus is read.
    const UniqueFd net = detail::open_dir(kData / "sysfs/class/net");
    ASSERT_TRUE(net);
    const UniqueFd p4p1 = detail::open_dir_at(net.get(), "p4p1");
    ASSERT_TRUE(p4p1) << "the class/net link is followed";
    EXPECT_EQ(detail::read_value_at(p4p1.get(), "device/numa_node"), "1");
    EXPECT_FALSE(detail::open_dir_at(net.get(), "nosuch"));
    EXPECT_FALSE(detail::open_dir(kData / "no-such-dir"));
}

TEST(FilesBelowADirectory, LongFilesAreReadWholeAndLimitsCut) {
    TreeCopy tree(kData / "procsys");
    const std::string big(10000, 'x');  // more than one read's page
    std::ofstream(tree.root() / "big") << big;
    std::ofstream(tree.root() / "empty");
    fs::create_directory(tree.root() / "dir");
    const UniqueFd dir = detail::open_dir(tree.root());
    ASSERT_TRUE(dir);
    EXPECT_EQ(detail::read_value_file_at(dir.get(), "big").content, big);
    EXPECT_EQ(detail::read_value_file_at(dir.get(), "big", 100).content, big.substr(0, 100));
    EXPECT_EQ(detail::read_value_file_at(dir.get(), "empty").content, "");
    EXPECT_FALSE(detail::read_value_at(dir.get(), "empty"));
    const auto missing = detail::read_value_file_at(dir.get(), "missing");
    EXPECT_FALSE(missing.content);
    EXPECT_EQ(missing.sys_errno, 0) << "absent, not an error";
    const auto not_a_file = detail::read_value_file_at(dir.get(), "dir");
    EXPECT_FALSE(not_a_file.content);
    EXPECT_EQ(not_a_file.sys_errno, EISDIR);
}

TEST(FilesBelowADirectory, AnOpenFileIsReadFromItsStartAfterAWrite) {
    // What IrqFiles::write_affinity does: write, then read back on the same
    // descriptor, whose offset the write moved past the text.
    TreeCopy tree(kData / "procsys");
    const fs::path file = tree.root() / "affinity";
    std::ofstream(file) << "0-1\n";
    const UniqueFd fd(::open(file.c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_TRUE(fd);
    ASSERT_EQ(::write(fd.get(), "2-3\n", 4), 4);
    EXPECT_EQ(detail::read_value_fd(fd.get()).content, "2-3\n");
}

// ---- GDRVINFO

TEST(DrvInfoParser, ReadsEveryField) {
    ethtool_drvinfo raw{};
    fill(raw.driver, "ixgbe");
    fill(raw.version, "5.19.6");
    fill(raw.fw_version, "0x800003df, 1.2074.0");
    fill(raw.erom_version, "1.1.0");
    fill(raw.bus_info, "0000:03:00.0");
    const DrvInfo d = parse_drvinfo(raw);
    EXPECT_EQ(d.driver, "ixgbe");
    EXPECT_EQ(d.version, "5.19.6");
    EXPECT_EQ(d.firmware_version, "0x800003df, 1.2074.0");
    EXPECT_EQ(d.expansion_rom_version, "1.1.0");
    EXPECT_EQ(d.bus_info, "0000:03:00.0");
}

TEST(DrvInfoParser, StopsAtTheEndOfAnUnterminatedField) {
    ethtool_drvinfo raw{};
    std::memset(raw.driver, 'd', sizeof raw.driver);  // no NUL anywhere
    std::memset(raw.version, 'v', sizeof raw.version);
    fill(raw.bus_info, "0000:03:00.0");
    const DrvInfo d = parse_drvinfo(raw);
    EXPECT_EQ(d.driver, std::string(sizeof raw.driver, 'd'));
    EXPECT_EQ(d.version, std::string(sizeof raw.version, 'v'));
    EXPECT_EQ(d.bus_info, "0000:03:00.0");
}

TEST(DrvInfoParser, TreatsEmptyAndNotAvailableAsAbsent) {
    ethtool_drvinfo raw{};
    fill(raw.driver, "virtio_net");
    fill(raw.version, "1.0.0");
    fill(raw.fw_version, "N/A");
    fill(raw.erom_version, "");
    fill(raw.bus_info, "  ");
    const DrvInfo d = parse_drvinfo(raw);
    EXPECT_EQ(d.driver, "virtio_net");
    EXPECT_EQ(d.version, "1.0.0");
    EXPECT_FALSE(d.firmware_version);
    EXPECT_FALSE(d.expansion_rom_version);
    EXPECT_FALSE(d.bus_info);
}

TEST(DrvInfoSocket, RejectsNamesOfIfnamsizOrLonger) {
    auto sock = IoctlSocket::open();
    ASSERT_TRUE(sock) << sock.error().str();
    auto r = sock->drvinfo("sixteen-chars-xx");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::InvalidArgument);
    EXPECT_EQ(sock->drvinfo("").error().code, Errc::InvalidArgument);
}

TEST(DrvInfoSocket, ReportsAnUnknownInterfaceAsNoSuchInterface) {
    auto sock = IoctlSocket::open();
    ASSERT_TRUE(sock) << sock.error().str();
    auto r = sock->drvinfo("ntnoexist0");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::NoSuchInterface);
    EXPECT_EQ(r.error().sys_errno, ENODEV);
    EXPECT_NE(r.error().context.find("ntnoexist0"), std::string::npos);
}

TEST(DrvInfoSocket, KeepsItsDescriptorAcrossMoves) {
    auto sock = IoctlSocket::open();
    ASSERT_TRUE(sock) << sock.error().str();
    IoctlSocket moved = std::move(*sock);
    // The moved-to socket still answers (ENODEV is an answer); the
    // moved-from one has no descriptor.
    EXPECT_EQ(moved.drvinfo("ntnoexist0").error().sys_errno, ENODEV);
    EXPECT_EQ(sock->drvinfo("ntnoexist0").error().sys_errno, EBADF);
}

// ---- sysfs

TEST(SysfsReader, FindsThePciFunctionOfAnIxgbePort) {
    const Sysfs sys(kData / "sysfs");
    ASSERT_TRUE(sys.has_device("p4p1"));
    auto pci = sys.pci_for("p4p1");
    ASSERT_TRUE(pci);
    // The function itself, not the root port above it.
    EXPECT_EQ(pci->slot, "0000:03:00.0");
    EXPECT_EQ(pci->id, "8086:10fb");
    EXPECT_EQ(pci->subsystem, "8086:7a11");
    EXPECT_EQ(pci->modalias, "pci:v00008086d000010FBsv00008086sd00007A11bc02sc00i00");
    EXPECT_EQ(pci->numa_node, 1);
    EXPECT_FALSE(pci->sriov_vf);
}

TEST(SysfsReader, MarksAnSriovVirtualFunction) {
    const Sysfs sys(kData / "sysfs");
    auto pci = sys.pci_for("enp3s16");
    ASSERT_TRUE(pci);
    EXPECT_EQ(pci->slot, "0000:03:10.0");
    EXPECT_EQ(pci->id, "8086:10ed");
    EXPECT_TRUE(pci->sriov_vf);
}

TEST(SysfsReader, WalksFromAVirtioDeviceUpToItsPciFunction) {
    const Sysfs sys(kData / "sysfs");
    ASSERT_TRUE(sys.has_device("eth0"));
    auto pci = sys.pci_for("eth0");
    ASSERT_TRUE(pci);
    EXPECT_EQ(pci->slot, "0000:00:03.0");
    EXPECT_EQ(pci->id, "1af4:1041");
    EXPECT_EQ(pci->subsystem, "1af4:1041");
    EXPECT_FALSE(pci->numa_node) << "numa_node -1 means no affinity";
    EXPECT_FALSE(pci->sriov_vf);
}

TEST(SysfsReader, FindsNoPciFunctionForADeviceOnAnotherBus) {
    const Sysfs sys(kData / "sysfs");
    EXPECT_TRUE(sys.has_device("eni1np1"));
    EXPECT_FALSE(sys.pci_for("eni1np1"));
}

TEST(SysfsReader, FindsNoDeviceBehindAVeth) {
    const Sysfs sys(kData / "sysfs");
    EXPECT_FALSE(sys.has_device("veth0"));
    EXPECT_FALSE(sys.pci_for("veth0"));
    EXPECT_FALSE(sys.has_device("nosuch0"));
    EXPECT_FALSE(sys.pci_for("nosuch0"));
}

TEST(SysfsReader, RefusesInterfaceNamesThatLeaveTheTree) {
    const Sysfs sys(kData / "sysfs");
    // Each of these would reach p4p1's device if the name were used as a path.
    EXPECT_FALSE(sys.pci_for("p4p1/../p4p1"));
    EXPECT_FALSE(sys.has_device("../net/p4p1"));
    EXPECT_FALSE(sys.pci_for("./p4p1"));
    EXPECT_FALSE(sys.has_device(".."));
    EXPECT_FALSE(sys.has_device(""));
}

TEST(SysfsReader, ReadsAnOutOfTreeModuleVersion) {
    Sysfs sys(kData / "sysfs");
    EXPECT_EQ(sys.module_version("ixgbe"), "5.19.6");
    EXPECT_FALSE(sys.module_version("virtio_net")) << "built-in modules have no version";
    EXPECT_FALSE(sys.module_version("i40e"));
    EXPECT_FALSE(sys.module_version("../module/ixgbe"));
}

TEST(SysfsReader, ReadsEachModuleVersionOnce) {
    TreeCopy tree(kData / "sysfs");
    Sysfs sys(tree.root());
    EXPECT_EQ(sys.module_version("ixgbe"), "5.19.6");
    EXPECT_FALSE(sys.module_version("i40e"));
    fs::remove(tree.root() / "module" / "ixgbe" / "version");
    fs::create_directories(tree.root() / "module" / "i40e");
    std::ofstream(tree.root() / "module" / "i40e" / "version") << "2.22.18\n";
    EXPECT_EQ(sys.module_version("ixgbe"), "5.19.6");
    EXPECT_FALSE(sys.module_version("i40e"));
    EXPECT_EQ(Sysfs(tree.root()).module_version("i40e"), "2.22.18");
}

TEST(UeventParser, MatchesWholeKeysOnly) {
    const std::string uevent =
        "DRIVER=ixgbe\nPCI_ID_EXTRA=x\nPCI_ID=8086:10FB\nPCI_SLOT_NAME=0000:03:00.0\nEMPTY=\n";
    EXPECT_EQ(uevent_value(uevent, "PCI_ID"), "8086:10FB");
    EXPECT_EQ(uevent_value(uevent, "PCI_SLOT_NAME"), "0000:03:00.0");
    EXPECT_EQ(uevent_value(uevent, "EMPTY"), "");
    EXPECT_FALSE(uevent_value(uevent, "PCI"));
    EXPECT_FALSE(uevent_value(uevent, "MODALIAS"));
    EXPECT_EQ(uevent_value("A=1", "A"), "1");
}

// ---- hwdb

// The lookup on a database the test builds from tests/data/hwdb (with
// udev's systemd-hwdb, which scripts/install-deps installs), not on the
// host's hwdb.bin: its presence and its names vary from host to host.
class HwdbFixture : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-hwdb-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        fs::create_directories(root_ / "etc/udev/hwdb.d");
        fs::copy_file(kData / "hwdb/60-nictune-test.hwdb",
                      root_ / "etc/udev/hwdb.d/60-nictune-test.hwdb");
        auto r =
            nictune::test::run({"systemd-hwdb", "update", "--strict", "--root", root_.string()});
        ASSERT_EQ(r.status, 0) << "systemd-hwdb (package udev) failed: " << r.err;
        db_ = root_ / "etc/udev/hwdb.bin";
        ASSERT_TRUE(fs::exists(db_));
    }
    void TearDown() override {
        std::error_code ec;
        if (!root_.empty()) fs::remove_all(root_, ec);
    }
    fs::path root_;
    fs::path db_;
};

TEST_F(HwdbFixture, NamesTheDeviceFromTheDatabase) {
    Hwdb db(db_);
    const auto names = db.lookup("pci:v00008086d000010FBsv00008086sd00000003bc02sc00i00");
    EXPECT_EQ(names.vendor, "nictune test vendor");
    EXPECT_EQ(names.model, "nictune test 10G NIC");
    // A pattern that gives the model only: the vendor stays absent.
    const auto x710 = db.lookup("pci:v00008086d00001572sv00008086sd00000001bc02sc00i00");
    EXPECT_FALSE(x710.vendor);
    EXPECT_EQ(x710.model, "nictune test X710 subsystem 1");
    EXPECT_FALSE(db.lookup("pci:v00008086d00001572sv00008086sd00000002bc02sc00i00").model);
}

// sd-device through libsystemd opened on first use (sysinfo/sd_api.cpp): an
// interface that does not exist is unknown with sd-device's own answer, not
// "libsystemd is not installed" (the table bound) nor a crash.
TEST(UdevProperty, AnInterfaceThatDoesNotExistIsUnknownWithSdDevicesReason) {
    const auto v = udev_property("nictune-none0", "ID_NET_DRIVER");
    EXPECT_FALSE(v.known());
    EXPECT_EQ(v.unknown.rfind("sd-device: nictune-none0: ", 0), 0u) << v.unknown;
    EXPECT_EQ(v.unknown.find("libsystemd"), std::string::npos) << v.unknown;
}

TEST(HwdbLookup, WithoutADatabaseTheNamesAreAbsent) {
    Hwdb db("/nonexistent/nictune-test/hwdb.bin");
    const auto names = db.lookup("pci:v00008086d000010FBsv00008086sd00000003bc02sc00i00");
    EXPECT_FALSE(names.vendor);
    EXPECT_FALSE(names.model);
}

TEST(HwdbLookup, FindsNothingForAnEmptyOrUnknownModalias) {
    Hwdb db;
    EXPECT_FALSE(db.lookup("").vendor);
    // No hwdb pattern covers this bus prefix.
    const auto names = db.lookup("nictune:no-such-device");
    EXPECT_FALSE(names.vendor);
    EXPECT_FALSE(names.model);
}

// ---- /proc/sys

TEST(ProcSysReader, MapsDottedNamesToPaths) {
    const ProcSys ps("/proc/sys");
    auto p = ps.path_of("net.core.rmem_max");
    ASSERT_TRUE(p) << p.error().str();
    EXPECT_EQ(*p, fs::path("/proc/sys/net/core/rmem_max"));
    EXPECT_EQ(*ps.path_of("vm"), fs::path("/proc/sys/vm"));
}

TEST(ProcSysReader, RejectsNamesThatCouldLeaveTheTree) {
    const ProcSys ps(kData / "procsys");
    for (const char* bad : {"", ".", "..", "net..core", ".net.core", "net.core.",
                            "net/core/rmem_max", "net.core/../../etc", "../etc/passwd"}) {
        auto p = ps.path_of(bad);
        ASSERT_FALSE(p) << '"' << bad << "\" was accepted";
        EXPECT_EQ(p.error().code, Errc::InvalidArgument);
        EXPECT_FALSE(ps.read(bad)) << bad;
        EXPECT_FALSE(ps.write(bad, "1")) << bad;
    }
    EXPECT_FALSE(ps.path_of(std::string_view("net\0core", 8)));
}

TEST(ProcSysReader, ReadsValuesWithWhitespaceCollapsed) {
    const ProcSys ps(kData / "procsys");
    EXPECT_EQ(ps.read("net.core.rmem_max").value(), "212992");
    EXPECT_EQ(ps.read("net.ipv4.tcp_rmem").value(), "4096 131072 6291456");
    EXPECT_EQ(ps.read("net.ipv4.tcp_congestion_control").value(), "cubic");
    EXPECT_EQ(ps.read("net.core.empty_value").value(), "");
}

TEST(ProcSysReader, ReportsAMissingSysctlAsAbsent) {
    const ProcSys ps(kData / "procsys");
    auto v = ps.read("net.core.no_such_knob");
    ASSERT_TRUE(v) << v.error().str();
    EXPECT_FALSE(v->has_value());
    // A file in place of a directory: also just "not here".
    auto w = ps.read("vm.swappiness.deeper");
    ASSERT_TRUE(w) << w.error().str();
    EXPECT_FALSE(w->has_value());
}

TEST(ProcSysReader, ReportsADirectoryAsAnErrorWithTheName) {
    const ProcSys ps(kData / "procsys");
    auto v = ps.read("net.core");
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().sys_errno, EISDIR);
    EXPECT_NE(v.error().context.find("net.core"), std::string::npos);
}

TEST(ProcSysReader, WritesAnExistingSysctl) {
    TreeCopy tree(kData / "procsys");
    const ProcSys ps(tree.root());
    ASSERT_TRUE(ps.write("net.core.rmem_max", "4194304"));
    EXPECT_EQ(slurp(tree.root() / "net" / "core" / "rmem_max"), "4194304");
    EXPECT_EQ(ps.read("net.core.rmem_max").value(), "4194304");
}

TEST(ProcSysReader, NeverCreatesAMissingSysctl) {
    TreeCopy tree(kData / "procsys");
    const ProcSys ps(tree.root());
    auto r = ps.write("net.core.rmem_maximum", "1");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::Unsupported);
    EXPECT_EQ(r.error().sys_errno, ENOENT);
    EXPECT_NE(r.error().context.find("net.core.rmem_maximum"), std::string::npos);
    EXPECT_FALSE(fs::exists(tree.root() / "net" / "core" / "rmem_maximum"));
}

TEST(ProcSysReader, WriteErrorsCarryErrnoAndTheSysctlName) {
    TreeCopy tree(kData / "procsys");
    const ProcSys ps(tree.root());
    auto r = ps.write("net.ipv4", "1");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, EISDIR);
    EXPECT_NE(r.error().str().find("sysctl.net.ipv4=\"1\": set"), std::string::npos)
        << r.error().str();
}

TEST(ProcSysReader, RefusesValuesWithNewlines) {
    TreeCopy tree(kData / "procsys");
    const ProcSys ps(tree.root());
    auto r = ps.write("net.ipv4.tcp_timestamps", "0\n1");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::InvalidArgument);
    EXPECT_EQ(ps.read("net.ipv4.tcp_timestamps").value(), "1");
}

}  // namespace
}  // namespace nictune::sysinfo
