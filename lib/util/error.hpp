// Errors are values that carry their context: the interface, the setting, the
// operation, errno and the kernel's extack text. They never cross a D-Bus
// handler as exceptions and never terminate the process.
#pragma once

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace nictune {

// What each code means is in kErrcTable (error.cpp), the one place that
// names them: the JSON "code", the D-Bus error org.nictune1.Error.<name>,
// and whether the caller asked for something wrong (nictunectl exit 2).
enum class Errc {
    InvalidArgument,   // bad usage or input from the caller
    NoSuchInterface,   // unknown or vanished interface
    InvalidProfile,    // profile or config file that does not validate
    NoSuchProfile,     // profile name not found on the search path
    Unsupported,       // the driver or the system does not offer this
    PermissionDenied,  // the kernel or the policy said no
    Busy,              // another transaction holds the interface
    Kernel,            // a netlink/ioctl request failed (errno + extack)
    Io,                // file or socket I/O failed
    Internal,          // a bug or an impossible reply
};

struct ErrcInfo {
    Errc code;
    std::string_view name;  // "NoSuchInterface": JSON "code", D-Bus error suffix
    bool user_error;        // the caller's input was wrong; nothing was changed
    int exit_status;        // nictunectl's exit status for it (2 usage, 5 cannot)
};

// Every Errc once, in the enum's order.
std::span<const ErrcInfo> errc_table();
const ErrcInfo& errc_info(Errc code);
// The Errc named `name` (as errc_name gives it), none for anything else.
std::optional<Errc> errc_from_name(std::string_view name);

// "org.nictune1.Error." + the name, for every code.
inline constexpr std::string_view kDbusErrorPrefix = "org.nictune1.Error.";
std::string dbus_error_name(Errc code);
// The Errc of an org.nictune1.Error.* name; Kernel for one of ours this
// build does not know (an older nictuned's catch-all .Failed), none for a
// name from anyone else (the bus's own errors).
std::optional<Errc> errc_from_dbus_name(std::string_view name);

struct Error {
    Errc code = Errc::Internal;
    int sys_errno = 0;           // errno where one applies, else 0
    std::string context;         // "p4p1: rings.rx=8192: set" or "file:line:column"
    std::string message;         // human sentence, no trailing period
    std::string kernel_message;  // extack text from the kernel, if any
    // What the error is about, as fields of their own (the JSON error
    // object's "interface" and "setting"), so that no caller has to take
    // them out of `context`; "" when it is about no interface or setting.
    std::string interface = {};  // in the text form of names ("p4p1")
    std::string setting = {};    // a profile key's path ("rings.rx", "sysctl.net.core.somaxconn")

    // "context: message (kernel: extack)"
    [[nodiscard]] std::string str() const;

    // True when this error means "the caller asked for something wrong",
    // i.e. nothing was changed and exit status 2 applies.
    [[nodiscard]] bool is_user_error() const;

    // Prefix the context, e.g. with a step: "link events: " + context.
    [[nodiscard]] Error within(std::string_view outer) &&;
    // The same with an interface's name, which also becomes `interface`
    // unless the error already names one.
    [[nodiscard]] Error within_interface(std::string_view name) &&;
    // Names what the error is about; an empty argument leaves that field as it is.
    [[nodiscard]] Error about(std::string_view interface, std::string_view setting = {}) &&;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(Errc code, std::string context, std::string message) {
    return std::unexpected(Error{code, 0, std::move(context), std::move(message), {}});
}

// An error about one interface: its name is the context and `interface`
// ("nt9: no such interface").
inline std::unexpected<Error> fail_on(Errc code, const std::string& interface,
                                      std::string message) {
    return std::unexpected(Error{code, 0, interface, std::move(message), {}, interface, {}});
}

// An error from a failed system call; message is strerror(err).
std::unexpected<Error> fail_errno(int err, std::string context, Errc code = Errc::Io);

const char* errc_name(Errc code);

}  // namespace nictune
