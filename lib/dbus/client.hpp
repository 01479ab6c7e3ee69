// nictunectl's side of org.nictune1: calls nictuned over D-Bus and returns
// the JSON report of each method (the same JSON a direct run produces).
// D-Bus errors come back as engine errors (org.nictune1.Error.NoSuchInterface
// -> Errc::NoSuchInterface, ...) with the fields nictuned sends with them
// (interface, setting, context, errno, the kernel's message:
// error_details.hpp), so exit statuses and the JSON error object do not
// depend on the path.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace nictune::dbus {

// Audit's optional flags beyond "all"; only those that differ from the
// defaults are sent, so that an older nictuned still answers.
struct AuditFlags {
    bool health = true;
    std::optional<double> rtt_ms;
};

// A confirmed apply (Apply's "confirm_timeout"): nictuned holds the
// transaction open until confirm() or abort() (or the timeout, or this
// connection's end).
struct ConfirmFlags {
    uint32_t timeout_seconds = 0;
    std::string peer;  // what will be checked, for nictuned's log and Status
};

// An abstract client: nictunectl gets the one the bus module
// (lib/buslink/) makes, so that sdbus-c++ and libsystemd are loaded only
// when a command talks to nictuned; nictuned and the tests link the
// sdbus-c++ implementation (client.cpp) directly. No method throws.
class Client {
  public:
    // Connects to the bus (`address` empty: the system bus, honouring
    // DBUS_SYSTEM_BUS_ADDRESS) and checks that nictuned owns org.nictune1.
    // Never D-Bus-activates it. nullptr with *why when it is not there (or,
    // in nictunectl, when the bus module cannot be loaded: "cannot load
    // PATH: reason").
    static std::unique_ptr<Client> connect(const std::string& address, std::string* why);
    virtual ~Client() = default;
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    virtual Result<nlohmann::json> audit(const std::vector<std::string>& interfaces,
                                         const std::string& profile, bool all,
                                         const AuditFlags& extra = {}) = 0;
    virtual Result<nlohmann::json> plan(const std::string& profile,
                                        const std::vector<std::string>& interfaces, bool force) = 0;
    virtual Result<nlohmann::json> apply(const std::string& profile,
                                         const std::vector<std::string>& interfaces, bool force,
                                         bool keep_going,
                                         const std::optional<ConfirmFlags>& confirm = {}) = 0;
    // Whether nictuned offers confirmed apply (its interface has Confirm):
    // asked by introspection, before anything is applied. An older nictuned
    // answers false.
    virtual Result<bool> has_confirm() = 0;
    virtual Result<nlohmann::json> confirm(const std::string& transaction) = 0;
    virtual Result<nlohmann::json> abort(const std::string& transaction,
                                         const std::string& reason) = 0;
    virtual Result<nlohmann::json> rollback(const std::string& interface) = 0;
    // All of them in one call (RollbackInterfaces): one result each, in
    // order, an error where Rollback alone would have raised one. A nictuned
    // without that method gets one Rollback call per interface. The outer
    // error: the call itself failed (not authorized, bad name, no reply).
    virtual Result<std::vector<Result<nlohmann::json>>> rollback(
        const std::vector<std::string>& interfaces) = 0;
    virtual Result<nlohmann::json> profiles() = 0;
    virtual Result<nlohmann::json> status() = 0;
    virtual Result<void> reload() = 0;

  protected:
    Client() = default;
};

// Errc for an org.nictune1.Error.* name (Errc::Io for anything else, e.g.
// a timeout or the daemon going away).
Errc errc_from_dbus(const std::string& name);

}  // namespace nictune::dbus
