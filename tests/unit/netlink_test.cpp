// The netlink plumbing both families share (lib/netlink/): the attribute
// walk, the kernel's answers with their extack text, and the request and
// batch loops. The codecs are tested on crafted bytes; the loops on the
// kernel's generic netlink controller, which any process may ask which
// families exist (no root, nothing changes).
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "netlink/ack.hpp"
#include "netlink/attr.hpp"
#include "netlink/channel.hpp"

namespace nictune::netlink {
namespace {

// A message under construction in an aligned buffer.
class Msg {
  public:
    explicit Msg(uint16_t type, uint16_t flags = 0) {
        nlh_ = mnl_nlmsg_put_header(buf_.data());
        nlh_->nlmsg_type = type;
        nlh_->nlmsg_flags = flags;
    }
    Msg(const Msg&) = delete;
    Msg& operator=(const Msg&) = delete;
    [[nodiscard]] nlmsghdr* nlh() const { return nlh_; }
    void* extra(std::size_t len) { return mnl_nlmsg_put_extra_header(nlh_, len); }

  private:
    alignas(nlmsghdr) std::array<char, 4096> buf_{};
    nlmsghdr* nlh_;
};

// An NLMSG_ERROR answering `request` with `err` (negative errno, 0 for an
// ACK), laid out as the kernel does: capped (only the request's header) or
// with the whole request echoed, then the extack TLVs.
void put_error(Msg& m, const nlmsghdr* request, int err, bool capped) {
    auto* e = static_cast<nlmsgerr*>(m.extra(sizeof(int)));
    e->error = err;
    const std::size_t echo = capped ? sizeof(nlmsghdr) : NLMSG_ALIGN(request->nlmsg_len);
    std::memcpy(m.extra(echo), request, capped ? sizeof(nlmsghdr) : request->nlmsg_len);
    if (capped) m.nlh()->nlmsg_flags |= NLM_F_CAPPED;
}

TEST(Extack, ReadsTheKernelsTextFromACappedError) {
    Msg req(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK);
    req.extra(sizeof(ifinfomsg));
    mnl_attr_put_u32(req.nlh(), IFLA_MTU, 70000);

    Msg m(NLMSG_ERROR, NLM_F_ACK_TLVS);
    put_error(m, req.nlh(), -EINVAL, true);
    mnl_attr_put_strz(m.nlh(), NLMSGERR_ATTR_MSG, "mtu greater than device maximum");
    mnl_attr_put_u32(m.nlh(), NLMSGERR_ATTR_OFFS, 32);
    auto ack = parse_error(m.nlh());
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->err, EINVAL);
    EXPECT_EQ(ack->text, "mtu greater than device maximum");
}

TEST(Extack, ReadsTheTextAfterAWholeEchoedRequest) {
    // Without NETLINK_CAP_ACK the request stands between the code and the
    // TLVs: reading the TLVs right after the header would find the request.
    Msg req(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK);
    req.extra(sizeof(ifinfomsg));
    mnl_attr_put_strz(req.nlh(), NLMSGERR_ATTR_MSG, "not the kernel's text");

    Msg m(NLMSG_ERROR, NLM_F_ACK_TLVS);
    put_error(m, req.nlh(), -ERANGE, false);
    mnl_attr_put_strz(m.nlh(), NLMSGERR_ATTR_MSG, "the kernel's text");
    auto ack = parse_error(m.nlh());
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->err, ERANGE);
    EXPECT_EQ(ack->text, "the kernel's text");
}

TEST(Extack, NamesAMissingAttributeWhenThereIsNoText) {
    Msg req(30, NLM_F_REQUEST);
    Msg m(NLMSG_ERROR, NLM_F_ACK_TLVS);
    put_error(m, req.nlh(), -EINVAL, true);
    mnl_attr_put_u32(m.nlh(), NLMSGERR_ATTR_MISS_TYPE, 1);
    EXPECT_EQ(parse_error(m.nlh())->text, "missing attribute 1");
}

TEST(Extack, IgnoresTlvsWithoutTheFlagAndRejectsAShortError) {
    Msg req(30, NLM_F_REQUEST);
    Msg m(NLMSG_ERROR);  // no NLM_F_ACK_TLVS: what follows is not extack
    put_error(m, req.nlh(), 0, true);
    mnl_attr_put_strz(m.nlh(), NLMSGERR_ATTR_MSG, "stray");
    auto ack = parse_error(m.nlh());
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->err, 0);
    EXPECT_EQ(ack->text, "");

    Msg shortm(NLMSG_ERROR);
    *static_cast<int*>(shortm.extra(sizeof(int))) = -EINVAL;
    EXPECT_FALSE(parse_error(shortm.nlh()).has_value());
}

