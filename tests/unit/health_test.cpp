// Health checks: the readers on fixture trees (tests/data/health), the
// parsers on good and garbage input, the analysis (findings, fixes, the
// ranking of limits) on NicStates and fake readings, and the audit's
// health path (sample, JSON, text) over a fake HealthReader.
#include "backend/health.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/ethtool.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "backend/system_health.hpp"
#include "engine/health.hpp"
#include "fakes/fake_backend.hpp"
#include "fakes/states.hpp"
#include "model/cpulist.hpp"
#include "profile/facts.hpp"
#include "report/health_report.hpp"
#include "report/json_report.hpp"
#include "report/text_report.hpp"
#include "services/network_manager.hpp"
#include "services/systemd1.hpp"
#include "sysinfo/cpu_power.hpp"
#include "sysinfo/ethtool_stats.hpp"
#include "sysinfo/foreign_config.hpp"
#include "sysinfo/kmod.hpp"
#include "sysinfo/pcie.hpp"
#include "sysinfo/procfs.hpp"
#include "sysinfo/sysfs.hpp"
#include "sysinfo/text_file.hpp"

namespace nictune {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kData = fs::path(NICTUNE_TEST_DATA) / "health";
const fs::path kSys = kData / "sysfs";
const fs::path kProc = kData / "proc";

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path function_dir(const std::string& ifname) {
    auto d = sysinfo::pci_function_dir(kSys, ifname);
    EXPECT_TRUE(d) << ifname;
    return d.value_or(fs::path());
}

const ForeignSetting* setting(const ForeignConfig& c, std::string_view key) {
    for (const auto& s : c.settings)
        if (s.key == key) return &s;
    return nullptr;
}

const Finding* finding(const std::vector<Finding>& fs, std::string_view key) {
    for (const auto& f : fs)
        if (f.key == key) return &f;
    return nullptr;
}

// ---- CPU lists

TEST(CpuList, ParsesRangesAndSingles) {
    EXPECT_EQ(parse_cpulist("0-3,8,10-11\n"), (std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_EQ(parse_cpulist(""), std::vector<unsigned>{});
    EXPECT_EQ(parse_cpulist("3,1,1"), (std::vector<unsigned>{1, 3}));
}

TEST(CpuList, RefusesWhatIsNotACpuList) {
    for (const char* bad : {"a", "1-", "-1", "3-1", "1,", ",1", "1--2", "99999999", "0-70000"})
        EXPECT_FALSE(parse_cpulist(bad)) << bad;
}

TEST(CpuList, FormatsAsTheKernelDoes) {
    EXPECT_EQ(format_cpulist({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
    EXPECT_EQ(format_cpulist({5}), "5");
    EXPECT_EQ(format_cpulist({}), "");
}

// ---- PCIe

TEST(PcieLink, ParsesSpeedsAndWidths) {
    EXPECT_EQ(sysinfo::parse_link_speed("8.0 GT/s PCIe"), 8.0);
    EXPECT_EQ(sysinfo::parse_link_speed("2.5 GT/s"), 2.5);
    EXPECT_EQ(sysinfo::parse_link_speed("16 GT/s PCIe\n"), 16.0);
    EXPECT_FALSE(sysinfo::parse_link_speed("Unknown"));
    EXPECT_FALSE(sysinfo::parse_link_speed("5.0 MB/s"));
    EXPECT_FALSE(sysinfo::parse_link_speed(""));
    EXPECT_EQ(sysinfo::parse_link_width("8"), 8U);
    EXPECT_EQ(sysinfo::parse_link_width("x16"), 16U);
    EXPECT_FALSE(sysinfo::parse_link_width("0"));
    EXPECT_FALSE(sysinfo::parse_link_width("255"));
    EXPECT_FALSE(sysinfo::parse_link_width("eight"));
}

TEST(PcieLink, BandwidthUsesTheLineCodingOfEachGeneration) {
    EXPECT_DOUBLE_EQ(*pcie_gbps(2.5, 4U), 8.0);  // 8b/10b
    EXPECT_DOUBLE_EQ(*pcie_gbps(5.0, 8U), 32.0);
    EXPECT_NEAR(*pcie_gbps(8.0, 8U), 63.0, 0.1);  // 128b/130b
    EXPECT_FALSE(pcie_gbps(std::nullopt, 8U));
    EXPECT_FALSE(pcie_gbps(8.0, std::nullopt));
}

TEST(PcieLink, ReadsTheFunctionItsSlotAndTheOtherPort) {
    auto p = sysinfo::read_pcie(function_dir("p4p1"));
    ASSERT_TRUE(p.known()) << p.unknown;
    EXPECT_EQ(p->function, "0000:03:00.0");
    EXPECT_EQ(p->link.current_gts, 2.5);
    EXPECT_EQ(p->link.current_width, 4U);
    EXPECT_EQ(p->link.max_gts, 5.0);
    EXPECT_EQ(p->link.max_width, 8U);
    EXPECT_EQ(p->link.current_speed_text, "2.5 GT/s PCIe");
    EXPECT_EQ(p->upstream_port, "0000:00:02.0");
    ASSERT_TRUE(p->upstream);
    EXPECT_EQ(p->upstream->max_width, 4U);
    EXPECT_EQ(p->port_functions, (std::vector<std::string>{"0000:03:00.0", "0000:03:00.1"}));
    EXPECT_EQ(p->port_interfaces, (std::vector<std::string>{"p4p1", "p4p2"}));
}

TEST(PcieLink, VirtioAndRootBusDevicesAreUnknownWithTheReason) {
    auto v = sysinfo::read_pcie(function_dir("eth0"));
    EXPECT_FALSE(v.known());
    EXPECT_NE(v.unknown.find("no PCIe link registers"), std::string::npos) << v.unknown;
    auto e = sysinfo::read_pcie(function_dir("ens4"));
    EXPECT_FALSE(e.known());
    EXPECT_NE(e.unknown.find("reports no link"), std::string::npos) << e.unknown;
}

TEST(PcieLink, ReadsNumaAndVectors) {
    auto n = sysinfo::read_numa(function_dir("p4p1"), {0, 1, 2, 3, 4, 5, 6, 7});
    ASSERT_TRUE(n.known());
    EXPECT_EQ(n->node, 1);
    EXPECT_EQ(n->local_cpulist, "4-7");
    EXPECT_EQ(n->local_cpus, 4U);
    auto v = sysinfo::read_numa(function_dir("eth0"), {});
    ASSERT_TRUE(v.known());
    EXPECT_FALSE(v->node);  // -1: no NUMA affinity
    auto irqs = sysinfo::read_device_irqs(function_dir("p4p1"));
    ASSERT_TRUE(irqs.known());
    EXPECT_EQ(*irqs, (std::vector<unsigned>{60, 61, 62, 63}));
    EXPECT_FALSE(sysinfo::read_device_irqs(function_dir("ens4")).known());
}

// ---- /proc/interrupts and softnet

TEST(Interrupts, ParsesTheFixture) {
    auto t = sysinfo::parse_interrupts(slurp(kProc / "interrupts"));
    ASSERT_TRUE(t) << t.error().str();
    EXPECT_EQ(t->cpus.size(), 8U);
    const auto* l = t->find(61);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->name, "p4p1-TxRx-1");
    EXPECT_EQ(l->chip, "PCI-MSIX-0000:03:00.0");
    EXPECT_EQ(l->per_cpu[0], 2000U);
    EXPECT_EQ(t->find(38)->name, "virtio2-input.0");
    EXPECT_EQ(t->find(999), nullptr);
    EXPECT_EQ(t->lines.size(), 10U);  // NMI and ERR are not numbered IRQs
}

TEST(Interrupts, TakesTheCpuNumbersFromTheHeader) {
    // CPU 1 offline: columns are CPU0, CPU2, CPU3.
    auto t = sysinfo::parse_interrupts(
        "           CPU0       CPU2       CPU3\n 24:  1 2 3  IO-APIC 5-edge  eth0-rx-0\n");
    ASSERT_TRUE(t) << t.error().str();
    EXPECT_EQ(t->cpus, (std::vector<unsigned>{0, 2, 3}));
    EXPECT_EQ(t->find(24)->name, "eth0-rx-0");
}

TEST(Interrupts, RefusesGarbageNamingTheLine) {
    struct Case {
        const char* text;
        const char* where;
    };
    for (const auto& c : std::initializer_list<Case>{
             {"", "/proc/interrupts"},
             {"hello world\n", "/proc/interrupts:1"},
             {"  CPU0 CPU1\n 5: 1\n", "/proc/interrupts:2"},
             {"  CPU0\n 5: x chip 1-edge n\n", "/proc/interrupts:2"},
             {"  CPU0\n 5: 1 a 1-edge n\n 5: 1 a 1-edge n\n", "/proc/interrupts:3"}}) {
        auto t = sysinfo::parse_interrupts(c.text);
        ASSERT_FALSE(t) << c.text;
        EXPECT_EQ(t.error().context, c.where) << t.error().str();
    }
}

TEST(Interrupts, ParsesFourThousandIrqs) {
    std::string text = "  CPU0 CPU1 CPU2 CPU3\n";
    for (int i = 0; i < 4096; ++i)
        text += fmt::format("{}: {} 0 0 0 PCI-MSIX-0000:03:00.0 {}-edge p4p1-TxRx-{}\n", 100 + i, i,
                            i, i);
    auto t = sysinfo::parse_interrupts(text);
    ASSERT_TRUE(t) << t.error().str();
    EXPECT_EQ(t->lines.size(), 4096U);
    EXPECT_EQ(t->find(4195)->name, "p4p1-TxRx-4095");
}

TEST(Interrupts, QueueNumbersComeFromQueueNames) {
    EXPECT_EQ(sysinfo::queue_of_irq_name("p4p1-TxRx-3"), 3);
    EXPECT_EQ(sysinfo::queue_of_irq_name("i40e-p5p1-TxRx-12"), 12);
    EXPECT_EQ(sysinfo::queue_of_irq_name("virtio2-input.0"), 0);
    EXPECT_EQ(sysinfo::queue_of_irq_name("eth0-rx-0"), 0);
    EXPECT_EQ(sysinfo::queue_of_irq_name("mlx5_comp7@pci:0000:81:00.0"), 7);
    EXPECT_FALSE(sysinfo::queue_of_irq_name("p4p1"));
    EXPECT_FALSE(sysinfo::queue_of_irq_name("virtio2-config"));
    EXPECT_FALSE(sysinfo::queue_of_irq_name("i40e-0000:03:00.0:misc"));
    EXPECT_FALSE(sysinfo::queue_of_irq_name(""));
}

TEST(IrqAffinity, EachIrqsFilesAsTheirWholePathsSayAndNothingForAGoneOne) {
    // Read below ROOT/irq, opened once: the values the whole paths hold.
    const sysinfo::ProcFs proc(kProc);
    for (unsigned irq : {60U, 63U, 70U}) {
        const auto a = proc.irq_affinity(irq);
        const fs::path dir = kProc / "irq" / std::to_string(irq);
        EXPECT_EQ(a.affinity, sysinfo::detail::read_value(dir / "smp_affinity_list")) << irq;
        EXPECT_EQ(a.effective, sysinfo::detail::read_value(dir / "effective_affinity_list")) << irq;
        EXPECT_TRUE(a.affinity) << irq;
    }
    EXPECT_EQ(proc.irq_affinity(63).affinity, "0-7");
    const auto gone = proc.irq_affinity(9999);
    EXPECT_FALSE(gone.affinity);
    EXPECT_FALSE(gone.effective);
    // Without ROOT/irq: nothing, as by the whole paths.
    const sysinfo::ProcFs none(kData / "no-such-proc");
    EXPECT_FALSE(none.irq_affinity(60).affinity);
}

TEST(Softnet, ReadsDropsAndSqueezesPerCpu) {
    auto t = sysinfo::parse_softnet(slurp(kProc / "net" / "softnet_stat"));
    ASSERT_TRUE(t) << t.error().str();
    ASSERT_EQ(t->cpus.size(), 8U);
    EXPECT_TRUE(t->cpu_column);
    EXPECT_EQ(t->cpus[0].dropped, 0x25U);
    EXPECT_EQ(t->cpus[0].time_squeeze, 7U);
    EXPECT_EQ(t->cpus[3].cpu, 3U);
    EXPECT_EQ(t->cpus[3].processed, 0x1003U);
}

TEST(Softnet, OldKernelsWithoutTheCpuColumnCountRows) {
    auto t = sysinfo::parse_softnet(
        "00000010 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 "
        "00000000 00000000\n");
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->cpu_column);
    EXPECT_EQ(t->cpus[0].cpu, 0U);
    EXPECT_FALSE(sysinfo::parse_softnet("zz 1 2\n"));
    EXPECT_FALSE(sysinfo::parse_softnet("00000001\n"));
}

// ---- CPU power

TEST(CpuPower, ReadsGovernorPreferenceAndIdleStates) {
    sysinfo::CpuSysfs cpu(kSys);
    EXPECT_EQ(cpu.online(), (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7}));
    const CpuPower p = cpu.power(5);
    EXPECT_EQ(p.governor, "powersave");
    EXPECT_EQ(p.epp, "balance_power");
    EXPECT_EQ(p.driver, "intel_pstate");
    ASSERT_EQ(p.idle.size(), 3U);
    EXPECT_EQ(p.idle[2].name, "C6");
    EXPECT_EQ(p.idle[2].latency_us, 133U);
    const auto nodes = cpu.cpu_nodes();
    EXPECT_EQ(nodes.at(0), 0);
    EXPECT_EQ(nodes.at(6), 1);
    const CpuPower none = cpu.power(99);
    EXPECT_FALSE(none.governor);
    EXPECT_TRUE(none.idle.empty());
}

// ---- link mode names

TEST(LinkModeNames, TheSetBitsInOrderAcrossWordsWithoutUnnamedOnes) {
    FeatureNames names(70);
    for (std::size_t i = 0; i < names.size(); ++i)
        names[i] = "m" + std::to_string(i);
    names[33].clear();  // a bit the kernel has no name for
    // Bits 0, 5, 31 | 32, 33, 63 | 64, 69, 70 (beyond the names) | a word beyond them.
    const std::vector<uint32_t> bits = {1U | 1U << 5 | 1U << 31, 1U | 1U << 1 | 1U << 31,
                                        1U | 1U << 5 | 1U << 6, 0xffffffffU};
    EXPECT_EQ(bit_names(bits, names),
              (std::vector<std::string>{"m0", "m5", "m31", "m32", "m63", "m64", "m69"}));
    EXPECT_TRUE(bit_names({}, names).empty());
    EXPECT_TRUE(bit_names({0, 0, 0}, names).empty());
    EXPECT_TRUE(bit_names(bits, {}).empty());
    // As the bit-by-bit look-up it replaced.
    for (uint32_t seed = 1; seed < 200; ++seed) {
        const std::vector<uint32_t> b = {seed * 2654435761U, seed * 40503U, seed};
        std::vector<std::string> expected;
        for (std::size_t i = 0; i < names.size(); ++i)
            if (FeatureSet::bit(b, i) && !names[i].empty()) expected.push_back(names[i]);
        EXPECT_EQ(bit_names(b, names), expected) << seed;
    }
}

// ---- driver statistics names

TEST(EthtoolStats, NamesStopAtTheirFieldWithOrWithoutNul) {
    std::string payload(3 * ETH_GSTRING_LEN, '\0');
    std::memcpy(payload.data(), "rx_missed_errors", 16);
    std::memset(payload.data() + ETH_GSTRING_LEN, 'x', ETH_GSTRING_LEN);  // no NUL at all
    std::memcpy(payload.data() + 2 * ETH_GSTRING_LEN, "port.rx_discards", 16);
    const auto names = sysinfo::parse_gstrings(payload, 3);
    ASSERT_EQ(names.size(), 3U);
    EXPECT_EQ(names[0], "rx_missed_errors");
    EXPECT_EQ(names[1], std::string(ETH_GSTRING_LEN, 'x'));
    EXPECT_EQ(names[2], "port.rx_discards");
    // A count larger than the payload stops at the payload.
    EXPECT_EQ(sysinfo::parse_gstrings(payload, 100).size(), 3U);
}

TEST(EthtoolStats, AnUnknownInterfaceIsNoSuchInterface) {
    auto s = sysinfo::StatsIoctl::open();
    ASSERT_TRUE(s);
    auto r = s->read("nictune-none0");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::NoSuchInterface) << r.error().str();
    // The count's words, as when the count was always asked first (the
    // names are read without it only while they fit the buffer).
    EXPECT_NE(r.error().str().find("ETHTOOL_GSSET_INFO"), std::string::npos) << r.error().str();
    // lo has no statistics: unsupported, whichever call finds out first.
    auto lo = s->read("lo");
    ASSERT_FALSE(lo);
    EXPECT_EQ(lo.error().code, Errc::Unsupported) << lo.error().str();
    EXPECT_FALSE(s->read(""));
    EXPECT_FALSE(s->read(std::string(40, 'a')));
}

// ---- .link files

TEST(LinkFile, ReadsTheKeysNictuneAlsoSets) {
    const auto file = (kData / "link" / "10-p4p1.link").string();
    auto c = sysinfo::parse_link_file(slurp(file), file);
    ASSERT_TRUE(c) << c.error().str();
    EXPECT_EQ(c->tool, "systemd.link");
    EXPECT_EQ(c->source, file);
    EXPECT_EQ(setting(*c, "link.mtu")->value, "9216");  // 9K, 1024-based
    EXPECT_EQ(setting(*c, "link.mtu")->source_key, "MTUBytes");
    EXPECT_EQ(setting(*c, "link.mtu")->line, 7);
    EXPECT_EQ(setting(*c, "rings.rx")->value, "512");
    EXPECT_EQ(setting(*c, "rings.tx")->value, "max");
    EXPECT_EQ(setting(*c, "coalesce.adaptive_rx")->value, "true");
    EXPECT_EQ(setting(*c, "coalesce.rx_usecs")->value, "50");
    EXPECT_EQ(setting(*c, "features.rx-gro")->value, "false");
    EXPECT_EQ(setting(*c, "channels.combined")->value, "8");  // the last assignment
    EXPECT_EQ(setting(*c, "link.name"), nullptr);             // Name= is not nictune's
}

TEST(LinkFile, BadFilesAreErrorsWithFileAndLine) {
    struct Case {
        const char* file;
        int line;
    };
    for (const auto& k :
         {Case{"bad-value.link", 2}, Case{"bad-header.link", 1}, Case{"no-section.link", 1}}) {
        const auto file = (kData / "link" / k.file).string();
        auto c = sysinfo::parse_link_file(slurp(file), file);
        ASSERT_FALSE(c) << k.file;
        EXPECT_EQ(c.error().context, file + ":" + std::to_string(k.line)) << c.error().str();
    }
}

TEST(LinkFile, GarbageNeverCrashes) {
    const auto file = (kData / "link" / "garbage.link").string();
    auto c = sysinfo::parse_link_file(slurp(file), file);
    if (!c) {
        EXPECT_TRUE(c.error().context.starts_with(file + ":")) << c.error().str();
    }
    std::string nul("[Link]\nMTUBytes=9\0000\n", 19);
    EXPECT_FALSE(sysinfo::parse_link_file(nul, "x.link"));
}

// ---- ifupdown

TEST(Ifupdown, ReadsMtuTheEthtoolOptionsAndCommandsOfOneInterface) {
    auto c = sysinfo::read_ifupdown(kData / "etc" / "network" / "interfaces", "p4p1");
    ASSERT_TRUE(c) << c.error().str();
    ASSERT_TRUE(*c);
    const ForeignConfig& f = **c;
    EXPECT_EQ(f.tool, "ifupdown");
    // "up ip link set dev p4p1 mtu 9014" comes after "mtu 9000".
    EXPECT_EQ(setting(f, "link.mtu")->value, "9014");
    EXPECT_EQ(setting(f, "rings.rx")->value, "2048");  // pre-up ethtool -G after the option
    EXPECT_EQ(setting(f, "rings.tx")->value, "2048");
    EXPECT_EQ(setting(f, "coalesce.adaptive_rx")->value, "false");
    EXPECT_EQ(setting(f, "coalesce.rx_usecs")->value, "100");
    EXPECT_EQ(setting(f, "features.gro")->value, "false");  // from interfaces.d
    EXPECT_EQ(setting(f, "rings.rx")->source_key, "pre-up ethtool -G rx");
    EXPECT_EQ(setting(f, "rings.rx")->line, 12);
    EXPECT_EQ(setting(f, "features.gro")->file,
              (kData / "etc" / "network" / "interfaces.d" / "p4p1-extra").string());
    EXPECT_EQ(setting(f, "features.gro")->line, 2);
}

TEST(Ifupdown, OtherInterfacesAndMissingFilesSayNothing) {
    auto p2 = sysinfo::read_ifupdown(kData / "etc" / "network" / "interfaces", "p4p2");
    ASSERT_TRUE(p2);
    ASSERT_TRUE(*p2);
    // p4p1's stanza runs "ethtool -G p4p2 rx 4096": that sets p4p2, and only that.
    ASSERT_EQ((*p2)->settings.size(), 1U);
    EXPECT_EQ((*p2)->settings[0].key, "rings.rx");
    EXPECT_EQ((*p2)->settings[0].value, "4096");
    auto none = sysinfo::read_ifupdown(kData / "etc" / "network" / "interfaces", "eth9");
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
    auto missing = sysinfo::read_ifupdown(kData / "no-such-file", "p4p1");
    ASSERT_TRUE(missing);
    EXPECT_FALSE(*missing);
}

TEST(Ifupdown, ManyInterfacesReadTheFilesOnce) {
    // A copy of /etc/network and its interfaces.d, removed after the first
    // interface: the others are answered from what that one read.
    char tmpl[] = "/tmp/nictune-ifupdown-XXXXXX";
    const fs::path root = mkdtemp(tmpl);
    fs::copy(kData / "etc" / "network", root, fs::copy_options::recursive);
    sysinfo::IfupdownFiles files(root / "interfaces");
    auto p1 = files.settings_for("p4p1");
    fs::remove_all(root);
    ASSERT_TRUE(p1) << p1.error().str();
    ASSERT_TRUE(*p1);
    EXPECT_EQ(setting(**p1, "features.gro")->file, (root / "interfaces.d" / "p4p1-extra").string());
    auto again = files.settings_for("p4p1");
    ASSERT_TRUE(again && *again);
    ASSERT_EQ((*again)->settings.size(), (*p1)->settings.size());
    for (std::size_t i = 0; i < (*p1)->settings.size(); ++i) {
        EXPECT_EQ((*again)->settings[i].key, (*p1)->settings[i].key);
        EXPECT_EQ((*again)->settings[i].value, (*p1)->settings[i].value);
        EXPECT_EQ((*again)->settings[i].file, (*p1)->settings[i].file);
        EXPECT_EQ((*again)->settings[i].line, (*p1)->settings[i].line);
    }
    auto p2 = files.settings_for("p4p2");
    ASSERT_TRUE(p2 && *p2);
    ASSERT_EQ((*p2)->settings.size(), 1U);
    EXPECT_EQ((*p2)->settings[0].value, "4096");
    auto none = files.settings_for("eth9");
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
    // Read alone, the removed file says nothing.
    auto gone = sysinfo::read_ifupdown(root / "interfaces", "p4p1");
    ASSERT_TRUE(gone);
    EXPECT_FALSE(*gone);
    // An unreadable file is an error for every interface asked about.
    sysinfo::IfupdownFiles dir_not_file(kData / "etc" / "network");
    for (const char* name : {"p4p1", "p4p2"}) {
        auto e = dir_not_file.settings_for(name);
        ASSERT_FALSE(e) << name;
        EXPECT_NE(e.error().str().find("network: read"), std::string::npos) << e.error().str();
    }
}

TEST(Ifupdown, CommandsAreParsedNotRun) {
    auto s = sysinfo::settings_of_command(" /usr/sbin/ethtool -L p4p1 combined 8", "p4p1");
    ASSERT_EQ(s.size(), 1U);
    EXPECT_EQ(s[0].key, "channels.combined");
    EXPECT_EQ(s[0].value, "8");
    EXPECT_TRUE(sysinfo::settings_of_command("ethtool -G eth0 rx 1", "p4p1").empty());
    EXPECT_TRUE(sysinfo::settings_of_command("rm -rf /", "p4p1").empty());
    EXPECT_TRUE(sysinfo::settings_of_command("ethtool", "p4p1").empty());
}

// ---- tuned profiles

TEST(TunedProfile, ReadsNetAndTheIncludedCpuSection) {
    auto t = sysinfo::read_tuned_profile({kData / "tuned"}, "nictune-test");
    ASSERT_TRUE(t) << t.error().str();
    ASSERT_TRUE(*t);
    EXPECT_EQ((*t)->net_devices, "p4p*");
    ASSERT_EQ((*t)->net.size(), 2U);
    EXPECT_EQ((*t)->net[0].key, "tuned.net.ring");
    EXPECT_EQ((*t)->net[0].value, "rx 4096 tx 4096");
    bool governor = false;
    for (const auto& c : (*t)->cpu)
        governor |= c.key == "tuned.cpu.governor" && c.value == "performance";
    EXPECT_TRUE(governor);
    auto none = sysinfo::read_tuned_profile({kData / "tuned"}, "no-such-profile");
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
    auto escape = sysinfo::read_tuned_profile({kData / "tuned"}, "../tuned/nictune-test");
    ASSERT_TRUE(escape);
    EXPECT_FALSE(*escape);
}

// ---- initramfs

std::string cpio_member(const std::string& name, const std::string& data) {
    std::string h = "070701";
    auto hex = [&](std::size_t v) { h += fmt::format("{:08X}", v); };
    hex(1), hex(0100644), hex(0), hex(0), hex(1), hex(0), hex(data.size());
    hex(0), hex(0), hex(0), hex(0), hex(name.size() + 1), hex(0);
    h += name;
    h += '\0';
    while (h.size() % 4)
        h += '\0';
    h += data;
    while (h.size() % 4)
        h += '\0';
    return h;
}

TEST(Initramfs, FindsTheModuleInAnUncompressedPartAndStopsAtCompression) {
    std::string img = cpio_member("kernel/x86/microcode/GenuineIntel.bin", "ucode") +
                      cpio_member("TRAILER!!!", "") + std::string(512, '\0') + "\x28\xb5\x2f\xfd" +
                      std::string(16, 'z');
    auto scan = sysinfo::scan_cpio(img, "ixgbe");
    EXPECT_TRUE(scan.modules.empty());
    ASSERT_NE(scan.compressed_at, std::string::npos);
    EXPECT_EQ(sysinfo::initramfs_format(std::string_view(img).substr(scan.compressed_at)), "zstd");
    std::string plain = cpio_member("usr/lib/modules/6.1.0/updates/drivers/net/ixgbe.ko", "ELF") +
                        cpio_member("TRAILER!!!", "");
    auto s2 = sysinfo::scan_cpio(plain, "ixgbe");
    ASSERT_EQ(s2.modules.size(), 1U);
    EXPECT_EQ(s2.compressed_at, std::string::npos);
    EXPECT_TRUE(sysinfo::scan_cpio(plain.substr(0, 120), "ixgbe").truncated);
    EXPECT_EQ(sysinfo::initramfs_format("\x1f\x8b\x08"), "gzip");
    EXPECT_EQ(sysinfo::initramfs_format("hello"), "unknown");
}

TEST(ModuleFiles, WithoutAModulesDirectoryTheDiskCopyIsUnknown) {
    sysinfo::KmodOptions o;
    o.modules_dir = kData / "no-modules";
    o.sysfs_root = kSys;
    o.initramfs = kData / "no-initrd";
    sysinfo::ModuleFiles m(o);
    auto d = m.read("ixgbe");
    EXPECT_FALSE(d.known());
    EXPECT_NE(d.unknown.find("does not exist"), std::string::npos) << d.unknown;
    EXPECT_FALSE(m.read("../etc").known());
}

// ---- D-Bus services without a bus

TEST(Services, NoBusIsUnknownNotAFinding) {
    services::BusOptions bus{"unix:path=/nonexistent/nictune-test-bus"};
    std::string state;
    auto a = services::unit_active(bus, "irqbalance.service", &state);
    EXPECT_FALSE(a.known());
    EXPECT_FALSE(a.unknown.empty());
    auto nm = services::nm_device(bus, "p4p1");
    EXPECT_FALSE(nm.known());
    EXPECT_EQ(services::nm_key("ethtool", "ring-rx"), "rings.rx");
    EXPECT_EQ(services::nm_key("ethtool", "coalesce-rx-usecs"), "coalesce.rx_usecs");
    EXPECT_EQ(services::nm_key("802-3-ethernet", "mtu"), "link.mtu");
    EXPECT_EQ(services::nm_key("ipv4", "method"), "");
}

// ---- the reader on the fixture trees

HealthOptions fixture_options() {
    HealthOptions o;
    o.sysfs_root = kSys;
    o.proc_root = kProc;
    o.ifupdown_file = kData / "etc" / "network" / "interfaces";
    o.tuned_dirs = {kData / "tuned"};
    o.kmod.modules_dir = kData / "no-modules";
    o.kmod.initramfs = kData / "no-initrd";
    o.bus.address = "unix:path=/nonexistent/nictune-test-bus";
    o.udev = false;
    return o;
}

NicState fixture_port() {
    NicState n = test::ixgbe_port("p4p1", "4.4.0-k");
    n.id.physical = true;
    n.id.ifindex = 1000001;  // no such interface in this namespace
    n.values.set(Key::LinkSpeed, 10000);
    n.values.set(Key::LinkCarrier, 1);
    return n;
}

TEST(SystemHealthReader, ReadsTheFixtureMachine) {
    SystemHealthReader reader(fixture_options());
    const NicState port = fixture_port();
    const NicState* nics[] = {&port};
    HealthRead r = reader.read(nics, HealthQuery{"nictune-test"});
    ASSERT_EQ(r.interfaces.size(), 1U);
    const InterfaceHealth& h = r.interfaces[0];
    ASSERT_TRUE(h.pcie.known()) << h.pcie.unknown;
    EXPECT_EQ(h.pcie->port_functions.size(), 2U);
    ASSERT_TRUE(h.irqs.known()) << h.irqs.unknown;
    ASSERT_EQ(h.irqs->size(), 4U);
    EXPECT_EQ((*h.irqs)[0].irq, 60U);
    EXPECT_EQ((*h.irqs)[0].name, "p4p1-TxRx-0");
    EXPECT_EQ((*h.irqs)[0].queue, 0);
    EXPECT_EQ((*h.irqs)[0].affinity, "0");
    EXPECT_EQ((*h.irqs)[0].node, 0);
    EXPECT_EQ((*h.irqs)[2].count, 3000U);
    EXPECT_FALSE((*h.irqs)[3].queue);  // "p4p1": the link vector
    EXPECT_EQ((*h.irqs)[3].affinity, "0-7");
    EXPECT_EQ((*h.irqs)[3].effective_affinity, "0");
    ASSERT_TRUE(h.numa.known());
    EXPECT_EQ(h.numa->node, 1);
    ASSERT_TRUE(h.cpus.known());
    EXPECT_EQ(h.cpus->size(), 4U);
    EXPECT_EQ(h.cpus->front().cpu, 4U);
    ASSERT_TRUE(h.carrier_changes.known());
    EXPECT_EQ(*h.carrier_changes, 4U);
    // Not a real interface here: no statistics, said why.
    EXPECT_FALSE(h.driver_stats.known());
    EXPECT_FALSE(h.driver_stats.unknown.empty());
    // ifupdown's stanza for p4p1 is found; udev is off; NetworkManager unreachable.
    ASSERT_EQ(h.foreign.size(), 1U);
    EXPECT_EQ(h.foreign[0].tool, "ifupdown");
    EXPECT_FALSE(h.foreign_unknown.empty());
    // The machine.
    ASSERT_TRUE(r.system.softnet.known());
    EXPECT_EQ(r.system.softnet->size(), 8U);
    EXPECT_EQ(r.system.sysctls.tcp_rmem_max, 1048576U);
    EXPECT_EQ(r.system.sysctls.netdev_max_backlog, 1000U);
    EXPECT_FALSE(r.system.irqbalance_active.known());
    ASSERT_TRUE(r.system.tuned_net);
    EXPECT_EQ(r.system.tuned_net->note, "[net] devices=p4p*");
    EXPECT_EQ(r.system.irq_cpus.size(), 8U);
}

TEST(SystemHealthReader, VirtualAndBrokenDevicesAreUnknownWithReasons) {
    SystemHealthReader reader(fixture_options());
    NicState v = test::veth("v0");
    NicState e = fixture_port();
    e.id.name = "ens4";
    const NicState* nics[] = {&v, &e};
    HealthRead r = reader.read(nics, {});
    const InterfaceHealth& hv = r.interfaces[0];
    EXPECT_FALSE(hv.pcie.known());
    EXPECT_NE(hv.pcie.unknown.find("software link"), std::string::npos) << hv.pcie.unknown;
    EXPECT_FALSE(hv.irqs.known());
    const InterfaceHealth& he = r.interfaces[1];
    EXPECT_FALSE(he.pcie.known());
    EXPECT_FALSE(he.irqs.known());             // no msi_irqs, no irq file
    EXPECT_FALSE(he.carrier_changes.known());  // "garbage"
    // Nothing unknown becomes a finding.
    HealthContext ctx;
    ctx.facts = &FactsBook::builtin();
    for (std::size_t i = 0; i < 2; ++i) {
        auto a = analyze_health(*nics[i], r.interfaces[i], SystemHealth{}, ctx);
        for (const auto& f : a.findings)
            EXPECT_FALSE(f.key.starts_with("health.pcie") || f.key.starts_with("health.irqs"))
                << f.key;
    }
}

TEST(SystemHealthReader, IrqsThatVanishMidReadAreLeftOut) {
    // A copy of the fixture whose IRQ 61 has no /proc/irq directory (the
    // driver released it between msi_irqs and the affinity read).
    char tmpl[] = "/tmp/nictune-health-XXXXXX";
    const fs::path root = mkdtemp(tmpl);
    fs::copy(kData, root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::remove_all(root / "proc" / "irq" / "61");
    HealthOptions o = fixture_options();
    o.sysfs_root = root / "sysfs";
    o.proc_root = root / "proc";
    SystemHealthReader reader(o);
    const NicState port = fixture_port();
    const NicState* nics[] = {&port};
    auto r = reader.read(nics, {});
    ASSERT_TRUE(r.interfaces[0].irqs.known());
    EXPECT_EQ(r.interfaces[0].irqs->size(), 3U);
    // A sysfs attribute that is a directory (odd, unreadable): that part is
    // unknown, the rest still reads, and no PCIe finding is made up.
    fs::remove(root / "sysfs/devices/pci0000:00/0000:00:02.0/0000:03:00.0/current_link_width");
    fs::create_directory(root /
                         "sysfs/devices/pci0000:00/0000:00:02.0/0000:03:00.0/current_link_width");
    auto odd = reader.read(nics, {});
    ASSERT_TRUE(odd.interfaces[0].pcie.known());
    EXPECT_FALSE(odd.interfaces[0].pcie->link.current_width);
    EXPECT_EQ(
        finding(analyze_health(port, odd.interfaces[0], odd.system, {}).findings, "health.pcie"),
        nullptr);
    // And without /proc/interrupts at all.
    fs::remove(root / "proc" / "interrupts");
    auto r2 = reader.read(nics, {});
    EXPECT_FALSE(r2.interfaces[0].irqs.known());
    EXPECT_NE(r2.interfaces[0].irqs.unknown.find("interrupts"), std::string::npos)
        << r2.interfaces[0].irqs.unknown;
    fs::remove_all(root);
}

// ---- the analysis

struct Fixture {
    NicState port = fixture_port();
    HealthRead read;
    Fixture() {
        SystemHealthReader reader(fixture_options());
        const NicState* nics[] = {&port};
        read = reader.read(nics, HealthQuery{"nictune-test"});
    }
};

TEST(HealthAnalysis, ASlowSlotIsAFailWithTheCardsOwnCapabilityAsTheFix) {
    Fixture fx;
    HealthContext ctx;
    ctx.facts = &FactsBook::builtin();
    auto a = analyze_health(fx.port, fx.read.interfaces[0], fx.read.system, ctx);
    const Finding* f = finding(a.findings, "health.pcie");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Fail);
    EXPECT_NE(f->message.find("PCIe x4 at 2.5 GT/s gives about 8.0 Gbit/s"), std::string::npos)
        << f->message;
    EXPECT_NE(f->message.find("the 2 ports of this card (p4p1, p4p2)"), std::string::npos)
        << f->message;
    EXPECT_NE(f->message.find("need 20 Gbit/s"), std::string::npos) << f->message;
    EXPECT_NE(f->fix.find("x8 at 5 GT/s"), std::string::npos) << f->fix;
    ASSERT_FALSE(a.limits.empty());
    EXPECT_EQ(a.limits.front().key, "health.pcie");
    EXPECT_EQ(a.limits.front().text, "PCIe x4 at 2.5 GT/s caps this port at about 4.0 Gbit/s");
    EXPECT_NEAR(*a.limits.front().cap_gbps, 4.0, 1e-9);
}

TEST(HealthAnalysis, QueueIrqsOnOneCpuOfTheOtherNode) {
    Fixture fx;
    HealthContext ctx;
    auto a = analyze_health(fx.port, fx.read.interfaces[0], fx.read.system, ctx);
    const Finding* one = finding(a.findings, "health.irqs.one_cpu");
    ASSERT_NE(one, nullptr);
    EXPECT_EQ(one->severity, Severity::Warn);
    EXPECT_NE(one->message.find("all 3 queue interrupts of p4p1 are handled by CPU 0"),
              std::string::npos)
        << one->message;
    EXPECT_NE(one->fix.find("4-7"), std::string::npos) << one->fix;
    const Finding* remote = finding(a.findings, "health.irqs.remote_node");
    ASSERT_NE(remote, nullptr);
    EXPECT_NE(remote->message.find("3 of 3 queue interrupts run on CPUs of node 0, the NIC sits "
                                   "on node 1"),
              std::string::npos)
        << remote->message;
}

TEST(HealthAnalysis, SpreadLocalIrqsAreFine) {
    Fixture fx;
    auto& irqs = *fx.read.interfaces[0].irqs.value;
    for (std::size_t i = 0; i < irqs.size(); ++i) {
        irqs[i].effective_affinity = std::to_string(4 + i);
        irqs[i].node = 1;
    }
    auto a = analyze_health(fx.port, fx.read.interfaces[0], fx.read.system, {});
    EXPECT_EQ(finding(a.findings, "health.irqs.one_cpu"), nullptr);
    EXPECT_EQ(finding(a.findings, "health.irqs.remote_node"), nullptr);
}

TEST(HealthAnalysis, PowerSavingCpusMatterUnderALatencyProfile) {
    Fixture fx;
    Profile lowlat;
    lowlat.name = "x520-lowlatency";
    HealthContext ctx;
    ctx.profile = &lowlat;
    auto a = analyze_health(fx.port, fx.read.interfaces[0], fx.read.system, ctx);
    const Finding* g = finding(a.findings, "health.cpu.governor");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->severity, Severity::Warn);
    EXPECT_NE(g->message.find("powersave on the NIC's local CPUs 4-7"), std::string::npos)
        << g->message;
    // tuned's active profile (nictune-test includes latency-performance) is named.
    EXPECT_NE(g->message.find("tuned profile nictune-test sets governor = performance"),
              std::string::npos)
        << g->message;
    ASSERT_NE(finding(a.findings, "health.cpu.cstates"), nullptr);
    ASSERT_NE(finding(a.findings, "health.cpu.epp"), nullptr);
    // Without one it is information only, and C-states are not mentioned.
    auto b = analyze_health(fx.port, fx.read.interfaces[0], fx.read.system, {});
    ASSERT_NE(finding(b.findings, "health.cpu.governor"), nullptr);
    EXPECT_EQ(finding(b.findings, "health.cpu.governor")->severity, Severity::Info);
    EXPECT_EQ(finding(b.findings, "health.cpu.cstates"), nullptr);
}

TEST(HealthAnalysis, TunedNetSettingsOverlappingTheProfileAreAWarning) {
    Fixture fx;
    Profile p;
    p.name = "x520-throughput";
    p.settings[key_index(Key::RingsRx)] = Target{4096, false, {}};
    HealthContext ctx;
    ctx.profile = &p;
    auto a = analyze_health(fx.port, fx.read.interfaces[0], fx.read.system, ctx);
    const Finding* t = finding(a.findings, "health.foreign.tuned.ring");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->severity, Severity::Warn);
    EXPECT_EQ(finding(a.findings, "health.foreign.tuned.coalesce"), nullptr);  // not in the profile
}

