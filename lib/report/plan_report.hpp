// Plans, apply results and rollbacks, as JSON and as text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/plan.hpp"
#include "engine/transaction.hpp"

namespace nictune::report {

// Text views render the JSON form, so that a reply from nictuned prints the
// same as a direct run.
// *_json_text: written in one pass (--json output, D-Bus replies); *_json:
// the same document as a tree.
std::string plan_json_text(const Plan& p);
std::string apply_json_text(const ApplyResult& r);
std::string rollback_json_text(const RollbackResult& r);
nlohmann::json plan_json(const Plan& p);
std::string plan_text(const nlohmann::json& plan, bool color);

nlohmann::json apply_json(const ApplyResult& r);
std::string apply_text(const nlohmann::json& result, bool color);
// The same view straight from a result (no JSON round trip: a direct apply
// to hundreds of interfaces).
std::string apply_text(const ApplyResult& result, bool color);

nlohmann::json rollback_json(const RollbackResult& r);
std::string rollback_text(const nlohmann::json& rollback, bool color);
// The same text straight from a result (no JSON round trip: a direct
// rollback of hundreds of interfaces).
std::string rollback_text(const RollbackResult& rollback, bool color);
// The result's "result" member: "nothing_saved", or tx_result_name().
const char* rollback_result_name(const RollbackResult& r);

nlohmann::json error_json(const Error& e);

}  // namespace nictune::report
