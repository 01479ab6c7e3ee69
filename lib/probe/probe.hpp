// nictunectl probe: what the path to a peer carries, measured on the wire.
// Latency (echo RTT percentiles), path MTU (up to the MTU of the interface
// the route to the peer leaves by), and, when asked, TCP throughput against
// the peer's iperf3 server. One call, bounded in packets and time, no
// output of its own: the result (or an error naming the peer) is for the
// caller to print (lib/report/probe_report) or to judge (an apply that
// verifies the path).
//
// Probes open IP sockets: they run in nictunectl, never in nictuned (whose
// unit allows no AF_INET/AF_INET6).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "probe/icmp.hpp"
#include "probe/latency.hpp"
#include "probe/path_mtu.hpp"
#include "probe/peer.hpp"
#include "probe/throughput.hpp"
#include "util/error.hpp"

namespace nictune::probe {

struct ProbeOptions {
    bool latency = true;
    bool path_mtu = true;
    std::optional<ThroughputOptions> throughput;  // set: run the iperf3 test too
    unsigned count = 20;                          // latency echo requests
    std::chrono::milliseconds interval{10};       // between them
    // The longest wait for any one answer (name look-up, echo replies,
    // each iperf3 step); the path-MTU rounds wait less, from the RTT.
    std::chrono::milliseconds timeout{2000};
    IcmpSocketKind icmp = IcmpSocketKind::Auto;
};

// The interface the probes leave by.
struct ProbeInterface {
    int ifindex = 0;
    std::string name;
    uint32_t mtu = 0;
    bool chosen = false;                 // given by the caller, not the route's
    std::optional<std::string> gateway;  // the route's next hop, if not on-link
};

struct ProbeResult {
    Peer peer;
    ProbeInterface interface;
    IcmpSocketKind icmp_socket = IcmpSocketKind::Ping;
    std::optional<LatencyResult> latency;
    std::optional<PathMtuResult> path_mtu;
    std::optional<ThroughputResult> throughput;
    double seconds = 0;
};

// Probes `peer` (an address or a host name) through `interface` (empty: the
// interface the kernel's route to the peer uses). Errors: an unknown
// interface, a name that does not resolve, a link-local address without an
// interface -> Errc::NoSuchInterface / InvalidArgument (nothing was sent);
// no route, no answer, no permission for ICMP, no usable iperf3 server ->
// another code, the message naming the peer.
Result<ProbeResult> run_probe(std::string_view peer, const ProbeOptions& opts,
                              const std::optional<std::string>& interface);

// The round waits of the path-MTU search for a path whose slowest echo
// took `rtt_max_ms`, within `timeout`.
PathMtuOptions path_mtu_waits(double rtt_max_ms, std::chrono::milliseconds timeout);

}  // namespace nictune::probe
