#include "probe/throughput.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "probe/iperf3_protocol.hpp"
#include "util/unique_fd.hpp"

namespace nictune::probe {
namespace {

using Clock = std::chrono::steady_clock;
using Fd = UniqueFd;
using namespace iperf3;

// Blocks sent (or reads made) per stream before poll() is asked again, so
// that the control connection and the clock are looked at often enough;
// 10, as iperf3's own client ("multisend"), so that both send alike.
constexpr int kBurst = 10;
constexpr std::size_t kReadBytes = 256 * 1024;

std::string seconds_text(std::chrono::milliseconds ms) {
    return fmt::format("{:.1f} s", std::chrono::duration<double>(ms).count());
}

// Random bytes that never wait for the kernel's pool (a probe at boot must
// not block on it): getrandom() where it has them, else a splitmix64
// stream. Neither the cookie (it names a test to one server) nor the
// payload needs more than being unpredictable enough not to repeat.
void fill_random(uint8_t* p, std::size_t n) {
    std::size_t off = 0;
    while (off < n) {
        const ssize_t r = getrandom(p + off, n - off, GRND_NONBLOCK);
        if (r <= 0) break;
        off += static_cast<std::size_t>(r);
    }
    uint64_t x = static_cast<uint64_t>(Clock::now().time_since_epoch().count()) ^
                 (static_cast<uint64_t>(getpid()) << 32);
    for (; off < n; ++off) {
        x += 0x9e3779b97f4a7c15ULL;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        p[off] = static_cast<uint8_t>(z ^ (z >> 31));
    }
}

int poll_ms(Clock::time_point deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60000));
}

// One test: the peer, its port and the connections, for messages.
class Session {
  public:
    Session(const Peer& peer, const ThroughputOptions& opts)
        : peer_(peer), opts_(opts), where_(peer.label() + " port " + std::to_string(opts.port)) {}

    Result<ThroughputResult> run();

  private:
    std::unexpected<Error> broken(const std::string& what) const {
        return fail(Errc::Io, where_, what);
    }
    Clock::time_point step_deadline() const { return Clock::now() + opts_.timeout; }
    // poll(2) on `fds` until `deadline`: how many are ready, 0 when the wait
    // ended with none (the deadline, or a signal: EINTR is no error). `step`
    // names the step in the error.
    Result<int> wait(std::span<pollfd> fds, Clock::time_point deadline, std::string_view step = {});

    Result<Fd> connect_one(const std::string& what);
    Result<void> send_all(int fd, const void* data, std::size_t n, const std::string& what);
    Result<void> recv_exact(int fd, void* data, std::size_t n, Clock::time_point deadline,
                            const std::string& what);
    Result<int8_t> read_state(Clock::time_point deadline, const std::string& waiting_for);
    Result<void> expect_state(int8_t want, const std::string& waiting_for);
    std::unexpected<Error> unexpected_state(int8_t state, const std::string& waiting_for);
    Result<void> run_streams(Clock::time_point end);
    Result<void> drain_until_state(int8_t want, const std::string& waiting_for);

    const Peer& peer_;
    const ThroughputOptions& opts_;
    std::string where_;
    Fd ctrl_;
    std::vector<Fd> streams_;
    std::vector<uint64_t> bytes_;  // per stream: sent (normal) or received (reverse)
    std::vector<uint8_t> buf_;
};

Result<int> Session::wait(std::span<pollfd> fds, Clock::time_point deadline,
                          std::string_view step) {
    const int r = poll(fds.data(), fds.size(), poll_ms(deadline));
    if (r >= 0) return r;
    if (errno == EINTR) return 0;
    const int saved_errno = errno;  // read before the message is built
    return fail_errno(saved_errno,
                      where_ + (step.empty() ? "" : ": " + std::string(step)) + ": poll");
}

