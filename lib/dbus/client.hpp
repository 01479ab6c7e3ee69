// nictunectl's side of org.nictune1: calls nictuned over D-Bus and returns
// the JSON report of each method (the same JSON a direct run produces).
// D-Bus errors come back as engine errors (org.nictune1.Error.NoSuchInterface
// -> Errc::NoSuchInterface, ...), so exit statuses do not depend on the path.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace sdbus {
class IConnection;
}

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

class Client {
  public:
    // Connects to the bus (`address` empty: the system bus, honouring
    // DBUS_SYSTEM_BUS_ADDRESS) and checks that nictuned owns org.nictune1.
    // Never D-Bus-activates it. nullptr with *why when it is not there.
    static std::unique_ptr<Client> connect(const std::string& address, std::string* why);
    ~Client();

    Result<nlohmann::json> audit(const std::vector<std::string>& interfaces,
                                 const std::string& profile, bool all,
                                 const AuditFlags& extra = {});
    Result<nlohmann::json> plan(const std::string& profile,
                                const std::vector<std::string>& interfaces, bool force);
    Result<nlohmann::json> apply(const std::string& profile,
                                 const std::vector<std::string>& interfaces, bool force,
                                 bool keep_going, const std::optional<ConfirmFlags>& confirm = {});
    // Whether nictuned offers confirmed apply (its interface has Confirm):
    // asked by introspection, before anything is applied. An older nictuned
    // answers false.
    Result<bool> has_confirm();
    Result<nlohmann::json> confirm(const std::string& transaction);
    Result<nlohmann::json> abort(const std::string& transaction, const std::string& reason);
    Result<nlohmann::json> rollback(const std::string& interface);
    // All of them in one call (RollbackInterfaces): one result each, in
    // order, an error where Rollback alone would have raised one. A nictuned
    // without that method gets one Rollback call per interface. The outer
    // error: the call itself failed (not authorized, bad name, no reply).
    Result<std::vector<Result<nlohmann::json>>> rollback(
        const std::vector<std::string>& interfaces);
    Result<nlohmann::json> profiles();
    Result<nlohmann::json> status();
    Result<void> reload();

  private:
    Client() = default;
    std::unique_ptr<sdbus::IConnection> conn_;
};

// Errc for an org.nictune1.Error.* name (Errc::Io for anything else, e.g.
// a timeout or the daemon going away).
Errc errc_from_dbus(const std::string& name);

}  // namespace nictune::dbus
