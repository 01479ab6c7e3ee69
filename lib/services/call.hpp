// One D-Bus method call of the services/ clients: one argument, one result,
// and the error by which the service says there is no such thing (a unit,
// a device, an owner of the name), which comes back as nullopt. Any other
// error throws sdbus::Error, as every call does.
#pragma once

#include <sdbus-c++/sdbus-c++.h>

#include <optional>
#include <string_view>

namespace nictune::services {

template <class R, class Arg>
std::optional<R> call_or_none(sdbus::IProxy& proxy, const char* interface, const char* method,
                              const Arg& arg, std::string_view none) {
    R result;
    try {
        proxy.callMethod(method).onInterface(interface).withArguments(arg).storeResultsTo(result);
    } catch (const sdbus::Error& e) {
        if (e.getName() == none) return std::nullopt;
        throw;
    }
    return result;
}

}  // namespace nictune::services
