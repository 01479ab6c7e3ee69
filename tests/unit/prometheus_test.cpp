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
        watcher = std::make_unique<service::Watcher>(*manager, service::WatcherEvents{});
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
    std::unique_ptr<service::Watcher> watcher;
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
    EXPECT_EQ(metrics->timeout_ms(11 * s, -1), -1);
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

TEST_F(MetricsExportTest, WritesNothingWithoutTheDirectory) {
    fs::remove_all(dir_ / "textfile");
    metrics->changed(0);
    EXPECT_FALSE(metrics->write());
    EXPECT_FALSE(fs::exists(dir_ / "textfile"));
}

}  // namespace
}  // namespace nictune
