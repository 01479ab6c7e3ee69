// The probe's logic without a network: ICMP messages as bytes, the path-MTU
// search against simulated paths (clean, a router's ICMP, a silent black
// hole, lost packets, a peer that goes away), RTT percentiles, iperf3's
// protocol messages (a server's results captured from iperf3 3.12), route
// replies, peer names and the report.
#include "probe/probe.hpp"

#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "probe/icmp_codec.hpp"
#include "probe/iperf3_protocol.hpp"
#include "probe/latency.hpp"
#include "probe/path_mtu.hpp"
#include "probe/peer.hpp"
#include "report/probe_report.hpp"
#include "rtnl/link.hpp"

namespace nictune::probe {
namespace {

using Json = nlohmann::json;
using Bytes = std::vector<uint8_t>;

// ---- ICMP codec

TEST(IcmpCodec, ChecksumIsRfc1071) {
    // RFC 1071 section 3's example: the sum is 0xddf2, its complement 0x220d.
    const Bytes b = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    EXPECT_EQ(codec::checksum(b), 0x220d);
    // An odd length pads with a zero byte.
    EXPECT_EQ(codec::checksum(Bytes{0xff}), static_cast<uint16_t>(~0xff00 & 0xffff));
}

TEST(IcmpCodec, EchoRequestCarriesIdSeqTokenAndAValidChecksum) {
    const auto m = codec::echo_request(false, 0x1234, 0xbeef, 0x0102030405060708ULL, 64);
    ASSERT_EQ(m.size(), 64U);
    EXPECT_EQ(m[0], 8);  // echo request
    EXPECT_EQ(m[1], 0);
    EXPECT_EQ((m[4] << 8) | m[5], 0x1234);
    EXPECT_EQ((m[6] << 8) | m[7], 0xbeef);
    EXPECT_EQ(m[8], 0x01);
    EXPECT_EQ(m[15], 0x08);
    // A message with its checksum in place sums to zero.
    EXPECT_EQ(codec::checksum(m), 0);
    const auto v6 = codec::echo_request(true, 1, 2, 3, 16);
    EXPECT_EQ(v6[0], 128);
    // Too small for the token: padded up to it.
    EXPECT_EQ(codec::echo_request(false, 1, 2, 3, 4).size(),
              codec::kIcmpHeader + codec::kTokenBytes);
}

Bytes as_reply(Bytes m, bool v6) {
    m[0] = v6 ? 129 : 0;
    return m;
}

Bytes with_ipv4_header(const Bytes& icmp, uint8_t proto = 1, int extra_len = 0) {
    Bytes ip(20 + icmp.size(), 0);
    ip[0] = 0x45;
    const auto total =
        static_cast<uint16_t>(20 + icmp.size() + static_cast<std::size_t>(extra_len));
    ip[2] = static_cast<uint8_t>(total >> 8);
    ip[3] = static_cast<uint8_t>(total & 0xff);
    ip[8] = 64;
    ip[9] = proto;
    std::copy(icmp.begin(), icmp.end(), ip.begin() + 20);
    return ip;
}

TEST(IcmpCodec, ParsesRepliesOfEveryFamilyAndSocketKind) {
    const uint64_t token = 0xa1a2a3a4a5a6a7a8ULL;
    const Bytes r4 = as_reply(codec::echo_request(false, 7, 9, token, 100), false);
    auto e = codec::parse_echo_reply(false, false, r4);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->id, 7);
    EXPECT_EQ(e->seq, 9);
    EXPECT_EQ(e->token, token);
    EXPECT_EQ(e->icmp_bytes, 100U);

    // IPv4 raw sockets return the IP header first.
    e = codec::parse_echo_reply(false, true, with_ipv4_header(r4));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, 9);
    EXPECT_EQ(e->icmp_bytes, 100U);

    const Bytes r6 = as_reply(codec::echo_request(true, 7, 10, token, 48), true);
    e = codec::parse_echo_reply(true, false, r6);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, 10);
}

