#include "watch/watcher.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "fakes/fake_backend.hpp"
#include "fakes/states.hpp"
#include "profile/loader.hpp"
#include "support/profile_text.hpp"

namespace nictune::watch {
namespace {
using ::nictune::test::profile_of;
namespace fs = std::filesystem;

struct Event {
    std::string kind, iface, detail;
};

class WatcherTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-watch-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        be.nics = {test::ixgbe_port("p4p1"), test::veth("v0")};
        manager = std::make_unique<Manager>(be, profile::Store(profile::StoreOptions()),
                                            StateStore(dir_), FactsBook::builtin());
        WatcherEvents ev;
        ev.applied = [&](const std::string&, const std::string& iface, const std::string&,
                         const std::string& result, const std::string& reason) {
            events.push_back({"applied", iface, result + "/" + reason});
        };
        ev.drift = [&](const std::string& iface, const std::string& key, const std::string&,
                       const std::string& actual, bool enforced) {
            events.push_back({"drift", iface, key + "=" + actual + (enforced ? " enforced" : "")});
        };
        ev.log = [&](Level level, std::string_view message, const LogFields& fields) {
            logged.push_back({level, std::string(message), fields});
        };
        watcher = std::make_unique<Watcher>(*manager, ev);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // A port the kernel now has (its RTM_NEWLINK not yet handed over).
    void plug(const std::string& name, int ifindex) {
        auto st = test::ixgbe_port(name);
        st.id.ifindex = ifindex;
        be.nics.push_back(st);
    }
    void bind(const std::string& glob, bool enforce,
              const std::string& text = "[link]\nmtu = 9000\n") {
        DaemonConfig cfg;
        Binding b;
        b.profile = "jumbo";
        b.interface = glob;
        b.enforce = enforce;
        cfg.bindings.push_back(b);
        watcher->set_config(cfg, {{"jumbo", profile_of("jumbo", text)}});
    }
    // A new ixgbe port "vf<i>" (ifindex 100 + i) appears: the kernel has it
    // and the watcher hears of it.
    void appear(int i) {
        auto st = test::ixgbe_port("vf" + std::to_string(i));
        st.id.ifindex = 100 + i;
        be.nics.push_back(st);
        watcher->link_event(100 + i, "vf" + std::to_string(i), false);
    }
    std::optional<uint64_t> mtu(const std::string& name) {
        auto* n = be.nic(name);
        return n ? n->values.get(Key::LinkMtu) : std::nullopt;
    }

    fs::path dir_;
    test::FakeBackend be;
    std::unique_ptr<Manager> manager;
    std::unique_ptr<Watcher> watcher;
    std::vector<Event> events;
    struct Logged {
        Level level;
        std::string message;
        LogFields fields;
    };
    std::vector<Logged> logged;  // what went to the log sink
};

TEST_F(WatcherTest, AppliesBindingsToPresentInterfacesAtStart) {
    bind("p4p*", false);
    watcher->apply_all("boot");
    EXPECT_EQ(mtu("p4p1"), 9000U);
    EXPECT_EQ(mtu("v0"), 1500U) << "v0 is not bound";
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].iface, "p4p1");
    EXPECT_EQ(events[0].detail, "applied/boot");
}

TEST_F(WatcherTest, AppliesToAMatchingInterfaceThatAppearsLater) {
    bind("p5*", false);
    watcher->apply_all("boot");
    EXPECT_TRUE(events.empty());
    plug("p5p1", 20);
    watcher->link_event(20, "p5p1", false);
    EXPECT_EQ(mtu("p5p1"), 1500U) << "only noted until the daemon has drained its sockets";
    watcher->process();
    EXPECT_EQ(mtu("p5p1"), 9000U);
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].detail, "applied/hotplug");
}

// The daemon hands over what a new link's RTM_NEWLINK said (link_seen): the
// read of the link carries it, so the backend need not ask for the link
// again. A later notice by name alone (link_event) is newer than it: then
// the read asks the kernel.
TEST_F(WatcherTest, ANewLinksReadTakesWhatItsNotificationSaid) {
    bind("p5*", false);
    watcher->apply_all("boot");
    plug("p5p1", 20);
    NicState heard;
    heard.id.ifindex = 20;
    heard.id.name = "p5p1";
    heard.values.set(Key::LinkMtu, 1500);
    watcher->link_seen(heard);
    EXPECT_TRUE(watcher->pending());
    std::size_t before = be.requests.size();
    watcher->process();
    EXPECT_EQ(mtu("p5p1"), 9000U);
    ASSERT_GT(be.requests.size(), before);
    const ReadRequest& read = be.requests[before];
    EXPECT_EQ(read.names, std::vector<std::string>{"p5p1"});
    ASSERT_EQ(read.linked.size(), 1U);
    EXPECT_EQ(read.linked[0].id.ifindex, 20);
    EXPECT_EQ(read.linked[0].values.get(Key::LinkMtu), 1500U);
    // Tracked now: a notification of it is no longer a new link's.
    watcher->link_seen(heard);
    EXPECT_FALSE(watcher->pending());

    plug("p5p2", 21);
    heard.id.ifindex = 21;
    heard.id.name = "p5p2";
    watcher->link_seen(heard);
    watcher->link_event(21, "p5p2", false);
    before = be.requests.size();
    watcher->process();
    EXPECT_EQ(mtu("p5p2"), 9000U);
    ASSERT_GT(be.requests.size(), before);
    EXPECT_TRUE(be.requests[before].linked.empty());
}

