#include "engine/transaction.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "engine/manager.hpp"
#include "engine/tx_steps.hpp"
#include "fakes/fake_backend.hpp"
#include "fakes/states.hpp"
#include "profile/loader.hpp"
#include "support/profile_text.hpp"
#include "util/strings.hpp"

namespace nictune {
void PrintTo(Outcome o, std::ostream* os);
void PrintTo(Outcome o, std::ostream* os) {
    *os << outcome_name(o);
}
void PrintTo(TxResult r, std::ostream* os);
void PrintTo(TxResult r, std::ostream* os) {
    *os << tx_result_name(r);
}

namespace {
using ::nictune::test::profile_of;
namespace fs = std::filesystem;

// A profile touching every phase of an ixgbe port.
const char* kEverything = R"(
[channels]
combined = 4
[rings]
rx = "max"
[link]
mtu = 9000
[pause]
rx = false
[features]
lro = true
gro = false
[coalesce]
adaptive_rx = true
[sysctl]
"net.core.rmem_max" = 16777216
[tuned]
profile = "latency-performance"
)";

class TransactionTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-tx-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        be = test::FakeBackend{};
        be.nics = {test::ixgbe_port("p4p1"), test::ixgbe_port("p4p2")};
        be.nics[1].id.ifindex = 7;
        be.nics[1].id.mac = "90:e2:ba:00:00:02";
        be.nics[0].values.set(Key::CoalRxUsecs, 0);
        be.system.sysctl = {{"net.core.rmem_max", "212992"}, {"net.core.busy_poll", "0"}};
        be.system.tuned = TunedState{"balanced", TunedSource::Dbus, ""};
        initial_nics = be.nics;
        initial_system = be.system;
    }
    void TearDown() override { fs::remove_all(dir_); }

    Plan plan_for(const Profile& p, const std::vector<std::string>& names) {
        auto nics = be.read_interfaces(ReadRequest{names, false});
        EXPECT_TRUE(nics);
        auto sys = be.read_system(SystemQuery{});
        return make_plan(p, *nics, *sys);
    }
    void expect_back_to_initial() {
        ASSERT_EQ(be.nics.size(), initial_nics.size());
        for (std::size_t i = 0; i < be.nics.size(); ++i) {
            EXPECT_EQ(be.nics[i].values, initial_nics[i].values) << be.nics[i].id.name;
            EXPECT_EQ(be.nics[i].features->active, initial_nics[i].features->active)
                << be.nics[i].id.name;
        }
        EXPECT_EQ(be.system.sysctl[0].value, initial_system.sysctl[0].value);
        EXPECT_EQ(be.system.tuned.active_profile, initial_system.tuned.active_profile);
    }
    const StepResult& step(const ApplyResult& r, const std::string& key) {
        for (const auto& i : r.interfaces)
            for (const auto& s : i.steps)
                if (s.step.setting.path() == key) return s;
        for (const auto& s : r.system)
            if (s.step.setting.path() == key) return s;
        throw std::runtime_error("no step " + key);
    }

    fs::path dir_;
    test::FakeBackend be;
    std::vector<NicState> initial_nics;
    SystemState initial_system;
};

TEST_F(TransactionTest, PlanOrdersChannelsRingsLinkPauseFeaturesCoalesceSysctlTuned) {
    auto plan = plan_for(profile_of("all", kEverything), {"p4p1"});
    std::vector<std::string> order;
    for (const auto& s : plan.interfaces[0].steps)
        if (s.kind == StepKind::Change) order.push_back(s.setting.path());
    for (const auto& s : plan.system)
        if (s.kind == StepKind::Change) order.push_back(s.setting.path());
    EXPECT_EQ(order,
              (std::vector<std::string>{"channels.combined", "rings.rx", "link.mtu", "pause.rx",
                                        "features.rx-lro", "features.rx-gro", "coalesce.rx_usecs",
                                        "sysctl.net.core.rmem_max", "tuned.profile"}));
    // Orders are consecutive and the link-resetting steps say so: on ixgbe
    // (its driver facts) flow control, LRO and an rx-usecs change across
    // 10 us (0 -> 1) reset the adapter too.
    int expect = 1;
    for (const auto& s : plan.interfaces[0].steps) {
        if (s.kind != StepKind::Change) continue;
        EXPECT_EQ(s.order, expect++);
        const auto p = s.setting.path();
        EXPECT_EQ(s.resets_link, p == "channels.combined" || p == "rings.rx" || p == "link.mtu" ||
                                     p == "pause.rx" || p == "features.rx-lro" ||
                                     p == "coalesce.rx_usecs")
            << p;
    }
    // Without driver facts, the schema's defaults: queues and MTU.
    PlanOptions no_facts;
    no_facts.facts = nullptr;
    auto nics = be.read_interfaces(ReadRequest{{"p4p1"}, false});
    auto bare = make_plan(profile_of("all", kEverything), *nics, be.system, no_facts);
    for (const auto& s : bare.interfaces[0].steps) {
        if (s.kind != StepKind::Change) continue;
        const auto p = s.setting.path();
        EXPECT_EQ(s.resets_link, p == "channels.combined" || p == "rings.rx" || p == "link.mtu")
            << p;
    }
}

// The errors of a run by write index: none for most, the one set for a
// failed write, and the first failure by index whatever the order of setting.
TEST(TransactionWriteErrors, KeepsTheErrorsOfTheFailedWritesOnly) {
    tx::WriteErrors errors;
    EXPECT_EQ(errors.count(), 0U);
    EXPECT_EQ(errors.first(), nullptr);
    EXPECT_FALSE(errors[0]);
    errors.set(4096, Error{Errc::Kernel, EINVAL, "p4p2", "refused", {}});
    errors.set(7, Error{Errc::Kernel, EBUSY, "p4p1", "busy", {}});
    EXPECT_EQ(errors.count(), 2U);
    ASSERT_TRUE(errors[7]);
    EXPECT_EQ(errors[7]->sys_errno, EBUSY);
    ASSERT_TRUE(errors[4096]);
    EXPECT_EQ(errors[4096]->context, "p4p2");
    EXPECT_FALSE(errors[8]);
    ASSERT_NE(errors.first(), nullptr);
    EXPECT_EQ(errors.first()->context, "p4p1");
}

