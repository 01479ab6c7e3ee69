// Scalars as JSON values (null, bool, unsigned number, string), for reports
// and state files alike. A template so that either nlohmann::json or
// nlohmann::ordered_json can be produced.
#pragma once

#include <variant>

#include "model/value.hpp"
#include "util/json_writer.hpp"

namespace nictune {

template <class Json>
Json scalar_to_json(const Scalar& s) {
    struct V {
        Json operator()(std::monostate) const { return nullptr; }
        Json operator()(bool b) const { return b; }
        Json operator()(uint64_t n) const { return n; }
        Json operator()(const std::string& t) const { return t; }
    };
    return std::visit(V{}, s);
}

inline void json_value(JsonWriter& w, const Scalar& s) {
    if (const auto* b = std::get_if<bool>(&s))
        w.value(*b);
    else if (const auto* n = std::get_if<uint64_t>(&s))
        w.value(*n);
    else if (const auto* t = std::get_if<std::string>(&s))
        w.value(std::string_view(*t));
    else
        w.null();
}

}  // namespace nictune
