// The health part of `nictunectl audit` against the real kernel: a veth
// pair between two namespaces the test creates, and a read-only look at
// the host's eth0. The oracles are the operators' own tools: `ethtool -S`,
// `ip -s -j link`, /proc/interrupts, /proc/irq/N/smp_affinity_list, sysfs
// and modinfo. Counters that move (eth0 carries this machine's traffic)
// must lie between a read before and a read after nictune's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engine/health.hpp"
#include "integration/daemon_harness.hpp"
#include "support/dbus.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"
#include "support/paths.hpp"
#include "sysinfo/kmod.hpp"
#include "util/strings.hpp"

namespace nictune::test {
namespace {

// `ethtool -S DEV`: "     name: value" lines.
std::map<std::string, uint64_t> ethtool_stats(const std::string& text) {
    std::map<std::string, uint64_t> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.rfind(':');
        if (colon == std::string::npos || line.starts_with("NIC statistics")) continue;
        std::string name(trim(line.substr(0, colon)));
        std::string value(trim(line.substr(colon + 1)));
        if (name.empty() || value.empty()) continue;
        try {
            out.emplace(name, std::stoull(value));
        } catch (...) {
        }
    }
    return out;
}

nlohmann::json iface(const nlohmann::json& report, const std::string& name) {
    for (const auto& i : report.at("interfaces"))
        if (i.at("name") == name) return i;
    ADD_FAILURE() << "no interface " << name << " in the report";
    return nlohmann::json::object();
}

std::string read_file(const std::string& p) {
    std::ifstream in(p);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return std::string(trim(s));
}

// The kernel's statistics as `ip -s -j link show` prints them (stats64).
std::map<std::string, uint64_t> ip_stats(const nlohmann::json& link) {
    std::map<std::string, uint64_t> out;
    const auto& s = link.at("stats64");
    out["rx_packets"] = s.at("rx").at("packets");
    out["rx_bytes"] = s.at("rx").at("bytes");
    out["rx_errors"] = s.at("rx").at("errors");
    out["rx_dropped"] = s.at("rx").at("dropped");
    out["multicast"] = s.at("rx").at("multicast");
    out["tx_packets"] = s.at("tx").at("packets");
    out["tx_bytes"] = s.at("tx").at("bytes");
    out["tx_errors"] = s.at("tx").at("errors");
    out["tx_dropped"] = s.at("tx").at("dropped");
    out["collisions"] = s.at("tx").at("collisions");
    return out;
}

class HealthVeth : public ::testing::Test {
  protected:
    void SetUp() override {
        a_ = TestNetns::create(&why_);
        if (!a_) GTEST_SKIP() << why_;
        b_ = TestNetns::create(&why_);
        if (!b_) GTEST_SKIP() << why_;
        auto r =
            a_->exec("ip link add name nh0 type veth peer name nh1 && ip link set nh1 netns " +
                     b_->name() + " && ip addr add 192.0.2.1/24 dev nh0 && ip link set nh0 up");
        ASSERT_EQ(r.status, 0) << r.err;
        r = b_->exec("ip addr add 192.0.2.2/24 dev nh1 && ip link set nh1 up");
        ASSERT_EQ(r.status, 0) << r.err;
        // Some traffic so that the counters are not all zero.
        r = a_->exec("ping -q -c 20 -i 0.01 -W 1 192.0.2.2");
        ASSERT_EQ(r.status, 0) << r.out << r.err;
    }
    std::string why_;
    std::unique_ptr<TestNetns> a_, b_;
};

TEST_F(HealthVeth, CountersEqualEthtoolAndIp) {
    // The kernel still sends IPv6 router solicitations and MLD reports on
    // a link just up: counters may move, so each must lie between a read
    // before nictune's and one after.
    const auto es_before = ethtool_stats(a_->exec("ethtool -S nh0").out);
    const auto ip_before = ip_stats(parse_json(a_->exec("ip -s -j link show nh0").out).at(0));
    auto r = a_->exec_argv({kCtl, "audit", "nh0", "--json"});
    const auto es_after = ethtool_stats(a_->exec("ethtool -S nh0").out);
    const auto ip_after = ip_stats(parse_json(a_->exec("ip -s -j link show nh0").out).at(0));
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    const auto j = iface(parse_json(r.out), "nh0");
    const auto& h = j.at("health");
    ASSERT_TRUE(h.is_object());
    // Driver statistics: the names and values `ethtool -S` prints.
    ASSERT_FALSE(es_before.empty());
    const auto& drv = h.at("counters").at("driver");
    ASSERT_TRUE(drv.is_object()) << h.at("unknown").dump();
    EXPECT_EQ(drv.size(), es_before.size());
    for (const auto& [name, before] : es_before) {
        ASSERT_TRUE(drv.contains(name)) << name;
        EXPECT_LE(before, drv.at(name).get<uint64_t>()) << name;
        EXPECT_LE(drv.at(name).get<uint64_t>(), es_after.at(name)) << name;
    }
    // Kernel statistics: what `ip -s -j link` prints.
    const auto& k = h.at("counters").at("kernel");
    for (const auto& [name, before] : ip_before) {
        EXPECT_LE(before, k.at(name).get<uint64_t>()) << name;
        EXPECT_LE(k.at(name).get<uint64_t>(), ip_after.at(name)) << name;
    }
    EXPECT_GE(k.at("tx_packets").get<uint64_t>(), 20U);
    EXPECT_EQ(h.at("carrier_changes").get<uint64_t>(),
              std::stoull(a_->exec("cat /sys/class/net/nh0/carrier_changes").out));
    // No PCIe and no interrupts on a veth: null, with the reason, never a finding.
    EXPECT_TRUE(h.at("pcie").is_null());
    EXPECT_NE(h.at("unknown").at("pcie").get<std::string>().find("software link"),
              std::string::npos);
    EXPECT_TRUE(h.at("irqs").is_null());
    for (const auto& f : j.at("findings"))
        EXPECT_FALSE(f.at("key").get<std::string>().starts_with("health.pcie")) << f.dump();
}

TEST_F(HealthVeth, SampleReportsRatesOfTrafficDuringIt) {
    // ping for ~1.6 s (bounded) while nictunectl samples 1 s.
    auto r = a_->exec("(ping -q -c 160 -i 0.01 -W 1 192.0.2.2 >/dev/null &) ; " + kCtl +
                          " audit nh0 --json --sample 1",
                      30000);
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    const auto report = parse_json(r.out);
    const auto j = iface(report, "nh0");
    const auto& h = j.at("health");
    ASSERT_TRUE(h.is_object()) << r.out.substr(0, 2000);
    ASSERT_TRUE(h.at("rates").is_object()) << h.dump();
    EXPECT_GE(h.at("rates").at("seconds").get<double>(), 1.0);
    EXPECT_GT(h.at("rates").at("kernel").at("tx_packets").get<double>(), 20.0);
    EXPECT_TRUE(report.at("health").at("sample_seconds").is_number());
    EXPECT_TRUE(report.at("health").at("softnet_rates").is_array());
}

TEST_F(HealthVeth, BadSampleAndRttAreUsageErrors) {
    for (auto args : std::vector<std::vector<std::string>>{
             {"--sample", "-1"}, {"--sample", "abc"}, {"--rtt-ms", "0"}, {"--sample", "99999"}}) {
        args.insert(args.begin(), {kCtl, "audit", "nh0"});
        auto r = a_->exec_argv(args);
        EXPECT_EQ(r.status, 2) << join(args, " ") << ": " << r.err;
    }
    auto r = a_->exec_argv({kCtl, "audit", "nh0", "--no-health", "--json"});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    EXPECT_TRUE(iface(parse_json(r.out), "nh0").at("health").is_null());
}

// Read-only: the host's eth0. Its IRQs, affinities and counters must be
// what the kernel's own files and ethtool/ip say.
TEST(HealthHost, Eth0IrqsAndCountersAgreeWithTheKernel) {
    if (run({"ip", "link", "show", "eth0"}).status != 0) GTEST_SKIP() << "this host has no eth0";
    const auto es_before = ethtool_stats(run({"ethtool", "-S", "eth0"}).out);
    const auto ip_before =
        ip_stats(parse_json(run({"ip", "-s", "-j", "link", "show", "eth0"}).out).at(0));
    auto r = run({kCtl, "audit", "eth0", "--json"});
    const auto es_after = ethtool_stats(run({"ethtool", "-S", "eth0"}).out);
    const auto ip_after =
        ip_stats(parse_json(run({"ip", "-s", "-j", "link", "show", "eth0"}).out).at(0));
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    const auto j = iface(parse_json(r.out), "eth0");
    const auto& h = j.at("health");

    const auto& drv = h.at("counters").at("driver");
    if (es_before.empty()) {
        EXPECT_TRUE(drv.is_null());
    } else {
        ASSERT_TRUE(drv.is_object());
        EXPECT_EQ(drv.size(), es_before.size());
        for (const auto& [name, before] : es_before) {
            ASSERT_TRUE(drv.contains(name)) << name;
            const uint64_t v = drv.at(name);
            EXPECT_LE(before, v) << name;
            EXPECT_LE(v, es_after.at(name)) << name;
        }
    }
    const auto& k = h.at("counters").at("kernel");
    for (const auto& [name, before] : ip_before) {
        const uint64_t v = k.at(name);
        EXPECT_LE(before, v) << name;
        EXPECT_LE(v, ip_after.at(name)) << name;
    }

    // IRQs: the PCI function's msi_irqs, named and counted as in
    // /proc/interrupts, with the affinity files' contents.
    if (!j.at("pci_slot").is_string()) GTEST_SKIP() << "eth0 has no PCI function";
    const std::string dev = "/sys/bus/pci/devices/" + j.at("pci_slot").get<std::string>();
    std::set<unsigned> vectors;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dev + "/msi_irqs", ec))
        vectors.insert(static_cast<unsigned>(std::stoul(e.path().filename().string())));
    if (vectors.empty()) {
        EXPECT_TRUE(h.at("irqs").is_null());
        return;
    }
    ASSERT_TRUE(h.at("irqs").is_array()) << h.at("unknown").dump();
    std::set<unsigned> reported;
    std::ifstream pi("/proc/interrupts");
    std::map<unsigned, std::string> names;
    std::string line;
    while (std::getline(pi, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        try {
            const unsigned irq = static_cast<unsigned>(std::stoul(line.substr(0, colon)));
            std::istringstream rest(line.substr(colon + 1));
            std::vector<std::string> toks;
            for (std::string t; rest >> t;)
                toks.push_back(t);
            names[irq] = toks.empty() ? "" : toks.back();
        } catch (...) {
        }
    }
    for (const auto& q : h.at("irqs")) {
        const unsigned irq = q.at("irq");
        reported.insert(irq);
        EXPECT_EQ(q.at("name").get<std::string>(), names[irq]) << irq;
        const std::string base = "/proc/irq/" + std::to_string(irq);
        EXPECT_EQ(q.at("affinity").get<std::string>(), read_file(base + "/smp_affinity_list"))
            << irq;
        EXPECT_EQ(q.at("effective_affinity").get<std::string>(),
                  read_file(base + "/effective_affinity_list"))
            << irq;
    }
    EXPECT_EQ(reported, vectors);
}

