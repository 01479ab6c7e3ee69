// nictune_bench_floor: the physical limit of "read every NIC setting" on this
// machine, for bench/run's audit scenario.
//
// One netlink dump per message family (RTM_GETLINK; ethtool LINKMODES,
// COALESCE, RINGS, CHANNELS, FEATURES with compact bitsets, PAUSE) plus one
// GDRVINFO ioctl per link, and nothing else: no decoding beyond the interface
// name and index, no profiles, no report. Run it inside the network namespace
// to measure (`ip netns exec NS nictune_bench_floor`).
//
//   nictune_bench_floor [--repeat R] [--skip-stats] [--health]
//   nictune_bench_floor --set MTU RX TX GRO TSO
//
// --set is the apply floor instead: one link dump and one CHANNELS and
// FEATURES dump (what a transaction must read before it changes anything),
// then the MTU, channels (RX/TX 0: the maxima) and features (rx-gro,
// tx-tcp-segmentation: on|off) of every link but lo, pipelined per family
// (floor_sets.hpp); no state, no verification, no report.
//
// --health adds what audit's health checks read, in the cheapest form: one
// RTM_GETSTATS dump (IFLA_STATS_LINK_64 only), the driver statistics of every
// link (ETHTOOL_GSSET_INFO, GSTRINGS, GSTATS), the link mode names
// (STRSET), /proc/interrupts and /proc/net/softnet_stat once, and each link's
// carrier_changes in sysfs.
//
// R = 0: start-up only, no round. --skip-stats asks the link dump for no
// statistics (IFLA_EXT_MASK RTEXT_FILTER_SKIP_STATS): nictune reads none, and
// on this kernel the statistics are most of the link dump's cost.
//
// Prints one JSON object: links and messages seen, the in-process time of
// each of R rounds in microseconds (sockets opened once per round, like a CLI)
// and the median time of each part (each dump, the ioctls) over the rounds.
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "floor_sets.hpp"

namespace {

constexpr std::size_t kBufSize = 64 * 1024;

struct Totals {
    std::size_t links = 0;
    std::size_t messages = 0;
    std::size_t drvinfo = 0;
    // Time of each part of the round (us): link dump, the six ethtool dumps,
    // ioctls; with --health: RTM_GETSTATS, statistics ioctls, procfs, sysfs.
    double part_us[12] = {};
};

struct Link {
    int ifindex;
    std::string name;
};

double now_us() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "nictune_bench_floor: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

// A netlink socket with a 64 KiB receive buffer.
class Sock {
  public:
    explicit Sock(int bus) : nl_(mnl_socket_open(bus)), buf_(new char[kBufSize]) {
        if (nl_ == nullptr) die("mnl_socket_open");
        if (mnl_socket_bind(nl_, 0, MNL_SOCKET_AUTOPID) < 0) die("mnl_socket_bind");
        portid_ = mnl_socket_get_portid(nl_);
    }
    ~Sock() { mnl_socket_close(nl_); }
    Sock(const Sock&) = delete;
    Sock& operator=(const Sock&) = delete;

    char* buf() { return buf_.get(); }
    uint32_t next_seq() { return ++seq_; }

    // Sends the request in buf() and runs `cb` on every reply message until
    // the dump ends (or the ACK/reply of a plain request arrives).
    void run(nlmsghdr* req, mnl_cb_t cb, void* data) {
        const uint32_t seq = req->nlmsg_seq;
        if (mnl_socket_sendto(nl_, req, req->nlmsg_len) < 0) die("sendto");
        while (true) {
            const ssize_t n = mnl_socket_recvfrom(nl_, buf_.get(), kBufSize);
            if (n < 0) die("recvfrom");
            const int r = mnl_cb_run(buf_.get(), static_cast<size_t>(n), seq, portid_, cb, data);
            if (r == MNL_CB_STOP) return;
            // A dump of a family no device supports ends with an error; fine.
            if (r < 0) {
                if (errno == EOPNOTSUPP || errno == ENODEV) return;
                die("netlink reply");
            }
        }
    }