TEST_F(WatcherTest, TracksARenamedInterfaceByIfindex) {
    bind("p4p*", true);
    watcher->apply_all("boot");
    be.nic("p4p1")->id.name = "eth9";
    watcher->link_event(4, "eth9", false);
    watcher->process();
    EXPECT_EQ(watcher->tracked().at(4).name, "eth9");
    EXPECT_EQ(watcher->tracked().at(4).profile, "jumbo");
    // The saved originals moved with the device.
    EXPECT_TRUE(*manager->state().load_interface("eth9"));
    EXPECT_FALSE(*manager->state().load_interface("p4p1"));
    // Drift on the new name is still seen and repaired.
    be.nic("eth9")->values.set(Key::LinkMtu, 1500);
    watcher->device_changed(4);
    watcher->process();
    EXPECT_EQ(mtu("eth9"), 9000U);
}

TEST_F(WatcherTest, ReappliesAfterADriverReload) {
    bind("p4p*", false);
    watcher->apply_all("boot");
    // The driver goes away and comes back with defaults and a new ifindex.
    watcher->link_event(4, "p4p1", true);
    be.nics[0] = test::ixgbe_port("p4p1");
    be.nics[0].id.ifindex = 31;
    watcher->link_event(31, "p4p1", false);
    watcher->process();
    EXPECT_EQ(mtu("p4p1"), 9000U);
    EXPECT_EQ(events.back().detail, "applied/hotplug");
}

TEST_F(WatcherTest, ReportsDriftWithoutEnforcing) {
    bind("p4p*", false);
    watcher->apply_all("boot");
    be.nic("p4p1")->values.set(Key::LinkMtu, 1500);
    watcher->device_changed(4);
    watcher->process();
    EXPECT_EQ(mtu("p4p1"), 1500U);
    ASSERT_EQ(events.back().kind, "drift");
    EXPECT_EQ(events.back().detail, "link.mtu=1500");
    EXPECT_EQ(watcher->tracked().at(4).drifted, std::vector<std::string>{"link.mtu"});
}

TEST_F(WatcherTest, LogsThroughItsSinkWithTheJournalFields) {
    bind("p4p*", false);
    watcher->apply_all("boot");
    ASSERT_FALSE(logged.empty());
    const Logged& applied = logged.back();
    EXPECT_EQ(applied.level, Level::Notice);
    EXPECT_EQ(applied.message, "applied profile jumbo (boot)");
    EXPECT_EQ(applied.fields.interface, "p4p1");
    EXPECT_EQ(applied.fields.profile, "jumbo");
    EXPECT_EQ(applied.fields.event, nictune::Event::Applied);
    EXPECT_EQ(applied.fields.result, "applied");
    EXPECT_EQ(applied.fields.reason, "boot");
    EXPECT_FALSE(applied.fields.transaction.empty());

    be.nic("p4p1")->values.set(Key::LinkMtu, 1500);
    watcher->device_changed(4);
    watcher->process();
    const Logged& drift = logged.back();
    EXPECT_EQ(drift.level, Level::Warning);
    EXPECT_EQ(drift.message, "link.mtu drifted: 1500, expected 9000");
    EXPECT_EQ(drift.fields.event, nictune::Event::Drift);
    EXPECT_EQ(drift.fields.setting, "link.mtu");
    EXPECT_EQ(drift.fields.expected, "9000");
    EXPECT_EQ(drift.fields.actual, "1500");
}

TEST_F(WatcherTest, EnforcesDriftBackToTheProfile) {
    bind("p4p*", true);
    watcher->apply_all("boot");
    be.nic("p4p1")->values.set(Key::LinkMtu, 1500);
    watcher->device_changed(4);
    watcher->process();
    EXPECT_EQ(mtu("p4p1"), 9000U);
    EXPECT_EQ(events[events.size() - 2].detail, "link.mtu=1500 enforced");
    EXPECT_EQ(events.back().detail, "applied/drift");
}

TEST_F(WatcherTest, OwnChangesAreNotDrift) {
    bind("p4p*", true);
    watcher->apply_all("boot");
    const auto calls = be.calls.size();
    // The notifications nictune's own apply caused arrive afterwards.
    watcher->device_changed(4);
    watcher->device_changed(4);
    watcher->process();
    EXPECT_EQ(be.calls.size(), calls);
    EXPECT_EQ(events.size(), 1U);
}

TEST_F(WatcherTest, AValueTheDriverAdjustedIsTheBaseline) {
    bind("p4p*", true, "[rings]\nrx = 1000\n");
    be.adjust(Key::RingsRx, [](uint64_t v) { return (v + 511) / 512 * 512; });
    watcher->apply_all("boot");
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::RingsRx), 1024U);
    const auto calls = be.calls.size();
    watcher->device_changed(4);
    watcher->process();
    EXPECT_EQ(be.calls.size(), calls) << "no enforcement loop on an adjusted value";
}

