#include "probe/latency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace nictune::probe {

RttStats summarize_rtt(std::vector<double> samples) {
    RttStats s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    auto rank = [&](double q) {
        const auto n = static_cast<double>(samples.size());
        const auto k = static_cast<std::size_t>(std::max(1.0, std::ceil(q * n)));
        return samples[std::min(k, samples.size()) - 1];
    };
    s.min_ms = samples.front();
    s.p50_ms = rank(0.50);
    s.p99_ms = rank(0.99);
    s.max_ms = samples.back();
    return s;
}

uint32_t default_echo_bytes(bool ipv6) {
    return ipv6 ? 40 + 8 + 56 : 20 + 8 + 56;
}

Result<LatencyResult> probe_latency(IcmpSocket& socket, const LatencyOptions& opts,
                                    const std::string& peer_label) {
    using Clock = IcmpSocket::Clock;
    LatencyResult res;
    res.ip_bytes = opts.ip_bytes != 0 ? opts.ip_bytes : default_echo_bytes(socket.ipv6());
    const unsigned count = std::max(1U, opts.count);
    std::vector<double> rtts;
    rtts.reserve(count);
    unsigned refused = 0;  // requests the network answered with an error

    auto handle = [&](const IcmpEvent& ev) {
        if (const auto* r = std::get_if<EchoReply>(&ev)) {
            rtts.push_back(r->rtt_ms);
            return;
        }
        res.last_error = std::get<IcmpError>(ev);
        if (res.last_error->seq) ++refused;
    };
    auto collect_until = [&](Clock::time_point until, bool stop_when_all) -> Result<void> {
        for (;;) {
            if (stop_when_all && rtts.size() + refused >= res.sent) return {};
            auto ev = socket.next(until);
            if (!ev) return std::unexpected(std::move(ev.error()));
            if (!*ev) return {};
            handle(**ev);
        }
    };

    auto next_send = Clock::now();
    for (unsigned i = 0; i < count; ++i) {
        if (auto s = socket.send(res.ip_bytes); !s) {
            // The network refused at once (no route, neighbour unreachable):
            // that is the answer.
            if (res.sent == 0 || rtts.empty()) return std::unexpected(std::move(s.error()));
            break;
        }
        ++res.sent;
        next_send += opts.interval;
        if (auto r = collect_until(next_send, false); !r) return std::unexpected(r.error());
    }
    if (auto r = collect_until(Clock::now() + opts.timeout, true); !r)
        return std::unexpected(r.error());

    res.received = static_cast<unsigned>(rtts.size());
    if (rtts.empty()) {
        std::string msg = fmt::format(
            "no answer to {} echo request{} within {:.1f} s", res.sent, res.sent == 1 ? "" : "s",
            std::chrono::duration<double>(opts.interval * res.sent + opts.timeout).count());
        if (res.last_error) msg += ": " + res.last_error->describe();
        return fail(Errc::Io, peer_label, msg);
    }
    res.rtt = summarize_rtt(std::move(rtts));
    return res;
}

}  // namespace nictune::probe
