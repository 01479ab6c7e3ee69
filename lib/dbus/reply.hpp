// One call to nictuned and its reply, with an error reply's details
// (error_details.hpp). Not sdbus-c++'s synchronous call: under it,
// sd_bus_call keeps only an error reply's name and message, and nictuned's
// carries the error's fields after the message. The asynchronous call hands
// its handler the reply itself. Header-only: the client (client.cpp, in the
// bus module) and the tests use it; the core links no sdbus-c++.
#pragma once

#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>

#include <cerrno>
#include <expected>
#include <optional>
#include <string>

#include "dbus/error_details.hpp"
#include "util/error.hpp"

namespace nictune::dbus {

// A call that failed, as the reply said: the D-Bus error and, from a
// nictuned that sends them, the error's fields.
struct CallError {
    sdbus::Error error;
    std::optional<ErrorDetails> details;
};
template <class T>
using CallResult = std::expected<T, CallError>;

// The `details` of one of nictuned's error replies; none from an older
// nictuned (the message alone), from anyone else (the bus's own errors) or
// when the second argument is of another type. Never throws: it runs inside
// sdbus-c++'s reply handler, which lets nothing but sdbus::Error pass.
inline std::optional<ErrorDetails> details_of(sdbus::MethodReply& reply, const std::string& name) {
    if (!errc_from_dbus_name(name)) return std::nullopt;
    try {
        // sd-bus has read the message string already, for the reply's
        // sd_bus_error: from the first argument again.
        reply.rewind(true);
        std::string message;
        reply >> message;
        std::string type, contents;
        reply.peekType(type, contents);
        if (type != kErrorDetailsType || contents != kErrorDetailsContents) return std::nullopt;
        ErrorDetails details;
        reply >> details;
        return details;
    } catch (...) {
        return std::nullopt;
    }
}

// Sends `call` through `proxy` and waits for its reply on `conn`, which
// runs no event loop thread (nictunectl's does not): this loop processes
// the connection until the reply is there. The call's timeout, the
// connection's method call timeout, also ends it: sd-bus then answers the
// call itself with org.freedesktop.DBus.Error.NoReply. Throws sdbus::Error
// only when the connection itself fails.
inline CallResult<sdbus::MethodReply> send_and_wait(sdbus::IConnection& conn, sdbus::IProxy& proxy,
                                                    const sdbus::MethodCall& call) {
    std::optional<CallResult<sdbus::MethodReply>> got;
    auto pending =
        proxy.callMethod(call, [&](sdbus::MethodReply& reply, const sdbus::Error* error) {
            if (error)
                got = std::unexpected(CallError{*error, details_of(reply, error->getName())});
            else
                got = reply;
        });
    while (true) {
        // Whether it did anything is no sign that the reply is there, nor
        // the reverse: sd_bus_process returns what the reply handler
        // returned for the timeout's NoReply (sdbus-c++'s: 0), so `got` is
        // looked at after every round.
        const bool processed = conn.processPendingRequest();
        if (got) break;
        if (processed) continue;
        const auto poll_data = conn.getEventLoopPollData();
        pollfd fd{poll_data.fd, poll_data.events, 0};
        if (::poll(&fd, 1, poll_data.getPollTimeout()) < 0 && errno != EINTR)
            throw sdbus::createError(errno, "cannot wait for nictuned's reply");
    }
    return std::move(*got);
}

}  // namespace nictune::dbus
