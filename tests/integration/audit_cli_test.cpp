// `nictunectl audit` against the real kernel: veth pairs in a namespace the
// test creates, and a read-only look at the host's eth0. ip and ethtool are
// the oracles: every field both report must agree.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "backend/netlink_backend.hpp"
#include "profile/features.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"
#include "support/paths.hpp"
#include "util/strings.hpp"

namespace nictune::test {
namespace {

CommandResult ctl_in(const TestNetns& ns, std::vector<std::string> args) {
    args.insert(args.begin(), kCtl);
    return ns.exec_argv(args);
}

nlohmann::json iface(const nlohmann::json& report, const std::string& name) {
    for (const auto& i : report.at("interfaces"))
        if (i.at("name") == name) return i;
    ADD_FAILURE() << "no interface " << name << " in the report";
    return nlohmann::json::object();
}

// Checks every [link] field against `ip -j -d link show` and `ethtool DEV`.
void expect_link_matches_ip(const TestNetns& ns, const nlohmann::json& j, const std::string& dev) {
    auto ip = parse_json(ns.exec("ip -j -d link show " + dev).out).at(0);
    const auto& link = j.at("link");
    EXPECT_EQ(link.at("mtu"), ip.at("mtu"));
    EXPECT_EQ(link.at("min_mtu"), ip.at("min_mtu"));
    EXPECT_EQ(link.at("max_mtu"), ip.at("max_mtu"));
    EXPECT_EQ(link.at("txqueuelen"), ip.at("txqlen"));
    EXPECT_EQ(link.at("operstate"), ip.at("operstate"));
    EXPECT_EQ(j.at("mac"), ip.at("address"));
    EXPECT_EQ(j.at("ifindex"), ip.at("ifindex"));
    auto eth = parse_ethtool(ns.exec("ethtool " + dev).out);
    if (auto speed = eth.find("Speed"); speed != eth.end() && speed->second != "Unknown!") {
        EXPECT_EQ(std::to_string(link.at("speed").get<uint64_t>()) + "Mb/s", speed->second);
    }
    if (auto duplex = eth.find("Duplex");
        duplex != eth.end() && duplex->second != "Unknown! (255)") {
        EXPECT_EQ(link.at("duplex").get<std::string>(), to_lower(duplex->second));
    }
    if (auto an = ethtool_bool(eth, "Auto-negotiation")) {
        EXPECT_EQ(link.at("autoneg").get<bool>(), *an);
    }
    if (auto carrier = eth.find("Link detected"); carrier != eth.end()) {
        EXPECT_EQ(link.at("carrier").get<bool>(), carrier->second == "yes");
    }
}

// ethtool -k prints a feature that one legacy flag stands for alone under the
// flag's long name (rx-gro as generic-receive-offload).
std::string ethtool_display_name(const std::string& kernel_name) {
    for (const auto& a : features::aliases())
        if (a.pattern == kernel_name) return std::string(a.long_name);
    return kernel_name;
}

void expect_features_match_ethtool(const TestNetns& ns, const nlohmann::json& j,
                                   const std::string& dev) {
    const auto k = parse_json(ns.exec("ethtool --json -k " + dev).out).at(0);
    const auto& features = j.at("features");
    std::size_t compared = 0;
    for (const auto& [name, v] : features.items()) {
        const std::string shown = ethtool_display_name(name);
        ASSERT_TRUE(k.contains(shown)) << name;
        EXPECT_EQ(v.get<bool>(), k.at(shown).at("active").get<bool>()) << name;
        bool fixed = std::find(j.at("features_fixed").begin(), j.at("features_fixed").end(),
                               name) != j.at("features_fixed").end();
        EXPECT_EQ(fixed, k.at(shown).at("fixed") == true) << name;
        ++compared;
    }
    EXPECT_GT(compared, 40U);
}

void expect_driver_matches_ethtool(const TestNetns& ns, const nlohmann::json& j,
                                   const std::string& dev) {
    auto i = parse_ethtool(ns.exec("ethtool -i " + dev).out);
    EXPECT_EQ(j.at("driver"), i.at("driver"));
    EXPECT_EQ(j.at("driver_version"), i.at("version"));
    if (i.at("firmware-version").empty() || i.at("firmware-version") == "N/A") {
        EXPECT_TRUE(j.at("firmware_version").is_null());
    } else {
        EXPECT_EQ(j.at("firmware_version"), i.at("firmware-version"));
    }
    if (i.at("bus-info").empty() || i.at("bus-info") == "N/A") {
        EXPECT_TRUE(j.at("bus_info").is_null());
    } else {
        EXPECT_EQ(j.at("bus_info"), i.at("bus-info"));
    }
}

class AuditCli : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        auto r = ns_->exec(
            "ip link add name nt0 type veth peer name nt1 && "
            "ip link set nt0 mtu 9014 txqueuelen 5000 && ip link set nt0 up && ip link set nt1 up "
            "&& "
            "ethtool -L nt0 rx 2 tx 1 && ethtool -K nt0 gro on tso off");
        ASSERT_EQ(r.status, 0) << r.err;
    }
    std::string why_;
    std::unique_ptr<TestNetns> ns_;
};