TEST(IcmpCodec, IgnoresWhatIsNotAnEchoReply) {
    const Bytes req = codec::echo_request(false, 7, 9, 1, 64);
    EXPECT_FALSE(codec::parse_echo_reply(false, false, req));  // a request, not a reply
    Bytes r4 = as_reply(req, false);
    EXPECT_FALSE(codec::parse_echo_reply(true, false, r4));  // an ICMPv4 type on v6
    EXPECT_FALSE(codec::parse_echo_reply(false, false, Bytes(r4.begin(), r4.begin() + 7)));
    // Header, but no room for the token.
    EXPECT_FALSE(codec::parse_echo_reply(false, false, Bytes(r4.begin(), r4.begin() + 12)));
    // IP header: another protocol, a length past the buffer, a short IHL.
    EXPECT_FALSE(codec::parse_echo_reply(false, true, with_ipv4_header(r4, 17)));
    EXPECT_FALSE(codec::parse_echo_reply(false, true, with_ipv4_header(r4, 1, 10)));
    Bytes bad_ihl = with_ipv4_header(r4);
    bad_ihl[0] = 0x44;
    EXPECT_FALSE(codec::parse_echo_reply(false, true, bad_ihl));
    EXPECT_FALSE(codec::parse_echo_reply(false, true, Bytes(10, 0x45)));
    Bytes code1 = r4;
    code1[1] = 1;
    EXPECT_FALSE(codec::parse_echo_reply(false, false, code1));
}

TEST(IcmpCodec, FindsTheRequestAnErrorQuotes) {
    // Routers quote at least the 8 header bytes: enough for the sequence.
    const Bytes req = codec::echo_request(true, 5, 77, 1, 64);
    auto q = codec::parse_quoted_request(true, Bytes(req.begin(), req.begin() + 8));
    ASSERT_TRUE(q);
    EXPECT_EQ(q->seq, 77);
    EXPECT_EQ(q->id, 5);
    EXPECT_FALSE(codec::parse_quoted_request(false, req));  // v6 type read as v4
    EXPECT_FALSE(codec::parse_quoted_request(true, Bytes(req.begin(), req.begin() + 6)));
}

// ---- the path-MTU search on simulated paths

struct SimPath {
    uint32_t carries = 1500;              // the largest packet that gets through
    std::optional<uint32_t> router_mtu;   // a router answering with ICMP above it
    std::set<uint32_t> lose_once;         // every copy of these sizes lost, the first time
    bool dead_after_first_round = false;  // the peer vanishes

    explicit SimPath(uint32_t c) : carries(c) {}
    SimPath& router(uint32_t mtu) {
        router_mtu = mtu;
        return *this;
    }
    SimPath& lose(uint32_t size) {
        lose_once.insert(size);
        return *this;
    }
    SimPath& dies() {
        dead_after_first_round = true;
        return *this;
    }
};

struct SimOutcome {
    PathMtuResult result;
    std::optional<std::string> failure;
    unsigned rounds = 0;
    unsigned sent = 0;
};

SimOutcome simulate(uint32_t floor, uint32_t ceiling, SimPath path) {
    MtuSearch s(floor, ceiling);
    SimOutcome out;
    for (unsigned round = 0;; ++round) {
        const auto sizes = s.next_round();
        if (sizes.empty()) break;
        EXPECT_LE(sizes.size(), 8U);
        for (uint32_t size : sizes) {
            EXPECT_GE(size, floor);
            EXPECT_LE(size, ceiling);
            out.sent += s.copies();
            if (path.dead_after_first_round && round > 0) continue;
            if (path.lose_once.erase(size) > 0) continue;
            if (path.router_mtu && size > *path.router_mtu) {
                s.too_big(*path.router_mtu, "10.0.1.1");
                continue;
            }
            if (size <= path.carries) s.answered(size);
        }
        s.end_round();
        EXPECT_LE(round, MtuSearch::kMaxRounds);
    }
    out.failure = s.failure();
    out.rounds = s.rounds();
    if (!out.failure) out.result = s.result();
    return out;
}

