// The profile reference, generated from the schema table: `nictunectl keys`
// and docs/profiles.md (a unit test keeps the committed file identical).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace nictune::report {

nlohmann::json keys_json();
std::string keys_text();
std::string keys_markdown();
// The same as a man page, nictune-profile(5) (docs/man/nictune-profile.5).
std::string keys_man();

}  // namespace nictune::report
