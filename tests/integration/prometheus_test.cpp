// nictune's metrics read by the real node_exporter: nictuned writes
// nictune.prom into a textfile directory the test made; Debian's
// prometheus-node-exporter (unpacked by tests/operators/fetch-node-exporter,
// never installed) runs by PID inside the test's network namespace on
// 127.0.0.1 with only the textfile collector, and the test scrapes it there.
// node_exporter drops a whole file it cannot parse and says so in
// node_textfile_scrape_error, so that must be 0 and every metric must come
// out with its labels, also for an interface name that is not UTF-8.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "support/dbus.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr int kPort = 9100;  // the namespace is the test's own: every port is free

struct Sample {
    std::string name;
    std::map<std::string, std::string> labels;
    std::string value;
};

// The samples of an exposition (comments skipped, label values unescaped).
std::vector<Sample> parse_exposition(const std::string& text) {
    std::vector<Sample> out;
    std::size_t p = 0;
    while (p < text.size()) {
        auto nl = text.find('\n', p);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(p, nl - p);
        p = nl + 1;
        if (line.empty() || line[0] == '#') continue;
        Sample s;
        std::size_t i = 0;
        while (i < line.size() && line[i] != '{' && line[i] != ' ')
            s.name += line[i++];
        if (i < line.size() && line[i] == '{') {
            ++i;
            while (i < line.size() && line[i] != '}') {
                std::string k;
                while (i < line.size() && line[i] != '=')
                    k += line[i++];
                i += 2;  // ="
                std::string v;
                while (i < line.size() && line[i] != '"') {
                    if (line[i] == '\\' && i + 1 < line.size()) {
                        ++i;
                        v += line[i] == 'n' ? '\n' : line[i];
                    } else {
                        v += line[i];
                    }
                    ++i;
                }
                ++i;  // "
                if (i < line.size() && line[i] == ',') ++i;
                s.labels[k] = v;
            }
            ++i;  // }
        }
        while (i < line.size() && line[i] == ' ')
            ++i;
        s.value = line.substr(i);
        out.push_back(std::move(s));
    }
    return out;
}

