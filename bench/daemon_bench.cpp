// nictune_bench_daemon: nictuned's start-up, hotplug, idle and memory
// scenarios for bench/run. Runs inside the benchmark's network namespace
// (`ip netns exec NS nictune_bench_daemon ...`) and talks to a private
// dbus-daemon; it starts nictuned itself (as its child, with
// PR_SET_PDEATHSIG) and stops it by PID at the end.
//
//   nictune_bench_daemon --nictuned PATH --bus ADDR --config FILE
//       --profiles-dir DIR --state-dir DIR --work-dir DIR
//       [--bound 512] [--startup-reps 3] [--hotplug 64,512,512@1000]
//       [--hotplug-reps 3] [--idle-seconds 10] [--audits 10000] [--mtu 9000]
//       [--peer-netns NAME] [--floor-reps 3] [--effect-watch]
//
// Phases, in order:
//  1. start-up: create --bound interfaces (veth pairs sba<i>/sbb<i>; with
//     --peer-netns the sbb<i> ends go to that namespace, otherwise both ends
//     are here and match), empty the state directory, start nictuned; time
//     from spawn to the bus name being owned (NameOwnerChanged), to READY=1
//     (sd_notify on a NOTIFY_SOCKET this program owns) and to the last
//     "boot" Applied signal. Repeated with fresh interfaces; the last daemon
//     keeps running.
//  2. idle: after the daemon settles (no CPU time used for 1 s), RSS and the
//     voluntary context switches of all its threads over --idle-seconds.
//  3. hotplug: bursts of K new matching interfaces (veth pairs hpa<i>/hpb<i>,
//     as above) created over this program's own rtnetlink socket, back to
//     back (K) or one started every US microseconds (K@US); per interface,
//     the time from the send of its RTM_NEWLINK to the arrival of its
//     Applied signal (reason hotplug). Then every interface's MTU is checked
//     in a link dump, and the pairs are deleted.
//  4. audits: --audits Audit calls over D-Bus (two named interfaces); RSS
//     sampled along the way.
//  5. idle again (after the activity), then SIGTERM and the exit status.
//  6. the hotplug floor (--floor-reps): the bursts of 3. again with nictuned
//     stopped, tuned by FloorTuner (the three SETs per link and nothing
//     else); per link, from the send of its RTM_NEWLINK to the ACKs of its
//     SETs.
//  7. the same with the floor that first reads the originals a rollback
//     needs (FloorTuner with reads: channels and features, then the SETs).
//  8. the same with those reads sent one by one, each answer awaited
//     before the next request, as nictuned reads new links.
//  9. the same with every request nictuned sends for a new link before its
//     SETs, one by one (Reads::AsNictune).
// 10. 9. again, the floor also sending each link's Applied signal on the
//     bus (Signaller); its links are timed to their signals, as nictuned's.
//
// --effect-watch also times, in 3. and the floors' bursts, when each link's
// settings took effect (EffectWatch: the kernel's change notifications,
// heard on sockets of this program): the same end point for nictuned and
// the floors, and how long after it nictuned's Applied signal came. A
// diagnostic, off by default: its thread is one more on the CPUs during a
// burst.
//
// Prints one JSON object on stdout. Progress goes to stderr.
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <poll.h>
#include <pthread.h>
#include <sdbus-c++/sdbus-c++.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "floor_sets.hpp"

extern char** environ;

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kBusName = "org.nictune1";
constexpr const char* kPath = "/org/nictune1";
constexpr const char* kIface = "org.nictune1.Manager";

double now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

void say(const std::string& s) {
    std::fprintf(stderr, "[daemon-bench] %s\n", s.c_str());
}

[[noreturn]] void die(const std::string& s) {
    std::fprintf(stderr, "nictune_bench_daemon: %s\n", s.c_str());
    std::exit(3);
}

// ---- rtnetlink: veth pairs with per-link timestamps ------------------------

class Rtnl {
  public:
    Rtnl() : buf_(new char[kBuf]) {
        nl_ = mnl_socket_open(NETLINK_ROUTE);
        if (nl_ == nullptr || mnl_socket_bind(nl_, 0, MNL_SOCKET_AUTOPID) < 0)
            die(std::string("rtnetlink socket: ") + std::strerror(errno));
        portid_ = mnl_socket_get_portid(nl_);
    }
    ~Rtnl() { mnl_socket_close(nl_); }
    Rtnl(const Rtnl&) = delete;
    Rtnl& operator=(const Rtnl&) = delete;

    // Creates veth pair a/b, b in the namespace `peer_ns_fd` when >= 0;
    // returns 0 or the errno.
    int add_veth(const std::string& a, const std::string& b, int peer_ns_fd) {
        nlmsghdr* nlh = header(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
        mnl_attr_put_strz(nlh, IFLA_IFNAME, a.c_str());
        nlattr* info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
        mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
        nlattr* data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
        nlattr* peer = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
        mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg));
        mnl_attr_put_strz(nlh, IFLA_IFNAME, b.c_str());
        if (peer_ns_fd >= 0)
            mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, static_cast<uint32_t>(peer_ns_fd));
        mnl_attr_nest_end(nlh, peer);
        mnl_attr_nest_end(nlh, data);
        mnl_attr_nest_end(nlh, info);
        return ack(nlh);
    }

    int del_link(const std::string& name) {
        nlmsghdr* nlh = header(RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK);
        mnl_attr_put_strz(nlh, IFLA_IFNAME, name.c_str());
        return ack(nlh);
    }

    // name -> MTU of every link.
    std::map<std::string, uint32_t> mtus() {
        nlmsghdr* nlh = header(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP);
        std::map<std::string, uint32_t> out;
        const uint32_t seq = nlh->nlmsg_seq;
        if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0) die("sendto");
        while (true) {
            const ssize_t n = mnl_socket_recvfrom(nl_, buf_.get(), kBuf);
            if (n < 0) die("recvfrom");
            const int r =
                mnl_cb_run(buf_.get(), static_cast<size_t>(n), seq, portid_, on_link, &out);
            if (r == MNL_CB_STOP) break;
            if (r < 0) die(std::string("link dump: ") + std::strerror(errno));
        }
        return out;
    }

  private:
    static constexpr std::size_t kBuf = 64 * 1024;

    nlmsghdr* header(uint16_t type, uint16_t flags) {
        nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.get());
        nlh->nlmsg_type = type;
        nlh->nlmsg_flags = flags;
        nlh->nlmsg_seq = ++seq_;
        auto* ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
        ifi->ifi_family = AF_UNSPEC;
        return nlh;
    }

    int ack(nlmsghdr* nlh) {
        const uint32_t seq = nlh->nlmsg_seq;
        if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0) return errno;
        const ssize_t n = mnl_socket_recvfrom(nl_, buf_.get(), kBuf);
        if (n < 0) return errno;
        const int r =
            mnl_cb_run(buf_.get(), static_cast<size_t>(n), seq, portid_, nullptr, nullptr);
        return r < 0 ? errno : 0;
    }

    static int on_link(const nlmsghdr* nlh, void* data) {
        auto* out = static_cast<std::map<std::string, uint32_t>*>(data);
        const auto* attr =
            static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(nlh, sizeof(ifinfomsg)));
        const char* tail = static_cast<const char*>(mnl_nlmsg_get_payload_tail(nlh));
        int len = static_cast<int>(tail - reinterpret_cast<const char*>(attr));
        std::string name;
        uint32_t mtu = 0;
        while (mnl_attr_ok(attr, len)) {
            if (mnl_attr_get_type(attr) == IFLA_IFNAME) name = mnl_attr_get_str(attr);
            if (mnl_attr_get_type(attr) == IFLA_MTU) mtu = mnl_attr_get_u32(attr);
            len -= NLA_ALIGN(attr->nla_len);
            attr = mnl_attr_next(attr);
        }
        if (!name.empty()) (*out)[name] = mtu;
        return MNL_CB_OK;
    }

    mnl_socket* nl_ = nullptr;
    uint32_t portid_ = 0;
    uint32_t seq_ = 0;
    std::unique_ptr<char[]> buf_;
};

