// Builders for NicState values in unit tests: an ixgbe port, an i40e port,
// a veth, written the way the kernel would report them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/nic_state.hpp"

namespace nictune::test {

std::shared_ptr<const FeatureNames> feature_names();

// A FeatureSet over feature_names() with the given active and fixed names.
FeatureSet make_features(const std::vector<std::string>& active,
                         const std::vector<std::string>& fixed);

// 82599 on ixgbe: rx_usecs/tx_usecs only (no adaptive), rings 512/4096,
// channels combined 8/63, MTU 1500 (68..9710).
NicState ixgbe_port(const std::string& name = "p4p1",
                    const std::string& version = "5.15.0-91-generic");
// X710 on i40e: adaptive-rx/tx native, rx_usecs_high, rings, channels.
NicState i40e_port(const std::string& name = "p5p1");
// veth: no coalesce, no rings; channels rx/tx; MTU 68..65535.
NicState veth(const std::string& name = "v0");
// 82574L on e1000e as qemu shows it: rx_usecs 3 (dynamic conservative) only,
// rings 256/4096, no channels, pause, tx_push reported (RINGS_GET always
// sends it), LRO fixed off.
NicState e1000e_port(const std::string& name = "eth0");
// netdevsim: every coalescing value reported, rings up to 4096 with
// tx_push, combined channels, pause.
NicState netdevsim_port(const std::string& name = "eni1np1");

}  // namespace nictune::test
