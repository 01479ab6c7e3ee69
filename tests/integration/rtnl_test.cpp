// rtnetlink, GDRVINFO and sysfs against the real kernel. Changes happen only
// on veth pairs inside namespaces these tests create; the host's own links
// (eth0) are only read. `ip -j -d link show` and `ethtool -i` are the oracles.
#include <gtest/gtest.h>
#include <linux/if.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "rtnl/link.hpp"
#include "support/netns.hpp"
#include "support/process.hpp"
#include "sysinfo/drvinfo.hpp"
#include "sysinfo/sysfs.hpp"

namespace nictune::test {
namespace {

using nlohmann::json;
using rtnl::Link;
using rtnl::Socket;

constexpr std::array<const char*, 7> kOperNames = {
    "UNKNOWN", "NOTPRESENT", "DOWN", "LOWERLAYERDOWN", "TESTING", "DORMANT", "UP"};

// ifi_flags bits that ip prints under these names.
const std::map<std::string, uint32_t> kFlagNames = {{"UP", IFF_UP},
                                                    {"BROADCAST", IFF_BROADCAST},
                                                    {"LOOPBACK", IFF_LOOPBACK},
                                                    {"POINTOPOINT", IFF_POINTOPOINT},
                                                    {"NOARP", IFF_NOARP},
                                                    {"MULTICAST", IFF_MULTICAST},
                                                    {"LOWER_UP", IFF_LOWER_UP},
                                                    {"DORMANT", IFF_DORMANT},
                                                    {"PROMISC", IFF_PROMISC}};

// A veth pair nt0/nt1 inside a fresh namespace: nt0 with MTU 9000 and
// txqueuelen 2000, both up.
std::string veth_setup_script() {
    return "ip link add name nt0 type veth peer name nt1 && "
           "ip link set nt0 mtu 9000 txqueuelen 2000 && "
           "ip link set nt0 up && ip link set nt1 up";
}

rtnl::LinkChange mtu_change(uint32_t mtu) {
    rtnl::LinkChange c;
    c.mtu = mtu;
    return c;
}

std::unique_ptr<Socket> open_inside(const TestNetns& ns) {
    std::unique_ptr<Socket> sock;
    ns.run_inside([&] {
        auto s = Socket::open();
        if (!s) throw std::runtime_error(s.error().str());
        sock = std::move(*s);
    });
    return sock;
}

json ip_links(const TestNetns& ns) {
    auto r = ns.exec("ip -j -d link show");
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out);
}

// Setting a veth pair up only starts it: the kernel's link watcher raises
// the carrier and the operstate a moment later. Comparing a dump with `ip`
// in that moment compared two different states (a rare failure under load):
// wait until both ends are UP, within a bound.
void wait_until_up(const TestNetns& ns) {
    using clock = std::chrono::steady_clock;
    const auto until = clock::now() + std::chrono::seconds(5);
    for (;;) {
        int up = 0;
        for (const auto& l : ip_links(ns))
            if (l.value("operstate", "") == "UP") ++up;
        if (up == 2 || clock::now() > until) return;
        ::poll(nullptr, 0, 10);
    }
}

json ip_link(const TestNetns& ns, const std::string& name) {
    auto r = ns.exec("ip -j -d link show dev " + name);
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out).at(0);
}

