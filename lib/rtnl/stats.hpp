// rtnetlink's standard interface statistics (RTM_GETSTATS with only
// IFLA_STATS_LINK_64: about 200 bytes per device, against a whole
// RTM_NEWLINK with IFLA_STATS64), one dump for every interface or one GET.
// A request and its replies over netlink/'s Channel, nothing else.
#pragma once

#include <linux/netlink.h>

#include <functional>
#include <memory>
#include <utility>

#include "model/health.hpp"
#include "netlink/channel.hpp"
#include "util/error.hpp"

namespace nictune::rtnl {

// RTM_NEWSTATS -> ifindex and counters. A reply without IFLA_STATS_LINK_64
// gives nullopt counters; a truncated one is an error.
struct StatsReply {
    int ifindex = 0;
    std::optional<LinkStats> stats;
};
Result<StatsReply> decode_stats(const nlmsghdr* nlh);

class StatsSocket {
  public:
    static Result<std::unique_ptr<StatsSocket>> open();

    // Every interface of the namespace.
    Result<void> dump(const std::function<void(int ifindex, const LinkStats&)>& on_stats);
    // One interface; Errc::NoSuchInterface when it is gone.
    Result<LinkStats> get(int ifindex);
    // Frees the receive buffer until the next read (netlink::Channel).
    void release_buffer() noexcept { nl_.release_buffer(); }

  private:
    explicit StatsSocket(netlink::Channel nl) : nl_(std::move(nl)) {}
    Result<void> run(int ifindex, bool dump,
                     const std::function<void(int, const LinkStats&)>& on_stats);
    netlink::Channel nl_;
};

}  // namespace nictune::rtnl
