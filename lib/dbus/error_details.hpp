// The fields of an error nictuned raises, on the wire: the error reply's
// second argument, after the message string (org.nictune1.Manager.xml). The
// name already carries the code and the message string the whole text
// (Error::str()), which is all that sd-bus, busctl or an older nictunectl
// read; the dictionary lets a client rebuild the Error field by field, so
// that its JSON error object and its exit status are those of a direct run.
// One header for both ends (nictuned's service/ and the client in dbus/), so
// that the keys are written once.
#pragma once

#include <sdbus-c++/Types.h>

#include <cstdint>
#include <map>
#include <string>

#include "util/error.hpp"
#include "util/json_writer.hpp"

namespace nictune::dbus {

// a{sv}: typed and extensible, readable by any D-Bus binding. Its keys are
// those of the JSON error object (report/'s error_json) for the same fields.
using ErrorDetails = std::map<std::string, sdbus::Variant>;
inline constexpr const char* kErrorDetailsType = "a";
inline constexpr const char* kErrorDetailsContents = "{sv}";

// Every field, also when empty: the client then takes the dictionary as the
// whole error and nothing from the message string. Strings are made valid
// UTF-8 here, since sd-bus refuses to send anything else (a file name in a
// profile error's context need not be).
inline ErrorDetails error_details(const Error& e) {
    return {
        {"errno", sdbus::Variant(static_cast<int32_t>(e.sys_errno))},
        {"context", sdbus::Variant(to_valid_utf8(e.context))},
        {"interface", sdbus::Variant(to_valid_utf8(e.interface))},
        {"setting", sdbus::Variant(to_valid_utf8(e.setting))},
        {"message", sdbus::Variant(to_valid_utf8(e.message))},
        {"kernel_message", sdbus::Variant(to_valid_utf8(e.kernel_message))},
    };
}

// Sets the fields `details` holds on `e`, whose code came from the error's
// name. A key this build does not know, or one of another type, is left
// alone: a newer nictuned may send more, and nothing a peer sends may make
// the client throw.
inline void read_error_details(const ErrorDetails& details, Error& e) {
    auto string_field = [&](const char* key, std::string& out) {
        auto it = details.find(key);
        if (it != details.end() && it->second.containsValueOfType<std::string>())
            out = it->second.get<std::string>();
    };
    if (auto it = details.find("errno");
        it != details.end() && it->second.containsValueOfType<int32_t>())
        e.sys_errno = it->second.get<int32_t>();
    string_field("context", e.context);
    string_field("interface", e.interface);
    string_field("setting", e.setting);
    string_field("message", e.message);
    string_field("kernel_message", e.kernel_message);
}

}  // namespace nictune::dbus
