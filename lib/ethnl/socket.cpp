#include "ethnl/socket.hpp"

#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "ethnl/attr.hpp"
#include "ethnl/codecs.hpp"

namespace nictune::ethnl {
namespace {

// The kernel sizes dump datagrams after the largest buffer the socket has
// read with, up to 32 KiB, and a single reply can be larger still; a datagram
// that does not fit is truncated (MSG_TRUNC, reported by libmnl as ENOSPC).
constexpr std::size_t kRecvBufferSize = 64 * 1024;
// Requests are a header nest plus a few attributes or one bitset.
constexpr std::size_t kRequestBufferSize = 8 * 1024;
// A kernel that never answers must not hang the daemon forever.
constexpr int kReplyTimeoutSeconds = 10;
// Room for bursts of notifications (a driver reset announces every family).

const char* cmd_name(uint8_t cmd) {
    switch (cmd) {
        case ETHTOOL_MSG_STRSET_GET:
            return "STRSET_GET";
        case ETHTOOL_MSG_LINKINFO_GET:
            return "LINKINFO_GET";
        case ETHTOOL_MSG_LINKINFO_SET:
            return "LINKINFO_SET";
        case ETHTOOL_MSG_LINKMODES_GET:
            return "LINKMODES_GET";
        case ETHTOOL_MSG_LINKMODES_SET:
            return "LINKMODES_SET";
        case ETHTOOL_MSG_FEATURES_GET:
            return "FEATURES_GET";
        case ETHTOOL_MSG_FEATURES_SET:
            return "FEATURES_SET";
        case ETHTOOL_MSG_RINGS_GET:
            return "RINGS_GET";
        case ETHTOOL_MSG_RINGS_SET:
            return "RINGS_SET";
        case ETHTOOL_MSG_CHANNELS_GET:
            return "CHANNELS_GET";
        case ETHTOOL_MSG_CHANNELS_SET:
            return "CHANNELS_SET";
        case ETHTOOL_MSG_COALESCE_GET:
            return "COALESCE_GET";
        case ETHTOOL_MSG_COALESCE_SET:
            return "COALESCE_SET";
        case ETHTOOL_MSG_PAUSE_GET:
            return "PAUSE_GET";
        case ETHTOOL_MSG_PAUSE_SET:
            return "PAUSE_SET";
        default:
            return nullptr;
    }
}

// Starts a generic netlink request in `buf`.
nlmsghdr* start_request(char* buf, uint16_t type, uint16_t flags, uint8_t cmd, uint8_t version) {
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = flags;
    auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
    genl->cmd = cmd;
    genl->version = version;
    return nlh;
}

// "ethtool COALESCE_SET ifindex 7", "ethtool RINGS_GET dump": what an error
// was about, read back from the request itself.
std::string describe(const nlmsghdr* req) {
    const auto* genl = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(req));
    if (req->nlmsg_type == GENL_ID_CTRL) return "generic netlink family lookup \"ethtool\"";
    std::string out = "ethtool ";
    if (const char* name = cmd_name(genl->cmd))
        out += name;
    else
        out += fmt::format("command {}", genl->cmd);
    if ((req->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP) return out + " dump";
    if (const nlattr* hdr = AttrList::of(req, GENL_HDRLEN).find(kHeaderAttr))
        if (const nlattr* idx = AttrList::nested(hdr).find(ETHTOOL_A_HEADER_DEV_INDEX))
            if (auto i = attr_get<uint32_t>(idx)) out += fmt::format(" ifindex {}", *i);
    return out;
}

// The extack TLVs of an NLMSG_ERROR or NLMSG_DONE message start at `offset`
// into the payload; the human text is NLMSGERR_ATTR_MSG.
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

// errno (0 for an ACK) and extack text of an NLMSG_ERROR message.
struct Status {
    int err = 0;
    std::string text;
};

std::optional<Status> parse_error_msg(const nlmsghdr* nlh) {
    if (mnl_nlmsg_get_payload_len(nlh) < sizeof(nlmsgerr)) return std::nullopt;
    const auto* e = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(nlh));
    // Without NETLINK_CAP_ACK (or if the kernel ignored it) the whole request
    // is echoed between the error code and the TLVs.
    std::size_t tlv_offset = sizeof(nlmsgerr);
    if ((nlh->nlmsg_flags & NLM_F_CAPPED) == 0 && e->msg.nlmsg_len >= sizeof(nlmsghdr))
        tlv_offset = sizeof(int) + NLMSG_ALIGN(e->msg.nlmsg_len);
    return Status{-e->error, extack_text(nlh, tlv_offset)};
}

std::optional<Status> parse_done_msg(const nlmsghdr* nlh) {
    // A dump may end with only the header (old kernels) or with an int error.
    if (mnl_nlmsg_get_payload_len(nlh) < sizeof(int)) return Status{};
    int err = 0;
    std::memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof err);
    return Status{-err, extack_text(nlh, sizeof(int))};
}

