// The SETs of the benchmark profile and nothing else, over libmnl: the MTU
// (rtnetlink), channels rx/tx and the features rx-gro and tx-tcp*-segmentation
// (ethtool netlink; "tso" in the profile), pipelined per family in windows of
// 64 requests, one ACK each. What bench/'s floors send: the apply floor
// (floor.cpp --set) and the hotplug floor (daemon_bench.cpp's FloorTuner).
#pragma once

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bench {

struct SetValues {
    uint32_t mtu = 0;
    uint32_t rx = 0, tx = 0;  // channels
    bool gro = false, tso = false;
};

// Calls f(attr) for each top-level attribute after `offset` bytes of header.
template <class F>
void each_attr(const nlmsghdr* nlh, std::size_t offset, F&& f) {
    const auto* attr = static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(nlh, offset));
    const char* tail = static_cast<const char*>(mnl_nlmsg_get_payload_tail(nlh));
    int len = static_cast<int>(tail - reinterpret_cast<const char*>(attr));
    while (mnl_attr_ok(attr, len)) {
        f(attr);
        len -= NLA_ALIGN(attr->nla_len);
        attr = mnl_attr_next(attr);
    }
}

// Calls f(attr) for each attribute nested in `a`.
template <class F>
void each_nested(const nlattr* a, F&& f) {
    const auto* c = static_cast<const nlattr*>(mnl_attr_get_payload(a));
    int len = static_cast<int>(mnl_attr_get_payload_len(a));
    while (mnl_attr_ok(c, len)) {
        f(c);
        len -= NLA_ALIGN(c->nla_len);
        c = mnl_attr_next(c);
    }
}

// The ethtool generic netlink family's id (0: none), asked on `sock` (a
// NETLINK_GENERIC socket) with `buf` for the answer; with `monitor`, also
// the id of its "monitor" multicast group (0: none).
inline uint16_t ethtool_family(mnl_socket* sock, char* buf, std::size_t size,
                               uint32_t* monitor = nullptr) {
    alignas(nlmsghdr) char req[256];
    nlmsghdr* nlh = mnl_nlmsg_put_header(req);
    nlh->nlmsg_type = GENL_ID_CTRL;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    auto* g = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
    g->cmd = CTRL_CMD_GETFAMILY;
    g->version = 1;
    mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
    if (mnl_socket_sendto(sock, nlh, nlh->nlmsg_len) < 0) return 0;
    uint16_t id = 0;
    for (;;) {
        const ssize_t n = mnl_socket_recvfrom(sock, buf, size);
        if (n <= 0) return 0;
        int left = static_cast<int>(n);
        for (auto* h = reinterpret_cast<const nlmsghdr*>(buf); mnl_nlmsg_ok(h, left);
             h = mnl_nlmsg_next(h, &left)) {
            if (h->nlmsg_type == NLMSG_ERROR) return id;
            each_attr(h, sizeof(genlmsghdr), [&](const nlattr* a) {
                if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID) id = mnl_attr_get_u16(a);
                if (monitor == nullptr || mnl_attr_get_type(a) != CTRL_ATTR_MCAST_GROUPS) return;
                each_nested(a, [&](const nlattr* group) {
                    std::string name;
                    uint32_t group_id = 0;
                    each_nested(group, [&](const nlattr* f) {
                        if (mnl_attr_get_type(f) == CTRL_ATTR_MCAST_GRP_NAME)
                            name = mnl_attr_get_str(f);
                        if (mnl_attr_get_type(f) == CTRL_ATTR_MCAST_GRP_ID)
                            group_id = mnl_attr_get_u32(f);
                    });
                    if (name == ETHTOOL_MCGRP_MONITOR_NAME) *monitor = group_id;
                });
            });
        }
    }
}

