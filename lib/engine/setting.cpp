#include "engine/setting.hpp"

namespace nictune {

std::string SettingId::path() const {
    if (key) return key_path(*key);
    return std::string(section_info(section).name) + "." + name;
}

Result<SettingId> SettingId::parse(std::string_view path) {
    auto dot = path.find('.');
    if (dot == std::string_view::npos || dot + 1 >= path.size())
        return fail(Errc::InvalidArgument, std::string(path), "not a setting path (section.key)");
    auto sec = find_section(path.substr(0, dot));
    if (!sec) return fail(Errc::InvalidArgument, std::string(path), "unknown section");
    std::string_view rest = path.substr(dot + 1);
    switch (*sec) {
        case Section::Features:
            return SettingId::feature(std::string(rest));
        case Section::Sysctl:
            return SettingId::sysctl(std::string(rest));
        case Section::Tuned:
            if (rest == "profile") return SettingId::tuned();
            break;
        default:
            if (auto k = find_key(*sec, rest)) return SettingId::device(*k);
            break;
    }
    return fail(Errc::InvalidArgument, std::string(path), "unknown setting");
}

std::optional<uint64_t> device_value_of(Key k, const Scalar& s) {
    if (const auto* b = std::get_if<bool>(&s)) return *b ? 1U : 0U;
    if (const auto* n = std::get_if<uint64_t>(&s)) return *n;
    if (const auto* t = std::get_if<std::string>(&s)) return enum_value(k, *t);
    return std::nullopt;
}

Scalar value_in(const SettingId& id, const NicState* nic, const SystemState* sys) {
    if (id.key && nic) {
        if (auto v = nic->values.get(*id.key)) return scalar_of(*id.key, *v);
        return {};
    }
    if (id.section == Section::Features && nic && nic->features) {
        if (auto v = nic->features->active_by_name(id.name)) return *v;
        return {};
    }
    if (id.section == Section::Sysctl && sys) {
        for (const auto& s : sys->sysctl)
            if (s.name == id.name && s.value) return *s.value;
        return {};
    }
    if (id.section == Section::Tuned && sys) {
        if (sys->tuned.active_profile) return *sys->tuned.active_profile;
    }
    return {};
}

}  // namespace nictune
