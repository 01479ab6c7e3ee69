// Helpers shared by nictune's TOML readers (profiles, driver facts, the
// daemon's configuration): positions, type names, suggestions, file order.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profile/profile.hpp"
#include "profile/toml.hpp"
#include "util/error.hpp"

namespace nictune::tomlutil {

SourceLoc loc_of(const toml::source_region& r, const std::string& file);

// An Errc::InvalidProfile error at `loc` ("file:line:column: message").
std::unexpected<Error> invalid(const SourceLoc& loc, std::string message);

// "a string", "an integer", ... for messages.
const char* type_name(const toml::node& n);

// "; did you mean 'x'?" when `word` is a plausible typo of an option, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& options);

// toml++ iterates a table in key order; errors must name the first problem
// in the file, so readers visit keys in the order they were written.
using Entry = std::pair<const toml::key*, const toml::node*>;
std::vector<Entry> in_file_order(const toml::table& t);

}  // namespace nictune::tomlutil
