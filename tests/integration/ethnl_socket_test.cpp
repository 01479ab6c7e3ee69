// The ethtool netlink socket against the running kernel. Changes happen only
// on veth pairs inside namespaces the tests create; the host's interfaces are
// only read. ethtool's text output is the oracle here (and only here).
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ethnl/codecs.hpp"
#include "ethnl/socket.hpp"
#include "support/netns.hpp"
#include "support/process.hpp"

// Every allocation in this binary can be made to change errno, as any
// library call may: code that reads errno after building a message (an
// argument evaluated before errno, in an order the language leaves open)
// then reports the wrong error. Off unless a test turns it on, for its
// thread only.
namespace {
thread_local bool g_allocations_clobber_errno = false;
}  // namespace

// g++ sees the free() below inlined where a new-expression's pointer is
// deleted and calls the pair mismatched; here they are malloc and free.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
    if (g_allocations_clobber_errno) errno = EDOM;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
#pragma GCC diagnostic pop

namespace nictune::ethnl {
namespace {

using test::TestNetns;

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
}

// "label: value" lines of ethtool output, labels trimmed. ethtool -l and -g
// print the same labels twice, under "Pre-set maximums:" and "Current
// hardware settings:"; those go to `max` and `cur`.
struct EthtoolText {
    std::map<std::string, std::string> max;
    std::map<std::string, std::string> cur;
    std::map<std::string, std::string> all;  // last occurrence of each label
};

EthtoolText parse_ethtool(const std::string& text) {
    EthtoolText out;
    std::map<std::string, std::string>* block = nullptr;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with("Pre-set maximums:")) {
            block = &out.max;
            continue;
        }
        if (line.starts_with("Current hardware settings:")) {
            block = &out.cur;
            continue;
        }
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string label = trim(line.substr(0, colon));
        const std::string value = trim(line.substr(colon + 1));
        if (block != nullptr) (*block)[label] = value;
        out.all[label] = value;
    }
    return out;
}

// ethtool -c prints two values on one line: "Adaptive RX: off  TX: n/a".
// Stores them as "<name> RX" and "<name> TX".
bool rx_tx_pair(const std::string& text, const std::string& line_start,
                std::map<std::string, std::string>& out, const std::string& name) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.starts_with(line_start)) continue;
        std::istringstream words(line.substr(line_start.size()));
        std::string rx, tx_label, tx;
        if (!(words >> rx >> tx_label >> tx) || tx_label != "TX:") return false;
        out[name + " RX"] = rx;
        out[name + " TX"] = tx;
        return true;
    }
    return false;
}

// Compares one value with ethtool's rendering: "n/a" is absent, on/off a bool.
void expect_same(const DeviceValues& v, Key k, const std::map<std::string, std::string>& text,
                 const std::string& label) {
    SCOPED_TRACE(key_path(k) + " vs ethtool \"" + label + "\"");
    auto it = text.find(label);
    ASSERT_NE(it, text.end()) << "ethtool printed no \"" << label << "\"";
    const std::string& t = it->second;
    if (t == "n/a")
        EXPECT_FALSE(v.has(k)) << *v.get(k);
    else if (t == "on" || t == "off")
        EXPECT_EQ(v.get(k), t == "on" ? 1U : 0U);
    else
        EXPECT_EQ(v.get(k), std::stoull(t));
}

// All replies of a settings dump, by interface name.
Result<std::map<std::string, Reply>> dump_settings(Socket& s, Section section) {
    std::map<std::string, Reply> out;
    auto r = s.dump(get_cmd(section), request_flags(section), [&](const nlmsghdr* nlh) {
        auto reply = decode_settings(section, nlh);
        if (!reply) return Result<void>(std::unexpected(reply.error()));
        out[reply->ifname] = std::move(*reply);
        return Result<void>();
    });
    if (!r) return std::unexpected(r.error());
    return out;
}

Result<std::map<std::string, FeaturesReply>> dump_features(Socket& s) {
    std::map<std::string, FeaturesReply> out;
    auto r = s.dump(ETHTOOL_MSG_FEATURES_GET, request_flags(Section::Features),
                    [&](const nlmsghdr* nlh) {
                        auto reply = decode_features(nlh);
                        if (!reply) return Result<void>(std::unexpected(reply.error()));
                        out[reply->ifname] = std::move(*reply);
                        return Result<void>();
                    });
    if (!r) return std::unexpected(r.error());
    return out;
}

