// The names of outcomes and results, and transaction ids. The transaction
// itself is in apply.cpp and rollback.cpp, on the steps of tx_steps.hpp.
#include "engine/transaction.hpp"

#include <unistd.h>

#include <atomic>
#include <ctime>

#include "util/enum_names.hpp"

namespace nictune {

const char* outcome_name(Outcome o) {
    static constexpr EnumNames<Outcome> kNames{
        "unchanged", "applied",     "translated",  "adjusted", "unsupported",
        "failed",    "not_reached", "rolled_back", "refused",  "blocked"};
    return kNames[o];
}

const char* tx_result_name(TxResult r) {
    static constexpr EnumNames<TxResult> kNames{"applied",     "dry_run", "refused",
                                                "rolled_back", "partial", "pending"};
    return kNames[r];
}

const char* check_outcome_name(CheckOutcome o) {
    static constexpr EnumNames<CheckOutcome> kNames{"not_reached", "passed", "failed", "pending"};
    return kNames[o];
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