TEST(HealthHost, DriverOnDiskAgreesWithModinfo) {
    if (run({"ip", "link", "show", "eth0"}).status != 0) GTEST_SKIP() << "this host has no eth0";
    if (!have_program("modinfo")) GTEST_SKIP() << "no modinfo";
    auto r = run({kCtl, "audit", "eth0", "--json"});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    const auto j = iface(parse_json(r.out), "eth0");
    const auto& d = j.at("health").at("driver");
    const std::string module = j.at("driver");
    auto path = run({"modinfo", "-n", module});
    if (path.status != 0) {
        // Not on disk for this kernel (built in, or no /lib/modules): nictune must not
        // invent a file either.
        if (d.is_object()) {
            EXPECT_TRUE(d.at("disk_path").is_null()) << d.dump();
        } else {
            EXPECT_TRUE(j.at("health").at("unknown").contains("driver"));
        }
        return;
    }
    ASSERT_TRUE(d.is_object()) << j.at("health").at("unknown").dump();
    if (std::string(trim(path.out)) == "(builtin)") {
        EXPECT_TRUE(d.at("builtin").get<bool>());
        return;
    }
    EXPECT_EQ(d.at("disk_path").get<std::string>(), std::string(trim(path.out)));
    auto version = run({"modinfo", "-F", "version", module});
    if (!std::string(trim(version.out)).empty()) {
        EXPECT_EQ(d.at("disk_version").get<std::string>(), std::string(trim(version.out)));
    }
    auto src = run({"modinfo", "-F", "srcversion", module});
    if (!std::string(trim(src.out)).empty()) {
        EXPECT_EQ(d.at("disk_srcversion").get<std::string>(), std::string(trim(src.out)));
    }
}