// The order of the writes comes from the schema's phase column: forwards to
// apply, backwards to undo, and stable within a phase (each interface keeps
// its own order, and a phase of many interfaces stays one batch).
TEST(TransactionOrder, UndoIsTheApplyOrderBackwardsAndBothAreStable) {
    std::vector<std::pair<Section, int>> items;
    for (const auto& s : sections())
        if (s.device || s.id == Section::Sysctl || s.id == Section::Tuned)
            for (int iface = 0; iface < 2; ++iface)
                items.emplace_back(s.id, iface);
    const auto section_of = [](const std::pair<Section, int>& x) { return x.first; };
    const auto names = [](const std::vector<std::pair<Section, int>>& v) {
        std::vector<std::string> out;
        for (const auto& [s, iface] : v)
            out.push_back(std::string(section_info(s).name) + "/" + std::to_string(iface));
        return out;
    };
    const std::vector<std::string> apply = {
        "channels/0", "channels/1", "private_flags/0", "private_flags/1", "rings/0",
        "rings/1",    "link/0",     "link/1",          "pause/0",         "pause/1",
        "features/0", "features/1", "coalesce/0",      "coalesce/1",      "rss/0",
        "rss/1",      "irq/0",      "irq/1",           "rps/0",           "rps/1",
        "xps/0",      "xps/1",      "sysctl/0",        "sysctl/1",        "tuned/0",
        "tuned/1"};
    auto forwards = items;
    tx::order_by_phase(forwards, section_of, tx::Direction::Apply);
    EXPECT_EQ(names(forwards), apply);
    // Backwards by phase; within a phase the same order as before.
    std::vector<std::string> undo;
    for (std::size_t k = apply.size(); k >= 2; k -= 2) {
        undo.push_back(apply[k - 2]);
        undo.push_back(apply[k - 1]);
    }
    auto backwards = items;
    tx::order_by_phase(backwards, section_of, tx::Direction::Undo);
    EXPECT_EQ(names(backwards), undo);
}

// A floor keeps what is above it (the host's larger buffer), raises what is
// below, number by number, and is unsupported where there is nothing to
// compare; the rollback puts back what was there.
TEST_F(TransactionTest, ASysctlFloorRaisesWhatIsBelowAndKeepsWhatIsAbove) {
    be.system.sysctl = {{"net.core.rmem_max", "33554432"},
                        {"net.core.wmem_max", "212992"},
                        {"net.ipv4.tcp_rmem", "4096\t131072\t6291456"},
                        {"net.ipv4.tcp_congestion_control", "cubic"}};
    initial_system = be.system;
    auto p = profile_of("floor", R"(
[sysctl]
"net.core.rmem_max" = { at_least = 16777216 }
"net.core.wmem_max" = { at_least = 16777216 }
"net.ipv4.tcp_rmem" = { at_least = [4096, 87380, 16777216] }
"net.ipv4.tcp_congestion_control" = { at_least = 1 }
)");
    auto plan = plan_for(p, {"p4p1"});
    std::map<std::string, const PlanStep*> by;
    for (const auto& s : plan.system)
        by[s.setting.path()] = &s;
    ASSERT_EQ(by.size(), 4U);
    EXPECT_EQ(by["sysctl.net.core.rmem_max"]->kind, StepKind::Unchanged);
    EXPECT_EQ(by["sysctl.net.core.rmem_max"]->requested, "sysctl.net.core.rmem_max >= 16777216");
    EXPECT_EQ(by["sysctl.net.core.wmem_max"]->kind, StepKind::Change);
    EXPECT_EQ(by["sysctl.net.core.wmem_max"]->target, Scalar{std::string("16777216")});
    EXPECT_EQ(by["sysctl.net.ipv4.tcp_rmem"]->kind, StepKind::Change);
    EXPECT_EQ(by["sysctl.net.ipv4.tcp_rmem"]->target, Scalar{std::string("4096 131072 16777216")});
    EXPECT_EQ(by["sysctl.net.ipv4.tcp_congestion_control"]->kind, StepKind::Unsupported);
    EXPECT_NE(by["sysctl.net.ipv4.tcp_congestion_control"]->note.find("compares numbers"),
              std::string::npos);

    StateStore store(dir_);
    auto r = apply_plan(be, store, plan, {});
    EXPECT_EQ(r.result, TxResult::Applied);
    std::map<std::string, std::string> now;
    for (const auto& s : be.system.sysctl)
        now[s.name] = *s.value;
    EXPECT_EQ(now["net.core.rmem_max"], "33554432");
    EXPECT_EQ(now["net.core.wmem_max"], "16777216");
    EXPECT_EQ(now["net.ipv4.tcp_rmem"], "4096 131072 16777216");
    ASSERT_EQ(rollback_interface(be, store, "p4p1").result, TxResult::RolledBack);
    for (std::size_t i = 0; i < be.system.sysctl.size(); ++i)
        EXPECT_EQ(normalize_sysctl_value(*be.system.sysctl[i].value),
                  normalize_sysctl_value(*initial_system.sysctl[i].value))
            << be.system.sysctl[i].name;
}

TEST_F(TransactionTest, RollbackSetsInTheReverseOfTheApplyOrder) {
    StateStore store(dir_);
    ASSERT_EQ(apply_plan(be, store, plan_for(profile_of("all", kEverything), {"p4p1"})).result,
              TxResult::Applied);
    std::vector<std::string> applied;
    for (const auto& c : be.calls)
        applied.push_back(c.what);
    EXPECT_EQ(applied,
              (std::vector<std::string>{
                  "set_device channels p4p1", "set_device rings p4p1", "set_device link p4p1",
                  "set_device pause p4p1", "set_features p4p1", "set_device coalesce p4p1",
                  "set_sysctl net.core.rmem_max", "set_tuned latency-performance"}));
    be.calls.clear();
    ASSERT_EQ(rollback_interface(be, store, "p4p1").result, TxResult::RolledBack);
    std::vector<std::string> undone;
    for (const auto& c : be.calls)
        undone.push_back(c.what);
    EXPECT_EQ(undone,
              (std::vector<std::string>{"set_tuned balanced", "set_sysctl net.core.rmem_max",
                                        "set_device coalesce p4p1", "set_features p4p1",
                                        "set_device pause p4p1", "set_device link p4p1",
                                        "set_device rings p4p1", "set_device channels p4p1"}));
    expect_back_to_initial();
}

TEST_F(TransactionTest, PlanTranslatesAdaptiveOnIxgbeAndSaysSo) {
    auto plan = plan_for(profile_of("a", "[coalesce]\nadaptive_rx = true\n"), {"p4p1"});
    ASSERT_EQ(plan.interfaces[0].steps.size(), 1U);
    const auto& s = plan.interfaces[0].steps[0];
    EXPECT_EQ(s.setting.path(), "coalesce.rx_usecs");
    EXPECT_EQ(s.requested, "coalesce.adaptive_rx = true");
    EXPECT_EQ(s.resolution, Resolution::Translated);
    EXPECT_EQ(s.target, Scalar{uint64_t{1}});
    EXPECT_NE(s.note.find("rx-usecs 1 is ixgbe's adaptive"), std::string::npos);
}

