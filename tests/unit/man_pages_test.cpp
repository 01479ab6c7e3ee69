// The hand-written man pages against the tables they describe: the keys of
// nictune.toml(5) against the configuration parser's key tables, the
// metrics of nictuned(8) against what the metrics writer emits.
// (tests/operators/check-man checks the options against --help and the
// rendering; nictune-profile(5) is generated, keys_doc_test.cpp.)
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report/prometheus.hpp"
#include "watch/config.hpp"

namespace nictune {
namespace {

std::string page(const std::string& name) {
    std::ifstream in(std::string(NICTUNE_SOURCE_DIR) + "/docs/man/" + name);
    EXPECT_TRUE(in) << name;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The lines of section `.SH title` (up to the next .SH).
std::vector<std::string> section(const std::string& text, const std::string& title) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line.starts_with(".SH ")) {
            std::string t = line.substr(4);
            if (t.size() >= 2 && t.front() == '"') t = t.substr(1, t.size() - 2);
            inside = t == title;
            continue;
        }
        if (inside) out.push_back(line);
    }
    return out;
}

// The words the ".TP" tags of `lines` set in bold (".B word").
std::set<std::string> tags(const std::vector<std::string>& lines) {
    std::set<std::string> out;
    for (std::size_t i = 0; i + 1 < lines.size(); ++i)
        if (lines[i] == ".TP" && lines[i + 1].starts_with(".B "))
            out.insert(lines[i + 1].substr(3));
    return out;
}

std::set<std::string> keys_of(std::string_view section_name) {
    std::set<std::string> out;
    for (auto k : config_keys(section_name))
        out.emplace(k);
    return out;
}

TEST(ManPages, NictuneTomlDocumentsEveryConfigKey) {
    const std::string man = page("nictune.toml.5");
    EXPECT_EQ(tags(section(man, "THE [daemon] SECTION")), keys_of("daemon"));
    EXPECT_EQ(tags(section(man, "THE [[bind]] TABLES")), keys_of("bind"));
    EXPECT_FALSE(keys_of("bind").empty());
}

// Every family with the names of its labels: "nictune_x{a,b}".
std::set<std::string> families(const std::string& exposition) {
    std::set<std::string> out;
    std::istringstream in(exposition);
    std::string line, current;
    std::set<std::string> seen;
    while (std::getline(in, line)) {
        if (line.starts_with("#")) continue;
        const auto brace = line.find('{');
        const auto space = line.find(' ');
        const std::string name = line.substr(0, std::min(brace, space));
        if (!seen.insert(name).second) continue;
        std::string labels;
        if (brace != std::string::npos && brace < space) {
            const std::string body = line.substr(brace + 1, line.find('}') - brace - 1);
            std::size_t p = 0;
            while (p < body.size()) {
                const auto eq = body.find('=', p);
                labels += (labels.empty() ? "" : ",") + body.substr(p, eq - p);
                const auto close = body.find('"', eq + 2);
                p = close + 2;
            }
            out.insert(name + "{" + labels + "}");
        } else {
            out.insert(name);
        }
    }
    return out;
}

TEST(ManPages, NictunedListsEveryMetric) {
    report::AuditMetrics a;
    report::AuditMetrics::Interface ai;
    ai.name = "p4p1";
    ai.profile = "x520-throughput";
    ai.by_setting[{"rings.rx", Severity::Warn}] = 1;
    // Every health figure: each part of the health report present.
    ai.speed_mbps = 10000;
    ai.full_duplex = true;
    auto h = std::make_shared<InterfaceHealthReport>();
    PcieLink p;
    p.link = PcieEnd{5.0, 5.0, 8, 8, "5.0 GT/s PCIe", "5.0 GT/s PCIe"};
    p.port_functions = {"0000:03:00.0"};
    h->data.pcie = Known<PcieLink>::of(p);
    h->data.modes = Known<LinkModes>::of(LinkModes{{"10000baseT/Full"}, {}, {"10000baseT/Full"}});
    h->data.irqs =
        Known<std::vector<IrqInfo>>::of({IrqInfo{40, "p4p1-TxRx-0", 0, "0", "0", 0, 1, {}}});
    NumaInfo n;
    n.node = 0;
    h->data.numa = Known<NumaInfo>::of(n);
    h->limits = {Limit{"health.pcie", "x", 0.1, 8.0}};
    h->causes = {CauseCounter{"rx_missed_errors", "rx_no_buffer", false, 0}};
    ai.health = h;
    a.interfaces.push_back(ai);
    auto sys = std::make_shared<SystemHealthReport>();
    sys->data.softnet = Known<std::vector<SoftnetCpu>>::of({SoftnetCpu{}});
    sys->data.irqbalance_active = Known<bool>::of(false);
    a.health = sys;
    report::DaemonMetrics d;
    report::DaemonMetrics::Interface di;
    di.name = "p4p1";
    di.profile = "x520-throughput";
    di.bound = true;
    di.last_result = "applied";
    di.last_apply = 1;
    di.settings = {{"rings.rx", false}};
    d.interfaces.push_back(di);
    const auto emitted = families(report::prometheus_text(&a, &d));
    EXPECT_EQ(tags(section(page("nictuned.8"), "METRICS")), emitted);
    EXPECT_GE(emitted.size(), 34U);
}

// The example /etc/nictune/nictune.toml the package ships parses and binds
// nothing (an installed package must not tune anything by itself).
TEST(ShippedFiles, ExampleConfigParsesAndBindsNothing) {
    std::ifstream in(std::string(NICTUNE_SOURCE_DIR) + "/debian/nictune.toml");
    ASSERT_TRUE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    auto cfg = parse_config(ss.str(), "debian/nictune.toml");
    ASSERT_TRUE(cfg) << cfg.error().str();
    EXPECT_TRUE(cfg->bindings.empty());
    // Uncommented, its examples are valid too.
    std::string uncommented;
    std::istringstream lines(ss.str());
    for (std::string line; std::getline(lines, line);)
        uncommented +=
            (line.starts_with("# [") || line.starts_with("# profile") ||
                     line.starts_with("# driver") || line.starts_with("# enforce") ||
                     line.starts_with("# pci") || line.starts_with("# state_dir") ||
                     line.starts_with("# profiles_dirs") || line.starts_with("# metrics_dir")
                 ? line.substr(2)
                 : line) +
            "\n";
    auto all = parse_config(uncommented, "uncommented");
    ASSERT_TRUE(all) << all.error().str() << "\n" << uncommented;
    EXPECT_EQ(all->bindings.size(), 2U);
    EXPECT_EQ(all->metrics_dir, "/var/lib/prometheus/node-exporter");
}

}  // namespace
}  // namespace nictune
