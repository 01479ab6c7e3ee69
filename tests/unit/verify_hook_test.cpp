// The step between "verify" and "commit" (ApplyOptions::after_verify) and
// the held transaction (ApplyOptions::hold) on the fake backend: when the
// check runs, what it sees, what its failure undoes, and how a held
// transaction ends (commit, abort, or dropped as by a crash).
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/manager.hpp"
#include "engine/transaction.hpp"
#include "fakes/fake_backend.hpp"
#include "fakes/states.hpp"
#include "profile/loader.hpp"
#include "support/profile_text.hpp"

namespace nictune {
namespace {
using ::nictune::test::profile_of;
namespace fs = std::filesystem;

const char* kJumbo = "[link]\nmtu = 9000\n[rings]\nrx = 4096\n";

std::size_t journals(const fs::path& dir) {
    std::error_code ec;
    std::size_t n = 0;
    for (fs::directory_iterator it(dir / "journal", ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
        ++n;
    return n;
}

class VerifyHook : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-hook-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        be.nics = {test::ixgbe_port("p4p1")};
        initial = be.nics;
    }
    void TearDown() override { fs::remove_all(dir_); }

    Plan plan_of(const std::string& text) {
        auto nics = be.read_interfaces(ReadRequest{{"p4p1"}, false});
        EXPECT_TRUE(nics);
        auto sys = be.read_system(SystemQuery{});
        return make_plan(profile_of("jumbo", text), *nics, *sys);
    }
    uint64_t mtu() { return be.nic("p4p1")->values.get(Key::LinkMtu).value_or(0); }
    uint64_t rings_rx() { return be.nic("p4p1")->values.get(Key::RingsRx).value_or(0); }
    static const StepResult& step(const ApplyResult& r, const std::string& key) {
        for (const auto& s : r.interfaces.at(0).steps)
            if (s.step.setting.path() == key) return s;
        throw std::runtime_error("no step " + key);
    }

    fs::path dir_;
    test::FakeBackend be;
    std::vector<NicState> initial;
};

TEST_F(VerifyHook, TheCheckRunsOnceEverythingIsVerifiedAndBeforeTheCommit) {
    StateStore store(dir_);
    int calls = 0;
    ApplyOptions opts;
    opts.check_name = "peer 10.0.0.2";
    opts.after_verify = [&](const ApplyResult& so_far) -> Result<void> {
        ++calls;
        // The kernel has the new values, and every step is verified...
        EXPECT_EQ(mtu(), 9000U);
        EXPECT_EQ(step(so_far, "link.mtu").outcome, Outcome::Applied);
        EXPECT_EQ(step(so_far, "link.mtu").actual, Scalar{uint64_t{9000}});
        EXPECT_EQ(step(so_far, "rings.rx").outcome, Outcome::Applied);
        // ...nothing is committed: no interface record, the journal on disk,
        // the interface locked against any other transaction.
        auto rec = store.load_interface("p4p1");
        EXPECT_TRUE(rec && !*rec);
        EXPECT_EQ(journals(dir_), 1U);
        auto lock = store.lock("p4p1");
        EXPECT_FALSE(lock);
        if (!lock) {
            EXPECT_EQ(lock.error().code, Errc::Busy);
        }
        return {};
    };
    auto r = apply_plan(be, store, plan_of(kJumbo), opts);
    EXPECT_EQ(calls, 1);
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    ASSERT_TRUE(r.check);
    EXPECT_EQ(r.check->name, "peer 10.0.0.2");
    EXPECT_EQ(r.check->outcome, CheckOutcome::Passed);
    EXPECT_FALSE(r.error);
    auto rec = store.load_interface("p4p1");
    ASSERT_TRUE(rec && *rec);
    EXPECT_EQ((*rec)->status, TxStatus::Applied);
    EXPECT_EQ(journals(dir_), 0U);
    EXPECT_TRUE(store.lock("p4p1"));
}

// A plan the caller keeps (the watcher's) is copied, one it hands over is
// moved into the result: the same result either way, the kept plan whole,
// in a dry run, an apply and a refusal.
TEST_F(VerifyHook, APlanHandedOverGivesTheSameResultAsOneTheCallerKeeps) {
    StateStore store(dir_);
    const auto same_steps = [](const ApplyResult& a, const ApplyResult& b) {
        ASSERT_EQ(a.interfaces.size(), b.interfaces.size());
        for (std::size_t i = 0; i < a.interfaces.size(); ++i) {
            ASSERT_EQ(a.interfaces[i].steps.size(), b.interfaces[i].steps.size());
            for (std::size_t k = 0; k < a.interfaces[i].steps.size(); ++k) {
                const auto& x = a.interfaces[i].steps[k];
                const auto& y = b.interfaces[i].steps[k];
                EXPECT_EQ(x.step.setting.path(), y.step.setting.path());
                EXPECT_EQ(x.step.requested, y.step.requested);
                EXPECT_EQ(x.step.current, y.step.current);
                EXPECT_EQ(x.step.target, y.step.target);
                EXPECT_EQ(x.outcome, y.outcome);
                EXPECT_EQ(x.actual, y.actual);
            }
        }
    };
    const std::pair<const char*, TxResult> cases[] = {{kJumbo, TxResult::DryRun},
                                                      {"[link]\nmtu = 16000\n", TxResult::Refused}};
    for (const auto& [text, want] : cases) {
        SCOPED_TRACE(text);
        ApplyOptions dry;
        dry.dry_run = true;
        const Plan kept = plan_of(text);
        const std::size_t steps = kept.interfaces.at(0).steps.size();
        ASSERT_GT(steps, 0U);
        const auto by_copy = apply_plan(be, store, kept, dry);
        EXPECT_EQ(kept.interfaces.at(0).steps.size(), steps) << "the caller's plan is whole";
        const auto by_move = apply_plan(be, store, plan_of(text), dry);
        EXPECT_EQ(by_copy.result, want);
        EXPECT_EQ(by_move.result, want);
        EXPECT_EQ(by_copy.refusals, by_move.refusals);
        same_steps(by_copy, by_move);
    }
    // Applied from a kept plan, then rolled back to apply a handed-over one.
    const Plan kept = plan_of(kJumbo);
    const auto from_kept = apply_plan(be, store, kept, {});
    ASSERT_EQ(from_kept.result, TxResult::Applied);
    EXPECT_EQ(mtu(), 9000U);
    ASSERT_FALSE(kept.interfaces.at(0).steps.empty());
    be.nics = initial;
    ASSERT_TRUE(store.remove_interface("p4p1"));
    const auto from_moved = apply_plan(be, store, plan_of(kJumbo), {});
    ASSERT_EQ(from_moved.result, TxResult::Applied);
    same_steps(from_kept, from_moved);
}

TEST_F(VerifyHook, AFailedCheckUndoesEverythingAndIsTheResultsError) {
    StateStore store(dir_);
    ApplyOptions opts;
    opts.check_name = "peer 10.0.0.2";
    opts.after_verify = [&](const ApplyResult&) -> Result<void> {
        return fail(Errc::Io, "peer 10.0.0.2",
                    "the path carries 1500-byte packets at most: a switch or the peer is not set "
                    "up for jumbo frames");
    };
    auto r = apply_plan(be, store, plan_of(kJumbo), opts);
    EXPECT_EQ(r.result, TxResult::RolledBack);
    ASSERT_TRUE(r.check);
    EXPECT_EQ(r.check->outcome, CheckOutcome::Failed);
    ASSERT_TRUE(r.check->error);
    EXPECT_NE(r.check->error->str().find("1500-byte packets"), std::string::npos);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->str(), r.check->error->str());
    EXPECT_EQ(step(r, "link.mtu").outcome, Outcome::RolledBack);
    EXPECT_EQ(step(r, "rings.rx").outcome, Outcome::RolledBack);
    // Newest first: rings were set before the MTU, so the MTU goes back first.
    ASSERT_EQ(r.rollback.size(), 2U);
    EXPECT_EQ(r.rollback[0].key, "link.mtu");
    EXPECT_TRUE(r.rollback[0].ok && r.rollback[1].ok);
    EXPECT_EQ(be.nic("p4p1")->values, initial[0].values);
    auto rec = store.load_interface("p4p1");
    EXPECT_TRUE(rec && !*rec) << "nothing is recorded for an undone transaction";
    EXPECT_EQ(journals(dir_), 0U);
}

TEST_F(VerifyHook, AFailedCheckUndoesAlsoWithKeepGoing) {
    StateStore store(dir_);
    ApplyOptions opts;
    opts.keep_going = true;
    opts.after_verify = [](const ApplyResult&) -> Result<void> {
        return fail(Errc::Io, "peer", "no answer");
    };
    auto r = apply_plan(be, store, plan_of(kJumbo), opts);
    EXPECT_EQ(r.result, TxResult::RolledBack);
    EXPECT_EQ(be.nic("p4p1")->values, initial[0].values);
}

TEST_F(VerifyHook, TheCheckIsNotRunAfterAFailedStepNorInADryRunNorOnARefusedPlan) {
    StateStore store(dir_);
    int calls = 0;
    ApplyOptions opts;
    opts.after_verify = [&](const ApplyResult&) -> Result<void> {
        ++calls;
        return {};
    };
    be.fail_call(2, EINVAL, "bad MTU");
    auto r = apply_plan(be, store, plan_of(kJumbo), opts);
    EXPECT_EQ(r.result, TxResult::RolledBack);
    ASSERT_TRUE(r.check);
    EXPECT_EQ(r.check->outcome, CheckOutcome::NotReached);
    EXPECT_EQ(calls, 0);

    opts.dry_run = true;
    r = apply_plan(be, store, plan_of(kJumbo), opts);
    EXPECT_EQ(r.result, TxResult::DryRun);
    opts.dry_run = false;
    r = apply_plan(be, store, plan_of("[link]\nmtu = 16000\n"), opts);
    EXPECT_EQ(r.result, TxResult::Refused);
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(be.nic("p4p1")->values, initial[0].values);
}

TEST_F(VerifyHook, AHeldTransactionKeepsItsLocksAndJournalUntilItIsCommitted) {
    StateStore store(dir_);
    std::unique_ptr<HeldTransaction> held;
    ApplyOptions opts;
    opts.check_name = "peer 10.0.0.2";
    opts.hold = &held;
    auto r = apply_plan(be, store, plan_of(kJumbo), opts);
    ASSERT_EQ(r.result, TxResult::Pending) << (r.error ? r.error->str() : "");
    ASSERT_TRUE(held);
    ASSERT_TRUE(r.check);
    EXPECT_EQ(r.check->outcome, CheckOutcome::Pending);
    EXPECT_EQ(held->result().transaction, r.transaction);
    EXPECT_EQ(held->interfaces(), std::vector<std::string>{"p4p1"});
    EXPECT_EQ(mtu(), 9000U);
    EXPECT_EQ(journals(dir_), 1U);
    EXPECT_FALSE(store.lock("p4p1")) << "a held transaction keeps its interfaces locked";
    auto rec = store.load_interface("p4p1");
    EXPECT_TRUE(rec && !*rec);

    auto done = held->commit();
    EXPECT_TRUE(held->resolved());
    EXPECT_EQ(done.result, TxResult::Applied);
    ASSERT_TRUE(done.check);
    EXPECT_EQ(done.check->outcome, CheckOutcome::Passed);
    EXPECT_EQ(mtu(), 9000U);
    EXPECT_EQ(journals(dir_), 0U);
    EXPECT_TRUE(store.lock("p4p1"));
    rec = store.load_interface("p4p1");
    ASSERT_TRUE(rec && *rec);
    EXPECT_EQ((*rec)->status, TxStatus::Applied);
    EXPECT_EQ((*rec)->transaction, r.transaction);
    // A second verdict changes nothing.
    EXPECT_EQ(held->abort(Error{Errc::Io, 0, "", "late", {}}).result, TxResult::Applied);
    EXPECT_EQ(mtu(), 9000U);
}

TEST_F(VerifyHook, AnAbortedHeldTransactionRestoresTheValuesBeforeItNotTheFirstOriginals) {
    StateStore store(dir_);
    // An earlier transaction set the MTU to 9000 and committed.
    ASSERT_EQ(apply_plan(be, store, plan_of("[link]\nmtu = 9000\n")).result, TxResult::Applied);
    std::unique_ptr<HeldTransaction> held;
    ApplyOptions opts;
    opts.hold = &held;
    auto r = apply_plan(be, store, plan_of("[link]\nmtu = 9014\n[rings]\nrx = 4096\n"), opts);
    ASSERT_EQ(r.result, TxResult::Pending);
    EXPECT_EQ(mtu(), 9014U);
    EXPECT_EQ(rings_rx(), 4096U);

    auto done = held->abort(
        Error{Errc::Io, 0, "peer 10.0.0.2", "no confirmation within 30 s; rolled back", {}});
    EXPECT_EQ(done.result, TxResult::RolledBack);
    ASSERT_TRUE(done.check);
    EXPECT_EQ(done.check->outcome, CheckOutcome::Failed);
    ASSERT_TRUE(done.error);
    EXPECT_NE(done.error->str().find("no confirmation within 30 s"), std::string::npos);
    EXPECT_EQ(step(done, "link.mtu").outcome, Outcome::RolledBack);
    EXPECT_EQ(mtu(), 9000U) << "back to the value before this transaction";
    EXPECT_EQ(rings_rx(), initial[0].values.get(Key::RingsRx).value_or(0));
    EXPECT_EQ(journals(dir_), 0U);
    EXPECT_TRUE(store.lock("p4p1"));
    // The earlier transaction's record is untouched: rollback still finds
    // the first originals.
    auto rb = rollback_interface(be, store, "p4p1");
    EXPECT_EQ(rb.result, TxResult::RolledBack);
    EXPECT_EQ(be.nic("p4p1")->values, initial[0].values);
}

TEST_F(VerifyHook, AHeldTransactionDroppedUnresolvedIsRecoveredLikeACrash) {
    StateStore store(dir_);
    {
        std::unique_ptr<HeldTransaction> held;
        ApplyOptions opts;
        opts.hold = &held;
        ASSERT_EQ(apply_plan(be, store, plan_of(kJumbo), opts).result, TxResult::Pending);
    }
    EXPECT_EQ(mtu(), 9000U);
    EXPECT_EQ(journals(dir_), 1U) << "the journal stays, as a crash leaves it";
    Manager m(be, profile::Store(profile::StoreOptions{}), StateStore(dir_), FactsBook::builtin());
    auto rs = m.recover();
    ASSERT_EQ(rs.size(), 1U);
    EXPECT_EQ(rs[0].result, TxResult::RolledBack);
    EXPECT_EQ(be.nic("p4p1")->values, initial[0].values);
}

TEST_F(VerifyHook, AFailedCheckBeforeHoldingUndoesAndHoldsNothing) {
    StateStore store(dir_);
    std::unique_ptr<HeldTransaction> held;
    ApplyOptions opts;
    opts.hold = &held;
    opts.after_verify = [](const ApplyResult&) -> Result<void> {
        return fail(Errc::Io, "peer", "no answer");
    };
    auto r = apply_plan(be, store, plan_of(kJumbo), opts);
    EXPECT_EQ(r.result, TxResult::RolledBack);
    EXPECT_FALSE(held);
    EXPECT_EQ(be.nic("p4p1")->values, initial[0].values);
}

}  // namespace
}  // namespace nictune
