// Driver-aware translation: a profile states intent, the plan says how each
// driver expresses it. All rules live in tables here (translate.cpp), each
// with the reason the plan and the audit print and the driver code it comes
// from. What a driver accepts regardless of its state (keys, ranges,
// rounding, resets) is data in the driver facts (profile/facts.hpp); what
// depends on the device's state or on the other requests is here.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string_view>

#include "model/nic_state.hpp"
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

// A key the driver does not keep apart from another one: a request for
// `key` is a request for `to` (i40e: rx-usecs-high is the only interrupt
// rate limit, tx-usecs-high only mirrors it). Applies even though the device
// reports `key`.
struct KeyAlias {
    std::string_view driver;
    Key key;
    Key to;
    std::string_view why;
};
const KeyAlias* find_alias(std::string_view driver, Key key);

// What the plan will leave behind: the value of each device key once the
// profile is applied (its request, else what the device has now) and of
// each feature. Driver checks judge a value against it.
struct Outlook {
    const NicState& state;
    std::function<std::optional<uint64_t>(Key)> value;
    std::function<std::optional<bool>(std::string_view feature)> feature;
};

// A value the driver refuses in a given state or combination, though the
// facts allow it: i40e's rx-usecs while adaptive-rx stays on, ixgbe's
// tx-usecs while RX and TX share vectors.
struct DriverCheck {
    std::string_view driver;
    Key key;
    bool (*refuses)(uint64_t value, const Outlook& after);
    std::string_view why;
};
std::span<const DriverCheck> driver_checks();
// The first check that refuses changing `key` to `value` on `driver`, or nullptr.
const DriverCheck* refusing_check(std::string_view driver, Key key, uint64_t value,
                                  const Outlook& after);

// A change that resets the link only in some cases (ixgbe: an rx-usecs
// change that turns hardware RSC on or off). `resets` gets the value before
// and after.
struct ResetCheck {
    std::string_view driver;
    Key key;
    bool (*resets)(uint64_t from, uint64_t to, const Outlook& after);
    std::string_view why;
};
std::span<const ResetCheck> reset_checks();
const ResetCheck* resetting_check(std::string_view driver, Key key, uint64_t from, uint64_t to,
                                  const Outlook& after);

}  // namespace nictune