// The failed system call's errno, read before anything else can change it.
std::unexpected<Error> fail_syscall(std::string_view context, std::string_view what) {
    const int err = errno;
    return fail_errno(err, fmt::format("{}: {}", context, what));
}

Error kernel_error(const Status& st, std::string context) {
    Error e = fail_errno(st.err, std::move(context), Errc::Kernel).error();
    e.kernel_message = st.text;
    return e;
}

// The CTRL_CMD_GETFAMILY reply: the family's id and its multicast groups.
Result<void> decode_family(const nlmsghdr* nlh, uint16_t* family, uint32_t* monitor_group) {
    const std::string context = "generic netlink family lookup \"ethtool\"";
    AttrList attrs = AttrList::of(nlh, GENL_HDRLEN);
    if (!attrs.complete()) return fail(Errc::Internal, context, "reply is truncated");
    for (const nlattr* a : attrs) {
        if (attr_type(a) == CTRL_ATTR_FAMILY_ID) {
            auto id = attr_get<uint16_t>(a);
            if (!id) return fail(Errc::Internal, context, "family id is not a u16");
            *family = *id;
        } else if (attr_type(a) == CTRL_ATTR_MCAST_GROUPS) {
            for (const nlattr* group : AttrList::nested(a)) {
                AttrList fields = AttrList::nested(group);
                const nlattr* name = fields.find(CTRL_ATTR_MCAST_GRP_NAME);
                const nlattr* id = fields.find(CTRL_ATTR_MCAST_GRP_ID);
                if (name == nullptr || id == nullptr) continue;
                auto n = attr_str(name);
                auto v = attr_get<uint32_t>(id);
                if (n && v && *n == ETHTOOL_MCGRP_MONITOR_NAME) *monitor_group = *v;
            }
        }
    }
    return {};
}

}  // namespace

Socket::~Socket() {
    if (nl_ != nullptr) mnl_socket_close(nl_);
}

