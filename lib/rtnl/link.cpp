#include "rtnl/link.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "model/schema.hpp"
#include "util/strings.hpp"

namespace nictune::rtnl {
namespace {

// The kernel sends dump replies in chunks of up to 32 KiB; a larger buffer
// means libnl never has to peek first (one recvmsg per chunk) and never
// truncates.
constexpr std::size_t kReceiveBuffer = 64 * 1024;
// Receive queue asked for on an event socket.
// A dump that raced with a link change is repeated this many times at most.
constexpr int kDumpAttempts = 3;

using Bytes = std::span<const uint8_t>;

struct Attr {
    uint16_t type;
    Bytes payload;
};

// Walks a run of netlink attributes. Unlike nla_parse(), which stops quietly
// at a truncated attribute, a length that runs past the buffer is an error.
template <class Fn>
Result<void> for_each_attr(Bytes buf, std::string_view where, Fn&& fn) {
    std::size_t off = 0;
    while (off < buf.size()) {
        if (buf.size() - off < NLA_HDRLEN)
            return fail(Errc::Internal, std::string(where), "truncated attribute header");
        nlattr hdr{};
        std::memcpy(&hdr, buf.data() + off, sizeof hdr);
        if (hdr.nla_len < NLA_HDRLEN || hdr.nla_len > buf.size() - off)
            return fail(Errc::Internal, std::string(where),
                        "truncated attribute " + std::to_string(hdr.nla_type & NLA_TYPE_MASK));
        const Attr attr{static_cast<uint16_t>(hdr.nla_type & NLA_TYPE_MASK),
                        buf.subspan(off + NLA_HDRLEN, hdr.nla_len - NLA_HDRLEN)};
        if (auto r = fn(attr); !r) return r;
        off += NLA_ALIGN(hdr.nla_len);
    }
    return {};
}

Result<uint32_t> attr_u32(const Attr& a, std::string_view what) {
    if (a.payload.size() < sizeof(uint32_t))
        return fail(Errc::Internal, std::string(what), "truncated attribute");
    uint32_t v = 0;
    std::memcpy(&v, a.payload.data(), sizeof v);
    return v;
}

Result<uint8_t> attr_u8(const Attr& a, std::string_view what) {
    if (a.payload.empty()) return fail(Errc::Internal, std::string(what), "truncated attribute");
    return a.payload[0];
}

// Strings are NUL-terminated on the wire; a missing terminator is tolerated
// by stopping at the attribute's end.
std::string attr_string(const Attr& a) {
    const auto* p = reinterpret_cast<const char*>(a.payload.data());
    return {p, strnlen(p, a.payload.size())};
}

std::string format_hwaddr(Bytes b) {
    static constexpr std::string_view kHex = "0123456789abcdef";
    std::string out;
    out.reserve(b.size() * 3);
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (i != 0) out += ':';
        out += kHex[b[i] >> 4];
        out += kHex[b[i] & 0x0f];
    }
    return out;
}

Bytes message_bytes(const nlmsghdr* nlh) {
    return {reinterpret_cast<const uint8_t*>(nlh), nlh->nlmsg_len};
}

// NLMSGERR_ATTR_MSG of an error or ACK message, or "" when the kernel sent
// none. Requires NETLINK_EXT_ACK; the TLVs start after the echoed request,
// which NETLINK_CAP_ACK cuts down to its header.
std::string extack_message(const nlmsghdr* nlh) {
    if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) == 0) return {};
    if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) return {};
    nlmsgerr err{};
    std::memcpy(&err, NLMSG_DATA(nlh), sizeof err);
    std::size_t payload = sizeof(nlmsgerr);
    if ((nlh->nlmsg_flags & NLM_F_CAPPED) == 0 && err.msg.nlmsg_len > NLMSG_HDRLEN)
        payload += err.msg.nlmsg_len - NLMSG_HDRLEN;
    const std::size_t start = NLMSG_HDRLEN + NLMSG_ALIGN(payload);
    const Bytes all = message_bytes(nlh);
    if (start >= all.size()) return {};
    std::string text;
    (void)for_each_attr(all.subspan(start), "extack", [&](const Attr& a) -> Result<void> {
        if (a.type == NLMSGERR_ATTR_MSG) text = attr_string(a);
        return {};
    });
    return text;
}