// A namespace of its own per test, with the veth pair ntva/ntvb in it.
class EthnlSocketOnVeth : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string why;
        ns_ = TestNetns::create(&why);
        if (!ns_) GTEST_SKIP() << why;
        if (!test::have_program("ethtool")) GTEST_SKIP() << "needs ethtool as the oracle";
        auto made = ns_->exec("ip link add name ntva type veth peer name ntvb");
        ASSERT_EQ(made.status, 0) << made.err;
    }
    std::unique_ptr<TestNetns> ns_;
};

const std::vector<std::pair<Key, std::string>> kChannelLabels = {{Key::ChanRx, "RX"},
                                                                 {Key::ChanTx, "TX"},
                                                                 {Key::ChanOther, "Other"},
                                                                 {Key::ChanCombined, "Combined"}};
const std::vector<std::pair<Key, std::string>> kChannelMaxLabels = {
    {Key::ChanRxMax, "RX"},
    {Key::ChanTxMax, "TX"},
    {Key::ChanOtherMax, "Other"},
    {Key::ChanCombinedMax, "Combined"}};

void expect_channels_match_ethtool(const TestNetns& ns, const std::string& ifname,
                                   const DeviceValues& v) {
    SCOPED_TRACE(ifname);
    auto l = ns.exec_argv({"ethtool", "-l", ifname});
    ASSERT_EQ(l.status, 0) << l.err;
    auto text = parse_ethtool(l.out);
    for (const auto& [k, label] : kChannelMaxLabels)
        expect_same(v, k, text.max, label);
    for (const auto& [k, label] : kChannelLabels)
        expect_same(v, k, text.cur, label);
}

// A window of SETs that the kernel refuses to take (larger than the
// socket's send buffer: EMSGSIZE, before any message is read) reports the
// send's own errno, whatever building the message does to errno after it.
// No namespace needed: nothing reaches the kernel's ethtool code.
TEST(EthnlSocket, ASendThatFailsReportsItsOwnErrno) {
    auto s = Socket::open();
    ASSERT_TRUE(s) << s.error().str();
    const int tiny = 1;  // the kernel rounds it up to its minimum, about 4.5 KiB
    ASSERT_EQ(setsockopt((*s)->fd(), SOL_SOCKET, SO_SNDBUF, &tiny, sizeof tiny), 0);
    static const char pad[1024] = {};
    const std::vector<Socket::SetRequest> reqs(
        8, {0x7ffffff0, [](nlmsghdr* nlh) { mnl_attr_put(nlh, 0x3ff, sizeof pad, pad); }});
    g_allocations_clobber_errno = true;
    auto rs = (*s)->set_many(ETHTOOL_MSG_LINKINFO_SET, reqs);
    g_allocations_clobber_errno = false;
    ASSERT_EQ(rs.size(), reqs.size());
    ASSERT_FALSE(rs[0]);
    EXPECT_EQ(rs[0].error().sys_errno, EMSGSIZE) << rs[0].error().str();
    EXPECT_NE(rs[0].error().context.find(": send"), std::string::npos) << rs[0].error().str();
}

TEST(EthnlSocket, OpensAndResolvesTheEthtoolFamilyAndMonitorGroup) {
    auto s = Socket::open();
    ASSERT_TRUE(s.has_value()) << s.error().str();
    EXPECT_GE((*s)->family_id(), GENL_MIN_ID);
    EXPECT_NE((*s)->monitor_group(), 0U);
    EXPECT_GE((*s)->fd(), 0);
    auto names = (*s)->feature_names();
    ASSERT_TRUE(names.has_value()) << names.error().str();
    EXPECT_GE((*names)->size(), 60U);  // 64 on 6.18
    EXPECT_EQ((*names)->front(), "tx-scatter-gather");
    auto again = (*s)->feature_names();
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->get(), names->get()) << "feature names are read once per socket";
}

TEST_F(EthnlSocketOnVeth, ChannelsDumpMatchesEthtool) {
    // Make the two ends differ: ntva gets as many RX queues as it can have.
    auto l = parse_ethtool(ns_->exec_argv({"ethtool", "-l", "ntva"}).out);
    const std::string rx_max = l.max["RX"];
    ASSERT_FALSE(rx_max.empty());
    auto changed = ns_->exec_argv({"ethtool", "-L", "ntva", "rx", rx_max});
    ASSERT_EQ(changed.status, 0) << changed.err;

    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        auto dumped = dump_settings(**s, Section::Channels);
        ASSERT_TRUE(dumped.has_value()) << dumped.error().str();
        ASSERT_EQ(dumped->count("ntva"), 1U);
        ASSERT_EQ(dumped->count("ntvb"), 1U);
        EXPECT_EQ(dumped->at("ntva").values.get(Key::ChanRx), std::stoull(rx_max));
        for (const auto& [name, reply] : *dumped) {
            EXPECT_GT(reply.ifindex, 0);
            expect_channels_match_ethtool(*ns_, name, reply.values);
        }
    });
}