// libkmod against modinfo on a modules tree the test builds: a module with
// a .modinfo section under updates/, indexed by depmod. The loaded ixgbe
// of the fixture sysfs is 4.4.0-k: the finding says reload or reboot.
TEST(HealthKmod, TheDiskCopyIsWhatModinfoSaysAndAStaleOneIsFound) {
    for (const char* tool : {"gcc", "depmod", "modinfo"})
        if (!have_program(tool)) GTEST_SKIP() << "needs " << tool;
    char tmpl[] = "/tmp/nictune-kmod-XXXXXX";
    const std::filesystem::path root = mkdtemp(tmpl);
    const std::string rel = "6.1.0-nictune-test";
    const auto dir = root / "lib" / "modules" / rel / "updates" / "drivers" / "net";
    std::filesystem::create_directories(dir);
    {
        std::ofstream c(root / "m.c");
        for (const char* kv :
             {"version=5.3.6", "srcversion=0123456789ABCDEF0123456", "name=ixgbe", "license=GPL"})
            c << "__attribute__((section(\".modinfo\"), used, aligned(1))) static const char m"
              << std::hash<std::string>{}(kv) % 100000 << "[] = \"" << kv << "\";\n";
    }
    ASSERT_EQ(run({"gcc", "-c", "-o", (dir / "ixgbe.ko").string(), (root / "m.c").string()}).status,
              0);
    ASSERT_EQ(run({"depmod", "-b", root.string(), rel}).status, 0);
    sysinfo::KmodOptions o;
    o.modules_dir = root / "lib" / "modules" / rel;
    o.sysfs_root = std::string(NICTUNE_TEST_DATA) + "/health/sysfs";
    o.initramfs = root / "no-initrd";
    sysinfo::ModuleFiles m(o);
    auto d = m.read("ixgbe");
    ASSERT_TRUE(d.known()) << d.unknown;
    auto modinfo = [&](std::vector<std::string> extra) {
        std::vector<std::string> argv = {"modinfo", "-b", root.string(), "-k", rel};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return std::string(trim(run(argv).out));
    };
    EXPECT_EQ(d->disk_path, modinfo({"-n", "ixgbe"}));
    EXPECT_EQ(d->disk_version, modinfo({"-F", "version", "ixgbe"}));
    EXPECT_EQ(d->disk_srcversion, modinfo({"-F", "srcversion", "ixgbe"}));
    EXPECT_EQ(d->loaded_version, "4.4.0-k");
    InterfaceHealth h;
    h.driver = d;
    NicState nic;
    nic.id.name = "p4p1";
    auto a = analyze_health(nic, h, {}, {});
    bool stale = false;
    for (const auto& f : a.findings)
        if (f.key == "health.driver.stale")
            stale = f.message.find("ixgbe 5.3.6 is installed at " + *d->disk_path +
                                   " (srcversion 0123456789ABCDEF0123456) but 4.4.0-k is loaded") !=
                    std::string::npos;
    EXPECT_TRUE(stale);
    std::filesystem::remove_all(root);
}