InterfaceHealth counters(uint64_t missed, uint64_t crc = 0, uint64_t xoff_rx = 0) {
    InterfaceHealth h;
    h.driver_stats = Known<std::vector<Counter>>::of({{"rx_packets", 1000000},
                                                      {"rx_missed_errors", missed},
                                                      {"rx_no_dma_resources", 0},
                                                      {"rx_crc_errors", crc},
                                                      {"rx_flow_control_xoff", xoff_rx},
                                                      {"tx_timeout_count", 0}});
    LinkStats ls;
    ls.rx_packets = 1000000;
    ls.rx_missed_errors = missed;
    ls.rx_crc_errors = crc;
    h.link_stats = Known<LinkStats>::of(ls);
    return h;
}

TEST(HealthAnalysis, RxDropsWithSmallRingsSayRaiseRings) {
    const NicState port = fixture_port();  // rings 512 of 4096
    HealthContext ctx;
    ctx.facts = &FactsBook::builtin();
    auto a = analyze_health(port, counters(5000), {}, ctx);
    const Finding* f = finding(a.findings, "health.rx_drops");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warn);
    EXPECT_NE(f->message.find("5,000 packets dropped for lack of RX buffers since the driver "
                              "loaded"),
              std::string::npos)
        << f->message;
    EXPECT_NE(f->message.find("rx_missed_errors 5,000"), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("rings at 512 of 4096"), std::string::npos) << f->message;
    EXPECT_NE(f->fix.find("raise rings.rx (now 512 of 4096)"), std::string::npos) << f->fix;
    ASSERT_FALSE(a.limits.empty());
    EXPECT_EQ(a.limits.front().key, "health.rx_drops");

    NicState maxed = port;
    maxed.values.set(Key::RingsRx, 4096);
    auto b = analyze_health(maxed, counters(5000), {}, ctx);
    EXPECT_NE(finding(b.findings, "health.rx_drops")->fix.find("at their maximum"),
              std::string::npos);
    // A handful in a million is information, not a warning.
    auto c = analyze_health(port, counters(3), {}, ctx);
    EXPECT_EQ(finding(c.findings, "health.rx_drops")->severity, Severity::Info);
    EXPECT_TRUE(c.limits.empty());
    // None: no finding.
    EXPECT_EQ(finding(analyze_health(port, counters(0), {}, ctx).findings, "health.rx_drops"),
              nullptr);
}