// The value of the sample `name` with exactly these labels, or "".
std::string value_of(const std::vector<Sample>& samples, const std::string& name,
                     const std::map<std::string, std::string>& labels) {
    for (const auto& s : samples)
        if (s.name == name && s.labels == labels) return s.value;
    return "";
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

class PrometheusTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon";
        auto fetched =
            run({std::string(NICTUNE_SOURCE_DIR) + "/tests/operators/fetch-node-exporter",
                 std::string(NICTUNE_BINARY_DIR) + "/test-cache/node-exporter"},
                300000);
        if (fetched.status == 77) GTEST_SKIP() << fetched.err;
        ASSERT_EQ(fetched.status, 0) << fetched.err;
        exporter_bin_ = fetched.out.substr(0, fetched.out.find('\n'));

        // pm0: bound, applied, then changed by someone else (drift). pm1:
        // bound to a profile the plan refuses. The third name holds a quote
        // and a byte that is not UTF-8 (its text form is pmx"\xff): bound
        // too, so it reaches nictuned's journal, D-Bus signals and metrics.
        weird_ = std::string("pmx\"\xff", 5);
        ASSERT_EQ(ns_->exec("ip link add name pm0 type veth peer name pp0 && "
                            "ip link add name pm1 type veth peer name pp1")
                      .status,
                  0);
        ASSERT_EQ(ns_->exec_argv({"ip", "link", "add", "name", weird_, "type", "veth", "peer",
                                  "name", "pp2"})
                      .status,
                  0);
        char tmpl[] = "/tmp/nictune-prometheus-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        chmod(tmpl, 0755);
        for (const char* d : {"profiles", "textfile"}) {
            fs::create_directories(dir_ / d);
            chmod((dir_ / d).c_str(), 0755);
        }
        write("profiles/jumbo.toml", "[link]\nmtu = 9014\n");
        write("profiles/queues.toml", "[channels]\nrx = 4096\n");
        write("nictune.toml",
              "[[bind]]\nprofile = \"jumbo\"\ninterface = \"pm0\"\n\n"
              "[[bind]]\nprofile = \"queues\"\ninterface = \"pm1\"\n\n"
              "[[bind]]\nprofile = \"jumbo\"\ninterface = 'pmx\"\\xff'\n");
        std::string why;
        bus_ = PrivateBus::start(NICTUNE_TEST_BUS_CONF, &why);
        ASSERT_TRUE(bus_) << why;
        started_ = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
        Child::Options o;
        o.stderr_log = dir_ / "nictuned.log";
        daemon_ =
            Child::start({"ip", "netns", "exec", ns_->name(), NICTUNED_PATH, "--bus-address",
                          bus_->address(), "--config", (dir_ / "nictune.toml").string(),
                          "--profiles-dir", (dir_ / "profiles").string(), "--state-dir",
                          (dir_ / "state").string(), "--metrics-dir", (dir_ / "textfile").string()},
                         o, &why);
        ASSERT_TRUE(daemon_) << why;
    }
    void TearDown() override {
        exporter_.reset();
        daemon_.reset();
        bus_.reset();
        if (!dir_.empty()) fs::remove_all(dir_);
    }
    void write(const std::string& rel, const std::string& text) {
        std::ofstream(dir_ / rel) << text;
        chmod((dir_ / rel).c_str(), 0644);
    }
    std::string log() { return read_file(dir_ / "nictuned.log"); }
    fs::path prom() { return dir_ / "textfile" / "nictune.prom"; }

    // Waits until nictune.prom has `name{labels} value`.
    bool file_has(const std::string& name, const std::map<std::string, std::string>& labels,
                  const std::string& value) {
        const auto end = std::chrono::steady_clock::now() + 15s;
        while (std::chrono::steady_clock::now() < end) {
            if (value_of(parse_exposition(read_file(prom())), name, labels) == value) return true;
            std::this_thread::sleep_for(100ms);
        }
        return false;
    }

    bool start_exporter() {
        Child::Options o;
        o.stderr_log = dir_ / "node-exporter.log";
        std::string why;
        exporter_ = Child::start({"ip", "netns", "exec", ns_->name(), exporter_bin_,
                                  "--web.listen-address=127.0.0.1:" + std::to_string(kPort),
                                  "--collector.disable-defaults", "--collector.textfile",
                                  "--collector.textfile.directory=" + (dir_ / "textfile").string()},
                                 o, &why);
        if (!exporter_) {
            ADD_FAILURE() << why;
            return false;
        }
        for (int i = 0; i < 100; ++i) {
            if (!scrape().empty()) return true;
            std::this_thread::sleep_for(100ms);
        }
        ADD_FAILURE() << "node_exporter does not answer: " << read_file(dir_ / "node-exporter.log");
        return false;
    }

    // GET /metrics from inside the namespace (the socket is made there).
    std::string scrape() {
        std::string body;
        ns_->run_inside([&] {
            const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd < 0) return;
            timeval tv{5, 0};
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            sockaddr_in sa{};
            sa.sin_family = AF_INET;
            sa.sin_port = htons(kPort);
            sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
                close(fd);
                return;
            }
            const std::string req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
            if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
                close(fd);
                return;
            }
            std::string resp;
            char buf[65536];
            for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
                resp.append(buf, static_cast<std::size_t>(n));
            close(fd);
            auto at = resp.find("\r\n\r\n");
            if (resp.starts_with("HTTP/1.") && resp.find(" 200 ") < 16 && at != std::string::npos)
                body = resp.substr(at + 4);
        });
        return body;
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
    fs::path dir_;
    std::string weird_;
    std::string exporter_bin_;
    int64_t started_ = 0;
    std::unique_ptr<PrivateBus> bus_;
    std::unique_ptr<Child> daemon_;
    std::unique_ptr<Child> exporter_;
};