// The kernel keeps a feature off while nictune's request (the wanted bit)
// stands: an upper device, XDP or a dependency overrides it. Re-applying
// would send the same bit again, so it is listed, never enforced.
TEST_F(WatcherTest, AFeatureTheKernelHoldsOffIsBlockedNotDrift) {
    bind("p4p*", true, "[features]\ngro = true\n");
    watcher->apply_all("boot");
    ASSERT_NE(watcher->tracked().at(4).expected("features.rx-gro"), nullptr);
    const auto calls = be.calls.size();
    const auto seen = events.size();
    auto& fs = *be.nic("p4p1")->features;
    const auto gro = *fs.index_of("rx-gro");
    fs.active[gro / 32] &= ~(1U << (gro % 32));  // wanted stays on
    for (int i = 0; i < 3; ++i) {
        watcher->features_notified(4, fs);
        watcher->process();
    }
    EXPECT_EQ(be.calls.size(), calls) << "nothing re-applied";
    EXPECT_EQ(events.size(), seen) << "no Drift signal, no apply";
    EXPECT_EQ(watcher->tracked().at(4).drifted, std::vector<std::string>{"features.rx-gro"});
    // Someone really turns it off (wanted off too): that is drift again.
    fs.wanted[gro / 32] &= ~(1U << (gro % 32));
    watcher->features_notified(4, fs);
    watcher->process();
    EXPECT_TRUE(fs.is_active(gro)) << "enforced";
    EXPECT_EQ(events.back().detail, "applied/drift");
}

// A bridge takes the port: the kernel clears LRO's request and keeps it off
// (dev_disable_lro, then the upper device disables it). One re-apply finds
// it blocked, which is no failure; the baseline then leaves it out, so
// nothing loops.
TEST_F(WatcherTest, AFeatureTheKernelForcesOffIsReappliedOnceThenLeftAlone) {
    bind("p4p*", true, "[link]\nmtu = 9000\n[features]\nlro = true\n");
    watcher->apply_all("boot");
    auto& fs = *be.nic("p4p1")->features;
    const auto lro = *fs.index_of("rx-lro");
    ASSERT_TRUE(fs.is_active(lro));
    fs.active[lro / 32] &= ~(1U << (lro % 32));
    fs.wanted[lro / 32] &= ~(1U << (lro % 32));
    be.kept_off = {"rx-lro"};
    watcher->features_notified(4, fs);
    watcher->process();
    EXPECT_EQ(events.back().detail, "applied/drift");
    EXPECT_EQ(watcher->tracked().at(4).last_result, "applied");
    EXPECT_EQ(watcher->tracked().at(4).expected("features.rx-lro"), nullptr);
    EXPECT_NE(watcher->tracked().at(4).expected("link.mtu"), nullptr);
    const auto seen = events.size();
    const auto calls = be.calls.size();
    for (int i = 0; i < 3; ++i) {
        watcher->features_notified(4, *be.nic("p4p1")->features);
        watcher->device_changed(4);
        watcher->process();
    }
    EXPECT_EQ(events.size(), seen);
    EXPECT_EQ(be.calls.size(), calls);
    EXPECT_FALSE(watcher->tracked().at(4).enforcement_suspended);
}

TEST_F(WatcherTest, SuspendsEnforcementWhenSomethingKeepsFighting) {
    bind("p4p*", true);
    auto t = std::chrono::steady_clock::now();
    watcher->now = [&] { return t; };
    watcher->apply_all("boot");
    for (std::size_t i = 0; i < Watcher::kMaxEnforcementsPerMinute + 2; ++i) {
        be.nic("p4p1")->values.set(Key::LinkMtu, 1500);
        watcher->device_changed(4);
        watcher->process();
        t += std::chrono::seconds(1);
    }
    EXPECT_TRUE(watcher->tracked().at(4).enforcement_suspended);
    EXPECT_EQ(mtu("p4p1"), 1500U) << "after the limit, nictune stops fighting";
}

TEST_F(WatcherTest, ResyncPicksUpInterfacesItMissed) {
    bind("p5*", false);
    watcher->apply_all("boot");
    plug("p5p9", 40);
    // The RTM_NEWLINK for p5p9 was lost (ENOBUFS).
    watcher->resync();
    EXPECT_EQ(mtu("p5p9"), 9000U);
}

TEST_F(WatcherTest, ResyncHandlesRenamesItMissed) {
    bind("p4p*", false);
    watcher->apply_all("boot");
    EXPECT_EQ(mtu("v0"), 1500U);
    // Both RTM_NEWLINKs of the renames were lost: v0 (unbound, ifindex of
    // the fake) now matches the glob; p4p1 (bound, tuned) has a new name.
    be.nic("v0")->id.name = "p4p7";
    be.nic("p4p1")->id.name = "p4p2";
    watcher->resync();
    EXPECT_EQ(mtu("p4p7"), 9000U) << "renamed into the binding while the queue overflowed";
    EXPECT_EQ(events.back().detail, "applied/rename");
    EXPECT_TRUE(*manager->state().load_interface("p4p2")) << "originals follow the device";
    EXPECT_FALSE(*manager->state().load_interface("p4p1"));
    EXPECT_EQ(watcher->tracked().at(be.nic("p4p2")->id.ifindex).profile, "jumbo");
}