TEST(HealthAnalysis, CrcErrorsPointAtTheCableAndPauseFramesAtThePeer) {
    const NicState port = fixture_port();
    HealthContext ctx;
    ctx.facts = &FactsBook::builtin();
    auto a = analyze_health(port, counters(0, 12, 40), {}, ctx);
    const Finding* crc = finding(a.findings, "health.crc_errors");
    ASSERT_NE(crc, nullptr);
    EXPECT_NE(crc->fix.find("cable"), std::string::npos);
    const Finding* pause = finding(a.findings, "health.pause_rx");
    ASSERT_NE(pause, nullptr);
    EXPECT_NE(pause->message.find("the peer or switch is congested"), std::string::npos);
}

TEST(HealthAnalysis, PauseFramesEitherWayNameTheSideThatCannotKeepUp) {
    const NicState port = fixture_port();
    InterfaceHealth h;
    h.driver_stats = Known<std::vector<Counter>>::of(
        {{"rx_flow_control_xoff", 40}, {"tx_flow_control_xoff", 7}});
    HealthContext ctx;
    ctx.facts = &FactsBook::builtin();
    auto totals = analyze_health(port, h, {}, ctx);
    const Finding* rx = finding(totals.findings, "health.pause_rx");
    const Finding* tx = finding(totals.findings, "health.pause_tx");
    ASSERT_NE(rx, nullptr);
    ASSERT_NE(tx, nullptr);
    EXPECT_EQ(rx->severity, Severity::Info);
    EXPECT_EQ(rx->message,
              "40 pause frames received since the driver loaded (totals; audit --sample SECONDS "
              "shows whether they still grow): the peer or switch is congested and asked this "
              "port to pause (rx_flow_control_xoff 40)");
    EXPECT_EQ(rx->fix,
              "look at the switch port (egress congestion, buffers) or the peer host; turning "
              "pause.rx off only moves the drops there");
    EXPECT_EQ(tx->message,
              "7 pause frames sent since the driver loaded (totals; audit --sample SECONDS shows "
              "whether they still grow): this port's RX buffer filled up and it asked the peer "
              "to pause (tx_flow_control_xoff 7)");
    EXPECT_EQ(tx->fix,
              "this host does not keep up with what it receives: raise rings.rx, spread the "
              "queue IRQs over the local CPUs");
    EXPECT_TRUE(totals.limits.empty());

    // Still coming in a sample: warnings, and those received bound the link.
    HealthRates rates;
    rates.seconds = 10;
    rates.driver = {{"rx_flow_control_xoff", 4}, {"tx_flow_control_xoff", 2}};
    ctx.rates = &rates;
    auto sampled = analyze_health(port, h, {}, ctx);
    EXPECT_EQ(finding(sampled.findings, "health.pause_rx")->severity, Severity::Warn);
    EXPECT_EQ(finding(sampled.findings, "health.pause_tx")->severity, Severity::Warn);
    ASSERT_EQ(sampled.limits.size(), 1U);
    EXPECT_EQ(sampled.limits[0].key, "health.pause_rx");
    EXPECT_DOUBLE_EQ(sampled.limits[0].impact, 0.2);
}

