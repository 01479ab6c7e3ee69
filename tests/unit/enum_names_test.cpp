// The enum name tables (util/enum_names.hpp): the count the compiler checks
// them against, and the names themselves, which are the words of the JSON
// reports and so part of their format.
#include "util/enum_names.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "engine/audit.hpp"
#include "engine/plan.hpp"
#include "engine/resolve.hpp"
#include "engine/transaction.hpp"
#include "model/nic_state.hpp"
#include "probe/icmp.hpp"
#include "probe/path_mtu.hpp"

namespace nictune {
namespace {

enum class One : uint8_t { A };
enum class Three { A, B, C };
enum class FromOne { A = 1, B };
enum class Gap : uint8_t { A, B, D = 3 };

// The count stops at the first value the enum does not name, so a table
// can be neither shorter nor longer than the enum.
static_assert(enum_count<One> == 1);
static_assert(enum_count<Three> == 3);
static_assert(enum_count<FromOne> == 0);
static_assert(enum_count<Gap> == 2);
static_assert(enum_count<Outcome> == 10);

TEST(EnumNames, NamesEachValueByItsPlace) {
    static constexpr EnumNames<Three> kNames{"a", "b", "c"};
    EXPECT_STREQ(kNames[Three::A], "a");
    EXPECT_STREQ(kNames[Three::C], "c");
    EXPECT_STREQ(kNames[static_cast<Three>(7)], "?");
}

TEST(EnumNames, ReportWordsAreUnchanged) {
    EXPECT_STREQ(severity_name(Severity::Info), "info");
    EXPECT_STREQ(severity_name(Severity::Warn), "warn");
    EXPECT_STREQ(severity_name(Severity::Fail), "fail");

    EXPECT_STREQ(step_kind_name(StepKind::Change), "change");
    EXPECT_STREQ(step_kind_name(StepKind::Unchanged), "unchanged");
    EXPECT_STREQ(step_kind_name(StepKind::Covered), "covered");
    EXPECT_STREQ(step_kind_name(StepKind::Unsupported), "unsupported");
    EXPECT_STREQ(step_kind_name(StepKind::Refused), "refused");
    EXPECT_STREQ(step_kind_name(StepKind::Blocked), "blocked");

    EXPECT_STREQ(resolution_name(Resolution::Native), "native");
    EXPECT_STREQ(resolution_name(Resolution::Translated), "translated");
    EXPECT_STREQ(resolution_name(Resolution::Covered), "covered");
    EXPECT_STREQ(resolution_name(Resolution::Unsupported), "unsupported");
    EXPECT_STREQ(resolution_name(Resolution::OutOfRange), "out_of_range");
    EXPECT_STREQ(resolution_name(Resolution::Conflict), "conflict");
    EXPECT_STREQ(resolution_name(Resolution::Adjusted), "adjusted");
    EXPECT_STREQ(resolution_name(Resolution::NotSettable), "not_settable");
    EXPECT_STREQ(resolution_name(Resolution::DriverRefuses), "driver_refuses");

    EXPECT_STREQ(outcome_name(Outcome::Unchanged), "unchanged");
    EXPECT_STREQ(outcome_name(Outcome::Applied), "applied");
    EXPECT_STREQ(outcome_name(Outcome::Translated), "translated");
    EXPECT_STREQ(outcome_name(Outcome::Adjusted), "adjusted");
    EXPECT_STREQ(outcome_name(Outcome::Unsupported), "unsupported");
    EXPECT_STREQ(outcome_name(Outcome::Failed), "failed");
    EXPECT_STREQ(outcome_name(Outcome::NotReached), "not_reached");
    EXPECT_STREQ(outcome_name(Outcome::RolledBack), "rolled_back");
    EXPECT_STREQ(outcome_name(Outcome::Refused), "refused");
    EXPECT_STREQ(outcome_name(Outcome::Blocked), "blocked");

    EXPECT_STREQ(tx_result_name(TxResult::Applied), "applied");
    EXPECT_STREQ(tx_result_name(TxResult::DryRun), "dry_run");
    EXPECT_STREQ(tx_result_name(TxResult::Refused), "refused");
    EXPECT_STREQ(tx_result_name(TxResult::RolledBack), "rolled_back");
    EXPECT_STREQ(tx_result_name(TxResult::Partial), "partial");
    EXPECT_STREQ(tx_result_name(TxResult::Pending), "pending");

    EXPECT_STREQ(check_outcome_name(CheckOutcome::NotReached), "not_reached");
    EXPECT_STREQ(check_outcome_name(CheckOutcome::Passed), "passed");
    EXPECT_STREQ(check_outcome_name(CheckOutcome::Failed), "failed");
    EXPECT_STREQ(check_outcome_name(CheckOutcome::Pending), "pending");

    EXPECT_STREQ(tuned_source_name(TunedSource::Dbus), "dbus");
    EXPECT_STREQ(tuned_source_name(TunedSource::File), "file");
    EXPECT_STREQ(tuned_source_name(TunedSource::NotInstalled), "not installed");

    EXPECT_STREQ(probe::icmp_socket_name(probe::IcmpSocketKind::Auto), "auto");
    EXPECT_STREQ(probe::icmp_socket_name(probe::IcmpSocketKind::Ping), "ping");
    EXPECT_STREQ(probe::icmp_socket_name(probe::IcmpSocketKind::Raw), "raw");

    EXPECT_STREQ(probe::mtu_source_name(probe::MtuSource::Interface), "interface");
    EXPECT_STREQ(probe::mtu_source_name(probe::MtuSource::Icmp), "icmp");
    EXPECT_STREQ(probe::mtu_source_name(probe::MtuSource::BlackHole), "black_hole");
}

}  // namespace
}  // namespace nictune
