// EventSource: the link and ethtool notifications nictuned's loop hands to
// the watcher, received and decoded in one place. On a veth pair in a
// namespace the test creates, changed by `ip` and `ethtool` from outside;
// `ip` and a read through the backend are the oracles for what the events
// said.
#include "backend/event_source.hpp"

#include <gtest/gtest.h>
#include <poll.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/netlink_backend.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"

namespace nictune::test {
namespace {

// What the sink was handed, newest last per interface.
struct Recorder final : EventSink {
    void link(const LinkEvent& l) override { links.push_back(l); }
    void settings(int ifindex, const std::string& name, Section section,
                  const DeviceValues& values) override {
        settings_seen[{ifindex, section}] = values;
        names[ifindex] = name;
    }
    void features(int ifindex, const std::string& name,
                  std::optional<FeatureSet> features) override {
        features_seen[ifindex] = std::move(features);
        names[ifindex] = name;
    }
    void missed(const Error& why, bool overrun) override {
        (overrun ? overruns : undecoded).push_back(why.str());
    }

    std::vector<LinkEvent> links;
    std::map<std::pair<int, Section>, DeviceValues> settings_seen;
    std::map<int, std::optional<FeatureSet>> features_seen;
    std::map<int, std::string> names;
    std::vector<std::string> overruns, undecoded;
};

class EventSourceTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        auto r = ns_->exec(
            "ip link add name ev0 type veth peer name ev1 && ip link set ev0 up && "
            "ip link set ev1 up && ethtool -L ev0 rx 1 tx 1 && ethtool -K ev0 gro off");
        ASSERT_EQ(r.status, 0) << r.err;
    }