TEST_F(TransactionTest, AppliesOnlyWhatDiffersOneMessagePerSection) {
    auto p =
        profile_of("p", "[link]\nmtu = 1500\ntxqueuelen = 2000\n[rings]\nrx = 4096\ntx = 4096\n");
    StateStore store(dir_);
    auto r = apply_plan(be, store, plan_for(p, {"p4p1"}), {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    std::vector<std::string> calls;
    for (const auto& c : be.calls)
        calls.push_back(c.what);
    EXPECT_EQ(calls, (std::vector<std::string>{"set_device rings p4p1", "set_device link p4p1"}));
    EXPECT_EQ(step(r, "link.mtu").outcome, Outcome::Unchanged);
    EXPECT_EQ(step(r, "link.txqueuelen").outcome, Outcome::Applied);
    EXPECT_EQ(step(r, "rings.tx").outcome, Outcome::Applied);
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::RingsRx), 4096U);
}

// With the kernel's change notifications, the changes they report are
// verified without reading the interfaces again; a family they did not
// report is read, and a value the driver ignored is caught either way.
TEST_F(TransactionTest, VerifiesFromChangeNotificationsAndReadsOnlyWhatWasNotNotified) {
    be.notifies = true;
    StateStore store(dir_);
    auto p = profile_of("p", "[link]\nmtu = 9000\n[rings]\nrx = 4096\ntx = 4096\n");
    auto plan = plan_for(p, {"p4p1", "p4p2"});
    std::size_t reads = be.read_calls;
    auto r = apply_plan(be, store, plan, {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    EXPECT_EQ(be.read_calls, reads) << "every change was notified: nothing read";
    EXPECT_EQ(be.observed_calls, 1U);
    EXPECT_EQ(step(r, "link.mtu").actual, Scalar{uint64_t{9000}});
    EXPECT_EQ(step(r, "rings.rx").outcome, Outcome::Applied);
    ASSERT_EQ(rollback_interfaces(be, store, {"p4p1", "p4p2"}).size(), 2U);
    expect_back_to_initial();

    // rings.tx changes (the family is notified) but rx is ignored: the
    // notified state says so, still without a read.
    be.ignore(Key::RingsRx);
    plan = plan_for(p, {"p4p1"});
    reads = be.read_calls;
    r = apply_plan(be, store, plan, {});
    EXPECT_EQ(r.result, TxResult::RolledBack);
    EXPECT_EQ(step(r, "rings.rx").outcome, Outcome::Failed);
    EXPECT_EQ(be.read_calls, reads);

    // The MTU ignored: the link family is never notified, so p4p1 is read.
    be = test::FakeBackend{};
    be.nics = initial_nics;
    be.system = initial_system;
    be.notifies = true;
    be.ignore(Key::LinkMtu);
    plan = plan_for(profile_of("m", "[link]\nmtu = 9000\n"), {"p4p1"});
    reads = be.read_calls;
    r = apply_plan(be, store, plan, {});
    EXPECT_EQ(r.result, TxResult::RolledBack);
    EXPECT_EQ(step(r, "link.mtu").outcome, Outcome::Failed);
    // One read to verify the apply, one to verify its undo (which, the MTU
    // being ignored, changed nothing either): p4p1's link alone.
    ASSERT_EQ(be.read_calls, reads + 2);
    for (std::size_t i = reads; i < be.read_calls; ++i) {
        EXPECT_EQ(be.requests[i].names, std::vector<std::string>{"p4p1"});
        EXPECT_EQ(be.requests[i].sections, ReadRequest::bit(Section::Link));
    }
}

TEST_F(TransactionTest, SavesOriginalsAndVerifiesEveryStep) {
    StateStore store(dir_);
    auto r = apply_plan(be, store, plan_for(profile_of("all", kEverything), {"p4p1"}), {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    EXPECT_EQ(step(r, "coalesce.rx_usecs").outcome, Outcome::Translated);
    EXPECT_EQ(step(r, "link.mtu").outcome, Outcome::Applied);
    EXPECT_EQ(step(r, "link.mtu").actual, Scalar{uint64_t{9000}});
    EXPECT_EQ(step(r, "tuned.profile").outcome, Outcome::Applied);
    auto rec = store.load_interface("p4p1");
    ASSERT_TRUE(rec && *rec);
    EXPECT_EQ((*rec)->status, TxStatus::Applied);
    EXPECT_EQ((*rec)->profile, "all");
    ASSERT_NE((*rec)->original("link.mtu"), nullptr);
    EXPECT_EQ((*rec)->original("link.mtu")->value, Scalar{uint64_t{1500}});
    EXPECT_EQ((*rec)->original("coalesce.rx_usecs")->value, Scalar{uint64_t{0}});
    EXPECT_EQ((*rec)->original("features.rx-gro")->value, Scalar{true});
    auto sys = store.load_system();
    ASSERT_TRUE(sys);
    ASSERT_NE(sys->find("sysctl.net.core.rmem_max"), nullptr);
    EXPECT_EQ(sys->find("sysctl.net.core.rmem_max")->original, Scalar{std::string("212992")});
    EXPECT_EQ(sys->find("tuned.profile")->original, Scalar{std::string("balanced")});
}

// A failure at any step position rolls back everything applied before it.
TEST_F(TransactionTest, RollsBackAfterAFailureAtEveryStepPosition) {
    const auto p = profile_of("all", kEverything);
    // Count the SET calls of a successful run.
    int total = 0;
    {
        test::FakeBackend probe = be;
        StateStore store(dir_ / "probe");
        auto r =
            apply_plan(probe, store,
                       make_plan(p, *probe.read_interfaces(ReadRequest{{"p4p1", "p4p2"}, false}),
                                 *probe.read_system(SystemQuery{})));
        ASSERT_EQ(r.result, TxResult::Applied);
        total = static_cast<int>(probe.calls.size());
    }
    ASSERT_EQ(total, 13)
        << "6 + 5 messages for the ports (p4p2 is already adaptive), a sysctl, tuned";
    TearDown();
    for (int k = 1; k <= total; ++k) {
        SCOPED_TRACE("failing SET #" + std::to_string(k));
        SetUp();
        be.fail_call(k, EINVAL, "value out of range");
        StateStore store(dir_);
        auto r = apply_plan(be, store, plan_for(p, {"p4p1", "p4p2"}), {});
        EXPECT_EQ(r.result, TxResult::RolledBack);
        ASSERT_TRUE(r.error);
        EXPECT_EQ(r.error->sys_errno, EINVAL);
        EXPECT_EQ(r.error->kernel_message, "value out of range");
        // Every SET that succeeded was undone exactly once, the failed one
        // never: 2 * attempted - 1 calls.
        EXPECT_EQ(be.calls.size() % 2, 1U) << "every applied message is undone once";
        EXPECT_GE(be.calls.size(), static_cast<std::size_t>(2 * k - 1));
        expect_back_to_initial();
        EXPECT_TRUE(r.left().empty());
        // Every step before the failure was applied and then undone.
        int undone = 0;
        for (const auto& i : r.interfaces)
            for (const auto& s : i.steps)
                undone += s.outcome == Outcome::RolledBack;
        for (const auto& s : r.system)
            undone += s.outcome == Outcome::RolledBack;
        EXPECT_GE(undone, k - 1);
        auto rec = store.load_interface("p4p1");
        ASSERT_TRUE(rec);
        EXPECT_FALSE(*rec) << "a rolled-back first apply leaves no record";
        TearDown();
    }
    SetUp();
}

// A SET whose answer was lost (a window that timed out) may have been
// carried out: when the transaction fails, it is undone with the rest.
TEST_F(TransactionTest, AWriteWithoutAnAnswerFailsAndIsUndone) {
    be.lose_answer(2);
    StateStore store(dir_);
    auto r = apply_plan(be, store, plan_for(profile_of("all", kEverything), {"p4p1"}), {});
    EXPECT_EQ(r.result, TxResult::RolledBack);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, Errc::Io) << r.error->str();
    // The lost one was carried out: only its undo puts it back.
    std::size_t undo_of_second = 0;
    for (std::size_t i = 2; i < be.calls.size(); ++i)
        undo_of_second += be.calls[i].what == be.calls[1].what;
    EXPECT_EQ(undo_of_second, 1U) << "the write without an answer is undone once";
    expect_back_to_initial();
    EXPECT_TRUE(r.left().empty());
}

TEST_F(TransactionTest, KeepGoingAppliesTheRestAndReportsPartial) {
    be.fail_call(2, EINVAL, "nope");
    StateStore store(dir_);
    ApplyOptions o;
    o.keep_going = true;
    auto r = apply_plan(be, store, plan_for(profile_of("all", kEverything), {"p4p1"}), o);
    EXPECT_EQ(r.result, TxResult::Partial);
    EXPECT_EQ(step(r, "rings.rx").outcome, Outcome::Failed);
    ASSERT_TRUE(step(r, "rings.rx").error);
    EXPECT_EQ(step(r, "rings.rx").error->interface, "p4p1");
    EXPECT_EQ(step(r, "rings.rx").error->setting, "rings.rx");
    EXPECT_EQ(step(r, "link.mtu").outcome, Outcome::Applied);
    EXPECT_TRUE(r.rollback.empty());
}

// A covered step ends as its own interface's covering value reads back:
// p4p1's rx-usecs write fails (adaptive not reached there), p4p2 already
// has rx-usecs 1 (adaptive). The apply releases the plan's interfaces
// before verifying; each covered step still reads its own interface.
TEST_F(TransactionTest, ACoveredStepEndsAsItsOwnInterfacesCoveringValue) {
    be.fail_set = [](const std::string& name, Section s) {
        return name == "p4p1" && s == Section::Coalesce;
    };
    StateStore store(dir_);
    ApplyOptions o;
    o.keep_going = true;
    auto plan = plan_for(profile_of("a", "[coalesce]\nadaptive_rx = true\nrx_usecs = 1\n"),
                         {"p4p1", "p4p2"});
    auto r = apply_plan(be, store, std::move(plan), o);
    EXPECT_EQ(r.result, TxResult::Partial);
    ASSERT_EQ(r.interfaces.size(), 2U);
    std::map<std::string, Outcome> covered;
    for (const auto& i : r.interfaces)
        for (const auto& s : i.steps)
            if (s.step.kind == StepKind::Covered) covered[i.name] = s.outcome;
    EXPECT_EQ(covered, (std::map<std::string, Outcome>{{"p4p1", Outcome::Failed},
                                                       {"p4p2", Outcome::Translated}}));
}

// Issue 16 §5: the step that failed names its interface and setting as
// fields (the JSON error's "interface" and "setting"), whichever write it is.
TEST_F(TransactionTest, AFailedWriteNamesItsInterfaceAndSettingAsFields) {
    const auto p = profile_of("all", kEverything);
    for (int k = 1; k <= 8; ++k) {
        SCOPED_TRACE("failing SET #" + std::to_string(k));
        TearDown();
        SetUp();
        be.fail_call(k, EINVAL, "value out of range");
        StateStore store(dir_);
        auto r = apply_plan(be, store, plan_for(p, {"p4p1"}), {});
        ASSERT_TRUE(r.error);
        const std::string setting = r.error->setting;
        ASSERT_FALSE(setting.empty()) << r.error->str();
        const StepResult& failed = step(r, setting);
        EXPECT_EQ(failed.outcome, Outcome::Failed);
        ASSERT_TRUE(failed.error);
        EXPECT_EQ(failed.error->setting, setting);
        const bool system = setting.starts_with("sysctl.") || setting.starts_with("tuned.");
        EXPECT_EQ(r.error->interface, system ? "" : "p4p1") << setting;
    }
}

TEST_F(TransactionTest, AcceptsAValueTheDriverAdjusts) {
    be.adjust(Key::RingsRx, [](uint64_t v) { return (v + 511) / 512 * 512; });
    StateStore store(dir_);
    auto r = apply_plan(be, store, plan_for(profile_of("p", "[rings]\nrx = 1000\n"), {"p4p1"}), {});
    EXPECT_EQ(r.result, TxResult::Applied);
    EXPECT_EQ(step(r, "rings.rx").outcome, Outcome::Adjusted);
    EXPECT_EQ(step(r, "rings.rx").actual, Scalar{uint64_t{1024}});
}

TEST_F(TransactionTest, AValueThatDoesNotTakeEffectFailsAndRollsBack) {
    be.ignore(Key::CoalRxUsecs);
    StateStore store(dir_);
    auto r = apply_plan(
        be, store,
        plan_for(profile_of("p", "[link]\nmtu = 9000\n[coalesce]\nrx_usecs = 50\n"), {"p4p1"}), {});
    EXPECT_EQ(r.result, TxResult::RolledBack);
    EXPECT_EQ(step(r, "coalesce.rx_usecs").outcome, Outcome::Failed);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->interface, "p4p1");
    EXPECT_EQ(r.error->setting, "coalesce.rx_usecs");
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::LinkMtu), 1500U);
}