TEST_F(WatcherTest, InterfacesThatAppearTogetherAreTunedInOneTransaction) {
    bind("vf*", false);
    watcher->apply_all("boot");
    for (int i = 0; i < 5; ++i)
        appear(i);
    const auto reads = be.read_calls;
    watcher->process();
    EXPECT_EQ(be.read_calls - reads, 2U) << "one read of the five, one verification re-read";
    std::set<std::string> transactions;
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(mtu("vf" + std::to_string(i)), 9000U);
        transactions.insert(watcher->tracked().at(100 + i).transaction);
        EXPECT_EQ(watcher->tracked().at(100 + i).last_result, "applied");
    }
    EXPECT_EQ(transactions.size(), 1U);
    EXPECT_EQ(events.size(), 5U);
}

// Thousands of VFs may be tracked: what each costs is mostly its baseline
// and binding. Those are shared, not copied: one string per setting path,
// one block for the interfaces that hold the same values, and the binding
// of the configuration itself.
TEST_F(WatcherTest, TrackedInterfacesShareTheirBindingAndBaseline) {
    bind("vf*", false, "[link]\nmtu = 9000\n[rings]\nrx = 2048\n");
    watcher->apply_all("boot");
    appear(0);
    appear(1);
    watcher->process();
    const Tracked& a = watcher->tracked().at(100);
    const Tracked& b = watcher->tracked().at(101);
    ASSERT_EQ(a.last_result, "applied");
    ASSERT_EQ(b.last_result, "applied");
    EXPECT_EQ(a.binding, &watcher->config().bindings.front());
    EXPECT_EQ(b.binding, a.binding);
    ASSERT_EQ(a.baseline.size(), 2U);
    ASSERT_EQ(b.baseline.size(), 2U);
    EXPECT_TRUE(a.baseline.shares(b.baseline));
    for (std::size_t i = 0; i < a.baseline.size(); ++i)
        EXPECT_EQ(a.baseline[i].key, b.baseline[i].key) << *a.baseline[i].key;
    EXPECT_EQ(setting_key("link.mtu"), setting_key(std::string("link.") + "mtu"));
    ASSERT_NE(a.expected("link.mtu"), nullptr);
    EXPECT_EQ(*a.expected("link.mtu"), Scalar{uint64_t{9000}});
    ASSERT_NE(a.expected("rings.rx"), nullptr) << *a.baseline[0].key << ", " << *a.baseline[1].key;
    EXPECT_EQ(*a.expected("rings.rx"), Scalar{uint64_t{2048}});
    EXPECT_EQ(a.expected("rings.tx"), nullptr);
    // The originals restored on one: it holds no baseline, the other keeps its own.
    watcher->note_rollback("vf0");
    EXPECT_TRUE(watcher->tracked().at(100).baseline.empty());
    ASSERT_EQ(b.baseline.size(), 2U);
    EXPECT_EQ(*b.expected("link.mtu"), Scalar{uint64_t{9000}});
    // A reload forgets every binding before the old configuration goes.
    bind("p4p*", false);
    EXPECT_EQ(watcher->tracked().at(100).binding, nullptr);
}

TEST_F(WatcherTest, ABurstLargerThanAReadChunkIsReadAndTunedChunkByChunk) {
    bind("vf*", false);
    watcher->apply_all("boot");
    const int n = static_cast<int>(Watcher::kReadChunk) * 2 + 6;
    for (int i = 0; i < n; ++i)
        appear(i);
    const auto first = be.requests.size();
    watcher->process();
    // Per chunk: one read of its new links, one verification re-read.
    ASSERT_EQ(be.requests.size() - first, 6U);
    for (std::size_t i = first; i < be.requests.size(); ++i) {
        EXPECT_FALSE(be.requests[i].names.empty()) << i;
        EXPECT_LE(be.requests[i].names.size(), Watcher::kReadChunk) << i;
    }
    std::set<std::string> transactions;
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(mtu("vf" + std::to_string(i)), 9000U) << i;
        transactions.insert(watcher->tracked().at(100 + i).transaction);
    }
    EXPECT_EQ(transactions.size(), 3U);
    EXPECT_EQ(events.size(), static_cast<std::size_t>(n));
    EXPECT_FALSE(watcher->pending());
}

TEST_F(WatcherTest, NewLinksAreReadForWhatTheBoundProfilesSetWithTheirDriver) {
    bind("vf*", false, "[link]\nmtu = 9000\n[rings]\nrx = 4096\n");
    watcher->apply_all("boot");
    appear(0);
    const auto first = be.requests.size();
    watcher->process();
    ASSERT_GT(be.requests.size(), first);
    const ReadRequest& r = be.requests[first];
    EXPECT_EQ(r.names, std::vector<std::string>{"vf0"});
    EXPECT_TRUE(r.identity) << "bindings and driver rules need the driver";
    EXPECT_EQ(r.sections, ReadRequest::bit(Section::Link) | ReadRequest::bit(Section::Rings));
    EXPECT_EQ(mtu("vf0"), 9000U);
    EXPECT_EQ(be.nic("vf0")->values.get(Key::RingsRx), 4096U);
}

