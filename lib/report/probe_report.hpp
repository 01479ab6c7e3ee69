// `nictunectl probe`'s report: JSON from a ProbeResult, and its text view
// rendered from that JSON (as every other report).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "probe/probe.hpp"
#include "probe/verify.hpp"

namespace nictune::report {

// {"peer", "address", "family", "interface": {"name", "ifindex", "mtu",
//  "chosen", "gateway"}, "icmp_socket", "path_mtu", "path_mtu_source",
//  "next_hop_mtu", "icmp_from", "path_mtu_search": {"probes", "rounds",
//  "seconds"}, "rtt_ms": {"min", "p50", "p99", "max"}, "echo": {"sent",
//  "received", "bytes"}, "throughput": {"gbps", "retransmits", "streams",
//  "reverse", "seconds", "bytes", "port"} or null, "seconds"}.
// What was not measured is null.
nlohmann::json probe_json(const probe::ProbeResult& r);

std::string probe_text(const nlohmann::json& report, bool color);

// `apply --verify-peer`'s part of the apply report ("verify_peer"): the
// check, the probes before and after side by side, and the verdict.
// {"peer", "address", "interface", "checks", "min_gbps", "max_regression_pct",
//  "before": probe_json | null, "after": probe_json | null,
//  "verdict": "passed" | "failed" | "not_reached" | "dry_run" | "pending",
//  "reason": string | null}
// `route`: what the peer resolved to (a dry run probes nothing; else the
// probe before).
nlohmann::json verify_peer_json(const probe::PeerCheck& check, const probe::ProbeResult* route,
                                const probe::ProbeResult* before, const probe::ProbeResult* after,
                                const std::string& verdict,
                                const std::optional<std::string>& reason);
std::string verify_peer_text(const nlohmann::json& v, bool color);

}  // namespace nictune::report