TEST_F(TransactionTest, ARefusedPlanChangesNothing) {
    StateStore store(dir_);
    auto r = apply_plan(
        be, store, plan_for(profile_of("p", "[link]\nmtu = 9800\n[rings]\nrx = 512\n"), {"p4p1"}),
        {});
    EXPECT_EQ(r.result, TxResult::Refused);
    ASSERT_EQ(r.refusals.size(), 1U);
    EXPECT_EQ(r.refusals[0], "p4p1: link.mtu = 9800: the device accepts MTU 68..9710");
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->interface, "p4p1");
    EXPECT_EQ(r.error->setting, "link.mtu");
    EXPECT_TRUE(be.calls.empty());
    EXPECT_FALSE(fs::exists(dir_ / "interfaces" / "p4p1.json"));
}

TEST_F(TransactionTest, AProfileForAnotherDriverIsRefusedUnlessForced) {
    auto p = profile_of("x710", "[match]\ndrivers = [\"i40e\"]\n[link]\nmtu = 9000\n");
    auto nics = *be.read_interfaces(ReadRequest{{"p4p1"}, false});
    auto refused = make_plan(p, nics, be.system);
    ASSERT_EQ(refused.refusals().size(), 1U);
    EXPECT_NE(refused.refusals()[0].find("written for drivers i40e"), std::string::npos)
        << refused.refusals()[0];
    PlanOptions force;
    force.force = true;
    EXPECT_TRUE(make_plan(p, nics, be.system, force).refusals().empty());
}