// State of one request/reply exchange, handed to libnl's callbacks.
struct Exchange {
    std::vector<Link>* links = nullptr;  // replies are collected here
    std::optional<Error> decode_error;   // first reply that did not decode
    int sys_errno = 0;                   // from the kernel's NLMSG_ERROR
    std::string kernel_message;          // its extack text
};

int on_valid(nl_msg* msg, void* arg) {
    auto* ex = static_cast<Exchange*>(arg);
    const nlmsghdr* nlh = nlmsg_hdr(msg);
    if (nlh->nlmsg_type != RTM_NEWLINK || ex->links == nullptr) return NL_SKIP;
    auto link = decode_link(nlh);
    // Keep reading on a bad reply: stopping would leave the rest of a dump
    // queued and desynchronise the next request.
    if (!link) {
        if (!ex->decode_error) ex->decode_error = std::move(link.error());
        return NL_SKIP;
    }
    ex->links->push_back(std::move(*link));
    return NL_OK;
}

int on_error(sockaddr_nl* /*who*/, nlmsgerr* err, void* arg) {
    auto* ex = static_cast<Exchange*>(arg);
    ex->sys_errno = -err->error;
    // libnl hands over the payload; the header sits right before it.
    const auto* nlh =
        reinterpret_cast<const nlmsghdr*>(reinterpret_cast<const char*>(err) - NLMSG_HDRLEN);
    ex->kernel_message = extack_message(nlh);
    return NL_STOP;
}

// Points the socket's callbacks at one exchange and back to libnl's defaults
// when the exchange is over, so no callback outlives its state.
class CallbackScope {
  public:
    CallbackScope(nl_sock* sk, Exchange* ex) : sk_(sk) {
        nl_socket_modify_cb(sk_, NL_CB_VALID, NL_CB_CUSTOM, on_valid, ex);
        nl_socket_modify_err_cb(sk_, NL_CB_CUSTOM, on_error, ex);
    }
    ~CallbackScope() {
        nl_socket_modify_cb(sk_, NL_CB_VALID, NL_CB_DEFAULT, nullptr, nullptr);
        nl_socket_modify_err_cb(sk_, NL_CB_DEFAULT, nullptr, nullptr);
    }
    CallbackScope(const CallbackScope&) = delete;
    CallbackScope& operator=(const CallbackScope&) = delete;

  private:
    nl_sock* sk_;
};

// A failed exchange: the kernel's errno and extack when it answered with an
// error, else libnl's own failure.
std::unexpected<Error> exchange_failure(const Exchange& ex, int nl_err, std::string context,
                                        Errc code = Errc::Kernel) {
    if (ex.sys_errno != 0) {
        auto e = fail_errno(ex.sys_errno, std::move(context), code);
        e.error().kernel_message = ex.kernel_message;
        return e;
    }
    return fail(Errc::Io, std::move(context), std::string("netlink: ") + nl_geterror(nl_err));
}

struct NlMsgDeleter {
    void operator()(nl_msg* m) const { nlmsg_free(m); }
};
using NlMsgPtr = std::unique_ptr<nl_msg, NlMsgDeleter>;

NlMsgPtr link_request(int type, int flags, int ifindex) {
    NlMsgPtr msg(nlmsg_alloc_simple(type, flags));
    if (!msg) return nullptr;
    ifinfomsg ifi{};
    ifi.ifi_family = AF_UNSPEC;
    ifi.ifi_index = ifindex;
    if (nlmsg_append(msg.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO) < 0) return nullptr;
    return msg;
}

}  // namespace

