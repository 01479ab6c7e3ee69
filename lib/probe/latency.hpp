// Latency: the round-trip time of a bounded number of small echo requests,
// sent at a fixed interval, as percentiles.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probe/icmp.hpp"
#include "util/error.hpp"

namespace nictune::probe {

struct RttStats {
    double min_ms = 0;
    double p50_ms = 0;
    double p99_ms = 0;
    double max_ms = 0;
};

// Nearest-rank percentiles of a non-empty sample.
RttStats summarize_rtt(std::vector<double> samples_ms);

struct LatencyOptions {
    unsigned count = 20;
    std::chrono::milliseconds interval{10};
    // How long to wait for the last replies after the last request.
    std::chrono::milliseconds timeout{2000};
    uint32_t ip_bytes = 0;  // 0: 84 (IPv4) / 104 (IPv6), what ping sends
};

struct LatencyResult {
    unsigned sent = 0;
    unsigned received = 0;
    uint32_t ip_bytes = 0;
    RttStats rtt;
    std::optional<IcmpError> last_error;  // e.g. "host unreachable" for some requests
};

// Default request size: 56 bytes of payload, as ping.
uint32_t default_echo_bytes(bool ipv6);

// No reply at all is an error naming the peer (and the last ICMP error, if
// the network said why).
Result<LatencyResult> probe_latency(IcmpSocket& socket, const LatencyOptions& opts,
                                    const std::string& peer_label);

}  // namespace nictune::probe
