// The rtnetlink part of a NicState, from a link as a read decodes it
// (rtnl::Link) or as a notification hands it over (LinkEvent): both carry
// the same fields under the same names. Internal to backend/.
#pragma once

#include <utility>

#include "model/nic_state.hpp"

namespace nictune::backend_detail {

// Moves from an rvalue `l` (a read's links are read once), copies from an
// lvalue.
template <class LinkLike>
void take_link_fields(LinkLike&& l, NicState& nic) {
    // Backed by a device on some bus (PCI, virtio, netdevsim), not a software link.
    nic.id.physical = l.parent_dev.has_value() && !l.kind.has_value();
    nic.id.name = std::forward<LinkLike>(l).name;
    nic.id.altnames = std::forward<LinkLike>(l).altnames;
    nic.id.ifindex = l.ifindex;
    nic.id.mac = std::forward<LinkLike>(l).mac;
    nic.id.perm_mac = std::forward<LinkLike>(l).perm_mac;
    nic.id.kind = std::forward<LinkLike>(l).kind;
    nic.id.parent_bus = std::forward<LinkLike>(l).parent_bus;
    nic.id.parent_dev = std::forward<LinkLike>(l).parent_dev;
    nic.values = l.values;
}

}  // namespace nictune::backend_detail
