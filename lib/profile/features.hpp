// Feature names as operators write them and as the kernel knows them.
//
// Profiles accept kernel feature names (rx-gro) and ethtool's aliases in
// their short and long forms (gro, generic-receive-offload). An alias stands
// for a pattern over kernel names, expanded against the device's own feature
// list the way ethtool expands it (tso -> tx-tcp-segmentation,
// tx-tcp6-segmentation, ...). Reports always use kernel names.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/nic_state.hpp"

namespace nictune::features {

struct Alias {
    std::string_view short_name;  // "tso"
    std::string_view long_name;   // "tcp-segmentation-offload"
    std::string_view pattern;     // "tx-tcp*-segmentation"
};

std::span<const Alias> aliases();
const Alias* find_alias(std::string_view name);

// Kernel feature names known when this was written (Linux 6.1
// netdev_features_strings), used to validate profiles without a device.
std::span<const std::string_view> known_kernel_names();

// A profile may name it: an alias or a kernel feature name (known list, or
// one of `runtime` names read from the running kernel).
bool is_valid_name(std::string_view name, const FeatureNames* runtime = nullptr);

// Kernel names a requested name stands for on a device with these names:
// an alias expands to every matching name; a kernel name to itself if the
// device has it. Empty when the device has none of them.
std::vector<std::string> expand(std::string_view name, const FeatureNames& device_names);

}  // namespace nictune::features