TEST(Extack, ReadsTheErrorOfADumpsEnd) {
    Msg bare(NLMSG_DONE);  // old kernels: the header alone
    EXPECT_EQ(parse_done(bare.nlh()).err, 0);
    Msg m(NLMSG_DONE, NLM_F_ACK_TLVS);
    *static_cast<int*>(m.extra(sizeof(int))) = -EMSGSIZE;
    mnl_attr_put_strz(m.nlh(), NLMSGERR_ATTR_MSG, "dump too large");
    const Ack ack = parse_done(m.nlh());
    EXPECT_EQ(ack.err, EMSGSIZE);
    EXPECT_EQ(ack.text, "dump too large");
}

TEST(Extack, MapsARefusalToItsCode) {
    struct Case {
        int err;
        Errc code;
    };
    for (const Case c : {Case{ENODEV, Errc::NoSuchInterface}, Case{EOPNOTSUPP, Errc::Unsupported},
                         Case{EPERM, Errc::PermissionDenied}, Case{EINVAL, Errc::Kernel}}) {
        const Error e = kernel_error(Ack{c.err, "why"}, "eth0: rings.rx=8192: set");
        EXPECT_EQ(e.code, c.code) << c.err;
        EXPECT_EQ(e.sys_errno, c.err);
        EXPECT_EQ(e.context, "eth0: rings.rx=8192: set");
        EXPECT_EQ(e.kernel_message, "why");
    }
}

TEST(AttrList, WalksNestsAndTellsACompleteListFromACutOne) {
    Msg m(30);
    m.extra(GENL_HDRLEN);
    mnl_attr_put_u8(m.nlh(), 1, 1);
    nlattr* nest = mnl_attr_nest_start(m.nlh(), 2);
    mnl_attr_put_u32(m.nlh(), 1, 5);
    mnl_attr_put_strz(m.nlh(), 2, "x");
    mnl_attr_nest_end(m.nlh(), nest);
    mnl_attr_put_u32(m.nlh(), 3, 9);

    AttrList top = AttrList::of(m.nlh(), GENL_HDRLEN);
    EXPECT_TRUE(top.complete());
    EXPECT_TRUE(checked(top, "test", "attribute list").has_value());
    std::vector<uint16_t> types;
    for (const nlattr* a : top)
        types.push_back(attr_type(a));
    EXPECT_EQ(types, (std::vector<uint16_t>{1, 2, 3}));
    const nlattr* n = top.find(2);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(attr_get<uint32_t>(AttrList::nested(n).find(1)), 5U);
    EXPECT_EQ(attr_str(AttrList::nested(n).find(2)), "x");
    EXPECT_EQ(attr_get<uint16_t>(top.find(3)), std::nullopt);  // a u32 is not a u16
    EXPECT_EQ(attr_get_prefix<uint16_t>(top.find(3)), 9U);     // rtnetlink's lenient read
    EXPECT_EQ(attr_get_prefix<uint64_t>(top.find(3)), std::nullopt);

    m.nlh()->nlmsg_len -= 4;  // cut the last attribute's value
    AttrList cut = AttrList::of(m.nlh(), GENL_HDRLEN);
    EXPECT_FALSE(cut.complete());
    types.clear();
    for (const nlattr* a : cut)
        types.push_back(attr_type(a));
    EXPECT_EQ(types, (std::vector<uint16_t>{1, 2}));
    auto r = checked(cut, "link message", "attribute list");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::Internal);
    EXPECT_EQ(r.error().context, "link message");
    EXPECT_NE(r.error().message.find("truncated"), std::string::npos);
}

TEST(AttrList, RejectsBytesLeftThatCannotHoldAnAttribute) {
    Msg m(RTM_NEWLINK);
    m.extra(sizeof(ifinfomsg));
    mnl_attr_put_u32(m.nlh(), IFLA_MTU, 1500);
    m.nlh()->nlmsg_len += 2;  // half an attribute header after the last one
    ifinfomsg ifi{};
    auto r = fixed_header(m.nlh(), {RTM_NEWLINK}, ifi, "link message", "ifinfomsg");
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().str();

    Msg tiny(RTM_NEWLINK);
    tiny.extra(4);  // shorter than an ifinfomsg
    auto t = fixed_header(tiny.nlh(), {RTM_NEWLINK}, ifi, "link message", "ifinfomsg");
    ASSERT_FALSE(t.has_value());
    EXPECT_EQ(t.error().message, "truncated ifinfomsg");
    Msg other(RTM_NEWROUTE);
    other.extra(sizeof(ifinfomsg));
    auto o =
        fixed_header(other.nlh(), {RTM_NEWLINK, RTM_DELLINK}, ifi, "link message", "ifinfomsg");
    ASSERT_FALSE(o.has_value());
    EXPECT_EQ(o.error().message, "unexpected message type " + std::to_string(RTM_NEWROUTE));
}

// ---------------------------------------------------------------------------
// The loops, against the generic netlink controller: CTRL_CMD_GETFAMILY of a
// family that exists is answered with its description, of one that does not
// with ENOENT (names stay under GENL_NAMSIZ: a longer one is EINVAL).

