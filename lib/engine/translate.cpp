#include "engine/translate.hpp"

#include <array>

namespace nictune {
namespace {

using K = Key;
using A = RuleAction;

// ixgbe: ixgbe_set_coalesce() treats rx-usecs 1 as "dynamic ITR"; the driver
// declares only ETHTOOL_COALESCE_USECS, so since Linux 5.7 the core rejects
// adaptive-rx/tx with EOPNOTSUPP. With combined queues TX shares the RX
// vector and tx-usecs is rejected, so adaptive TX also means rx-usecs 1.
// e1000e: e1000_set_coalesce() maps rx-usecs 1 to dynamic InterruptThrottleRate
// (3 conservative, 4 simplified); one throttle covers RX and TX.
// igb: rx-usecs 1..3 select the dynamic modes; one ITR per combined vector.
// ixgbevf: same convention as ixgbe (rx-usecs 1 = adaptive).
constexpr std::array<DriverRule, 16> kRules = {{
    {"ixgbe", K::CoalAdaptiveRx, 1, A::Rewrite, K::CoalRxUsecs, 1,
     "ixgbe has no adaptive-rx switch (the kernel rejects it); rx-usecs 1 is ixgbe's adaptive "
     "interrupt moderation"},
    {"ixgbe", K::CoalAdaptiveTx, 1, A::Rewrite, K::CoalRxUsecs, 1,
     "ixgbe has no adaptive-tx switch; TX shares the combined vector's moderation, adaptive with "
     "rx-usecs 1"},
    {"ixgbe", K::CoalAdaptiveRx, 0, A::NeedsExplicit, K::CoalRxUsecs, 1,
     "ixgbe has no adaptive-rx switch; turning adaptive moderation off means a fixed rx_usecs (0 "
     "or 2..1022)"},
    {"ixgbe", K::CoalAdaptiveTx, 0, A::NeedsExplicit, K::CoalRxUsecs, 1,
     "ixgbe has no adaptive-tx switch; turning adaptive moderation off means a fixed rx_usecs (0 "
     "or 2..1022)"},
    {"ixgbevf", K::CoalAdaptiveRx, 1, A::Rewrite, K::CoalRxUsecs, 1,
     "ixgbevf has no adaptive-rx switch; rx-usecs 1 is its adaptive interrupt moderation"},
    {"ixgbevf", K::CoalAdaptiveTx, 1, A::Rewrite, K::CoalRxUsecs, 1,
     "ixgbevf has no adaptive-tx switch; TX shares the vector's moderation, adaptive with rx-usecs "
     "1"},
    {"ixgbevf", K::CoalAdaptiveRx, 0, A::NeedsExplicit, K::CoalRxUsecs, 1,
     "ixgbevf has no adaptive-rx switch; turning adaptive moderation off means a fixed rx_usecs"},
    {"ixgbevf", K::CoalAdaptiveTx, 0, A::NeedsExplicit, K::CoalRxUsecs, 1,
     "ixgbevf has no adaptive-tx switch; turning adaptive moderation off means a fixed rx_usecs"},
    {"e1000e", K::CoalAdaptiveRx, 1, A::Rewrite, K::CoalRxUsecs, 1,
     "e1000e has no adaptive-rx switch; rx-usecs 1 selects its dynamic interrupt throttle rate"},
    {"e1000e", K::CoalAdaptiveTx, 1, A::Rewrite, K::CoalRxUsecs, 1,
     "e1000e has no adaptive-tx switch; one dynamic throttle (rx-usecs 1) covers RX and TX"},
    {"e1000e", K::CoalAdaptiveRx, 0, A::NeedsExplicit, K::CoalRxUsecs, 1,
     "e1000e has no adaptive-rx switch; turning it off means a fixed rx_usecs (0, or 10..10000)"},
    {"e1000e", K::CoalAdaptiveTx, 0, A::NeedsExplicit, K::CoalRxUsecs, 1,
     "e1000e has no adaptive-tx switch; turning it off means a fixed rx_usecs (0, or 10..10000)"},
    {"igb", K::CoalAdaptiveRx, 1, A::Rewrite, K::CoalRxUsecs, 1,
     "igb has no adaptive-rx switch; rx-usecs 1 selects its dynamic interrupt moderation"},
    {"igb", K::CoalAdaptiveTx, 1, A::Rewrite, K::CoalRxUsecs, 1,
     "igb has no adaptive-tx switch; one dynamic moderation (rx-usecs 1) covers the combined "
     "vector"},
    {"igb", K::CoalAdaptiveRx, 0, A::NeedsExplicit, K::CoalRxUsecs, 1,
     "igb has no adaptive-rx switch; turning it off means a fixed rx_usecs (0, or 10..10000)"},
    {"igb", K::CoalAdaptiveTx, 0, A::NeedsExplicit, K::CoalRxUsecs, 1,
     "igb has no adaptive-tx switch; turning it off means a fixed rx_usecs (0, or 10..10000)"},
}};

}  // namespace

std::span<const DriverRule> driver_rules() {
    return kRules;
}

const DriverRule* find_rule(std::string_view driver, Key key, uint64_t value) {
    for (const auto& r : kRules)
        if (r.driver == driver && r.key == key && r.when == value) return &r;
    return nullptr;
}

}  // namespace nictune