// Through nictuned: the health object comes in the daemon's report as in a
// direct run, and --no-health reaches it as the flag "health" = false.
TEST(HealthDaemon, AuditOverDbusCarriesHealthAndItsFlags) {
    std::string skip;
    DaemonHarness h({{"small", "[link]\nmtu = 1400\n"}}, "", &skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    ASSERT_TRUE(h.ok());
    ASSERT_EQ(h.ns().exec("ip link add name hd0 type veth peer name hd1").status, 0);
    ASSERT_TRUE(h.start_daemon());
    auto r = h.ctl({"audit", "hd0", "--json"});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    const auto with = iface(parse_json(r.out), "hd0");
    ASSERT_TRUE(with.at("health").is_object()) << r.out.substr(0, 500);
    EXPECT_TRUE(with.at("health").at("counters").at("kernel").is_object());
    auto n = h.ctl({"audit", "hd0", "--json", "--no-health"});
    ASSERT_TRUE(n.status == 0 || n.status == 1) << n.err;
    EXPECT_TRUE(iface(parse_json(n.out), "hd0").at("health").is_null());
    auto t = h.ctl({"audit", "hd0", "--json", "--rtt-ms", "5"});
    ASSERT_TRUE(t.status == 0 || t.status == 1) << t.err;
    EXPECT_EQ(parse_json(t.out).at("health").at("rtt_ms"), 5.0);
}

// irqbalance and NetworkManager asked over D-Bus, here stand-ins on a
// private bus (never the host's: installing NetworkManager would take over
// eth0). The host's eth0 is only read.
class HealthServices : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!is_root()) GTEST_SKIP() << "needs root (reads the host's eth0 like an operator)";
        if (run({"ip", "link", "show", "eth0"}).status != 0)
            GTEST_SKIP() << "this host has no eth0";
        bus_ = PrivateBus::start(std::string(NICTUNE_TEST_DATA) + "/tuned/bus.conf", &why_);
        if (!bus_) GTEST_SKIP() << why_;
    }
    void start(const std::vector<std::string>& extra) {
        std::vector<std::string> argv = {NICTUNE_FAKE_SERVICES_PATH, "--address", bus_->address()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        Child::Options o;
        o.ready_line = "ready";
        services_ = Child::start(argv, o, &why_);
        ASSERT_NE(services_, nullptr) << why_;
    }
    nlohmann::json audit() {
        auto r =
            sh("DBUS_SYSTEM_BUS_ADDRESS='" + bus_->address() + "' " + kCtl + " audit eth0 --json");
        EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
        return parse_json(r.out);
    }
    std::string why_;
    std::unique_ptr<PrivateBus> bus_;
    std::unique_ptr<Child> services_;
};