class SetSender {
  public:
    // Opens its own rtnetlink and generic netlink sockets and resolves the
    // ethtool family; `error` says why it could not.
    explicit SetSender(std::string* error) : buf_(new char[kBuf]) {
        rt_ = open(NETLINK_ROUTE);
        eth_ = open(NETLINK_GENERIC);
        if (rt_ == nullptr || eth_ == nullptr) {
            *error = std::string("netlink socket: ") + std::strerror(errno);
            return;
        }
        family_ = resolve_family();
        if (family_ == 0) *error = "no ethtool netlink family";
    }
    ~SetSender() {
        for (auto* s : {rt_, eth_})
            if (s != nullptr) mnl_socket_close(s);
        if (ioctl_fd_ >= 0) close(ioctl_fd_);
    }
    SetSender(const SetSender&) = delete;
    SetSender& operator=(const SetSender&) = delete;

    // The channel maxima of one link (what "max" means in the profile).
    bool channel_max(int ifindex, uint32_t& rx, uint32_t& tx) {
        std::vector<char> win;
        put(win, [&](nlmsghdr* nlh) {
            ethtool_header(nlh, ETHTOOL_MSG_CHANNELS_GET, ifindex, 0);
            nlh->nlmsg_flags = NLM_F_REQUEST;
        });
        if (mnl_socket_sendto(eth_, win.data(), win.size()) < 0) return false;
        const ssize_t n = mnl_socket_recvfrom(eth_, buf_.get(), kBuf);
        if (n <= 0) return false;
        int left = static_cast<int>(n);
        bool found = false;
        for (auto* h = reinterpret_cast<const nlmsghdr*>(buf_.get()); mnl_nlmsg_ok(h, left);
             h = mnl_nlmsg_next(h, &left)) {
            if (h->nlmsg_type != family_) continue;
            each_attr(h, sizeof(genlmsghdr), [&](const nlattr* a) {
                if (mnl_attr_get_type(a) == ETHTOOL_A_CHANNELS_RX_MAX) rx = mnl_attr_get_u32(a);
                if (mnl_attr_get_type(a) == ETHTOOL_A_CHANNELS_TX_MAX) tx = mnl_attr_get_u32(a);
                found = true;
            });
        }
        return found;
    }