  private:
    mnl_socket* nl_;
    uint32_t portid_ = 0;
    uint32_t seq_ = 0;
    std::unique_ptr<char[]> buf_;
};

struct LinkDump {
    Totals* totals;
    std::vector<Link>* links;
};

int on_link(const nlmsghdr* nlh, void* data) {
    auto* d = static_cast<LinkDump*>(data);
    ++d->totals->messages;
    const auto* ifi = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(nlh));
    const auto* attr = static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(nlh, sizeof *ifi));
    const char* tail = static_cast<const char*>(mnl_nlmsg_get_payload_tail(nlh));
    int len = static_cast<int>(tail - reinterpret_cast<const char*>(attr));
    while (mnl_attr_ok(attr, len)) {
        if (mnl_attr_get_type(attr) == IFLA_IFNAME) {
            d->links->push_back(Link{ifi->ifi_index, mnl_attr_get_str(attr)});
            break;
        }
        len -= NLA_ALIGN(attr->nla_len);
        attr = mnl_attr_next(attr);
    }
    return MNL_CB_OK;
}

int count_msg(const nlmsghdr*, void* data) {
    ++static_cast<Totals*>(data)->messages;
    return MNL_CB_OK;
}

int on_family(const nlmsghdr* nlh, void* data) {
    const auto* attr = static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN));
    const char* tail = static_cast<const char*>(mnl_nlmsg_get_payload_tail(nlh));
    int len = static_cast<int>(tail - reinterpret_cast<const char*>(attr));
    while (mnl_attr_ok(attr, len)) {
        if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID)
            *static_cast<uint16_t*>(data) = mnl_attr_get_u16(attr);
        len -= NLA_ALIGN(attr->nla_len);
        attr = mnl_attr_next(attr);
    }
    return MNL_CB_OK;
}

nlmsghdr* genl_request(Sock& s, uint16_t type, uint16_t flags, uint8_t cmd, uint8_t version) {
    nlmsghdr* nlh = mnl_nlmsg_put_header(s.buf());
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = flags;
    nlh->nlmsg_seq = s.next_seq();
    auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
    genl->cmd = cmd;
    genl->version = version;
    return nlh;
}

std::size_t slurp_size(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return s.size();
}

// What the health checks read beyond the six families (see --health).
void health_reads(Totals& t, const std::vector<Link>& links, Sock& gen, uint16_t family) {
    {
        Sock rt(NETLINK_ROUTE);
        nlmsghdr* nlh = mnl_nlmsg_put_header(rt.buf());
        nlh->nlmsg_type = RTM_GETSTATS;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
        nlh->nlmsg_seq = rt.next_seq();
        auto* ifsm =
            static_cast<if_stats_msg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(if_stats_msg)));
        ifsm->filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
        const double s0 = now_us();
        rt.run(nlh, count_msg, &t);
        t.part_us[8] = now_us() - s0;
    }
    {
        const double s0 = now_us();
        nlmsghdr* nlh = genl_request(gen, family, NLM_F_REQUEST | NLM_F_ACK, ETHTOOL_MSG_STRSET_GET,
                                     ETHTOOL_GENL_VERSION);
        nlattr* hdr = mnl_attr_nest_start(nlh, ETHTOOL_A_STRSET_HEADER);
        mnl_attr_nest_end(nlh, hdr);
        nlattr* sets = mnl_attr_nest_start(nlh, ETHTOOL_A_STRSET_STRINGSETS);
        nlattr* set = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGSETS_STRINGSET);
        mnl_attr_put_u32(nlh, ETHTOOL_A_STRINGSET_ID, ETH_SS_LINK_MODES);
        mnl_attr_nest_end(nlh, set);
        mnl_attr_nest_end(nlh, sets);
        gen.run(nlh, count_msg, &t);
        t.part_us[8] += now_us() - s0;
    }
    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    std::vector<unsigned char> buf(1 << 20);
    const double s0 = now_us();
    for (const Link& l : links) {
        ifreq ifr{};
        std::strncpy(ifr.ifr_name, l.name.c_str(), IFNAMSIZ - 1);
        alignas(8) unsigned char info[sizeof(ethtool_sset_info) + 4]{};
        auto* si = reinterpret_cast<ethtool_sset_info*>(info);
        si->cmd = ETHTOOL_GSSET_INFO;
        si->sset_mask = 1ULL << ETH_SS_STATS;
        ifr.ifr_data = reinterpret_cast<char*>(info);
        if (ioctl(fd, SIOCETHTOOL, &ifr) != 0 || !(si->sset_mask & (1ULL << ETH_SS_STATS)))
            continue;
        uint32_t n = 0;
        std::memcpy(&n, info + sizeof(ethtool_sset_info), 4);
        if (sizeof(ethtool_gstrings) + std::size_t{n} * ETH_GSTRING_LEN > buf.size()) continue;
        auto* gs = reinterpret_cast<ethtool_gstrings*>(buf.data());
        gs->cmd = ETHTOOL_GSTRINGS;
        gs->string_set = ETH_SS_STATS;
        gs->len = n;
        ifr.ifr_data = reinterpret_cast<char*>(gs);
        if (ioctl(fd, SIOCETHTOOL, &ifr) != 0) continue;
        auto* st = reinterpret_cast<ethtool_stats*>(buf.data());
        st->cmd = ETHTOOL_GSTATS;
        st->n_stats = n;
        ifr.ifr_data = reinterpret_cast<char*>(st);
        if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) ++t.messages;
    }
    t.part_us[9] = now_us() - s0;
    close(fd);
    const double p0 = now_us();
    t.messages += slurp_size("/proc/interrupts") > 0;
    t.messages += slurp_size("/proc/net/softnet_stat") > 0;
    t.part_us[10] = now_us() - p0;
    const double f0 = now_us();
    for (const Link& l : links)
        t.messages += slurp_size("/sys/class/net/" + l.name + "/carrier_changes") > 0;
    t.part_us[11] = now_us() - f0;
}

