// Plans, apply results and rollbacks, as text and as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/plan.hpp"
#include "engine/transaction.hpp"

namespace nictune::report {

nlohmann::json plan_json(const Plan& p);
std::string plan_text(const Plan& p, bool color);

nlohmann::json apply_json(const ApplyResult& r);
std::string apply_text(const ApplyResult& r, bool color);

nlohmann::json rollback_json(const RollbackResult& r);
std::string rollback_text(const RollbackResult& r, bool color);

nlohmann::json error_json(const Error& e);

}  // namespace nictune::report