Result<std::unique_ptr<Socket>> Socket::open() {
    const char* context = "ethtool netlink socket";
    std::unique_ptr<Socket> s(new Socket());
    s->nl_ = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
    if (s->nl_ == nullptr) return fail_syscall(context, "open");
    // Extended ACKs carry the kernel's reason for a refusal ("requested
    // channel count exceeds maximum"); capped ACKs do not echo our request.
    int one = 1;
    if (mnl_socket_setsockopt(s->nl_, NETLINK_EXT_ACK, &one, sizeof one) < 0)
        return fail_syscall(context, "NETLINK_EXT_ACK");
    if (mnl_socket_setsockopt(s->nl_, NETLINK_CAP_ACK, &one, sizeof one) < 0)
        return fail_syscall(context, "NETLINK_CAP_ACK");
    if (mnl_socket_bind(s->nl_, 0, MNL_SOCKET_AUTOPID) < 0) return fail_syscall(context, "bind");
    timeval tv{kReplyTimeoutSeconds, 0};
    if (setsockopt(mnl_socket_get_fd(s->nl_), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
        return fail_syscall(context, "SO_RCVTIMEO");
    s->portid_ = mnl_socket_get_portid(s->nl_);
    s->buf_ = std::make_unique_for_overwrite<char[]>(kRecvBufferSize);
    if (auto r = s->resolve_family(); !r) return std::unexpected(r.error());
    return s;
}

Result<void> Socket::resolve_family() {
    alignas(nlmsghdr) std::array<char, kRequestBufferSize> req;
    nlmsghdr* nlh =
        start_request(req.data(), GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, CTRL_CMD_GETFAMILY, 1);
    mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
    auto r = run(nlh, [this](const nlmsghdr* reply) {
        return decode_family(reply, &family_, &monitor_group_);
    });
    if (!r) {
        if (r.error().sys_errno == ENOENT) {
            r.error().code = Errc::Unsupported;
            r.error().message = "the kernel has no ethtool netlink family";
        }
        return r;
    }
    if (family_ == 0) return fail(Errc::Internal, describe(nlh), "the reply named no family id");
    return {};
}

Result<void> Socket::run(nlmsghdr* request, const ReplyFn& on_reply) {
    // What matches replies is copied out of the request first: receive
    // buffers are reused, and a stale seq read back from one desyncs the
    // socket. The request itself lives in the caller's buffer, never
    // received into, so it can still describe an error afterwards.
    request->nlmsg_seq = ++seq_;
    const uint32_t seq = request->nlmsg_seq;
    auto context = [request] { return describe(request); };

    if (mnl_socket_sendto(nl_, request, request->nlmsg_len) < 0)
        return fail_syscall(context(), "send");

    // A callback error stops the callbacks but not the reading: the rest of
    // the reply must be drained or it would be read as the next request's.
    std::optional<Error> callback_error;
    bool interrupted = false;
    for (;;) {
        const ssize_t n = mnl_socket_recvfrom(nl_, buf_.get(), kRecvBufferSize);
        if (n < 0) {
            const int err = errno;
            if (err == EINTR) continue;
            if (err == EAGAIN) {
                auto e =
                    fail(Errc::Io, context(),
                         fmt::format("no reply from the kernel within {} s", kReplyTimeoutSeconds));
                e.error().sys_errno = ETIMEDOUT;
                return e;
            }
            return fail_errno(err, context() + ": receive");
        }
        int left = static_cast<int>(n);
        const auto* nlh = reinterpret_cast<const nlmsghdr*>(buf_.get());
        for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
            // Replies to an earlier request that timed out or failed early,
            // and multicast messages, are not ours to handle here.
            if (nlh->nlmsg_seq != seq || nlh->nlmsg_pid != portid_) continue;
            std::optional<Status> end;
            switch (nlh->nlmsg_type) {
                case NLMSG_NOOP:
                    continue;
                case NLMSG_OVERRUN:
                    return fail(Errc::Io, context(), "netlink overrun: the reply was lost");
                case NLMSG_ERROR:
                    end = parse_error_msg(nlh);
                    if (!end) return fail(Errc::Internal, context(), "truncated NLMSG_ERROR");
                    break;
                case NLMSG_DONE:
                    end = parse_done_msg(nlh);
                    break;
                default:
                    if ((nlh->nlmsg_flags & NLM_F_DUMP_INTR) != 0) interrupted = true;
                    if (!callback_error && on_reply) {
                        if (auto r = on_reply(nlh); !r) callback_error = std::move(r.error());
                    }
                    continue;
            }
            // NLMSG_DONE ends a dump; NLMSG_ERROR ends anything: error 0 is
            // the ACK of a GET/SET, and a dump that fails to start has no DONE.
            if (callback_error) return std::unexpected(std::move(*callback_error));
            if (end->err != 0) return std::unexpected(kernel_error(*end, context()));
            if (interrupted) {
                auto e = fail(Errc::Busy, context(),
                              "dump interrupted by a concurrent change; read again");
                e.error().sys_errno = EINTR;
                return e;
            }
            return {};
        }
        if (left > 0) return fail(Errc::Internal, context(), "truncated netlink message");
    }
}

Result<void> Socket::dump(uint8_t cmd, uint32_t header_flags, const ReplyFn& on_reply) {
    alignas(nlmsghdr) std::array<char, kRequestBufferSize> req;
    nlmsghdr* nlh =
        start_request(req.data(), family_, NLM_F_REQUEST | NLM_F_DUMP, cmd, ETHTOOL_GENL_VERSION);
    put_header(nlh, kHeaderAttr, 0, header_flags);
    return run(nlh, on_reply);
}

Result<void> Socket::get(uint8_t cmd, int ifindex, uint32_t header_flags, const ReplyFn& on_reply) {
    alignas(nlmsghdr) std::array<char, kRequestBufferSize> req;
    // The ACK after the reply tells that the request is complete.
    nlmsghdr* nlh =
        start_request(req.data(), family_, NLM_F_REQUEST | NLM_F_ACK, cmd, ETHTOOL_GENL_VERSION);
    put_header(nlh, kHeaderAttr, ifindex, header_flags);
    return run(nlh, on_reply);
}

std::vector<Result<void>> Socket::set_many(uint8_t cmd, std::span<const SetRequest> reqs) {
    std::vector<Result<void>> results(reqs.size());
    // Requests go out in windows: several messages in one datagram, which
    // the kernel handles in order before sendto() returns. Only the last
    // message asks for an ACK: the kernel answers every other one only if
    // it fails, so the last one's answer comes after every error of the
    // window. One datagram back per window instead of one per device.
    constexpr std::size_t kWindowBytes = 32 * 1024;
    // Each error costs a socket buffer's worth of accounting (~1 KiB): a
    // window whose every message fails must still fit the receive buffer,
    // or the kernel drops answers (ENOBUFS).
    constexpr std::size_t kWindowMessages = 64;
    auto window = std::make_unique_for_overwrite<char[]>(kWindowBytes);
    std::size_t next = 0;
    while (next < reqs.size()) {
        std::size_t used = 0;
        const std::size_t first = next;
        const uint32_t first_seq = seq_ + 1;
        std::vector<nlmsghdr*> sent;
        alignas(nlmsghdr) std::array<char, kRequestBufferSize> one;
        while (next < reqs.size() && sent.size() < kWindowMessages) {
            nlmsghdr* nlh =
                start_request(one.data(), family_, NLM_F_REQUEST, cmd, ETHTOOL_GENL_VERSION);
            put_header(nlh, kHeaderAttr, reqs[next].ifindex, ETHTOOL_FLAG_OMIT_REPLY);
            if (reqs[next].build) reqs[next].build(nlh);
            const std::size_t len = NLMSG_ALIGN(nlh->nlmsg_len);
            if (used + len > kWindowBytes) break;
            nlh->nlmsg_seq = ++seq_;
            std::memcpy(window.get() + used, nlh, nlh->nlmsg_len);
            sent.push_back(reinterpret_cast<nlmsghdr*>(window.get() + used));
            used += len;
            ++next;
        }
        if (sent.empty()) {
            results[next] = fail(Errc::Internal, "ethtool request", "request larger than a window");
            ++next;
            continue;
        }
        sent.back()->nlmsg_flags |= NLM_F_ACK;
        const uint32_t last_seq = sent.back()->nlmsg_seq;
        auto fail_rest = [&](const Error& e) {
            for (std::size_t i = first; i < next; ++i)
                if (results[i]) results[i] = std::unexpected(e);
        };
        if (mnl_socket_sendto(nl_, window.get(), used) < 0) {
            // Read first: the order in which the arguments below are
            // evaluated is unspecified, and building the text allocates.
            const int err = errno;
            auto e = fail_errno(err, describe(sent.front()) + ": send");
            fail_rest(e.error());
            continue;
        }
        std::vector<bool> done(sent.size(), false);
        bool answered = false;  // the last message's answer: the window is complete
        while (!answered) {
            const ssize_t n = mnl_socket_recvfrom(nl_, buf_.get(), kRecvBufferSize);
            if (n < 0) {
                const int err = errno;
                if (err == EINTR) continue;
                Error e = err == EAGAIN
                              ? Error{Errc::Io,
                                      ETIMEDOUT,
                                      describe(sent.front()),
                                      fmt::format("no reply from the kernel within {} s",
                                                  kReplyTimeoutSeconds),
                                      {}}
                              : fail_errno(err, describe(sent.front()) + ": receive").error();
                // Which messages were handled is unknown: none is reported
                // as done (verification reads the device).
                for (std::size_t k = 0; k < sent.size(); ++k)
                    if (!done[k]) results[first + k] = std::unexpected(e);
                break;
            }
            int left = static_cast<int>(n);
            for (const auto* nlh = reinterpret_cast<const nlmsghdr*>(buf_.get());
                 mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
                if (nlh->nlmsg_pid != portid_ || nlh->nlmsg_type != NLMSG_ERROR) continue;
                if (nlh->nlmsg_seq < first_seq || nlh->nlmsg_seq >= first_seq + sent.size())
                    continue;
                const std::size_t k = nlh->nlmsg_seq - first_seq;
                if (done[k]) continue;
                done[k] = true;
                if (nlh->nlmsg_seq == last_seq) answered = true;
                auto st = parse_error_msg(nlh);
                if (!st)
                    results[first + k] =
                        fail(Errc::Internal, describe(sent[k]), "truncated NLMSG_ERROR");
                else if (st->err != 0)
                    results[first + k] = std::unexpected(kernel_error(*st, describe(sent[k])));
            }
        }
    }
    return results;
}

Result<void> Socket::set(uint8_t cmd, int ifindex, const BuildFn& build) {
    alignas(nlmsghdr) std::array<char, kRequestBufferSize> req;
    nlmsghdr* nlh =
        start_request(req.data(), family_, NLM_F_REQUEST | NLM_F_ACK, cmd, ETHTOOL_GENL_VERSION);
    // FEATURES_SET would otherwise answer with a diff of wanted vs active;
    // callers re-read the device after a SET anyway. Other SETs ignore the flag.
    put_header(nlh, kHeaderAttr, ifindex, ETHTOOL_FLAG_OMIT_REPLY);
    if (build) build(nlh);
    return run(nlh, nullptr);
}

Result<std::shared_ptr<const FeatureNames>> Socket::feature_names() {
    if (feature_names_) return feature_names_;
    alignas(nlmsghdr) std::array<char, kRequestBufferSize> req;
    nlmsghdr* nlh = start_request(req.data(), family_, NLM_F_REQUEST | NLM_F_ACK,
                                  ETHTOOL_MSG_STRSET_GET, ETHTOOL_GENL_VERSION);
    // A header without a device: ETH_SS_FEATURES is a global string set. The
    // kernel (6.18) refuses a STRSET_GET without a header ("missing attribute 1").
    put_header(nlh, ETHTOOL_A_STRSET_HEADER, 0, 0);
    nlattr* sets = mnl_attr_nest_start(nlh, ETHTOOL_A_STRSET_STRINGSETS);
    nlattr* set = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGSETS_STRINGSET);
    mnl_attr_put_u32(nlh, ETHTOOL_A_STRINGSET_ID, ETH_SS_FEATURES);
    mnl_attr_nest_end(nlh, set);
    mnl_attr_nest_end(nlh, sets);

    std::optional<FeatureNames> names;
    auto r = run(nlh, [&names](const nlmsghdr* reply) -> Result<void> {
        auto decoded = decode_feature_strings(reply);
        if (!decoded) return std::unexpected(decoded.error());
        names = std::move(*decoded);
        return {};
    });
    if (!r) return std::unexpected(r.error());
    if (!names) return fail(Errc::Internal, describe(nlh), "the kernel sent no string set");
    feature_names_ = std::make_shared<const FeatureNames>(std::move(*names));
    return feature_names_;
}

