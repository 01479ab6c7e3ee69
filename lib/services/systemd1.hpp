// systemd's D-Bus API (org.freedesktop.systemd1): whether a unit is active
// (Manager.GetUnit, then the unit's ActiveState). Used for irqbalance.
#pragma once

#include <string>

#include "model/health.hpp"
#include "services/bus.hpp"

namespace nictune::services {

// true: ActiveState is "active" (or "activating"/"reloading"); false:
// anything else, or the unit is not loaded. Unknown, with the reason, when
// there is no bus or no systemd on it.
Known<bool> unit_active(const BusOptions& opts, const std::string& unit, std::string* state);

}  // namespace nictune::services