TEST_F(TransactionTest, RollbackRestoresTheFirstOriginalsAcrossApplies) {
    StateStore store(dir_);
    ASSERT_EQ(
        apply_plan(be, store, plan_for(profile_of("a", "[link]\nmtu = 9000\n"), {"p4p1"})).result,
        TxResult::Applied);
    ASSERT_EQ(
        apply_plan(be, store,
                   plan_for(profile_of("b", "[link]\nmtu = 9014\n[rings]\nrx = 4096\n"), {"p4p1"}))
            .result,
        TxResult::Applied);
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::LinkMtu), 9014U);
    auto rb = rollback_interface(be, store, "p4p1");
    EXPECT_EQ(rb.result, TxResult::RolledBack) << (rb.error ? rb.error->str() : "");
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::LinkMtu), 1500U)
        << "the operator's value, not profile a's";
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::RingsRx), 512U);
    EXPECT_FALSE(*store.load_interface("p4p1"));
    EXPECT_TRUE(rollback_interface(be, store, "p4p1").nothing_saved);
}

// The process dies after some of the SETs (the hook throws: nothing of
// apply_plan's clean-up that a crash would skip may matter). What it changed
// is in its journal, and recovery restores it, on both interfaces.
TEST_F(TransactionTest, RecoveryRestoresWhatATransactionThatDiedHadChanged) {
    const std::string text = "[link]\nmtu = 9000\n[rings]\nrx = 4096\n";
    {
        StateStore store(dir_);
        // An earlier transaction on p4p1 ended: its record is on file.
        ASSERT_EQ(apply_plan(be, store, plan_for(profile_of("a", "[link]\nmtu = 9014\n"), {"p4p1"}))
                      .result,
                  TxResult::Applied);
        ApplyOptions o;
        o.before_change = [](int change) {
            if (change == 4) throw std::runtime_error("killed");
        };
        EXPECT_THROW(
            (void)apply_plan(be, store, plan_for(profile_of("b", text), {"p4p1", "p4p2"}), o),
            std::runtime_error);
    }
    ASSERT_EQ(be.nic("p4p1")->values.get(Key::RingsRx), 4096U) << "changes 1-3 were made";
    ASSERT_EQ(be.nic("p4p2")->values.get(Key::RingsRx), 4096U);
    Manager m(be, profile::Store(profile::StoreOptions()), StateStore(dir_), FactsBook::builtin());
    const auto out = m.recover();
    ASSERT_EQ(out.size(), 2U);
    for (const auto& r : out)
        EXPECT_EQ(r.result, TxResult::RolledBack)
            << r.interface << ": " << (r.error ? r.error->str() : "");
    expect_back_to_initial();
    EXPECT_TRUE(fs::is_empty(dir_ / "journal"));
}

TEST_F(TransactionTest, SystemSettingsReturnWhenTheLastInterfaceRollsBack) {
    StateStore store(dir_);
    auto p = profile_of("s", "[link]\nmtu = 9000\n[sysctl]\n\"net.core.rmem_max\" = 16777216\n");
    ASSERT_EQ(apply_plan(be, store, plan_for(p, {"p4p1"})).result, TxResult::Applied);
    ASSERT_EQ(apply_plan(be, store, plan_for(p, {"p4p2"})).result, TxResult::Applied);
    ASSERT_EQ(rollback_interface(be, store, "p4p1").result, TxResult::RolledBack);
    EXPECT_EQ(be.system.sysctl[0].value, "16777216") << "p4p2's profile still needs it";
    ASSERT_EQ(rollback_interface(be, store, "p4p2").result, TxResult::RolledBack);
    EXPECT_EQ(be.system.sysctl[0].value, "212992");
}

TEST_F(TransactionTest, RollingBackSeveralInterfacesReadsAndVerifiesOnceForAll) {
    StateStore store(dir_);
    auto p = profile_of("s",
                        "[link]\nmtu = 9000\n[rings]\nrx = 4096\n[sysctl]\n"
                        "\"net.core.rmem_max\" = 16777216\n");
    ASSERT_EQ(apply_plan(be, store, plan_for(p, {"p4p1", "p4p2"})).result, TxResult::Applied);
    const auto reads = be.read_calls;
    const auto sets = be.calls.size();
    auto rs = rollback_interfaces(be, store, {"p4p1", "p4p2"});
    ASSERT_EQ(rs.size(), 2U);
    for (const auto& r : rs) {
        EXPECT_EQ(r.result, TxResult::RolledBack) << r.interface;
        EXPECT_EQ(r.profile, "s");
        EXPECT_FALSE(r.error) << r.error->str();
    }
    EXPECT_EQ(rs[0].interface, "p4p1");
    EXPECT_EQ(rs[1].interface, "p4p2");
    // One read of both, one verification read; the shared sysctl went back
    // once, reported by the interface that released it last.
    EXPECT_EQ(be.read_calls - reads, 2U);
    EXPECT_EQ(be.calls.size() - sets, 5U) << "sysctl, then rings and link of each";
    EXPECT_EQ(be.calls[sets].what, "set_sysctl net.core.rmem_max");
    EXPECT_TRUE(
        std::any_of(rs[1].restored.begin(), rs[1].restored.end(),
                    [](const RestoreResult& x) { return x.key == "sysctl.net.core.rmem_max"; }));
    expect_back_to_initial();
    EXPECT_FALSE(*store.load_interface("p4p1"));
    EXPECT_FALSE(*store.load_interface("p4p2"));
    EXPECT_TRUE(store.load_system()->entries.empty());
}