TEST_F(EthnlSocketOnVeth, FeaturesDumpMatchesEthtool) {
    auto changed =
        ns_->exec("ethtool -K ntva gro on tso off && ethtool -K ntvb tx-checksumming off");
    ASSERT_EQ(changed.status, 0) << changed.err;

    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        auto names = (*s)->feature_names();
        ASSERT_TRUE(names.has_value()) << names.error().str();
        auto dumped = dump_features(**s);
        ASSERT_TRUE(dumped.has_value()) << dumped.error().str();
        for (const std::string ifname : {"ntva", "ntvb"}) {
            SCOPED_TRACE(ifname);
            ASSERT_EQ(dumped->count(ifname), 1U);
            const FeaturesReply& r = dumped->at(ifname);
            EXPECT_EQ(r.nbits, (*names)->size());
            FeatureSet fs{*names, r.hw, r.wanted, r.active, r.nochange};

            auto k = ns_->exec_argv({"ethtool", "-k", ifname});
            ASSERT_EQ(k.status, 0) << k.err;
            // Lines are "name: on|off [fixed]"; ethtool's aliases
            // (tx-checksumming, ...) are not kernel names and are skipped.
            std::size_t compared = 0;
            for (const auto& [label, value] : parse_ethtool(k.out).all) {
                auto i = fs.index_of(label);
                if (!i) continue;
                SCOPED_TRACE(label + ": " + value);
                EXPECT_EQ(fs.is_active(*i), value.starts_with("on"));
                EXPECT_EQ(fs.is_fixed(*i), value.find("[fixed]") != std::string::npos);
                ++compared;
            }
            EXPECT_GE(compared, 50U);
            EXPECT_EQ(fs.active_by_name("rx-gro"), ifname == "ntva");
            // What the ethtool -K calls above turned off.
            const char* turned_off =
                ifname == "ntva" ? "tx-tcp-segmentation" : "tx-checksum-ip-generic";
            EXPECT_EQ(fs.active_by_name(turned_off), false);
        }
    });
}

TEST_F(EthnlSocketOnVeth, LinkModesDumpOfAVethSays10GFullDuplex) {
    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        auto dumped = dump_settings(**s, Section::Link);
        ASSERT_TRUE(dumped.has_value()) << dumped.error().str();
        ASSERT_EQ(dumped->count("ntva"), 1U);
        const DeviceValues& v = dumped->at("ntva").values;
        auto text = parse_ethtool(ns_->exec_argv({"ethtool", "ntva"}).out).all;
        EXPECT_EQ(text["Speed"], std::to_string(v.get(Key::LinkSpeed).value_or(0)) + "Mb/s");
        EXPECT_EQ(text["Duplex"], v.get(Key::LinkDuplex) == DUPLEX_FULL ? "Full" : "?");
        EXPECT_EQ(text["Auto-negotiation"], v.get(Key::LinkAutoneg) == 1U ? "on" : "off");
    });
}

TEST_F(EthnlSocketOnVeth, CoalesceAndRingsDumpsSkipVethSilently) {
    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        for (Section section : {Section::Coalesce, Section::Rings, Section::Pause}) {
            SCOPED_TRACE(section_info(section).name);
            auto dumped = dump_settings(**s, section);
            ASSERT_TRUE(dumped.has_value()) << dumped.error().str();
            EXPECT_TRUE(dumped->empty()) << dumped->begin()->first;
        }
        // The socket is still in step after dumps that answered nothing.
        auto channels = dump_settings(**s, Section::Channels);
        ASSERT_TRUE(channels.has_value()) << channels.error().str();
        EXPECT_EQ(channels->size(), 2U);
    });
}

