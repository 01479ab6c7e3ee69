// What a profile means for one device: each requested value resolved to the
// device key and value that express it (driver rules, "max", limits), and
// each feature name expanded to the device's kernel feature names. Shared by
// audit (compare) and plan (change).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/nic_state.hpp"
#include "profile/profile.hpp"

namespace nictune {

enum class Resolution : uint8_t {
    Native,       // the device has the key; the value is used as given ("max" resolved)
    Translated,   // a driver rule expresses it through another key or value
    Covered,      // satisfied by another explicit setting of the profile (see note)
    Unsupported,  // the device does not report the key and no rule applies
    OutOfRange,   // outside the device's limits (min/max MTU, ring or channel max)
    Conflict,     // another request wants a different value of the same device key
};
const char* resolution_name(Resolution r);

struct ResolvedSetting {
    Key requested;  // the profile's key
    Target target;  // as written
    Key key;        // the device key that expresses it
    uint64_t value = 0;
    Resolution resolution = Resolution::Native;
    std::string note;  // the rule's reason, the limit, the conflict
};

enum class FeatureStatus : uint8_t { Ok, NotOnDevice, Fixed };

struct ResolvedFeature {
    std::string requested;  // as written (kernel name or alias)
    std::string name;       // kernel name; empty when the device has none
    std::size_t index = 0;  // bit in the device's feature set
    bool on = false;
    FeatureStatus status = FeatureStatus::Ok;
    SourceLoc loc;
};

struct Resolved {
    std::vector<ResolvedSetting> settings;  // in schema (= apply) order
    std::vector<ResolvedFeature> features;
};

Resolved resolve(const Profile& profile, const NicState& state);

}  // namespace nictune
