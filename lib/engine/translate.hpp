// Driver-aware translation: a profile states intent, the plan says how each
// driver expresses it. All rules live in one table (translate.cpp), each with
// the reason the plan and the audit print.
#pragma once

#include <span>
#include <string_view>

#include "model/schema.hpp"

namespace nictune {

enum class RuleAction : uint8_t {
    Rewrite,        // set `to` = `to_value` instead of `key` = `when`
    NeedsExplicit,  // no driver form: satisfied only by an explicit `to` != `to_value`
};

struct DriverRule {
    std::string_view driver;
    Key key;        // the profile key this rule is about
    uint64_t when;  // ...when the profile asks for this value
    RuleAction action;
    Key to;
    uint64_t to_value;
    std::string_view why;
};

std::span<const DriverRule> driver_rules();
// The rule for this driver/key/value, used only when the device does not
// report `key` itself (a driver that grows native support wins).
const DriverRule* find_rule(std::string_view driver, Key key, uint64_t value);

}  // namespace nictune