// `for_apply`: only what a transaction that sets MTU, channels and features
// must read first (the links, CHANNELS, FEATURES), no driver identity.
Totals one_round(bool skip_stats, bool for_apply = false, std::vector<Link>* out = nullptr,
                 bool health = false) {
    Totals t;
    std::vector<Link> links;

    Sock rt(NETLINK_ROUTE);
    {
        nlmsghdr* nlh = mnl_nlmsg_put_header(rt.buf());
        nlh->nlmsg_type = RTM_GETLINK;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
        nlh->nlmsg_seq = rt.next_seq();
        auto* ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
        ifi->ifi_family = AF_UNSPEC;
        if (skip_stats) mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
        LinkDump d{&t, &links};
        const double s0 = now_us();
        rt.run(nlh, on_link, &d);
        t.part_us[0] = now_us() - s0;
    }
    t.links = links.size();

    Sock gen(NETLINK_GENERIC);
    uint16_t family = 0;
    {
        nlmsghdr* nlh =
            genl_request(gen, GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, CTRL_CMD_GETFAMILY, 1);
        mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
        gen.run(nlh, on_family, &family);
        if (family == 0) die("no ethtool netlink family");
    }
    struct Dump {
        uint8_t cmd;
        uint32_t flags;
    };
    constexpr Dump kDumps[] = {
        {ETHTOOL_MSG_LINKMODES_GET, ETHTOOL_FLAG_COMPACT_BITSETS},
        {ETHTOOL_MSG_COALESCE_GET, 0},
        {ETHTOOL_MSG_RINGS_GET, 0},
        {ETHTOOL_MSG_CHANNELS_GET, 0},
        {ETHTOOL_MSG_FEATURES_GET, ETHTOOL_FLAG_COMPACT_BITSETS},
        {ETHTOOL_MSG_PAUSE_GET, 0},
    };
    for (std::size_t k = 0; k < std::size(kDumps); ++k) {
        const Dump& d = kDumps[k];
        if (for_apply && d.cmd != ETHTOOL_MSG_CHANNELS_GET && d.cmd != ETHTOOL_MSG_FEATURES_GET)
            continue;
        const double s0 = now_us();
        nlmsghdr* nlh =
            genl_request(gen, family, NLM_F_REQUEST | NLM_F_DUMP, d.cmd, ETHTOOL_GENL_VERSION);
        // ETHTOOL_A_*_HEADER is attribute 1 in every family.
        nlattr* hdr = mnl_attr_nest_start(nlh, 1);
        if (d.flags != 0) mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, d.flags);
        mnl_attr_nest_end(nlh, hdr);
        gen.run(nlh, count_msg, &t);
        t.part_us[1 + k] = now_us() - s0;
    }

    if (for_apply) {
        if (out != nullptr) *out = std::move(links);
        return t;
    }
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    const double s0 = now_us();
    for (const Link& l : links) {
        ethtool_drvinfo info{};
        info.cmd = ETHTOOL_GDRVINFO;
        ifreq ifr{};
        std::strncpy(ifr.ifr_name, l.name.c_str(), IFNAMSIZ - 1);
        ifr.ifr_data = reinterpret_cast<char*>(&info);
        if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) ++t.drvinfo;
    }
    t.part_us[7] = now_us() - s0;
    close(fd);
    if (health) health_reads(t, links, gen, family);
    return t;
}

}  // namespace