// ---- the hotplug floor: the least any tuner must do -------------------------

// What a floor that reports on the bus sends: for each link once its SETs
// are acknowledged, the Applied signal nictuned would send, as org.nictune1 on
// the same bus (nictuned is stopped): the bench then times it as it times
// nictuned, to the signal's arrival, with dbus-daemon and the bench's
// signal thread on the CPUs as in nictuned's bursts.
class Signaller {
  public:
    explicit Signaller(const std::string& address)
        : conn_(sdbus::createSessionBusConnectionWithAddress(address)) {
        conn_->requestName(kBusName);
        obj_ = sdbus::createObject(*conn_, kPath);
        obj_->registerSignal(kIface, "Applied", "sssss");
        obj_->finishRegistration();
    }
    ~Signaller() {
        try {
            conn_->releaseName(kBusName);
        } catch (const sdbus::Error&) {
        }
    }
    Signaller(const Signaller&) = delete;
    Signaller& operator=(const Signaller&) = delete;

    void applied(const std::string& round, const std::string& name) {
        obj_->emitSignal("Applied").onInterface(kIface).withArguments(
            round, name, std::string("bench-veth"), std::string("applied"), std::string("hotplug"));
    }

  private:
    std::unique_ptr<sdbus::IConnection> conn_;
    std::unique_ptr<sdbus::IObject> obj_;
};

// The floor. What nictuned does for a new link, minus everything but the changes
// themselves: it hears RTM_NEWLINK, and sends the three SETs the benchmark
// profile needs (MTU over rtnetlink, channels and features over ethtool
// netlink), pipelined per family for all the links it heard of since its
// last round, as nictuned batches them. No reads, no driver identity, no
// saved originals, no verification, no D-Bus. A link is done when the ACKs
// of its three SETs are in. Run with nictuned stopped, against the same
// back-to-back creator: the latency no tuner can beat on this machine.
//
// With `reads`, it first reads what a tuner that can roll back must save
// (each link's channels and features; the MTU came with the RTM_NEWLINK),
// pipelined like the SETs: five requests under the RTNL lock per link
// instead of three. The floor of any transactional tuner, nictuned's
// six (channels, features, driver info, three SETs) against it.
// Reads::OneByOne sends those reads one at a time, each answer awaited,
// as nictuned's per-device reads do. Reads::AsNictune sends, one at a time,
// every request nictuned sends for a new link before its SETs (channels,
// features and the driver info ioctl): nictuned's six requests under the
// lock, without its work between them. With a Signaller, it also sends
// each link's Applied signal once its SETs are acknowledged.
class FloorTuner {
  public:
    enum class Reads { None, Pipelined, OneByOne, AsNictune };
    FloorTuner(std::string prefix, uint32_t mtu, Reads reads, Signaller* signaller = nullptr)
        : prefix_(std::move(prefix)),
          reads_(reads),
          signaller_(signaller),
          sets_(&error_),
          buf_(new char[kBuf]) {
        if (!error_.empty()) die("floor: " + error_);
        values_.mtu = mtu;
        values_.gro = true;
        values_.tso = false;
        events_ = mnl_socket_open(NETLINK_ROUTE);
        if (events_ == nullptr || mnl_socket_bind(events_, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0)
            die(std::string("floor: netlink socket: ") + std::strerror(errno));
        const int queue = 4 * 1024 * 1024;
        setsockopt(mnl_socket_get_fd(events_), SOL_SOCKET, SO_RCVBUFFORCE, &queue, sizeof queue);
        thread_ = std::thread([this] { run(); });
    }
    ~FloorTuner() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
        mnl_socket_close(events_);
    }
    FloorTuner(const FloorTuner&) = delete;
    FloorTuner& operator=(const FloorTuner&) = delete;

    // name -> when its SETs were acknowledged (now_ms); failures counted.
    std::map<std::string, double> done() {
        std::lock_guard g(m_);
        return done_;
    }
    // The tuning thread's time on a CPU so far, in ms.
    double cpu_ms() {
        clockid_t id{};
        timespec ts{};
        if (pthread_getcpuclockid(thread_.native_handle(), &id) != 0 || clock_gettime(id, &ts) != 0)
            return 0;
        return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
    }
    // How many links each tune() took, in order: one while it keeps up with
    // the creating process, growing once it has fallen behind.
    std::vector<std::size_t> batches() {
        std::lock_guard g(m_);
        return batches_;
    }
    int failures() {
        std::lock_guard g(m_);
        return failures_;
    }
    [[nodiscard]] bool signals() const { return signaller_ != nullptr; }
    void clear() {
        std::lock_guard g(m_);
        done_.clear();
        batches_.clear();
        failures_ = 0;
    }

  private:
    static constexpr std::size_t kBuf = 256 * 1024;

    void tune(const std::vector<std::pair<int, std::string>>& batch) {
        // "max" channels: the maxima of the first link, learnt once.
        if (values_.rx == 0) sets_.channel_max(batch.front().first, values_.rx, values_.tx);
        std::vector<int> idx;
        for (const auto& b : batch)
            idx.push_back(b.first);
        const int reads = reads_ == Reads::None ? 0
                          : reads_ == Reads::AsNictune
                              ? sets_.read_as_nictune(batch)
                              : sets_.read_originals(idx, reads_ == Reads::OneByOne);
        const int errors = reads + sets_.send(idx, values_);
        const double t = now_ms();
        {
            std::lock_guard g(m_);
            for (const auto& b : batch)
                done_[b.second] = t;
            batches_.push_back(batch.size());
            failures_ += errors;
        }
        if (signaller_) {
            const std::string round = "floor-" + std::to_string(++rounds_);
            for (const auto& b : batch)
                signaller_->applied(round, b.second);
        }
    }

