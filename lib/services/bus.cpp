#include "services/bus.hpp"

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>

#include "services/call.hpp"

namespace nictune::services {
namespace {
// A hung bus or service must not hang an audit.
constexpr std::chrono::seconds kTimeout{5};
}  // namespace

std::unique_ptr<sdbus::IConnection> connect(const BusOptions& opts, std::string* why) {
    try {
        auto conn = opts.address.empty()
                        ? sdbus::createSystemBusConnection()
                        : sdbus::createSessionBusConnectionWithAddress(opts.address);
        conn->setMethodCallTimeout(kTimeout);
        return conn;
    } catch (const sdbus::Error& e) {
        *why = "no D-Bus system bus (" + e.getName() + ": " + e.getMessage() + ")";
    } catch (const std::exception& e) {
        *why = std::string("no D-Bus system bus (") + e.what() + ")";
    }
    return nullptr;
}

std::optional<std::string> owner_of(sdbus::IConnection& conn, const std::string& name) {
    auto bus = sdbus::createProxy(conn, "org.freedesktop.DBus", "/org/freedesktop/DBus");
    bool has = false;
    bus->callMethod("NameHasOwner")
        .onInterface("org.freedesktop.DBus")
        .withArguments(name)
        .storeResultsTo(has);
    if (!has) return std::nullopt;
    // The name may lose its owner between the two calls.
    return call_or_none<std::string>(*bus, "org.freedesktop.DBus", "GetNameOwner", name,
                                     "org.freedesktop.DBus.Error.NameHasNoOwner");
}

std::string bus_label(const BusOptions& opts) {
    return opts.address.empty() ? "the system bus" : "bus " + opts.address;
}

}  // namespace nictune::services
