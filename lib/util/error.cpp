#include "util/error.hpp"

#include <array>
#include <cerrno>
#include <cstring>

namespace nictune {

namespace {

constexpr std::array<ErrcInfo, 10> kErrcTable{{
    {Errc::InvalidArgument, "InvalidArgument", true, 2},
    {Errc::NoSuchInterface, "NoSuchInterface", true, 2},
    {Errc::InvalidProfile, "InvalidProfile", true, 2},
    {Errc::NoSuchProfile, "NoSuchProfile", true, 2},
    {Errc::Unsupported, "Unsupported", false, 5},
    {Errc::PermissionDenied, "PermissionDenied", false, 5},
    {Errc::Busy, "Busy", false, 5},
    {Errc::Kernel, "Kernel", false, 5},
    {Errc::Io, "Io", false, 5},
    {Errc::Internal, "Internal", false, 5},
}};

constexpr bool table_in_enum_order() {
    for (std::size_t i = 0; i < kErrcTable.size(); ++i)
        if (static_cast<std::size_t>(kErrcTable[i].code) != i) return false;
    return static_cast<std::size_t>(Errc::Internal) + 1 == kErrcTable.size();
}
static_assert(table_in_enum_order(), "kErrcTable: one row per Errc, in the enum's order");

}  // namespace

std::span<const ErrcInfo> errc_table() {
    return kErrcTable;
}

const ErrcInfo& errc_info(Errc code) {
    const auto i = static_cast<std::size_t>(code);
    return i < kErrcTable.size() ? kErrcTable[i] : kErrcTable.back();
}

std::optional<Errc> errc_from_name(std::string_view name) {
    for (const ErrcInfo& e : kErrcTable)
        if (e.name == name) return e.code;
    return std::nullopt;
}

std::string dbus_error_name(Errc code) {
    return std::string(kDbusErrorPrefix) + std::string(errc_info(code).name);
}

std::optional<Errc> errc_from_dbus_name(std::string_view name) {
    if (!name.starts_with(kDbusErrorPrefix)) return std::nullopt;
    return errc_from_name(name.substr(kDbusErrorPrefix.size())).value_or(Errc::Kernel);
}

std::string Error::str() const {
    std::string out = context;
    if (!message.empty()) {
        if (!out.empty()) out += ": ";
        out += message;
    }
    if (!kernel_message.empty()) {
        out += " (kernel: ";
        out += kernel_message;
        out += ')';
    }
    return out;
}

bool Error::is_user_error() const {
    return errc_info(code).user_error;
}

Error Error::within(std::string_view outer) && {
    if (context.empty())
        context = outer;
    else
        context = std::string(outer) + ": " + context;
    return std::move(*this);
}

Error Error::within_interface(std::string_view name) && {
    if (interface.empty()) interface = name;
    return std::move(*this).within(name);
}

Error Error::about(std::string_view interface_name, std::string_view setting_path) && {
    if (!interface_name.empty()) interface = interface_name;
    if (!setting_path.empty()) setting = setting_path;
    return std::move(*this);
}

std::unexpected<Error> fail_errno(int err, std::string context, Errc code) {
    if (err == ENODEV) code = Errc::NoSuchInterface;
    if (err == EPERM || err == EACCES) code = Errc::PermissionDenied;
    if (err == EOPNOTSUPP) code = Errc::Unsupported;
    if (err == EBUSY) code = Errc::Busy;
    return std::unexpected(Error{code, err, std::move(context), std::strerror(err), {}});
}

const char* errc_name(Errc code) {
    return errc_info(code).name.data();
}

}  // namespace nictune
