#include "probe/path_mtu.hpp"

#include <linux/errqueue.h>

#include <algorithm>
#include <cerrno>

#include "util/enum_names.hpp"

namespace nictune::probe {

const char* mtu_source_name(MtuSource s) {
    static constexpr EnumNames<MtuSource> kNames{"interface", "icmp", "black_hole"};
    return kNames[s];
}

MtuSearch::MtuSearch(uint32_t floor, uint32_t ceiling)
    : floor_(floor), ceiling_(std::max(floor, ceiling)), good_(floor), bad_(ceiling_ + 1) {}

uint32_t MtuSearch::smallest_lost_above(uint32_t size) const {
    auto it = lost_.upper_bound(size);
    return it == lost_.end() ? ceiling_ + 1 : *it;
}

void MtuSearch::finish() {
    done_ = true;
    round_.clear();
}

std::vector<uint32_t> MtuSearch::next_round() {
    if (done_) return {};
    round_.clear();
    round_answered_.clear();
    confirming_ = false;
    if (!started_) {
        started_ = true;
        if (ceiling_ <= floor_) {
            finish();
            return {};
        }
        round_ = {ceiling_};
    } else if (hint_ && *hint_ > good_ && *hint_ < bad_) {
        round_ = {*hint_};
    } else if (bad_ == good_ + 1) {
        // A boundary without a router's word for it: once more, longer,
        // with the size below it as the witness that the peer still answers.
        confirming_ = true;
        round_ = {good_, bad_};
    } else {
        const uint32_t gap = bad_ - good_ - 1;  // sizes still open
        const uint32_t k = std::min<uint32_t>(8, gap);
        for (uint32_t i = 1; i <= k; ++i) {
            const auto s =
                static_cast<uint32_t>(good_ + static_cast<uint64_t>(bad_ - good_) * i / (k + 1));
            if (s > good_ && s < bad_ && (round_.empty() || round_.back() != s))
                round_.push_back(s);
        }
    }
    hint_.reset();
    ++rounds_;
    return round_;
}

void MtuSearch::answered(uint32_t size) {
    answered_.insert(size);
    round_answered_.insert(size);
    lost_.erase(size);
    if (size > good_) good_ = size;
    if (good_ >= bad_) {
        // A size once lost came back after all: that loss was chance.
        bad_ = smallest_lost_above(good_);
        confirmed_ = false;
    }
    if (good_ >= ceiling_) finish();
}

void MtuSearch::too_big(uint32_t mtu, const std::string& from, bool local) {
    if (mtu == 0) return;
    if (!local) {
        next_hop_ = mtu;
        from_ = from;
    }
    // A limit below what already got through is about another path (an
    // old route): it bounds nothing here.
    if (mtu < good_) return;
    if (mtu + 1 < bad_) bad_ = mtu + 1;
    if (mtu > good_ && !answered_.contains(mtu) && !lost_.contains(mtu)) hint_ = mtu;
}

void MtuSearch::end_round() {
    if (done_) return;
    const bool was_confirming = confirming_;
    // A confirmation round is {the size below the boundary, the boundary}.
    const uint32_t witness = round_.empty() ? good_ : round_.front();
    const uint32_t boundary = round_.empty() ? bad_ : round_.back();
    for (uint32_t s : round_) {
        if (answered_.contains(s)) continue;
        lost_.insert(s);
        if (s > good_ && s < bad_) bad_ = s;
    }
    if (was_confirming) {
        if (round_answered_.empty())
            failure_ = "the peer stopped answering during the path MTU search (no answer to " +
                       std::to_string(witness) + "-byte requests, which got through before)";
        else if (!round_answered_.contains(boundary))
            confirmed_ = true;
    }
    if (failure_) {
        finish();
        return;
    }
    if (good_ >= ceiling_) {
        finish();
    } else if (bad_ == good_ + 1 && !hint_) {
        // A router's next-hop MTU that got through needs no second look.
        if ((next_hop_ && *next_hop_ == good_) || confirmed_) finish();
    }
    if (!done_ && rounds_ >= kMaxRounds) finish();
}

PathMtuResult MtuSearch::result() const {
    PathMtuResult r;
    r.path_mtu = good_;
    r.interface_mtu = ceiling_;
    r.next_hop_mtu = next_hop_;
    r.icmp_from = from_;
    r.rounds = rounds_;
    if (good_ >= ceiling_)
        r.source = MtuSource::Interface;
    else if (next_hop_ && *next_hop_ == good_)
        r.source = MtuSource::Icmp;
    else
        r.source = MtuSource::BlackHole;
    return r;
}

Result<PathMtuResult> probe_path_mtu(IcmpSocket& socket, uint32_t floor, uint32_t ceiling,
                                     const PathMtuOptions& opts, const std::string& peer_label) {
    using Clock = IcmpSocket::Clock;
    const auto start = Clock::now();
    const unsigned sent_before = socket.sent();
    MtuSearch search(floor, ceiling);
    std::set<uint32_t> open;  // this round's sizes still without an answer

    auto handle = [&](const IcmpEvent& ev) {
        if (const auto* reply = std::get_if<EchoReply>(&ev)) {
            search.answered(reply->ip_bytes);
            open.erase(reply->ip_bytes);
            return;
        }
        const auto& err = std::get<IcmpError>(ev);
        if (err.too_big()) {
            search.too_big(err.info, err.from, err.origin == SO_EE_ORIGIN_LOCAL);
            if (err.ip_bytes) open.erase(*err.ip_bytes);
        }
        // Other errors (unreachable, TTL) leave their request lost.
    };

    for (;;) {
        const auto sizes = search.next_round();
        if (sizes.empty()) break;
        open = std::set<uint32_t>(sizes.begin(), sizes.end());
        for (unsigned c = 0; c < search.copies(); ++c) {
            for (uint32_t size : sizes) {
                if (search.done()) break;
                auto seq = socket.send(size);
                // EMSGSIZE: the interface itself cannot send it; lost, and
                // the error queue says what fits. ENOBUFS: dropped before it
                // left this host, as a veth whose peer has a smaller MTU does
                // (veth_xmit: NET_XMIT_DROP) or a full queue; lost like a
                // request nobody answers, and the search goes on.
                if (!seq && seq.error().sys_errno != EMSGSIZE && seq.error().sys_errno != ENOBUFS)
                    return std::unexpected(std::move(seq.error()));
                // Collect what already came back, so that replies to big
                // requests do not pile up in the receive queue.
                for (;;) {
                    auto ev = socket.next(Clock::now());
                    if (!ev) return std::unexpected(std::move(ev.error()));
                    if (!*ev) break;
                    handle(**ev);
                }
            }
        }
        const auto deadline =
            Clock::now() + (search.confirming() ? opts.confirm_wait : opts.round_wait);
        while (!open.empty() && !search.done()) {
            auto ev = socket.next(deadline);
            if (!ev) return std::unexpected(std::move(ev.error()));
            if (!*ev) break;
            handle(**ev);
        }
        search.end_round();
    }
    if (search.failure()) return fail(Errc::Io, peer_label, *search.failure());
    PathMtuResult r = search.result();
    r.probes = socket.sent() - sent_before;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
}

}  // namespace nictune::probe
