#include "sysinfo/udev_device.hpp"

#include <cerrno>
#include <cstring>

#include "sysinfo/sd_api.hpp"

namespace nictune::sysinfo {

Known<std::string> udev_property(const std::string& ifname, const char* key) {
    const auto& sd = detail::sd_api();
    if (sd.device_new_from_ifname == nullptr)
        return Known<std::string>::none("sd-device: " + ifname + ": " + sd.error);
    sd_device* dev = nullptr;
    int r = sd.device_new_from_ifname(&dev, ifname.c_str());
    if (r < 0) return Known<std::string>::none("sd-device: " + ifname + ": " + std::strerror(-r));
    const char* value = nullptr;
    r = sd.device_get_property_value(dev, key, &value);
    std::string v = r >= 0 && value ? value : "";
    sd.device_unref(dev);
    if (r == -ENOENT || (r >= 0 && v.empty()))
        return Known<std::string>::none(std::string("udev set no ") + key + " for " + ifname +
                                        " (no record in /run/udev/data, or no such property)");
    if (r < 0)
        return Known<std::string>::none(std::string("sd-device: ") + key + ": " +
                                        std::strerror(-r));
    return Known<std::string>::of(std::move(v));
}

}  // namespace nictune::sysinfo
