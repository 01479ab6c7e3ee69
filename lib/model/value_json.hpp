// Scalars as JSON values (null, bool, unsigned number, string), for reports
// and state files alike. A template so that either nlohmann::json or
// nlohmann::ordered_json can be produced.
#pragma once

#include <charconv>
#include <string>
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

// s appended to out as a JSON value; false when a string was not valid
// UTF-8 (append_json_string).
inline bool append_json_value(std::string& out, const Scalar& s) {
    if (const auto* b = std::get_if<bool>(&s)) {
        out += *b ? "true" : "false";
    } else if (const auto* n = std::get_if<uint64_t>(&s)) {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, *n);
        out.append(buf, r.ptr);
    } else if (const auto* t = std::get_if<std::string>(&s)) {
        return append_json_string(out, *t);
    } else {
        out += "null";
    }
    return true;
}

inline void json_value(JsonWriter& w, const Scalar& s) {
    if (!append_json_value(w.raw_value(), s)) w.note_replaced();
}

}  // namespace nictune
