// NetlinkBackend::observe_changes/observed: verification from the kernel's
// change notifications instead of a second read. On a veth pair in a
// namespace the test creates; `ip` and a read through the backend are the
// oracles for what the notifications said.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/netlink_backend.hpp"
#include "engine/tx_steps.hpp"
#include "support/netns.hpp"
#include "support/oracles.hpp"

namespace nictune::test {
namespace {

constexpr uint32_t kLink = ReadRequest::bit(Section::Link);
constexpr uint32_t kChannels = ReadRequest::bit(Section::Channels);
constexpr uint32_t kFeatures = ReadRequest::bit(Section::Features);

class Observe : public ::testing::Test {
  protected:
    void SetUp() override {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        auto r = ns_->exec(
            "ip link add name nt0 type veth peer name nt1 && ip link set nt0 up && "
            "ip link set nt1 up && ethtool -L nt0 rx 1 tx 1 && ethtool -K nt0 gro off");
        ASSERT_EQ(r.status, 0) << r.err;
    }

    int ifindex(const std::string& dev) const {
        return parse_json(ns_->exec("ip -j link show " + dev).out).at(0).at("ifindex");
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
};

// The MTU, channels and a feature set while observing come back from the
// notifications alone, equal to what a read and `ip` say.
TEST_F(Observe, ChangesComeBackFromTheNotificationsEqualToARead) {
    const int idx = ifindex("nt0");
    ns_->run_inside([&] {
        auto be = NetlinkBackend::open();
        ASSERT_TRUE(be) << be.error().str();
        auto names = (*be)->kernel_feature_names();
        ASSERT_TRUE(names) << names.error().str();
        const auto& all = **names;
        const auto at = std::find(all.begin(), all.end(), "rx-gro");
        ASSERT_NE(at, all.end());
        const std::optional<std::size_t> gro = static_cast<std::size_t>(at - all.begin());
        ASSERT_TRUE((*be)->observe_changes(true));
        NicRef nic{idx, "nt0"};
        std::vector<DeviceChange> link{{nic, Section::Link, {{Key::LinkMtu, 4000}}}};
        std::vector<DeviceChange> channels{{nic, Section::Channels, {{Key::ChanRx, 2}}}};
        std::vector<FeatureChange> features(1);
        features[0].nic = nic;
        features[0].nbits = static_cast<uint32_t>(all.size());
        features[0].bits = {{*gro, true}};
        for (auto& r : (*be)->set_devices(link))
            ASSERT_TRUE(r) << r.error().str();
        for (auto& r : (*be)->set_devices(channels))
            ASSERT_TRUE(r) << r.error().str();
        for (auto& r : (*be)->set_features_many(features))
            ASSERT_TRUE(r) << r.error().str();

        std::vector<Backend::ObserveRequest> wanted{{nic, kLink | kChannels | kFeatures}};
        auto seen = (*be)->observed(wanted);
        EXPECT_TRUE(seen.missing.empty());
        ASSERT_EQ(seen.nics.size(), 1U);
        const NicState& st = seen.nics.front();
        EXPECT_EQ(st.id.ifindex, idx);
        EXPECT_EQ(st.id.name, "nt0");

        ReadRequest req{{"nt0"}, true};
        req.identity = false;
        auto read = (*be)->read_interfaces(req);
        ASSERT_TRUE(read && read->size() == 1U);
        const NicState& truth = read->front();
        EXPECT_EQ(st.values.get(Key::LinkMtu), std::optional<uint64_t>(4000));
        EXPECT_EQ(st.values.get(Key::LinkMtu), truth.values.get(Key::LinkMtu));
        EXPECT_EQ(st.values.get(Key::ChanRx), std::optional<uint64_t>(2));
        EXPECT_EQ(st.values.get(Key::ChanRx), truth.values.get(Key::ChanRx));
        EXPECT_EQ(st.values.get(Key::ChanTx), truth.values.get(Key::ChanTx));
        ASSERT_TRUE(st.features && truth.features);
        EXPECT_TRUE(st.features->is_active(*gro));
        EXPECT_EQ(st.features->active, truth.features->active);
        EXPECT_EQ(st.features->wanted, truth.features->wanted);
        (*be)->observe_changes(false);
    });
    EXPECT_EQ(parse_json(ns_->exec("ip -j link show nt0").out).at(0).at("mtu"), 4000);
}

// A family nothing was notified for is "missing" (to be read), as is every
// interface when the backend is not observing; a change made by another
// process while observing is the newest state; a deleted interface is
// missing.
TEST_F(Observe, WhatWasNotNotifiedIsMissing) {
    const int idx = ifindex("nt0");
    const int peer = ifindex("nt1");
    ns_->run_inside([&] {
        auto be = NetlinkBackend::open();
        ASSERT_TRUE(be) << be.error().str();
        NicRef nic{idx, "nt0"};
        std::vector<Backend::ObserveRequest> link_only{{nic, kLink}};
        EXPECT_EQ((*be)->observed(link_only).missing, std::vector<std::string>{"nt0"})
            << "not observing: everything is read";

        ASSERT_TRUE((*be)->observe_changes(true));
        // The MTU it already has: the kernel changes and says nothing.
        std::vector<DeviceChange> same{{nic, Section::Link, {{Key::LinkMtu, 1500}}}};
        for (auto& r : (*be)->set_devices(same))
            ASSERT_TRUE(r) << r.error().str();
        EXPECT_EQ((*be)->observed(link_only).missing, std::vector<std::string>{"nt0"});

        ASSERT_EQ(ns_->exec("ip link set nt0 mtu 1400").status, 0);
        auto seen = (*be)->observed(link_only);
        ASSERT_EQ(seen.nics.size(), 1U);
        EXPECT_EQ(seen.nics.front().values.get(Key::LinkMtu), std::optional<uint64_t>(1400));
        std::vector<Backend::ObserveRequest> with_channels{{nic, kLink | kChannels}};
        EXPECT_EQ((*be)->observed(with_channels).missing, std::vector<std::string>{"nt0"})
            << "the MTU was notified, the channels were not";

        ASSERT_EQ(ns_->exec("ip link set nt1 mtu 1300 && ip link del nt1").status, 0);
        std::vector<Backend::ObserveRequest> gone{{NicRef{peer, "nt1"}, kLink}};
        EXPECT_EQ((*be)->observed(gone).missing, std::vector<std::string>{"nt1"});
        (*be)->observe_changes(false);
        EXPECT_EQ((*be)->observed(link_only).missing, std::vector<std::string>{"nt0"})
            << "stopped: forgotten";
    });
}

// The sockets of one observation serve the next (they are not opened again
// per transaction) and hold nothing from before it: neither what came after
// the last read of the one before, nor changes made in between, which
// would also overflow a tiny queue if it stayed in the groups.
TEST_F(Observe, TheNextObservationHoldsNothingFromBeforeIt) {
    const int idx = ifindex("nt0");
    ns_->run_inside([&] {
        NetlinkBackendOptions opts;
        opts.observe_queue_bytes = 1;  // the kernel's minimum: a few messages
        auto be = NetlinkBackend::open(opts);
        ASSERT_TRUE(be) << be.error().str();
        NicRef nic{idx, "nt0"};
        std::vector<Backend::ObserveRequest> link_only{{nic, kLink}};
        for (int round = 0; round < 3; ++round) {
            SCOPED_TRACE(round);
            ASSERT_TRUE((*be)->observe_changes(true));
            EXPECT_EQ((*be)->observed(link_only).missing, std::vector<std::string>{"nt0"})
                << "nothing notified yet in this observation";
            const int mtu = 1400 - round * 10;
            ASSERT_EQ(ns_->exec("ip link set nt0 mtu " + std::to_string(mtu)).status, 0);
            auto seen = (*be)->observed(link_only);
            ASSERT_EQ(seen.nics.size(), 1U) << "notified and not lost";
            EXPECT_EQ(seen.nics.front().values.get(Key::LinkMtu),
                      std::optional<uint64_t>(static_cast<uint64_t>(mtu)));
            // Left unread when the observation stops.
            ASSERT_EQ(ns_->exec("ip link set nt0 mtu 1350").status, 0);
            (*be)->observe_changes(false);
            // Between observations: more than the queue holds.
            std::string cmd = "true";
            for (int i = 0; i < 20; ++i)
                cmd += " && ip link set nt0 mtu " + std::to_string(1300 + i);
            ASSERT_EQ(ns_->exec(cmd).status, 0);
        }
    });
}

// Notifications the observer's queue could not hold are lost: then nothing
// observed is trusted, every interface is "missing" (and a transaction
// reads them back instead).
TEST_F(Observe, LostNotificationsMeanAReadAndTheRightOutcome) {
    std::string cmd;
    for (int i = 0; i < 40; ++i)
        cmd += "ip link add name ob" + std::to_string(i) + " type veth peer name obp" +
               std::to_string(i) + " && ";
    ASSERT_EQ(ns_->exec(cmd + "true").status, 0);
    ns_->run_inside([&] {
        NetlinkBackendOptions opts;
        opts.observe_queue_bytes = 1;  // the kernel's minimum: a few messages
        auto be = NetlinkBackend::open(opts);
        ASSERT_TRUE(be) << be.error().str();
        std::vector<std::string> names;
        for (int i = 0; i < 40; ++i)
            names.push_back("ob" + std::to_string(i));
        ReadRequest req{names, true};
        req.identity = false;
        auto before = (*be)->read_interfaces(req);
        ASSERT_TRUE(before && before->size() == names.size());
        std::vector<DeviceChange> changes;
        std::vector<Backend::ObserveRequest> wanted;
        for (const auto& n : *before) {
            changes.push_back(
                {NicRef{n.id.ifindex, n.id.name}, Section::Link, {{Key::LinkMtu, 2000}}});
            wanted.push_back({NicRef{n.id.ifindex, n.id.name}, kLink});
        }
        ASSERT_TRUE((*be)->observe_changes(true));
        for (auto& r : (*be)->set_devices(changes))
            ASSERT_TRUE(r) << r.error().str();
        auto seen = (*be)->observed(wanted);
        EXPECT_TRUE(seen.nics.empty()) << "the queue overflowed: nothing is trusted";
        EXPECT_EQ(seen.missing.size(), names.size());
        (*be)->observe_changes(false);
    });
    EXPECT_EQ(parse_json(ns_->exec("ip -j link show ob39").out).at(0).at("mtu"), 2000);
}

// Many interfaces, at least half of the namespace's links, are read back
// (one dump per family) rather than observed: a transaction's Observing
// then leaves the notifications alone, and the read-back verifies the
// writes, equal to `ip`. Few are observed. The choice needs a link dump
// first, and more interfaces than are read one by one.
TEST_F(Observe, ManyInterfacesAreReadBackWhereTheDumpsCostLess) {
    // dm0-dm39: 20 veth pairs; 43 links with lo, nt0 and nt1.
    std::string cmd;
    for (int i = 0; i < 40; i += 2)
        cmd += "ip link add name dm" + std::to_string(i) + " type veth peer name dm" +
               std::to_string(i + 1) + " && ";
    ASSERT_EQ(ns_->exec(cmd + "true").status, 0);
    ns_->run_inside([&] {
        auto be = NetlinkBackend::open();
        ASSERT_TRUE(be) << be.error().str();
        EXPECT_FALSE((*be)->read_back_is_cheaper(40)) << "no link dump yet";
        std::vector<std::string> names;
        for (int i = 0; i < 40; ++i)
            names.push_back("dm" + std::to_string(i));
        ReadRequest req{names, true};
        req.identity = false;
        auto before = (*be)->read_interfaces(req);  // 40 > 32: the dumps
        ASSERT_TRUE(before && before->size() == names.size());
        EXPECT_TRUE((*be)->read_back_is_cheaper(40));
        EXPECT_TRUE((*be)->read_back_is_cheaper(33)) << "33 of 43 links";
        EXPECT_FALSE((*be)->read_back_is_cheaper(32)) << "read one by one";
        NetlinkBackendOptions daemon;  // as nictuned opens it
        daemon.read_back_many = false;
        auto observer = NetlinkBackend::open(daemon);
        ASSERT_TRUE(observer) << observer.error().str();
        ASSERT_TRUE((*observer)->read_interfaces(req));
        EXPECT_FALSE((*observer)->read_back_is_cheaper(40)) << "nictuned always observes";

        std::vector<tx::Write> all;
        std::vector<Backend::ObserveRequest> wanted;
        for (const auto& n : *before) {
            const NicRef nic{n.id.ifindex, n.id.name};
            all.push_back({nic, SettingId::device(Key::LinkMtu), uint64_t{2000}, 0, 0});
            wanted.push_back({nic, kLink});
        }
        {
            tx::Observing observing(**be, all);
            const auto run = tx::execute(**be, all, true);
            ASSERT_EQ(run.errors.count(), 0U) << run.errors.first()->str();
            EXPECT_EQ((*be)->observed(wanted).missing.size(), all.size())
                << "not observed: every interface is to be read";
            const auto again = tx::reread(**be, all);
            ASSERT_FALSE(again.nics_error) << again.nics_error->str();
            for (const auto& w : all) {
                const NicState* nic = again.find(w.nic->ifindex);
                ASSERT_NE(nic, nullptr) << w.nic->name;
                EXPECT_EQ(nic->values.get(Key::LinkMtu), std::optional<uint64_t>(2000))
                    << w.nic->name;
            }
        }
        // Ten of them: observed.
        std::vector<tx::Write> few(all.begin(), all.begin() + 10);
        for (auto& w : few)
            w.value = uint64_t{3000};
        tx::Observing observing(**be, few);
        const auto ran = tx::execute(**be, few, true);
        ASSERT_EQ(ran.errors.count(), 0U) << ran.errors.first()->str();
        std::vector<Backend::ObserveRequest> ten(wanted.begin(), wanted.begin() + 10);
        const auto seen = (*be)->observed(ten);
        EXPECT_TRUE(seen.missing.empty()) << "observed";
        ASSERT_EQ(seen.nics.size(), 10U);
        EXPECT_EQ(seen.nics[9].values.get(Key::LinkMtu), std::optional<uint64_t>(3000));
    });
    for (int i : {0, 9, 10, 39})
        EXPECT_EQ(
            parse_json(ns_->exec("ip -j link show dm" + std::to_string(i)).out).at(0).at("mtu"),
            i < 10 ? 3000 : 2000);
}

// [irq] comes back from the writes' own read-backs (fixture /proc/irq
// files here: the test's namespace has no queue IRQs), with the notified
// families of the same interface or alone; a written irqbalance list (the
// whole section) or stopping makes it one to read again.
TEST_F(Observe, IrqAffinitiesComeBackFromTheirWritesWithTheNotifiedFamilies) {
    constexpr uint32_t kIrq = ReadRequest::bit(Section::Irq);
    const int idx = ifindex("nt0");
    char tmpl[] = "/tmp/nictune-observe-irq-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::filesystem::path proc = std::filesystem::path(tmpl) / "proc";
    for (const char* irq : {"30", "31"}) {
        std::filesystem::create_directories(proc / "irq" / irq);
        std::ofstream(proc / "irq" / irq / "smp_affinity_list") << "7\n";
    }
    ns_->run_inside([&] {
        NetlinkBackendOptions opts;
        opts.proc_root = proc;
        opts.run_root = std::filesystem::path(tmpl) / "run";
        auto be = NetlinkBackend::open(opts);
        ASSERT_TRUE(be) << be.error().str();
        NicRef nic{idx, "nt0"};
        std::vector<Backend::ObserveRequest> irq_only{{nic, kIrq}};
        std::vector<Backend::ObserveRequest> with_link{{nic, kIrq | kLink}};
        ASSERT_TRUE((*be)->observe_changes(true));
        EXPECT_EQ((*be)->observed(irq_only).missing, std::vector<std::string>{"nt0"})
            << "nothing written yet";
        ASSERT_TRUE((*be)->set_irq_affinity(nic, 30, "3"));
        ASSERT_TRUE((*be)->set_irq_affinity(nic, 31, "1,2"));
        auto seen = (*be)->observed(irq_only);
        EXPECT_TRUE(seen.missing.empty());
        ASSERT_EQ(seen.nics.size(), 1U);
        EXPECT_EQ(seen.nics[0].id.ifindex, idx);
        EXPECT_EQ(seen.nics[0].id.name, "nt0");
        ASSERT_TRUE(seen.nics[0].irq);
        EXPECT_EQ(seen.nics[0].irq->irqs, (std::vector<QueueIrq>{{30, "", "3", std::nullopt},
                                                                 {31, "", "1-2", std::nullopt}}));
        EXPECT_EQ((*be)->observed(with_link).missing, std::vector<std::string>{"nt0"})
            << "the link was not notified";

        std::vector<DeviceChange> mtu{{nic, Section::Link, {{Key::LinkMtu, 3000}}}};
        for (auto& r : (*be)->set_devices(mtu))
            ASSERT_TRUE(r) << r.error().str();
        seen = (*be)->observed(with_link);
        ASSERT_EQ(seen.nics.size(), 1U) << "both: the link notified, the IRQs read back";
        EXPECT_EQ(seen.nics[0].values.get(Key::LinkMtu), std::optional<uint64_t>(3000));
        ASSERT_TRUE(seen.nics[0].irq);
        EXPECT_EQ(seen.nics[0].irq->irqs.size(), 2U);

        // irqbalance's list (its write fails here: no irqbalance) is the
        // whole section: read it.
        EXPECT_FALSE((*be)->set_irqbalance_banned(nic, "30-31"));
        EXPECT_EQ((*be)->observed(irq_only).missing, std::vector<std::string>{"nt0"});
        seen = (*be)->observed(std::vector<Backend::ObserveRequest>{{nic, kLink}});
        EXPECT_EQ(seen.nics.size(), 1U) << "the link alone is still as notified";
        (*be)->observe_changes(false);
        EXPECT_EQ((*be)->observed(irq_only).missing, std::vector<std::string>{"nt0"})
            << "stopped: forgotten";
    });
    std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace nictune::test
