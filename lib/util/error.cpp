#include "util/error.hpp"

#include <cerrno>
#include <cstring>

namespace nictune {

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
    switch (code) {
        case Errc::InvalidArgument:
        case Errc::NoSuchInterface:
        case Errc::InvalidProfile:
        case Errc::NoSuchProfile:
            return true;
        default:
            return false;
    }
}

Error Error::within(std::string_view outer) && {
    if (context.empty())
        context = outer;
    else
        context = std::string(outer) + ": " + context;
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
    switch (code) {
        case Errc::InvalidArgument:
            return "InvalidArgument";
        case Errc::NoSuchInterface:
            return "NoSuchInterface";
        case Errc::InvalidProfile:
            return "InvalidProfile";
        case Errc::NoSuchProfile:
            return "NoSuchProfile";
        case Errc::Unsupported:
            return "Unsupported";
        case Errc::PermissionDenied:
            return "PermissionDenied";
        case Errc::Busy:
            return "Busy";
        case Errc::Kernel:
            return "Kernel";
        case Errc::Io:
            return "Io";
        case Errc::Internal:
            return "Internal";
    }
    return "Internal";
}

}  // namespace nictune
