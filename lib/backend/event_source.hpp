// The kernel's notifications about links and devices as nictune reads them:
// RTM_NEWLINK and RTM_DELLINK from RTNLGRP_LINK, ETHTOOL_MSG_*_NTF from the
// ethtool monitor group, each received and decoded in one place
// (event_source.cpp) and handed to an EventSink. nictuned's loop polls
// fds() and calls receive() for the watcher; NetlinkBackend observes a
// transaction's own changes through a source of its own (observe_changes).
//
// No netlink type crosses this header: the service layer sees events, not
// messages.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "model/nic_state.hpp"
#include "util/error.hpp"

namespace nictune {

namespace rtnl {
class Socket;
}
namespace ethnl {
class Socket;
}

// An RTM_NEWLINK (a link appeared, changed or was renamed) or RTM_DELLINK.
struct LinkEvent {
    int ifindex = 0;
    std::string name;                   // text form
    std::vector<std::string> altnames;  // text form, kernel order
    std::string mac;                    // "aa:bb:cc:dd:ee:ff"; empty without an address
    std::optional<std::string> perm_mac;
    std::optional<std::string> kind;        // IFLA_INFO_KIND: a software link
    std::optional<std::string> parent_bus;  // the device behind it, if any
    std::optional<std::string> parent_dev;
    uint32_t flags = 0;    // IFF_*
    DeviceValues values;   // the [link] keys the message carried
    bool deleted = false;  // RTM_DELLINK
};

// What an RTM_NEWLINK says of its link, as a read of the link would begin
// its NicState: the identity the rtnetlink part gives and the [link] values;
// no ethtool family, no driver. The notification is as new as a GET's
// answer once every notification before it has been read, so a new link's
// read need not ask for it again (ReadRequest::linked).
NicState link_state(const LinkEvent& event);

class EventSink {
  public:
    virtual ~EventSink() = default;
    virtual void link(const LinkEvent& event) = 0;
    // An ethtool family's new settings (`section`'s keys in `values`;
    // Section::Link is LINKMODES, the ethtool part of [link]). `name`: the
    // interface's in text form, empty when the message has none.
    virtual void settings(int ifindex, const std::string& name, Section section,
                          const DeviceValues& values) = 0;
    // FEATURES_NTF: the interface's features, or nullopt when the kernel's
    // feature names are unknown (then only that they changed is known).
    virtual void features(int ifindex, const std::string& name,
                          std::optional<FeatureSet> features) = 0;
    // Notifications were missed: `overrun` when the kernel dropped some (a
    // receive queue was full, ENOBUFS: read everything again); otherwise one
    // could not be received or decoded (`why`).
    virtual void missed(const Error& why, bool overrun) = 0;
};

// The kernel's feature names for FEATURES_NTF (asked on each one; cache
// them). A null pointer: unknown, and features() gets nullopt; an error:
// missed().
using FeatureNamesFn = std::function<Result<std::shared_ptr<const FeatureNames>>()>;

class EventSource {
  public:
    // The receive queue each socket asks for by default: room for a burst
    // before the kernel drops notifications.
    static constexpr int kDefaultQueueBytes = 4 * 1024 * 1024;

    // Joins RTNLGRP_LINK and the ethtool monitor group in the calling
    // thread's network namespace, each on a socket of its own with a
    // receive queue of `queue_bytes` (SO_RCVBUFFORCE with CAP_NET_ADMIN,
    // else SO_RCVBUF, which net.core.rmem_max caps).
    static Result<std::unique_ptr<EventSource>> open(int queue_bytes, FeatureNamesFn feature_names);
    ~EventSource();
    EventSource(const EventSource&) = delete;
    EventSource& operator=(const EventSource&) = delete;

    // What to poll for POLLIN: the link socket, then the ethtool monitor's.
    [[nodiscard]] std::array<int, 2> fds() const;
    // Reads what is queued, without blocking, on the link socket (`links`)
    // and the ethtool monitor (`ethtool`), in that order, and hands every
    // notification to `sink`. A message that does not decode is missed()
    // and the next one read.
    void receive(EventSink& sink, bool links = true, bool ethtool = true);

    // Leaves both groups and drops what is queued; resume() joins them
    // again, after which the sockets hold only notifications sent since.
    // A paused source costs no socket set-up when it is needed again (a
    // transaction's observer: socket, bind, the ethtool family's lookup).
    Result<void> pause();
    Result<void> resume();

    // Frees both sockets' receive buffers until their next read
    // (Backend::release_buffers).
    void release_buffers() noexcept;

  private:
    EventSource(std::unique_ptr<rtnl::Socket> links, std::unique_ptr<ethnl::Socket> monitor,
                FeatureNamesFn feature_names);

    std::unique_ptr<rtnl::Socket> links_;
    std::unique_ptr<ethnl::Socket> monitor_;
    FeatureNamesFn feature_names_;
};

// What nictuned opens at start in its network namespace: the Backend of its
// Manager (a NetlinkBackend, seen through the interface alone) and the
// running kernel's feature names, which its profiles and its event source
// use (null when they could not be read).
struct KernelBackend {
    std::unique_ptr<Backend> backend;
    std::shared_ptr<const FeatureNames> feature_names;
};
Result<KernelBackend> open_kernel_backend();

}  // namespace nictune