// Every field of Link against ip's view of the same link.
void expect_matches_ip(const Link& link, const json& ip, const std::string& carrier_oracle) {
    SCOPED_TRACE(link.name);
    EXPECT_EQ(link.ifindex, ip.at("ifindex").get<int>());
    EXPECT_EQ(link.name, ip.at("ifname").get<std::string>());
    EXPECT_EQ(link.mac, ip.value("address", std::string()));
    if (ip.contains("permaddr")) {
        EXPECT_EQ(link.perm_mac, ip.at("permaddr").get<std::string>());
    } else if (link.perm_mac) {
        // ip leaves out a permanent address equal to the current one.
        EXPECT_EQ(*link.perm_mac, link.mac);
    }
    EXPECT_EQ(link.values.get(Key::LinkMtu), ip.at("mtu").get<uint64_t>());
    EXPECT_EQ(link.values.get(Key::LinkMinMtu), ip.at("min_mtu").get<uint64_t>());
    if (ip.at("max_mtu").get<uint64_t>() == 0) {
        EXPECT_FALSE(link.values.has(Key::LinkMaxMtu)) << "max_mtu 0 means no limit";
    } else {
        EXPECT_EQ(link.values.get(Key::LinkMaxMtu), ip.at("max_mtu").get<uint64_t>());
    }
    EXPECT_EQ(link.values.get(Key::LinkTxqueuelen), ip.at("txqlen").get<uint64_t>());
    ASSERT_TRUE(link.values.has(Key::LinkOperstate));
    EXPECT_EQ(kOperNames.at(*link.values.get(Key::LinkOperstate)),
              ip.at("operstate").get<std::string>());
    std::set<std::string> ip_flags;
    for (const auto& f : ip.at("flags"))
        ip_flags.insert(f.get<std::string>());
    for (const auto& [name, bit] : kFlagNames)
        EXPECT_EQ((link.flags & bit) != 0, ip_flags.count(name) != 0) << name;
    if (ip.contains("linkinfo") && ip.at("linkinfo").contains("info_kind")) {
        EXPECT_EQ(link.kind, ip.at("linkinfo").at("info_kind").get<std::string>());
    } else {
        EXPECT_FALSE(link.kind);
    }
    if (ip.contains("parentbus")) {
        EXPECT_EQ(link.parent_bus, ip.at("parentbus").get<std::string>());
    } else {
        EXPECT_FALSE(link.parent_bus);
    }
    if (ip.contains("parentdev")) {
        EXPECT_EQ(link.parent_dev, ip.at("parentdev").get<std::string>());
    } else {
        EXPECT_FALSE(link.parent_dev);
    }
    EXPECT_EQ(link.values.get(Key::LinkCarrier), std::stoull(carrier_oracle));
}

std::string carrier_in(const TestNetns& ns, const std::string& name) {
    // `ip netns exec` mounts the namespace's own /sys.
    auto r = ns.exec("cat /sys/class/net/" + name + "/carrier");
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
}

TEST(RtnlLinks, DumpMatchesIpForEveryField) {
    NICTUNE_REQUIRE_NETNS(ns);
    auto setup = ns->exec(veth_setup_script());
    ASSERT_EQ(setup.status, 0) << setup.err;
    wait_until_up(*ns);
    auto sock = open_inside(*ns);
    ASSERT_TRUE(sock);
    std::map<std::string, Link> links;
    auto r = sock->dump_links([&](Link&& l) { links.emplace(l.name, std::move(l)); });
    ASSERT_TRUE(r) << r.error().str();

    const json ip = ip_links(*ns);
    ASSERT_EQ(links.size(), ip.size());
    for (const auto& entry : ip) {
        const auto name = entry.at("ifname").get<std::string>();
        ASSERT_TRUE(links.contains(name)) << name;
        expect_matches_ip(links.at(name), entry, carrier_in(*ns, name));
    }
    // The values the setup asked for, so the comparison is not vacuous.
    EXPECT_EQ(links.at("nt0").values.get(Key::LinkMtu), 9000U);
    EXPECT_EQ(links.at("nt0").values.get(Key::LinkTxqueuelen), 2000U);
    EXPECT_EQ(links.at("nt0").kind, "veth");
    EXPECT_EQ(links.at("nt0").values.get(Key::LinkMaxMtu), 65535U);
}

TEST(RtnlLinks, DumpIsRepeatableOnOneSocket) {
    NICTUNE_REQUIRE_NETNS(ns);
    ASSERT_EQ(ns->exec(veth_setup_script()).status, 0);
    auto sock = open_inside(*ns);
    for (int i = 0; i < 3; ++i) {
        int n = 0;
        auto r = sock->dump_links([&](Link&&) { ++n; });
        ASSERT_TRUE(r) << r.error().str();
        EXPECT_EQ(n, 3) << "lo, nt0, nt1";
        // A GET between dumps must not leave an ACK behind for the next one.
        ASSERT_TRUE(sock->get_link("nt1"));
    }
}

