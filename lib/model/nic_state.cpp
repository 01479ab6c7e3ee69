#include "model/nic_state.hpp"

#include "util/enum_names.hpp"

namespace nictune {

bool DeviceValues::any_in(Section s) const {
    for (const auto& k : device_keys())
        if (k.section == s && has_[key_index(k.key)]) return true;
    return false;
}

void DeviceValues::clear_section(Section s) {
    for (const auto& k : device_keys())
        if (k.section == s) has_.reset(key_index(k.key));
}

std::optional<std::size_t> FeatureSet::index_of(std::string_view name) const {
    if (!names) return std::nullopt;
    for (std::size_t i = 0; i < names->size(); ++i)
        if ((*names)[i] == name) return i;
    return std::nullopt;
}

std::optional<bool> FeatureSet::active_by_name(std::string_view name) const {
    auto i = index_of(name);
    if (!i) return std::nullopt;
    return is_active(*i);
}

const char* tuned_source_name(TunedSource s) {
    static constexpr EnumNames<TunedSource> kNames{"dbus", "file", "not installed"};
    return kNames[s];
}

}  // namespace nictune