    void run() {
        const int fd = mnl_socket_get_fd(events_);
        std::set<int> seen;
        while (!stop_) {
            pollfd p{fd, POLLIN, 0};
            if (poll(&p, 1, 50) <= 0) continue;
            std::vector<std::pair<int, std::string>> batch;
            for (;;) {
                const ssize_t n = recv(fd, buf_.get(), kBuf, MSG_DONTWAIT);
                if (n <= 0) break;
                int left = static_cast<int>(n);
                for (auto* h = reinterpret_cast<const nlmsghdr*>(buf_.get()); mnl_nlmsg_ok(h, left);
                     h = mnl_nlmsg_next(h, &left)) {
                    if (h->nlmsg_type != RTM_NEWLINK) continue;
                    const auto* ifi = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(h));
                    bench::each_attr(h, sizeof(ifinfomsg), [&](const nlattr* a) {
                        if (mnl_attr_get_type(a) != IFLA_IFNAME) return;
                        std::string name = mnl_attr_get_str(a);
                        if (name.starts_with(prefix_) && seen.insert(ifi->ifi_index).second)
                            batch.emplace_back(ifi->ifi_index, std::move(name));
                    });
                }
            }
            if (!batch.empty()) tune(batch);
        }
    }

    std::string prefix_;
    Reads reads_ = Reads::None;
    Signaller* signaller_ = nullptr;
    std::size_t rounds_ = 0;
    std::string error_;
    bench::SetSender sets_;
    bench::SetValues values_;
    std::unique_ptr<char[]> buf_;
    mnl_socket* events_ = nullptr;
    std::atomic<bool> stop_{false};
    std::mutex m_;
    std::map<std::string, double> done_;
    std::vector<std::size_t> batches_;
    int failures_ = 0;
    std::thread thread_;
};

// ---- when the settings took effect: the kernel's change notifications -------
//
// The floor counts a link when the ACKs of its SETs are in; nictuned's
// Applied signal comes later: after its verification, its records and the
// journal's removal, and through dbus-daemon. EffectWatch times both tuners
// at the same point: the first notification of each of the three changes
// (an RTM_NEWLINK with the new MTU, an ethtool CHANNELS_NTF and a
// FEATURES_NTF for the link), on sockets of its own in the bench's
// namespace. A link is in effect when the last of the three has arrived.
class EffectWatch {
  public:
    EffectWatch(std::string prefix, uint32_t mtu) : prefix_(std::move(prefix)), mtu_(mtu) {
        rt_ = mnl_socket_open(NETLINK_ROUTE);
        eth_ = mnl_socket_open(NETLINK_GENERIC);
        if (rt_ == nullptr || eth_ == nullptr ||
            mnl_socket_bind(rt_, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0 ||
            mnl_socket_bind(eth_, 0, MNL_SOCKET_AUTOPID) < 0)
            die(std::string("effect watch: netlink socket: ") + std::strerror(errno));
        join_ethtool_monitor();
        const int queue = 8 * 1024 * 1024;
        for (auto* sock : {rt_, eth_})
            setsockopt(mnl_socket_get_fd(sock), SOL_SOCKET, SO_RCVBUFFORCE, &queue, sizeof queue);
        thread_ = std::thread([this] { run(); });
    }
    ~EffectWatch() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
        mnl_socket_close(rt_);
        mnl_socket_close(eth_);
    }
    EffectWatch(const EffectWatch&) = delete;
    EffectWatch& operator=(const EffectWatch&) = delete;

    // name -> when the last of its three changes was heard of (now_ms), for
    // the links all three were heard of.
    std::map<std::string, double> in_effect() {
        std::lock_guard g(m_);
        std::map<std::string, double> out;
        for (const auto& [name, t] : seen_)
            if (t.mtu && t.channels && t.features)
                out.emplace(name, std::max({*t.mtu, *t.channels, *t.features}));
        return out;
    }
    // Whether a socket overflowed (ENOBUFS): notifications were lost.
    bool lost() {
        std::lock_guard g(m_);
        return lost_;
    }
    void clear() {
        std::lock_guard g(m_);
        seen_.clear();
        names_.clear();
        lost_ = false;
    }

  private:
    static constexpr std::size_t kBuf = 256 * 1024;
    struct Times {
        std::optional<double> mtu, channels, features;
    };

    // The ethtool family's id and its "monitor" multicast group, joined.
    void join_ethtool_monitor() {
        uint32_t group = 0;
        family_ = bench::ethtool_family(eth_, buf_.get(), kBuf, &group);
        if (family_ == 0 || group == 0 ||
            setsockopt(mnl_socket_get_fd(eth_), SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group,
                       sizeof group) < 0)
            die("effect watch: cannot join the ethtool monitor group");
    }

    void link(const nlmsghdr* h, double t) {
        const auto* ifi = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(h));
        std::string name;
        std::optional<uint32_t> mtu;
        bench::each_attr(h, sizeof(ifinfomsg), [&](const nlattr* a) {
            if (mnl_attr_get_type(a) == IFLA_IFNAME) name = mnl_attr_get_str(a);
            if (mnl_attr_get_type(a) == IFLA_MTU) mtu = mnl_attr_get_u32(a);
        });
        if (!name.starts_with(prefix_)) return;
        names_[ifi->ifi_index] = name;
        if (mtu == mtu_) {
            auto& at = seen_[name].mtu;
            if (!at) at = t;
        }
    }

    void ethtool(const nlmsghdr* h, double t) {
        const auto* g = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(h));
        if (g->cmd != ETHTOOL_MSG_CHANNELS_NTF && g->cmd != ETHTOOL_MSG_FEATURES_NTF) return;
        int ifindex = 0;
        std::string name;
        bench::each_attr(h, sizeof(genlmsghdr), [&](const nlattr* a) {
            if (mnl_attr_get_type(a) != 1) return;  // ETHTOOL_A_*_HEADER
            bench::each_nested(a, [&](const nlattr* f) {
                if (mnl_attr_get_type(f) == ETHTOOL_A_HEADER_DEV_INDEX)
                    ifindex = static_cast<int>(mnl_attr_get_u32(f));
                if (mnl_attr_get_type(f) == ETHTOOL_A_HEADER_DEV_NAME) name = mnl_attr_get_str(f);
            });
        });
        if (name.empty())
            if (auto it = names_.find(ifindex); it != names_.end()) name = it->second;
        if (!name.starts_with(prefix_)) return;
        auto& times = seen_[name];
        auto& at = g->cmd == ETHTOOL_MSG_CHANNELS_NTF ? times.channels : times.features;
        if (!at) at = t;
    }

    // Everything queued on `sock`; an overflow (ENOBUFS) is noted in lost_.
    void drain(mnl_socket* sock, bool is_link) {
        for (;;) {
            const ssize_t n = recv(mnl_socket_get_fd(sock), buf_.get(), kBuf, MSG_DONTWAIT);
            if (n < 0 && errno == ENOBUFS) {
                std::lock_guard g(m_);
                lost_ = true;
                continue;
            }
            if (n <= 0) return;
            const double t = now_ms();
            int left = static_cast<int>(n);
            std::lock_guard g(m_);
            for (auto* h = reinterpret_cast<const nlmsghdr*>(buf_.get()); mnl_nlmsg_ok(h, left);
                 h = mnl_nlmsg_next(h, &left)) {
                if (is_link && h->nlmsg_type == RTM_NEWLINK) link(h, t);
                if (!is_link && h->nlmsg_type == family_) ethtool(h, t);
            }
        }
    }

    void run() {
        pollfd p[2] = {{mnl_socket_get_fd(rt_), POLLIN, 0}, {mnl_socket_get_fd(eth_), POLLIN, 0}};
        while (!stop_) {
            if (poll(p, 2, 50) <= 0) continue;
            // The link socket first: a link's RTM_NEWLINK names it for the
            // ethtool notifications that carry only its index.
            drain(rt_, true);
            drain(eth_, false);
        }
    }

    std::string prefix_;
    uint32_t mtu_ = 0;
    uint16_t family_ = 0;
    std::unique_ptr<char[]> buf_{new char[kBuf]};
    mnl_socket* rt_ = nullptr;
    mnl_socket* eth_ = nullptr;
    std::atomic<bool> stop_{false};
    std::mutex m_;
    std::map<int, std::string> names_;
    std::map<std::string, Times> seen_;
    bool lost_ = false;
    std::thread thread_;
};