TEST(RtnlLinks, GetLinkByNameAndByIndexAgreeWithIp) {
    NICTUNE_REQUIRE_NETNS(ns);
    ASSERT_EQ(ns->exec(veth_setup_script()).status, 0);
    wait_until_up(*ns);
    auto sock = open_inside(*ns);
    auto by_name = sock->get_link("nt0");
    ASSERT_TRUE(by_name) << by_name.error().str();
    expect_matches_ip(*by_name, ip_link(*ns, "nt0"), carrier_in(*ns, "nt0"));
    auto by_index = sock->get_link(by_name->ifindex);
    ASSERT_TRUE(by_index) << by_index.error().str();
    EXPECT_EQ(by_index->name, "nt0");
    EXPECT_EQ(by_index->values, by_name->values);
}

TEST(RtnlLinks, GetLinkOfAnUnknownNameIsNoSuchInterface) {
    NICTUNE_REQUIRE_NETNS(ns);
    auto sock = open_inside(*ns);
    auto r = sock->get_link("ntmissing0");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::NoSuchInterface);
    EXPECT_EQ(r.error().sys_errno, ENODEV);
    EXPECT_NE(r.error().context.find("ntmissing0"), std::string::npos) << r.error().str();
    auto by_index = sock->get_link(999999);
    ASSERT_FALSE(by_index);
    EXPECT_EQ(by_index.error().code, Errc::NoSuchInterface);
    // The socket is still in step after the errors.
    EXPECT_TRUE(sock->get_link("lo"));
}

TEST(RtnlLinks, ChangeLinkSetsMtuAndTxqueuelen) {
    NICTUNE_REQUIRE_NETNS(ns);
    ASSERT_EQ(ns->exec(veth_setup_script()).status, 0);
    auto sock = open_inside(*ns);
    auto nt0 = sock->get_link("nt0");
    ASSERT_TRUE(nt0) << nt0.error().str();

    auto r = sock->change_link(nt0->ifindex, {.mtu = 9014, .txqueuelen = 5000});
    ASSERT_TRUE(r) << r.error().str();
    const json ip = ip_link(*ns, "nt0");
    EXPECT_EQ(ip.at("mtu").get<int>(), 9014);
    EXPECT_EQ(ip.at("txqlen").get<int>(), 5000);
    EXPECT_EQ(sock->get_link("nt0")->values.get(Key::LinkMtu), 9014U);
    // Nothing to change is not an error and sends nothing.
    EXPECT_TRUE(sock->change_link(nt0->ifindex, {}));
}

TEST(RtnlLinks, ChangeLinkAboveMaxMtuFailsWithTheKernelsMessage) {
    NICTUNE_REQUIRE_NETNS(ns);
    ASSERT_EQ(ns->exec(veth_setup_script()).status, 0);
    auto sock = open_inside(*ns);
    auto nt0 = sock->get_link("nt0");
    ASSERT_TRUE(nt0) << nt0.error().str();

    auto r = sock->change_link(nt0->ifindex, mtu_change(70000));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::Kernel);
    EXPECT_EQ(r.error().sys_errno, EINVAL);
    EXPECT_FALSE(r.error().kernel_message.empty()) << r.error().str();
    EXPECT_EQ(r.error().context,
              "ifindex " + std::to_string(nt0->ifindex) + ": link.mtu=70000: set");
    EXPECT_EQ(ip_link(*ns, "nt0").at("mtu").get<int>(), 9000);
    // After an error the socket still works.
    EXPECT_TRUE(sock->change_link(nt0->ifindex, mtu_change(1500)));
    EXPECT_EQ(ip_link(*ns, "nt0").at("mtu").get<int>(), 1500);
}

TEST(RtnlLinks, ChangeLinkOfAVanishedIndexIsNoSuchInterface) {
    NICTUNE_REQUIRE_NETNS(ns);
    auto sock = open_inside(*ns);
    auto r = sock->change_link(999999, mtu_change(1500));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::NoSuchInterface);
}