Result<Fd> Session::connect_one(const std::string& what) {
    const int family = peer_.family();
    Fd fd(socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
    if (!fd) {
        const int saved_errno = errno;  // read before the message is built
        return fail_errno(saved_errno, where_ + ": " + what + ": socket");
    }
    if (!opts_.bind_device.empty() &&
        setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, opts_.bind_device.c_str(),
                   static_cast<socklen_t>(opts_.bind_device.size())) != 0) {
        const int saved_errno = errno;  // read before the message is built
        return fail_errno(saved_errno,
                          where_ + ": " + what + ": SO_BINDTODEVICE " + opts_.bind_device);
    }
    const sockaddr_storage sa = peer_.with_port(opts_.port);
    int err = 0;
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), peer_.addr_len) != 0) {
        if (errno != EINPROGRESS) {
            err = errno;
        } else {
            const auto deadline = step_deadline();
            for (;;) {
                pollfd p{fd.get(), POLLOUT, 0};
                auto ready = wait(std::span(&p, 1), deadline, what);
                if (!ready) return std::unexpected(ready.error());
                if (*ready == 0) {
                    if (Clock::now() < deadline) continue;
                    return broken(what + ": no answer within " + seconds_text(opts_.timeout) +
                                  " (is the peer up, and TCP to this port allowed?)");
                }
                socklen_t len = sizeof err;
                if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
                break;
            }
        }
    }
    if (err == ECONNREFUSED)
        return broken(what +
                      ": connection refused: no iperf3 server listens there (start one "
                      "on the peer with `iperf3 -s`)");
    if (err != 0) return broken(what + ": " + std::strerror(err));
    return fd;
}

Result<void> Session::send_all(int fd, const void* data, std::size_t n, const std::string& what) {
    const auto* p = static_cast<const uint8_t*>(data);
    const auto deadline = step_deadline();
    while (n > 0) {
        const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= static_cast<std::size_t>(w);
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno != EAGAIN)
            return broken(what + ": the connection broke: " + std::strerror(errno));
        pollfd pf{fd, POLLOUT, 0};
        auto ready = wait(std::span(&pf, 1), deadline);
        if (!ready) return std::unexpected(ready.error());
        if (*ready == 0 && Clock::now() >= deadline)
            return broken(what + ": the server took nothing for " + seconds_text(opts_.timeout));
    }
    return {};
}

Result<void> Session::recv_exact(int fd, void* data, std::size_t n, Clock::time_point deadline,
                                 const std::string& what) {
    auto* p = static_cast<uint8_t*>(data);
    while (n > 0) {
        const ssize_t r = ::recv(fd, p, n, 0);
        if (r > 0) {
            p += r;
            n -= static_cast<std::size_t>(r);
            continue;
        }
        if (r == 0) return broken("the iperf3 server closed the connection " + what);
        if (errno == EINTR) continue;
        if (errno != EAGAIN)
            return broken("the connection to the iperf3 server broke " + what + ": " +
                          std::strerror(errno));
        pollfd pf{fd, POLLIN, 0};
        auto ready = wait(std::span(&pf, 1), deadline);
        if (!ready) return std::unexpected(ready.error());
        if (*ready == 0 && Clock::now() >= deadline)
            return broken("no answer from the iperf3 server within " + seconds_text(opts_.timeout) +
                          " " + what);
    }
    return {};
}

Result<int8_t> Session::read_state(Clock::time_point deadline, const std::string& waiting_for) {
    int8_t state = 0;
    if (auto r = recv_exact(ctrl_.get(), &state, 1, deadline, waiting_for); !r)
        return std::unexpected(r.error());
    return state;
}

std::unexpected<Error> Session::unexpected_state(int8_t state, const std::string& waiting_for) {
    switch (state) {
        case kAccessDenied: {
            auto e = fail(Errc::Busy, where_,
                          "the iperf3 server is busy running a test with another client; try "
                          "again later");
            return e;
        }
        case kServerError: {
            int32_t codes[2] = {0, 0};
            if (auto r = recv_exact(ctrl_.get(), codes, sizeof codes, step_deadline(),
                                    "(reading its error)");
                !r)
                return std::unexpected(r.error());
            return broken(
                server_error_text(static_cast<int32_t>(ntohl(static_cast<uint32_t>(codes[0]))),
                                  static_cast<int32_t>(ntohl(static_cast<uint32_t>(codes[1])))));
        }
        case kServerTerminate:
            return broken("the iperf3 server was stopped " + waiting_for);
        default:
            return broken("unexpected answer (state " + std::to_string(state) + ") " + waiting_for +
                          ": is it an iperf3 server?");
    }
}

