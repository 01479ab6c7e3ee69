// The kernel's answers that end a request: NLMSG_ERROR (error 0 is the ACK)
// and NLMSG_DONE, with the extended ACK's text (NLMSGERR_ATTR_MSG), and the
// Error a refusal becomes. Pure functions over bytes, for ethtool's generic
// netlink and for rtnetlink alike.
#pragma once

#include <linux/netlink.h>

#include <optional>
#include <string>

#include "util/error.hpp"

namespace nictune::netlink {

struct Ack {
    int err = 0;       // errno, 0 for success
    std::string text;  // the kernel's extack text, "" when it sent none
};

// An NLMSG_ERROR message; nullopt when it is too short to hold an nlmsgerr.
// The TLVs follow the echoed request, which NETLINK_CAP_ACK cuts down to its
// header (NLM_F_CAPPED); both layouts are read.
std::optional<Ack> parse_error(const nlmsghdr* nlh);

// An NLMSG_DONE message: a dump's end, with an int error (and TLVs) since
// Linux 4.x, or the bare header of older kernels (success).
Ack parse_done(const nlmsghdr* nlh);

// A refusal as an Error: Errc::Kernel unless the errno says more (ENODEV ->
// NoSuchInterface, EOPNOTSUPP -> Unsupported, EPERM/EACCES ->
// PermissionDenied, EBUSY -> Busy, as fail_errno maps them), the extack text
// in kernel_message.
Error kernel_error(const Ack& ack, std::string context);

}  // namespace nictune::netlink