// Many changes go out in windows of one datagram, and the kernel answers
// only the failures and each window's last message: every failure must still
// reach the change that caused it, in any window, and every other change
// must be made.
TEST(RtnlLinks, ChangeLinksAnswersEachChangeOfSeveralWindows) {
    NICTUNE_REQUIRE_NETNS(ns);
    constexpr int kLinks = 150;  // three windows of at most 64
    auto made = ns->add_veth_pairs("nb", "nbp", kLinks);
    ASSERT_EQ(made.status, 0) << made.err;
    auto sock = open_inside(*ns);
    std::map<std::string, int> ifindex;
    ASSERT_TRUE(sock->dump_links([&](Link&& l) { ifindex[l.name] = l.ifindex; }));

    // Failures first, in the middle and last of a window, and last of all.
    const std::set<int> too_big = {0, 5, 63, 64, 100, kLinks - 1};
    const int vanished = 70;
    std::vector<std::pair<int, rtnl::LinkChange>> changes;
    for (int i = 0; i < kLinks; ++i) {
        const std::string name = "nb" + std::to_string(i);
        ASSERT_TRUE(ifindex.contains(name)) << name;
        const int index = i == vanished ? 999999 : ifindex[name];
        changes.emplace_back(index, mtu_change(too_big.contains(i) ? 70000 : 9000 + i));
    }
    auto results = sock->change_links(changes);
    ASSERT_EQ(results.size(), changes.size());

    const json ip = ip_links(*ns);
    std::map<std::string, int> mtu;
    for (const auto& l : ip)
        mtu[l.at("ifname").get<std::string>()] = l.at("mtu").get<int>();
    for (int i = 0; i < kLinks; ++i) {
        SCOPED_TRACE("nb" + std::to_string(i));
        if (too_big.contains(i)) {
            ASSERT_FALSE(results[i]);
            EXPECT_EQ(results[i].error().sys_errno, EINVAL) << results[i].error().str();
            EXPECT_EQ(results[i].error().context,
                      "ifindex " + std::to_string(ifindex["nb" + std::to_string(i)]) +
                          ": link.mtu=70000: set");
            EXPECT_EQ(mtu["nb" + std::to_string(i)], 1500);
        } else if (i == vanished) {
            ASSERT_FALSE(results[i]);
            EXPECT_EQ(results[i].error().code, Errc::NoSuchInterface) << results[i].error().str();
            EXPECT_EQ(mtu["nb" + std::to_string(i)], 1500);
        } else {
            EXPECT_TRUE(results[i]) << results[i].error().str();
            EXPECT_EQ(mtu["nb" + std::to_string(i)], 9000 + i);
        }
    }
    // The socket is in step afterwards: a request gets its own answer.
    EXPECT_TRUE(sock->change_link(ifindex["nb1"], mtu_change(1500)));
    EXPECT_EQ(ip_link(*ns, "nb1").at("mtu").get<int>(), 1500);
}

// Reads events until `done` says so or the deadline passes.
bool wait_for_event(Socket& sock, const std::function<bool(const Link&, bool)>& done,
                    std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    bool seen = false;
    while (!seen) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{sock.fd(), POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        auto r = sock.receive_events([&](Link&& l, bool deleted) {
            if (done(l, deleted)) seen = true;
        });
        EXPECT_TRUE(r) << r.error().str();
    }
    return true;
}

