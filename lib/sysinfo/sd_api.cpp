#include "sysinfo/sd_api.hpp"

#include "sysinfo/dynlib.hpp"

namespace nictune::sysinfo::detail {
namespace {

SdApi open_api() {
    SdApi a;
    DynLib lib("libsystemd.so.0", "libsystemd");
    lib.bind("sd_hwdb_new", a.hwdb_new)
        .bind("sd_hwdb_new_from_path", a.hwdb_new_from_path)
        .bind("sd_hwdb_get", a.hwdb_get)
        .bind("sd_hwdb_unref", a.hwdb_unref)
        .bind("sd_device_new_from_ifname", a.device_new_from_ifname)
        .bind("sd_device_get_property_value", a.device_get_property_value)
        .bind("sd_device_unref", a.device_unref);
    if (!lib.error().empty()) {
        a = SdApi{};
        a.error = lib.error();
    }
    return a;
}

}  // namespace

const SdApi& sd_api() {
    static const SdApi api = open_api();
    return api;
}

}  // namespace nictune::sysinfo::detail
