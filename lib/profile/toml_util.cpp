#include "profile/toml_util.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace nictune::tomlutil {

SourceLoc loc_of(const toml::source_region& r, const std::string& file) {
    return SourceLoc{file, r.begin.line, r.begin.column};
}

std::unexpected<Error> invalid(const SourceLoc& loc, std::string message) {
    return fail(Errc::InvalidProfile, loc.str(), std::move(message));
}

const char* type_name(const toml::node& n) {
    switch (n.type()) {
        case toml::node_type::table:
            return "a table";
        case toml::node_type::array:
            return "an array";
        case toml::node_type::string:
            return "a string";
        case toml::node_type::integer:
            return "an integer";
        case toml::node_type::floating_point:
            return "a float";
        case toml::node_type::boolean:
            return "a boolean";
        case toml::node_type::date:
            return "a date";
        case toml::node_type::time:
            return "a time";
        case toml::node_type::date_time:
            return "a date-time";
        default:
            return "nothing";
    }
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& options) {
    if (auto best = closest_match(word, options)) return "; did you mean '" + *best + "'?";
    return {};
}

std::vector<Entry> in_file_order(const toml::table& t) {
    std::vector<Entry> out;
    for (auto&& [k, v] : t)
        out.emplace_back(&k, &v);
    std::stable_sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
        const auto& pa = a.first->source().begin;
        const auto& pb = b.first->source().begin;
        return std::pair(pa.line, pa.column) < std::pair(pb.line, pb.column);
    });
    return out;
}

}  // namespace nictune::tomlutil