TEST_F(PrometheusTest, NodeExporterServesNictunedsMetrics) {
    ASSERT_TRUE(
        file_has("nictune_last_apply_success", {{"interface", "pm0"}, {"profile", "jumbo"}}, "1"))
        << read_file(prom()) << log();
    // Someone else changes pm0's MTU: drift (pm0 is not enforced), and the
    // audit against the bound profile finds it.
    ASSERT_EQ(ns_->exec("ip link set pm0 mtu 1500").status, 0);
    ASSERT_TRUE(file_has("nictune_setting_drifted",
                         {{"interface", "pm0"}, {"profile", "jumbo"}, {"setting", "link.mtu"}},
                         "1"))
        << read_file(prom()) << log();

    // The file is complete and alone: written to a temporary name, renamed.
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir_ / "textfile"))
        files.push_back(e.path().filename().string());
    EXPECT_EQ(files, std::vector<std::string>{"nictune.prom"});
    struct stat st {};
    ASSERT_EQ(stat(prom().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644U) << "node_exporter reads it as another user";

    ASSERT_TRUE(start_exporter());
    const auto s = parse_exposition(scrape());
    EXPECT_EQ(value_of(s, "node_textfile_scrape_error", {}), "0")
        << read_file(dir_ / "node-exporter.log") << read_file(prom());
    EXPECT_EQ(value_of(s, "nictune_build_info", {{"version", NICTUNE_VERSION}}), "1");
    EXPECT_EQ(value_of(s, "nictune_config_loaded", {}), "1");
    EXPECT_EQ(value_of(s, "nictune_bound_profile_info",
                       {{"interface", "pm0"}, {"profile", "jumbo"}, {"enforce", "false"}}),
              "1");
    EXPECT_EQ(value_of(s, "nictune_bound_profile_info",
                       {{"interface", "pm1"}, {"profile", "queues"}, {"enforce", "false"}}),
              "1");
    EXPECT_EQ(value_of(s, "nictune_last_apply_result",
                       {{"interface", "pm0"}, {"profile", "jumbo"}, {"result", "applied"}}),
              "1");
    EXPECT_EQ(value_of(s, "nictune_last_apply_result",
                       {{"interface", "pm1"}, {"profile", "queues"}, {"result", "refused"}}),
              "1");
    EXPECT_EQ(
        value_of(s, "nictune_last_apply_success", {{"interface", "pm1"}, {"profile", "queues"}}),
        "0");
    const std::string at = value_of(s, "nictune_last_apply_timestamp_seconds",
                                    {{"interface", "pm0"}, {"profile", "jumbo"}});
    ASSERT_FALSE(at.empty()) << read_file(prom());
    const double when = std::stod(at);
    EXPECT_GE(when, static_cast<double>(started_));
    EXPECT_LE(when, static_cast<double>(started_ + 120));
    EXPECT_EQ(value_of(s, "nictune_setting_drifted",
                       {{"interface", "pm0"}, {"profile", "jumbo"}, {"setting", "link.mtu"}}),
              "1");
    EXPECT_EQ(
        value_of(s, "nictune_enforcement_suspended", {{"interface", "pm0"}, {"profile", "jumbo"}}),
        "0");
    // Findings by severity, from the audit against the bound profile.
    EXPECT_EQ(
        value_of(s, "nictune_audit_profile_info", {{"interface", "pm0"}, {"profile", "jumbo"}}),
        "1");
    EXPECT_EQ(value_of(s, "nictune_audit_setting_findings",
                       {{"interface", "pm0"}, {"setting", "link.mtu"}, {"severity", "warn"}}),
              "1")
        << read_file(prom());
    EXPECT_EQ(value_of(s, "nictune_audit_findings", {{"interface", "pm0"}, {"severity", "warn"}}),
              "1");
    EXPECT_EQ(value_of(s, "nictune_audit_findings", {{"interface", "pm0"}, {"severity", "fail"}}),
              "0");
    // Unbound software links are neither audited nor listed.
    EXPECT_EQ(read_file(prom()).find("interface=\"pp0\""), std::string::npos) << read_file(prom());

    // The bound name that is not UTF-8, in its text form, applied.
    const std::string text_form = "pmx\"\\xff";
    EXPECT_EQ(value_of(s, "nictune_bound_profile_info",
                       {{"interface", text_form}, {"profile", "jumbo"}, {"enforce", "false"}}),
              "1")
        << read_file(prom());
    EXPECT_EQ(value_of(s, "nictune_last_apply_result",
                       {{"interface", text_form}, {"profile", "jumbo"}, {"result", "applied"}}),
              "1")
        << log();
    EXPECT_EQ(value_of(s, "nictune_setting_drifted",
                       {{"interface", text_form}, {"profile", "jumbo"}, {"setting", "link.mtu"}}),
              "0");
    auto mtu = ns_->exec_argv({"cat", "/sys/class/net/" + weird_ + "/mtu"});
    EXPECT_EQ(mtu.out, "9014\n");

    // The health figures, as node_exporter serves them (it writes its own
    // number format: 1.25e+09). veth links at 10000 Mb/s full duplex, and
    // its kernel counters name their causes.
    const auto number = [&](const std::string& name,
                            const std::map<std::string, std::string>& labels) {
        const std::string v = value_of(s, name, labels);
        return v.empty() ? -1.0 : std::stod(v);
    };
    EXPECT_EQ(number("nictune_health_link_speed_bytes_per_second", {{"interface", "pm0"}}), 1.25e9)
        << read_file(prom());
    EXPECT_EQ(number("nictune_health_link_full_duplex", {{"interface", "pm0"}}), 1);
    const auto stats = [&](const std::string& field) {
        auto r = ns_->exec_argv({"cat", "/sys/class/net/pm0/statistics/" + field});
        return r.status == 0 ? std::stod(r.out) : -2.0;
    };
    EXPECT_EQ(number("nictune_health_counter_total", {{"interface", "pm0"},
                                                      {"cause", "rx_no_buffer"},
                                                      {"source", "kernel"},
                                                      {"counter", "rx_missed_errors"}}),
              stats("rx_missed_errors"));
    EXPECT_EQ(number("nictune_health_counter_total", {{"interface", "pm0"},
                                                      {"cause", "crc"},
                                                      {"source", "kernel"},
                                                      {"counter", "rx_crc_errors"}}),
              stats("rx_crc_errors"));
    EXPECT_EQ(number("nictune_health_limits", {{"interface", "pm0"}}), 0);
    EXPECT_GE(number("nictune_health_softnet_dropped_total", {}), 0) << read_file(prom());
    EXPECT_GE(number("nictune_health_softnet_times_squeezed_total", {}), 0);
    // Nothing that could not be read: a veth has no PCIe link.
    EXPECT_EQ(value_of(s, "nictune_health_pcie_link_width_lanes", {{"interface", "pm0"}}), "");
}