TEST(HealthAnalysis, SampledRatesMakeDropsPerSecond) {
    const NicState port = fixture_port();
    InterfaceHealth h = counters(5000);
    CounterSnapshot before, after;
    before.driver_stats[port.id.ifindex] = *h.driver_stats;
    before.link_stats[port.id.ifindex] = *h.link_stats;
    auto later = *h.driver_stats;
    later[1].value += 12000;  // rx_missed_errors
    later[0].value += 100000;
    after.driver_stats[port.id.ifindex] = later;
    LinkStats ls = *h.link_stats;
    ls.rx_packets += 100000;
    ls.rx_missed_errors += 12000;
    after.link_stats[port.id.ifindex] = ls;
    before.carrier_changes[port.id.ifindex] = 4;
    after.carrier_changes[port.id.ifindex] = 6;
    const HealthRates rates = rates_between(before, after, port.id.ifindex, h, 10.0);
    ASSERT_FALSE(rates.driver.empty());
    EXPECT_EQ(rates.carrier_changes, 2U);
    HealthContext ctx;
    ctx.facts = &FactsBook::builtin();
    ctx.rates = &rates;
    auto a = analyze_health(port, h, {}, ctx);
    const Finding* f = finding(a.findings, "health.rx_drops");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->message.find("1,200 packets/s"), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("in the 10 s sample"), std::string::npos) << f->message;
    ASSERT_NE(finding(a.findings, "health.link.carrier"), nullptr);
    EXPECT_EQ(a.limits.front().text, "1,200 RX drops/s with rings at 512 of 4096");
}