// Issue 16: rolling back MTUs reads the link attributes only: no ethtool
// family, no driver identity (GDRVINFO, sysfs), before or after the SETs.
TEST_F(TransactionTest, RollingBackLinkSettingsReadsNoEthtoolFamilyNorIdentity) {
    StateStore store(dir_);
    auto p = profile_of("m", "[link]\nmtu = 9000\n");
    ASSERT_EQ(apply_plan(be, store, plan_for(p, {"p4p1", "p4p2"})).result, TxResult::Applied);
    const auto first = be.requests.size();
    auto rs = rollback_interfaces(be, store, {"p4p1", "p4p2"});
    ASSERT_EQ(rs.size(), 2U);
    for (const auto& r : rs)
        EXPECT_EQ(r.result, TxResult::RolledBack) << r.interface;
    ASSERT_EQ(be.requests.size() - first, 2U) << "find the devices, verify";
    for (std::size_t i = first; i < be.requests.size(); ++i) {
        EXPECT_EQ(be.requests[i].sections, ReadRequest::bit(Section::Link)) << i;
        EXPECT_FALSE(be.requests[i].identity) << i;
    }
    expect_back_to_initial();
    EXPECT_FALSE(*store.load_interface("p4p1"));
    EXPECT_FALSE(*store.load_interface("p4p2"));
}

// Saved features are written by their bit index: the devices that have
// them are read again for the features family alone, and only they.
TEST_F(TransactionTest, RollingBackFeaturesReadsTheFeaturesOfThoseDevicesOnly) {
    StateStore store(dir_);
    ASSERT_EQ(
        apply_plan(be, store, plan_for(profile_of("f", "[features]\ngro = false\n"), {"p4p1"}))
            .result,
        TxResult::Applied);
    ASSERT_EQ(
        apply_plan(be, store, plan_for(profile_of("m", "[link]\nmtu = 9000\n"), {"p4p2"})).result,
        TxResult::Applied);
    const auto first = be.requests.size();
    auto rs = rollback_interfaces(be, store, {"p4p1", "p4p2"});
    ASSERT_EQ(rs.size(), 2U);
    for (const auto& r : rs) {
        EXPECT_EQ(r.result, TxResult::RolledBack) << r.interface;
        for (const auto& x : r.restored)
            EXPECT_TRUE(x.ok) << r.interface << " " << x.key << ": " << x.message;
    }
    std::vector<ReadRequest> feature_reads;
    for (std::size_t i = first; i < be.requests.size(); ++i)
        if (be.requests[i].wants(Section::Features)) feature_reads.push_back(be.requests[i]);
    ASSERT_EQ(feature_reads.size(), 2U) << "the feature bits of p4p1, its verification";
    EXPECT_EQ(feature_reads[0].names, std::vector<std::string>{"p4p1"});
    EXPECT_EQ(feature_reads[0].sections, ReadRequest::bit(Section::Features));
    EXPECT_FALSE(feature_reads[0].identity);
    expect_back_to_initial();
}

// The features read failing keeps the originals saved, saying why.
TEST_F(TransactionTest, RollingBackFeaturesWhoseReadFailsKeepsThem) {
    StateStore store(dir_);
    ASSERT_EQ(apply_plan(be, store,
                         plan_for(profile_of("f", "[link]\nmtu = 9000\n[features]\ngro = false\n"),
                                  {"p4p1"}))
                  .result,
              TxResult::Applied);
    // The first read (find the devices) passes; the features read fails
    // (read_present tries the dump, then the interface alone).
    be.fail_reads = 2;
    be.fail_reads_after = be.read_calls + 1;
    auto r = rollback_interface(be, store, "p4p1");
    EXPECT_EQ(r.result, TxResult::Partial);
    bool said = false;
    for (const auto& x : r.restored)
        if (x.key == "features.rx-gro") {
            EXPECT_FALSE(x.ok);
            said = x.message.find("cannot read its features") != std::string::npos;
        }
    EXPECT_TRUE(said);
    ASSERT_TRUE(*store.load_interface("p4p1")) << "the originals stay saved";
}

TEST_F(TransactionTest, ABatchRollbackAnswersForEachNameOnItsOwn) {
    StateStore store(dir_);
    ASSERT_EQ(
        apply_plan(be, store, plan_for(profile_of("a", "[link]\nmtu = 9000\n"), {"p4p1"})).result,
        TxResult::Applied);
    // p4p2 has nothing saved, p9p9 does not exist, p4p1 is named twice.
    auto rs = rollback_interfaces(be, store, {"p9p9", "p4p2", "p4p1", "p4p1"});
    ASSERT_EQ(rs.size(), 4U);
    EXPECT_EQ(rs[0].result, TxResult::Refused);
    ASSERT_TRUE(rs[0].error);
    EXPECT_EQ(rs[0].error->code, Errc::NoSuchInterface);
    EXPECT_EQ(rs[0].error->interface, "p9p9");
    EXPECT_FALSE(fs::exists(dir_ / "locks" / "p9p9.lock")) << "no lock file for a made-up name";
    EXPECT_TRUE(rs[1].nothing_saved);
    EXPECT_EQ(rs[2].result, TxResult::RolledBack);
    EXPECT_TRUE(rs[3].nothing_saved) << "the first p4p1 did the work";
    expect_back_to_initial();
}