    int ifindex(const std::string& dev) const {
        return parse_json(ns_->exec("ip -j link show " + dev).out).at(0).at("ifindex");
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
};

// Another process changes the MTU, the channels and a feature, then deletes
// the pair: the sink gets each as an event with the new state, equal to
// what a read says, and the deletions as deleted links.
TEST_F(EventSourceTest, HandsLinkSettingsAndFeatureChangesToTheSink) {
    const int idx = ifindex("ev0");
    const int peer = ifindex("ev1");
    ns_->run_inside([&] {
        auto be = NetlinkBackend::open();
        ASSERT_TRUE(be) << be.error().str();
        auto names = (*be)->kernel_feature_names();
        ASSERT_TRUE(names) << names.error().str();
        const std::shared_ptr<const FeatureNames> feature_names = *names;
        auto src = EventSource::open(EventSource::kDefaultQueueBytes, [feature_names] {
            return Result<std::shared_ptr<const FeatureNames>>(feature_names);
        });
        ASSERT_TRUE(src) << src.error().str();

        auto r = ns_->exec(
            "ip link set ev0 mtu 4000 && ethtool -L ev0 rx 2 && "
            "ethtool -K ev0 gro on");
        ASSERT_EQ(r.status, 0) << r.err;
        // The kernel queued every notification before those commands returned.
        Recorder rec;
        (*src)->receive(rec);
        EXPECT_TRUE(rec.overruns.empty());
        EXPECT_TRUE(rec.undecoded.empty()) << rec.undecoded.front();

        ReadRequest req{{"ev0"}, true};
        req.identity = false;
        auto read = (*be)->read_interfaces(req);
        ASSERT_TRUE(read && read->size() == 1U);
        const NicState& truth = read->front();

        const LinkEvent* last = nullptr;
        for (const auto& l : rec.links)
            if (l.ifindex == idx) last = &l;
        ASSERT_NE(last, nullptr) << "no RTM_NEWLINK for ev0";
        EXPECT_FALSE(last->deleted);
        EXPECT_EQ(last->name, "ev0");
        EXPECT_EQ(last->values.get(Key::LinkMtu), std::optional<uint64_t>(4000));
        EXPECT_EQ(last->values.get(Key::LinkMtu), truth.values.get(Key::LinkMtu));
        EXPECT_EQ(last->mac, truth.id.mac);

        auto ch = rec.settings_seen.find({idx, Section::Channels});
        ASSERT_NE(ch, rec.settings_seen.end()) << "no CHANNELS_NTF for ev0";
        EXPECT_EQ(ch->second.get(Key::ChanRx), std::optional<uint64_t>(2));
        EXPECT_EQ(ch->second.get(Key::ChanRx), truth.values.get(Key::ChanRx));
        EXPECT_EQ(ch->second.get(Key::ChanTx), truth.values.get(Key::ChanTx));
        EXPECT_EQ(rec.names[idx], "ev0");

        auto ft = rec.features_seen.find(idx);
        ASSERT_NE(ft, rec.features_seen.end()) << "no FEATURES_NTF for ev0";
        ASSERT_TRUE(ft->second && truth.features);
        auto gro = ft->second->index_of("rx-gro");
        ASSERT_TRUE(gro);
        EXPECT_TRUE(ft->second->is_active(*gro));
        EXPECT_EQ(ft->second->active, truth.features->active);
        EXPECT_EQ(ft->second->wanted, truth.features->wanted);

        ASSERT_EQ(ns_->exec("ip link del ev1").status, 0);
        Recorder gone;
        (*src)->receive(gone);
        std::map<int, bool> deleted;
        for (const auto& l : gone.links)
            deleted[l.ifindex] = deleted[l.ifindex] || l.deleted;
        EXPECT_TRUE(deleted[idx]) << "the veth pair goes away together";
        EXPECT_TRUE(deleted[peer]);
    });
    EXPECT_NE(ns_->exec("ip link show ev0").status, 0);
}

// Without the kernel's feature names a FEATURES_NTF still arrives, as "the
// features changed" (nullopt): the watcher then reads the interface.
TEST_F(EventSourceTest, AFeatureChangeWithoutNamesIsAnnouncedWithoutItsState) {
    const int idx = ifindex("ev0");
    ns_->run_inside([&] {
        auto src = EventSource::open(EventSource::kDefaultQueueBytes, [] {
            return Result<std::shared_ptr<const FeatureNames>>(nullptr);
        });
        ASSERT_TRUE(src) << src.error().str();
        ASSERT_EQ(ns_->exec("ethtool -K ev0 gro on").status, 0);
        Recorder rec;
        (*src)->receive(rec);
        auto ft = rec.features_seen.find(idx);
        ASSERT_NE(ft, rec.features_seen.end()) << "no FEATURES_NTF for ev0";
        EXPECT_FALSE(ft->second.has_value());
        EXPECT_TRUE(rec.undecoded.empty());
    });
}

// A receive queue too small for a burst: the kernel drops notifications and
// the sink hears of an overrun (nictuned then reads everything again).
TEST_F(EventSourceTest, DroppedNotificationsAreAnOverrun) {
    ns_->run_inside([&] {
        auto src = EventSource::open(
            1, [] { return Result<std::shared_ptr<const FeatureNames>>(nullptr); });
        ASSERT_TRUE(src) << src.error().str();
        auto r = ns_->exec(
            "for i in $(seq 1 300); do echo \"link set ev0 mtu $((1000 + i))\"; done | "
            "ip -batch -");
        ASSERT_EQ(r.status, 0) << r.err;
        const auto fds = (*src)->fds();
        pollfd p{fds[0], POLLIN, 0};
        ASSERT_EQ(poll(&p, 1, 1000), 1) << "the link socket has something to read";
        Recorder rec;
        (*src)->receive(rec);
        EXPECT_FALSE(rec.overruns.empty()) << rec.links.size() << " link events, no overrun";
    });
    EXPECT_EQ(parse_json(ns_->exec("ip -j link show ev0").out).at(0).at("mtu"), 1300);
}

// nictuned frees its netlink receive buffers when it goes idle: every
// socket allocates its buffer again on its next read, and what it reads then
// is whole. A notification, a read of the link and its ethtool families
// (pipelined GETs), the health reader's counters and a transaction's
// observer each read after their buffers were freed, twice over.
TEST_F(EventSourceTest, ReleasedBuffersAreAllocatedAgainOnTheNextRead) {
    const int idx = ifindex("ev0");
    ns_->run_inside([&] {
        auto be = NetlinkBackend::open();
        ASSERT_TRUE(be) << be.error().str();
        auto src = EventSource::open(EventSource::kDefaultQueueBytes, [] {
            return Result<std::shared_ptr<const FeatureNames>>(nullptr);
        });
        ASSERT_TRUE(src) << src.error().str();
        ReadRequest req{{"ev0"}, true};
        req.identity = false;
        ASSERT_TRUE((*be)->read_interfaces(req));
        ASSERT_NE((*be)->health(), nullptr);
        // The observer's sources are kept, paused, for the next transaction.
        ASSERT_TRUE((*be)->observe_changes(true));
        (*be)->observe_changes(false);

        for (int round = 0; round < 2; ++round) {
            const uint64_t mtu = 3000 + static_cast<uint64_t>(round);
            const uint64_t rx = 2 - static_cast<uint64_t>(round);
            SCOPED_TRACE("round " + std::to_string(round));
            (*be)->release_buffers();
            (*src)->release_buffers();

            ASSERT_TRUE((*be)->observe_changes(true));
            auto r = ns_->exec("ip link set ev0 mtu " + std::to_string(mtu) +
                               " && ethtool -L ev0 rx " + std::to_string(rx));
            ASSERT_EQ(r.status, 0) << r.err;
            Recorder rec;
            (*src)->receive(rec);
            EXPECT_TRUE(rec.undecoded.empty()) << rec.undecoded.front();
            const LinkEvent* last = nullptr;
            for (const auto& l : rec.links)
                if (l.ifindex == idx) last = &l;
            ASSERT_NE(last, nullptr) << "no RTM_NEWLINK for ev0";
            EXPECT_EQ(last->values.get(Key::LinkMtu), std::optional<uint64_t>(mtu));

            // The transaction's observer saw the same changes.
            Backend::ObserveRequest want{
                {idx, "ev0"},
                ReadRequest::bit(Section::Link) | ReadRequest::bit(Section::Channels)};
            auto seen = (*be)->observed(std::span(&want, 1));
            (*be)->observe_changes(false);
            ASSERT_EQ(seen.nics.size(), 1U) << "missing: " << seen.missing.size();
            EXPECT_EQ(seen.nics[0].values.get(Key::LinkMtu), std::optional<uint64_t>(mtu));
            EXPECT_EQ(seen.nics[0].values.get(Key::ChanRx), std::optional<uint64_t>(rx));

            auto read = (*be)->read_interfaces(req);
            ASSERT_TRUE(read && read->size() == 1U);
            const auto shown = parse_json(ns_->exec("ip -j link show ev0").out).at(0);
            EXPECT_EQ(read->front().values.get(Key::LinkMtu),
                      std::optional<uint64_t>(shown.at("mtu").get<uint64_t>()));
            EXPECT_EQ(read->front().values.get(Key::ChanRx), std::optional<uint64_t>(rx));

            const NicState* nic = &read->front();
            auto counters = (*be)->health()->read_counters(std::span(&nic, 1));
            EXPECT_TRUE(counters.link_stats.contains(idx)) << "no rtnetlink statistics for ev0";
        }
    });
}

}  // namespace
}  // namespace nictune::test
