#include "netlink/channel.hpp"

#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <cerrno>
#include <cstring>
#include <optional>

#include "netlink/ack.hpp"

namespace nictune::netlink {
namespace {

constexpr std::size_t kReceiveBytes = 64 * 1024;

// The failed system call's errno, read before anything else can change it
// (building the context allocates).
std::unexpected<Error> fail_syscall(std::string_view context, std::string_view what) {
    const int err = errno;
    return fail_errno(err, fmt::format("{}: {}", context, what));
}

Error no_reply(std::string context) {
    return Error{Errc::Io,
                 ETIMEDOUT,
                 std::move(context),
                 fmt::format("no reply from the kernel within {} s", Channel::kReplyTimeoutSeconds),
                 {}};
}

}  // namespace

bool is_interrupted(const Error& e) {
    return e.code == Errc::Busy && e.sys_errno == EINTR;
}

void Channel::Close::operator()(mnl_socket* nl) const {
    mnl_socket_close(nl);
}

Channel::Channel(Channel&&) noexcept = default;
Channel& Channel::operator=(Channel&&) noexcept = default;
Channel::~Channel() = default;

Result<Channel> Channel::open(int protocol, std::string_view context) {
    Channel c;
    c.nl_.reset(mnl_socket_open2(protocol, SOCK_CLOEXEC));
    if (!c.nl_) return fail_syscall(context, "open");
    // Extended ACKs carry the kernel's reason for a refusal ("requested
    // channel count exceeds maximum"); capped ACKs do not echo our request.
    // Kernels without them (< 4.12) still answer, without the text.
    int one = 1;
    (void)mnl_socket_setsockopt(c.nl_.get(), NETLINK_EXT_ACK, &one, sizeof one);
    (void)mnl_socket_setsockopt(c.nl_.get(), NETLINK_CAP_ACK, &one, sizeof one);
    if (mnl_socket_bind(c.nl_.get(), 0, MNL_SOCKET_AUTOPID) < 0)
        return fail_syscall(context, "bind");
    timeval tv{kReplyTimeoutSeconds, 0};
    if (setsockopt(c.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
        return fail_syscall(context, "SO_RCVTIMEO");
    c.portid_ = mnl_socket_get_portid(c.nl_.get());
    return c;
}

int Channel::fd() const {
    return mnl_socket_get_fd(nl_.get());
}

char* Channel::buffer() {
    // For overwrite: a page the kernel's datagrams never reach is not touched.
    if (!buf_) buf_ = std::make_unique_for_overwrite<char[]>(kReceiveBytes);
    return buf_.get();
}

Result<std::size_t> Channel::receive(const DescribeFn& describe, const nlmsghdr* request) {
    for (;;) {
        const ssize_t n = mnl_socket_recvfrom(nl_.get(), buffer(), kReceiveBytes);
        if (n >= 0) return static_cast<std::size_t>(n);
        const int err = errno;
        if (err == EINTR) continue;
        if (err == EAGAIN) return std::unexpected(no_reply(describe(request)));
        return fail_errno(err, describe(request) + ": receive");
    }
}

Result<void> Channel::request(nlmsghdr* request, const DescribeFn& describe,
                              const MessageFn& on_reply) {
    // What matches replies is copied out of the request first: the receive
    // buffer is reused, and a stale seq read back from it desyncs the
    // socket. The request itself lives in the caller's buffer, never
    // received into, so it can still describe an error afterwards.
    request->nlmsg_seq = ++seq_;
    const uint32_t seq = request->nlmsg_seq;
    if (mnl_socket_sendto(nl_.get(), request, request->nlmsg_len) < 0) {
        const int err = errno;
        return fail_errno(err, describe(request) + ": send");
    }

    std::optional<Error> callback_error;
    bool interrupted = false;
    for (;;) {
        auto n = receive(describe, request);
        if (!n) return std::unexpected(std::move(n.error()));
        int left = static_cast<int>(*n);
        const auto* nlh = reinterpret_cast<const nlmsghdr*>(buf_.get());
        for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
            // Replies to an earlier request that timed out or failed early,
            // and multicast messages, are not this request's.
            if (nlh->nlmsg_seq != seq || nlh->nlmsg_pid != portid_) continue;
            Ack end;
            switch (nlh->nlmsg_type) {
                case NLMSG_NOOP:
                    continue;
                case NLMSG_OVERRUN:
                    return fail(Errc::Io, describe(request), "netlink overrun: the reply was lost");
                case NLMSG_ERROR: {
                    auto ack = parse_error(nlh);
                    if (!ack)
                        return fail(Errc::Internal, describe(request), "truncated NLMSG_ERROR");
                    end = std::move(*ack);
                    break;
                }
                case NLMSG_DONE:
                    end = parse_done(nlh);
                    break;
                default:
                    if ((nlh->nlmsg_flags & NLM_F_DUMP_INTR) != 0) interrupted = true;
                    if (!callback_error && on_reply)
                        if (auto r = on_reply(nlh); !r) callback_error = std::move(r.error());
                    continue;
            }
            // NLMSG_DONE ends a dump; NLMSG_ERROR ends anything: error 0 is
            // the ACK of a GET/SET, and a dump that fails to start has no DONE.
            if (callback_error) return std::unexpected(std::move(*callback_error));
            if (end.err != 0) return std::unexpected(kernel_error(end, describe(request)));
            if (interrupted) {
                auto e = fail(Errc::Busy, describe(request),
                              "dump interrupted by a concurrent change; read again");
                e.error().sys_errno = EINTR;
                return e;
            }
            return {};
        }
        if (left > 0) return fail(Errc::Internal, describe(request), "truncated netlink message");
    }
}

std::vector<Result<void>> Channel::send_batch(std::size_t count, const BuildFn& build,
                                              const DescribeFn& describe,
                                              const IndexedMessageFn& on_reply,
                                              std::size_t window_messages) {
    window_messages = std::clamp<std::size_t>(window_messages, 1, kWindowMessages);
    std::vector<Result<void>> results(count);
    auto window = std::make_unique_for_overwrite<char[]>(kWindowBytes);
    RequestBuffer scratch;
    // Where each message of the window starts, and which request it is.
    std::array<uint32_t, kWindowMessages> offset{};
    std::array<std::size_t, kWindowMessages> index{};
    std::size_t next = 0;
    while (next < count) {
        std::size_t used = 0;
        std::size_t sent = 0;
        const uint32_t first_seq = seq_ + 1;
        while (next < count && sent < window_messages) {
            nlmsghdr* nlh = mnl_nlmsg_put_header(scratch.data());
            if (auto r = build(next, nlh); !r) {
                results[next++] = std::unexpected(std::move(r.error()));
                continue;
            }
            const std::size_t len = NLMSG_ALIGN(nlh->nlmsg_len);
            if (used + len > kWindowBytes) {
                if (sent == 0)
                    results[next++] =
                        fail(Errc::Internal, describe(nlh), "request larger than a window");
                break;
            }
            nlh->nlmsg_flags |= NLM_F_REQUEST;
            nlh->nlmsg_pid = 0;
            nlh->nlmsg_seq = ++seq_;
            std::memcpy(window.get() + used, nlh, nlh->nlmsg_len);
            offset[sent] = static_cast<uint32_t>(used);
            index[sent] = next;
            ++sent;
            used += len;
            ++next;
        }
        if (sent == 0) continue;
        auto msg = [&](std::size_t k) {
            return reinterpret_cast<nlmsghdr*>(window.get() + offset[k]);
        };
        msg(sent - 1)->nlmsg_flags |= NLM_F_ACK;
        const uint32_t last_seq = msg(sent - 1)->nlmsg_seq;
        if (mnl_socket_sendto(nl_.get(), window.get(), used) < 0) {
            const int err = errno;
            for (std::size_t k = 0; k < sent; ++k)
                results[index[k]] = fail_errno(err, describe(msg(k)) + ": send");
            continue;
        }
        std::bitset<kWindowMessages> done;
        bool answered = false;  // the last message's answer: the window is complete
        while (!answered) {
            auto n = receive(describe, msg(0));
            if (!n) {
                // Which messages were handled is unknown: none is reported
                // as done (verification reads the device).
                for (std::size_t k = 0; k < sent; ++k)
                    if (!done[k]) {
                        Error e = n.error();
                        e.context = describe(msg(k));
                        results[index[k]] = std::unexpected(std::move(e));
                    }
                break;
            }
            int left = static_cast<int>(*n);
            for (const auto* nlh = reinterpret_cast<const nlmsghdr*>(buf_.get());
                 mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
                if (nlh->nlmsg_pid != portid_) continue;
                if (nlh->nlmsg_seq < first_seq || nlh->nlmsg_seq - first_seq >= sent) continue;
                const std::size_t k = nlh->nlmsg_seq - first_seq;
                if (done[k]) continue;
                if (nlh->nlmsg_type != NLMSG_ERROR) {
                    // A GET's reply; the first error of a request's callback
                    // is its result.
                    if (!on_reply || nlh->nlmsg_type == NLMSG_NOOP ||
                        nlh->nlmsg_type == NLMSG_DONE || !results[index[k]])
                        continue;
                    if (auto r = on_reply(index[k], nlh); !r)
                        results[index[k]] = std::unexpected(std::move(r.error()));
                    continue;
                }
                done[k] = true;
                if (nlh->nlmsg_seq == last_seq) answered = true;
                auto ack = parse_error(nlh);
                if (!ack)
                    results[index[k]] =
                        fail(Errc::Internal, describe(msg(k)), "truncated NLMSG_ERROR");
                else if (ack->err != 0 && results[index[k]])
                    results[index[k]] = std::unexpected(kernel_error(*ack, describe(msg(k))));
            }
        }
    }
    return results;
}

Result<void> Channel::join(unsigned group, int queue_bytes, std::string_view context) {
    if (queue_bytes > 0 &&
        setsockopt(fd(), SOL_SOCKET, SO_RCVBUFFORCE, &queue_bytes, sizeof queue_bytes) != 0)
        (void)setsockopt(fd(), SOL_SOCKET, SO_RCVBUF, &queue_bytes, sizeof queue_bytes);
    if (mnl_socket_setsockopt(nl_.get(), NETLINK_ADD_MEMBERSHIP, &group, sizeof group) < 0)
        return fail_syscall(context, "NETLINK_ADD_MEMBERSHIP");
    return {};
}

Result<void> Channel::leave(unsigned group, std::string_view context) {
    if (mnl_socket_setsockopt(nl_.get(), NETLINK_DROP_MEMBERSHIP, &group, sizeof group) < 0)
        return fail_syscall(context, "NETLINK_DROP_MEMBERSHIP");
    // The kernel queues a notification while it delivers it, under the
    // group's membership: nothing more arrives once the option is set.
    for (;;) {
        const ssize_t n = recv(fd(), buffer(), kReceiveBytes, MSG_DONTWAIT | MSG_TRUNC);
        if (n >= 0 || errno == EINTR || errno == ENOBUFS) continue;
        if (errno == EAGAIN) return {};
        return fail_syscall(context, "receive");
    }
}

Result<void> Channel::receive_queued(std::string_view context, const MessageFn& on_msg) {
    std::optional<Error> first_error;
    for (;;) {
        sockaddr_nl from{};
        iovec iov{buffer(), kReceiveBytes};
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
            if (err == EAGAIN) break;
            if (err == ENOBUFS) {
                auto e = fail(Errc::Io, std::string(context),
                              "the kernel dropped notifications (receive queue full); "
                              "read the state again");
                e.error().sys_errno = ENOBUFS;
                return e;
            }
            return fail_errno(err, std::string(context) + ": receive");
        }
        if (n == 0) break;
        // Only the kernel speaks on these groups; other senders are ignored.
        if (from.nl_pid != 0) continue;
        if ((mh.msg_flags & MSG_TRUNC) != 0) {
            if (!first_error)
                first_error = Error{Errc::Io,
                                    0,
                                    std::string(context),
                                    "a notification was larger than the buffer",
                                    {}};
            continue;
        }
        int left = static_cast<int>(n);
        for (const auto* nlh = reinterpret_cast<const nlmsghdr*>(buf_.get());
             mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
            auto r = on_msg(nlh);
            if (!r && !first_error) first_error = std::move(r.error());
        }
    }
    if (first_error) return std::unexpected(std::move(*first_error));
    return {};
}

}  // namespace nictune::netlink
