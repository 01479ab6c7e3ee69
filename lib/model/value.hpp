// A scalar as reports show it: absent, a boolean, a number or a name.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "model/schema.hpp"

namespace nictune {

using Scalar = std::variant<std::monostate, bool, uint64_t, std::string>;

// The wire value of a device key as a typed scalar (bool, number, enum name).
Scalar scalar_of(Key k, uint64_t v);
// "1500", "true", "UP", "-" for absent.
std::string to_string(const Scalar& s);

}  // namespace nictune