TEST(RtnlEvents, SeesALinkCreatedAfterSubscribingAndItsDeletion) {
    NICTUNE_REQUIRE_NETNS(ns);
    auto sock = open_inside(*ns);
    ASSERT_TRUE(sock->subscribe_links());
    // Nothing queued yet: a read returns at once.
    int early = 0;
    ASSERT_TRUE(sock->receive_events([&](Link&&, bool) { ++early; }));

    ASSERT_EQ(ns->exec("ip link add name ev0 type veth peer name ev1").status, 0);
    int ev0_index = 0;
    EXPECT_TRUE(wait_for_event(
        *sock,
        [&](const Link& l, bool deleted) {
            if (l.name != "ev0" || deleted) return false;
            ev0_index = l.ifindex;
            return l.kind == "veth";
        },
        std::chrono::seconds(5)));
    ASSERT_GT(ev0_index, 0);

    ASSERT_EQ(ns->exec("ip link del ev0").status, 0);
    EXPECT_TRUE(wait_for_event(
        *sock,
        [&](const Link& l, bool deleted) {
            return deleted && l.name == "ev0" && l.ifindex == ev0_index;
        },
        std::chrono::seconds(5)));
}

TEST(RtnlEvents, SeesAnMtuChangeOfAnExistingLink) {
    NICTUNE_REQUIRE_NETNS(ns);
    ASSERT_EQ(ns->exec(veth_setup_script()).status, 0);
    auto sock = open_inside(*ns);
    ASSERT_TRUE(sock->subscribe_links());
    ASSERT_EQ(ns->exec("ip link set nt0 mtu 4000").status, 0);
    EXPECT_TRUE(wait_for_event(
        *sock,
        [](const Link& l, bool deleted) {
            return !deleted && l.name == "nt0" && l.values.get(Key::LinkMtu) == 4000U;
        },
        std::chrono::seconds(5)));
}

TEST(RtnlEvents, ReportsLostEventsAsEnobufs) {
    NICTUNE_REQUIRE_NETNS(ns);
    ASSERT_EQ(ns->exec(veth_setup_script()).status, 0);
    auto sock = open_inside(*ns);
    ASSERT_TRUE(sock->subscribe_links());
    // A receive queue that holds only a couple of link messages (~1.5 KiB
    // each); the kernel rounds the size up to its minimum.
    const int tiny = 1;
    ASSERT_EQ(setsockopt(sock->fd(), SOL_SOCKET, SO_RCVBUF, &tiny, sizeof tiny), 0);
    std::string batch;
    for (int mtu = 2000; mtu < 2040; ++mtu)
        batch += "link set nt0 mtu " + std::to_string(mtu) + "\n";
    ASSERT_EQ(ns->exec("printf '" + batch + "' | ip -batch -").status, 0);

    auto r = sock->receive_events([](Link&&, bool) {});
    ASSERT_FALSE(r) << "40 changes fit into a minimal receive queue";
    EXPECT_EQ(r.error().code, Errc::Io);
    EXPECT_EQ(r.error().sys_errno, ENOBUFS);
    // The overflow is reported once; the socket goes on delivering.
    EXPECT_TRUE(sock->receive_events([](Link&&, bool) {}));
    ASSERT_EQ(ns->exec("ip link set nt0 mtu 3000").status, 0);
    EXPECT_TRUE(wait_for_event(
        *sock,
        [](const Link& l, bool) { return l.name == "nt0" && l.values.get(Key::LinkMtu) == 3000U; },
        std::chrono::seconds(5)));
}

// ---- GDRVINFO and sysfs

std::map<std::string, std::string> ethtool_i(const std::string& prefix, const std::string& dev) {
    auto r = sh(prefix + "ethtool -i " + dev);
    EXPECT_EQ(r.status, 0) << r.err;
    std::map<std::string, std::string> out;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        out[line.substr(0, colon)] = value;
    }
    return out;
}

void expect_drvinfo_matches(const sysinfo::DrvInfo& d, std::map<std::string, std::string> e) {
    auto field = [&](const char* k) -> std::optional<std::string> {
        const std::string v = e[k];
        if (v.empty() || v == "N/A") return std::nullopt;
        return v;
    };
    EXPECT_EQ(d.driver, field("driver"));
    EXPECT_EQ(d.version, field("version"));
    EXPECT_EQ(d.firmware_version, field("firmware-version"));
    EXPECT_EQ(d.expansion_rom_version, field("expansion-rom-version"));
    EXPECT_EQ(d.bus_info, field("bus-info"));
}

bool host_has(const std::string& dev) {
    return std::filesystem::exists("/sys/class/net/" + dev);
}

