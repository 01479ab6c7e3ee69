// `apply --verify-peer`: what the path to a peer must still carry once a
// profile is applied, judged from a probe before and one after (run_probe).
// The transaction keeps what it applied only if the verdict is good; the
// engine sees none of this (it gets a callback, ApplyOptions::after_verify).
//
//   - path MTU: the path must carry the interface's MTU. A path that carried
//     less already before, with the MTU unchanged, is not the apply's doing
//     and does not fail it; a path that got worse, or an MTU raised beyond
//     what the path carries (the silent black hole of a switch that is not
//     set up for jumbo frames), does.
//   - throughput (only with a threshold): at least `min_gbps`, and/or at
//     most `max_regression_pct` below the figure before.
//   - the peer must answer after the apply at all (within `settle`: a
//     driver that resets its link on an MTU change takes seconds).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "probe/probe.hpp"
#include "util/error.hpp"

namespace nictune::probe {

struct PeerCheck {
    std::string peer;  // an address or a host name
    std::optional<double> min_gbps;
    std::optional<double> max_regression_pct;
    unsigned seconds = 5;  // throughput test length
    unsigned streams = 1;
    uint16_t port = 5201;
    unsigned count = 20;  // latency echo requests
    std::chrono::milliseconds timeout{2000};
    // After the apply, how long the peer may take to answer again.
    std::chrono::milliseconds settle{10000};

    [[nodiscard]] bool throughput() const { return min_gbps || max_regression_pct; }
    [[nodiscard]] ProbeOptions probe_options() const;
    // "path MTU and latency; throughput (iperf3 on port 5201, 1 stream, 5 s)
    // of at least 9 Gbit/s"
    [[nodiscard]] std::string describe() const;
    // The longest a probe of this check can take (the confirm timeout a
    // client asks nictuned for is this plus the settle time and a margin).
    [[nodiscard]] std::chrono::milliseconds budget() const;
};

// Refuses contradictory or out-of-range thresholds (InvalidArgument).
Result<void> validate(const PeerCheck& check);

// The verdict: nothing, or why the apply must be undone (the message names
// the peer and the figures). `before` may be null (a boot-time apply has no
// "before"; max_regression_pct then cannot be judged and is refused).
Result<void> judge(const ProbeResult* before, const ProbeResult& after, const PeerCheck& check);

// The route to the peer must leave by one of the interfaces the apply
// changes, or the probe would not test them.
Result<void> check_route(const ProbeResult& probe, const std::vector<std::string>& interfaces);

// The probe after an apply: waits until the peer answers a small echo
// again (at most `settle`, one request per `timeout`), then probes it as
// `check` says. An error is the check's failure ("peer 10.0.0.2: no answer
// within 10 s after the apply").
Result<ProbeResult> probe_after_apply(const PeerCheck& check);

}  // namespace nictune::probe
