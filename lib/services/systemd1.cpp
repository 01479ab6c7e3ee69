#include "services/systemd1.hpp"

#include <sdbus-c++/sdbus-c++.h>

#include "services/call.hpp"

namespace nictune::services {

Known<bool> unit_active(const BusOptions& opts, const std::string& unit, std::string* state) {
    std::string why;
    auto conn = connect(opts, &why);
    if (!conn) return Known<bool>::none(why);
    try {
        auto owner = owner_of(*conn, "org.freedesktop.systemd1");
        if (!owner) return Known<bool>::none("systemd is not on " + bus_label(opts));
        auto mgr = sdbus::createProxy(*conn, *owner, "/org/freedesktop/systemd1");
        auto path =
            call_or_none<sdbus::ObjectPath>(*mgr, "org.freedesktop.systemd1.Manager", "GetUnit",
                                            unit, "org.freedesktop.systemd1.NoSuchUnit");
        if (!path) {
            *state = "not loaded";
            return Known<bool>::of(false);
        }
        auto u = sdbus::createProxy(*conn, *owner, *path);
        const sdbus::Variant v =
            u->getProperty("ActiveState").onInterface("org.freedesktop.systemd1.Unit");
        *state = v.containsValueOfType<std::string>() ? v.get<std::string>() : "?";
        return Known<bool>::of(*state == "active" || *state == "activating" ||
                               *state == "reloading");
    } catch (const sdbus::Error& e) {
        return Known<bool>::none("systemd on " + bus_label(opts) + ": " + e.getName() + ": " +
                                 e.getMessage());
    } catch (const std::exception& e) {
        return Known<bool>::none("systemd on " + bus_label(opts) + ": " + e.what());
    }
}

}  // namespace nictune::services
