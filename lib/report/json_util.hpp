// What the report files share about JSON: a string written as null when
// it is empty, and the reading back of members that may be absent, for the
// text views and the metrics (which render a daemon's reply as they render
// a direct run).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/json_writer.hpp"

namespace nictune::report {

// "key": s, or null when s is empty: an absent MAC, fix or kernel message
// reads as null, not as "".
inline void string_or_null(JsonWriter& w, std::string_view key, std::string_view s) {
    w.key(key);
    if (s.empty())
        w.null();
    else
        w.value(s);
}

// "key": write(w, *v), or null when v holds nothing (an optional, a
// pointer): for the parts that write their own object.
template <class Holder, class Write>
void write_or_null(JsonWriter& w, std::string_view key, const Holder& v, Write&& write) {
    w.key(key);
    if (v)
        write(w, *v);
    else
        w.null();
}

// The member as text: a string as it is, any other value as JSON; "" when
// it is absent or null.
inline std::string text_of(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
}

// The member, or a null that outlives the call (value() returns copies,
// and a range-for over a copy's items() dangles).
inline const nlohmann::json& member(const nlohmann::json& j, const char* key) {
    static const nlohmann::json kNull;
    if (!j.is_object()) return kNull;
    auto it = j.find(key);
    return it == j.end() ? kNull : *it;
}

}  // namespace nictune::report