namespace {

// --set: the apply floor. One read of what the changes need, then the SETs
// of every link but lo, pipelined per family (floor_sets.hpp).
int apply_floor(const bench::SetValues& asked) {
    const double t0 = now_us();
    std::vector<Link> links;
    one_round(true, true, &links);
    std::vector<int> idx;
    for (const Link& l : links)
        if (l.name != "lo") idx.push_back(l.ifindex);
    std::string error;
    bench::SetSender sets(&error);
    if (!error.empty()) die(error.c_str());
    bench::SetValues v = asked;
    if (!idx.empty() && (v.rx == 0 || v.tx == 0)) {
        uint32_t rx = 0, tx = 0;
        if (!sets.channel_max(idx.front(), rx, tx)) die("cannot read the channel maxima");
        if (v.rx == 0) v.rx = rx;
        if (v.tx == 0) v.tx = tx;
    }
    const int errors = sets.send(idx, v);
    std::printf("{\"links\": %zu, \"set_errors\": %d, \"us\": %.1f}\n", idx.size(), errors,
                now_us() - t0);
    return errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    int repeat = 1;
    bool skip_stats = false;
    bool health = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--repeat" && i + 1 < argc) {
            repeat = std::atoi(argv[++i]);
        } else if (a == "--skip-stats") {
            skip_stats = true;
        } else if (a == "--health") {
            health = true;
        } else if (a == "--set" && i + 5 < argc) {
            bench::SetValues v;
            v.mtu = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
            v.rx = static_cast<uint32_t>(std::strtoul(argv[i + 2], nullptr, 10));
            v.tx = static_cast<uint32_t>(std::strtoul(argv[i + 3], nullptr, 10));
            v.gro = std::string(argv[i + 4]) == "on";
            v.tso = std::string(argv[i + 5]) == "on";
            return apply_floor(v);
        } else {
            std::fprintf(stderr,
                         "usage: nictune_bench_floor [--repeat R] [--skip-stats] [--health]\n"
                         "       nictune_bench_floor --set MTU RX TX GRO TSO  (RX/TX 0: max; "
                         "GRO/TSO on|off)\n");
            return 2;
        }
    }
    if (repeat < 0 || repeat > 100000) repeat = 1;
    std::vector<double> us;
    std::vector<std::vector<double>> parts(health ? 12 : 8);
    Totals t;
    for (int r = 0; r < repeat; ++r) {
        const double t0 = now_us();
        t = one_round(skip_stats, false, nullptr, health);
        us.push_back(now_us() - t0);
        for (std::size_t k = 0; k < parts.size(); ++k)
            parts[k].push_back(t.part_us[k]);
    }
    std::printf("{\"links\": %zu, \"messages\": %zu, \"drvinfo\": %zu, \"round_us\": [", t.links,
                t.messages, t.drvinfo);
    for (std::size_t i = 0; i < us.size(); ++i)
        std::printf("%s%.1f", i ? ", " : "", us[i]);
    // The median of each part over the rounds.
    constexpr const char* kParts[] = {
        "RTM_GETLINK", "LINKMODES",           "COALESCE", "RINGS",  "CHANNELS", "FEATURES", "PAUSE",
        "GDRVINFO",    "RTM_GETSTATS+STRSET", "GSTATS",   "procfs", "sysfs"};
    std::printf("], \"part_median_us\": {");
    for (std::size_t k = 0; k < parts.size(); ++k) {
        auto& p = parts[k];
        std::sort(p.begin(), p.end());
        std::printf("%s\"%s\": %.1f", k ? ", " : "", kParts[k], p.empty() ? 0.0 : p[p.size() / 2]);
    }
    std::printf("}}\n");
    return 0;
}