TEST_F(EthnlSocketOnVeth, GetOfAFamilyTheDriverLacksIsUnsupported) {
    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        auto channels = dump_settings(**s, Section::Channels);
        ASSERT_TRUE(channels.has_value()) << channels.error().str();
        const int ifindex = channels->at("ntva").ifindex;

        bool called = false;
        auto r = (*s)->get(ETHTOOL_MSG_COALESCE_GET, ifindex, 0, [&](const nlmsghdr*) {
            called = true;
            return Result<void>();
        });
        ASSERT_FALSE(r.has_value());
        EXPECT_FALSE(called);
        EXPECT_EQ(r.error().code, Errc::Unsupported) << r.error().str();
        EXPECT_EQ(r.error().sys_errno, EOPNOTSUPP);
        EXPECT_EQ(r.error().context, "ethtool COALESCE_GET ifindex " + std::to_string(ifindex));

        auto gone = (*s)->get(ETHTOOL_MSG_CHANNELS_GET, 999999, 0, nullptr);
        ASSERT_FALSE(gone.has_value());
        EXPECT_EQ(gone.error().code, Errc::NoSuchInterface) << gone.error().str();

        // A GET that works, after two failures on the same socket.
        std::optional<Reply> got;
        auto ok = (*s)->get(ETHTOOL_MSG_CHANNELS_GET, ifindex, 0, [&](const nlmsghdr* nlh) {
            auto reply = decode_settings(Section::Channels, nlh);
            if (!reply) return Result<void>(std::unexpected(reply.error()));
            got = std::move(*reply);
            return Result<void>();
        });
        ASSERT_TRUE(ok.has_value()) << ok.error().str();
        ASSERT_TRUE(got.has_value());
        EXPECT_EQ(got->ifname, "ntva");
        EXPECT_EQ(got->values, channels->at("ntva").values);
    });
}

TEST_F(EthnlSocketOnVeth, DumpsSpanningManyDatagramsArriveWholeAndStopCleanly) {
    // 300 more veths. Their FEATURES dump is ~49 KB with compact bitsets (two
    // datagrams of up to 32 KiB) and ~1.3 MB in verbose form (~44 datagrams).
    auto made = ns_->add_veth_pairs("pa", "pb", 150);
    ASSERT_EQ(made.status, 0) << made.err;
    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        auto compact = dump_features(**s);
        ASSERT_TRUE(compact.has_value()) << compact.error().str();
        EXPECT_EQ(compact->size(), 303U);  // lo, ntva, ntvb and 300 more
        EXPECT_TRUE(compact->contains("pb149"));

        // Without ETHTOOL_FLAG_COMPACT_BITSETS: one nest per bit, same maps.
        std::map<std::string, FeaturesReply> verbose;
        auto v = (*s)->dump(ETHTOOL_MSG_FEATURES_GET, 0, [&](const nlmsghdr* nlh) {
            auto reply = decode_features(nlh);
            if (!reply) return Result<void>(std::unexpected(reply.error()));
            verbose[reply->ifname] = std::move(*reply);
            return Result<void>();
        });
        ASSERT_TRUE(v.has_value()) << v.error().str();
        ASSERT_EQ(verbose.size(), compact->size());
        for (const auto& [name, c] : *compact) {
            SCOPED_TRACE(name);
            const FeaturesReply& w = verbose.at(name);
            EXPECT_EQ(w.nbits, c.nbits);
            EXPECT_EQ(w.hw, c.hw);
            EXPECT_EQ(w.wanted, c.wanted);
            EXPECT_EQ(w.active, c.active);
            EXPECT_EQ(w.nochange, c.nochange);
        }

        // A callback error ends the callbacks; the rest of the dump is still
        // read and dropped. Left unread, the kernel's dump would still be
        // running and the next dump on the socket would fail with EBUSY.
        int calls = 0;
        auto stopped = (*s)->dump(ETHTOOL_MSG_FEATURES_GET, 0, [&](const nlmsghdr*) {
            ++calls;
            return Result<void>(fail(Errc::Internal, "test", "stop here"));
        });
        ASSERT_FALSE(stopped.has_value());
        EXPECT_EQ(stopped.error().message, "stop here");
        EXPECT_EQ(calls, 1);
        auto again = dump_features(**s);
        ASSERT_TRUE(again.has_value()) << again.error().str();
        EXPECT_EQ(again->size(), 303U);
    });
}

