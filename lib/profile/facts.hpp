// The shipped knowledge file of driver facts (profiles/facts/driver-facts.toml):
// known-bad versions with the reason and the fix, max MTUs, PCI ids, and what
// each driver accepts (which keys it lets a SET change, the values it takes,
// which changes reset its link), each row citing the driver source it was
// read from. It is compiled into the binaries so that an uninstalled build
// knows the same as an installed one; /etc/nictune/driver-facts.toml may add
// to it (a driver's table there replaces the built-in one).
//
// Compiled in one piece per driver (profile/facts_split.hpp), each parsed on
// its first look-up: parsing the whole file at every start was half the
// instructions of a one-interface `nictunectl --direct apply`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/schema.hpp"
#include "profile/facts_split.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace nictune {

struct BadVersion {
    std::string version;
    std::string reason;  // one line, with its source
    std::string fix;
    bool operator==(const BadVersion&) const = default;
};

// The keys of one section a driver's SET accepts. A key outside `keys` is
// refused by the kernel or the driver even when the GET reports it (ethtool's
// COALESCE_SET checks supported_coalesce_params, RINGS_SET
// supported_ring_params; the driver's set_* op refuses the rest).
struct SectionAccepts {
    Section section = Section::Coalesce;
    std::vector<Key> keys;  // empty: the driver has no SET for this section
    std::string source;     // "drivers/net/.../ixgbe_ethtool.c supported_coalesce_params"
    bool operator==(const SectionAccepts&) const = default;
};

// How a driver settles on a value it accepts but does not store as given.
enum class Rounding : uint8_t {
    None,
    Up,    // to the next multiple of `step` (ALIGN)
    Down,  // to the multiple of `step` below
    // e1000e: stored as an interrupt rate 1000000/us rounded down to a
    // multiple of 4, read back as 1000000/rate (e1000_set_coalesce).
    E1000eItr,
};
const char* rounding_name(Rounding r);

// The values a driver accepts for one key: any of `values`, or min..max
// (either bound may be absent: the device's own limit applies), settled on
// as `round` says.
struct ValueRule {
    Key key = Key::CoalRxUsecs;
    std::vector<uint64_t> values;
    std::optional<uint64_t> min;
    std::optional<uint64_t> max;
    uint64_t step = 1;
    Rounding round = Rounding::None;
    std::string source;

    [[nodiscard]] bool accepts(uint64_t v) const;
    // What the driver will store (and report) for an accepted value.
    [[nodiscard]] uint64_t settles_on(uint64_t v) const;
    // "0, 1, 3, 4 or 10..10000", "64.. in steps of 32"
    [[nodiscard]] std::string describe() const;
    bool operator==(const ValueRule&) const = default;
};

// Changes that re-initialise the device (a short link flap) on this driver.
struct ResetRow {
    std::vector<std::string>
        what;  // setting paths ("link.mtu", "features.rx-lro") or sections ("rings")
    std::string source;
    bool operator==(const ResetRow&) const = default;
};
// What one of the driver's own statistics (`ethtool -S` name) means to the
// health checks (engine/health.cpp), with where that comes from.
struct CounterFact {
    std::string name;  // per-queue counters: "rx_queue_*_drops", `*` = a number
    std::string kind;  // rx_no_buffer, rx_dropped, crc, pause_rx, pause_tx, tx_timeout, alloc_fail
    std::string meaning;
    std::string source;
    bool operator==(const CounterFact&) const = default;
};
// The kinds a CounterFact may have.
bool valid_counter_kind(std::string_view kind);
// Whether an `ethtool -S` name is one a CounterFact's name stands for: each
// `*` is one or more digits, everything else literal.
bool counter_name_matches(std::string_view pattern, std::string_view name);

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

    // What the driver accepts: one row per device section with a SET
    // (coalesce, rings, channels, pause), all four or none. None: the
    // settability is unknown and what the driver reports is taken as settable.
    std::vector<SectionAccepts> accepts;
    std::vector<ValueRule> values;
    // Which changes reset the link. With an `accepts` table these rows are
    // complete (a change they do not name does not reset); without either,
    // the schema's defaults apply.
    std::vector<ResetRow> resets_link;

    [[nodiscard]] bool knows_settable() const { return !accepts.empty(); }
    // The row for the section of `k` (nullptr: settability unknown).
    [[nodiscard]] const SectionAccepts* accepts_row(Key k) const;
    [[nodiscard]] bool settable(Key k) const;
    [[nodiscard]] const ValueRule* value_rule(Key k) const;
    // nullopt when this driver has neither reset rows nor a table (use the
    // schema's default).
    [[nodiscard]] std::optional<bool> resets(std::string_view setting_path) const;
    // "ixgbe accepts only rx_usecs, tx_usecs (SOURCE)" / "veth has no coalesce SET (SOURCE)"
    [[nodiscard]] std::string accepts_text(Section s) const;
    // Health checks: the meaning of its statistics.
    std::vector<CounterFact> counters;
    [[nodiscard]] const CounterFact* counter(std::string_view name) const;
    bool operator==(const DriverFacts&) const = default;
};

class FactsBook {
  public:
    // Parses a facts file; errors are "file:line:column: message".
    static Result<FactsBook> parse(std::string_view text, const std::string& file);
    // The facts compiled in from profiles/facts/driver-facts.toml. A driver's
    // tables are parsed on its first find(), once per process: copies of the
    // book (nictunectl's merged one, the Manager's) share them.
    static const FactsBook& builtin();

    [[nodiscard]] const DriverFacts* find(std::string_view driver) const;
    // Every driver, in the book's order (the file's tables by name, then
    // those merge() added); parses every built-in one.
    [[nodiscard]] std::vector<const DriverFacts*> drivers() const;
    // Adds or replaces drivers from another book (an admin's file).
    void merge(const FactsBook& other);

  private:
    struct Entry {
        std::string driver;
        std::shared_ptr<const DriverFacts> facts;  // null: the built-in piece `piece`
        std::size_t piece = 0;
    };
    [[nodiscard]] static const DriverFacts* facts_of(const Entry& e);
    std::vector<Entry> entries_;
};

// One driver's piece of a facts file (split_facts), parsed as the whole file
// would parse it, errors naming the file's lines ("file:line:column").
Result<DriverFacts> parse_facts_piece(std::string_view text, std::span<const LineRun> runs,
                                      const std::string& file);

}  // namespace nictune