TEST_F(WatcherTest, NotificationsAboutManyInterfacesAreCheckedWithOneNarrowRead) {
    bind("vf*", false);
    watcher->apply_all("boot");
    for (int i = 0; i < 5; ++i)
        appear(i);
    watcher->process();
    events.clear();
    be.nic("vf3")->values.set(Key::LinkMtu, 1500);
    for (int i = 0; i < 5; ++i)
        watcher->device_changed(100 + i);
    const auto first = be.requests.size();
    watcher->process();
    ASSERT_EQ(be.requests.size() - first, 1U);
    const ReadRequest& r = be.requests.back();
    EXPECT_EQ(r.names.size(), 5U);
    EXPECT_FALSE(r.identity) << "a drift check needs no driver identity";
    EXPECT_EQ(r.sections, ReadRequest::bit(Section::Link)) << "only what the baselines hold";
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].iface, "vf3");
    EXPECT_EQ(events[0].detail, "link.mtu=1500");
}

// What a notification carries is compared as it is: the drift check reads
// nothing. A family the notification did not carry keeps what the last
// check said about it.
TEST_F(WatcherTest, NotifiedStateIsComparedWithoutARead) {
    bind("p4p*", false, "[link]\nmtu = 9000\n[rings]\nrx = 4096\n");
    watcher->apply_all("boot");
    events.clear();
    const auto first = be.requests.size();
    // nictune's own changes, notified: no drift, no read.
    DeviceValues link;
    link.set(Key::LinkMtu, 9000);
    watcher->link_event(4, "p4p1", false, &link);
    DeviceValues rings;
    rings.set(Key::RingsRx, 4096);
    watcher->device_notified(4, Section::Rings, rings);
    watcher->process();
    EXPECT_EQ(be.requests.size(), first);
    EXPECT_TRUE(events.empty());

    // Someone sets the rings back: the notification says so.
    be.nic("p4p1")->values.set(Key::RingsRx, 512);
    rings.set(Key::RingsRx, 512);
    watcher->device_notified(4, Section::Rings, rings);
    watcher->process();
    EXPECT_EQ(be.requests.size(), first) << "the notification said it all";
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].detail, "rings.rx=512");
    EXPECT_EQ(watcher->tracked().at(4).drifted, std::vector<std::string>{"rings.rx"});

    // A later MTU notification (in line) does not clear the rings' drift.
    watcher->link_event(4, "p4p1", false, &link);
    watcher->process();
    EXPECT_EQ(be.requests.size(), first);
    EXPECT_EQ(watcher->tracked().at(4).drifted, std::vector<std::string>{"rings.rx"});

    // Without content (an unknown change) the interface is read.
    watcher->device_changed(4);
    watcher->process();
    EXPECT_EQ(be.requests.size(), first + 1);
    EXPECT_EQ(watcher->tracked().at(4).drifted, std::vector<std::string>{"rings.rx"});
}

TEST_F(WatcherTest, EnforcementPlansFromAFullRead) {
    bind("p4p*", true);
    watcher->apply_all("boot");
    be.nic("p4p1")->values.set(Key::LinkMtu, 1500);
    watcher->device_changed(4);
    const auto first = be.requests.size();
    watcher->process();
    EXPECT_EQ(mtu("p4p1"), 9000U);
    ASSERT_GE(be.requests.size() - first, 2U);
    EXPECT_FALSE(be.requests[first].identity);
    // The re-apply reads everything again, the driver included.
    EXPECT_TRUE(be.requests[first + 1].identity);
    EXPECT_EQ(be.requests[first + 1].sections, ReadRequest::kAllSections);
    EXPECT_EQ(events.back().detail, "applied/drift");
}

TEST_F(WatcherTest, OneBadInterfaceInABurstDoesNotLeaveTheOthersUntuned) {
    bind("vf*", false);
    watcher->apply_all("boot");
    for (int i = 0; i < 4; ++i)
        appear(i);
    // vf2's driver refuses the MTU: the shared transaction rolls back, then
    // each is applied on its own.
    be.fail_set = [](const std::string& name, Section s) {
        return name == "vf2" && s == Section::Link;
    };
    watcher->process();
    for (int i : {0, 1, 3})
        EXPECT_EQ(mtu("vf" + std::to_string(i)), 9000U) << i;
    EXPECT_EQ(mtu("vf2"), 1500U);
    EXPECT_EQ(watcher->tracked().at(102).last_result, "rolled_back");
    EXPECT_EQ(watcher->tracked().at(100).last_result, "applied");
    EXPECT_NE(watcher->tracked().at(100).transaction, watcher->tracked().at(101).transaction);
}

TEST_F(WatcherTest, ALinkThatCameAndWentBeforeProcessIsSkipped) {
    bind("vf*", false);
    watcher->apply_all("boot");
    appear(0);
    watcher->link_event(101, "vf1", false);  // already gone when read
    watcher->process();
    EXPECT_EQ(mtu("vf0"), 9000U);
    EXPECT_FALSE(watcher->tracked().contains(101));
}