Result<Link> decode_link(const nlmsghdr* nlh) {
    constexpr std::string_view kWhere = "link message";
    if (nlh == nullptr) return fail(Errc::Internal, std::string(kWhere), "no message");
    if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
        return fail(Errc::Internal, std::string(kWhere),
                    "unexpected message type " + std::to_string(nlh->nlmsg_type));
    if (nlh->nlmsg_len < NLMSG_SPACE(sizeof(ifinfomsg)))
        return fail(Errc::Internal, std::string(kWhere), "truncated ifinfomsg");

    ifinfomsg ifi{};
    std::memcpy(&ifi, NLMSG_DATA(nlh), sizeof ifi);
    Link link;
    link.ifindex = ifi.ifi_index;
    link.flags = ifi.ifi_flags;
    bool have_name = false;

    const Bytes attrs = message_bytes(nlh).subspan(NLMSG_SPACE(sizeof(ifinfomsg)));
    auto put_u32 = [&](const Attr& a, Key k) -> Result<void> {
        auto v = attr_u32(a, key_path(k));
        if (!v) return std::unexpected(std::move(v.error()));
        link.values.set(k, *v);
        return {};
    };
    auto r = for_each_attr(attrs, kWhere, [&](const Attr& a) -> Result<void> {
        switch (a.type) {
            case IFLA_IFNAME:
                link.name = escape_name(attr_string(a));
                have_name = true;
                return {};
            case IFLA_PROP_LIST:
                return for_each_attr(a.payload, "IFLA_PROP_LIST", [&](const Attr& in) {
                    if (in.type == IFLA_ALT_IFNAME)
                        link.altnames.push_back(escape_name(attr_string(in)));
                    return Result<void>{};
                });
            case IFLA_ADDRESS:
                link.mac = format_hwaddr(a.payload);
                return {};
            case IFLA_PERM_ADDRESS:
                link.perm_mac = format_hwaddr(a.payload);
                return {};
            case IFLA_MTU:
                return put_u32(a, Key::LinkMtu);
            case IFLA_MIN_MTU:
                return put_u32(a, Key::LinkMinMtu);
            case IFLA_MAX_MTU: {
                // 0 is the kernel's "no upper limit" (lo, some tunnels), not
                // a maximum of zero.
                auto v = attr_u32(a, key_path(Key::LinkMaxMtu));
                if (!v) return std::unexpected(std::move(v.error()));
                if (*v != 0) link.values.set(Key::LinkMaxMtu, *v);
                return {};
            }
            case IFLA_TXQLEN:
                return put_u32(a, Key::LinkTxqueuelen);
            case IFLA_OPERSTATE: {
                auto v = attr_u8(a, key_path(Key::LinkOperstate));
                if (!v) return std::unexpected(std::move(v.error()));
                // A state newer kernels may add is unknown to us: absent, not
                // a number reports cannot name.
                if (enum_name(Key::LinkOperstate, *v)) link.values.set(Key::LinkOperstate, *v);
                return {};
            }
            case IFLA_CARRIER: {
                auto v = attr_u8(a, key_path(Key::LinkCarrier));
                if (!v) return std::unexpected(std::move(v.error()));
                link.values.set(Key::LinkCarrier, *v != 0 ? 1 : 0);
                return {};
            }
            case IFLA_PARENT_DEV_NAME:
                link.parent_dev = attr_string(a);
                return {};
            case IFLA_PARENT_DEV_BUS_NAME:
                link.parent_bus = attr_string(a);
                return {};
            case IFLA_LINKINFO:
                return for_each_attr(a.payload, "IFLA_LINKINFO", [&](const Attr& in) {
                    if (in.type == IFLA_INFO_KIND) link.kind = attr_string(in);
                    return Result<void>{};
                });
            default:
                // Newer kernels send attributes the build headers do not name.
                return {};
        }
    });
    if (!r) return std::unexpected(std::move(r.error()));
    if (!have_name || link.name.empty())
        return fail(Errc::Internal, std::string(kWhere),
                    "ifindex " + std::to_string(link.ifindex) + " without IFLA_IFNAME");
    return link;
}