// ---- what nictuned says on the bus -----------------------------------------

struct Signal {
    double t_ms;
    std::string result;
    std::string reason;
    std::string transaction;
};

class Recorder {
  public:
    void applied(const std::string& transaction, const std::string& iface,
                 const std::string& result, const std::string& reason) {
        const double t = now_ms();
        std::lock_guard l(mu_);
        // The first signal per interface and reason counts.
        seen_.try_emplace(reason + "/" + iface, Signal{t, result, reason, transaction});
        ++total_;
        cv_.notify_all();
    }
    void name_owned() {
        const double t = now_ms();
        std::lock_guard l(mu_);
        if (!name_ms_) name_ms_ = t;
        cv_.notify_all();
    }
    void clear() {
        std::lock_guard l(mu_);
        seen_.clear();
        name_ms_.reset();
        total_ = 0;
    }
    std::optional<Signal> get(const std::string& reason, const std::string& iface) {
        std::lock_guard l(mu_);
        auto it = seen_.find(reason + "/" + iface);
        if (it == seen_.end()) return std::nullopt;
        return it->second;
    }
    std::size_t count(const std::string& reason) {
        std::lock_guard l(mu_);
        return static_cast<std::size_t>(std::count_if(
            seen_.begin(), seen_.end(), [&](auto& kv) { return kv.second.reason == reason; }));
    }
    std::optional<double> name_ms() {
        std::lock_guard l(mu_);
        return name_ms_;
    }
    std::size_t total() {
        std::lock_guard l(mu_);
        return total_;
    }
    // Waits until `pred` holds or the time limit passes.
    template <class P>
    bool wait(P pred, std::chrono::milliseconds limit) {
        std::unique_lock l(mu_);
        return cv_.wait_for(l, limit, [&] {
            l.unlock();
            const bool ok = pred();
            l.lock();
            return ok;
        });
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::map<std::string, Signal> seen_;
    std::optional<double> name_ms_;
    std::size_t total_ = 0;
};

// ---- /proc ------------------------------------------------------------------

struct ProcStat {
    long rss_kib = 0, rss_anon_kib = 0, rss_file_kib = 0, hwm_kib = 0;
    long voluntary = 0, involuntary = 0;  // summed over all threads
    int threads = 0;
};

long status_field(const std::string& text, const std::string& key) {
    auto at = text.find("\n" + key + ":");
    if (at == std::string::npos) return 0;
    return std::atol(text.c_str() + at + key.size() + 2);
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return "\n" + s.str();
}

ProcStat proc_stat(pid_t pid) {
    ProcStat st;
    const fs::path base = "/proc/" + std::to_string(pid);
    const std::string status = slurp(base / "status");
    st.rss_kib = status_field(status, "VmRSS");
    st.rss_anon_kib = status_field(status, "RssAnon");
    st.rss_file_kib = status_field(status, "RssFile");
    st.hwm_kib = status_field(status, "VmHWM");
    std::error_code ec;
    for (const auto& t : fs::directory_iterator(base / "task", ec)) {
        const std::string ts = slurp(t.path() / "status");
        st.voluntary += status_field(ts, "voluntary_ctxt_switches");
        st.involuntary += status_field(ts, "nonvoluntary_ctxt_switches");
        ++st.threads;
    }
    return st;
}

// utime + stime in clock ticks.
long cpu_ticks(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto close = s.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream rest(s.substr(close + 2));
    std::string f;
    long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> f; ++i) {
        if (i == 14) utime = std::atol(f.c_str());
        if (i == 15) stime = std::atol(f.c_str());
    }
    return utime + stime;
}

// Time on a CPU of all the process's threads, in ms (schedstat counts ns,
// where utime and stime count 10 ms ticks: too coarse for one burst).
double cpu_ms(pid_t pid) {
    double ns = 0;
    std::error_code ec;
    for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
        std::ifstream in(t.path() / "schedstat");
        double one = 0;
        if (in >> one) ns += one;
    }
    return ns / 1e6;
}

// Until the process used no CPU for `quiet` (at most `limit`).
// Waits until the daemon has neither used CPU time nor been woken for
// `quiet`. CPU ticks alone (10 ms each) miss a short wake-up, such as the
// memory trim nictuned does once, 1 s after its last event: the idle window
// then counted that wake-up as an idle one.
double settle(pid_t pid, std::chrono::milliseconds quiet, std::chrono::milliseconds limit) {
    const auto activity = [&] {
        const ProcStat st = proc_stat(pid);
        return cpu_ticks(pid) + st.voluntary + st.involuntary;
    };
    const double t0 = now_ms();
    long last = activity();
    double since = now_ms();
    while (now_ms() - t0 < static_cast<double>(limit.count())) {
        std::this_thread::sleep_for(100ms);
        const long c = activity();
        if (c != last) {
            last = c;
            since = now_ms();
        } else if (now_ms() - since >= static_cast<double>(quiet.count())) {
            break;
        }
    }
    return now_ms() - t0;
}

Json stats(std::vector<double> xs) {
    if (xs.empty()) return Json::object();
    std::sort(xs.begin(), xs.end());
    auto pct = [&](double p) {
        // Nearest rank.
        std::size_t i =
            static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(xs.size())));
        return xs[std::clamp<std::size_t>(i, 1, xs.size()) - 1];
    };
    return Json{{"n", xs.size()}, {"min", xs.front()}, {"p50", pct(50)},
                {"p90", pct(90)}, {"p99", pct(99)},    {"max", xs.back()}};
}

// ---- the daemon ---------------------------------------------------------------

// A hotplug burst: `k` interfaces, each creation started `interval_us`
// after the one before (0: back to back, as fast as the kernel creates
// them). Written K or K@US.
struct Burst {
    int k = 0;
    int interval_us = 0;
    [[nodiscard]] std::string str() const {
        return "K=" + std::to_string(k) +
               (interval_us > 0 ? " paced " + std::to_string(interval_us) + " us" : "");
    }
};