TEST_F(WatcherTest, NewLinksThatCannotBeReadYetAreTriedAgain) {
    bind("vf*", false);
    watcher->apply_all("boot");
    appear(0);
    be.fail_reads = 3;  // the named read, vf0's own and the full one
    watcher->process();
    EXPECT_EQ(mtu("vf0"), 1500U);
    EXPECT_TRUE(watcher->pending()) << "the daemon must call process() again";
    watcher->process();
    EXPECT_EQ(mtu("vf0"), 9000U);
    EXPECT_FALSE(watcher->pending());
}

TEST_F(WatcherTest, NewLinksAreReadOneByOneWhenTheBatchReadFails) {
    bind("vf*", false);
    watcher->apply_all("boot");
    for (int i = 0; i < 3; ++i)
        appear(i);
    watcher->link_event(103, "vf3", false);  // already gone: fails the named read
    watcher->process();
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(mtu("vf" + std::to_string(i)), 9000U) << i;
    EXPECT_FALSE(watcher->pending());
}

TEST_F(WatcherTest, AResyncThatCannotReadIsTriedAgain) {
    bind("p5*", false);
    watcher->apply_all("boot");
    plug("p5p9", 40);
    be.fail_reads = 1;
    watcher->resync();
    EXPECT_TRUE(watcher->pending());
    watcher->process();
    EXPECT_EQ(mtu("p5p9"), 9000U);
    EXPECT_FALSE(watcher->pending());
}

TEST_F(WatcherTest, AVanishedInterfaceIsForgotten) {
    bind("p4p*", true);
    watcher->apply_all("boot");
    be.nics.erase(be.nics.begin());
    watcher->device_changed(4);
    watcher->process();  // the re-read fails: no crash, no apply
    watcher->link_event(4, "p4p1", true);
    EXPECT_FALSE(watcher->tracked().contains(4));
}

}  // namespace
}  // namespace nictune::watch

namespace nictune::watch {
namespace {

// ---- renames and alternative names (issue 13)

// nictunectl --direct may be running a transaction on the old name when the
// rename comes: the saved originals move only under the store's locks, and
// until they can, the device finds them by its ifindex.
TEST_F(WatcherTest, ARenameMovesTheSavedOriginalsOnlyUnderTheStoresLock) {
    bind("p4p*", true);
    watcher->apply_all("boot");
    ASSERT_TRUE(*manager->state().load_interface("p4p1"));
    StateStore other(dir_);  // another process
    {
        auto held = other.lock("p4p1");
        ASSERT_TRUE(held);
        be.nic("p4p1")->id.name = "eth9";
        watcher->link_event(4, "eth9", false);
        watcher->process();
        EXPECT_EQ(watcher->tracked().at(4).name, "eth9");
        EXPECT_TRUE(*manager->state().load_interface("p4p1")) << "moved under another's lock";
        EXPECT_FALSE(*manager->state().load_interface("eth9"));
    }
    // Rolled back under its new name, it finds its originals.
    auto r = manager->rollback("eth9");
    EXPECT_EQ(r.result, TxResult::RolledBack) << (r.error ? r.error->str() : "");
    EXPECT_EQ(mtu("eth9"), 1500U);
    EXPECT_FALSE(*manager->state().load_interface("p4p1"));
    EXPECT_FALSE(*manager->state().load_interface("eth9"));
}

// The old record cannot be removed (here: an append-only file): the move
// is undone, so the device keeps one record, under its old name, which
// its ifindex still finds. Root only (FS_IOC_SETFLAGS).
TEST_F(WatcherTest, ARenameThatCannotRemoveTheOldRecordLeavesOneRecord) {
    bind("p4p*", true);
    watcher->apply_all("boot");
    const fs::path old_file = dir_ / "interfaces" / "p4p1.json";
    const int fd = ::open(old_file.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    int flags = 0;
    const bool settable = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
                          (flags |= FS_APPEND_FL, ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0);
    if (!settable) {
        ::close(fd);
        GTEST_SKIP() << "cannot make " << old_file << " append-only here (needs root and ext4 "
                     << "or tmpfs): " << std::strerror(errno);
    }
    be.nic("p4p1")->id.name = "eth9";
    logged.clear();
    watcher->link_event(4, "eth9", false);
    watcher->process();
    std::string log;
    for (const auto& l : logged)
        log += l.fields.interface + ": " + l.message + "\n";
    flags &= ~FS_APPEND_FL;
    ::ioctl(fd, FS_IOC_SETFLAGS, &flags);
    ::close(fd);
    EXPECT_TRUE(*manager->state().load_interface("p4p1"));
    EXPECT_FALSE(*manager->state().load_interface("eth9")) << "two records for one device";
    EXPECT_NE(log.find("cannot move the saved originals from p4p1"), std::string::npos) << log;
}

TEST_F(WatcherTest, ABindingMatchesAnAlternativeName) {
    be.nics[1].id.altnames = {"uplink0", "enp0s1-with-a-long-name"};
    bind("uplink*", false);
    watcher->apply_all("boot");
    EXPECT_EQ(mtu("v0"), 9000U);
    EXPECT_EQ(mtu("p4p1"), 1500U);
    EXPECT_EQ(watcher->tracked().at(be.nics[1].id.ifindex).altnames, be.nics[1].id.altnames);
}

// systemd adds alternative names after the link appears: the binding
// applies when its name comes.
TEST_F(WatcherTest, ABindingAppliesWhenTheAlternativeNameItMatchesIsAdded) {
    bind("uplink0", false);
    watcher->apply_all("boot");
    EXPECT_EQ(mtu("v0"), 1500U);
    be.nics[1].id.altnames = {"uplink0"};
    const std::vector<std::string> alts = {"uplink0"};
    watcher->link_event(be.nics[1].id.ifindex, "v0", false, nullptr, &alts);
    watcher->process();
    EXPECT_EQ(mtu("v0"), 9000U);
    EXPECT_EQ(events.back().detail, "applied/rename");
}

TEST_F(WatcherTest, AppliesToANameThatIsNotUtf8) {
    // The fake holds names as the kernel layer gives them: in text form.
    be.nics[1].id.name = "\\xff\\xfeq";
    bind("\\xff*", false);
    watcher->apply_all("boot");
    EXPECT_EQ(mtu("\\xff\\xfeq"), 9000U);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().iface, "\\xff\\xfeq");
    EXPECT_TRUE(*manager->state().load_interface("\\xff\\xfeq"));
}

}  // namespace
}  // namespace nictune::watch

