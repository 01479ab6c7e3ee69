// Errors are values that carry their context: the interface, the setting, the
// operation, errno and the kernel's extack text. They never cross a D-Bus
// handler as exceptions and never terminate the process.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace nictune {

enum class Errc {
    InvalidArgument,   // bad usage or input from the caller (exit 2)
    NoSuchInterface,   // unknown or vanished interface (exit 2)
    InvalidProfile,    // profile or config file that does not validate (exit 2)
    NoSuchProfile,     // profile name not found on the search path (exit 2)
    Unsupported,       // the driver or the system does not offer this
    PermissionDenied,  // the kernel or the policy said no
    Busy,              // another transaction holds the interface
    Kernel,            // a netlink/ioctl request failed (errno + extack)
    Io,                // file or socket I/O failed
    Internal,          // a bug or an impossible reply
};

struct Error {
    Errc code = Errc::Internal;
    int sys_errno = 0;           // errno where one applies, else 0
    std::string context;         // "p4p1: rings.rx=8192: set" or "file:line:column"
    std::string message;         // human sentence, no trailing period
    std::string kernel_message;  // extack text from the kernel, if any

    // "context: message (kernel: extack)"
    [[nodiscard]] std::string str() const;

    // True when this error means "the caller asked for something wrong",
    // i.e. nothing was changed and exit status 2 applies.
    [[nodiscard]] bool is_user_error() const;

    // Prefix the context, e.g. with the interface name: "p4p1: " + context.
    [[nodiscard]] Error within(std::string_view outer) &&;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(Errc code, std::string context, std::string message) {
    return std::unexpected(Error{code, 0, std::move(context), std::move(message), {}});
}

// An error from a failed system call; message is strerror(err).
std::unexpected<Error> fail_errno(int err, std::string context, Errc code = Errc::Io);

const char* errc_name(Errc code);

}  // namespace nictune
