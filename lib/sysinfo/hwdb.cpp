#include "sysinfo/hwdb.hpp"

#include "sysinfo/sd_api.hpp"

namespace nictune::sysinfo {
namespace {

std::optional<std::string> property(sd_hwdb* db, const std::string& modalias, const char* key) {
    const char* value = nullptr;
    if (detail::sd_api().hwdb_get(db, modalias.c_str(), key, &value) < 0 || value == nullptr)
        return std::nullopt;
    return std::string(value);
}

}  // namespace

Hwdb::Hwdb() = default;

Hwdb::Hwdb(std::filesystem::path file) : file_(std::move(file)) {}

Hwdb::~Hwdb() {
    if (db_ != nullptr) detail::sd_api().hwdb_unref(db_);
}

HwdbNames Hwdb::lookup(std::string_view modalias) {
    if (!tried_) {
        tried_ = true;
        // Without udev's hwdb.bin (minimal systems, containers) this fails
        // with ENOENT, and without libsystemd there is nothing to ask: the
        // names stay absent either way.
        const auto& sd = detail::sd_api();
        if (sd.hwdb_new != nullptr) {
            const int r =
                file_.empty() ? sd.hwdb_new(&db_) : sd.hwdb_new_from_path(file_.c_str(), &db_);
            if (r < 0) db_ = nullptr;
        }
    }
    HwdbNames names;
    if (db_ == nullptr || modalias.empty()) return names;
    const std::string key(modalias);
    names.vendor = property(db_, key, "ID_VENDOR_FROM_DATABASE");
    names.model = property(db_, key, "ID_MODEL_FROM_DATABASE");
    return names;
}

}  // namespace nictune::sysinfo
