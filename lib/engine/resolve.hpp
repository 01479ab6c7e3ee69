// What a profile means for one device: each requested value resolved to the
// device key and value that express it (driver rules, "max", limits, what
// the driver accepts and how it rounds), and each feature name expanded to
// the device's kernel feature names. Shared by audit (compare) and plan
// (change).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/nic_state.hpp"
#include "profile/facts.hpp"
#include "profile/profile.hpp"

namespace nictune {

enum class Resolution : uint8_t {
    Native,         // the device has the key; the value is used as given ("max" resolved)
    Translated,     // a driver rule expresses it through another key or value
    Covered,        // satisfied by another explicit setting of the profile (see note)
    Unsupported,    // the device does not report the key and no rule applies
    OutOfRange,     // outside the device's or the driver's limits (MTU, ring max, driver ranges)
    Conflict,       // another request wants a different value of the same device key
    Adjusted,       // the driver stores a nearby value (rounding): `value` is that one
    NotSettable,    // the driver does not accept this key (though it may report it)
    DriverRefuses,  // the driver refuses it in this state or combination (see note)
};
const char* resolution_name(Resolution r);

struct ResolvedSetting {
    Key requested;  // the profile's key
    Target target;  // as written
    Key key;        // the device key that expresses it
    uint64_t value = 0;
    Resolution resolution = Resolution::Native;
    std::string note;          // the rule's reason, the limit, the conflict
    bool resets_link = false;  // changing it re-initialises the device on this driver
    std::string reset_note;    // why, when it depends on the values (ixgbe rx-usecs)
};

enum class FeatureStatus : uint8_t {
    Ok,
    NotOnDevice,
    Fixed,    // the device cannot change it (ethtool's "[fixed]")
    Blocked,  // the kernel keeps it at the other value, or would (see why)
};

struct ResolvedFeature {
    std::string requested;  // as written (kernel name or alias)
    std::string name;       // kernel name; empty when the device has none
    std::size_t index = 0;  // bit in the device's feature set
    bool on = false;
    FeatureStatus status = FeatureStatus::Ok;
    std::string why;  // Blocked: the reason
    bool resets_link = false;
};

struct Resolved {
    std::vector<ResolvedSetting> settings;  // in schema (= apply) order
    std::vector<ResolvedFeature> features;
};

// The kernel feature names that a profile's feature names stand for
// (aliases such as "tso" expand to every matching name), kept for the
// interfaces of one plan: the expansion depends only on the kernel's names,
// which the interfaces read together share (FeatureSet::names), and
// expanding an alias for each of 512 interfaces was 6% of an apply.
class FeatureExpansions {
  public:
    // features::expand(name, *names), computed once per names and name;
    // the reference lives as long as this object.
    const std::vector<std::string>& expand(const std::string& name,
                                           const std::shared_ptr<const FeatureNames>& names);

  private:
    std::map<std::pair<const FeatureNames*, std::string>, std::vector<std::string>> done_;
    std::vector<std::shared_ptr<const FeatureNames>> keep_;  // the keys' names stay alive
};

// What resolution knows besides the device: the driver facts (nullptr: no
// driver table, what the device reports is taken as settable), the
// system (IP forwarding, for LRO), and the plan's feature expansions.
struct ResolveContext {
    const FactsBook* facts = nullptr;
    const SystemState* system = nullptr;
    FeatureExpansions* expansions = nullptr;  // none: expanded each time
};

Resolved resolve(const Profile& profile, const NicState& state, const ResolveContext& ctx = {});

// Sysctls that resolution consults for `profile` (besides the profile's
// own): IP forwarding when it turns a feature on.
std::vector<std::string> consulted_sysctls(const Profile& profile);

}  // namespace nictune