struct Options {
    std::string nictuned, bus, config, profiles_dir, state_dir, work_dir;
    int bound = 512;
    int startup_reps = 3;
    std::vector<Burst> hotplug{{64, 0}, {512, 0}, {512, 1000}};
    int hotplug_reps = 3;
    int floor_reps = 3;
    int idle_seconds = 10;
    int audits = 10000;
    uint32_t mtu = 9000;
    // Time the bursts' links in effect too (EffectWatch). Off by default:
    // its thread competes for the CPUs (see BENCHMARKS.md, stop 36).
    bool effect_watch = false;
};

class Daemon {
  public:
    Daemon(const Options& o, const std::string& notify_path) {
        std::vector<std::string> args = {o.nictuned,     "--bus-address", o.bus,
                                         "--config",     o.config,        "--profiles-dir",
                                         o.profiles_dir, "--state-dir",   o.state_dir};
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e)
            if (!std::string_view(*e).starts_with("NOTIFY_SOCKET=")) env.emplace_back(*e);
        env.push_back("NOTIFY_SOCKET=" + notify_path);
        std::vector<char*> argv, envp;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto& e : env)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        const std::string log = o.work_dir + "/nictuned.log";
        const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        const pid_t parent = getpid();
        pid_ = fork();
        if (pid_ == 0) {
            if (log_fd >= 0) {
                dup2(log_fd, STDERR_FILENO);
                dup2(log_fd, STDOUT_FILENO);
            }
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent) _exit(1);
            execve(argv[0], argv.data(), envp.data());
            _exit(127);
        }
        if (log_fd >= 0) close(log_fd);
        if (pid_ < 0) die("fork failed");
    }
    ~Daemon() { stop(); }
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    [[nodiscard]] pid_t pid() const { return pid_; }
    bool alive() { return pid_ > 0 && waitpid(pid_, &status_, WNOHANG) == 0; }

    // SIGTERM, then SIGKILL after 10 s; returns the exit status (128+signal).
    int stop() {
        if (pid_ <= 0) return status_code_;
        kill(pid_, SIGTERM);
        for (int i = 0; i < 1000; ++i) {
            if (waitpid(pid_, &status_, WNOHANG) == pid_) {
                pid_ = -1;
                status_code_ = WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
                return status_code_;
            }
            std::this_thread::sleep_for(10ms);
        }
        kill(pid_, SIGKILL);
        waitpid(pid_, &status_, 0);
        pid_ = -1;
        status_code_ = 128 + SIGKILL;
        return status_code_;
    }

  private:
    pid_t pid_ = -1;
    int status_ = 0;
    int status_code_ = -1;
};

// The peer namespace (--peer-netns): when set, each veth pair puts its "b"
// end there, so that every pair adds exactly one interface to this namespace.
int g_peer_fd = -1;

// veth pairs giving `interfaces` interfaces in this namespace.
std::vector<std::pair<std::string, std::string>> pairs(const std::string& prefix, int interfaces) {
    std::vector<std::pair<std::string, std::string>> out;
    const int n = g_peer_fd >= 0 ? interfaces : (interfaces + 1) / 2;
    for (int i = 0; i < n; ++i)
        out.emplace_back(prefix + "a" + std::to_string(i), prefix + "b" + std::to_string(i));
    return out;
}

// Creates the pairs, each `interval_us` after the start of the one before
// (0: back to back); returns each interface's send time.
std::map<std::string, double> create(Rtnl& rt,
                                     const std::vector<std::pair<std::string, std::string>>& ps,
                                     int interval_us = 0) {
    std::map<std::string, double> t;
    const double start = now_ms();
    std::size_t i = 0;
    for (const auto& [a, b] : ps) {
        if (interval_us > 0) {
            const double due = start + static_cast<double>(i) * interval_us / 1000.0;
            const double wait = due - now_ms();
            if (wait > 0)
                std::this_thread::sleep_for(
                    std::chrono::microseconds(static_cast<long>(wait * 1000)));
        }
        ++i;
        const double s = now_ms();
        if (int e = rt.add_veth(a, b, g_peer_fd))
            die("cannot create veth " + a + ": " + std::strerror(e));
        t[a] = s;
        t[b] = s;
    }
    return t;
}

void destroy(Rtnl& rt, const std::vector<std::pair<std::string, std::string>>& ps) {
    for (const auto& p : ps)
        (void)rt.del_link(p.first);
}

void clear_dir(const std::string& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        fs::remove_all(e.path(), ec);
}

int notify_socket(const std::string& path) {
    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.size() >= sizeof a.sun_path) die("notify socket path too long");
    std::strcpy(a.sun_path, path.c_str());
    ::unlink(path.c_str());
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
        die(std::string("notify socket: ") + std::strerror(errno));
    return fd;
}

// Reads sd_notify datagrams until READY=1 arrives or the time runs out.
std::optional<double> await_ready(int fd, Daemon& d, double limit_ms) {
    const double t0 = now_ms();
    char buf[4096];
    while (now_ms() - t0 < limit_ms) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 100) > 0) {
            const ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
            if (n > 0) {
                const double t = now_ms();
                buf[n] = 0;
                if (std::string_view(buf).find("READY=1") != std::string_view::npos) return t;
            }
        }
        if (!d.alive()) return std::nullopt;
    }
    return std::nullopt;
}

std::vector<std::string> names_of(const std::vector<std::pair<std::string, std::string>>& ps) {
    std::vector<std::string> out;
    for (const auto& [a, b] : ps) {
        out.push_back(a);
        if (g_peer_fd < 0) out.push_back(b);
    }
    return out;
}

// Counts interfaces whose MTU is `mtu`.
int with_mtu(Rtnl& rt, const std::vector<std::string>& names, uint32_t mtu) {
    auto m = rt.mtus();
    int n = 0;
    for (const auto& name : names)
        if (auto it = m.find(name); it != m.end() && it->second == mtu) ++n;
    return n;
}

// Resident memory by mapping (file name, or [heap], [anon], ...), largest first.
Json rss_by_mapping(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/smaps");
    std::map<std::string, long> kib;
    std::string line, current = "[anon]";
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        // A mapping header starts with "start-end perms ...".
        if (std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < 17 &&
            line.find(':') > line.find(' ')) {
            std::istringstream h(line);
            std::string range, perms, offset, dev, inode, path;
            h >> range >> perms >> offset >> dev >> inode;
            std::getline(h >> std::ws, path);
            current = path.empty() ? "[anon]" : fs::path(path).filename().string();
            if (!path.empty() && path[0] == '[') current = path;
        } else if (line.starts_with("Rss:")) {
            kib[current] += std::atol(line.c_str() + 4);
        }
    }
    std::vector<std::pair<long, std::string>> v;
    for (auto& [k, n] : kib)
        if (n > 0) v.emplace_back(n, k);
    std::sort(v.rbegin(), v.rend());
    Json out = Json::array();
    for (const auto& [n, k] : v)
        out.push_back(Json{{"mapping", k}, {"rss_kib", n}});
    return out;
}

