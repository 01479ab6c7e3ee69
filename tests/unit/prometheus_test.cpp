// The Prometheus exposition nictune writes (report/prometheus.hpp), the
// metrics file (service/metrics.hpp) and its [daemon] setting. That
// node_exporter reads it is tests/integration/prometheus_test.cpp.
#include "report/prometheus.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "fakes/fake_backend.hpp"
#include "fakes/states.hpp"
#include "profile/loader.hpp"
#include "report/json_report.hpp"
#include "service/metrics.hpp"
#include "watch/config.hpp"

namespace nictune {
namespace {
namespace fs = std::filesystem;

int count_of(const std::string& hay, const std::string& needle) {
    int n = 0;
    for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1))
        ++n;
    return n;
}

TEST(PrometheusLabels, EscapeWhatTheFormatRequires) {
    EXPECT_EQ(report::label_value("p4p1"), "p4p1");
    EXPECT_EQ(report::label_value("a\"b"), "a\\\"b");
    EXPECT_EQ(report::label_value("a\nb"), "a\\nb");
    EXPECT_EQ(report::label_value("a\\b"), "a\\\\b");
    // Valid UTF-8 stays as it is.
    EXPECT_EQ(report::label_value("n\xc3\xa4me"), "n\xc3\xa4me");
}

TEST(PrometheusLabels, WriteBytesThatAreNotUtf8AsText) {
    // As nictune's name escaping writes them: \xff (its '\' escaped for the
    // format), so the file stays valid UTF-8.
    EXPECT_EQ(report::label_value(std::string("a\xff", 2)), "a\\\\xff");
    // A name already in text form comes out the same.
    EXPECT_EQ(report::label_value("a\\xff"), report::label_value(std::string("a\xff", 2)));
    // Truncated and overlong sequences, surrogates.
    EXPECT_EQ(report::label_value(std::string("\xc3", 1)), "\\\\xc3");
    EXPECT_EQ(report::label_value(std::string("\xc0\xaf", 2)), "\\\\xc0\\\\xaf");
    EXPECT_EQ(report::label_value(std::string("\xed\xa0\x80", 3)), "\\\\xed\\\\xa0\\\\x80");
}

report::AuditMetrics two_interfaces() {
    report::AuditMetrics a;
    a.time = 1700000000;
    report::AuditMetrics::Interface p;
    p.name = "p4p1";
    p.profile = "x520-throughput";
    p.by_severity = {1, 2, 0};
    p.by_setting[{"coalesce.rx_usecs", Severity::Warn}] = 1;
    p.by_setting[{"rings.rx", Severity::Warn}] = 1;
    p.by_setting[{"driver.version", Severity::Info}] = 1;
    a.interfaces.push_back(p);
    report::AuditMetrics::Interface q;
    q.name = "p4p2";
    a.interfaces.push_back(q);
    return a;
}

