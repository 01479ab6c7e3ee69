// A setting by its path, the same string in plans, findings, state files and
// JSON: "link.mtu", "coalesce.rx_usecs", "features.rx-gro",
// "sysctl.net.core.rmem_max", "tuned.profile".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/nic_state.hpp"
#include "model/schema.hpp"
#include "model/value.hpp"
#include "util/error.hpp"

namespace nictune {

struct SettingId {
    Section section = Section::Link;
    std::optional<Key> key;  // device keys
    std::string name;        // feature or sysctl name

    [[nodiscard]] std::string path() const;
    static Result<SettingId> parse(std::string_view path);
    static SettingId device(Key k) { return SettingId{key_info(k).section, k, {}}; }
    static SettingId feature(std::string n) {
        return SettingId{Section::Features, std::nullopt, std::move(n)};
    }
    static SettingId sysctl(std::string n) {
        return SettingId{Section::Sysctl, std::nullopt, std::move(n)};
    }
    static SettingId tuned() { return SettingId{Section::Tuned, std::nullopt, "profile"}; }
};

// The value of a setting in freshly read state (monostate when absent):
// device keys and features from `nic`, sysctls and tuned from `sys`.
Scalar value_in(const SettingId& id, const NicState* nic, const SystemState* sys);

// A device key's value from a report scalar (bool, number or enum name).
std::optional<uint64_t> device_value_of(Key k, const Scalar& s);

}  // namespace nictune