Result<void> Session::expect_state(int8_t want, const std::string& waiting_for) {
    auto st = read_state(step_deadline(), waiting_for);
    if (!st) return std::unexpected(st.error());
    if (*st != want) return unexpected_state(*st, waiting_for);
    return {};
}

// The test itself, until `end`: every stream that poll() says is ready
// sends (or, reversed, reads) up to kBurst blocks; the control connection
// is watched for the server ending the test early, and a stream direction
// that moves nothing for `timeout` is an error.
Result<void> Session::run_streams(Clock::time_point end) {
    const bool sending = !opts_.reverse;
    const short ready = sending ? POLLOUT : POLLIN;
    auto last_progress = Clock::now();
    std::vector<pollfd> fds(streams_.size() + 1);
    while (Clock::now() < end) {
        fds[0] = {ctrl_.get(), POLLIN, 0};
        for (std::size_t i = 0; i < streams_.size(); ++i)
            fds[i + 1] = {streams_[i].get(), ready, 0};
        const auto wake = std::min(end, last_progress + opts_.timeout);
        if (auto waited = wait(fds, wake); !waited) return std::unexpected(waited.error());
        if (fds[0].revents != 0) {
            auto st = read_state(step_deadline(), "during the test");
            if (!st) return std::unexpected(st.error());
            return unexpected_state(*st, "during the test");
        }
        bool moved = false;
        for (std::size_t i = 0; i < streams_.size(); ++i) {
            if ((fds[i + 1].revents & (ready | POLLERR | POLLHUP)) == 0) continue;
            const int fd = streams_[i].get();
            for (int b = 0; b < kBurst; ++b) {
                const ssize_t n = sending ? ::send(fd, buf_.data(), kBlockBytes, MSG_NOSIGNAL)
                                          : ::recv(fd, buf_.data(), buf_.size(), 0);
                if (n > 0) {
                    bytes_[i] += static_cast<uint64_t>(n);
                    moved = true;
                    continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
                if (n == 0)
                    return broken(fmt::format(
                        "stream {}: the iperf3 server closed it during the test", i + 1));
                return broken(fmt::format("stream {}: the connection broke during the test: {}",
                                          i + 1, std::strerror(errno)));
            }
        }
        const auto now = Clock::now();
        if (moved) {
            last_progress = now;
        } else if (now - last_progress >= opts_.timeout) {
            return broken((sending ? "the iperf3 server took no data for "
                                   : "no data from the iperf3 server for ") +
                          seconds_text(opts_.timeout) +
                          " during the test (stopped, or the path went down)");
        }
    }
    return {};
}

// After TEST_END the server may still be sending (reverse): keep reading the
// streams, as iperf3 does, so that it is never stuck on a full window
// before it reads the control message.
Result<void> Session::drain_until_state(int8_t want, const std::string& waiting_for) {
    const auto deadline = step_deadline();
    std::vector<pollfd> fds;
    for (;;) {
        fds.clear();
        fds.push_back({ctrl_.get(), POLLIN, 0});
        for (auto& s : streams_)
            if (s) fds.push_back({s.get(), POLLIN, 0});
        auto ready = wait(fds, deadline);
        if (!ready) return std::unexpected(ready.error());
        if (*ready == 0 && Clock::now() >= deadline)
            return broken("no answer from the iperf3 server within " + seconds_text(opts_.timeout) +
                          " " + waiting_for);
        if (fds[0].revents != 0) {
            auto st = read_state(step_deadline(), waiting_for);
            if (!st) return std::unexpected(st.error());
            if (*st != want) return unexpected_state(*st, waiting_for);
            return {};
        }
        for (std::size_t k = 1; k < fds.size(); ++k) {
            if (fds[k].revents == 0) continue;
            const ssize_t n = ::recv(fds[k].fd, buf_.data(), buf_.size(), 0);
            // The server closes its streams once it has the TEST_END.
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                for (auto& s : streams_)
                    if (s.get() == fds[k].fd) s.reset();
        }
    }
}

Result<ThroughputResult> Session::run() {
    if (opts_.streams < 1 || opts_.streams > 128)
        return fail(Errc::InvalidArgument, where_, "streams must be 1..128");
    if (opts_.seconds < 1 || opts_.seconds > 3600)
        return fail(Errc::InvalidArgument, where_, "the test time must be 1..3600 s");
    uint8_t random[36];
    fill_random(random, sizeof random);
    const std::string cookie = make_cookie(random);
    buf_.resize(std::max(kBlockBytes, kReadBytes));
    // What is sent is random, as iperf3's own (compression on the path
    // must not flatter the figure).
    fill_random(buf_.data(), buf_.size());

    auto ctrl = connect_one("control connection");
    if (!ctrl) return std::unexpected(ctrl.error());
    ctrl_ = std::move(*ctrl);
    const int one = 1;
    (void)setsockopt(ctrl_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (auto r = send_all(ctrl_.get(), cookie.data(), kCookieBytes, "cookie"); !r) {
        // A busy server answers without reading and closes: its answer may
        // be waiting although our cookie hit a closed socket.
        int8_t st = 0;
        if (::recv(ctrl_.get(), &st, 1, MSG_DONTWAIT) == 1)
            return unexpected_state(st, "before the test started");
        return std::unexpected(r.error());
    }
    if (auto r = expect_state(kParamExchange, "before the test started"); !r)
        return std::unexpected(r.error());

    const std::string params = parameters_json({opts_.seconds, opts_.streams, opts_.reverse});
    const uint32_t len = htonl(static_cast<uint32_t>(params.size()));
    if (auto r = send_all(ctrl_.get(), &len, sizeof len, "parameters"); !r)
        return std::unexpected(r.error());
    if (auto r = send_all(ctrl_.get(), params.data(), params.size(), "parameters"); !r)
        return std::unexpected(r.error());
    if (auto r = expect_state(kCreateStreams, "after the test's parameters"); !r)
        return std::unexpected(r.error());

    for (unsigned i = 0; i < opts_.streams; ++i) {
        auto s = connect_one(fmt::format("stream {}", i + 1));
        if (!s) return std::unexpected(s.error());
        if (auto r = send_all(s->get(), cookie.data(), kCookieBytes, "stream cookie"); !r)
            return std::unexpected(r.error());
        streams_.push_back(std::move(*s));
    }
    bytes_.assign(streams_.size(), 0);
    if (auto r = expect_state(kTestStart, "while the streams were set up"); !r)
        return std::unexpected(r.error());
    if (auto r = expect_state(kTestRunning, "at the start of the test"); !r)
        return std::unexpected(r.error());

    rusage ru0{};
    getrusage(RUSAGE_SELF, &ru0);
    const auto start = Clock::now();
    const auto end = start + std::chrono::seconds(opts_.seconds);
    if (auto r = run_streams(end); !r) return std::unexpected(r.error());
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

    Results ours;
    rusage ru1{};
    getrusage(RUSAGE_SELF, &ru1);
    auto secs = [](const timeval& a, const timeval& b) {
        return static_cast<double>(b.tv_sec - a.tv_sec) +
               static_cast<double>(b.tv_usec - a.tv_usec) / 1e6;
    };
    if (elapsed > 0) {
        ours.cpu_user = 100.0 * secs(ru0.ru_utime, ru1.ru_utime) / elapsed;
        ours.cpu_system = 100.0 * secs(ru0.ru_stime, ru1.ru_stime) / elapsed;
        ours.cpu_total = ours.cpu_user + ours.cpu_system;
    }
    ours.sender_has_retransmits = !opts_.reverse;
    const auto ids = stream_ids(opts_.streams);
    uint64_t our_retrans = 0;
    for (std::size_t i = 0; i < streams_.size(); ++i) {
        StreamResult sr;
        sr.id = ids[i];
        sr.bytes = bytes_[i];
        sr.seconds = elapsed;
        if (!opts_.reverse) {
            tcp_info ti{};
            socklen_t tl = sizeof ti;
            if (getsockopt(streams_[i].get(), IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0) {
                sr.retransmits = ti.tcpi_total_retrans;
                our_retrans += ti.tcpi_total_retrans;
            }
        }
        ours.streams.push_back(sr);
    }

    const int8_t test_end = kTestEnd;
    if (auto r = send_all(ctrl_.get(), &test_end, 1, "end of the test"); !r)
        return std::unexpected(r.error());
    if (auto r = drain_until_state(kExchangeResults, "after the end of the test"); !r)
        return std::unexpected(r.error());
    const std::string mine = results_json(ours);
    const uint32_t mlen = htonl(static_cast<uint32_t>(mine.size()));
    if (auto r = send_all(ctrl_.get(), &mlen, sizeof mlen, "results"); !r)
        return std::unexpected(r.error());
    if (auto r = send_all(ctrl_.get(), mine.data(), mine.size(), "results"); !r)
        return std::unexpected(r.error());
    uint32_t theirs_len = 0;
    if (auto r = recv_exact(ctrl_.get(), &theirs_len, sizeof theirs_len, step_deadline(),
                            "(reading its results)");
        !r)
        return std::unexpected(r.error());
    theirs_len = ntohl(theirs_len);
    if (theirs_len == 0 || theirs_len > kMaxJsonBytes)
        return broken("the iperf3 server's results are " + std::to_string(theirs_len) +
                      " bytes long (at most " + std::to_string(kMaxJsonBytes) + " accepted)");
    std::string theirs(theirs_len, '\0');
    if (auto r = recv_exact(ctrl_.get(), theirs.data(), theirs.size(), step_deadline(),
                            "(reading its results)");
        !r)
        return std::unexpected(r.error());
    auto server = parse_results(theirs);
    if (!server) return std::unexpected(std::move(server.error()).within(where_));
    if (auto r = expect_state(kDisplayResults, "after the results"); !r)
        return std::unexpected(r.error());
    const int8_t done = kIperfDone;
    (void)send_all(ctrl_.get(), &done, 1, "done");
    streams_.clear();
    ctrl_.reset();

    ThroughputResult res;
    res.streams = opts_.streams;
    res.reverse = opts_.reverse;
    res.port = opts_.port;
    if (opts_.reverse) {
        for (auto b : bytes_)
            res.bytes += b;
        res.seconds = elapsed;
        uint64_t retrans = 0;
        bool all = !server->streams.empty();
        for (const auto& s : server->streams) {
            if (!s.retransmits) all = false;
            retrans += s.retransmits.value_or(0);
        }
        if (all && server->sender_has_retransmits) res.retransmits = retrans;
    } else {
        // The receiver's view, as iperf3 reports it: what the server read,
        // over the server's own time.
        double secs_max = 0;
        for (const auto& s : server->streams) {
            if (std::find(ids.begin(), ids.end(), s.id) == ids.end())
                return broken("the iperf3 server's results name stream " + std::to_string(s.id) +
                              ", which this test did not open");
            res.bytes += s.bytes;
            secs_max = std::max(secs_max, s.seconds);
        }
        res.seconds = secs_max > 0 ? secs_max : elapsed;
        res.retransmits = our_retrans;
    }
    res.gbps = res.seconds > 0 ? static_cast<double>(res.bytes) * 8 / res.seconds / 1e9 : 0;
    return res;
}

}  // namespace

Result<ThroughputResult> probe_throughput(const Peer& peer, const ThroughputOptions& opts) {
    Session s(peer, opts);
    return s.run();
}

}  // namespace nictune::probe