TEST_F(TransactionTest, ABatchRollbackKeepsTheRecordOfTheInterfaceThatCouldNotBeRestored) {
    StateStore store(dir_);
    auto p = profile_of("a", "[link]\nmtu = 9000\n");
    ASSERT_EQ(apply_plan(be, store, plan_for(p, {"p4p1", "p4p2"})).result, TxResult::Applied);
    be.fail_set = [](const std::string& name, Section) { return name == "p4p2"; };
    auto rs = rollback_interfaces(be, store, {"p4p1", "p4p2"});
    EXPECT_EQ(rs[0].result, TxResult::RolledBack);
    EXPECT_EQ(rs[1].result, TxResult::Partial);
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::LinkMtu), 1500U);
    EXPECT_FALSE(*store.load_interface("p4p1"));
    auto kept = store.load_interface("p4p2");
    ASSERT_TRUE(kept && *kept);
    EXPECT_EQ((*kept)->status, TxStatus::Failed);
    EXPECT_NE((*kept)->original("link.mtu"), nullptr) << "the originals stay for a later try";
}

// A re-read that fails is not a vanished interface: the step fails with
// the read's own error, and a rollback keeps the originals it could not
// verify.
TEST_F(TransactionTest, AVerificationReadThatFailsIsReportedAsSuchNotAsAVanishedInterface) {
    StateStore store(dir_);
    auto plan = plan_for(profile_of("a", "[link]\nmtu = 9000\n"), {"p4p1"});
    be.fail_reads = 2;  // the verification read and its one-by-one retry
    auto r = apply_plan(be, store, plan);
    EXPECT_EQ(r.result, TxResult::RolledBack);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, Errc::Busy) << r.error->str();
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::LinkMtu), 1500U);
}

TEST_F(TransactionTest, ARollbackThatCannotReadBackKeepsTheOriginals) {
    StateStore store(dir_);
    ASSERT_EQ(
        apply_plan(be, store, plan_for(profile_of("a", "[link]\nmtu = 9000\n"), {"p4p1"})).result,
        TxResult::Applied);
    be.fail_reads_after = be.read_calls + 1;  // the rollback's first read works
    be.fail_reads = 2;
    auto rb = rollback_interface(be, store, "p4p1");
    EXPECT_EQ(rb.result, TxResult::Partial);
    ASSERT_FALSE(rb.restored.empty());
    EXPECT_FALSE(rb.restored[0].ok);
    EXPECT_NE(rb.restored[0].message.find("cannot read it back"), std::string::npos)
        << rb.restored[0].message;
    auto kept = store.load_interface("p4p1");
    ASSERT_TRUE(kept && *kept) << "the originals of an unverified restore must stay";
    EXPECT_EQ((*kept)->status, TxStatus::Failed);
}

TEST_F(TransactionTest, AnInterfaceVanishingMidApplyEndsCleanly) {
    be.vanish_at_call(2, "p4p1");
    StateStore store(dir_);
    auto r = apply_plan(be, store, plan_for(profile_of("all", kEverything), {"p4p1"}), {});
    EXPECT_EQ(r.result, TxResult::RolledBack);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, Errc::NoSuchInterface);
    EXPECT_EQ(r.error->context.substr(0, 4), "p4p1");
    EXPECT_EQ(r.error->interface, "p4p1");
    EXPECT_FALSE(r.error->setting.empty()) << r.error->str();
}

// Every SET succeeded; the device went before the read-back. The step that
// cannot be verified fails, and the error says which interface and setting.
TEST_F(TransactionTest, AnInterfaceVanishingBeforeTheReadBackNamesItsSetting) {
    StateStore store(dir_);
    const auto plan = plan_for(profile_of("m", "[link]\nmtu = 9000\n"), {"p4p1", "p4p2"});
    be.vanish_after_set(2, "p4p1");
    auto r = apply_plan(be, store, plan, {});
    ASSERT_GE(be.calls.size(), 2U) << "both MTUs were written before the device went";
    EXPECT_NE(r.result, TxResult::Applied);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, Errc::NoSuchInterface) << r.error->str();
    EXPECT_EQ(r.error->interface, "p4p1") << r.error->str();
    EXPECT_EQ(r.error->setting, "link.mtu") << r.error->str();
    EXPECT_NE(r.error->str().find("vanished"), std::string::npos) << r.error->str();
    EXPECT_EQ(step(r, "link.mtu").outcome, Outcome::Failed);
}

TEST_F(TransactionTest, MissingTunedIsUnsupportedNotFatal) {
    be.system.tuned = TunedState{std::nullopt, TunedSource::NotInstalled, ""};
    StateStore store(dir_);
    auto r = apply_plan(
        be, store,
        plan_for(profile_of("t", "[link]\nmtu = 9000\n[tuned]\nprofile = \"x\"\n"), {"p4p1"}));
    EXPECT_EQ(r.result, TxResult::Applied);
    EXPECT_EQ(step(r, "tuned.profile").outcome, Outcome::Unsupported);
}

TEST_F(TransactionTest, ACorruptStateFileStopsBeforeAnyChange) {
    fs::create_directories(dir_ / "interfaces");
    std::ofstream(dir_ / "interfaces" / "p4p1.json") << "{\"version\": 1, \"name\": \"p4";
    StateStore store(dir_);
    auto r = apply_plan(be, store, plan_for(profile_of("p", "[link]\nmtu = 9000\n"), {"p4p1"}));
    EXPECT_EQ(r.result, TxResult::Refused);
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->str().find((dir_ / "interfaces" / "p4p1.json").string()), std::string::npos)
        << r.error->str();
    EXPECT_TRUE(be.calls.empty());
}

TEST_F(TransactionTest, AnUnwritableStateDirectoryStopsBeforeAnyChange) {
    // A regular file where the state directory should be: every save fails.
    fs::path blocked = dir_ / "blocked";
    std::ofstream(blocked) << "not a directory";
    StateStore store(blocked);
    auto r = apply_plan(be, store, plan_for(profile_of("p", "[link]\nmtu = 9000\n"), {"p4p1"}));
    EXPECT_EQ(r.result, TxResult::Refused);
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->message.find("nothing was changed"), std::string::npos) << r.error->str();
    EXPECT_TRUE(be.calls.empty());
}

}  // namespace
}  // namespace nictune