TEST(EthnlSocket, HostCoalesceAndRingsDumpsMatchEthtoolForEth0) {
    // Read only: dumps and `ethtool -c/-g` in the namespace the tests run in.
    if (!test::have_program("ethtool")) GTEST_SKIP() << "needs ethtool as the oracle";
    auto s = Socket::open();
    ASSERT_TRUE(s.has_value()) << s.error().str();
    auto coalesce = dump_settings(**s, Section::Coalesce);
    ASSERT_TRUE(coalesce.has_value()) << coalesce.error().str();
    auto rings = dump_settings(**s, Section::Rings);
    ASSERT_TRUE(rings.has_value()) << rings.error().str();
    if (!coalesce->contains("eth0") || !rings->contains("eth0"))
        GTEST_SKIP() << "no eth0 with coalescing and rings here";

    auto c = test::run({"ethtool", "-c", "eth0"});
    ASSERT_EQ(c.status, 0) << c.err;
    auto ctext = parse_ethtool(c.out).all;
    const DeviceValues& cv = coalesce->at("eth0").values;
    // ethtool -c labels; note its "rx-frame-low" for rx-frames-low.
    const std::vector<std::pair<Key, std::string>> coalesce_labels = {
        {Key::CoalRxUsecs, "rx-usecs"},
        {Key::CoalRxFrames, "rx-frames"},
        {Key::CoalRxUsecsIrq, "rx-usecs-irq"},
        {Key::CoalRxFramesIrq, "rx-frames-irq"},
        {Key::CoalTxUsecs, "tx-usecs"},
        {Key::CoalTxFrames, "tx-frames"},
        {Key::CoalTxUsecsIrq, "tx-usecs-irq"},
        {Key::CoalTxFramesIrq, "tx-frames-irq"},
        {Key::CoalStatsBlockUsecs, "stats-block-usecs"},
        {Key::CoalSampleInterval, "sample-interval"},
        {Key::CoalPktRateLow, "pkt-rate-low"},
        {Key::CoalPktRateHigh, "pkt-rate-high"},
        {Key::CoalRxUsecsLow, "rx-usecs-low"},
        {Key::CoalRxFramesLow, "rx-frame-low"},
        {Key::CoalTxUsecsLow, "tx-usecs-low"},
        {Key::CoalTxFramesLow, "tx-frame-low"},
        {Key::CoalRxUsecsHigh, "rx-usecs-high"},
        {Key::CoalRxFramesHigh, "rx-frame-high"},
        {Key::CoalTxUsecsHigh, "tx-usecs-high"},
        {Key::CoalTxFramesHigh, "tx-frame-high"},
    };
    for (const auto& [k, label] : coalesce_labels)
        expect_same(cv, k, ctext, label);
    // "Adaptive RX: off  TX: n/a" and "CQE mode RX: n/a  TX: n/a"
    std::map<std::string, std::string> pairs;
    ASSERT_TRUE(rx_tx_pair(c.out, "Adaptive RX:", pairs, "adaptive"));
    ASSERT_TRUE(rx_tx_pair(c.out, "CQE mode RX:", pairs, "cqe"));
    expect_same(cv, Key::CoalAdaptiveRx, pairs, "adaptive RX");
    expect_same(cv, Key::CoalAdaptiveTx, pairs, "adaptive TX");
    expect_same(cv, Key::CoalCqeModeRx, pairs, "cqe RX");
    expect_same(cv, Key::CoalCqeModeTx, pairs, "cqe TX");

    auto g = test::run({"ethtool", "-g", "eth0"});
    ASSERT_EQ(g.status, 0) << g.err;
    auto gtext = parse_ethtool(g.out);
    const DeviceValues& rv = rings->at("eth0").values;
    const std::vector<std::pair<Key, std::string>> max_labels = {{Key::RingsRxMax, "RX"},
                                                                 {Key::RingsRxMiniMax, "RX Mini"},
                                                                 {Key::RingsRxJumboMax, "RX Jumbo"},
                                                                 {Key::RingsTxMax, "TX"}};
    const std::vector<std::pair<Key, std::string>> cur_labels = {{Key::RingsRx, "RX"},
                                                                 {Key::RingsRxMini, "RX Mini"},
                                                                 {Key::RingsRxJumbo, "RX Jumbo"},
                                                                 {Key::RingsTx, "TX"},
                                                                 {Key::RingsRxBufLen, "RX Buf Len"},
                                                                 {Key::RingsCqeSize, "CQE Size"},
                                                                 {Key::RingsTxPush, "TX Push"}};
    for (const auto& [k, label] : max_labels)
        expect_same(rv, k, gtext.max, label);
    for (const auto& [k, label] : cur_labels)
        expect_same(rv, k, gtext.cur, label);
    // ethtool prints n/a both when the attribute is missing and when it says "unknown".
    if (gtext.cur["TCP data split"] == "n/a") {
        EXPECT_NE(rv.get(Key::RingsTcpDataSplit).value_or(0), 2U);
    }
}

