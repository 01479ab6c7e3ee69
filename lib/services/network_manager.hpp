// NetworkManager's D-Bus API (org.freedesktop.NetworkManager): whether it
// manages a device and which MTU and ethtool settings the connection
// applied to it holds (GetDeviceByIpIface, the device's Managed and
// ActiveConnection, Device.GetAppliedConnection). Never activates it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "model/health.hpp"
#include "services/bus.hpp"

namespace nictune::services {

struct NmDevice {
    bool running = false;  // NetworkManager owns its name on the bus
    bool managed = false;
    std::optional<ForeignConfig> config;  // its applied connection's overlapping settings
    std::string detail;                   // "not running", "device unknown to NetworkManager"...
};

// Unknown only when the bus cannot be asked at all.
Known<NmDevice> nm_device(const BusOptions& opts, const std::string& ifname);

// The same for many interfaces over one connection (an audit of hundreds
// of links asks NetworkManager once each, not one connection each). The
// connection is made on the first device(). Abstract: nictunectl gets the
// bus module's (lib/buslink/), nictuned and the tests the sdbus-c++ one.
class NmClient {
  public:
    // In nictunectl, a bus module that cannot be loaded makes a client
    // whose every answer is unknown with that reason.
    static std::unique_ptr<NmClient> open(BusOptions opts);
    virtual ~NmClient() = default;
    NmClient(const NmClient&) = delete;
    NmClient& operator=(const NmClient&) = delete;
    virtual Known<NmDevice> device(const std::string& ifname) = 0;

  protected:
    NmClient() = default;
};

// NetworkManager setting name -> nictune key ("802-3-ethernet.mtu" ->
// "link.mtu", "ethtool.ring-rx" -> "rings.rx", "ethtool.feature-gro" ->
// "features.gro"); empty for settings nictune does not set.
std::string nm_key(const std::string& group, const std::string& name);

}  // namespace nictune::services