// The cron path: `nictunectl audit --prometheus` into the textfile
// directory (no nictuned), read by node_exporter.
TEST_F(PrometheusTest, NodeExporterReadsTheAuditOfNictunectl) {
    daemon_.reset();
    fs::remove(prom());
    ASSERT_EQ(ns_->exec("ip link set pm0 mtu 1500").status, 0);
    auto r =
        ns_->exec_argv({NICTUNECTL_PATH, "--direct", "--profiles-dir", (dir_ / "profiles").string(),
                        "audit", "--prometheus", "--profile", "jumbo", "pm0", weird_});
    ASSERT_EQ(r.status, 0) << r.err;
    write("textfile/nictune-audit.prom", r.out);
    ASSERT_TRUE(start_exporter());
    const auto s = parse_exposition(scrape());
    EXPECT_EQ(value_of(s, "node_textfile_scrape_error", {}), "0")
        << read_file(dir_ / "node-exporter.log") << r.out;
    EXPECT_EQ(value_of(s, "nictune_audit_interfaces", {}), "2");
    EXPECT_EQ(value_of(s, "nictune_audit_setting_findings",
                       {{"interface", "pm0"}, {"setting", "link.mtu"}, {"severity", "warn"}}),
              "1")
        << r.out;
    // The name that is not UTF-8: \xff as text, the quote kept.
    EXPECT_EQ(value_of(s, "nictune_audit_profile_info",
                       {{"interface", "pmx\"\\xff"}, {"profile", "jumbo"}}),
              "1")
        << r.out;
    // No daemon, no daemon metrics.
    EXPECT_EQ(value_of(s, "nictune_config_loaded", {}), "");
}

}  // namespace
}  // namespace nictune::test