TEST_F(HealthServices, NetworkManagerAndIrqbalanceAreAskedOverDbus) {
    start({"--irqbalance", "active", "--nm",
           "eth0,Wired 1,7d1f6c2e-0000-4000-8000-000000000001,9000,4096"});
    const auto report = audit();
    const auto& sys = report.at("health");
    EXPECT_EQ(sys.at("irqbalance").at("active"), true) << sys.dump();
    bool irqbalance = false;
    for (const auto& f : sys.at("findings"))
        irqbalance |= f.at("key") == "health.irqbalance";
    EXPECT_TRUE(irqbalance);
    const auto j = iface(report, "eth0");
    const auto& foreign = j.at("health").at("foreign");
    const nlohmann::json* nm = nullptr;
    for (const auto& f : foreign)
        if (f.at("tool") == "NetworkManager") nm = &f;
    ASSERT_NE(nm, nullptr) << foreign.dump();
    EXPECT_EQ(nm->at("source"), "connection 'Wired 1' (7d1f6c2e-0000-4000-8000-000000000001)");
    std::map<std::string, std::string> kv;
    for (const auto& s : nm->at("settings"))
        kv[s.at("key")] = s.at("value");
    EXPECT_EQ(kv["link.mtu"], "9000");
    EXPECT_EQ(kv["rings.rx"], "4096");
    EXPECT_FALSE(kv.contains("ipv4.method"));
    bool named = false;
    for (const auto& f : j.at("findings"))
        if (f.at("key") == "health.foreign.link.mtu")
            named = f.at("message").get<std::string>().find("connection 'Wired 1'") !=
                    std::string::npos;
    EXPECT_TRUE(named) << j.at("findings").dump();
}

TEST_F(HealthServices, WithoutNetworkManagerOrIrqbalanceNothingIsInvented) {
    start({"--irqbalance", "none", "--nm", "none"});
    const auto report = audit();
    EXPECT_EQ(report.at("health").at("irqbalance").at("active"), false);
    const auto j = iface(report, "eth0");
    for (const auto& f : j.at("health").at("foreign"))
        EXPECT_NE(f.at("tool"), "NetworkManager");
    for (const auto& u : j.at("health").at("foreign_unknown"))
        EXPECT_EQ(u.get<std::string>().find("NetworkManager"), std::string::npos) << u;
    for (const auto& f : report.at("health").at("findings"))
        EXPECT_NE(f.at("key"), "health.irqbalance");
}

}  // namespace
}  // namespace nictune::test
