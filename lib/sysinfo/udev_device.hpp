// udev's record of a network device through libsystemd's sd-device: the
// properties udev set when it processed the device (ID_NET_LINK_FILE, the
// .link file it applied; ID_NET_DRIVER, ...). Reads /run/udev/data.
#pragma once

#include <string>

#include "model/health.hpp"

namespace nictune::sysinfo {

// The value of `key` for interface `ifname`; unknown with the reason when
// udev has no record or did not set it.
Known<std::string> udev_property(const std::string& ifname, const char* key);

}  // namespace nictune::sysinfo