Json idle_phase(pid_t pid, int seconds) {
    const double settled = settle(pid, 1500ms, 30000ms);
    const ProcStat a = proc_stat(pid);
    const long cpu_a = cpu_ticks(pid);
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    const ProcStat b = proc_stat(pid);
    const long cpu_b = cpu_ticks(pid);
    return Json{{"settle_ms", settled},
                {"seconds", seconds},
                {"voluntary_switches", b.voluntary - a.voluntary},
                {"involuntary_switches", b.involuntary - a.involuntary},
                {"cpu_ticks", cpu_b - cpu_a},
                {"threads", b.threads},
                {"rss_kib", b.rss_kib},
                {"rss_anon_kib", b.rss_anon_kib},
                {"rss_file_kib", b.rss_file_kib},
                {"hwm_kib", b.hwm_kib},
                {"rss_by_mapping", rss_by_mapping(pid)}};
}

// "64,512,512@1000": bursts of K interfaces, K@US paced.
std::vector<Burst> burst_list(const std::string& s) {
    std::vector<Burst> out;
    std::istringstream in(s);
    std::string n;
    while (std::getline(in, n, ',')) {
        if (n.empty()) continue;
        Burst b;
        const auto at = n.find('@');
        const auto whole = [](std::string_view t, int& value) {
            const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
            return ec == std::errc() && end == t.data() + t.size();
        };
        const std::string_view text(n);
        const bool ok = whole(text.substr(0, at), b.k) &&
                        (at == std::string::npos || whole(text.substr(at + 1), b.interval_us));
        if (!ok || b.k < 2 || b.k > 4096 || b.interval_us < 0 || b.interval_us > 100000)
            die("--hotplug takes K or K@US: K 2..4096, US 0..100000; not " + n);
        out.push_back(b);
    }
    return out;
}

// ---- the phases ---------------------------------------------------------------

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto v = [&]() -> std::string {
            if (i + 1 >= argc) die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--nictuned")
            o.nictuned = v();
        else if (a == "--bus")
            o.bus = v();
        else if (a == "--config")
            o.config = v();
        else if (a == "--profiles-dir")
            o.profiles_dir = v();
        else if (a == "--state-dir")
            o.state_dir = v();
        else if (a == "--work-dir")
            o.work_dir = v();
        else if (a == "--bound")
            o.bound = std::clamp(std::atoi(v().c_str()), 0, 4096);
        else if (a == "--startup-reps")
            o.startup_reps = std::clamp(std::atoi(v().c_str()), 1, 20);
        else if (a == "--hotplug")
            o.hotplug = burst_list(v());
        else if (a == "--hotplug-reps")
            o.hotplug_reps = std::clamp(std::atoi(v().c_str()), 0, 20);
        else if (a == "--floor-reps")
            o.floor_reps = std::clamp(std::atoi(v().c_str()), 0, 20);
        else if (a == "--idle-seconds")
            o.idle_seconds = std::clamp(std::atoi(v().c_str()), 1, 120);
        else if (a == "--audits")
            o.audits = std::clamp(std::atoi(v().c_str()), 0, 100000);
        else if (a == "--peer-netns") {
            const std::string path = "/run/netns/" + v();
            g_peer_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (g_peer_fd < 0) die("cannot open " + path + ": " + std::strerror(errno));
        } else if (a == "--mtu")
            o.mtu = static_cast<uint32_t>(std::atoi(v().c_str()));
        else if (a == "--effect-watch")
            o.effect_watch = true;
        else
            die("unknown argument " + a);
    }
    if (o.nictuned.empty() || o.bus.empty() || o.config.empty() || o.profiles_dir.empty() ||
        o.state_dir.empty() || o.work_dir.empty())
        die("--nictuned, --bus, --config, --profiles-dir, --state-dir and --work-dir are needed");
    return o;
}

// The private bus: signals arrive on a connection with its own event-loop
// thread (into the Recorder); calls go over a second connection.
struct BusSide {
    std::unique_ptr<sdbus::IConnection> signals;
    std::unique_ptr<sdbus::IConnection> calls;
    std::unique_ptr<sdbus::IProxy> manager;
    std::unique_ptr<sdbus::IProxy> bus;

    BusSide(const std::string& address, Recorder& rec)
        : signals(sdbus::createSessionBusConnectionWithAddress(address)),
          calls(sdbus::createSessionBusConnectionWithAddress(address)) {
        calls->setMethodCallTimeout(120s);
        manager = sdbus::createProxy(*signals, kBusName, kPath);
        manager->uponSignal("Applied").onInterface(kIface).call(
            [&rec](const std::string& transaction, const std::string& iface, const std::string&,
                   const std::string& result,
                   const std::string& reason) { rec.applied(transaction, iface, result, reason); });
        manager->finishRegistration();
        bus = sdbus::createProxy(*signals, "org.freedesktop.DBus", "/org/freedesktop/DBus");
        bus->uponSignal("NameOwnerChanged")
            .onInterface("org.freedesktop.DBus")
            .call([&rec](const std::string& name, const std::string&, const std::string& owner) {
                if (name == kBusName && !owner.empty()) rec.name_owned();
            });
        bus->finishRegistration();
        signals->enterEventLoopAsync();
    }
    ~BusSide() { signals->leaveEventLoop(); }
    BusSide(const BusSide&) = delete;
    BusSide& operator=(const BusSide&) = delete;
};

// What every phase works with.
struct Bench {
    const Options& o;
    Recorder& rec;
    Rtnl& rt;
    std::string notify_path;
    int notify_fd = -1;
    std::vector<std::pair<std::string, std::string>> bound;
    std::vector<std::string> bound_names;
};

// 1. One start-up with fresh bound interfaces and an empty state directory;
// `daemon` is the running nictuned afterwards.
Json startup_once(Bench& b, std::unique_ptr<Daemon>& daemon) {
    if (daemon) {
        daemon->stop();
        daemon.reset();
        destroy(b.rt, b.bound);
    }
    clear_dir(b.o.state_dir);
    create(b.rt, b.bound);
    // Let the kernel's own follow-up work (and the system) quieten.
    std::this_thread::sleep_for(500ms);
    b.rec.clear();
    const double t0 = now_ms();
    daemon = std::make_unique<Daemon>(b.o, b.notify_path);
    auto ready = await_ready(b.notify_fd, *daemon, 120000);
    if (!ready)
        die("nictuned did not send READY=1 within 120 s (see " + b.o.work_dir + "/nictuned.log)");
    const std::size_t want = b.bound_names.size();
    b.rec.wait([&] { return b.rec.count("boot") >= want; }, 60000ms);
    double last = 0;
    int applied = 0, other = 0, missing = 0;
    for (const auto& n : b.bound_names) {
        auto s = b.rec.get("boot", n);
        if (!s) {
            ++missing;
            continue;
        }
        last = std::max(last, s->t_ms - t0);
        (s->result == "applied" ? applied : other)++;
    }
    auto name = b.rec.name_ms();
    const int ok_mtu = with_mtu(b.rt, b.bound_names, b.o.mtu);
    return Json{{"bound", b.bound_names.size()},
                {"bus_name_ms", name ? Json(*name - t0) : Json(nullptr)},
                {"ready_ms", *ready - t0},
                {"last_applied_signal_ms", last},
                {"applied", applied},
                {"not_applied", other},
                {"no_signal", missing},
                {"mtu_verified", ok_mtu}};
}