namespace nictune::watch {
namespace {

// p4p1 with `n` RX and TX queues, masks empty (what the kernel re-creates).
void give_queues(test::FakeBackend& be, std::size_t n) {
    QueueSet q;
    q.rx.assign(n, RxQueue{std::string(), 0});
    q.tx.assign(n, TxQueue{std::string()});
    be.nic("p4p1")->queues = q;
}

TEST_F(WatcherTest, ARingChangeReappliesThePlacementAloneAndIsDriftOfTheRings) {
    give_queues(be, 4);
    bind("p4p*", false, "[rings]\nrx = 4096\n[rps]\ncpus = \"0-1\"\n");
    watcher->apply_all("boot");
    ASSERT_EQ(be.nic("p4p1")->queues->rx[3].rps_cpus, "0-1");
    events.clear();

    // Someone sets the rings; the driver rebuilt its queues meanwhile.
    be.nic("p4p1")->values.set(Key::RingsRx, 512);
    give_queues(be, 4);
    DeviceValues rings;
    rings.set(Key::RingsRx, 512);
    watcher->device_notified(4, Section::Rings, rings);
    watcher->queues_rebuilt(4, "rings changed");
    watcher->process();
    // The masks are back, the rings are reported and left (no enforce).
    for (const auto& q : be.nic("p4p1")->queues->rx)
        EXPECT_EQ(q.rps_cpus, "0-1");
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::RingsRx), 512U);
    ASSERT_EQ(events.size(), 2U);
    EXPECT_EQ(events[0].detail, "rings.rx=512");
    EXPECT_EQ(events[1].detail, "applied/queues");
    EXPECT_EQ(watcher->tracked().at(4).drifted, std::vector<std::string>{"rings.rx"});
    // Its baseline still holds the rings as applied, and every queue.
    EXPECT_EQ(to_string(*watcher->tracked().at(4).expected("rings.rx")), "4096");
    EXPECT_NE(watcher->tracked().at(4).expected("rps.rx-3.cpus"), nullptr);

    // Fewer queues: the ones gone are not drift, and leave the baseline.
    events.clear();
    be.nic("p4p1")->queues->rx.resize(2);
    watcher->device_changed(4);
    watcher->process();
    for (const auto& e : events)
        EXPECT_EQ(e.detail.find("rps."), std::string::npos) << e.detail;
    EXPECT_EQ(watcher->tracked().at(4).expected("rps.rx-3.cpus"), nullptr);
    EXPECT_NE(watcher->tracked().at(4).expected("rps.rx-1.cpus"), nullptr);
}

// Baselines are shared between interfaces: the one whose queues changed
// gets a new one, and the others keep theirs (no change in place).
TEST_F(WatcherTest, ABaselineFollowingOneInterfacesQueuesLeavesTheOthersAlone) {
    give_queues(be, 4);
    plug("p4p2", 5);
    be.nic("p4p2")->queues = be.nic("p4p1")->queues;
    bind("p4p*", false, "[rps]\ncpus = \"0-1\"\n");
    watcher->apply_all("boot");
    const Tracked& one = watcher->tracked().at(4);
    const Tracked& two = watcher->tracked().at(5);
    ASSERT_TRUE(one.baseline.shares(two.baseline));
    ASSERT_NE(two.expected("rps.rx-3.cpus"), nullptr);

    be.nic("p4p1")->queues->rx.resize(2);
    be.nic("p4p1")->queues->tx.resize(2);
    watcher->device_changed(4);
    watcher->process();
    EXPECT_EQ(one.expected("rps.rx-3.cpus"), nullptr);
    EXPECT_NE(one.expected("rps.rx-1.cpus"), nullptr);
    EXPECT_FALSE(one.baseline.shares(two.baseline));
    EXPECT_NE(two.expected("rps.rx-3.cpus"), nullptr) << "p4p2's queues did not change";
    EXPECT_EQ(two.baseline.size(), 4U);  // the rps CPUs of four queues
}

