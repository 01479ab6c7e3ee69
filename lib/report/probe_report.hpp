// `nictunectl probe`'s report: JSON from a ProbeResult, and its text view
// rendered from that JSON (as every other report).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "probe/probe.hpp"

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

}  // namespace nictune::report