Json startup_phase(Bench& b, std::unique_ptr<Daemon>& daemon) {
    Json startup = Json::array();
    for (int r = 0; r < b.o.startup_reps; ++r) {
        Json one = startup_once(b, daemon);
        say("start-up " + std::to_string(r + 1) + ": " + one.dump());
        startup.push_back(std::move(one));
    }
    return startup;
}

// How the links of a burst were grouped: nictuned's transactions (links
// per transaction id) or the floor's tune() calls. Both take every link
// heard of since the last round, so one link per round means keeping up
// with the creating process and the largest round says how far behind it
// fell.
Json batch_stats(const std::vector<std::size_t>& sizes) {
    std::size_t largest = 0, single = 0;
    for (std::size_t n : sizes) {
        largest = std::max(largest, n);
        single += n == 1 ? 1 : 0;
    }
    return Json{{"count", sizes.size()}, {"largest", largest}, {"of_one", single}};
}

Json batch_stats(const std::map<std::string, std::size_t>& per_transaction) {
    std::vector<std::size_t> sizes;
    for (const auto& [tx, n] : per_transaction)
        sizes.push_back(n);
    return batch_stats(sizes);
}

// The links' times in effect (EffectWatch) once every one of `names` was
// heard of, or a second after the tuner's last link; latencies from each
// link's creation.
struct Effect {
    std::vector<double> latency;
    std::map<std::string, double> at;
    bool lost = false;
};
Effect effect_of(EffectWatch* watch, const std::vector<std::string>& names,
                 std::map<std::string, double>& created) {
    Effect e;
    if (!watch) return e;
    const double t0 = now_ms();
    for (;;) {
        e.at = watch->in_effect();
        const bool all = std::all_of(names.begin(), names.end(),
                                     [&](const std::string& n) { return e.at.contains(n); });
        if (all || now_ms() - t0 > 1000) break;
        std::this_thread::sleep_for(5ms);
    }
    for (const auto& n : names)
        if (auto it = e.at.find(n); it != e.at.end()) e.latency.push_back(it->second - created[n]);
    e.lost = watch->lost();
    return e;
}

// 3. One burst of `k` new interfaces; latency from each one's RTM_NEWLINK
// to its Applied signal (reason hotplug).
Json hotplug_burst(Bench& b, Daemon& daemon, EffectWatch* watch, const Burst& burst) {
    const auto ps = pairs("hp", burst.k);
    const auto names = names_of(ps);
    settle(daemon.pid(), 500ms, 20000ms);
    b.rec.clear();
    if (watch) watch->clear();
    const double cpu0 = cpu_ms(daemon.pid());
    const double t0 = now_ms();
    auto created = create(b.rt, ps, burst.interval_us);
    const double t_created = now_ms();
    b.rec.wait([&] { return b.rec.count("hotplug") >= names.size(); }, 120000ms);
    const double t_waited = now_ms();
    const double cpu = cpu_ms(daemon.pid()) - cpu0;
    std::vector<double> lat;
    double last = 0;
    int applied = 0, other = 0, missing = 0;
    std::map<std::string, std::size_t> per_transaction;
    for (const auto& n : names) {
        auto s = b.rec.get("hotplug", n);
        if (!s) {
            ++missing;
            continue;
        }
        ++per_transaction[s->transaction];
        (s->result == "applied" ? applied : other)++;
        lat.push_back(s->t_ms - created[n]);
        last = std::max(last, s->t_ms);
    }
    const int ok_mtu = with_mtu(b.rt, names, b.o.mtu);
    Json one{{"k", names.size()},
             {"interval_us", burst.interval_us},
             {"create_ms", t_created - t0},
             {"total_ms", last > 0 ? last - t0 : t_waited - t0},
             {"latency_ms", stats(lat)},
             {"batches", batch_stats(per_transaction)},
             {"cpu_ms", cpu},
             {"applied", applied},
             {"not_applied", other},
             {"no_signal", missing},
             {"mtu_verified", ok_mtu},
             {"daemon_alive", daemon.alive()}};
    if (watch) {
        const Effect effect = effect_of(watch, names, created);
        // How long after its settings were in effect each Applied signal came.
        std::vector<double> signal_after;
        for (const auto& n : names) {
            auto s = b.rec.get("hotplug", n);
            auto e = effect.at.find(n);
            if (s && e != effect.at.end()) signal_after.push_back(s->t_ms - e->second);
        }
        one["in_effect_ms"] = stats(effect.latency);
        one["in_effect_seen"] = effect.latency.size();
        one["effect_lost"] = effect.lost;
        one["signal_after_effect_ms"] = stats(signal_after);
    }
    destroy(b.rt, ps);
    return one;
}

Json hotplug_phase(Bench& b, Daemon& daemon) {
    Json hot = Json::array();
    std::optional<EffectWatch> watch;
    if (b.o.effect_watch) watch.emplace("hpa", b.o.mtu);
    for (const Burst& burst : b.o.hotplug) {
        for (int r = 0; r < b.o.hotplug_reps; ++r) {
            Json one = hotplug_burst(b, daemon, watch ? &*watch : nullptr, burst);
            say("hotplug " + burst.str() + " rep " + std::to_string(r + 1) + ": " + one.dump());
            hot.push_back(std::move(one));
            if (!daemon.alive()) die("nictuned died during the hotplug burst");
        }
    }
    return hot;
}