TEST_F(EthnlSocketOnVeth, ChannelsSetChangesWhatEthtoolShowsAndReportsTheKernelsReason) {
    auto before = parse_ethtool(ns_->exec_argv({"ethtool", "-l", "ntva"}).out);
    const uint64_t rx_max = std::stoull(before.max["RX"]);
    const uint64_t rx_now = std::stoull(before.cur["RX"]);
    if (rx_max < 2) GTEST_SKIP() << "veth allows one RX queue on a single-CPU machine";
    const uint64_t rx_new = rx_now == rx_max ? 1 : rx_max;

    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        auto channels = dump_settings(**s, Section::Channels);
        ASSERT_TRUE(channels.has_value()) << channels.error().str();
        const int ifindex = channels->at("ntva").ifindex;

        const std::pair<Key, uint64_t> rx[] = {{Key::ChanRx, rx_new}};
        auto ok = (*s)->set(set_cmd(Section::Channels), ifindex,
                            [&](nlmsghdr* nlh) { encode_settings(nlh, Section::Channels, rx); });
        ASSERT_TRUE(ok.has_value()) << ok.error().str();
        auto after = parse_ethtool(ns_->exec_argv({"ethtool", "-l", "ntva"}).out);
        EXPECT_EQ(after.cur["RX"], std::to_string(rx_new));

        // veth has no combined channels: any count exceeds its maximum (0).
        const std::pair<Key, uint64_t> combined[] = {{Key::ChanCombined, 5}};
        auto bad = (*s)->set(set_cmd(Section::Channels), ifindex, [&](nlmsghdr* nlh) {
            encode_settings(nlh, Section::Channels, combined);
        });
        ASSERT_FALSE(bad.has_value());
        EXPECT_EQ(bad.error().code, Errc::Kernel);
        EXPECT_EQ(bad.error().sys_errno, EINVAL);
        EXPECT_EQ(bad.error().kernel_message, "requested channel count exceeds maximum");
        EXPECT_EQ(bad.error().context, "ethtool CHANNELS_SET ifindex " + std::to_string(ifindex));
        EXPECT_NE(bad.error().str().find("(kernel: requested channel count exceeds maximum)"),
                  std::string::npos)
            << bad.error().str();
        auto unchanged = parse_ethtool(ns_->exec_argv({"ethtool", "-l", "ntva"}).out);
        EXPECT_EQ(unchanged.cur["RX"], std::to_string(rx_new));
    });
}

// Many SETs go out in windows of one datagram, and the kernel answers only
// the failures and each window's last message: every failure must still reach
// the request that caused it, in any window, and every other request must be
// carried out.
TEST_F(EthnlSocketOnVeth, SetManyAnswersEachRequestOfSeveralWindows) {
    constexpr int kLinks = 150;  // three windows of at most 64
    auto made = ns_->add_veth_pairs("nb", "nbp", kLinks);
    ASSERT_EQ(made.status, 0) << made.err;
    auto before = parse_ethtool(ns_->exec_argv({"ethtool", "-l", "nb0"}).out);
    const uint64_t rx_max = std::stoull(before.max["RX"]);
    if (rx_max < 2) GTEST_SKIP() << "veth allows one RX queue on a single-CPU machine";

    // Failures first, in the middle and last of a window, and last of all.
    const std::set<int> refused = {0, 5, 63, 64, 100, kLinks - 1};
    const int vanished = 70;
    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        auto channels = dump_settings(**s, Section::Channels);
        ASSERT_TRUE(channels.has_value()) << channels.error().str();
        // veth has no combined channels: any count exceeds its maximum (0).
        const std::pair<Key, uint64_t> bad[] = {{Key::ChanCombined, 5}};
        const std::pair<Key, uint64_t> good[] = {{Key::ChanRx, rx_max}};
        std::vector<Socket::SetRequest> reqs;
        for (int i = 0; i < kLinks; ++i) {
            const std::string name = "nb" + std::to_string(i);
            ASSERT_TRUE(channels->contains(name)) << name;
            const int ifindex = i == vanished ? 999999 : channels->at(name).ifindex;
            const bool fails = refused.contains(i);
            reqs.push_back({ifindex, [&, fails](nlmsghdr* nlh) {
                                if (fails)
                                    encode_settings(nlh, Section::Channels, bad);
                                else
                                    encode_settings(nlh, Section::Channels, good);
                            }});
        }
        auto results = (*s)->set_many(set_cmd(Section::Channels), reqs);
        ASSERT_EQ(results.size(), reqs.size());
        auto after = dump_settings(**s, Section::Channels);
        ASSERT_TRUE(after.has_value()) << after.error().str();
        for (int i = 0; i < kLinks; ++i) {
            const std::string name = "nb" + std::to_string(i);
            SCOPED_TRACE(name);
            const auto rx = after->at(name).values.get(Key::ChanRx);
            if (refused.contains(i)) {
                ASSERT_FALSE(results[i].has_value());
                EXPECT_EQ(results[i].error().sys_errno, EINVAL) << results[i].error().str();
                EXPECT_EQ(results[i].error().kernel_message,
                          "requested channel count exceeds maximum");
                EXPECT_EQ(results[i].error().context,
                          "ethtool CHANNELS_SET ifindex " + std::to_string(reqs[i].ifindex));
                EXPECT_EQ(rx, 1U);
            } else if (i == vanished) {
                ASSERT_FALSE(results[i].has_value());
                EXPECT_EQ(results[i].error().sys_errno, ENODEV) << results[i].error().str();
                EXPECT_EQ(rx, 1U);
            } else {
                EXPECT_TRUE(results[i].has_value()) << results[i].error().str();
                EXPECT_EQ(rx, rx_max);
            }
        }
        // ethtool agrees, at both ends of the run.
        EXPECT_EQ(parse_ethtool(ns_->exec_argv({"ethtool", "-l", "nb1"}).out).cur["RX"],
                  std::to_string(rx_max));
        EXPECT_EQ(parse_ethtool(ns_->exec_argv({"ethtool", "-l", "nb148"}).out).cur["RX"],
                  std::to_string(rx_max));
        // The socket is in step afterwards: a request gets its own answer.
        const std::pair<Key, uint64_t> one[] = {{Key::ChanRx, 1}};
        auto ok = (*s)->set(set_cmd(Section::Channels), channels->at("nb1").ifindex,
                            [&](nlmsghdr* nlh) { encode_settings(nlh, Section::Channels, one); });
        EXPECT_TRUE(ok.has_value()) << ok.error().str();
    });
}