Result<std::unique_ptr<Socket>> Socket::open() {
    std::unique_ptr<Socket> s(new Socket());
    s->sk_ = nl_socket_alloc();
    if (s->sk_ == nullptr) return fail(Errc::Internal, "rtnetlink", "out of memory");
    if (int err = nl_connect(s->sk_, NETLINK_ROUTE); err < 0)
        return fail(Errc::Io, "rtnetlink: connect", nl_geterror(err));
    const int fd = nl_socket_get_fd(s->sk_);
    // The socket must not leak into anything the process might exec.
    if (int fl = fcntl(fd, F_GETFD); fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0) {
        const int err = errno;  // before the context string is built (it allocates)
        return fail_errno(err, "rtnetlink: FD_CLOEXEC");
    }
    // Ask for the kernel's error text and keep error replies short. Kernels
    // without extack (< 4.12) still work, just without the text.
    const int one = 1;
    (void)setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
    (void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
    if (int err = nl_socket_set_msg_buf_size(s->sk_, kReceiveBuffer); err < 0)
        return fail(Errc::Io, "rtnetlink: buffer size", nl_geterror(err));
    return s;
}

Socket::~Socket() {
    if (sk_ != nullptr) nl_socket_free(sk_);
}

Result<void> Socket::dump_links(const LinkFn& on_link) {
    for (int attempt = 1;; ++attempt) {
        std::vector<Link> links;
        Exchange ex;
        ex.links = &links;
        CallbackScope scope(sk_, &ex);
        // Without statistics: nictune never reads them, and they are most of
        // each reply (the kernel also skips gathering them).
        NlMsgPtr msg = link_request(RTM_GETLINK, NLM_F_DUMP, 0);
        if (msg && nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) < 0) msg.reset();
        if (!msg) return fail(Errc::Internal, "links: dump", "out of memory");
        if (int err = nl_send_auto(sk_, msg.get()); err < 0)
            return fail(Errc::Io, "links: dump", std::string("netlink: ") + nl_geterror(err));
        const int err = nl_recvmsgs_default(sk_);
        // The link list changed while the kernel walked it; the replies are
        // consistent only after a clean pass. Links are delivered after that.
        if (err == -NLE_DUMP_INTR && attempt < kDumpAttempts) continue;
        if (err < 0) return exchange_failure(ex, err, "links: dump");
        if (ex.decode_error) return std::unexpected(std::move(*ex.decode_error));
        for (auto& l : links)
            on_link(std::move(l));
        return {};
    }
}

namespace {

Result<Link> get_one(nl_sock* sk, NlMsgPtr msg, const std::string& context) {
    if (!msg) return fail(Errc::Internal, context, "out of memory");
    std::vector<Link> links;
    Exchange ex;
    ex.links = &links;
    CallbackScope scope(sk, &ex);
    if (int err = nl_send_auto(sk, msg.get()); err < 0)
        return fail(Errc::Io, context + ": get", std::string("netlink: ") + nl_geterror(err));
    // Auto-ack put NLM_F_ACK on the request: the reply comes first, then an
    // ACK that must be consumed here, or the next request would read it.
    int err = nl_recvmsgs_default(sk);
    if (err >= 0 && ex.sys_errno == 0) err = nl_wait_for_ack(sk);
    if (err < 0) {
        auto e = exchange_failure(ex, err, context);
        if (e.error().code == Errc::NoSuchInterface) e.error().message = "no such interface";
        return e;
    }
    if (ex.decode_error) return std::unexpected(std::move(*ex.decode_error));
    if (links.size() != 1)
        return fail(Errc::Internal, context,
                    "expected one link in the reply, got " + std::to_string(links.size()));
    return std::move(links.front());
}

}  // namespace

Result<Link> Socket::get_link(const std::string& name) {
    if (name.empty()) return fail(Errc::InvalidArgument, "link", "empty interface name");
    auto bytes = unescape_name(name);
    if (!bytes) return std::unexpected(std::move(bytes.error()).within("link"));
    if (bytes->size() >= ALTIFNAMSIZ || bytes->find('\0') != std::string::npos)
        return fail(Errc::InvalidArgument, "link", "invalid interface name '" + name + "'");
    NlMsgPtr msg = link_request(RTM_GETLINK, 0, 0);
    if (msg && nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) < 0) msg.reset();
    // Names too long for IFLA_IFNAME can only be alternative names; the
    // kernel looks IFLA_IFNAME up among the alternative names too.
    const int attr = bytes->size() < IFNAMSIZ ? IFLA_IFNAME : IFLA_ALT_IFNAME;
    if (msg && nla_put_string(msg.get(), attr, bytes->c_str()) < 0) msg.reset();
    return get_one(sk_, std::move(msg), name);
}