TEST(MtuSearch, ACleanPathEndsAfterOneRound) {
    auto o = simulate(84, 9000, SimPath(9000));
    ASSERT_FALSE(o.failure);
    EXPECT_EQ(o.result.path_mtu, 9000U);
    EXPECT_EQ(o.result.source, MtuSource::Interface);
    EXPECT_EQ(o.rounds, 1U);
    EXPECT_FALSE(o.result.next_hop_mtu);
}

TEST(MtuSearch, ARouterSaysHowMuchItCarries) {
    auto o = simulate(84, 9000, SimPath(9000).router(1500));
    ASSERT_FALSE(o.failure);
    EXPECT_EQ(o.result.path_mtu, 1500U);
    EXPECT_EQ(o.result.source, MtuSource::Icmp);
    EXPECT_EQ(o.result.next_hop_mtu, 1500U);
    EXPECT_EQ(o.result.icmp_from, "10.0.1.1");
    EXPECT_EQ(o.rounds, 2U);  // the interface's MTU, then the router's
}

TEST(MtuSearch, FindsASilentBlackHoleExactly) {
    for (uint32_t carries : {85U, 576U, 1280U, 1499U, 1500U, 1501U, 4000U, 8999U}) {
        auto o = simulate(84, 9000, SimPath(carries));
        ASSERT_FALSE(o.failure) << carries;
        EXPECT_EQ(o.result.path_mtu, carries);
        EXPECT_EQ(o.result.source, MtuSource::BlackHole) << carries;
        EXPECT_FALSE(o.result.next_hop_mtu);
        // ~9-fold per round: 9000 bytes in about 6 rounds, plus the first and
        // the confirmation.
        EXPECT_LE(o.rounds, 9U) << carries;
    }
    auto big = simulate(84, 65535, SimPath(9000));
    EXPECT_EQ(big.result.path_mtu, 9000U);
    EXPECT_LE(big.rounds, 10U);
}

TEST(MtuSearch, ALostPacketIsNotTakenForALimit) {
    // 1400 lost once: larger sizes answer, so it was chance.
    auto o = simulate(84, 9000, SimPath(1500).lose(1400));
    EXPECT_EQ(o.result.path_mtu, 1500U);
    // The boundary itself lost once: the confirmation round finds it again.
    o = simulate(84, 9000, SimPath(1500).lose(1500));
    EXPECT_EQ(o.result.path_mtu, 1500U);
    EXPECT_EQ(o.result.source, MtuSource::BlackHole);
    // The interface's MTU lost once on a clean path: a search that then
    // gets everything answered ends at the interface's MTU again.
    o = simulate(84, 9000, SimPath(9000).lose(9000));
    EXPECT_EQ(o.result.path_mtu, 9000U);
    EXPECT_EQ(o.result.source, MtuSource::Interface);
}

TEST(MtuSearch, APeerThatStopsAnsweringIsAFailureNotABlackHole) {
    auto o = simulate(84, 9000, SimPath(9000).lose(9000).dies());
    ASSERT_TRUE(o.failure);
    EXPECT_NE(o.failure->find("stopped answering"), std::string::npos);
}

TEST(MtuSearch, ABlackHoleBelowARoutersMtuIsStillABlackHole) {
    auto o = simulate(84, 9000, SimPath(1500).router(4000));
    EXPECT_EQ(o.result.path_mtu, 1500U);
    EXPECT_EQ(o.result.source, MtuSource::BlackHole);
    EXPECT_EQ(o.result.next_hop_mtu, 4000U);
}

