// Plan: what applying a profile would change, step by step, in the order it
// would be applied (the phases of the schema's section table: channels
// first, tuned last), with the current value, the target, the driver
// translation, what the driver accepts and whether it resets the link. A
// plan is pure: it reads nothing and changes nothing.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/resolve.hpp"
#include "engine/setting.hpp"
#include "model/nic_state.hpp"
#include "model/schema.hpp"
#include "profile/facts.hpp"
#include "profile/profile.hpp"

namespace nictune {

enum class StepKind : uint8_t {
    Change,       // differs: will be set
    Unchanged,    // already at the target
    Covered,      // expressed by another step's value (see note)
    Unsupported,  // the device or system does not offer it; reported, not fatal
    Refused,      // outside the device's limits or contradictory: nothing may change
    Blocked,      // a feature the kernel keeps at the other value (see note); not fatal
};
const char* step_kind_name(StepKind k);

// The small members first, packed: 200 bytes instead of 224, and a plan
// of 512 interfaces has 4,608 steps (each also inside its StepResult).
struct PlanStep {
    Phase phase = Phase::Link;
    StepKind kind = StepKind::Change;
    Resolution resolution = Resolution::Native;
    bool resets_link = false;
    int order = 0;          // 1.. among changes, in apply order; 0 otherwise
    SettingId setting;      // what is set (device form)
    std::string requested;  // what the profile said: "coalesce.adaptive_rx = true"
    Scalar current;
    Scalar target;
    std::string note;
    std::size_t feature_index = 0;  // Features: bit in the device's feature set
};

struct InterfacePlan {
    Identity id;
    std::vector<PlanStep> steps;
    uint32_t feature_bits = 0;  // size of the device's feature set
    bool matches = true;        // the profile's [match] fits this NIC
    std::string match_note;
    std::vector<std::string> warnings;  // e.g. a known-bad driver version
};

struct Plan {
    std::string profile;
    std::string profile_file;
    std::vector<InterfacePlan> interfaces;
    std::vector<PlanStep> system;  // sysctls and tuned, once for all interfaces

    // Why nothing may be applied (out of range, contradictions, [match]
    // mismatch without force); empty when the plan may run.
    [[nodiscard]] std::vector<std::string> refusals() const;
    [[nodiscard]] bool has_changes() const;
};

struct PlanOptions {
    bool force = false;  // apply even where [match] does not fit
    // What the drivers accept; a driver without a table there is planned as
    // "what it reports is settable", and the plan says so.
    const FactsBook* facts = &FactsBook::builtin();
};

// The global sysctl behind [rps] flow_cnt (RFS's socket flow table).
inline constexpr std::string_view kRpsSockFlowEntries = "net.core.rps_sock_flow_entries";

// The sysctls a plan for `profile` reads: the profile's own and those the
// driver checks consult (IP forwarding, for LRO).
std::vector<std::string> plan_sysctls(const Profile& profile);

Plan make_plan(const Profile& profile, std::span<const NicState> nics, const SystemState& system,
               const PlanOptions& opts = {});

}  // namespace nictune