namespace nictune {
namespace {

// ---- names (issue 13)

// `rollback p4p1` where p4p1 is an alternative name: the kernel resolves
// it, and so does the rollback, to the record of the device's own name
// (where apply, which reads the device, saved it).
TEST_F(TransactionTest, AnAlternativeNameFindsTheDevicesRecord) {
    be.nics[1].id.altnames = {"uplink0", "enp3s0f1-a-long-alternative-name"};
    initial_nics = be.nics;
    StateStore store(dir_);
    auto p = profile_of("a", "[link]\nmtu = 9000\n");
    auto r = apply_plan(be, store, plan_for(p, {"uplink0"}));
    ASSERT_EQ(r.result, TxResult::Applied);
    ASSERT_EQ(r.interfaces[0].name, "p4p2");
    EXPECT_TRUE(*store.load_interface("p4p2"));
    for (const std::string alt : {"uplink0", "enp3s0f1-a-long-alternative-name"}) {
        SCOPED_TRACE(alt);
        ASSERT_EQ(apply_plan(be, store, plan_for(p, {alt})).result, TxResult::Applied);
        auto rb = rollback_interface(be, store, alt);
        EXPECT_EQ(rb.result, TxResult::RolledBack) << (rb.error ? rb.error->str() : "");
        EXPECT_EQ(rb.interface, "p4p2");
        expect_back_to_initial();
        EXPECT_FALSE(*store.load_interface("p4p2"));
    }
    // Named by both at once: one rollback.
    ASSERT_EQ(apply_plan(be, store, plan_for(p, {"p4p2"})).result, TxResult::Applied);
    auto rs = rollback_interfaces(be, store, {"uplink0", "p4p2"});
    EXPECT_EQ(rs[0].result, TxResult::RolledBack);
    EXPECT_TRUE(rs[1].nothing_saved);
    expect_back_to_initial();
}

// Renamed while nobody followed it: a rollback under the new name finds
// the originals saved under the old one, also after another apply under
// the new name (whose own "originals" are the first apply's values).
TEST_F(TransactionTest, ADeviceRenamedBetweenTransactionsKeepsItsOriginals) {
    StateStore store(dir_);
    auto p = profile_of("s", "[link]\nmtu = 9000\n[sysctl]\n\"net.core.rmem_max\" = 16777216\n");
    ASSERT_EQ(apply_plan(be, store, plan_for(p, {"p4p1"})).result, TxResult::Applied);
    be.nic("p4p1")->id.name = "lan0";
    auto r = apply_plan(
        be, store, plan_for(profile_of("b", "[link]\nmtu = 9014\ntxqueuelen = 5000\n"), {"lan0"}));
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    auto rb = rollback_interface(be, store, "lan0");
    EXPECT_EQ(rb.result, TxResult::RolledBack) << (rb.error ? rb.error->str() : "");
    EXPECT_FALSE(*store.load_interface("p4p1"));
    EXPECT_FALSE(*store.load_interface("lan0"));
    EXPECT_TRUE(store.load_system()->entries.empty()) << "p4p1's sysctl went back with it";
    be.nic("lan0")->id.name = "p4p1";
    expect_back_to_initial();
}

// The earlier name's record is taken under its lock: another process's
// transaction on it makes the rollback wait its turn (Busy), changing nothing.
TEST_F(TransactionTest, ARenamedDevicesEarlierRecordIsTakenOnlyUnderItsLock) {
    StateStore store(dir_);
    ASSERT_EQ(
        apply_plan(be, store, plan_for(profile_of("a", "[link]\nmtu = 9000\n"), {"p4p1"})).result,
        TxResult::Applied);
    be.nic("p4p1")->id.name = "lan0";
    StateStore other(dir_);
    {
        auto held = other.lock("p4p1");
        ASSERT_TRUE(held);
        auto rb = rollback_interface(be, store, "lan0");
        EXPECT_EQ(rb.result, TxResult::Refused);
        ASSERT_TRUE(rb.error);
        EXPECT_EQ(rb.error->code, Errc::Busy);
        EXPECT_NE(rb.error->message.find("lan0's earlier name"), std::string::npos)
            << rb.error->str();
        EXPECT_EQ(be.nic("lan0")->values.get(Key::LinkMtu), 9000U);
        EXPECT_TRUE(*store.load_interface("p4p1"));
    }
    EXPECT_EQ(rollback_interface(be, store, "lan0").result, TxResult::RolledBack);
    EXPECT_EQ(be.nic("lan0")->values.get(Key::LinkMtu), 1500U);
}

// ---- state files that cannot be written (issue 13, section 4)

// A failed step, everything undone, and then system.json cannot be put
// back: the failure is reported and the journal kept, so that the next
// transaction, a rollback or nictuned's start completes the bookkeeping.
TEST_F(TransactionTest, AnUndoneTransactionThatCannotRestoreSystemJsonSaysSoAndKeepsItsJournal) {
    StateStore store(dir_);
    auto p = profile_of("s", "[link]\nmtu = 9000\n[sysctl]\n\"net.core.rmem_max\" = 16777216\n");
    auto plan = plan_for(p, {"p4p1"});
    be.fail_call(2, EINVAL, "sysctl refused");  // link.mtu (1) goes through, the sysctl fails
    ApplyOptions opts;
    opts.before_change = [&](int change) {
        if (change != 2) return;
        // system.json (written before the first change) cannot be replaced now.
        fs::remove(dir_ / "system.json");
        fs::create_directories(dir_ / "system.json" / "x");
    };
    auto r = apply_plan(be, store, plan, opts);
    EXPECT_EQ(r.result, TxResult::RolledBack);
    EXPECT_EQ(be.nic("p4p1")->values.get(Key::LinkMtu), 1500U) << "the settings are back";
    ASSERT_EQ(r.interfaces.size(), 1U);
    const auto& w = r.interfaces[0].warnings;
    EXPECT_TRUE(std::any_of(w.begin(), w.end(),
                            [](const std::string& x) {
                                return x.find("state directory is not") != std::string::npos &&
                                       x.find("system.json") != std::string::npos;
                            }))
        << "warnings: " << (w.empty() ? "none" : w.front());
    std::size_t journals = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_ / "journal"))
        ++journals;
    EXPECT_EQ(journals, 1U) << "the journal is the only record of what system.json should say";
}

// A rollback that could not restore everything keeps the record (status
// failed); when even that cannot be written, the result says so.
TEST_F(TransactionTest, ARollbackThatCannotSaveWhatIsLeftSaysSo) {
    StateStore store(dir_);
    ASSERT_EQ(
        apply_plan(be, store, plan_for(profile_of("a", "[link]\nmtu = 9000\n"), {"p4p1"})).result,
        TxResult::Applied);
    const fs::path file = dir_ / "interfaces" / "p4p1.json";
    be.fail_set = [&](const std::string&, Section) {
        // The restore fails, and the record cannot be replaced either.
        fs::remove(file);
        fs::create_directories(file / "x");
        return true;
    };
    auto rb = rollback_interface(be, store, "p4p1");
    EXPECT_EQ(rb.result, TxResult::Partial);
    ASSERT_TRUE(rb.error) << "the record of what is left could not be saved, and nobody was told";
    EXPECT_EQ(rb.error->context, file.string()) << rb.error->str();
}

}  // namespace
}  // namespace nictune
