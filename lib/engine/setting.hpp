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
    static SettingId private_flag(std::string n) {
        return SettingId{Section::PrivateFlags, std::nullopt, std::move(n)};
    }
    // "rps.rx-2.cpus", "rps.rx-2.flow_cnt", "xps.tx-0.cpus"
    static SettingId queue(Section s, std::size_t queue, std::string_view what) {
        return SettingId{s, std::nullopt,
                         std::string(s == Section::Rps ? "rx-" : "tx-") + std::to_string(queue) +
                             "." + std::string(what)};
    }
    // [rss]: "rss.indirection", "rss.hash.tcp4"
    static SettingId rss(std::string what) {
        return SettingId{Section::Rss, std::nullopt, std::move(what)};
    }
    // "irq.34.cpus": one queue IRQ; "irq.irqbalance_banned": which of the
    // interface's queue IRQs irqbalance leaves alone.
    static SettingId irq(unsigned n) {
        return SettingId{Section::Irq, std::nullopt, std::to_string(n) + ".cpus"};
    }
    static SettingId irqbalance_banned() {
        return SettingId{Section::Irq, std::nullopt, std::string(kIrqbalanceBanned)};
    }
    static constexpr std::string_view kIrqbalanceBanned = "irqbalance_banned";
    static SettingId tuned() { return SettingId{Section::Tuned, std::nullopt, "profile"}; }
};

// A queue setting's name split: "rx-2.cpus" -> {2, "cpus"} (rps: rx-N.cpus or
// rx-N.flow_cnt, xps: tx-N.cpus); nullopt for anything else.
struct QueueSettingName {
    std::size_t queue = 0;
    std::string_view what;
};
std::optional<QueueSettingName> parse_queue_setting(Section s, std::string_view name);
// "34.cpus" -> 34 (an [irq] setting's name); nullopt for anything else.
std::optional<unsigned> parse_irq_setting(std::string_view name);

// The value of a setting in freshly read state (monostate when absent):
// device keys and features from `nic`, sysctls and tuned from `sys`.
Scalar value_in(const SettingId& id, const NicState* nic, const SystemState* sys);

// A device key's value from a report scalar (bool, number or enum name).
std::optional<uint64_t> device_value_of(Key k, const Scalar& s);

}  // namespace nictune