Result<Link> Socket::get_link(int ifindex) {
    if (ifindex <= 0)
        return fail(Errc::InvalidArgument, "link", "invalid ifindex " + std::to_string(ifindex));
    NlMsgPtr msg = link_request(RTM_GETLINK, 0, ifindex);
    if (msg && nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) < 0) msg.reset();
    return get_one(sk_, std::move(msg), "ifindex " + std::to_string(ifindex));
}

std::vector<Result<void>> Socket::change_links(
    std::span<const std::pair<int, LinkChange>> changes) {
    std::vector<Result<void>> results(changes.size());
    std::vector<std::string> contexts(changes.size());
    constexpr std::size_t kWindowBytes = 32 * 1024;
    std::vector<char> window;
    window.reserve(kWindowBytes);
    std::size_t next = 0;
    while (next < changes.size()) {
        window.clear();
        const std::size_t first = next;
        std::vector<uint32_t> seqs;
        std::size_t last_offset = 0;
        // Each failure's answer costs ~1 KiB of the receive buffer: a window
        // whose every message fails must fit it, or the kernel drops
        // answers (ENOBUFS).
        while (next < changes.size() && window.size() + 256 <= kWindowBytes && seqs.size() < 64) {
            const auto& [ifindex, change] = changes[next];
            std::string& ctx = contexts[next];
            ctx = "ifindex " + std::to_string(ifindex) + ": ";
            if (change.mtu) ctx += key_path(Key::LinkMtu) + "=" + std::to_string(*change.mtu);
            if (change.txqueuelen)
                ctx += std::string(change.mtu ? ", " : "") + key_path(Key::LinkTxqueuelen) + "=" +
                       std::to_string(*change.txqueuelen);
            ctx += ": set";
            NlMsgPtr msg = link_request(RTM_NEWLINK, 0, ifindex);
            if (msg && change.mtu && nla_put_u32(msg.get(), IFLA_MTU, *change.mtu) < 0) msg.reset();
            if (msg && change.txqueuelen &&
                nla_put_u32(msg.get(), IFLA_TXQLEN, *change.txqueuelen) < 0)
                msg.reset();
            if (!msg || ifindex <= 0) {
                results[next] = fail(Errc::Internal, ctx, "cannot build the request");
                seqs.push_back(0);
                ++next;
                continue;
            }
            nlmsghdr* nlh = nlmsg_hdr(msg.get());
            // Sequence numbers of our own, outside libnl's: these ACKs are
            // read here, and libnl's expected sequence must stay in step.
            static uint32_t batch_seq = 0x80000000U;
            nlh->nlmsg_seq = ++batch_seq;
            // nl_send_auto would add this; without it the kernel ACKs the
            // message without acting on it. No NLM_F_ACK: the kernel answers
            // only a failure, and the window's last message (below).
            nlh->nlmsg_flags |= NLM_F_REQUEST;
            nlh->nlmsg_pid = 0;
            seqs.push_back(nlh->nlmsg_seq);
            last_offset = window.size();
            const auto* bytes = reinterpret_cast<const char*>(nlh);
            window.insert(window.end(), bytes, bytes + NLMSG_ALIGN(nlh->nlmsg_len));
            ++next;
        }
        std::size_t pending = 0;
        for (auto q : seqs)
            pending += q != 0;
        if (pending == 0) continue;
        // The kernel handles the window's messages in order before
        // nl_sendto() returns: the answer to the last comes after every
        // failure's.
        auto* last = reinterpret_cast<nlmsghdr*>(window.data() + last_offset);
        last->nlmsg_flags |= NLM_F_ACK;
        const uint32_t last_seq = last->nlmsg_seq;
        if (nl_sendto(sk_, window.data(), window.size()) < 0) {
            for (std::size_t i = first; i < next; ++i)
                if (results[i]) results[i] = fail(Errc::Io, contexts[i], "netlink: cannot send");
            continue;
        }
        std::vector<bool> done(seqs.size(), false);
        bool answered = false;
        while (!answered) {
            sockaddr_nl who{};
            unsigned char* buf = nullptr;
            const int n = nl_recv(sk_, &who, &buf, nullptr);
            if (n <= 0) {
                // Which messages were handled is unknown: none is reported
                // as done (verification reads the device).
                for (std::size_t k = 0; k < seqs.size(); ++k)
                    if (seqs[k] != 0 && !done[k])
                        results[first + k] =
                            fail(Errc::Io, contexts[first + k], "netlink: no acknowledgement");
                std::free(buf);
                break;
            }
            int left = n;
            for (auto* nlh = reinterpret_cast<nlmsghdr*>(buf); nlmsg_ok(nlh, left);
                 nlh = nlmsg_next(nlh, &left)) {
                if (nlh->nlmsg_type != NLMSG_ERROR ||
                    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr)))
                    continue;
                auto it = std::find(seqs.begin(), seqs.end(), nlh->nlmsg_seq);
                if (it == seqs.end()) continue;
                const auto k = static_cast<std::size_t>(it - seqs.begin());
                if (done[k]) continue;
                done[k] = true;
                if (nlh->nlmsg_seq == last_seq) answered = true;
                nlmsgerr err{};
                std::memcpy(&err, NLMSG_DATA(nlh), sizeof err);
                if (err.error != 0) {
                    Error e{Errc::Kernel, -err.error, contexts[first + k],
                            std::strerror(-err.error), extack_message(nlh)};
                    if (e.sys_errno == ENODEV) e.code = Errc::NoSuchInterface;
                    if (e.sys_errno == EPERM || e.sys_errno == EACCES)
                        e.code = Errc::PermissionDenied;
                    results[first + k] = std::unexpected(std::move(e));
                }
            }
            std::free(buf);
        }
    }
    return results;
}

