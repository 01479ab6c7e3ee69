// The shipped knowledge file of driver facts (profiles/facts/driver-facts.toml):
// known-bad versions with the reason and the fix, max MTUs, PCI ids. It is
// compiled into the binaries so that an uninstalled build knows the same as
// an installed one; /etc/nictune/driver-facts.toml may add to it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profile/profile.hpp"
#include "util/error.hpp"

namespace nictune {

struct BadVersion {
    std::string version;
    std::string reason;  // one line, with its source
    std::string fix;
};

// What one of the driver's own statistics (`ethtool -S` name) means to the
// health checks (engine/health.cpp), with where that comes from.
struct CounterFact {
    std::string name;  // a glob for per-queue counters: "rx_queue_*_drops"
    std::string kind;  // rx_no_buffer, rx_dropped, crc, pause_rx, pause_tx, tx_timeout, alloc_fail
    std::string meaning;
    std::string source;
};
// The kinds a CounterFact may have.
bool valid_counter_kind(std::string_view kind);

struct DriverFacts {
    std::string driver;
    std::string description;
    std::optional<uint32_t> max_mtu;
    std::optional<std::string> recommended_version;
    std::vector<std::string> pci_ids;
    std::vector<BadVersion> bad_versions;
    std::string coalesce_note;  // what rx_usecs values mean on this driver
    // rx-usecs values with a special meaning on drivers without an adaptive
    // switch (0 = off, 1 = adaptive on ixgbe; 3 = dynamic conservative on e1000e).
    std::vector<std::pair<uint64_t, std::string>> rx_usecs_modes;
    [[nodiscard]] const std::string* rx_usecs_mode(uint64_t v) const;
    // Health checks: the meaning of its statistics.
    std::vector<CounterFact> counters;
    [[nodiscard]] const CounterFact* counter(std::string_view name) const;
};

class FactsBook {
  public:
    // Parses a facts file; errors are "file:line:column: message".
    static Result<FactsBook> parse(std::string_view text, const std::string& file);
    // The facts compiled in from profiles/facts/driver-facts.toml.
    static const FactsBook& builtin();

    [[nodiscard]] const DriverFacts* find(std::string_view driver) const;
    [[nodiscard]] const std::vector<DriverFacts>& drivers() const { return drivers_; }
    // Adds or replaces drivers from another book (an admin's file).
    void merge(const FactsBook& other);

  private:
    std::vector<DriverFacts> drivers_;
};

}  // namespace nictune