// 4. --audits Audit calls over D-Bus of two bound interfaces; RSS sampled at
// 0, 100 and every 1000 calls.
Json audit_phase(Bench& b, sdbus::IConnection& calls, pid_t pid) {
    settle(pid, 500ms, 20000ms);
    auto proxy = sdbus::createProxy(calls, kBusName, kPath);
    const std::vector<std::string> ifaces = {b.bound_names.at(0), b.bound_names.at(1)};
    Json samples = Json::array();
    std::vector<double> call_ms;
    auto sample = [&](int done) {
        const ProcStat s = proc_stat(pid);
        samples.push_back(Json{{"audits", done},
                               {"rss_kib", s.rss_kib},
                               {"rss_anon_kib", s.rss_anon_kib},
                               {"hwm_kib", s.hwm_kib}});
    };
    sample(0);
    const double t0 = now_ms();
    int errors = 0;
    std::string first_error;
    for (int i = 1; i <= b.o.audits; ++i) {
        std::vector<sdbus::Struct<std::string, std::string, std::string, std::string, std::string,
                                  std::string, std::string>>
            findings;
        std::string report;
        const double s = now_ms();
        try {
            proxy->callMethod("Audit")
                .onInterface(kIface)
                .withArguments(ifaces, std::string(), std::map<std::string, sdbus::Variant>{})
                .storeResultsTo(findings, report);
        } catch (const sdbus::Error& e) {
            if (errors++ == 0) first_error = e.getName() + ": " + e.getMessage();
        }
        call_ms.push_back(now_ms() - s);
        if (i == 100 || i % 1000 == 0 || i == b.o.audits) sample(i);
        // Bounded in time as well as in count.
        if (now_ms() - t0 > 600000) {
            sample(i);
            break;
        }
    }
    const double secs = (now_ms() - t0) / 1e3;
    // Growth after a warm-up (the first 1000 audits, or the first 100 of
    // a shorter run): caches, allocator arenas and the bus settle first.
    long rss_warm = samples.front()["rss_kib"].get<long>();
    for (const auto& s : samples)
        if (s["audits"].get<int>() <= 1000 && s["audits"].get<int>() < b.o.audits)
            rss_warm = s["rss_kib"].get<long>();
    const long rss_last = samples.back()["rss_kib"].get<long>();
    say("audits: " + std::to_string(samples.back()["audits"].get<int>()) + " in " +
        std::to_string(secs) + " s, RSS " + samples.front()["rss_kib"].dump() + " -> " +
        std::to_string(rss_last) + " KiB");
    return Json{{"count", samples.back()["audits"]},
                {"interfaces", ifaces},
                {"seconds", secs},
                {"errors", errors},
                {"first_error", first_error},
                {"call_ms", stats(call_ms)},
                {"rss_samples", samples},
                {"rss_growth_after_warmup_kib", rss_last - rss_warm}};
}

// 6. One burst of the hotplug floor: the same creation, tuned by FloorTuner;
// latency from each RTM_NEWLINK to the ACKs of its SETs (with a Signaller:
// to the arrival of its Applied signal).
Json floor_burst(Bench& b, FloorTuner& tuner, EffectWatch* watch, const Burst& burst) {
    const auto ps = pairs("hf", burst.k);
    const auto names = names_of(ps);
    std::this_thread::sleep_for(200ms);
    tuner.clear();
    b.rec.clear();
    if (watch) watch->clear();
    const double cpu0 = tuner.cpu_ms();
    const double t0 = now_ms();
    auto created = create(b.rt, ps, burst.interval_us);
    const double t_created = now_ms();
    std::map<std::string, double> done;
    while (now_ms() - t_created < 60000) {
        done = tuner.done();
        if (done.size() >= names.size()) break;
        std::this_thread::sleep_for(5ms);
    }
    // A signalling floor's links count when their signals arrive, as
    // nictuned's do.
    if (tuner.signals()) b.rec.wait([&] { return b.rec.count("hotplug") >= done.size(); }, 10000ms);
    const double cpu = tuner.cpu_ms() - cpu0;
    std::vector<double> lat;
    double last = 0;
    for (const auto& n : names) {
        std::optional<double> at;
        if (!tuner.signals()) {
            if (auto it = done.find(n); it != done.end()) at = it->second;
        } else if (auto sig = b.rec.get("hotplug", n)) {
            at = sig->t_ms;
        }
        if (!at) continue;
        lat.push_back(*at - created[n]);
        last = std::max(last, *at);
    }
    const Effect effect = effect_of(watch, names, created);
    const int ok_mtu = with_mtu(b.rt, names, b.o.mtu);
    Json one{{"k", names.size()},
             {"interval_us", burst.interval_us},
             {"create_ms", t_created - t0},
             {"total_ms", last > 0 ? last - t0 : 0.0},
             {"latency_ms", stats(lat)},
             {"batches", batch_stats(tuner.batches())},
             {"cpu_ms", cpu},
             {"tuned", lat.size()},
             {"set_errors", tuner.failures()},
             {"mtu_verified", ok_mtu}};
    if (watch) {
        one["in_effect_ms"] = stats(effect.latency);
        one["in_effect_seen"] = effect.latency.size();
        one["effect_lost"] = effect.lost;
    }
    destroy(b.rt, ps);
    return one;
}

Json hotplug_floor_phase(Bench& b, FloorTuner::Reads reads, bool signals = false) {
    Json floor = Json::array();
    if (b.o.floor_reps <= 0) return floor;
    std::optional<Signaller> signaller;
    if (signals) signaller.emplace(b.o.bus);
    FloorTuner tuner("hfa", b.o.mtu, reads, signaller ? &*signaller : nullptr);
    std::optional<EffectWatch> watch;
    if (b.o.effect_watch) watch.emplace("hfa", b.o.mtu);
    using Reads = FloorTuner::Reads;
    const char* kind = reads == Reads::None        ? " "
                       : reads == Reads::Pipelined ? " with reads "
                       : reads == Reads::OneByOne  ? " with one-by-one reads "
                                                   : " with nictuned's requests ";
    for (const Burst& burst : b.o.hotplug) {
        for (int r = 0; r < b.o.floor_reps; ++r) {
            Json one = floor_burst(b, tuner, watch ? &*watch : nullptr, burst);
            say(std::string("hotplug floor") + kind + (signals ? "and its signals " : "") +
                burst.str() + " rep " + std::to_string(r + 1) + ": " + one.dump());
            floor.push_back(std::move(one));
        }
    }
    return floor;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_options(argc, argv);
    Recorder rec;
    BusSide bus(o.bus, rec);
    Rtnl rt;
    Bench b{o, rec, rt, o.work_dir + "/notify.sock", -1, pairs("sb", o.bound), {}};
    b.notify_fd = notify_socket(b.notify_path);
    b.bound_names = names_of(b.bound);

    Json out;
    std::unique_ptr<Daemon> daemon;
    out["startup"] = startup_phase(b, daemon);  // 1.
    const pid_t pid = daemon->pid();
    out["daemon_pid"] = pid;
    out["idle"] = idle_phase(pid, o.idle_seconds);  // 2.
    say("idle: " + out["idle"].dump());
    out["hotplug"] = hotplug_phase(b, *daemon);                         // 3.
    if (o.audits > 0) out["audits"] = audit_phase(b, *bus.calls, pid);  // 4.
    out["idle_after"] = idle_phase(pid, o.idle_seconds);                // 5.
    say("idle after activity: " + out["idle_after"].dump());
    const double t_stop = now_ms();
    out["exit_status"] = daemon->stop();
    out["stop_ms"] = now_ms() - t_stop;
    daemon.reset();
    using Reads = FloorTuner::Reads;
    out["hotplug_floor"] = hotplug_floor_phase(b, Reads::None);             // 6.
    out["hotplug_floor_reads"] = hotplug_floor_phase(b, Reads::Pipelined);  // 7.
    out["hotplug_floor_reads_one_by_one"] = hotplug_floor_phase(b, Reads::OneByOne);
    out["hotplug_floor_as_nictune"] = hotplug_floor_phase(b, Reads::AsNictune);
    out["hotplug_floor_as_nictune_signals"] = hotplug_floor_phase(b, Reads::AsNictune, true);

    destroy(rt, b.bound);
    close(b.notify_fd);
    ::unlink(b.notify_path.c_str());
    std::printf("%s\n", out.dump(1).c_str());
    return 0;
}