    // The kernel's feature names matching tx-tcp*-segmentation: what the
    // profile's "tso" stands for (nictune expands the same glob). Read once
    // (ETHTOOL_MSG_STRSET_GET of ETH_SS_FEATURES).
    const std::vector<std::string>& tso_features() {
        if (!tso_.empty()) return tso_;
        std::vector<char> win;
        put(win, [&](nlmsghdr* nlh) {
            ethtool_header(nlh, ETHTOOL_MSG_STRSET_GET, 0, 0);
            nlh->nlmsg_flags = NLM_F_REQUEST;
            nlattr* sets = mnl_attr_nest_start(nlh, ETHTOOL_A_STRSET_STRINGSETS);
            nlattr* set = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGSETS_STRINGSET);
            mnl_attr_put_u32(nlh, ETHTOOL_A_STRINGSET_ID, ETH_SS_FEATURES);
            mnl_attr_nest_end(nlh, set);
            mnl_attr_nest_end(nlh, sets);
        });
        if (mnl_socket_sendto(eth_, win.data(), win.size()) < 0) return tso_;
        const ssize_t n = mnl_socket_recvfrom(eth_, buf_.get(), kBuf);
        if (n <= 0) return tso_;
        int left = static_cast<int>(n);
        for (auto* h = reinterpret_cast<const nlmsghdr*>(buf_.get()); mnl_nlmsg_ok(h, left);
             h = mnl_nlmsg_next(h, &left)) {
            if (h->nlmsg_type != family_) continue;
            each_attr(h, sizeof(genlmsghdr), [&](const nlattr* sets) {
                if (mnl_attr_get_type(sets) != ETHTOOL_A_STRSET_STRINGSETS) return;
                each_nested(sets, [&](const nlattr* set) {
                    each_nested(set, [&](const nlattr* strings) {
                        if (mnl_attr_get_type(strings) != ETHTOOL_A_STRINGSET_STRINGS) return;
                        each_nested(strings, [&](const nlattr* str) {
                            each_nested(str, [&](const nlattr* field) {
                                if (mnl_attr_get_type(field) != ETHTOOL_A_STRING_VALUE) return;
                                const std::string name = mnl_attr_get_str(field);
                                if (name.starts_with("tx-tcp") && name.ends_with("-segmentation"))
                                    tso_.push_back(name);
                            });
                        });
                    });
                });
            });
        }
        return tso_;
    }

    // What a tuner that can roll back must read before it writes: the
    // channels and the features of every link (compact bitsets, as nictune
    // asks for them), pipelined per family like the SETs. The MTU's original
    // comes with the RTM_NEWLINK the tuner heard, so it costs no request.
    // The replies are received, not decoded. Returns how many requests the
    // kernel refused (or that got no answer).
    // With `one_by_one`, each request waits for its answer before the next
    // is sent, as a reader that asks one device at a time does.
    int read_originals(const std::vector<int>& ifindexes, bool one_by_one = false) {
        std::vector<char> ch, ft;
        int errors = 0;
        for (int idx : ifindexes) {
            put(ch, [&](nlmsghdr* nlh) { ethtool_header(nlh, ETHTOOL_MSG_CHANNELS_GET, idx, 0); });
            put(ft, [&](nlmsghdr* nlh) {
                ethtool_header(nlh, ETHTOOL_MSG_FEATURES_GET, idx, ETHTOOL_FLAG_COMPACT_BITSETS);
            });
            if (one_by_one) {
                errors += send_windows(eth_, ch) + send_windows(eth_, ft);
                ch.clear();
                ft.clear();
            }
        }
        return errors + send_windows(eth_, ch) + send_windows(eth_, ft);
    }

    // The three SETs for every link, one family after the other; returns how
    // many requests the kernel refused (or that got no answer).
    int send(const std::vector<int>& ifindexes, const SetValues& v) {
        std::vector<std::pair<std::string, bool>> features{{"rx-gro", v.gro}};
        for (const auto& name : tso_features())
            features.emplace_back(name, v.tso);
        std::vector<char> mtu, ch, ft;
        for (int idx : ifindexes) {
            put(mtu, [&](nlmsghdr* nlh) {
                nlh->nlmsg_type = RTM_NEWLINK;
                nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
                auto* ifi =
                    static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
                ifi->ifi_family = AF_UNSPEC;
                ifi->ifi_index = idx;
                mnl_attr_put_u32(nlh, IFLA_MTU, v.mtu);
            });
            put(ch, [&](nlmsghdr* nlh) {
                ethtool_header(nlh, ETHTOOL_MSG_CHANNELS_SET, idx);
                mnl_attr_put_u32(nlh, ETHTOOL_A_CHANNELS_RX_COUNT, v.rx);
                mnl_attr_put_u32(nlh, ETHTOOL_A_CHANNELS_TX_COUNT, v.tx);
            });
            put(ft, [&](nlmsghdr* nlh) {
                ethtool_header(nlh, ETHTOOL_MSG_FEATURES_SET, idx);
                // A verbose bitset without NOMASK: only the named bits change.
                nlattr* wanted = mnl_attr_nest_start(nlh, ETHTOOL_A_FEATURES_WANTED);
                nlattr* bits = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS);
                for (const auto& [feature, on] : features) {
                    nlattr* bit = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS_BIT);
                    mnl_attr_put_strz(nlh, ETHTOOL_A_BITSET_BIT_NAME, feature.c_str());
                    if (on) mnl_attr_put(nlh, ETHTOOL_A_BITSET_BIT_VALUE, 0, nullptr);
                    mnl_attr_nest_end(nlh, bit);
                }
                mnl_attr_nest_end(nlh, bits);
                mnl_attr_nest_end(nlh, wanted);
            });
        }
        int errors = 0;
        for (auto [sock, win] : {std::pair{rt_, &mtu}, std::pair{eth_, &ch}, std::pair{eth_, &ft}})
            errors += send_windows(sock, *win);
        return errors;
    }

    // The requests nictuned sends for a new link before its SETs, each
    // answer awaited before the next request: its channels and features,
    // and the driver's identity (the ETHTOOL_GDRVINFO ioctl, which decides
    // a binding by driver); the link itself came with the RTM_NEWLINK, as
    // nictuned takes it. Six requests under the RTNL lock per link with the
    // SETs, as nictuned's; nothing decoded, nothing saved. Returns how many
    // failed.
    int read_as_nictune(const std::vector<std::pair<int, std::string>>& links) {
        int errors = 0;
        for (const auto& [idx, name] : links) {
            errors += read_originals({idx}, true);
            ethtool_drvinfo info{};
            info.cmd = ETHTOOL_GDRVINFO;
            ifreq ifr{};
            std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
            ifr.ifr_data = reinterpret_cast<char*>(&info);
            if (ioctl_fd_ < 0) ioctl_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (ioctl(ioctl_fd_, SIOCETHTOOL, &ifr) < 0) ++errors;
        }
        return errors;
    }

  private:
    static constexpr std::size_t kBuf = 256 * 1024;
    int ioctl_fd_ = -1;
    // Each outstanding ACK takes receive buffer; more than it holds and the
    // kernel drops them.
    static constexpr std::size_t kWindow = 64;

    static mnl_socket* open(int bus) {
        mnl_socket* s = mnl_socket_open(bus);
        if (s != nullptr && mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
            mnl_socket_close(s);
            return nullptr;
        }
        return s;
    }

    uint16_t resolve_family() { return ethtool_family(eth_, buf_.get(), kBuf); }

    // ifindex 0: no device (a global string set).
    void ethtool_header(nlmsghdr* nlh, uint8_t cmd, int ifindex,
                        uint32_t flags = ETHTOOL_FLAG_OMIT_REPLY) const {
        nlh->nlmsg_type = family_;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        auto* g = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
        g->cmd = cmd;
        g->version = ETHTOOL_GENL_VERSION;
        nlattr* hdr = mnl_attr_nest_start(nlh, 1);  // ETHTOOL_A_*_HEADER
        if (ifindex > 0)
            mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, static_cast<uint32_t>(ifindex));
        if (flags != 0) mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, flags);
        mnl_attr_nest_end(nlh, hdr);
    }

    // Appends one request to `win`.
    void put(std::vector<char>& win, const std::function<void(nlmsghdr*)>& fill) {
        alignas(nlmsghdr) char one[1024];
        nlmsghdr* nlh = mnl_nlmsg_put_header(one);
        nlh->nlmsg_seq = ++seq_;
        fill(nlh);
        win.insert(win.end(), one, one + NLMSG_ALIGN(nlh->nlmsg_len));
    }

    // Sends `all` in windows of kWindow requests, each window's ACKs
    // collected (and any replies received) before the next; the count of
    // errors.
    int send_windows(mnl_socket* s, const std::vector<char>& all) {
        int errors = 0;
        std::size_t off = 0;
        while (off < all.size()) {
            std::size_t end = off, count = 0;
            while (end < all.size() && count < kWindow) {
                end += NLMSG_ALIGN(reinterpret_cast<const nlmsghdr*>(all.data() + end)->nlmsg_len);
                ++count;
            }
            if (mnl_socket_sendto(s, all.data() + off, end - off) < 0) {
                errors += static_cast<int>(count);
            } else {
                std::size_t acked = 0;
                while (acked < count) {
                    const ssize_t n = mnl_socket_recvfrom(s, buf_.get(), kBuf);
                    if (n <= 0) {
                        errors += static_cast<int>(count - acked);
                        break;
                    }
                    int left = static_cast<int>(n);
                    for (auto* h = reinterpret_cast<const nlmsghdr*>(buf_.get());
                         mnl_nlmsg_ok(h, left); h = mnl_nlmsg_next(h, &left)) {
                        if (h->nlmsg_type != NLMSG_ERROR) continue;
                        ++acked;
                        const auto* e = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(h));
                        if (e->error != 0) ++errors;
                    }
                }
            }
            off = end;
        }
        return errors;
    }

    std::unique_ptr<char[]> buf_;
    mnl_socket* rt_ = nullptr;
    mnl_socket* eth_ = nullptr;
    uint16_t family_ = 0;
    uint32_t seq_ = 0;
    std::vector<std::string> tso_;
};

}  // namespace bench
