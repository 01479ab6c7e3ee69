#include "backend/event_source.hpp"

#include <linux/genetlink.h>

#include <cerrno>
#include <utility>

#include "backend/link_fields.hpp"
#include "backend/netlink_backend.hpp"
#include "ethnl/codecs.hpp"
#include "ethnl/socket.hpp"
#include "rtnl/link.hpp"
#include "util/strings.hpp"

namespace nictune {

static_assert(EventSource::kDefaultQueueBytes == rtnl::Socket::kDefaultEventQueueBytes &&
              EventSource::kDefaultQueueBytes == ethnl::Socket::kDefaultMonitorQueueBytes);

namespace {

bool overrun(const Error& e) {
    return e.sys_errno == ENOBUFS;
}

// One message of the ethtool monitor group to the sink. Messages of other
// commands (and ones too short for a generic netlink header) are not
// notifications nictune reads; nor is one without an interface.
void decode_ethtool(const nlmsghdr* nlh, const FeatureNamesFn& feature_names, EventSink& sink) {
    if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN)) return;
    const auto* g = static_cast<const genlmsghdr*>(NLMSG_DATA(nlh));
    const ethnl::Family* family = ethnl::family_of_kernel_msg(g->cmd);
    if (family == nullptr) return;
    if (family->replies == ethnl::Replies::Features) {
        auto r = ethnl::decode_features(nlh);
        if (!r) {
            sink.missed(r.error(), false);
            return;
        }
        if (!r->ifindex) return;
        auto names =
            feature_names ? feature_names() : Result<std::shared_ptr<const FeatureNames>>(nullptr);
        if (!names) {
            sink.missed(names.error(), false);
            return;
        }
        const int ifindex = r->ifindex;
        const std::string name = escape_name(r->ifname);
        std::optional<FeatureSet> features;
        if (*names) features = ethnl::to_feature_set(std::move(*r), *names);
        sink.features(ifindex, name, std::move(features));
        return;
    }
    auto r = ethnl::decode_settings(family->section, nlh);
    if (!r) {
        sink.missed(r.error(), false);
        return;
    }
    if (!r->ifindex) return;
    sink.settings(r->ifindex, escape_name(r->ifname), family->section, r->values);
}

}  // namespace

NicState link_state(const LinkEvent& event) {
    NicState st;
    backend_detail::take_link_fields(event, st);
    return st;
}

EventSource::EventSource(std::unique_ptr<rtnl::Socket> links,
                         std::unique_ptr<ethnl::Socket> monitor, FeatureNamesFn feature_names)
    : links_(std::move(links)),
      monitor_(std::move(monitor)),
      feature_names_(std::move(feature_names)) {}

EventSource::~EventSource() = default;

Result<std::unique_ptr<EventSource>> EventSource::open(int queue_bytes,
                                                       FeatureNamesFn feature_names) {
    auto links = rtnl::Socket::open();
    if (!links) return std::unexpected(std::move(links.error()).within("link events"));
    if (auto r = (*links)->subscribe_links(queue_bytes); !r) return std::unexpected(r.error());
    auto monitor = ethnl::Socket::open();
    if (!monitor) return std::unexpected(std::move(monitor.error()).within("ethtool monitor"));
    if (auto r = (*monitor)->subscribe_monitor(queue_bytes); !r) return std::unexpected(r.error());
    return std::unique_ptr<EventSource>(
        new EventSource(std::move(*links), std::move(*monitor), std::move(feature_names)));
}

std::array<int, 2> EventSource::fds() const {
    return {links_->fd(), monitor_->fd()};
}

void EventSource::receive(EventSink& sink, bool links, bool ethtool) {
    if (links) {
        LinkEvent ev;
        auto r = links_->receive_events([&](rtnl::Link&& l, bool deleted) {
            ev.ifindex = l.ifindex;
            ev.name = std::move(l.name);
            ev.altnames = std::move(l.altnames);
            ev.mac = std::move(l.mac);
            ev.perm_mac = std::move(l.perm_mac);
            ev.kind = std::move(l.kind);
            ev.parent_bus = std::move(l.parent_bus);
            ev.parent_dev = std::move(l.parent_dev);
            ev.flags = l.flags;
            ev.values = std::move(l.values);
            ev.deleted = deleted;
            sink.link(ev);
        });
        if (!r) sink.missed(r.error(), overrun(r.error()));
    }
    if (ethtool) {
        auto r = monitor_->receive_notifications([&](const nlmsghdr* nlh) -> Result<void> {
            decode_ethtool(nlh, feature_names_, sink);
            return {};
        });
        if (!r) sink.missed(r.error(), overrun(r.error()));
    }
}

Result<void> EventSource::pause() {
    if (auto r = links_->unsubscribe_links(); !r) return r;
    return monitor_->unsubscribe_monitor();
}

Result<void> EventSource::resume() {
    if (auto r = links_->subscribe_links(0); !r) return r;
    return monitor_->subscribe_monitor(0);
}

void EventSource::release_buffers() noexcept {
    links_->release_buffer();
    monitor_->release_buffer();
}

Result<KernelBackend> open_kernel_backend() {
    NetlinkBackendOptions opts;
    opts.read_back_many = false;  // see NetlinkBackendOptions
    auto backend = NetlinkBackend::open(std::move(opts));
    if (!backend) return std::unexpected(backend.error());
    auto names = (*backend)->kernel_feature_names();
    return KernelBackend{std::move(*backend), names ? *names : nullptr};
}

}  // namespace nictune
