// Who may change settings through nictuned: uid 0, or a caller polkit
// authorizes for the action org.nictune1.apply (when polkit is on the bus).
// Read-only methods are not checked.
#pragma once

#include <sdbus-c++/sdbus-c++.h>

#include <memory>
#include <string>

#include "util/error.hpp"

namespace nictune::service {

inline constexpr const char* kApplyAction = "org.nictune1.apply";

class Authorizer {
  public:
    virtual ~Authorizer() = default;
    // Errc::PermissionDenied with a message that says what would be needed.
    virtual Result<void> check(const sdbus::Message& call, const std::string& action) = 0;
};

// Asks polkit (org.freedesktop.PolicyKit1 on the same bus) when it is there,
// otherwise allows uid 0 only. `bus_address` empty: the system bus.
std::unique_ptr<Authorizer> make_polkit_authorizer(std::string bus_address);

}  // namespace nictune::service
