#include "sysinfo/sd_api.hpp"

#include <dlfcn.h>

namespace nictune::sysinfo::detail {
namespace {

template <class F>
bool bind(void* lib, const char* name, F& f, std::string& error) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f && error.empty()) error = std::string("libsystemd.so.0 has no ") + name;
    return f != nullptr;
}

SdApi open_api() {
    SdApi a;
    void* lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* e = dlerror();
        a.error = std::string("libsystemd is not installed (") + (e ? e : "dlopen failed") + ")";
        return a;
    }
    bool ok = bind(lib, "sd_hwdb_new", a.hwdb_new, a.error);
    ok = bind(lib, "sd_hwdb_new_from_path", a.hwdb_new_from_path, a.error) && ok;
    ok = bind(lib, "sd_hwdb_get", a.hwdb_get, a.error) && ok;
    ok = bind(lib, "sd_hwdb_unref", a.hwdb_unref, a.error) && ok;
    ok = bind(lib, "sd_device_new_from_ifname", a.device_new_from_ifname, a.error) && ok;
    ok = bind(lib, "sd_device_get_property_value", a.device_get_property_value, a.error) && ok;
    ok = bind(lib, "sd_device_unref", a.device_unref, a.error) && ok;
    if (!ok) {
        const std::string why = a.error;
        a = SdApi{};
        a.error = why;
    }
    return a;
}

}  // namespace

const SdApi& sd_api() {
    static const SdApi api = open_api();
    return api;
}

}  // namespace nictune::sysinfo::detail