Result<void> Socket::change_link(int ifindex, const LinkChange& change) {
    std::string context = "ifindex " + std::to_string(ifindex) + ": ";
    std::string what;
    auto describe = [&](Key k, uint32_t v) {
        if (!what.empty()) what += ", ";
        what += key_path(k) + "=" + std::to_string(v);
    };
    if (change.mtu) describe(Key::LinkMtu, *change.mtu);
    if (change.txqueuelen) describe(Key::LinkTxqueuelen, *change.txqueuelen);
    if (what.empty()) return {};
    context += what + ": set";
    if (ifindex <= 0) return fail(Errc::InvalidArgument, context, "invalid ifindex");

    NlMsgPtr msg = link_request(RTM_NEWLINK, NLM_F_ACK, ifindex);
    if (msg && change.mtu && nla_put_u32(msg.get(), IFLA_MTU, *change.mtu) < 0) msg.reset();
    if (msg && change.txqueuelen && nla_put_u32(msg.get(), IFLA_TXQLEN, *change.txqueuelen) < 0)
        msg.reset();
    if (!msg) return fail(Errc::Internal, context, "out of memory");

    Exchange ex;
    CallbackScope scope(sk_, &ex);
    if (int err = nl_send_auto(sk_, msg.get()); err < 0)
        return fail(Errc::Io, context, std::string("netlink: ") + nl_geterror(err));
    if (int err = nl_wait_for_ack(sk_); err < 0) return exchange_failure(ex, err, context);
    return {};
}

Result<void> Socket::subscribe_links(int queue_bytes) {
    if (int err = nl_socket_add_membership(sk_, RTNLGRP_LINK); err < 0)
        return fail(Errc::Io, "link events: subscribe", nl_geterror(err));
    // Notifications carry no sequence number of ours.
    nl_socket_disable_seq_check(sk_);
    // Room for a burst (a driver reset or hundreds of new VFs announce
    // every link at once) before the kernel drops events. Best effort: the
    // caller copes with ENOBUFS either way.
    const int fd = nl_socket_get_fd(sk_);
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &queue_bytes, sizeof queue_bytes) != 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &queue_bytes, sizeof queue_bytes);
    if (int err = nl_socket_set_nonblocking(sk_); err < 0)
        return fail(Errc::Io, "link events: subscribe", nl_geterror(err));
    return {};
}

int Socket::fd() const {
    return nl_socket_get_fd(sk_);
}