TEST(PrometheusText, GroupsEachFamilyUnderOneHelpAndType) {
    const auto a = two_interfaces();
    report::DaemonMetrics d;
    report::DaemonMetrics::Interface i;
    i.name = "p4p1";
    i.profile = "x520-throughput";
    i.bound = true;
    i.last_result = "applied";
    i.last_apply = 1700000001;
    i.settings = {{"rings.rx", false}, {"link.mtu", true}};
    d.interfaces.push_back(i);
    const std::string text = report::prometheus_text(&a, &d);
    EXPECT_EQ(count_of(text, "# TYPE nictune_audit_findings gauge\n"), 1);
    EXPECT_EQ(count_of(text, "# HELP nictune_audit_findings "), 1);
    // All samples of a family follow its TYPE line, before the next family.
    const auto type = text.find("# TYPE nictune_audit_findings gauge\n");
    const auto next = text.find("# HELP", type);
    EXPECT_EQ(count_of(text.substr(type, next - type), "nictune_audit_findings{"), 6);
    EXPECT_EQ(count_of(text, "nictune_audit_findings{"), 6);
    EXPECT_NE(text.find("nictune_audit_findings{interface=\"p4p1\",severity=\"warn\"} 2\n"),
              std::string::npos);
    EXPECT_NE(text.find("nictune_audit_findings{interface=\"p4p2\",severity=\"fail\"} 0\n"),
              std::string::npos);
    EXPECT_NE(text.find("nictune_audit_setting_findings{interface=\"p4p1\",setting=\"rings.rx\","
                        "severity=\"warn\"} 1\n"),
              std::string::npos);
    EXPECT_NE(
        text.find("nictune_audit_profile_info{interface=\"p4p1\",profile=\"x520-throughput\"} 1"),
        std::string::npos);
    EXPECT_EQ(text.find("nictune_audit_profile_info{interface=\"p4p2\""), std::string::npos)
        << "no profile, no sample";
    EXPECT_NE(text.find("nictune_audit_timestamp_seconds 1700000000\n"), std::string::npos);
    EXPECT_NE(text.find("nictune_setting_drifted{interface=\"p4p1\",profile=\"x520-throughput\","
                        "setting=\"link.mtu\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("nictune_setting_drifted{interface=\"p4p1\",profile=\"x520-throughput\","
                        "setting=\"rings.rx\"} 0\n"),
              std::string::npos);
    EXPECT_NE(text.find("nictune_last_apply_timestamp_seconds{interface=\"p4p1\",profile=\"x520-"
                        "throughput\"} 1700000001\n"),
              std::string::npos);
    EXPECT_NE(text.find("nictune_bound_profile_info{interface=\"p4p1\",profile=\"x520-throughput\","
                        "enforce=\"false\"} 1\n"),
              std::string::npos);
    // Every line is a comment or a sample; the text ends with a newline.
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
}

TEST(PrometheusText, NeverRepeatsALabelSet) {
    // Two names the JSON path made equal (U+FFFD for different bytes).
    report::AuditMetrics a;
    report::AuditMetrics::Interface i;
    i.name = "x\xef\xbf\xbd";
    a.interfaces = {i, i};
    const std::string text = report::prometheus_text(&a, nullptr);
    EXPECT_EQ(
        count_of(text, "nictune_audit_findings{interface=\"x\xef\xbf\xbd\",severity=\"info\"}"), 1);
    EXPECT_NE(text.find("nictune_audit_interfaces 2\n"), std::string::npos);
}

TEST(PrometheusText, LeavesOutTheDaemonPartWithoutADaemon) {
    const auto a = two_interfaces();
    const std::string text = report::prometheus_text(&a, nullptr);
    EXPECT_EQ(text.find("nictune_config_loaded"), std::string::npos);
    EXPECT_EQ(text.find("nictune_last_apply"), std::string::npos);
    EXPECT_NE(text.find("nictune_build_info{version=\"" NICTUNE_VERSION "\"} 1\n"),
              std::string::npos);
}

// The audit JSON (a reply from nictuned) gives the same metrics as the report.
TEST(PrometheusText, SameFromTheAuditJsonAsFromTheReport) {
    AuditReport r;
    InterfaceAudit ia;
    ia.state.id.name = "p4p1";
    ia.findings.push_back(Finding{Severity::Warn, "rings.rx", Scalar{}, Scalar{}, "small", ""});
    ia.findings.push_back(Finding{Severity::Fail, "driver.version", Scalar{}, Scalar{}, "bad", ""});
    ia.findings.push_back(Finding{Severity::Warn, "rings.rx", Scalar{}, Scalar{}, "again", ""});
    r.interfaces.push_back(std::move(ia));
    const auto from_report = report::audit_metrics(r, 5);
    const auto from_json = report::audit_metrics(report::audit_json(r), 5);
    EXPECT_EQ(report::prometheus_text(&from_report, nullptr),
              report::prometheus_text(&from_json, nullptr));
    EXPECT_NE(report::prometheus_text(&from_json, nullptr)
                  .find("nictune_audit_setting_findings{interface=\"p4p1\",setting=\"rings.rx\","
                        "severity=\"warn\"} 2\n"),
              std::string::npos);
    // A document that is not an audit gives no interfaces, no exception.
    EXPECT_TRUE(report::audit_metrics(nlohmann::json::parse("[1,2]"), 5).interfaces.empty());
    EXPECT_TRUE(report::audit_metrics(nlohmann::json::parse(R"({"interfaces":[{"name":3}]})"), 5)
                    .interfaces.empty());
}

// An interface the health checks looked at: an X520 port in an x4 slot at
// 2.5 GT/s (card: x8, 5 GT/s), linked at 1000 Mb/s full duplex, its three
// queue IRQs on CPU 0 of node 0 while the card is on node 1.
AuditReport health_report() {
    AuditReport r;
    InterfaceAudit ia;
    ia.state = test::ixgbe_port("p4p1");
    ia.state.values.set(Key::LinkSpeed, 1000);
    ia.state.values.set(Key::LinkDuplex, 1);
    ia.findings.push_back(Finding{Severity::Warn, "health.pcie", Scalar{}, Scalar{}, "x4", ""});
    auto h = std::make_shared<InterfaceHealthReport>();
    PcieLink p;
    p.function = "0000:03:00.0";
    p.link.current_gts = 2.5;
    p.link.current_width = 4;
    p.link.max_gts = 5.0;
    p.link.max_width = 8;
    p.port_functions = {"0000:03:00.0", "0000:03:00.1"};
    h->data.pcie = Known<PcieLink>::of(p);
    h->data.modes = Known<LinkModes>::of(
        LinkModes{{"1000baseT/Full", "10000baseT/Full"}, {"10000baseT/Full"}, {"1000baseT/Full"}});
    std::vector<IrqInfo> irqs;
    for (unsigned q = 0; q < 3; ++q)
        irqs.push_back(IrqInfo{
            40 + q, "p4p1-TxRx-" + std::to_string(q), static_cast<int>(q), "0", "0", 0, 10, {}});
    irqs.push_back(IrqInfo{43, "p4p1", std::nullopt, "0-7", "3", 0, 1, {}});
    h->data.irqs = Known<std::vector<IrqInfo>>::of(irqs);
    NumaInfo n;
    n.node = 1;
    n.local_cpulist = "4-7";
    n.local_cpus = 4;
    h->data.numa = Known<NumaInfo>::of(n);
    h->limits.push_back(Limit{"health.pcie", "PCIe x4 at 2.5 GT/s", 0.2, 8.0});
    h->limits.push_back(Limit{"health.irqs.one_cpu", "all 3 queue IRQs on CPU 0", 0.3, {}});
    h->causes.push_back(CauseCounter{"rx_missed_errors", "rx_no_buffer", true, 12});
    h->causes.push_back(CauseCounter{"rx_crc_errors", "crc", false, 0});
    ia.health = h;
    r.interfaces.push_back(std::move(ia));
    // A software link: no PCIe, no modes, no IRQs (each unknown, with why).
    InterfaceAudit v;
    v.state = test::veth("v0");
    auto vh = std::make_shared<InterfaceHealthReport>();
    vh->data.pcie = Known<PcieLink>::none("not a PCI device");
    vh->data.modes = Known<LinkModes>::none("no link modes");
    vh->data.irqs = Known<std::vector<IrqInfo>>::none("no IRQs");
    vh->data.numa = Known<NumaInfo>::none("no device");
    v.health = vh;
    r.interfaces.push_back(std::move(v));
    auto sys = std::make_shared<SystemHealthReport>();
    sys->data.softnet = Known<std::vector<SoftnetCpu>>::of(
        {SoftnetCpu{0, 100, 3, 5, 0, 0}, SoftnetCpu{1, 100, 4, 6, 0, 0}});
    sys->data.irqbalance_active = Known<bool>::of(true);
    r.health = sys;
    return r;
}

TEST(PrometheusText, HealthFiguresInBaseUnits) {
    const auto m = report::audit_metrics(health_report(), 5);
    const std::string text = report::prometheus_text(&m, nullptr);
    const auto has = [&](const std::string& line) {
        return text.find(line + "\n") != std::string::npos;
    };
    const std::string p = "{interface=\"p4p1\"} ";
    EXPECT_TRUE(has("nictune_health_pcie_link_speed_transfers_per_second" + p + "2500000000"))
        << text;
    EXPECT_TRUE(has("nictune_health_pcie_link_max_speed_transfers_per_second" + p + "5000000000"));
    EXPECT_TRUE(has("nictune_health_pcie_link_width_lanes" + p + "4"));
    EXPECT_TRUE(has("nictune_health_pcie_link_max_width_lanes" + p + "8"));
    // 2.5 GT/s x 4 lanes with 8b/10b: 8 Gbit/s, 1e9 bytes per second.
    EXPECT_TRUE(has("nictune_health_pcie_bandwidth_bytes_per_second" + p + "1000000000"));
    EXPECT_TRUE(has("nictune_health_pcie_max_bandwidth_bytes_per_second" + p + "4000000000"));
    EXPECT_TRUE(has("nictune_health_pcie_link_ports" + p + "2"));
    EXPECT_TRUE(has("nictune_health_link_speed_bytes_per_second" + p + "125000000"));
    EXPECT_TRUE(has("nictune_health_link_max_speed_bytes_per_second" + p + "1250000000"));
    EXPECT_TRUE(has("nictune_health_link_partner_max_speed_bytes_per_second" + p + "125000000"));
    EXPECT_TRUE(has("nictune_health_link_full_duplex" + p + "1"));
    EXPECT_TRUE(has("# TYPE nictune_health_counter_total counter"));
    EXPECT_TRUE(
        has("nictune_health_counter_total{interface=\"p4p1\",cause=\"rx_no_buffer\","
            "source=\"driver\",counter=\"rx_missed_errors\"} 12"));
    EXPECT_TRUE(
        has("nictune_health_counter_total{interface=\"p4p1\",cause=\"crc\","
            "source=\"kernel\",counter=\"rx_crc_errors\"} 0"))
        << "a counter at 0 is a sample, so that rate() works from the start";
    // Three queue IRQs (the fourth has no queue), all on CPU 0, off node 1.
    EXPECT_TRUE(has("nictune_health_queue_irqs" + p + "3"));
    EXPECT_TRUE(has("nictune_health_queue_irq_cpus" + p + "1"));
    EXPECT_TRUE(has("nictune_health_queue_irqs_remote_node" + p + "3"));
    EXPECT_TRUE(has("nictune_health_limits" + p + "2"));
    EXPECT_TRUE(
        has("nictune_health_limit_impact_ratio{interface=\"p4p1\",limit=\"health.pcie\"} 0.2"));
    EXPECT_TRUE(
        has("nictune_health_limit_cap_bytes_per_second{interface=\"p4p1\",limit="
            "\"health.pcie\"} 1000000000"));
    EXPECT_EQ(text.find("nictune_health_limit_cap_bytes_per_second{interface=\"p4p1\",limit="
                        "\"health.irqs.one_cpu\"}"),
              std::string::npos)
        << "no cap known, no sample";
    EXPECT_TRUE(has("# TYPE nictune_health_softnet_dropped_total counter"));
    EXPECT_TRUE(has("nictune_health_softnet_dropped_total 7"));
    EXPECT_TRUE(has("nictune_health_softnet_times_squeezed_total 11"));
    EXPECT_TRUE(has("nictune_health_irqbalance_active 1"));
    // What could not be read has no sample: never a 0 for "unknown".
    const std::string v = "{interface=\"v0\"}";
    EXPECT_EQ(text.find("nictune_health_pcie_link_width_lanes" + v), std::string::npos);
    EXPECT_EQ(text.find("nictune_health_queue_irqs" + v), std::string::npos);
    EXPECT_EQ(text.find("nictune_health_link_max_speed_bytes_per_second" + v), std::string::npos);
    EXPECT_TRUE(has("nictune_health_limits" + v + " 0"));
}

TEST(PrometheusText, NoHealthFiguresWithoutTheHealthChecks) {
    AuditReport r = health_report();
    for (auto& i : r.interfaces)
        i.health = nullptr;
    r.health = nullptr;
    const auto m = report::audit_metrics(r, 5);
    const std::string text = report::prometheus_text(&m, nullptr);
    EXPECT_EQ(text.find("nictune_health_"), std::string::npos) << text;
    EXPECT_NE(text.find("nictune_audit_findings{interface=\"p4p1\""), std::string::npos);
}

// nictunectl audit --prometheus through nictuned reads the JSON reply: the
// same text as nictuned's own export from the report.
TEST(PrometheusText, SameHealthFiguresFromTheAuditJson) {
    const AuditReport r = health_report();
    const auto from_report = report::audit_metrics(r, 5);
    const auto from_json = report::audit_metrics(report::audit_json(r), 5);
    EXPECT_EQ(report::prometheus_text(&from_report, nullptr),
              report::prometheus_text(&from_json, nullptr));
    EXPECT_NE(report::prometheus_text(&from_json, nullptr).find("nictune_health_queue_irq_cpus"),
              std::string::npos);
    // Health parts of the wrong type are left out, never an exception.
    auto j = report::audit_json(r);
    j["interfaces"][0]["health"]["pcie"] = "x4";
    j["interfaces"][0]["health"]["irqs"] = {{{"queue", "zero"}, {"affinity", 7}}};
    j["interfaces"][0]["health"]["counters"]["causes"] = {{{"name", "a"}, {"value", -1}}};
    j["health"]["softnet"] = 3;
    const auto odd = report::audit_metrics(j, 5);
    const std::string text = report::prometheus_text(&odd, nullptr);
    EXPECT_EQ(text.find("nictune_health_pcie_link_width_lanes"), std::string::npos);
    EXPECT_NE(text.find("nictune_health_queue_irqs{interface=\"p4p1\"} 0\n"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("nictune_health_counter_total"), std::string::npos);
    EXPECT_EQ(text.find("nictune_health_softnet_dropped_total"), std::string::npos);
}

TEST(MetricsFile, IsReplacedWholeAndWorldReadable) {
    char tmpl[] = "/tmp/nictune-metrics-unit-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    const mode_t old = umask(077);
    ASSERT_TRUE(service::write_textfile(dir, "nictune.prom", "a 1\n"));
    ASSERT_TRUE(service::write_textfile(dir, "nictune.prom", "b 2\n"));
    umask(old);
    std::ifstream in(dir / "nictune.prom");
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "b 2\n");
    struct stat st {};
    ASSERT_EQ(stat((dir / "nictune.prom").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644U);
    int files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
        ++files;
    EXPECT_EQ(files, 1) << "no temporary file left behind";
    auto bad = service::write_textfile(dir / "missing", "nictune.prom", "x\n");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().str().find((dir / "missing").string()), std::string::npos);
    fs::remove_all(dir);
}

TEST(MetricsConfig, MetricsDirIsAnAbsolutePathOrEmpty) {
    auto cfg = parse_config("[daemon]\nmetrics_dir = \"/srv/textfile\"\n", "n.toml");
    ASSERT_TRUE(cfg) << cfg.error().str();
    EXPECT_EQ(cfg->metrics_dir, "/srv/textfile");
    auto off = parse_config("[daemon]\nmetrics_dir = \"\"\n", "n.toml");
    ASSERT_TRUE(off) << off.error().str();
    EXPECT_EQ(off->metrics_dir, "");
    EXPECT_FALSE(parse_config("", "n.toml")->metrics_dir);
    auto rel = parse_config("[daemon]\nmetrics_dir = \"textfile\"\n", "n.toml");
    ASSERT_FALSE(rel);
    EXPECT_EQ(rel.error().str(),
              "n.toml:2:15: daemon.metrics_dir: 'textfile' is not an absolute path");
    auto num = parse_config("[daemon]\nmetrics_dir = 3\n", "n.toml");
    ASSERT_FALSE(num);
    EXPECT_EQ(num.error().str(),
              "n.toml:2:15: daemon.metrics_dir: expected a string, got an integer");
}

// nictuned's export over the fake kernel: written once things are quiet
// (or at most 10 s into a burst), with the watcher's state and the audit.
class MetricsExportTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-metrics-export-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        fs::create_directories(dir_ / "textfile");
        fs::create_directories(dir_ / "profiles");
        std::ofstream(dir_ / "profiles" / "jumbo.toml") << "[link]\nmtu = 9000\n";
        be.nics = {test::ixgbe_port("p4p1")};
        profile::StoreOptions so;
        so.search_path = {dir_ / "profiles"};
        so.require_root_owned = false;
        manager = std::make_unique<Manager>(be, profile::Store(so), StateStore(dir_ / "state"),
                                            FactsBook::builtin());
        watcher = std::make_unique<watch::Watcher>(*manager, watch::WatcherEvents{});
        auto p = profile::parse("[link]\nmtu = 9000\n", "jumbo.toml");
        ASSERT_TRUE(p) << p.error().str();
        p->name = "jumbo";
        DaemonConfig cfg;
        Binding b;
        b.profile = "jumbo";
        b.interface = "p4p*";
        cfg.bindings.push_back(b);
        watcher->set_config(cfg, {{"jumbo", *p}});
        watcher->apply_all("boot");
        metrics = std::make_unique<service::MetricsExport>(
            *manager, *watcher, [&] { return dir_ / "textfile"; }, [] { return true; });
    }
    void TearDown() override { fs::remove_all(dir_); }
    bool written() { return fs::exists(dir_ / "textfile" / "nictune.prom"); }
    std::string text() {
        std::ifstream in(dir_ / "textfile" / "nictune.prom");
        return std::string(std::istreambuf_iterator<char>(in), {});
    }

    fs::path dir_;
    test::FakeBackend be;
    std::unique_ptr<Manager> manager;
    std::unique_ptr<watch::Watcher> watcher;
    std::unique_ptr<service::MetricsExport> metrics;
};