Result<std::optional<FeatureNames>> Socket::string_set(int ifindex, uint32_t set_id) {
    alignas(nlmsghdr) std::array<char, kRequestBufferSize> req;
    nlmsghdr* nlh = start_request(req.data(), family_, NLM_F_REQUEST | NLM_F_ACK,
                                  ETHTOOL_MSG_STRSET_GET, ETHTOOL_GENL_VERSION);
    put_header(nlh, ETHTOOL_A_STRSET_HEADER, ifindex, 0);
    nlattr* sets = mnl_attr_nest_start(nlh, ETHTOOL_A_STRSET_STRINGSETS);
    nlattr* set = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGSETS_STRINGSET);
    mnl_attr_put_u32(nlh, ETHTOOL_A_STRINGSET_ID, set_id);
    mnl_attr_nest_end(nlh, set);
    mnl_attr_nest_end(nlh, sets);
    std::optional<FeatureNames> names;
    auto r = run(nlh, [&](const nlmsghdr* reply) -> Result<void> {
        auto decoded = decode_string_set(reply, set_id);
        if (!decoded) return std::unexpected(decoded.error());
        names = std::move(decoded->names);
        return {};
    });
    if (!r) return std::unexpected(r.error());
    return names;
}

Result<std::shared_ptr<const FeatureNames>> Socket::global_strings(uint32_t set_id) {
    for (const auto& [id, names] : global_strings_)
        if (id == set_id) return names;
    auto names = string_set(0, set_id);
    if (!names) return std::unexpected(names.error());
    if (!*names)
        return fail(Errc::Internal, "ethtool STRSET_GET " + std::to_string(set_id),
                    "the kernel sent no string set");
    auto shared = std::make_shared<const FeatureNames>(std::move(**names));
    global_strings_.emplace_back(set_id, shared);
    return shared;
}

