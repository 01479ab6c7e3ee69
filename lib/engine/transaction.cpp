// The names of outcomes and results, and transaction ids. The transaction
// itself is in apply.cpp and rollback.cpp, on the steps of tx_steps.hpp.
#include "engine/transaction.hpp"

#include <unistd.h>

#include <atomic>
#include <ctime>

namespace nictune {

const char* outcome_name(Outcome o) {
    switch (o) {
        case Outcome::Unchanged:
            return "unchanged";
        case Outcome::Applied:
            return "applied";
        case Outcome::Translated:
            return "translated";
        case Outcome::Adjusted:
            return "adjusted";
        case Outcome::Unsupported:
            return "unsupported";
        case Outcome::Failed:
            return "failed";
        case Outcome::NotReached:
            return "not_reached";
        case Outcome::RolledBack:
            return "rolled_back";
        case Outcome::Refused:
            return "refused";
        case Outcome::Blocked:
            return "blocked";
    }
    return "failed";
}

const char* tx_result_name(TxResult r) {
    switch (r) {
        case TxResult::Applied:
            return "applied";
        case TxResult::DryRun:
            return "dry_run";
        case TxResult::Refused:
            return "refused";
        case TxResult::RolledBack:
            return "rolled_back";
        case TxResult::Partial:
            return "partial";
        case TxResult::Pending:
            return "pending";
    }
    return "partial";
}

const char* check_outcome_name(CheckOutcome o) {
    switch (o) {
        case CheckOutcome::NotReached:
            return "not_reached";
        case CheckOutcome::Passed:
            return "passed";
        case CheckOutcome::Failed:
            return "failed";
        case CheckOutcome::Pending:
            return "pending";
    }
    return "failed";
}

std::vector<std::string> ApplyResult::left() const {
    std::vector<std::string> out;
    for (const auto& r : rollback)
        if (!r.ok)
            out.push_back((r.interface.empty() ? "" : r.interface + ": ") + r.key + " (" +
                          r.message + ")");
    return out;
}

std::string new_transaction_id() {
    static std::atomic<unsigned> counter{0};
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return std::string(buf) + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

}  // namespace nictune
