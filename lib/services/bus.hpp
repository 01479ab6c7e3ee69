// What the services/ clients share: a connection to the system bus (or a
// given address, for tests on a private dbus-daemon) with a short call
// timeout, and "is this name owned" without activating anything.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace sdbus {
class IConnection;
}

namespace nictune::services {

struct BusOptions {
    std::string address;  // empty: the system bus (DBUS_SYSTEM_BUS_ADDRESS honoured)
};

// nullptr with *why when there is no bus.
std::unique_ptr<sdbus::IConnection> connect(const BusOptions& opts, std::string* why);
// The unique name owning `name`, or nullopt (calls then go to the unique
// name, so that nothing gets activated). Throws sdbus::Error on bus errors.
std::optional<std::string> owner_of(sdbus::IConnection& conn, const std::string& name);
std::string bus_label(const BusOptions& opts);

}  // namespace nictune::services
