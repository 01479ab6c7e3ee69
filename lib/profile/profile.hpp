// A tuning profile after parsing and validation: what the operator asked for,
// each value with the file:line:column it came from.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/schema.hpp"

namespace nictune {

struct SourceLoc {
    std::string file;
    uint32_t line = 0;
    uint32_t column = 0;
    // "file:line:column" (or just "file" when the position is unknown)
    [[nodiscard]] std::string str() const;
};

// A requested device value: a number (bools are 0/1, enums their wire
// value) or "max" (the device's maximum, for rings and channels).
struct Target {
    uint64_t value = 0;
    bool is_max = false;
    SourceLoc loc;
    bool operator==(const Target& o) const { return value == o.value && is_max == o.is_max; }
};

struct FeatureRequest {
    std::string name;  // as written: kernel name or ethtool alias
    bool on = false;
    SourceLoc loc;
};

struct SysctlRequest {
    std::string name;  // dotted
    std::string value;
    SourceLoc loc;
    // { at_least = ... }: a floor, not a value. Each number is raised to
    // the floor's, never lowered: the host may already give more (a larger
    // socket buffer that a "throughput" profile must not shrink).
    bool at_least = false;
};

struct PrivateFlagRequest {
    std::string name;  // the driver's own name, checked against the device at plan time
    bool on = false;
    SourceLoc loc;
};

// A CPU set for every queue of an interface ([rps] cpus, [xps] cpus or
// policy = "off", which is the empty set).
struct CpusRequest {
    std::vector<unsigned> cpus;  // sorted, no duplicates
    SourceLoc loc;
};

// [rss.hash] FLOW = "fields".
struct RssHashRequest {
    std::string flow;     // canonical flow type name (model/rss.hpp), esp4 given as ah4
    uint64_t fields = 0;  // RXH_* bits
    SourceLoc loc;
};
// [irq]: policy = "local" / "all" (one CPU per IRQ, round robin) or cpus.
struct IrqRequest {
    enum class Policy : uint8_t { Local, All, Cpus };
    Policy policy = Policy::Local;
    std::vector<unsigned> cpus;  // Policy::Cpus: sorted, no duplicates
    SourceLoc loc;
};

struct ProfileMatch {
    std::vector<std::string> drivers;
    std::vector<std::string> pci_ids;     // lower-case "8086:10fb"
    std::vector<std::string> interfaces;  // globs
    [[nodiscard]] bool empty() const {
        return drivers.empty() && pci_ids.empty() && interfaces.empty();
    }
};

struct DriverRequirement {
    std::optional<std::string> min_version;
    std::vector<std::string> bad_versions;
};

struct Profile {
    std::string name;
    std::string file;                // the profile's own file (includes are listed in `files`)
    std::vector<std::string> files;  // every file that contributed, includes first
    std::string description;
    std::vector<std::string> includes;
    SourceLoc include_loc;             // where [profile] include is written
    std::optional<uint32_t> priority;  // unset: 0, or inherited from an include
    ProfileMatch match;
    DriverRequirement driver;
    std::array<std::optional<Target>, kKeyCount> settings;  // writable device keys only
    std::vector<FeatureRequest> features;                   // in file order
    std::vector<SysctlRequest> sysctl;
    std::vector<PrivateFlagRequest> private_flags;  // in file order
    std::optional<CpusRequest> rps_cpus;
    std::optional<Target> rps_flow_cnt;
    std::optional<CpusRequest> xps_cpus;
    // [rss]
    std::optional<Target> rss_queues;      // queues = N
    std::vector<RssHashRequest> rss_hash;  // in file order, one per flow type
    std::optional<IrqRequest> irq;
    std::optional<std::string> tuned_profile;
    SourceLoc tuned_loc;

    [[nodiscard]] const std::optional<Target>& setting(Key k) const {
        return settings[key_index(k)];
    }
    // True when the profile asks for nothing at all.
    [[nodiscard]] bool empty() const;
};

}  // namespace nictune