Result<FeatureNames> Socket::device_strings(int ifindex, uint32_t set_id) {
    auto names = string_set(ifindex, set_id);
    if (!names) return std::unexpected(names.error());
    // A device without the set answers with no set at all.
    return *names ? std::move(**names) : FeatureNames{};
}

Result<std::vector<PrivateFlag>> Socket::private_flags(int ifindex) {
    std::optional<PrivFlagsReply> flags;
    auto r = get(ETHTOOL_MSG_PRIVFLAGS_GET, ifindex, ETHTOOL_FLAG_COMPACT_BITSETS,
                 [&](const nlmsghdr* nlh) -> Result<void> {
                     auto d = decode_private_flags(nlh);
                     if (!d) return std::unexpected(d.error());
                     flags = std::move(*d);
                     return {};
                 });
    if (!r) return std::unexpected(r.error());
    if (!flags) return fail(Errc::Internal, "ethtool PRIVFLAGS_GET", "the kernel sent no reply");
    if (flags->nbits == 0) return std::vector<PrivateFlag>{};
    auto names = device_strings(ifindex, ETH_SS_PRIV_FLAGS);
    if (!names) return std::unexpected(names.error());
    return to_private_flags(*flags, *names);
}

Result<void> Socket::subscribe_monitor(int queue_bytes) {
    const char* context = "ethtool netlink: join the \"monitor\" group";
    if (monitor_group_ == 0)
        return fail(Errc::Unsupported, context, "the ethtool family has no monitor group");
    // Best effort: a larger queue only makes ENOBUFS rarer; the caller copes
    // with ENOBUFS either way.
    if (setsockopt(fd(), SOL_SOCKET, SO_RCVBUFFORCE, &queue_bytes, sizeof queue_bytes) != 0)
        (void)setsockopt(fd(), SOL_SOCKET, SO_RCVBUF, &queue_bytes, sizeof queue_bytes);
    unsigned int group = monitor_group_;
    if (mnl_socket_setsockopt(nl_, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) < 0)
        return fail_syscall(context, "NETLINK_ADD_MEMBERSHIP");
    return {};
}