TEST(MtuSearch, NothingToSearchWhenTheInterfaceIsNoBiggerThanTheFloor) {
    MtuSearch s(84, 84);
    EXPECT_TRUE(s.next_round().empty());
    EXPECT_TRUE(s.done());
    EXPECT_EQ(s.result().path_mtu, 84U);
    EXPECT_EQ(s.result().source, MtuSource::Interface);
}

TEST(MtuSearch, ALocalLimitBoundsTheSearchButIsNoNextHop) {
    MtuSearch s(84, 9000);
    ASSERT_EQ(s.next_round(), std::vector<uint32_t>{9000});
    s.too_big(1500, "", /*local=*/true);
    s.end_round();
    ASSERT_EQ(s.next_round(), std::vector<uint32_t>{1500});
    s.answered(1500);
    s.end_round();
    // Confirmed like any boundary without a router's word.
    auto r = s.next_round();
    EXPECT_EQ(r, (std::vector<uint32_t>{1500, 1501}));
    s.answered(1500);
    s.end_round();
    ASSERT_TRUE(s.done());
    EXPECT_FALSE(s.result().next_hop_mtu);
    EXPECT_EQ(s.result().path_mtu, 1500U);
}

TEST(PathMtuWaits, FollowTheRttWithinTheTimeout) {
    using std::chrono::milliseconds;
    auto w = path_mtu_waits(0.05, milliseconds(2000));
    EXPECT_EQ(w.round_wait, milliseconds(30));
    EXPECT_EQ(w.confirm_wait, milliseconds(250));
    w = path_mtu_waits(100, milliseconds(2000));
    EXPECT_EQ(w.round_wait, milliseconds(820));
    EXPECT_EQ(w.confirm_wait, milliseconds(2000));
    w = path_mtu_waits(100, milliseconds(100));
    EXPECT_LE(w.round_wait, milliseconds(100));
    EXPECT_LE(w.confirm_wait, milliseconds(100));
}

// ---- RTT percentiles

TEST(Rtt, NearestRankPercentiles) {
    std::vector<double> v;
    for (int i = 100; i >= 1; --i)
        v.push_back(i);
    const auto s = summarize_rtt(v);
    EXPECT_EQ(s.min_ms, 1);
    EXPECT_EQ(s.p50_ms, 50);
    EXPECT_EQ(s.p99_ms, 99);
    EXPECT_EQ(s.max_ms, 100);
    const auto one = summarize_rtt({0.25});
    EXPECT_EQ(one.p50_ms, 0.25);
    EXPECT_EQ(one.p99_ms, 0.25);
    const auto ten = summarize_rtt({5, 1, 2, 3, 4, 6, 7, 8, 9, 10});
    EXPECT_EQ(ten.p50_ms, 5);
    EXPECT_EQ(ten.p99_ms, 10);
}

// ---- iperf3's protocol

// get_results() input as iperf3 3.12's server sent it (normal mode: the
// server received and has no retransmissions to report, which it writes as
// -1 through an unsigned conversion).
constexpr const char* kServerResults312 =
    R"({"cpu_util_total":40.224358219639349,"cpu_util_user":1.6693118080051239,)"
    R"("cpu_util_system":38.554952222625147,"sender_has_retransmits":1.8446744073709552e+19,)"
    R"("congestion_used":"bbr","streams":[{"id":1,"bytes":2760507392,)"
    R"("retransmits":1.8446744073709552e+19,"jitter":0,"errors":0,"packets":0,)"
    R"("start_time":0,"end_time":1.061687}]})";

TEST(Iperf3Protocol, ReadsA312ServersResults) {
    auto r = iperf3::parse_results(kServerResults312);
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_FALSE(r->sender_has_retransmits);
    ASSERT_EQ(r->streams.size(), 1U);
    EXPECT_EQ(r->streams[0].id, 1);
    EXPECT_EQ(r->streams[0].bytes, 2760507392ULL);
    EXPECT_FALSE(r->streams[0].retransmits);
    EXPECT_DOUBLE_EQ(r->streams[0].seconds, 1.061687);
    EXPECT_NEAR(r->cpu_total, 40.22, 0.01);
}