// GETs pipelined in windows: each reply reaches the request that asked for
// it, in every window; a device that is gone is that request's error only;
// a callback's error is its request's result; ethtool reads the same.
TEST_F(EthnlSocketOnVeth, GetManyAnswersEachDeviceOfSeveralWindows) {
    constexpr int kLinks = 70;  // three windows of at most Socket::kGetWindow
    static_assert(kLinks > 2 * Socket::kGetWindow);
    auto made = ns_->add_veth_pairs("ng", "ngp", kLinks);
    ASSERT_EQ(made.status, 0) << made.err;
    auto before = parse_ethtool(ns_->exec_argv({"ethtool", "-l", "ng0"}).out);
    const uint64_t rx_max = std::stoull(before.max["RX"]);
    // Some links at the maximum, told apart from the others.
    if (rx_max < 2) GTEST_SKIP() << "veth allows one RX queue on a single-CPU machine";
    const std::set<int> raised = {1, 31, 32, 64};
    for (int i : raised)
        ASSERT_EQ(ns_->exec_argv(
                         {"ethtool", "-L", "ng" + std::to_string(i), "rx", std::to_string(rx_max)})
                      .status,
                  0);
    const std::set<int> gone = {0, 33, kLinks - 1};  // first, in a window, last
    const int rejected = 40;                         // its callback fails
    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        auto channels = dump_settings(**s, Section::Channels);
        ASSERT_TRUE(channels.has_value()) << channels.error().str();
        std::vector<int> ifindexes;
        for (int i = 0; i < kLinks; ++i)
            ifindexes.push_back(gone.contains(i) ? 999990 + i
                                                 : channels->at("ng" + std::to_string(i)).ifindex);
        std::vector<std::vector<Reply>> got(kLinks);
        auto results =
            (*s)->get_many(get_cmd(Section::Channels), request_flags(Section::Channels), ifindexes,
                           [&](std::size_t k, const nlmsghdr* nlh) -> Result<void> {
                               auto reply = decode_settings(Section::Channels, nlh);
                               if (!reply) return std::unexpected(reply.error());
                               got.at(k).push_back(std::move(*reply));
                               if (k == rejected)
                                   return fail(Errc::Internal, "test", "callback refused");
                               return {};
                           });
        ASSERT_EQ(results.size(), ifindexes.size());
        for (int i = 0; i < kLinks; ++i) {
            const std::string name = "ng" + std::to_string(i);
            SCOPED_TRACE(name);
            if (gone.contains(i)) {
                ASSERT_FALSE(results[i].has_value());
                EXPECT_EQ(results[i].error().code, Errc::NoSuchInterface)
                    << results[i].error().str();
                EXPECT_TRUE(got[i].empty());
                continue;
            }
            if (i == rejected) {
                ASSERT_FALSE(results[i].has_value());
                EXPECT_EQ(results[i].error().message, "callback refused");
            } else {
                EXPECT_TRUE(results[i].has_value()) << results[i].error().str();
            }
            ASSERT_EQ(got[i].size(), 1U);
            EXPECT_EQ(got[i][0].ifindex, ifindexes[i]);
            EXPECT_EQ(got[i][0].ifname, name);
            const std::string text =
                parse_ethtool(ns_->exec_argv({"ethtool", "-l", name}).out).cur["RX"];
            EXPECT_EQ(got[i][0].values.get(Key::ChanRx), std::stoull(text));
            EXPECT_EQ(got[i][0].values.get(Key::ChanRx), raised.contains(i) ? rx_max : 1U);
        }
        // The socket is in step afterwards: a request gets its own answer.
        std::vector<Reply> one;
        auto ok = (*s)->get(get_cmd(Section::Channels), ifindexes[2],
                            request_flags(Section::Channels), [&](const nlmsghdr* nlh) {
                                auto reply = decode_settings(Section::Channels, nlh);
                                if (!reply) return Result<void>(std::unexpected(reply.error()));
                                one.push_back(std::move(*reply));
                                return Result<void>();
                            });
        ASSERT_TRUE(ok.has_value()) << ok.error().str();
        ASSERT_EQ(one.size(), 1U);
        EXPECT_EQ(one[0].ifname, "ng2");
    });
}

