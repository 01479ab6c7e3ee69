#include "probe/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "util/strings.hpp"

namespace nictune::probe {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string gbps_text(double g) {
    return fmt::format("{:.2f} Gbit/s", g);
}

std::string label_of(const ProbeResult& r) {
    return r.peer.label();
}

}  // namespace

ProbeOptions PeerCheck::probe_options() const {
    ProbeOptions o;
    o.count = count;
    o.timeout = timeout;
    // The check measures what this host sends; run_probe sets the interface
    // to leave by.
    if (throughput())
        o.throughput = ThroughputOptions{.port = port,
                                         .streams = streams,
                                         .reverse = false,
                                         .seconds = seconds,
                                         .timeout = timeout,
                                         .bind_device = {}};
    return o;
}

std::string PeerCheck::describe() const {
    std::string out = "path MTU and latency";
    if (!throughput()) return out;
    out += fmt::format("; throughput against iperf3 -s on port {} ({} stream{}, {} s)", port,
                       streams, streams == 1 ? "" : "s", seconds);
    if (min_gbps) out += ", at least " + gbps_text(*min_gbps);
    if (max_regression_pct)
        out += fmt::format("{} at most {:g}% below the figure before", min_gbps ? " and" : ",",
                           *max_regression_pct);
    return out;
}

milliseconds PeerCheck::budget() const {
    // Latency: the requests and the wait for the last reply. Path MTU: a
    // black hole is confirmed within a few waits (README: 0.4-0.8 s on
    // these machines); eight timeouts bound it generously. Throughput: the
    // test and its control steps.
    milliseconds b = settle + count * milliseconds(10) + timeout + 8 * timeout;
    if (throughput()) b += std::chrono::seconds(seconds) + 5 * timeout;
    return b;
}

Result<void> validate(const PeerCheck& c) {
    if (c.peer.empty()) return fail(Errc::InvalidArgument, "--verify-peer", "names no peer");
    if (c.min_gbps && !(*c.min_gbps > 0 && *c.min_gbps <= 10000))
        return fail(Errc::InvalidArgument, "min_gbps", "must be in (0, 10000] Gbit/s");
    if (c.max_regression_pct && !(*c.max_regression_pct >= 0 && *c.max_regression_pct < 100))
        return fail(Errc::InvalidArgument, "max_regression", "must be in [0, 100) percent");
    if (c.seconds < 1 || c.seconds > 3600)
        return fail(Errc::InvalidArgument, "probe time", "must be 1..3600 s");
    if (c.streams < 1 || c.streams > 128)
        return fail(Errc::InvalidArgument, "probe streams", "must be 1..128");
    if (c.port == 0) return fail(Errc::InvalidArgument, "probe port", "must be 1..65535");
    return {};
}

Result<void> judge(const ProbeResult* before, const ProbeResult& after, const PeerCheck& c) {
    const std::string peer = label_of(after);
    const std::string to = "the path to " + after.peer.address;
    if (after.path_mtu) {
        const PathMtuResult& m = *after.path_mtu;
        const uint32_t iface_mtu = after.interface.mtu;
        const bool short_now = m.path_mtu < iface_mtu;
        const bool mtu_changed = !before || before->interface.mtu != iface_mtu;
        const bool worse = before && before->path_mtu && m.path_mtu < before->path_mtu->path_mtu;
        if (short_now && (mtu_changed || worse)) {
            std::string why;
            if (m.source == MtuSource::Icmp)
                why = fmt::format(
                    "{} carries {}-byte packets at most: {} answers that its next hop takes {} "
                    "({} is at {})",
                    to, m.path_mtu, m.icmp_from.empty() ? "a router" : "router " + m.icmp_from,
                    m.next_hop_mtu.value_or(m.path_mtu), after.interface.name, iface_mtu);
            else
                why = fmt::format(
                    "{} carries {}-byte packets at most: a switch or the peer is not set up for "
                    "jumbo frames ({} is at {}; larger packets vanish without an ICMP error)",
                    to, m.path_mtu, after.interface.name, iface_mtu);
            return fail(Errc::Io, "", why);
        }
    }
    if (c.throughput()) {
        if (!after.throughput)
            return fail(Errc::Internal, peer, "no throughput figure after the apply");
        const double now = after.throughput->gbps;
        if (c.min_gbps && now < *c.min_gbps)
            return fail(Errc::Io, "",
                        fmt::format("the throughput to {} is {}, below the minimum of {}",
                                    after.peer.address, gbps_text(now), gbps_text(*c.min_gbps)));
        if (c.max_regression_pct) {
            if (!before || !before->throughput)
                return fail(Errc::InvalidArgument, peer,
                            "a maximum regression needs a throughput figure from before the apply");
            const double was = before->throughput->gbps;
            const double floor = was * (1 - *c.max_regression_pct / 100);
            if (now < floor)
                return fail(
                    Errc::Io, "",
                    fmt::format("the throughput to {} fell from {} to {} ({:+.1f}%), more "
                                "than the {:g}% allowed",
                                after.peer.address, gbps_text(was), gbps_text(now),
                                was > 0 ? (now - was) / was * 100 : 0.0, *c.max_regression_pct));
        }
    }
    return {};
}

Result<void> check_route(const ProbeResult& probe, const std::vector<std::string>& interfaces) {
    if (std::ranges::find(interfaces, probe.interface.name) != interfaces.end()) return {};
    return fail(Errc::InvalidArgument, probe.peer.label(),
                "is reached by " + quote_name(probe.interface.name) +
                    ", which this apply does not change (" +
                    (interfaces.empty() ? std::string("none") : join(interfaces, ", ")) +
                    "): probing it would not test them");
}

Result<ProbeResult> probe_after_apply(const PeerCheck& c) {
    const auto deadline = Clock::now() + c.settle;
    ProbeOptions ping;
    ping.path_mtu = false;
    ping.count = 1;
    std::optional<Error> last;
    for (int attempt = 0;; ++attempt) {
        const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
        ping.timeout = std::clamp(left, milliseconds(10), std::min(c.timeout, milliseconds(1000)));
        auto r = run_probe(c.peer, ping, std::nullopt);
        if (r) break;
        if (r.error().is_user_error()) return std::unexpected(std::move(r.error()));
        last = std::move(r.error());
        if (Clock::now() >= deadline) {
            Error e = *last;
            e.message = fmt::format("no answer within {:g} s after the apply ({})",
                                    std::chrono::duration<double>(c.settle).count(), e.message);
            return std::unexpected(std::move(e));
        }
        // A route or neighbour that is not back yet fails at once: do not spin.
        std::this_thread::sleep_for(std::min(milliseconds(100), left));
    }
    auto r = run_probe(c.peer, c.probe_options(), std::nullopt);
    if (!r) {
        Error e = std::move(r.error());
        e.message += " (after the apply)";
        return std::unexpected(std::move(e));
    }
    return r;
}

}  // namespace nictune::probe