TEST(Iperf3Protocol, RefusesResultsWithoutWhatIperf3Requires) {
    EXPECT_FALSE(iperf3::parse_results("not json"));
    EXPECT_FALSE(iperf3::parse_results("[]"));
    EXPECT_FALSE(iperf3::parse_results(R"({"streams":[]})"));
    EXPECT_FALSE(iperf3::parse_results(
        R"({"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":1})"));
    EXPECT_FALSE(iperf3::parse_results(
        R"({"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":1,)"
        R"("streams":[{"id":1,"retransmits":0}]})"));
    EXPECT_FALSE(iperf3::parse_results(
        R"({"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":1,)"
        R"("streams":[{"id":1,"bytes":-5,"retransmits":0}]})"));
    EXPECT_FALSE(iperf3::parse_results("{\"x\":\"\xff\xfe\"}"));  // not UTF-8
}

TEST(Iperf3Protocol, OurResultsCarryWhatA312ServerRequires) {
    iperf3::Results mine;
    mine.sender_has_retransmits = true;
    mine.streams = {{1, 1000, 3, 5.0}, {3, 2000, std::nullopt, 5.0}};
    const Json j = Json::parse(iperf3::results_json(mine));
    for (const char* k :
         {"cpu_util_total", "cpu_util_user", "cpu_util_system", "sender_has_retransmits"})
        EXPECT_TRUE(j.contains(k)) << k;
    ASSERT_EQ(j.at("streams").size(), 2U);
    for (const auto& s : j.at("streams"))
        for (const char* k : {"id", "bytes", "retransmits", "jitter", "errors", "packets",
                              "start_time", "end_time"})
            EXPECT_TRUE(s.contains(k)) << k;
    EXPECT_EQ(j.at("streams")[1].at("retransmits"), -1);
    auto back = iperf3::parse_results(iperf3::results_json(mine));
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->sender_has_retransmits);
    EXPECT_EQ(back->streams[0].retransmits, 3U);
    EXPECT_FALSE(back->streams[1].retransmits);
}

TEST(Iperf3Protocol, ParametersAreThoseOfIperf3sOwnClient) {
    Json j = Json::parse(iperf3::parameters_json({7, 4, false}));
    EXPECT_EQ(j.at("tcp"), true);
    EXPECT_EQ(j.at("time"), 7);
    EXPECT_EQ(j.at("parallel"), 4);
    EXPECT_EQ(j.at("omit"), 0);
    EXPECT_EQ(j.at("len"), 131072);
    EXPECT_FALSE(j.contains("reverse"));
    j = Json::parse(iperf3::parameters_json({1, 1, true}));
    EXPECT_EQ(j.at("reverse"), true);
}

TEST(Iperf3Protocol, CookiesAndStreamIds) {
    uint8_t random[36];
    for (int i = 0; i < 36; ++i)
        random[i] = static_cast<uint8_t>(i * 37);
    const auto c = iperf3::make_cookie(random);
    ASSERT_EQ(c.size(), iperf3::kCookieBytes);
    EXPECT_EQ(c.back(), '\0');
    for (std::size_t i = 0; i + 1 < c.size(); ++i)
        EXPECT_NE(std::string("abcdefghijklmnopqrstuvwxyz234567").find(c[i]), std::string::npos);
    EXPECT_EQ(iperf3::stream_ids(1), std::vector<int>{1});
    EXPECT_EQ(iperf3::stream_ids(4), (std::vector<int>{1, 3, 4, 5}));
}

TEST(Iperf3Protocol, ServerErrorsInWords) {
    EXPECT_NE(iperf3::server_error_text(142, 0).find("authentication"), std::string::npos);
    EXPECT_NE(iperf3::server_error_text(999, 0).find("999"), std::string::npos);
}

// ---- route replies

