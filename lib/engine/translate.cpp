#include "engine/translate.hpp"

#include <array>

#include "util/find.hpp"

namespace nictune {
namespace {

using K = Key;
using A = RuleAction;

// ixgbe: ixgbe_set_coalesce() treats rx-usecs 1 as "dynamic ITR"; the driver
// declares only ETHTOOL_COALESCE_USECS, so since Linux 5.7 the core rejects
// adaptive-rx/tx (netlink: EINVAL, the ioctl: EOPNOTSUPP). With combined queues TX shares the RX
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

constexpr std::array<KeyAlias, 2> kAliases = {{
    {"i40e", K::CoalTxUsecsHigh, K::CoalRxUsecsHigh,
     "i40e has one interrupt rate limit for RX and TX, set through rx_usecs_high; it refuses any "
     "change of tx_usecs_high, which only reads back rx_usecs_high's value "
     "(drivers/net/ethernet/intel/i40e/i40e_ethtool.c __i40e_set_coalesce)"},
    {"i40e", K::CoalRxFramesIrq, K::CoalTxFramesIrq,
     "i40e has one work limit for RX and TX, set through tx_frames_irq; rx_frames_irq only reads "
     "it back (drivers/net/ethernet/intel/i40e/i40e_ethtool.c __i40e_set_coalesce)"},
}};

bool is_on(const std::optional<uint64_t>& v) {
    return v && *v != 0;
}

// i40e/iavf: "RX interrupt moderation cannot be changed if adaptive-rx is
// enabled" (the adaptive state after the SET, which carries both).
bool changes_while_adaptive_rx(uint64_t value, const Outlook& after) {
    return after.state.values.get(K::CoalRxUsecs) != value && is_on(after.value(K::CoalAdaptiveRx));
}
bool changes_while_adaptive_tx(uint64_t value, const Outlook& after) {
    return after.state.values.get(K::CoalTxUsecs) != value && is_on(after.value(K::CoalAdaptiveTx));
}
// ixgbe/ixgbevf/igb refuse a non-zero tx-usecs while the first vector
// serves RX and TX rings; their GET then leaves tx-usecs 0 (ixgbe's
// ixgbe_get_coalesce returns before filling it). In-tree ixgbe always pairs
// them (ixgbe_alloc_q_vectors gets fewer vectors than rings), igb when it
// pairs queues (IGB_FLAG_QUEUE_PAIRS).
bool tx_usecs_on_shared_vectors(uint64_t value, const Outlook& after) {
    return value != 0 && after.state.values.get(K::CoalTxUsecs) == 0U;
}

constexpr std::string_view kI40eAdaptiveRx =
    "i40e refuses an rx_usecs change while adaptive_rx stays on (\"RX interrupt moderation cannot "
    "be changed if adaptive-rx is enabled\", drivers/net/ethernet/intel/i40e/i40e_ethtool.c "
    "__i40e_set_coalesce): set adaptive_rx = false with it, or leave rx_usecs out";
constexpr std::string_view kI40eAdaptiveTx =
    "i40e refuses a tx_usecs change while adaptive_tx stays on "
    "(drivers/net/ethernet/intel/i40e/i40e_ethtool.c __i40e_set_coalesce): set adaptive_tx = "
    "false with it, or leave tx_usecs out";

constexpr std::array<DriverCheck, 7> kChecks = {{
    {"i40e", K::CoalRxUsecs, changes_while_adaptive_rx, kI40eAdaptiveRx},
    {"i40e", K::CoalTxUsecs, changes_while_adaptive_tx, kI40eAdaptiveTx},
    {"iavf", K::CoalRxUsecs, changes_while_adaptive_rx,
     "iavf refuses an rx_usecs change while adaptive_rx stays on "
     "(drivers/net/ethernet/intel/iavf/iavf_ethtool.c iavf_set_itr_per_queue): set adaptive_rx = "
     "false with it, or leave rx_usecs out"},
    {"iavf", K::CoalTxUsecs, changes_while_adaptive_tx,
     "iavf refuses a tx_usecs change while adaptive_tx stays on "
     "(drivers/net/ethernet/intel/iavf/iavf_ethtool.c iavf_set_itr_per_queue): set adaptive_tx = "
     "false with it, or leave tx_usecs out"},
    {"ixgbe", K::CoalTxUsecs, tx_usecs_on_shared_vectors,
     "ixgbe refuses tx_usecs while RX and TX share interrupt vectors, its default (it reports "
     "tx-usecs 0 then; drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c ixgbe_set_coalesce): "
     "rx_usecs sets the moderation of both"},
    {"ixgbevf", K::CoalTxUsecs, tx_usecs_on_shared_vectors,
     "ixgbevf refuses tx_usecs while RX and TX share interrupt vectors (it reports tx-usecs 0 "
     "then; drivers/net/ethernet/intel/ixgbevf/ethtool.c ixgbevf_set_coalesce): rx_usecs sets "
     "the moderation of both"},
    {"igb", K::CoalTxUsecs, tx_usecs_on_shared_vectors,
     "igb refuses tx_usecs while it pairs RX and TX queues on one vector (it reports tx-usecs 0 "
     "then; drivers/net/ethernet/intel/igb/igb_ethtool.c igb_set_coalesce, "
     "IGB_FLAG_QUEUE_PAIRS): rx_usecs sets the moderation of both"},
}};

// ixgbe_set_coalesce resets the adapter (ixgbe_do_reset) when the interval
// crosses one of two lines. In usecs (the driver keeps usecs << 2 above 1):
// hardware RSC is on at 1 (adaptive) and above 6 (ixgbe_update_rsc:
// IXGBE_MIN_RSC_ITR 24), if the port can do RSC and LRO is on; TXDCTL.WTHRESH
// changes between below 10 (IXGBE_100K_ITR 40) and the rest, 1 included.
bool rsc_on(uint64_t usecs) {
    return usecs == 1 || usecs > 6;
}
bool wthresh_batched(uint64_t usecs) {
    return usecs == 1 || usecs >= 10;
}
bool ixgbe_rx_usecs_resets(uint64_t from, uint64_t to, const Outlook& after) {
    if (wthresh_batched(from) != wthresh_batched(to)) return true;
    return rsc_on(from) != rsc_on(to) && after.feature("rx-lro").value_or(false);
}
// e1000e/igb re-initialise when flow control is (left) autonegotiated.
bool pause_autoneg_after(uint64_t /*from*/, uint64_t /*to*/, const Outlook& after) {
    return is_on(after.value(K::PauseAutoneg));
}

constexpr std::array<ResetCheck, 7> kResetChecks = {{
    {"ixgbe", K::CoalRxUsecs, ixgbe_rx_usecs_resets,
     "ixgbe resets the adapter when rx-usecs turns hardware RSC on or off (1 or above 6 with LRO "
     "on) or crosses 10 us (TXDCTL.WTHRESH; drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c "
     "ixgbe_set_coalesce, ixgbe_update_rsc)"},
    {"e1000e", K::PauseAutoneg, pause_autoneg_after,
     "e1000e restarts the link when pause autoneg is on (drivers/net/ethernet/intel/e1000e/"
     "ethtool.c e1000_set_pauseparam: e1000e_down/e1000e_up)"},
    {"e1000e", K::PauseRx, pause_autoneg_after,
     "e1000e restarts the link when pause autoneg is on (e1000_set_pauseparam)"},
    {"e1000e", K::PauseTx, pause_autoneg_after,
     "e1000e restarts the link when pause autoneg is on (e1000_set_pauseparam)"},
    {"igb", K::PauseAutoneg, pause_autoneg_after,
     "igb restarts the link when pause autoneg is on (drivers/net/ethernet/intel/igb/"
     "igb_ethtool.c igb_set_pauseparam: igb_down/igb_up)"},
    {"igb", K::PauseRx, pause_autoneg_after,
     "igb restarts the link when pause autoneg is on (igb_set_pauseparam)"},
    {"igb", K::PauseTx, pause_autoneg_after,
     "igb restarts the link when pause autoneg is on (igb_set_pauseparam)"},
}};

}  // namespace

const KeyAlias* find_alias(std::string_view driver, Key key) {
    return find_first(kAliases,
                      [&](const KeyAlias& a) { return a.driver == driver && a.key == key; });
}

std::span<const DriverCheck> driver_checks() {
    return kChecks;
}

const DriverCheck* refusing_check(std::string_view driver, Key key, uint64_t value,
                                  const Outlook& after) {
    return find_first(kChecks, [&](const DriverCheck& c) {
        return c.driver == driver && c.key == key && c.refuses(value, after);
    });
}

std::span<const ResetCheck> reset_checks() {
    return kResetChecks;
}

const ResetCheck* resetting_check(std::string_view driver, Key key, uint64_t from, uint64_t to,
                                  const Outlook& after) {
    return find_first(kResetChecks, [&](const ResetCheck& c) {
        return c.driver == driver && c.key == key && c.resets(from, to, after);
    });
}

std::span<const DriverRule> driver_rules() {
    return kRules;
}

const DriverRule* find_rule(std::string_view driver, Key key, uint64_t value) {
    return find_first(kRules, [&](const DriverRule& r) {
        return r.driver == driver && r.key == key && r.when == value;
    });
}

}  // namespace nictune