TEST(HealthAnalysis, NegotiatedBelowWhatBothEndsSupport) {
    NicState port = fixture_port();
    port.values.set(Key::LinkSpeed, 1000);
    InterfaceHealth h;
    h.modes = Known<LinkModes>::of({{"100baseT/Full", "1000baseT/Full", "10000baseT/Full"},
                                    {"100baseT/Full", "1000baseT/Full", "10000baseT/Full"},
                                    {"1000baseT/Full", "10000baseT/Full", "Autoneg"}});
    auto a = analyze_health(port, h, {}, {});
    const Finding* f = finding(a.findings, "health.link.speed");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->message, "negotiated 1000 Mb/s while both ends support 10000baseT/Full");
    EXPECT_NE(f->fix.find("cable"), std::string::npos);
    ASSERT_EQ(a.limits.size(), 1U);
    EXPECT_NEAR(a.limits[0].impact, 0.9, 1e-9);
    // The peer only does 1G: nothing to say.
    h.modes.value->partner = {"1000baseT/Full"};
    EXPECT_EQ(finding(analyze_health(port, h, {}, {}).findings, "health.link.speed"), nullptr);
    EXPECT_EQ(mode_speed("2500baseX/Full")->mbps, 2500U);
    EXPECT_FALSE(mode_speed("10baseT/Half")->full);
    EXPECT_FALSE(mode_speed("Autoneg"));
    EXPECT_FALSE(mode_speed("FEC_RS"));
}