Result<void> Socket::receive_events(const std::function<void(Link&&, bool deleted)>& on_event) {
    // Read directly rather than through nl_recvmsgs(): libnl folds ENOBUFS
    // (events were lost) into its generic out-of-memory code.
    std::vector<uint8_t> buf(kReceiveBuffer);
    std::optional<Error> first_error;
    for (;;) {
        sockaddr_nl from{};
        iovec iov{buf.data(), buf.size()};
        msghdr mh{};
        mh.msg_name = &from;
        mh.msg_namelen = sizeof from;
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        const ssize_t n = recvmsg(fd(), &mh, MSG_DONTWAIT);
        if (n < 0) {
            // Read once: building the error's context allocates, and the
            // daemon resynchronises on ENOBUFS only if that is what it gets.
            const int err = errno;
            if (err == EINTR) continue;
            // EWOULDBLOCK is the same value on Linux.
            if (err == EAGAIN) break;
            return fail_errno(err, "link events: receive");
        }
        if (n == 0) break;
        // Only the kernel speaks for the links; other senders are ignored.
        if (from.nl_pid != 0) continue;
        if ((mh.msg_flags & MSG_TRUNC) != 0) {
            if (!first_error)
                first_error =
                    Error{Errc::Internal, 0, "link events: receive", "truncated datagram", {}};
            continue;
        }
        auto left = static_cast<std::size_t>(n);
        std::size_t off = 0;
        while (left >= NLMSG_HDRLEN) {
            nlmsghdr hdr{};
            std::memcpy(&hdr, buf.data() + off, sizeof hdr);
            if (hdr.nlmsg_len < NLMSG_HDRLEN || hdr.nlmsg_len > left) break;
            if (hdr.nlmsg_type == RTM_NEWLINK || hdr.nlmsg_type == RTM_DELLINK) {
                // buf.data() is suitably aligned and every nlmsg_len is padded
                // to NLMSG_ALIGNTO, so each header is aligned as well.
                const auto* nlh = reinterpret_cast<const nlmsghdr*>(buf.data() + off);
                auto link = decode_link(nlh);
                if (link)
                    on_event(std::move(*link), hdr.nlmsg_type == RTM_DELLINK);
                else if (!first_error)
                    first_error = std::move(link.error());
            }
            const std::size_t step = std::min<std::size_t>(NLMSG_ALIGN(hdr.nlmsg_len), left);
            off += step;
            left -= step;
        }
    }
    if (first_error) return std::unexpected(std::move(*first_error));
    return {};
}

namespace {

std::optional<std::string> attr_address(const Attr& a, uint8_t family) {
    char buf[INET6_ADDRSTRLEN] = {};
    const std::size_t want = family == AF_INET ? 4 : 16;
    if (a.payload.size() != want) return std::nullopt;
    if (inet_ntop(family, a.payload.data(), buf, sizeof buf) == nullptr) return std::nullopt;
    return std::string(buf);
}

struct RouteExchange {
    Exchange ex;  // errors, as for links
    std::vector<Route> routes;
    std::optional<Error> decode_error;
};

int on_route(nl_msg* msg, void* arg) {
    auto* rx = static_cast<RouteExchange*>(arg);
    const nlmsghdr* nlh = nlmsg_hdr(msg);
    if (nlh->nlmsg_type != RTM_NEWROUTE) return NL_SKIP;
    auto route = decode_route(nlh);
    if (!route) {
        if (!rx->decode_error) rx->decode_error = std::move(route.error());
        return NL_SKIP;
    }
    rx->routes.push_back(std::move(*route));
    return NL_OK;
}

}  // namespace

