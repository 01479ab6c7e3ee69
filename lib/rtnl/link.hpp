// rtnetlink links: one RTM_GETLINK dump for every interface, per-link GET,
// RTM_NEWLINK changes (MTU, txqueuelen) with the kernel's extack text, and
// RTNLGRP_LINK events. Messages are built and decoded here (decode_link, for
// dumps and events alike; libnl 3.7 had no getter for IFLA_MIN_MTU/MAX_MTU);
// netlink/'s Channel sends them and matches the answers.
//
// Names (the link's and its alternative names) are in nictune's text form
// (escape_name, util/strings.hpp) on this side of the interface: decode_link
// escapes what the kernel sends and get_link() sends the bytes a name stands for.
#pragma once

#include <linux/netlink.h>
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/nic_state.hpp"
#include "netlink/channel.hpp"
#include "util/error.hpp"

namespace nictune::rtnl {

struct Link {
    int ifindex = 0;
    std::string name;                   // IFLA_IFNAME, text form
    std::vector<std::string> altnames;  // IFLA_PROP_LIST/IFLA_ALT_IFNAME, text form, kernel order
    std::string mac;  // lower-case "aa:bb:cc:dd:ee:ff"; empty when the link has no address
    std::optional<std::string> perm_mac;
    std::optional<std::string> kind;        // IFLA_LINKINFO/IFLA_INFO_KIND
    std::optional<std::string> parent_bus;  // IFLA_PARENT_DEV_BUS_NAME
    std::optional<std::string> parent_dev;  // IFLA_PARENT_DEV_NAME
    uint32_t flags = 0;                     // IFF_*
    // [link] keys: LinkMtu, LinkMinMtu, LinkMaxMtu, LinkTxqueuelen, LinkOperstate, LinkCarrier
    DeviceValues values;
};

// RTM_NEWLINK / RTM_DELLINK message -> Link. Unknown attributes are ignored,
// truncated ones rejected.
Result<Link> decode_link(const nlmsghdr* nlh);

// The kernel's answer to "which way to this address" (RTM_GETROUTE, what
// `ip route get` asks).
struct Route {
    uint8_t type = 0;                    // RTN_UNICAST, RTN_LOCAL, RTN_BROADCAST, ...
    int oif = 0;                         // RTA_OIF: the interface packets leave by
    std::optional<std::string> gateway;  // RTA_GATEWAY, numeric
    std::optional<std::string> prefsrc;  // RTA_PREFSRC, numeric
};

// RTM_NEWROUTE message -> Route. Unknown attributes are ignored, truncated
// ones rejected.
Result<Route> decode_route(const nlmsghdr* nlh);

struct LinkChange {
    std::optional<uint32_t> mtu;
    std::optional<uint32_t> txqueuelen;
};

class Socket {
  public:
    static Result<std::unique_ptr<Socket>> open();

    using LinkFn = std::function<void(Link&&)>;

    // One RTM_GETLINK dump: every link, handed over once the dump is
    // consistent (collected into the vector that is returned, not moved
    // again: a Link holds every [link] value).
    Result<std::vector<Link>> dump_links();
    Result<void> dump_links(const LinkFn& on_link);
    // The same dump, each link handed over as its message is decoded (a
    // caller that keeps a few of many links holds no vector of them all).
    // When the kernel's list changed during the dump, `restart` is called
    // and the links come again from the first.
    Result<void> stream_links(const LinkFn& on_link, const std::function<void()>& restart);
    // One link by name or alternative name (text form; the kernel resolves
    // both); Errc::NoSuchInterface if it does not exist.
    Result<Link> get_link(const std::string& name);
    Result<Link> get_link(int ifindex);
    // Applies the change; errors carry errno and the kernel's extack text.
    Result<void> change_link(int ifindex, const LinkChange& change);
    // Many changes pipelined (several messages per datagram, ACKs collected
    // afterwards): one result per change, in order.
    std::vector<Result<void>> change_links(std::span<const std::pair<int, LinkChange>> changes);

    // The route the kernel would use to reach `dst` (AF_INET or AF_INET6).
    // `oif` > 0 asks for the way out of that interface (the zone of a
    // link-local address). "No route" is Errc::Kernel with ENETUNREACH or
    // EHOSTUNREACH.
    Result<Route> route_to(const sockaddr* dst, int oif = 0);

    // Event socket: joins RTNLGRP_LINK; read with receive_events() on fd().
    // `queue_bytes`: the receive queue asked for (SO_RCVBUFFORCE with
    // CAP_NET_ADMIN, else SO_RCVBUF, which net.core.rmem_max caps): room
    // for a burst before the kernel drops events.
    static constexpr int kDefaultEventQueueBytes = 4 * 1024 * 1024;
    Result<void> subscribe_links(int queue_bytes = kDefaultEventQueueBytes);
    // Leaves the group and drops what is queued (netlink::Channel::leave);
    // subscribe_links(0) joins it again with the same queue.
    Result<void> unsubscribe_links();
    [[nodiscard]] int fd() const;
    // Reads what is queued without blocking. `deleted` is true for RTM_DELLINK.
    // ENOBUFS is returned as Errc::Io with sys_errno ENOBUFS (resynchronise).
    Result<void> receive_events(const std::function<void(Link&&, bool deleted)>& on_event);
    // Frees the receive buffer until the next read (netlink::Channel).
    void release_buffer() noexcept { nl_.release_buffer(); }

  private:
    explicit Socket(netlink::Channel nl) : nl_(std::move(nl)) {}
    // A GET of one link (`request` built, NLM_F_ACK and the stats filter
    // added here).
    Result<Link> get_one(nlmsghdr* request, const std::string& context);
    netlink::Channel nl_;
};

}  // namespace nictune::rtnl
