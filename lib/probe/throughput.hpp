// Throughput: a TCP test against a stock iperf3 server on the peer
// (`iperf3 -s`), by iperf3's own protocol (probe/iperf3_protocol.hpp), from
// this process: no iperf3 process is started and libiperf is not used (see
// the README's "Libraries and why"). Every wait is bounded: connecting, each
// control step, and progress during the test each get `timeout`; the whole
// test ends within `seconds` + a few timeouts whatever the server does.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "probe/peer.hpp"
#include "util/error.hpp"

namespace nictune::probe {

struct ThroughputOptions {
    uint16_t port = 5201;
    unsigned streams = 1;
    bool reverse = false;  // the server sends (iperf3 -R)
    unsigned seconds = 5;
    std::chrono::milliseconds timeout{2000};
    std::string bind_device;  // leave by this interface (SO_BINDTODEVICE); may be empty
};

struct ThroughputResult {
    double gbps = 0;     // bytes received over the receiver's time, 10^9 bit/s
    uint64_t bytes = 0;  // received
    double seconds = 0;  // the receiver's time
    // TCP retransmissions of the sending side (TCP_INFO); absent when the
    // server, sending, did not report them.
    std::optional<uint64_t> retransmits;
    unsigned streams = 0;
    bool reverse = false;
    uint16_t port = 0;
};

// Errors name the peer and port: nothing listening, the server busy with
// another client, the server gone or silent during the test.
Result<ThroughputResult> probe_throughput(const Peer& peer, const ThroughputOptions& opts);

}  // namespace nictune::probe
