// Vendor and model names from the udev hardware database (sd-hwdb), looked up
// by the device's modalias. Without a hwdb.bin the names are simply absent.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

struct sd_hwdb;

namespace nictune::sysinfo {

struct HwdbNames {
    std::optional<std::string> vendor;  // ID_VENDOR_FROM_DATABASE
    std::optional<std::string> model;   // ID_MODEL_FROM_DATABASE
};

class Hwdb {
  public:
    Hwdb();  // opens the system hwdb lazily on first lookup
    // Opens this hwdb.bin instead (tests: a database they built themselves).
    explicit Hwdb(std::filesystem::path file);
    ~Hwdb();
    Hwdb(const Hwdb&) = delete;
    Hwdb& operator=(const Hwdb&) = delete;
    HwdbNames lookup(std::string_view modalias);

  private:
    std::filesystem::path file_;  // empty: the system's
    sd_hwdb* db_ = nullptr;
    bool tried_ = false;
};

}  // namespace nictune::sysinfo