TEST(HealthAnalysis, ALinkFileFightingTheProfileNamesFileKeyAndBothValues) {
    const auto file = (kData / "link" / "10-p4p1.link").string();
    auto c = sysinfo::parse_link_file(slurp(file), file);
    ASSERT_TRUE(c);
    InterfaceHealth h;
    h.foreign.push_back(*c);
    Profile p;
    p.name = "x520-throughput";
    p.settings[key_index(Key::RingsRx)] = Target{4096, false, {}};
    HealthContext ctx;
    ctx.profile = &p;
    const NicState port = fixture_port();
    auto a = analyze_health(port, h, {}, ctx);
    const Finding* f = finding(a.findings, "health.foreign.rings.rx");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warn);
    EXPECT_NE(f->message.find(file + ":8 sets RxBufferSize = 512 (rings.rx), profile "
                                     "x520-throughput wants 4096"),
              std::string::npos)
        << f->message;
    EXPECT_NE(f->message.find("udev applies it again"), std::string::npos);
    EXPECT_NE(f->fix.find("remove RxBufferSize from " + file + ":8"), std::string::npos) << f->fix;
    // Keys the profile leaves alone are information.
    const Finding* mtu = finding(a.findings, "health.foreign.link.mtu");
    ASSERT_NE(mtu, nullptr);
    EXPECT_EQ(mtu->severity, Severity::Info);
    EXPECT_NE(mtu->message.find("the device has 1500"), std::string::npos) << mtu->message;
}

TEST(HealthAnalysis, AStaleDriverSaysReloadOrReboot) {
    InterfaceHealth h;
    DriverFiles d;
    d.module = "ixgbe";
    d.loaded_version = "4.4.0-k";
    d.loaded_srcversion = "AAAA";
    d.disk_path = "/lib/modules/6.1.0-13-amd64/updates/drivers/net/ethernet/intel/ixgbe/ixgbe.ko";
    d.disk_version = "5.3.6";
    d.disk_srcversion = "BBBB";
    h.driver = Known<DriverFiles>::of(d);
    auto a = analyze_health(fixture_port(), h, {}, {});
    const Finding* f = finding(a.findings, "health.driver.stale");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->message.find("ixgbe 5.3.6 is installed at " + *d.disk_path), std::string::npos)
        << f->message;
    EXPECT_NE(f->message.find("but 4.4.0-k is loaded"), std::string::npos) << f->message;
    EXPECT_NE(f->fix.find("modprobe -r ixgbe && modprobe ixgbe"), std::string::npos);
    d.disk_srcversion = "AAAA";
    d.disk_version = "4.4.0-k";
    h.driver = Known<DriverFiles>::of(d);
    EXPECT_EQ(finding(analyze_health(fixture_port(), h, {}, {}).findings, "health.driver.stale"),
              nullptr);
}

TEST(HealthAnalysis, SmallTcpBuffersAgainstTheBandwidthDelayProduct) {
    Fixture fx;  // tcp_rmem max 1 MiB, wmem max 4 MiB
    HealthContext ctx;
    ctx.rtt_ms = 5;
    auto a = analyze_health(fx.port, fx.read.interfaces[0], fx.read.system, ctx);
    const Finding* r = finding(a.findings, "health.tcp_rmem");
    ASSERT_NE(r, nullptr);
    EXPECT_NE(r->message.find("bandwidth-delay product of 10000 Mb/s x 5 ms (6,250,000 bytes)"),
              std::string::npos)
        << r->message;
    EXPECT_NE(r->fix.find("net.ipv4.tcp_rmem"), std::string::npos);
    ASSERT_NE(finding(a.findings, "health.tcp_wmem"), nullptr);
    // At the default 1 ms the 4 MiB send buffer is enough, the 1 MiB receive one is not.
    ctx.rtt_ms = kDefaultRttMs;
    auto b = analyze_health(fx.port, fx.read.interfaces[0], fx.read.system, ctx);
    EXPECT_NE(finding(b.findings, "health.tcp_rmem"), nullptr);
    EXPECT_EQ(finding(b.findings, "health.tcp_wmem"), nullptr);
}

TEST(HealthAnalysis, LimitsAreRankedByWhatTheyCost) {
    Fixture fx;
    InterfaceHealth& h = fx.read.interfaces[0];
    HealthContext ctx;
    ctx.facts = &FactsBook::builtin();
    // 0.2% loss costs less than a PCIe link that caps the port at 40%...
    h.driver_stats = counters(2000).driver_stats;
    h.link_stats = counters(2000).link_stats;
    auto a = analyze_health(fx.port, h, fx.read.system, ctx);
    ASSERT_GE(a.limits.size(), 3U);
    for (std::size_t i = 1; i < a.limits.size(); ++i)
        EXPECT_GE(a.limits[i - 1].impact, a.limits[i].impact) << a.limits[i].key;
    auto rank = [](const HealthAnalysis& x, std::string_view key) {
        for (std::size_t i = 0; i < x.limits.size(); ++i)
            if (x.limits[i].key == key) return i;
        return x.limits.size();
    };
    EXPECT_EQ(a.limits[0].key, "health.pcie");
    EXPECT_LT(rank(a, "health.pcie"), rank(a, "health.rx_drops"));
    // ...2% loss costs more (TCP's rate falls as 1/sqrt(loss)).
    h.driver_stats = counters(20000).driver_stats;
    h.link_stats = counters(20000).link_stats;
    auto b = analyze_health(fx.port, h, fx.read.system, ctx);
    EXPECT_EQ(b.limits[0].key, "health.rx_drops");
    EXPECT_GT(rank(b, "health.pcie"), rank(b, "health.rx_drops"));
}

TEST(HealthAnalysis, SystemFindingsForSoftnetAndIrqbalance) {
    Fixture fx;
    fx.read.system.irqbalance_active = Known<bool>::of(true);
    auto f = analyze_system_health(fx.read.system, nullptr, {}, 0);
    ASSERT_NE(finding(f, "health.irqbalance"), nullptr);
    const Finding* d = finding(f, "health.softnet.dropped");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->severity, Severity::Info);  // totals since boot
    EXPECT_NE(d->message.find("37 packets dropped since boot (totals) because the backlog of "
                              "CPUs 0 was full (net.core.netdev_max_backlog = 1000)"),
              std::string::npos)
        << d->message;
    ASSERT_NE(finding(f, "health.softnet.squeeze"), nullptr);
    // Sampled: only what moved, and drops are a warning.
    CounterSnapshot b, a;
    b.softnet = *fx.read.system.softnet;
    a.softnet = b.softnet;
    a.softnet[2].dropped += 50;
    auto rates = softnet_rates(b, a, 5);
    auto g = analyze_system_health(fx.read.system, nullptr, rates, 5);
    ASSERT_NE(finding(g, "health.softnet.dropped"), nullptr);
    EXPECT_EQ(finding(g, "health.softnet.dropped")->severity, Severity::Warn);
    EXPECT_NE(finding(g, "health.softnet.dropped")->message.find("CPUs 2"), std::string::npos);
    EXPECT_EQ(finding(g, "health.softnet.squeeze"), nullptr);
}

// In a network namespace of its own (a container) the backlog and budget
// sysctls have no file: the findings say they are the host's and where to
// set them, not "?".
TEST(HealthAnalysis, SoftnetFindingsInANamespaceNameTheHostsSysctls) {
    Fixture fx;
    auto& sc = fx.read.system.sysctls;
    sc.netdev_max_backlog.reset();
    sc.netdev_budget.reset();
    sc.netdev_budget_usecs.reset();
    auto f = analyze_system_health(fx.read.system, nullptr, {}, 0);
    const Finding* d = finding(f, "health.softnet.dropped");
    const Finding* q = finding(f, "health.softnet.squeeze");
    ASSERT_NE(d, nullptr);
    ASSERT_NE(q, nullptr);
    for (const Finding* x : {d, q}) {
        EXPECT_NE(x->message.find("the host's, not visible in this network namespace"),
                  std::string::npos)
            << x->message;
        EXPECT_EQ(x->message.find('?'), std::string::npos) << x->message;
        EXPECT_NE(x->fix.find("in the host's network namespace"), std::string::npos) << x->fix;
        EXPECT_EQ(x->fix.find("[sysctl]"), std::string::npos) << x->fix;
    }
    // Visible (the host's own namespace): the values, and a profile's [sysctl].
    sc.netdev_budget = 300;
    sc.netdev_budget_usecs = 8000;
    auto g = analyze_system_health(fx.read.system, nullptr, {}, 0);
    const Finding* q2 = finding(g, "health.softnet.squeeze");
    ASSERT_NE(q2, nullptr);
    EXPECT_NE(q2->message.find("net.core.netdev_budget = 300, netdev_budget_usecs = 8000"),
              std::string::npos)
        << q2->message;
    EXPECT_NE(q2->fix.find("in a profile's [sysctl]"), std::string::npos) << q2->fix;
}

