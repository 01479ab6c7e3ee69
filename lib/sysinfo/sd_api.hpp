// libsystemd's sd-hwdb and sd-device, opened with dlopen on first use
// (hwdb.cpp, udev_device.cpp), as libkmod is (kmod.cpp): linked, libsystemd
// and the six libraries it needs (libcap, libgcrypt, liblzma, libzstd,
// liblz4, libgpg-error) were loaded and relocated at every start of
// nictunectl (BENCHMARKS.md, "Start-up and one interface"). The headers give
// the types; this table the functions.
#pragma once

#include <systemd/sd-device.h>
#include <systemd/sd-hwdb.h>

#include <string>

namespace nictune::sysinfo::detail {

struct SdApi {
    decltype(&sd_hwdb_new) hwdb_new = nullptr;
    decltype(&sd_hwdb_new_from_path) hwdb_new_from_path = nullptr;
    decltype(&sd_hwdb_get) hwdb_get = nullptr;
    decltype(&sd_hwdb_unref) hwdb_unref = nullptr;
    decltype(&sd_device_new_from_ifname) device_new_from_ifname = nullptr;
    decltype(&sd_device_get_property_value) device_get_property_value = nullptr;
    decltype(&sd_device_unref) device_unref = nullptr;
    // Why the table is empty ("libsystemd is not installed (...)"); when
    // set, every function above is null.
    std::string error;
};

// Opened once per process, never closed.
const SdApi& sd_api();

}  // namespace nictune::sysinfo::detail