int Socket::fd() const {
    return mnl_socket_get_fd(nl_);
}

Result<void> Socket::receive_notifications(const ReplyFn& on_msg) {
    const char* context = "ethtool monitor";
    for (;;) {
        sockaddr_nl from{};
        iovec iov{buf_.get(), kRecvBufferSize};
        msghdr msg{};
        msg.msg_name = &from;
        msg.msg_namelen = sizeof from;
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        const ssize_t n = recvmsg(fd(), &msg, MSG_DONTWAIT);
        if (n < 0) {
            const int err = errno;
            if (err == EINTR) continue;
            if (err == EAGAIN) return {};
            if (err == ENOBUFS) {
                auto e = fail(Errc::Io, context,
                              "the kernel dropped notifications (receive queue full); "
                              "read the state again");
                e.error().sys_errno = ENOBUFS;
                return e;
            }
            return fail_errno(err, context);
        }
        if ((msg.msg_flags & MSG_TRUNC) != 0)
            return fail(Errc::Io, context, "a notification was larger than the buffer");
        if (from.nl_pid != 0) continue;  // only the kernel speaks on this group
        int left = static_cast<int>(n);
        const auto* nlh = reinterpret_cast<const nlmsghdr*>(buf_.get());
        for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
            // Stale replies to our own requests carry our portid; events carry 0.
            if (nlh->nlmsg_type != family_ || nlh->nlmsg_pid != 0) continue;
            if (auto r = on_msg(nlh); !r) return r;
        }
    }
}

}  // namespace nictune::ethnl