TEST(HealthAnalysis, CountersThatWentBackwardsGiveNoRate) {
    CounterSnapshot b, a;
    b.driver_stats[1] = {{"rx_missed_errors", 100}};
    a.driver_stats[1] = {{"rx_missed_errors", 5}};  // driver reloaded
    auto r = rates_between(b, a, 1, {}, 1.0);
    ASSERT_EQ(r.driver.size(), 1U);
    EXPECT_EQ(r.driver[0].per_second, 0);
}

TEST(HealthFormat, GroupsDigits) {
    EXPECT_EQ(group_digits(0), "0");
    EXPECT_EQ(group_digits(999), "999");
    EXPECT_EQ(group_digits(1200), "1,200");
    EXPECT_EQ(group_digits(1234567), "1,234,567");
}

// ---- driver facts

TEST(CounterFacts, TheBuiltInTableNamesIxgbeAndI40eCounters) {
    const auto* ix = FactsBook::builtin().find("ixgbe");
    ASSERT_NE(ix, nullptr);
    ASSERT_NE(ix->counter("rx_no_dma_resources"), nullptr);
    EXPECT_EQ(ix->counter("rx_no_dma_resources")->kind, "rx_no_buffer");
    EXPECT_EQ(ix->counter("rx_missed_errors")->kind, "rx_no_buffer");
    EXPECT_EQ(ix->counter("tx_timeout_count")->kind, "tx_timeout");
    EXPECT_EQ(ix->counter("rx_pb_3_pxoff")->kind, "pause_rx");
    // The ring running empty is not a drop (the FIFO may hold the frame).
    EXPECT_EQ(ix->counter("rx_no_buffer_count"), nullptr);
    EXPECT_EQ(ix->counter("rx_packets"), nullptr);
    const auto* i40e = FactsBook::builtin().find("i40e");
    ASSERT_NE(i40e, nullptr);
    EXPECT_EQ(i40e->counter("port.rx_discards")->kind, "rx_no_buffer");
    EXPECT_EQ(i40e->counter("port.rx_dropped")->kind, "rx_no_buffer");  // its older name
    EXPECT_EQ(i40e->counter("port.tx_timeout")->kind, "tx_timeout");
    EXPECT_EQ(i40e->counter("tx_timeout"), nullptr);  // no such string in i40e
    EXPECT_EQ(i40e->counter("port.rx_priority_7_xoff_rx")->kind, "pause_rx");
    // 6.1.192: oversize frames (GL_RXERR1), not ring drops.
    EXPECT_EQ(i40e->counter("rx_dropped")->kind, "rx_dropped");
    EXPECT_EQ(FactsBook::builtin().find("virtio_net")->counter("rx_queue_3_drops")->kind,
              "rx_dropped");
}

TEST(CounterFacts, AStarIsANumberSoXdpDropsAreNotDropsTwice) {
    EXPECT_TRUE(counter_name_matches("rx_queue_*_drops", "rx_queue_0_drops"));
    EXPECT_TRUE(counter_name_matches("rx_queue_*_drops", "rx_queue_15_drops"));
    EXPECT_TRUE(counter_name_matches("port.rx_priority_*_xoff_rx", "port.rx_priority_7_xoff_rx"));
    EXPECT_TRUE(counter_name_matches("rx_missed_errors", "rx_missed_errors"));
    // virtio_net counts every XDP drop in rx_queue_N_drops as well.
    EXPECT_FALSE(counter_name_matches("rx_queue_*_drops", "rx_queue_0_xdp_drops"));
    EXPECT_EQ(FactsBook::builtin().find("virtio_net")->counter("rx_queue_0_xdp_drops"), nullptr);
    EXPECT_FALSE(counter_name_matches("rx_queue_*_drops", "rx_queue__drops"));
    EXPECT_FALSE(counter_name_matches("rx_queue_*_drops", "rx_queue_0_drops_x"));
    EXPECT_FALSE(counter_name_matches("rx_missed_errors", "rx_missed_error"));
    EXPECT_FALSE(counter_name_matches("rx_missed_errors", ""));
    // veth: XDP drops are a row of their own (not counted in rx_drops).
    const auto* veth = FactsBook::builtin().find("veth");
    ASSERT_NE(veth, nullptr);
    ASSERT_NE(veth->counter("rx_queue_0_xdp_drops"), nullptr);
    EXPECT_EQ(veth->counter("rx_queue_0_xdp_drops")->name, "rx_queue_*_xdp_drops");
    EXPECT_EQ(veth->counter("rx_queue_0_drops")->name, "rx_queue_*_drops");
}

// The driver file and the tables (or get_strings functions) in it that define
// the `ethtool -S` strings, Linux 6.1: what a counter row's source must cite.
struct StatsSource {
    std::string file;
    std::set<std::string> tables;
};
const std::map<std::string, StatsSource>& stats_sources() {
    static const std::map<std::string, StatsSource> m = {
        {"ixgbe",
         {"drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c",
          {"ixgbe_gstrings_stats", "ixgbe_get_strings"}}},
        {"i40e",
         {"drivers/net/ethernet/intel/i40e/i40e_ethtool.c",
          {"i40e_gstrings_stats", "i40e_gstrings_net_stats", "i40e_gstrings_misc_stats",
           "i40e_gstrings_pfc_stats"}}},
        {"e1000e", {"drivers/net/ethernet/intel/e1000e/ethtool.c", {"e1000_gstrings_stats"}}},
        {"igb",
         {"drivers/net/ethernet/intel/igb/igb_ethtool.c",
          {"igb_gstrings_stats", "igb_gstrings_net_stats", "igb_get_strings"}}},
        {"ixgbevf", {"drivers/net/ethernet/intel/ixgbevf/ethtool.c", {"ixgbevf_gstrings_stats"}}},
        {"iavf", {"drivers/net/ethernet/intel/iavf/iavf_ethtool.c", {"iavf_gstrings_stats"}}},
        {"virtio_net",
         {"drivers/net/virtio_net.c", {"virtnet_rq_stats_desc", "virtnet_sq_stats_desc"}}},
        {"veth", {"drivers/net/veth.c", {"veth_rq_stats_desc"}}},
    };
    return m;
}

// What is wrong with a row's source, or "" when it cites the driver file, one
// of its stats tables and, quoted, the string that makes the row's name:
// the name itself ("%u" for its `*`) or, for the per-queue descriptor tables,
// the part after "rx_queue_%u_".
std::string source_problem(const std::string& driver, const CounterFact& c) {
    const auto it = stats_sources().find(driver);
    if (it == stats_sources().end())
        return "the test knows no stats tables of driver " + driver + ": add them";
    if (c.source.empty()) return "no source";
    std::istringstream in(c.source);
    std::string file, table;
    in >> file >> table;
    if (file != it->second.file) return "cites " + file + ", not " + it->second.file;
    if (!table.ends_with(':')) return "the table is not followed by ':' (" + table + ")";
    table.pop_back();
    if (!it->second.tables.contains(table)) return "cites no stats table of the file: " + table;
    const auto q1 = c.source.find('"');
    const auto q2 = q1 == std::string::npos ? q1 : c.source.find('"', q1 + 1);
    if (q2 == std::string::npos) return "quotes no string";
    std::string literal = c.source.substr(q1 + 1, q2 - q1 - 1);
    for (std::size_t p; (p = literal.find("%u")) != std::string::npos;)
        literal.replace(p, 2, "*");
    const auto star = c.name.find("_*_");
    if (literal == c.name || (star != std::string::npos && c.name.substr(star + 3) == literal &&
                              table.ends_with("_stats_desc")))
        return {};
    return "quotes \"" + literal + "\", which is not the name " + c.name;
}

TEST(CounterFacts, EveryBuiltInRowCitesTheStringInItsDriverSource) {
    std::size_t rows = 0;
    std::set<std::string> drivers;
    for (const DriverFacts* dp : FactsBook::builtin().drivers())
        for (const DriverFacts& d = *dp; const auto& c : d.counters) {
            ++rows;
            drivers.insert(d.driver);
            EXPECT_EQ(source_problem(d.driver, c), "") << d.driver << " " << c.name;
            EXPECT_FALSE(c.meaning.empty()) << d.driver << " " << c.name;
            EXPECT_TRUE(valid_counter_kind(c.kind)) << d.driver << " " << c.name;
        }
    EXPECT_GE(rows, 40U);
    for (const char* d :
         {"ixgbe", "i40e", "e1000e", "igb", "ixgbevf", "iavf", "virtio_net", "veth"})
        EXPECT_TRUE(drivers.contains(d)) << d << " has no counter rows";
}