// The pool: equal lists (keys, values and order) are one block; a list
// nobody holds is freed, and its entry swept as entries pile up.
TEST(BaselinePool, EqualListsAreOneBlockAndFreedListsAreSwept) {
    BaselinePool pool;
    const std::string* mtu = setting_key("link.mtu");
    const std::string* rx = setting_key("rings.rx");
    const Baseline::Values ab = {{mtu, Scalar{uint64_t{9000}}}, {rx, Scalar{uint64_t{4096}}}};
    Baseline a = pool.intern(ab);
    Baseline b = pool.intern(ab);
    EXPECT_TRUE(a.shares(b));
    EXPECT_EQ(b.values(), ab);
    EXPECT_FALSE(a.shares(pool.intern({{mtu, Scalar{uint64_t{1500}}}, ab[1]})));
    EXPECT_FALSE(a.shares(pool.intern({ab[1], ab[0]}))) << "another order is another list";
    EXPECT_FALSE(a.shares(pool.intern({{mtu, Scalar{std::string("9000")}}, ab[1]})));
    Baseline none = pool.intern({});
    EXPECT_TRUE(none.empty());
    EXPECT_FALSE(none.shares(Baseline()));
    EXPECT_EQ(none.find("link.mtu"), nullptr);
    ASSERT_NE(a.find("rings.rx"), nullptr);
    EXPECT_EQ(*a.find("rings.rx"), Scalar{uint64_t{4096}});

    // 1,000 lists that no interface keeps: the entries stay few.
    for (uint64_t i = 0; i < 1000; ++i)
        (void)pool.intern({{mtu, Scalar{i}}});
    EXPECT_LT(pool.entries(), 64U);
    // A list still held survives the sweeps and is found again.
    EXPECT_TRUE(pool.intern(ab).shares(a));
}

TEST_F(WatcherTest, AResyncReplacesQueuesALostChannelChangeRebuilt) {
    give_queues(be, 4);
    bind("p4p*", false, "[rps]\ncpus = \"0-1\"\n");
    watcher->apply_all("boot");
    events.clear();
    give_queues(be, 4);  // rebuilt; its CHANNELS_NTF was among the lost ones
    watcher->resync();
    watcher->process();
    for (const auto& q : be.nic("p4p1")->queues->rx)
        EXPECT_EQ(q.rps_cpus, "0-1");
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind + " " + events[0].detail, "applied applied/queues");
}

TEST_F(WatcherTest, ThePlacementTimerReadsAFewInterfacesAndOnlyTheirQueues) {
    auto t = std::chrono::steady_clock::now();
    watcher->now = [&] { return t; };
    for (int i = 0; i < 40; ++i) {
        auto st = test::ixgbe_port("vf" + std::to_string(i));
        st.id.ifindex = 100 + i;
        st.queues = QueueSet{{RxQueue{std::string(), 0}}, {}};
        be.nics.push_back(st);
    }
    bind("vf*", false, "[rps]\ncpus = \"1\"\n");
    watcher->apply_all("boot");
    events.clear();
    EXPECT_EQ(watcher->placement_timeout_ms(), 10000);
    const auto first = be.requests.size();
    watcher->process();
    EXPECT_EQ(be.requests.size(), first) << "not due yet";
    t += std::chrono::seconds(10);
    EXPECT_EQ(watcher->placement_timeout_ms(), 0);
    be.nic("vf3")->queues->rx[0].rps_cpus = "0";
    watcher->process();
    ASSERT_EQ(be.requests.size(), first + 1);
    const ReadRequest& r = be.requests.back();
    ASSERT_EQ(r.names.size(), Watcher::kPlacementChunk);
    EXPECT_EQ(r.names.front(), "vf0");
    EXPECT_EQ(r.sections, kPlacementSections);
    EXPECT_FALSE(r.identity);
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].detail, "rps.rx-0.cpus=0");
    // The next round goes on after the last one read, round robin; a drift
    // already reported is not reported again.
    t += std::chrono::seconds(10);
    watcher->process();
    ASSERT_EQ(be.requests.back().names.size(), Watcher::kPlacementChunk);
    EXPECT_EQ(be.requests.back().names.front(), "vf32");
    EXPECT_EQ(events.size(), 1U);
    // Nothing tracked: the timer still moves on (a due timer would spin
    // the daemon's loop).
    be.nics.clear();
    watcher->apply_all("reload");
    t += std::chrono::seconds(10);
    watcher->process();
    EXPECT_EQ(watcher->placement_timeout_ms(), 10000);
    // A profile that places no queues: no timer at all.
    bind("vf*", false);
    EXPECT_EQ(watcher->placement_timeout_ms(), -1);
}

}  // namespace
}  // namespace nictune::watch