TEST_F(AuditCli, VethValuesEqualWhatIpAndEthtoolReport) {
    auto r = ctl_in(*ns_, {"audit", "nt0", "nt1", "--json"});
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    auto report = parse_json(r.out);
    for (const std::string dev : {"nt0", "nt1"}) {
        SCOPED_TRACE(dev);
        auto j = iface(report, dev);
        expect_link_matches_ip(*ns_, j, dev);
        expect_features_match_ethtool(*ns_, j, dev);
        expect_driver_matches_ethtool(*ns_, j, dev);
        auto l = parse_ethtool(ns_->exec("ethtool -l " + dev).out);
        for (const std::string k : {"rx", "tx", "other", "combined"}) {
            std::string name = k == "rx"      ? "RX"
                               : k == "tx"    ? "TX"
                               : k == "other" ? "Other"
                                              : "Combined";
            auto cur = ethtool_number(l, "cur." + name);
            auto max = ethtool_number(l, "max." + name);
            const auto& ch = j.at("channels");
            if (cur) {
                EXPECT_EQ(ch.at(k).get<uint64_t>(), *cur) << k;
            } else {
                EXPECT_FALSE(ch.contains(k) && ch.at(k).get<uint64_t>() != 0) << k;
            }
            if (max) {
                EXPECT_EQ(ch.at(k + "_max").get<uint64_t>(), *max) << k;
            }
        }
        // veth has no coalescing, rings or pause: absent, never 0.
        EXPECT_NE(ns_->exec("ethtool -c " + dev).status, 0);
        EXPECT_TRUE(j.at("coalesce").is_null());
        EXPECT_TRUE(j.at("rings").is_null());
        EXPECT_TRUE(j.at("pause").is_null());
        EXPECT_EQ(j.at("kind"), "veth");
        EXPECT_EQ(j.at("physical"), false);
    }
    EXPECT_EQ(iface(report, "nt0").at("link").at("mtu"), 9014);
    EXPECT_EQ(iface(report, "nt0").at("channels").at("rx"), 2);
    EXPECT_EQ(iface(report, "nt0").at("features").at("rx-gro"), true);
    EXPECT_EQ(iface(report, "nt0").at("features").at("tx-tcp-segmentation"), false);
}