TEST(CounterFacts, TheSourceCheckRefusesRowsThatCiteNothingOrSomethingElse) {
    CounterFact c{"rx_missed_errors", "rx_no_buffer", "m",
                  "drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c ixgbe_gstrings_stats: "
                  "\"rx_missed_errors\" = IXGBE_NETDEV_STAT(rx_missed_errors)"};
    EXPECT_EQ(source_problem("ixgbe", c), "");
    CounterFact none = c;
    none.source = "";
    EXPECT_NE(source_problem("ixgbe", none), "");
    CounterFact memory = c;
    memory.source = "ixgbe_main.c ixgbe_update_stats: the MPC registers summed";
    EXPECT_NE(source_problem("ixgbe", memory), "");
    CounterFact other_table = c;
    other_table.source =
        "drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c ixgbe_gstrings_test: "
        "\"rx_missed_errors\"";
    EXPECT_NE(source_problem("ixgbe", other_table), "");
    CounterFact other_name = c;
    other_name.name = "rx_no_dma_resources";
    EXPECT_NE(source_problem("ixgbe", other_name), "");
    CounterFact q{"rx_queue_*_drops", "rx_dropped", "m",
                  "drivers/net/virtio_net.c virtnet_rq_stats_desc: \"drops\""};
    EXPECT_EQ(source_problem("virtio_net", q), "");
    q.name = "rx_queue_*_xdp_drops";
    EXPECT_NE(source_problem("virtio_net", q), "");
    EXPECT_NE(source_problem("mlx5_core", c), "");
}

TEST(CounterFacts, BadTablesAreRefusedWithTheirLocation) {
    auto bad_kind = FactsBook::parse(
        "[x]\n[[x.counters]]\nname = \"a\"\nkind = \"weird\"\nsource = \"s\"\n", "f.toml");
    ASSERT_FALSE(bad_kind);
    EXPECT_NE(bad_kind.error().str().find("f.toml:2"), std::string::npos) << bad_kind.error().str();
    auto no_source = FactsBook::parse("[[x.counters]]\nname = \"a\"\nkind = \"crc\"\n", "f.toml");
    ASSERT_FALSE(no_source);
    EXPECT_NE(no_source.error().str().find("source"), std::string::npos);
    auto unknown = FactsBook::parse(
        "[[x.counters]]\nname = \"a\"\nkind = \"crc\"\nsource = \"s\"\nwhy = 1\n", "f.toml");
    ASSERT_FALSE(unknown);
}

// ---- the audit's health path and the report

class FakeHealthReader : public HealthReader {
  public:
    HealthRead next;
    CounterSnapshot later;
    int reads = 0, counter_reads = 0;
    HealthRead read(std::span<const NicState* const> nics, const HealthQuery&) override {
        ++reads;
        HealthRead r = next;
        r.interfaces.resize(nics.size());
        return r;
    }
    CounterSnapshot read_counters(std::span<const NicState* const>) override {
        ++counter_reads;
        return later;
    }
};

class HealthBackend : public test::FakeBackend {
  public:
    FakeHealthReader reader;
    HealthReader* health() override { return &reader; }
};

profile::Store empty_store() {
    profile::StoreOptions so;
    so.search_path = {kData / "no-profiles"};
    return profile::Store(so);
}

TEST(AuditHealth, SamplesTwiceAndReportsRates) {
    HealthBackend be;
    NicState port = fixture_port();
    port.id.physical = true;
    be.nics.push_back(port);
    InterfaceHealth h = counters(5000);
    be.reader.next.interfaces = {h};
    auto later = *h.driver_stats;
    later[1].value += 500;
    be.reader.later.driver_stats[port.id.ifindex] = later;
    AuditRequest req;
    req.sample_seconds = 0.05;
    auto r = run_audit(be, empty_store(), FactsBook::builtin(), req);
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(be.reader.reads, 1);
    EXPECT_EQ(be.reader.counter_reads, 1);
    ASSERT_TRUE(r->health);
    ASSERT_TRUE(r->health->sample_seconds);
    EXPECT_GE(*r->health->sample_seconds, 0.05);
    const auto& ih = r->interfaces[0].health;
    ASSERT_TRUE(ih);
    ASSERT_TRUE(ih->rates);
    ASSERT_EQ(ih->rates->driver.size(), 1U);
    EXPECT_EQ(ih->rates->driver[0].name, "rx_missed_errors");
    EXPECT_GT(ih->rates->driver[0].per_second, 0);
    EXPECT_LE(ih->rates->driver[0].per_second, 500 / 0.05);
    const Finding* f = finding(r->interfaces[0].findings, "health.rx_drops");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->message.find("/s"), std::string::npos) << f->message;

    const Json j = report::audit_json(*r);
    const Json& hj = j.at("interfaces").at(0).at("health");
    EXPECT_EQ(hj.at("counters").at("driver").at("rx_missed_errors"), 5000);
    EXPECT_TRUE(hj.at("rates").at("driver").contains("rx_missed_errors"));
    EXPECT_TRUE(j.at("health").at("sample_seconds").is_number());
    const std::string text = report::audit_text(j, {});
    EXPECT_NE(text.find("verdict"), std::string::npos) << text;
    EXPECT_NE(text.find("RX drops/s with rings at 512 of 4096"), std::string::npos) << text;
}

TEST(AuditHealth, OffMeansNoHealthAndNoReads) {
    HealthBackend be;
    be.nics.push_back(fixture_port());
    AuditRequest req;
    req.health = false;
    auto r = run_audit(be, empty_store(), FactsBook::builtin(), req);
    ASSERT_TRUE(r);
    EXPECT_EQ(be.reader.reads, 0);
    EXPECT_FALSE(r->health);
    const Json j = report::audit_json(*r);
    EXPECT_TRUE(j.at("interfaces").at(0).at("health").is_null());
    EXPECT_TRUE(j.at("health").is_null());
}

TEST(AuditHealth, TheJsonCarriesPcieIrqsAndUnknownReasons) {
    Fixture fx;
    InterfaceHealthReport ih;
    ih.data = fx.read.interfaces[0];
    auto a = analyze_health(fx.port, ih.data, fx.read.system, {});
    ih.limits = a.limits;
    std::string out;
    JsonWriter w(out);
    report::write_interface_health(w, ih);
    const Json j = Json::parse(out);
    EXPECT_EQ(j.at("pcie").at("current_speed"), 2.5);
    EXPECT_EQ(j.at("pcie").at("current_width"), 4);
    EXPECT_EQ(j.at("pcie").at("max_speed"), 5.0);
    EXPECT_EQ(j.at("pcie").at("max_width"), 8);
    EXPECT_EQ(j.at("pcie").at("gbps"), 8.0);
    EXPECT_EQ(j.at("irqs").at(0).at("irq"), 60);
    EXPECT_EQ(j.at("irqs").at(0).at("queue"), 0);
    EXPECT_EQ(j.at("irqs").at(0).at("affinity"), "0");
    EXPECT_EQ(j.at("irqs").at(0).at("effective_affinity"), "0");
    EXPECT_EQ(j.at("irqs").at(0).at("node"), 0);
    EXPECT_TRUE(j.at("counters").at("driver").is_null());
    EXPECT_TRUE(j.at("unknown").contains("counters.driver"));
    EXPECT_EQ(j.at("cpus").at("governor").at("powersave"), "4-7");
    EXPECT_EQ(j.at("limits").at(0).at("key"), "health.pcie");
    Json iface = Json::object();
    iface["health"] = j;
    EXPECT_NE(report::verdict_text(iface).find("PCIe x4 at 2.5 GT/s caps this port"),
              std::string::npos);
}

// The report README.md shows: the fixture machine read by the real reader,
// with driver counters that grow during a 10 s sample, and a .link file.
class FixtureReader : public HealthReader {
  public:
    SystemHealthReader real{fixture_options()};
    HealthRead read(std::span<const NicState* const> nics, const HealthQuery& q) override {
        HealthRead r = real.read(nics, q);
        r.interfaces[0].driver_stats = counters(3000).driver_stats;
        r.interfaces[0].link_stats = counters(3000).link_stats;
        const auto file = "/etc/systemd/network/10-p4p1.link";
        auto c = sysinfo::parse_link_file(slurp(kData / "link" / "10-p4p1.link"), file);
        r.interfaces[0].foreign.insert(r.interfaces[0].foreign.begin(), *c);
        return r;
    }
    CounterSnapshot read_counters(std::span<const NicState* const>) override { return {}; }
};

class FixtureBackend : public test::FakeBackend {
  public:
    FixtureReader reader;
    HealthReader* health() override { return &reader; }
};

TEST(AuditHealth, TheReadmeReport) {
    FixtureBackend be;
    be.nics.push_back(fixture_port());
    Profile p;
    p.name = "x520-throughput";
    p.settings[key_index(Key::RingsRx)] = Target{4096, false, {}};
    AuditReport r;
    InterfaceAudit a;
    a.state = be.nics[0];
    a.profile = ProfileChoice{std::make_shared<const Profile>(p), "named with --profile"};
    r.interfaces.push_back(a);
    AuditRequest req;
    add_health(be, FactsBook::builtin(), req, r);
    ASSERT_TRUE(r.interfaces[0].health);
    const std::string text = report::audit_text(report::audit_json(r), {});
    if (std::getenv("NICTUNE_PRINT_SAMPLE")) std::cout << text;
    EXPECT_NE(text.find("verdict    PCIe x4 at 2.5 GT/s caps this port at about 4.0 Gbit/s; "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("FAIL health.pcie"), std::string::npos) << text;
    EXPECT_NE(text.find("WARN health.foreign.rings.rx: systemd.link "
                        "/etc/systemd/network/10-p4p1.link:8 sets RxBufferSize = 512"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("WARN health.irqs.one_cpu"), std::string::npos) << text;
    EXPECT_NE(text.find("WARN health.rx_drops: 3,000 packets dropped for lack of RX buffers since "
                        "the driver loaded"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("rx_missed_errors 3,000 (rtnetlink)"), std::string::npos) << text;
    EXPECT_NE(text.find("  pcie       0000:03:00.0 x4 at 2.5 GT/s (max x8 at 5 GT/s), 8 Gbit/s, "
                        "shared by 2 ports"),
              std::string::npos)
        << text;
}

}  // namespace
}  // namespace nictune
