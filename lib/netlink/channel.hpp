// One netlink socket and the loops that every family of nictune's runs over
// it: a request and its replies up to the ACK or NLMSG_DONE matched by
// sequence number, many requests in windows that ask for one ACK each, and
// the notifications queued on a multicast socket. ethnl/ (generic netlink)
// and rtnl/ (rtnetlink) build and decode the messages; this is the plumbing.
//
// The socket lives in the network namespace of the thread that opened it.
#pragma once

#include <linux/netlink.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

struct mnl_socket;

namespace nictune::netlink {

// Called once per reply or notification; the message is valid during the call.
using MessageFn = std::function<Result<void>(const nlmsghdr*)>;
// Names a request in an error ("ethtool RINGS_SET ifindex 7"), read back from
// the request itself. Called only when something failed, so the text costs
// nothing on the way that works.
using DescribeFn = std::function<std::string(const nlmsghdr* request)>;
// Fills request `i` of a batch into `nlh`, a header with room for
// kRequestBytes: its type, flags (never NLM_F_ACK), fixed header and
// attributes. An error is that request's result, and it is not sent.
using BuildFn = std::function<Result<void>(std::size_t i, nlmsghdr* nlh)>;

// Called with a batch request's index and each message answering it (a
// GET's reply); the message is valid during the call. An error becomes
// that request's result.
using IndexedMessageFn = std::function<Result<void>(std::size_t i, const nlmsghdr*)>;

// An interrupted dump (NLM_F_DUMP_INTR): Errc::Busy with sys_errno EINTR.
// Every reply was still handed over; the caller reads again or keeps them.
bool is_interrupted(const Error& e);

// A request is a header, a fixed header and a few attributes or one bitset.
inline constexpr std::size_t kRequestBytes = 8 * 1024;

// Where a request is built: on the stack, aligned for its header.
struct alignas(nlmsghdr) RequestBuffer {
    std::array<char, kRequestBytes> bytes;
    char* data() { return bytes.data(); }
};

class Channel {
  public:
    // A kernel that never answers must not hang the daemon forever.
    static constexpr int kReplyTimeoutSeconds = 10;
    // A batch's window: several requests in one datagram (see send_batch).
    static constexpr std::size_t kWindowBytes = 32 * 1024;
    static constexpr std::size_t kWindowMessages = 64;

    // A socket of `protocol` (NETLINK_GENERIC, NETLINK_ROUTE) with extended
    // ACKs (the kernel's reason for a refusal) that do not echo the request,
    // and a reply timeout. `context` names it in errors.
    static Result<Channel> open(int protocol, std::string_view context);

    Channel(Channel&&) noexcept;
    Channel& operator=(Channel&&) noexcept;
    ~Channel();

    [[nodiscard]] int fd() const;

    // Sends `request` (its sequence number is set here) and reads until its
    // NLMSG_DONE or NLMSG_ERROR, handing every other message of its sequence
    // to on_reply (may be empty). The kernel's refusal is kernel_error() of
    // its answer; a callback's error stops the callbacks, not the reading
    // (the rest of a dump would otherwise be read as the next request's),
    // and is returned; an interrupted dump is is_interrupted().
    Result<void> request(nlmsghdr* request, const DescribeFn& describe, const MessageFn& on_reply);

    // `count` requests built by `build`, one result each in order. They go
    // out in windows of up to kWindowBytes and kWindowMessages: the kernel
    // handles a datagram's messages in order before sendto() returns, and
    // answers a request without NLM_F_ACK only when it fails, so only the
    // last message of a window asks for an ACK and that ACK comes after
    // every failure of its window (BENCHMARKS.md, "SET windows ask for one
    // ACK"). The message limit keeps a window whose every request fails
    // within the receive buffer (each failure costs ~1 KiB of it). A window
    // whose answer never comes fails whole with Errc::Io: which of its
    // requests were carried out is unknown.
    // `on_reply`: the batch's GETs, whose replies (every message of a
    // request's sequence that is not its ACK or error) go to it by index,
    // and windows of at most `window_messages` (their replies wait in the
    // socket's receive queue until the window's ACK has been read).
    std::vector<Result<void>> send_batch(std::size_t count, const BuildFn& build,
                                         const DescribeFn& describe,
                                         const IndexedMessageFn& on_reply = {},
                                         std::size_t window_messages = kWindowMessages);

    // Joins multicast group `group` with a receive queue of `queue_bytes`
    // asked for (SO_RCVBUFFORCE with CAP_NET_ADMIN, else SO_RCVBUF, which
    // net.core.rmem_max caps; best effort: a larger queue only makes ENOBUFS
    // rarer). Notifications are then read with receive_queued().
    // `queue_bytes` <= 0 leaves the queue as it is (joining again).
    Result<void> join(unsigned group, int queue_bytes, std::string_view context);
    // Leaves `group` and throws away what is queued (a pending ENOBUFS
    // included): once it returns, the socket holds nothing, and after a
    // join() again only what was sent after that.
    Result<void> leave(unsigned group, std::string_view context);

    // Reads what is queued without blocking and hands each message the
    // kernel sent to on_msg. The first error of a callback or a truncated
    // datagram is returned after the queue is drained; ENOBUFS (the kernel
    // dropped notifications) is returned at once as Errc::Io with sys_errno
    // ENOBUFS, so that the caller resynchronises.
    Result<void> receive_queued(std::string_view context, const MessageFn& on_msg);

    // Frees the receive buffer; the next receive allocates it again. The
    // daemon calls it when it goes idle: the buffer's pages that a dump or
    // a burst of notifications reached would otherwise stay resident while
    // nothing is read (eight channels in nictuned, up to 32 KiB each). Not
    // from within a callback of this channel.
    void release_buffer() noexcept { buf_.reset(); }

  private:
    Channel() = default;
    // The receive buffer, allocated on first use after release_buffer().
    char* buffer();
    // One datagram into buf_; its length, or the error of the receive
    // (ETIMEDOUT after kReplyTimeoutSeconds).
    Result<std::size_t> receive(const DescribeFn& describe, const nlmsghdr* request);

    struct Close {
        void operator()(mnl_socket* nl) const;
    };
    std::unique_ptr<mnl_socket, Close> nl_;
    uint32_t portid_ = 0;
    uint32_t seq_ = 0;
    // >= 32 KiB: the kernel sizes dump datagrams after the largest buffer
    // the socket has read with, up to 32 KiB, and a single reply can be
    // larger still; a datagram that does not fit is truncated. Null while
    // released.
    std::unique_ptr<char[]> buf_;
};

}  // namespace nictune::netlink