TEST_F(AuditCli, WithoutNamesAuditsPhysicalNicsOnlyUnlessAll) {
    auto r = ctl_in(*ns_, {"audit", "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(parse_json(r.out).at("interfaces").empty())
        << "a namespace with only veths has no physical NIC";
    auto all = ctl_in(*ns_, {"audit", "--all", "--json"});
    ASSERT_EQ(all.status, 0) << all.err;
    std::vector<std::string> names;
    const auto all_report = parse_json(all.out);
    for (const auto& i : all_report.at("interfaces"))
        names.push_back(i.at("name"));
    EXPECT_EQ(names, (std::vector<std::string>{"lo", "nt1", "nt0"}));
}

TEST_F(AuditCli, ReadsManyInterfacesWithDumps) {
    // More names than the per-device limit: the dump path must agree too.
    std::string script;
    for (int i = 0; i < 6; ++i)
        script += "ip link add name d" + std::to_string(i) + "a type veth peer name d" +
                  std::to_string(i) + "b && ";
    script += "true";
    ASSERT_EQ(ns_->exec(script).status, 0);
    std::vector<std::string> args = {"audit", "--json"};
    for (int i = 0; i < 6; ++i) {
        args.push_back("d" + std::to_string(i) + "a");
        args.push_back("d" + std::to_string(i) + "b");
    }
    auto r = ctl_in(*ns_, args);
    ASSERT_EQ(r.status, 0) << r.err;
    auto report = parse_json(r.out);
    ASSERT_EQ(report.at("interfaces").size(), 12U);
    for (const auto& j : report.at("interfaces")) {
        SCOPED_TRACE(j.at("name").get<std::string>());
        expect_link_matches_ip(*ns_, j, j.at("name"));
        EXPECT_EQ(j.at("driver"), "veth");
        EXPECT_FALSE(j.at("features").is_null());
        EXPECT_FALSE(j.at("channels").is_null());
    }
}

TEST_F(AuditCli, UnknownInterfaceIsAUsageError) {
    auto r = ctl_in(*ns_, {"audit", "nosuch0"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("nosuch0: no such interface"), std::string::npos) << r.err;
    auto bad = ctl_in(*ns_, {"audit", "a/b"});
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("interface name 'a/b' is not valid"), std::string::npos) << bad.err;
    auto longname = ctl_in(*ns_, {"audit", "abcdefghijklmnopq"});
    EXPECT_EQ(longname.status, 2);
}

TEST_F(AuditCli, UnknownOrPathLikeProfileIsAUsageError) {
    auto r = ctl_in(*ns_, {"audit", "nt0", "--profile", "no-such-profile"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("no profile named 'no-such-profile'"), std::string::npos) << r.err;
    auto path = ctl_in(*ns_, {"audit", "nt0", "--profile", "../../etc/passwd"});
    EXPECT_EQ(path.status, 2);
    EXPECT_NE(path.err.find("looks like a path"), std::string::npos) << path.err;
}

TEST_F(AuditCli, ExitStatusSaysWhetherTheProfileIsMet) {
    char tmpl[] = "/tmp/nictune-audit-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    std::filesystem::path dir = tmpl;
    chmod(tmpl, 0755);
    std::ofstream(dir / "met.toml") << "[link]\nmtu = 9014\n[features]\ngro = true\n";
    std::ofstream(dir / "unmet.toml") << "[link]\nmtu = 1500\n[features]\ntso = true\n";
    auto met = ctl_in(
        *ns_, {"--profiles-dir", dir.string(), "audit", "nt0", "--profile", "met", "--json"});
    EXPECT_EQ(met.status, 0) << met.out << met.err;
    auto unmet = ctl_in(
        *ns_, {"--profiles-dir", dir.string(), "audit", "nt0", "--profile", "unmet", "--json"});
    EXPECT_EQ(unmet.status, 1) << unmet.err;
    auto report = parse_json(unmet.out);
    std::vector<std::string> keys;
    const auto nt0 = iface(report, "nt0");
    for (const auto& f : nt0.at("findings")) {
        keys.push_back(f.at("key"));
        EXPECT_FALSE(f.at("message").get<std::string>().empty());
    }
    EXPECT_NE(std::find(keys.begin(), keys.end(), "link.mtu"), keys.end());
    EXPECT_NE(std::find(keys.begin(), keys.end(), "features.tx-tcp-segmentation"), keys.end());
    auto text =
        ctl_in(*ns_, {"--profiles-dir", dir.string(), "audit", "nt0", "--profile", "unmet"});
    EXPECT_EQ(text.status, 1);
    EXPECT_NE(text.out.find("WARN link.mtu"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("\033["), std::string::npos) << "no colour when stdout is not a TTY";
    std::filesystem::remove_all(dir);
}

// An interface that disappears between the link list and the ethtool reads
// is a clean "no such interface" for a named audit, and silently dropped
// from an audit of everything.
TEST_F(AuditCli, InterfaceVanishingMidReadIsReportedCleanly) {
    ns_->run_inside([&] {
        NetlinkBackendOptions opts;
        opts.after_list = [&](const std::vector<std::string>&) {
            ASSERT_EQ(ns_->exec("ip link del nt0").status, 0);
        };
        auto be = NetlinkBackend::open(opts);
        ASSERT_TRUE(be) << be.error().str();
        auto r = (*be)->read_interfaces(ReadRequest{{"nt0"}, false});
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, Errc::NoSuchInterface);
        EXPECT_EQ(r.error().str(), "nt0: interface vanished while it was being read");
    });
    ASSERT_EQ(ns_->exec("ip link add name nt0 type veth peer name nt1x").status, 0);
    ns_->run_inside([&] {
        NetlinkBackendOptions opts;
        opts.after_list = [&](const std::vector<std::string>&) {
            ASSERT_EQ(ns_->exec("ip link del nt0").status, 0);
        };
        auto be = NetlinkBackend::open(opts);
        ASSERT_TRUE(be);
        auto r = (*be)->read_interfaces(ReadRequest{{}, true});
        ASSERT_TRUE(r) << r.error().str();
        for (const auto& n : *r)
            EXPECT_NE(n.id.name, "nt0");
        EXPECT_FALSE(r->empty());
    });
}

// The named links' ethtool parts are read family by family for all of them
// at once: the one that vanished is named, not a neighbour in its batch.
TEST_F(AuditCli, ALinkVanishingAmongSeveralNamedIsTheOneNamed) {
    ASSERT_EQ(ns_->exec("ip link add ntgone type veth peer name ntgonep").status, 0);
    ns_->run_inside([&] {
        NetlinkBackendOptions opts;
        bool deleted = false;
        opts.after_list = [&](const std::vector<std::string>& names) {
            if (deleted) return;
            deleted = true;
            ASSERT_EQ(names, (std::vector<std::string>{"nt0", "ntgone", "nt1"}));
            ASSERT_EQ(ns_->exec("ip link del ntgone").status, 0);
        };
        auto be = NetlinkBackend::open(opts);
        ASSERT_TRUE(be) << be.error().str();
        auto r = (*be)->read_interfaces(ReadRequest{{"nt0", "ntgone", "nt1"}, true});
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, Errc::NoSuchInterface);
        EXPECT_EQ(r.error().str(), "ntgone: interface vanished while it was being read");
        // The others still read whole, as ethtool sees them.
        auto rest = (*be)->read_interfaces(ReadRequest{{"nt0", "nt1"}, true});
        ASSERT_TRUE(rest) << rest.error().str();
        ASSERT_EQ(rest->size(), 2U);
        for (const auto& n : *rest) {
            SCOPED_TRACE(n.id.name);
            ASSERT_TRUE(n.features);
            EXPECT_TRUE(n.values.get(Key::ChanRx));
            EXPECT_TRUE(n.problems.empty());
        }
    });
}

// A read of named links takes the rtnetlink part of those the caller heard
// of (ReadRequest::linked, what nictuned's RTM_NEWLINK said) as it is, and
// asks the kernel for the other links and for every ethtool part and the
// driver. The MTU given is one the kernel does not have: only a read that
// took it, rather than asking again, reports it.
TEST_F(AuditCli, ANamedReadTakesTheLinksItIsGivenAndReadsTheRest) {
    ns_->run_inside([&] {
        auto be = NetlinkBackend::open({});
        ASSERT_TRUE(be) << be.error().str();
        auto whole = (*be)->read_interfaces(ReadRequest{{"nt0", "nt1"}, true});
        ASSERT_TRUE(whole) << whole.error().str();
        ASSERT_EQ(whole->size(), 2U);
        NicState heard;
        heard.id = whole->at(0).id;
        heard.id.driver.reset();
        heard.values = whole->at(0).values;
        heard.values.set(Key::LinkMtu, 1234);
        ReadRequest req{{"nt0", "nt1"}, true};
        req.linked.push_back(heard);
        auto r = (*be)->read_interfaces(req);
        ASSERT_TRUE(r) << r.error().str();
        ASSERT_EQ(r->size(), 2U);
        EXPECT_EQ(r->at(0).id.name, "nt0");
        EXPECT_EQ(r->at(0).values.get(Key::LinkMtu), 1234U);
        EXPECT_EQ(r->at(0).id.driver, "veth") << "the driver is still read";
        ASSERT_TRUE(r->at(0).features.has_value());
        ASSERT_TRUE(whole->at(0).features.has_value());
        EXPECT_EQ(r->at(0).features->active, whole->at(0).features->active)
            << "the features are still read";
        EXPECT_EQ(r->at(0).values.get(Key::ChanRx), whole->at(0).values.get(Key::ChanRx));
        EXPECT_EQ(r->at(1).id.name, "nt1");
        EXPECT_EQ(r->at(1).values.get(Key::LinkMtu), whole->at(1).values.get(Key::LinkMtu))
            << "a link not given is asked for";
        // A link given but not named is not read.
        ReadRequest other{{"nt1"}, true};
        other.linked.push_back(heard);
        auto o = (*be)->read_interfaces(other);
        ASSERT_TRUE(o) << o.error().str();
        ASSERT_EQ(o->size(), 1U);
        EXPECT_EQ(o->at(0).id.name, "nt1");
    });
}

// Read-only: the host's eth0 must read the same as ethtool reports. Nothing
// is written to it. Which sections exist depends on its driver (virtio_net on
// the build machines: coalescing, rings and channels; another host's NIC may
// lack some), so each is compared where ethtool reports it and must be
// absent where ethtool cannot read it.
TEST(AuditHost, Eth0AgreesWithEthtool) {
    if (run({"ip", "link", "show", "eth0"}).status != 0) GTEST_SKIP() << "this host has no eth0";
    auto r = run({kCtl, "audit", "eth0", "--json"});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    auto j = iface(parse_json(r.out), "eth0");
    const auto coalesce = run({"ethtool", "-c", "eth0"});
    if (coalesce.status != 0) {
        EXPECT_TRUE(j.at("coalesce").is_null()) << "ethtool -c eth0: " << coalesce.err;
    } else {
        auto c = parse_ethtool(coalesce.out);
        std::size_t compared = 0;
        for (const auto& [key, val] : c) {
            std::string k = key;
            std::replace(k.begin(), k.end(), '-', '_');
            const auto& coal = j.at("coalesce");
            if (val == "n/a") {
                EXPECT_FALSE(coal.contains(k)) << k << " is n/a in ethtool but reported by nictune";
                continue;
            }
            if (!coal.contains(k)) continue;  // lines ethtool prints that are not coalesce keys
            if (coal.at(k).is_boolean()) {
                EXPECT_EQ(coal.at(k).get<bool>(), val == "on") << k;
            } else {
                EXPECT_EQ(std::to_string(coal.at(k).get<uint64_t>()), val) << k;
            }
            ++compared;
        }
        EXPECT_GE(compared, j.at("driver") == "virtio_net" ? 4U : 1U)
            << "ethtool -c printed values nictune does not report (virtio_net has rx/tx usecs "
               "and frames):\n"
            << coalesce.out;
    }
    const auto rings = run({"ethtool", "-g", "eth0"});
    if (rings.status != 0) {
        EXPECT_TRUE(j.at("rings").is_null()) << "ethtool -g eth0: " << rings.err;
    } else {
        auto g = parse_ethtool(rings.out);
        for (const auto& [ours, theirs] : {std::pair{"rx", "cur.RX"},
                                           {"tx", "cur.TX"},
                                           {"rx_max", "max.RX"},
                                           {"tx_max", "max.TX"}}) {
            if (auto v = ethtool_number(g, theirs)) {
                EXPECT_EQ(j.at("rings").at(ours).get<uint64_t>(), *v) << ours;
            } else {
                EXPECT_FALSE(j.at("rings").contains(ours)) << ours << ": n/a in ethtool";
            }
        }
    }
    const auto channels = run({"ethtool", "-l", "eth0"});
    if (channels.status != 0) {
        EXPECT_TRUE(j.at("channels").is_null()) << "ethtool -l eth0: " << channels.err;
    } else {
        auto l = parse_ethtool(channels.out);
        for (const auto& [ours, theirs] :
             {std::pair{"combined", "cur.Combined"}, {"combined_max", "max.Combined"}}) {
            if (auto v = ethtool_number(l, theirs)) {
                EXPECT_EQ(j.at("channels").at(ours).get<uint64_t>(), *v) << ours;
            }
        }
    }
    auto i = parse_ethtool(run({"ethtool", "-i", "eth0"}).out);
    EXPECT_EQ(j.at("driver"), i.at("driver"));
    EXPECT_EQ(j.at("bus_info"), i.at("bus-info"));
    EXPECT_EQ(j.at("physical"), true);
    auto ip = parse_json(run({"ip", "-j", "-d", "link", "show", "eth0"}).out).at(0);
    EXPECT_EQ(j.at("link").at("mtu"), ip.at("mtu"));
    EXPECT_EQ(j.at("link").at("max_mtu"), ip.at("max_mtu"));
    EXPECT_EQ(j.at("link").at("operstate"), ip.at("operstate"));
    // PCI identity from sysfs, cross-checked with the uevent the kernel exports.
    if (j.at("pci_slot").is_string()) {
        std::ifstream ue("/sys/bus/pci/devices/" + j.at("pci_slot").get<std::string>() + "/uevent");
        std::string line, pci_id;
        while (std::getline(ue, line))
            if (line.starts_with("PCI_ID=")) pci_id = to_lower(line.substr(7));
        EXPECT_EQ(j.at("pci_id"), pci_id);
    }
}

}  // namespace
}  // namespace nictune::test