Bytes route_message(const std::function<void(nl_msg*)>& attrs, uint8_t type = RTN_UNICAST) {
    std::unique_ptr<nl_msg, void (*)(nl_msg*)> m(nlmsg_alloc_simple(RTM_NEWROUTE, 0), nlmsg_free);
    rtmsg rtm{};
    rtm.rtm_family = AF_INET;
    rtm.rtm_dst_len = 32;
    rtm.rtm_type = type;
    EXPECT_EQ(nlmsg_append(m.get(), &rtm, sizeof rtm, NLMSG_ALIGNTO), 0);
    attrs(m.get());
    const nlmsghdr* h = nlmsg_hdr(m.get());
    const auto* p = reinterpret_cast<const uint8_t*>(h);
    return Bytes(p, p + h->nlmsg_len);
}

TEST(RouteCodec, DecodesTheWayOut) {
    const uint8_t gw[4] = {10, 0, 1, 254};
    const uint8_t src[4] = {10, 0, 1, 1};
    auto b = route_message([&](nl_msg* m) {
        nla_put_u32(m, RTA_TABLE, 254);
        nla_put_u32(m, RTA_OIF, 5);
        nla_put(m, RTA_GATEWAY, 4, gw);
        nla_put(m, RTA_PREFSRC, 4, src);
        nla_put_u32(m, 99, 1);  // newer than the build's headers
    });
    auto r = rtnl::decode_route(reinterpret_cast<const nlmsghdr*>(b.data()));
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(r->oif, 5);
    EXPECT_EQ(r->type, RTN_UNICAST);
    EXPECT_EQ(r->gateway, "10.0.1.254");
    EXPECT_EQ(r->prefsrc, "10.0.1.1");
}

TEST(RouteCodec, RefusesTruncatedAttributes) {
    auto b = route_message([](nl_msg* m) { nla_put_u32(m, RTA_OIF, 5); });
    // The attribute claims more than the message holds.
    auto* h = reinterpret_cast<nlmsghdr*>(b.data());
    auto* attr = reinterpret_cast<nlattr*>(b.data() + NLMSG_SPACE(sizeof(rtmsg)));
    attr->nla_len = 64;
    EXPECT_FALSE(rtnl::decode_route(h));
    // A short rtmsg.
    h->nlmsg_len = NLMSG_LENGTH(4);
    EXPECT_FALSE(rtnl::decode_route(h));
}

// ---- peers

TEST(Peer, NumericAddresses) {
    auto p = resolve_peer("10.0.0.2", 0, std::chrono::milliseconds(100));
    ASSERT_TRUE(p) << p.error().str();
    EXPECT_EQ(p->family(), AF_INET);
    EXPECT_EQ(p->address, "10.0.0.2");
    EXPECT_EQ(p->label(), "peer 10.0.0.2");
    p = resolve_peer("2001:db8::2", 0, std::chrono::milliseconds(100));
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->ipv6());
    EXPECT_EQ(p->scope_ifindex(), 0);
    // A v4-mapped address is the IPv4 peer.
    p = resolve_peer("::ffff:10.0.0.2", 0, std::chrono::milliseconds(100));
    ASSERT_TRUE(p);
    EXPECT_EQ(p->family(), AF_INET);
    EXPECT_EQ(p->address, "10.0.0.2");
}

TEST(Peer, LinkLocalNeedsAnInterface) {
    auto p = resolve_peer("fe80::2", 0, std::chrono::milliseconds(100));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().code, Errc::InvalidArgument);
    EXPECT_NE(p.error().str().find("fe80::2"), std::string::npos);
    EXPECT_NE(p.error().str().find("--interface"), std::string::npos);
    p = resolve_peer("fe80::2", 7, std::chrono::milliseconds(100));
    ASSERT_TRUE(p);
    EXPECT_EQ(p->scope_ifindex(), 7);
    // A zone naming an interface that does not exist.
    p = resolve_peer("fe80::2%no-such-if0", 0, std::chrono::milliseconds(100));
    EXPECT_FALSE(p);
}