Result<Route> decode_route(const nlmsghdr* nlh) {
    constexpr std::string_view kWhere = "route message";
    if (nlh == nullptr) return fail(Errc::Internal, std::string(kWhere), "no message");
    if (nlh->nlmsg_type != RTM_NEWROUTE)
        return fail(Errc::Internal, std::string(kWhere),
                    "unexpected message type " + std::to_string(nlh->nlmsg_type));
    if (nlh->nlmsg_len < NLMSG_SPACE(sizeof(rtmsg)))
        return fail(Errc::Internal, std::string(kWhere), "truncated rtmsg");
    rtmsg rtm{};
    std::memcpy(&rtm, NLMSG_DATA(nlh), sizeof rtm);
    Route route;
    route.type = rtm.rtm_type;
    const Bytes attrs = message_bytes(nlh).subspan(NLMSG_SPACE(sizeof(rtmsg)));
    auto r = for_each_attr(attrs, kWhere, [&](const Attr& a) -> Result<void> {
        switch (a.type) {
            case RTA_OIF: {
                auto v = attr_u32(a, "RTA_OIF");
                if (!v) return std::unexpected(std::move(v.error()));
                route.oif = static_cast<int>(*v);
                return {};
            }
            case RTA_GATEWAY:
                route.gateway = attr_address(a, rtm.rtm_family);
                return {};
            case RTA_PREFSRC:
                route.prefsrc = attr_address(a, rtm.rtm_family);
                return {};
            default:
                return {};
        }
    });
    if (!r) return std::unexpected(std::move(r.error()));
    return route;
}

Result<Route> Socket::route_to(const sockaddr* dst, int oif) {
    std::string context = "route";
    if (dst == nullptr || (dst->sa_family != AF_INET && dst->sa_family != AF_INET6))
        return fail(Errc::InvalidArgument, context, "not an IPv4 or IPv6 address");
    NlMsgPtr msg(nlmsg_alloc_simple(RTM_GETROUTE, 0));
    rtmsg rtm{};
    rtm.rtm_family = static_cast<uint8_t>(dst->sa_family);
    // A host route, as `ip route get` asks.
    rtm.rtm_dst_len = dst->sa_family == AF_INET ? 32 : 128;
    if (msg && nlmsg_append(msg.get(), &rtm, sizeof rtm, NLMSG_ALIGNTO) < 0) msg.reset();
    char text[INET6_ADDRSTRLEN] = {};
    if (dst->sa_family == AF_INET) {
        sockaddr_in s4{};
        std::memcpy(&s4, dst, sizeof s4);
        inet_ntop(AF_INET, &s4.sin_addr, text, sizeof text);
        if (msg && nla_put(msg.get(), RTA_DST, 4, &s4.sin_addr) < 0) msg.reset();
    } else {
        sockaddr_in6 s6{};
        std::memcpy(&s6, dst, sizeof s6);
        inet_ntop(AF_INET6, &s6.sin6_addr, text, sizeof text);
        if (msg && nla_put(msg.get(), RTA_DST, 16, &s6.sin6_addr) < 0) msg.reset();
        if (oif <= 0) oif = static_cast<int>(s6.sin6_scope_id);
    }
    context = std::string("route to ") + text;
    if (msg && oif > 0 && nla_put_u32(msg.get(), RTA_OIF, static_cast<uint32_t>(oif)) < 0)
        msg.reset();
    if (!msg) return fail(Errc::Internal, context, "out of memory");

    RouteExchange rx;
    nl_socket_modify_cb(sk_, NL_CB_VALID, NL_CB_CUSTOM, on_route, &rx);
    nl_socket_modify_err_cb(sk_, NL_CB_CUSTOM, on_error, &rx.ex);
    int err = nl_send_auto(sk_, msg.get());
    if (err >= 0) {
        err = nl_recvmsgs_default(sk_);
        if (err >= 0 && rx.ex.sys_errno == 0) err = nl_wait_for_ack(sk_);
    }
    nl_socket_modify_cb(sk_, NL_CB_VALID, NL_CB_DEFAULT, nullptr, nullptr);
    nl_socket_modify_err_cb(sk_, NL_CB_DEFAULT, nullptr, nullptr);
    if (err < 0 || rx.ex.sys_errno != 0) {
        auto e = exchange_failure(rx.ex, err < 0 ? err : -NLE_FAILURE, context);
        // ENODEV here means "no route through that interface", not a
        // missing interface name of the caller's.
        if (e.error().code == Errc::NoSuchInterface) e.error().code = Errc::Kernel;
        return e;
    }
    if (rx.decode_error) return std::unexpected(std::move(*rx.decode_error));
    if (rx.routes.size() != 1)
        return fail(Errc::Internal, context,
                    "expected one route in the reply, got " + std::to_string(rx.routes.size()));
    return std::move(rx.routes.front());
}

}  // namespace nictune::rtnl
