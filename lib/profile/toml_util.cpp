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

Result<toml::table> parse_document(std::string_view text, const std::string& file,
                                   std::string_view kind) {
    if (auto nul = text.find('\0'); nul != std::string_view::npos) {
        const auto before = text.substr(0, nul);
        const auto line = std::count(before.begin(), before.end(), '\n') + 1;
        const auto line_start = before.rfind('\n');
        const auto column = line_start == std::string_view::npos ? nul + 1 : nul - line_start;
        return invalid(SourceLoc{file, static_cast<uint32_t>(line), static_cast<uint32_t>(column)},
                       "file contains a NUL byte: not a text " + std::string(kind));
    }
    try {
        return toml::parse(text, std::string_view(file));
    } catch (const toml::parse_error& e) {
        return invalid(loc_of(e.source(), file), std::string(e.description()));
    }
}

const char* type_name(const toml::node& n) {
    static constexpr std::pair<toml::node_type, const char*> kNames[] = {
        {toml::node_type::table, "a table"},
        {toml::node_type::array, "an array"},
        {toml::node_type::string, "a string"},
        {toml::node_type::integer, "an integer"},
        {toml::node_type::floating_point, "a float"},
        {toml::node_type::boolean, "a boolean"},
        {toml::node_type::date, "a date"},
        {toml::node_type::time, "a time"},
        {toml::node_type::date_time, "a date-time"},
    };
    for (const auto& [type, name] : kNames)
        if (n.type() == type) return name;
    return "nothing";
}

Result<std::string> string_value(const toml::node& n, const SourceLoc& loc, std::string_view what) {
    if (auto s = n.as_string()) return s->get();
    return invalid(loc, std::string(what) + ": expected a string, got " + type_name(n));
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& options) {
    if (auto best = closest_match(word, options)) return "; did you mean '" + *best + "'?";
    return {};
}

std::unexpected<Error> unknown_key(const toml::key& k, const std::string& file,
                                   std::string_view where,
                                   const std::vector<std::string_view>& names) {
    const std::string key(k.str());
    return invalid(loc_of(k.source(), file), "unknown key " + quote(key) + " in " +
                                                 std::string(where) + did_you_mean(key, names));
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