TEST(Peer, RefusesWhatIsNotOneHost) {
    for (const char* spec : {"", "0.0.0.0", "255.255.255.255", "224.0.0.1", "ff02::1", "::"}) {
        auto p = resolve_peer(spec, 0, std::chrono::milliseconds(100));
        ASSERT_FALSE(p) << spec;
        EXPECT_EQ(p.error().code, Errc::InvalidArgument) << spec;
    }
    auto p = resolve_peer(std::string(300, 'a'), 0, std::chrono::milliseconds(100));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().code, Errc::InvalidArgument);
}

// ---- the report

ProbeResult sample_result() {
    ProbeResult r;
    r.peer = *resolve_peer("10.0.0.2", 0, std::chrono::milliseconds(100));
    r.interface = {5, "a0", 9000, false, std::nullopt};
    r.icmp_socket = IcmpSocketKind::Raw;
    LatencyResult l;
    l.sent = 20;
    l.received = 19;
    l.ip_bytes = 84;
    l.rtt = {0.01, 0.05, 0.2, 0.3};
    r.latency = l;
    PathMtuResult m;
    m.path_mtu = 1500;
    m.source = MtuSource::BlackHole;
    m.interface_mtu = 9000;
    r.path_mtu = m;
    r.seconds = 0.5;
    return r;
}

TEST(ProbeReport, JsonCarriesTheFiguresUnderTheirNames) {
    auto r = sample_result();
    Json j = report::probe_json(r);
    EXPECT_EQ(j.at("path_mtu"), 1500);
    EXPECT_EQ(j.at("path_mtu_source"), "black_hole");
    EXPECT_TRUE(j.at("next_hop_mtu").is_null());
    EXPECT_EQ(j.at("rtt_ms").at("p50"), 0.05);
    EXPECT_EQ(j.at("rtt_ms").at("p99"), 0.2);
    EXPECT_EQ(j.at("rtt_ms").at("max"), 0.3);
    EXPECT_EQ(j.at("echo").at("received"), 19);
    EXPECT_EQ(j.at("interface").at("mtu"), 9000);
    EXPECT_TRUE(j.at("throughput").is_null());
    r.throughput = ThroughputResult{9.41, 1000, 5.0, 12, 2, true, 5201};
    j = report::probe_json(r);
    EXPECT_EQ(j.at("throughput").at("gbps"), 9.41);
    EXPECT_EQ(j.at("throughput").at("retransmits"), 12);
    EXPECT_EQ(j.at("throughput").at("streams"), 2);
    EXPECT_EQ(j.at("throughput").at("reverse"), true);
}

TEST(ProbeReport, TextSaysWhatTheFiguresMean) {
    auto r = sample_result();
    std::string t = report::probe_text(report::probe_json(r), false);
    EXPECT_NE(t.find("10.0.0.2 via a0 (MTU 9000)"), std::string::npos) << t;
    EXPECT_NE(t.find("1500  black hole"), std::string::npos) << t;
    EXPECT_NE(t.find("19/20 answered"), std::string::npos) << t;
    EXPECT_EQ(t.find("\033["), std::string::npos);
    r.path_mtu->source = MtuSource::Icmp;
    r.path_mtu->next_hop_mtu = 1500;
    r.path_mtu->icmp_from = "10.0.1.254";
    t = report::probe_text(report::probe_json(r), true);
    EXPECT_NE(t.find("fragmentation needed"), std::string::npos) << t;
    EXPECT_NE(t.find("10.0.1.254"), std::string::npos) << t;
    r.throughput = ThroughputResult{9.41, 1000, 5.0, std::nullopt, 1, false, 5201};
    t = report::probe_text(report::probe_json(r), false);
    EXPECT_NE(t.find("9.41 Gbit/s  retransmits n/a  (1 stream, this host sends"), std::string::npos)
        << t;
}

}  // namespace
}  // namespace nictune::probe