void build_lookup(nlmsghdr* nlh, const char* family, uint16_t flags) {
    nlh->nlmsg_type = GENL_ID_CTRL;
    nlh->nlmsg_flags = flags;
    auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
    genl->cmd = CTRL_CMD_GETFAMILY;
    genl->version = 1;
    mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, family);
}

std::string family_asked(const nlmsghdr* nlh) {
    if (const nlattr* a = AttrList::of(nlh, GENL_HDRLEN).find(CTRL_ATTR_FAMILY_NAME))
        if (auto s = attr_str(a)) return "lookup " + std::string(*s);
    return "lookup ?";
}

TEST(Channel, HandsOverTheReplyAndMapsARefusal) {
    auto ch = Channel::open(NETLINK_GENERIC, "test");
    ASSERT_TRUE(ch.has_value()) << ch.error().str();
    RequestBuffer buf{};
    nlmsghdr* req = mnl_nlmsg_put_header(buf.data());
    build_lookup(req, "nlctrl", NLM_F_REQUEST | NLM_F_ACK);
    int replies = 0;
    auto ok = ch->request(req, family_asked, [&](const nlmsghdr* nlh) -> Result<void> {
        EXPECT_EQ(nlh->nlmsg_type, GENL_ID_CTRL);
        ++replies;
        return {};
    });
    EXPECT_TRUE(ok.has_value()) << ok.error().str();
    EXPECT_EQ(replies, 1);

    req = mnl_nlmsg_put_header(buf.data());
    build_lookup(req, "nt-no-family", NLM_F_REQUEST | NLM_F_ACK);
    auto bad = ch->request(req, family_asked, nullptr);
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().code, Errc::Kernel);
    EXPECT_EQ(bad.error().sys_errno, ENOENT);
    EXPECT_EQ(bad.error().context, "lookup nt-no-family");

    // A callback's error is the request's, and the socket stays in step:
    // the next request reads its own answer.
    req = mnl_nlmsg_put_header(buf.data());
    build_lookup(req, "nlctrl", NLM_F_REQUEST | NLM_F_ACK);
    auto stopped = ch->request(req, family_asked, [](const nlmsghdr*) -> Result<void> {
        return fail(Errc::Internal, "decoder", "bad reply");
    });
    ASSERT_FALSE(stopped.has_value());
    EXPECT_EQ(stopped.error().context, "decoder");
    req = mnl_nlmsg_put_header(buf.data());
    build_lookup(req, "nt-no-family", NLM_F_REQUEST | NLM_F_ACK);
    auto next = ch->request(req, family_asked, nullptr);
    ASSERT_FALSE(next.has_value());
    EXPECT_EQ(next.error().sys_errno, ENOENT);
}

TEST(Channel, BatchGivesEachRequestItsOwnResultAcrossWindows) {
    auto ch = Channel::open(NETLINK_GENERIC, "test");
    ASSERT_TRUE(ch.has_value()) << ch.error().str();
    // More than two windows; three lookups in four fail (a reply that
    // works takes a page of the receive queue, a refusal far less), one
    // request is not built.
    constexpr std::size_t kCount = 2 * Channel::kWindowMessages + 7;
    constexpr std::size_t kUnbuilt = 70;
    auto fails = [](std::size_t i) { return i % 4 != 0; };
    std::vector<std::string> names(kCount);
    for (std::size_t i = 0; i < kCount; ++i)
        names[i] = fails(i) ? "nt-missing-" + std::to_string(i) : "nlctrl";
    auto results = ch->send_batch(
        kCount,
        [&](std::size_t i, nlmsghdr* nlh) -> Result<void> {
            if (i == kUnbuilt) return fail(Errc::InvalidArgument, "request 70", "not built");
            build_lookup(nlh, names[i].c_str(), 0);
            return {};
        },
        family_asked);
    ASSERT_EQ(results.size(), kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
        SCOPED_TRACE(i);
        if (i == kUnbuilt) {
            ASSERT_FALSE(results[i].has_value());
            EXPECT_EQ(results[i].error().code, Errc::InvalidArgument);
        } else if (fails(i)) {
            ASSERT_FALSE(results[i].has_value());
            EXPECT_EQ(results[i].error().code, Errc::Kernel);
            EXPECT_EQ(results[i].error().sys_errno, ENOENT);
            EXPECT_EQ(results[i].error().context, "lookup " + names[i]);
        } else {
            EXPECT_TRUE(results[i].has_value()) << results[i].error().str();
        }
    }
    // The replies to the lookups that worked were not mistaken for answers
    // and left nothing behind for the next request.
    RequestBuffer buf{};
    nlmsghdr* req = mnl_nlmsg_put_header(buf.data());
    build_lookup(req, "nt-no-family", NLM_F_REQUEST | NLM_F_ACK);
    auto next = ch->request(req, family_asked, nullptr);
    ASSERT_FALSE(next.has_value());
    EXPECT_EQ(next.error().sys_errno, ENOENT);
}

}  // namespace
}  // namespace nictune::netlink