TEST(HostReadOnly, Eth0DriverInfoEqualsEthtool) {
    if (!host_has("eth0")) GTEST_SKIP() << "no eth0 on this host";
    if (!have_program("ethtool")) GTEST_SKIP() << "needs ethtool as the oracle";
    auto sock = sysinfo::IoctlSocket::open();
    ASSERT_TRUE(sock) << sock.error().str();
    auto d = sock->drvinfo("eth0");
    ASSERT_TRUE(d) << d.error().str();
    expect_drvinfo_matches(*d, ethtool_i("", "eth0"));
    EXPECT_TRUE(d->driver);
}

TEST(HostReadOnly, Eth0LinkEqualsIp) {
    if (!host_has("eth0")) GTEST_SKIP() << "no eth0 on this host";
    auto sock = Socket::open();
    ASSERT_TRUE(sock) << sock.error().str();
    auto link = (*sock)->get_link("eth0");
    ASSERT_TRUE(link) << link.error().str();
    auto r = run({"ip", "-j", "-d", "link", "show", "dev", "eth0"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream carrier("/sys/class/net/eth0/carrier");
    std::string c;
    carrier >> c;
    expect_matches_ip(*link, json::parse(r.out).at(0), c);
}

TEST(HostReadOnly, Eth0PciFunctionEqualsSysfsAndEthtool) {
    if (!host_has("eth0")) GTEST_SKIP() << "no eth0 on this host";
    if (!have_program("ethtool")) GTEST_SKIP() << "needs ethtool as the oracle";
    const auto bus_info = ethtool_i("", "eth0")["bus-info"];
    const std::filesystem::path dev = "/sys/bus/pci/devices/" + bus_info;
    if (bus_info.empty() || !std::filesystem::exists(dev))
        GTEST_SKIP() << "eth0 is not on a PCI bus here";
    const sysinfo::Sysfs sys;
    auto pci = sys.pci_for("eth0");
    ASSERT_TRUE(pci);
    EXPECT_EQ(pci->slot, bus_info);
    auto hex = [&](const char* file) {
        std::ifstream in(dev / file);
        std::string v;
        in >> v;  // "0x1af4"
        return v.substr(2);
    };
    EXPECT_EQ(pci->id, hex("vendor") + ":" + hex("device"));
    EXPECT_EQ(pci->subsystem, hex("subsystem_vendor") + ":" + hex("subsystem_device"));
    std::ifstream numa(dev / "numa_node");
    int node = -1;
    numa >> node;
    if (node < 0) {
        EXPECT_FALSE(pci->numa_node);
    } else {
        EXPECT_EQ(pci->numa_node, node);
    }
    EXPECT_EQ(pci->sriov_vf, std::filesystem::exists(dev / "physfn"));
}

TEST(NetnsDrvinfo, VethDriverInfoEqualsEthtoolInsideTheNamespace) {
    NICTUNE_REQUIRE_NETNS(ns);
    if (!have_program("ethtool")) GTEST_SKIP() << "needs ethtool as the oracle";
    ASSERT_EQ(ns->exec(veth_setup_script()).status, 0);
    std::optional<sysinfo::IoctlSocket> sock;
    ns->run_inside([&] {
        auto s = sysinfo::IoctlSocket::open();
        if (!s) throw std::runtime_error(s.error().str());
        sock.emplace(std::move(*s));
    });
    auto d = sock->drvinfo("nt0");
    ASSERT_TRUE(d) << d.error().str();
    expect_drvinfo_matches(*d, ethtool_i("ip netns exec " + ns->name() + " ", "nt0"));
    EXPECT_EQ(d->driver, "veth");
    EXPECT_FALSE(d->bus_info);
    // The namespace's links are not visible from the host's ioctl socket.
    auto host = sysinfo::IoctlSocket::open();
    ASSERT_TRUE(host);
    EXPECT_EQ(host->drvinfo("nt0").error().code, Errc::NoSuchInterface);
}

}  // namespace
}  // namespace nictune::test
