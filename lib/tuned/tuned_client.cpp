#include "tuned/tuned_client.hpp"

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <memory>

namespace nictune::tuned {
namespace {

constexpr const char* kTunedName = "com.redhat.tuned";
constexpr const char* kTunedPath = "/Tuned";
constexpr const char* kTunedInterface = "com.redhat.tuned.control";
constexpr const char* kBusName = "org.freedesktop.DBus";
constexpr const char* kBusPath = "/org/freedesktop/DBus";
// A hung bus or a stuck tuned must not hang an audit.
constexpr std::chrono::seconds kCallTimeout{5};

std::unique_ptr<sdbus::IConnection> connect(const Options& opts) {
    auto conn = opts.bus_address.empty()
                    ? sdbus::createSystemBusConnection()
                    : sdbus::createSessionBusConnectionWithAddress(opts.bus_address);
    conn->setMethodCallTimeout(kCallTimeout);
    return conn;
}

std::string bus_label(const Options& opts) {
    return opts.bus_address.empty() ? "the system bus" : "bus " + opts.bus_address;
}

std::string describe(const sdbus::Error& e) {
    return e.getName() + ": " + e.getMessage();
}

// tuned's unique connection name, or nullopt when nobody owns
// com.redhat.tuned. Calls then go to the unique name: a message to the
// well-known name would make the bus start tuned if it had just exited,
// and an audit must never start it.
std::optional<std::string> tuned_owner(sdbus::IConnection& conn) {
    auto bus = sdbus::createProxy(conn, kBusName, kBusPath);
    bool has_owner = false;
    bus->callMethod("NameHasOwner")
        .onInterface(kBusName)
        .withTimeout(kCallTimeout)
        .withArguments(std::string(kTunedName))
        .storeResultsTo(has_owner);
    if (!has_owner) return std::nullopt;
    std::string owner;
    try {
        bus->callMethod("GetNameOwner")
            .onInterface(kBusName)
            .withTimeout(kCallTimeout)
            .withArguments(std::string(kTunedName))
            .storeResultsTo(owner);
    } catch (const sdbus::Error& e) {
        // Gone between the two calls.
        if (e.getName() == "org.freedesktop.DBus.Error.NameHasNoOwner") return std::nullopt;
        throw;
    }
    return owner;
}

}  // namespace

TunedState read_state(const Options& opts) {
    std::string why_not_dbus;
    try {
        auto conn = connect(opts);
        if (auto owner = tuned_owner(*conn)) {
            auto proxy = sdbus::createProxy(*conn, *owner, kTunedPath);
            std::string profile;
            proxy->callMethod("active_profile")
                .onInterface(kTunedInterface)
                .withTimeout(kCallTimeout)
                .storeResultsTo(profile);
            TunedState st;
            st.source = TunedSource::Dbus;
            if (!profile.empty()) st.active_profile = std::move(profile);
            st.detail = "answered by tuned on " + bus_label(opts);
            return st;
        }
        why_not_dbus = "tuned not running on " + bus_label(opts);
    } catch (const sdbus::Error& e) {
        why_not_dbus = "tuned not reachable on " + bus_label(opts) + " (" + describe(e) + ")";
    } catch (const std::exception& e) {
        why_not_dbus = "tuned not reachable on " + bus_label(opts) + " (" + e.what() + ")";
    }
    try {
        return read_files(opts, std::move(why_not_dbus));
    } catch (const std::exception& e) {
        TunedState st;
        st.detail = "tuned state unreadable: " + std::string(e.what());
        return st;
    }
}

Result<void> switch_profile(const Options& opts, const std::string& profile) {
    const std::string context = "tuned.profile=\"" + profile + "\": set";
    if (profile.empty()) return fail(Errc::InvalidArgument, context, "empty profile name");
    std::unique_ptr<sdbus::IConnection> conn;
    try {
        conn = connect(opts);
    } catch (const sdbus::Error& e) {
        // No bus means no tuned daemon to ask.
        return fail(Errc::Unsupported, context,
                    "cannot reach " + bus_label(opts) + ": " + describe(e));
    } catch (const std::exception& e) {
        return fail(Errc::Unsupported, context,
                    "cannot reach " + bus_label(opts) + ": " + e.what());
    }
    try {
        auto owner = tuned_owner(*conn);
        if (!owner)
            return fail(Errc::Unsupported, context, "tuned is not running on " + bus_label(opts));
        auto proxy = sdbus::createProxy(*conn, *owner, kTunedPath);
        sdbus::Struct<bool, std::string> result;
        proxy->callMethod("switch_profile")
            .onInterface(kTunedInterface)
            .withTimeout(kCallTimeout)
            .withArguments(profile)
            .storeResultsTo(result);
        if (!result.get<0>()) {
            const std::string& why = result.get<1>();
            return fail(Errc::Kernel, context,
                        "tuned refused" + (why.empty() ? std::string() : ": " + why));
        }
        return {};
    } catch (const sdbus::Error& e) {
        const std::string& name = e.getName();
        Errc code = Errc::Io;
        if (name == "org.freedesktop.DBus.Error.AccessDenied" ||
            name == "org.freedesktop.DBus.Error.AuthFailed" ||
            name == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")
            code = Errc::PermissionDenied;
        else if (name == "org.freedesktop.DBus.Error.ServiceUnknown" ||
                 name == "org.freedesktop.DBus.Error.NameHasNoOwner" ||
                 name == "org.freedesktop.DBus.Error.FileNotFound" ||
                 name == "org.freedesktop.DBus.Error.NoServer")
            code = Errc::Unsupported;
        return fail(code, context, "D-Bus: " + describe(e));
    } catch (const std::exception& e) {
        return fail(Errc::Internal, context, e.what());
    }
}

}  // namespace nictune::tuned
