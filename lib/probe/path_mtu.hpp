// Path MTU: the largest IP packet that reaches the peer and comes back,
// found with echo requests that may not be fragmented, up to the
// interface's MTU.
//
// The search sends a round of requests of several sizes at once (each size
// twice, so that one lost packet is not taken for a limit) and waits for the
// round's answers: first the interface's MTU alone (a clean path ends
// there, after one round trip); then, if a router answers "fragmentation
// needed" / "packet too big", the next-hop MTU it names; else up to 8 sizes
// spread over what is still open, narrowing the gap about 9-fold per round.
// A boundary found without ICMP is tried once more (3 copies, and the size
// below it, with a longer wait) before it is called a black hole.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "probe/icmp.hpp"
#include "util/error.hpp"

namespace nictune::probe {

enum class MtuSource {
    Interface,  // the path carries the interface's MTU
    Icmp,       // a router said how much it carries, and that got through
    BlackHole,  // larger packets vanished without any ICMP saying why
};
const char* mtu_source_name(MtuSource s);  // "interface", "icmp", "black_hole"

struct PathMtuResult {
    uint32_t path_mtu = 0;  // the largest IP packet that got through, as an MTU
    MtuSource source = MtuSource::Interface;
    uint32_t interface_mtu = 0;            // where the search started
    std::optional<uint32_t> next_hop_mtu;  // what "fragmentation needed" said
    std::string icmp_from;                 // and who said it
    unsigned probes = 0;                   // requests sent
    unsigned rounds = 0;
    double seconds = 0;
};

// The search without I/O: it proposes each round's sizes and is told what
// came back. Sizes are IP packet sizes. `floor` is known to get through
// (the latency probe's size), `ceiling` is the interface's MTU.
class MtuSearch {
  public:
    MtuSearch(uint32_t floor, uint32_t ceiling);

    // The sizes of the next round, each to be sent copies() times; empty
    // once done().
    std::vector<uint32_t> next_round();
    [[nodiscard]] unsigned copies() const { return confirming_ ? 3U : 2U; }
    // This round re-tests a boundary: wait longer for it.
    [[nodiscard]] bool confirming() const { return confirming_; }

    void answered(uint32_t size);
    // "Fragmentation needed" / "packet too big": nothing larger than `mtu`
    // passes that router (mtu 0: it did not say how much does). `local`:
    // our own interface refused it (not a next-hop MTU on the path).
    void too_big(uint32_t mtu, const std::string& from, bool local = false);
    // The round's wait is over: what did not come back was lost.
    void end_round();

    [[nodiscard]] bool done() const { return done_; }
    // Set when the peer stopped answering even sizes that got through.
    [[nodiscard]] const std::optional<std::string>& failure() const { return failure_; }
    // Valid once done() and no failure().
    [[nodiscard]] PathMtuResult result() const;
    [[nodiscard]] unsigned rounds() const { return rounds_; }

    // More rounds than this means something is wrong with the path (the
    // gap shrinks ~9-fold per round: 65535 bytes take 6).
    static constexpr unsigned kMaxRounds = 24;

  private:
    [[nodiscard]] uint32_t smallest_lost_above(uint32_t size) const;
    void finish();

    uint32_t floor_;
    uint32_t ceiling_;
    uint32_t good_;                // largest size that came back
    uint32_t bad_;                 // smallest size known not to (ceiling_ + 1: none)
    std::set<uint32_t> lost_;      // sizes a round lost
    std::set<uint32_t> answered_;  // sizes that came back
    std::set<uint32_t> round_answered_;
    std::optional<uint32_t> hint_;  // a next-hop MTU still to test
    std::optional<uint32_t> next_hop_;
    std::string from_;
    std::vector<uint32_t> round_;
    bool started_ = false;
    bool confirming_ = false;
    bool confirmed_ = false;  // the current boundary survived a confirmation
    bool done_ = false;
    std::optional<std::string> failure_;
    unsigned rounds_ = 0;
};

struct PathMtuOptions {
    // How long a round waits for its answers; the confirmation waits
    // `confirm_wait`. The caller derives both from the RTT it measured.
    std::chrono::milliseconds round_wait{50};
    std::chrono::milliseconds confirm_wait{250};
};

// Runs the search over `socket` from `floor` to `ceiling`.
Result<PathMtuResult> probe_path_mtu(IcmpSocket& socket, uint32_t floor, uint32_t ceiling,
                                     const PathMtuOptions& opts, const std::string& peer_label);

}  // namespace nictune::probe