TEST_F(EthnlSocketOnVeth, MonitorReportsAFeatureChangeMadeByEthtool) {
    ns_->run_inside([&] {
        auto s = Socket::open();
        ASSERT_TRUE(s.has_value()) << s.error().str();
        auto names = (*s)->feature_names();
        ASSERT_TRUE(names.has_value()) << names.error().str();
        auto before = dump_features(**s);
        ASSERT_TRUE(before.has_value()) << before.error().str();
        const int ifindex = before->at("ntva").ifindex;
        {
            FeatureSet fs{*names, {}, {}, before->at("ntva").active, {}};
            ASSERT_EQ(fs.active_by_name("rx-gro"), false) << "veth starts with GRO off";
        }

        auto monitor = Socket::open();
        ASSERT_TRUE(monitor.has_value()) << monitor.error().str();
        auto sub = (*monitor)->subscribe_monitor();
        ASSERT_TRUE(sub.has_value()) << sub.error().str();
        // Nothing is queued before the change.
        int early = 0;
        ASSERT_TRUE((*monitor)->receive_notifications([&](const nlmsghdr*) {
            ++early;
            return Result<void>();
        }));
        EXPECT_EQ(early, 0);

        auto changed = ns_->exec_argv({"ethtool", "-K", "ntva", "gro", "on"});
        ASSERT_EQ(changed.status, 0) << changed.err;

        std::optional<FeaturesReply> ntf;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (!ntf && std::chrono::steady_clock::now() < deadline) {
            pollfd p{(*monitor)->fd(), POLLIN, 0};
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0))) <= 0) break;
            auto r = (*monitor)->receive_notifications([&](const nlmsghdr* nlh) -> Result<void> {
                const auto* genl = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh));
                if (genl->cmd != ETHTOOL_MSG_FEATURES_NTF) return {};
                auto f = decode_features(nlh);
                if (!f) return std::unexpected(f.error());
                if (f->ifindex == ifindex) ntf = std::move(*f);
                return {};
            });
            ASSERT_TRUE(r.has_value()) << r.error().str();
        }
        ASSERT_TRUE(ntf.has_value()) << "no FEATURES_NTF for ntva within 2 s";
        EXPECT_EQ(ntf->ifname, "ntva");
        FeatureSet fs{*names, ntf->hw, ntf->wanted, ntf->active, ntf->nochange};
        EXPECT_EQ(fs.active_by_name("rx-gro"), true);
    });
}

TEST_F(EthnlSocketOnVeth, MonitorReportsDroppedNotificationsAsENOBUFS) {
    ns_->run_inside([&] {
        auto monitor = Socket::open();
        ASSERT_TRUE(monitor.has_value()) << monitor.error().str();
        ASSERT_TRUE((*monitor)->subscribe_monitor());
        // The smallest queue the kernel allows holds about three notifications.
        int tiny = 1;
        ASSERT_EQ(setsockopt((*monitor)->fd(), SOL_SOCKET, SO_RCVBUF, &tiny, sizeof tiny), 0);
        auto flood = ns_->exec(
            "for i in 1 2 3 4 5 6 7 8 9 10; do ethtool -K ntva gro on; "
            "ethtool -K ntva gro off; done");
        ASSERT_EQ(flood.status, 0) << flood.err;

        int delivered = 0;
        auto r = (*monitor)->receive_notifications([&](const nlmsghdr*) {
            ++delivered;
            return Result<void>();
        });
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, Errc::Io);
        EXPECT_EQ(r.error().sys_errno, ENOBUFS);
        // The overflow is reported once; what was queued is still readable.
        auto rest = (*monitor)->receive_notifications([&](const nlmsghdr*) {
            ++delivered;
            return Result<void>();
        });
        EXPECT_TRUE(rest.has_value()) << rest.error().str();
        EXPECT_GT(delivered, 0);
        EXPECT_LT(delivered, 20);
    });
}

}  // namespace
}  // namespace nictune::ethnl
