// ethtool generic netlink: family lookup, requests, dumps, SETs and the
// "monitor" multicast group, over netlink/'s Channel (which matches replies
// and ACKs, reads the kernel's extack text and batches SETs).
//
// The socket lives in the network namespace of the thread that opened it.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/nic_state.hpp"
#include "netlink/channel.hpp"
#include "util/error.hpp"

namespace nictune::ethnl {

// Called once per reply message of a GET or dump; the message is only valid
// during the call. Returning an error stops the request and is returned by it.
using ReplyFn = netlink::MessageFn;

// Appends the request's attributes after the header nest (see codecs.hpp).
using BuildFn = std::function<void(nlmsghdr*)>;

class Socket {
  public:
    // Opens a NETLINK_GENERIC socket, resolves the "ethtool" family and its
    // "monitor" group, and turns on extended ACKs.
    static Result<std::unique_ptr<Socket>> open();

    [[nodiscard]] uint16_t family_id() const { return family_; }
    [[nodiscard]] uint32_t monitor_group() const { return monitor_group_; }

    // One dump request for every device in the namespace. Devices whose
    // driver does not support the family are silently skipped by the kernel.
    // header_flags: ETHTOOL_FLAG_* for the request header; pass
    // request_flags(section) (codecs.hpp) so that FEATURES and LINKMODES
    // come with compact bitsets.
    Result<void> dump(uint8_t cmd, uint32_t header_flags, const ReplyFn& on_reply);

    // GET for one device. ENODEV -> Errc::NoSuchInterface, EOPNOTSUPP ->
    // Errc::Unsupported; the kernel's extack text is in Error::kernel_message.
    Result<void> get(uint8_t cmd, int ifindex, uint32_t header_flags, const ReplyFn& on_reply);

    // GETs of `cmd` for each of `ifindexes`, pipelined as set_many() sends
    // SETs (several per datagram, at most kGetWindow): one result per
    // device, in order, as get() gives it; `on_reply` gets each reply with
    // the device's index. Each awaited GET of a new link waits for the RTNL
    // lock behind whoever holds it (a burst of link creations); a window
    // waits once.
    static constexpr std::size_t kGetWindow = 32;
    std::vector<Result<void>> get_many(uint8_t cmd, uint32_t header_flags,
                                       std::span<const int> ifindexes,
                                       const netlink::IndexedMessageFn& on_reply);

    // A SET (or ACT) request for one device, waiting for its ACK.
    Result<void> set(uint8_t cmd, int ifindex, const BuildFn& build);

    // Many SETs of one command, pipelined (several per datagram, ACKs
    // collected after): one result per request, in order.
    struct SetRequest {
        int ifindex = 0;
        BuildFn build;
    };
    std::vector<Result<void>> set_many(uint8_t cmd, std::span<const SetRequest> reqs);

    // The kernel's feature names (string set ETH_SS_FEATURES), read once and
    // cached for the life of the socket.
    Result<std::shared_ptr<const FeatureNames>> feature_names();
    // Another global string set (ETH_SS_LINK_MODES, ...), read once and cached.
    Result<std::shared_ptr<const FeatureNames>> global_strings(uint32_t set_id);

    // A device's own string set (ETH_SS_PRIV_FLAGS, ...), not cached: it
    // belongs to the driver bound now.
    Result<FeatureNames> device_strings(int ifindex, uint32_t set_id);
    // The device's private flags by name (PRIVFLAGS_GET and its string set);
    // Errc::Unsupported when the driver has none.
    Result<std::vector<PrivateFlag>> private_flags(int ifindex);

    // Joins the "monitor" multicast group; notifications are then read with
    // receive_notifications() on fd(). Use a socket of its own for the monitor:
    // notifications that arrive while a request on the same socket waits for
    // its reply are dropped.
    // `queue_bytes` as for rtnl::Socket::subscribe_links.
    static constexpr int kDefaultMonitorQueueBytes = 4 * 1024 * 1024;
    Result<void> subscribe_monitor(int queue_bytes = kDefaultMonitorQueueBytes);
    // Leaves the group and drops what is queued (netlink::Channel::leave);
    // subscribe_monitor(0) joins it again with the same queue.
    Result<void> unsubscribe_monitor();
    [[nodiscard]] int fd() const;
    // Reads what is queued without blocking and calls on_msg for each message.
    // ENOBUFS (the kernel dropped notifications) is returned as Errc::Io with
    // sys_errno ENOBUFS so that the caller can resynchronise.
    Result<void> receive_notifications(const ReplyFn& on_msg);
    // Frees the receive buffer until the next read (netlink::Channel).
    void release_buffer() noexcept { nl_.release_buffer(); }

  private:
    explicit Socket(netlink::Channel nl) : nl_(std::move(nl)) {}
    Result<void> resolve_family();
    Result<void> run(nlmsghdr* request, const ReplyFn& on_reply);
    // One STRSET_GET of set_id: a device's (ifindex > 0) or the global one
    // (0). Absent: the kernel sent no such set.
    Result<std::optional<FeatureNames>> string_set(int ifindex, uint32_t set_id);

    netlink::Channel nl_;
    uint16_t family_ = 0;
    uint32_t monitor_group_ = 0;
    std::vector<std::pair<uint32_t, std::shared_ptr<const FeatureNames>>> global_strings_;
};

}  // namespace nictune::ethnl
