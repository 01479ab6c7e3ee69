#include "netlink/ack.hpp"

#include <fmt/format.h>

#include <cstring>

#include "netlink/attr.hpp"

namespace nictune::netlink {
namespace {

// The extack TLVs start `offset` bytes into the payload; the human text is
// NLMSGERR_ATTR_MSG, and a refusal for a missing attribute may carry only
// the attribute's number.
std::string extack_text(const nlmsghdr* nlh, std::size_t offset) {
    if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) == 0) return {};
    const std::size_t len = mnl_nlmsg_get_payload_len(nlh);
    if (len <= offset) return {};
    AttrList tlvs(static_cast<const char*>(mnl_nlmsg_get_payload(nlh)) + offset, len - offset);
    if (const nlattr* msg = tlvs.find(NLMSGERR_ATTR_MSG))
        if (auto text = attr_str(msg)) return std::string(*text);
    if (const nlattr* miss = tlvs.find(NLMSGERR_ATTR_MISS_TYPE))
        if (auto type = attr_get<uint32_t>(miss)) return fmt::format("missing attribute {}", *type);
    return {};
}

}  // namespace

std::optional<Ack> parse_error(const nlmsghdr* nlh) {
    if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN || mnl_nlmsg_get_payload_len(nlh) < sizeof(nlmsgerr))
        return std::nullopt;
    nlmsgerr e{};
    std::memcpy(&e, mnl_nlmsg_get_payload(nlh), sizeof e);
    // Without NETLINK_CAP_ACK (or if the kernel ignored it) the whole request
    // is echoed between the error code and the TLVs.
    std::size_t tlv_offset = sizeof(nlmsgerr);
    if ((nlh->nlmsg_flags & NLM_F_CAPPED) == 0 && e.msg.nlmsg_len >= sizeof(nlmsghdr))
        tlv_offset = sizeof(int) + NLMSG_ALIGN(e.msg.nlmsg_len);
    return Ack{-e.error, extack_text(nlh, tlv_offset)};
}

Ack parse_done(const nlmsghdr* nlh) {
    if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN || mnl_nlmsg_get_payload_len(nlh) < sizeof(int))
        return {};
    int err = 0;
    std::memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof err);
    return Ack{-err, extack_text(nlh, sizeof(int))};
}

Error kernel_error(const Ack& ack, std::string context) {
    Error e = fail_errno(ack.err, std::move(context), Errc::Kernel).error();
    e.kernel_message = ack.text;
    return e;
}

}  // namespace nictune::netlink