TEST_F(MetricsExportTest, WritesOnceThingsAreQuiet) {
    constexpr uint64_t s = 1000000;
    EXPECT_EQ(metrics->timeout_ms(10 * s, -1), -1) << "nothing changed: no timer";
    metrics->changed(10 * s);
    EXPECT_EQ(metrics->timeout_ms(10 * s, -1), 1000);
    EXPECT_EQ(metrics->timeout_ms(10 * s, 200), 200);
    metrics->write_if_due(10 * s + s / 2);
    EXPECT_FALSE(written());
    metrics->write_if_due(11 * s);
    ASSERT_TRUE(written());
    // Then only the refresh, a minute later.
    EXPECT_EQ(metrics->timeout_ms(11 * s, -1), 60000);
    const std::string t = text();
    EXPECT_NE(t.find("nictune_last_apply_result{interface=\"p4p1\",profile=\"jumbo\",result="
                     "\"applied\"} 1\n"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("nictune_setting_drifted{interface=\"p4p1\",profile=\"jumbo\",setting="
                     "\"link.mtu\"} 0\n"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("nictune_audit_profile_info{interface=\"p4p1\",profile=\"jumbo\"} 1\n"),
              std::string::npos)
        << t;
}

TEST_F(MetricsExportTest, ABurstThatDoesNotStopIsWrittenAfterTenSeconds) {
    constexpr uint64_t s = 1000000;
    for (uint64_t t = 0; t < 9 * s; t += s / 2) {
        metrics->changed(t);
        metrics->write_if_due(t);
    }
    EXPECT_FALSE(written());
    metrics->changed(9 * s + s / 2);
    EXPECT_EQ(metrics->timeout_ms(9 * s + s / 2, -1), 500);
    metrics->write_if_due(10 * s);
    EXPECT_TRUE(written());
}

// The counters and IRQ placement change without events: the file is
// rewritten a minute after the last write, then every minute.
TEST_F(MetricsExportTest, IsRefreshedEveryMinuteWhileNothingHappens) {
    constexpr uint64_t s = 1000000;
    metrics->changed(0);
    metrics->write_if_due(1 * s);
    ASSERT_TRUE(written());
    const std::string first = text();
    be.nics[0].values.set(Key::LinkMtu, 1500);  // no event: the fake sends none
    metrics->write_if_due(60 * s);
    EXPECT_EQ(text(), first) << "not before the minute is up";
    EXPECT_EQ(metrics->timeout_ms(60 * s, -1), 1000);
    metrics->write_if_due(61 * s);
    EXPECT_NE(text(), first) << "refreshed";
    EXPECT_EQ(metrics->timeout_ms(61 * s, -1), 60000);
    // An event in between postpones the refresh to a minute after its write.
    metrics->changed(100 * s);
    metrics->write_if_due(101 * s);
    EXPECT_EQ(metrics->timeout_ms(101 * s, -1), 60000);
}

TEST_F(MetricsExportTest, WritesNothingWithoutTheDirectory) {
    constexpr uint64_t s = 1000000;
    fs::remove_all(dir_ / "textfile");
    metrics->changed(0);
    EXPECT_FALSE(metrics->write());
    EXPECT_FALSE(fs::exists(dir_ / "textfile"));
    // No file, no refresh: the daemon stays without a timer.
    metrics->changed(0);
    metrics->write_if_due(1 * s);
    EXPECT_EQ(metrics->timeout_ms(2 * s, -1), -1);
}

}  // namespace
}  // namespace nictune
