// The org.nictune1.Manager object: the generated adaptor implemented over
// the engine. Every handler validates its arguments, authorizes changes, and
// turns every failure into a named D-Bus error: no exception other than
// sdbus::Error leaves a handler (sdbus-c++ would terminate the process).
#pragma once

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/manager.hpp"
#include "manager_adaptor.h"
#include "service/authorizer.hpp"
#include "watch/watcher.hpp"

namespace nictune::service {

inline constexpr const char* kBusName = "org.nictune1";
inline constexpr const char* kObjectPath = "/org/nictune1";

// org.nictune1.Error.<Name> (util/error's table) for an engine error.
sdbus::Error to_dbus_error(const Error& e);

// What the client (or nictune-verify@.service) checks before it confirms a
// pending transaction: for Status, the journal, and `nictunectl confirm`.
struct PendingCheck {
    std::string peer;                // "" when the client did not say
    std::optional<double> min_gbps;  // a binding's threshold
    std::string describe() const;    // "peer 10.0.0.2", "confirmation"
};

class ManagerObject final : public sdbus::AdaptorInterfaces<org::nictune1::Manager_adaptor> {
  public:
    using Base = sdbus::AdaptorInterfaces<org::nictune1::Manager_adaptor>;
    ManagerObject(sdbus::IConnection& conn, Manager& manager, watch::Watcher& watcher,
                  Authorizer& auth, std::function<Result<void>()> reload,
                  std::function<nlohmann::json()> status_extra);
    ~ManagerObject();

    // Confirmed apply (org.nictune1.Manager.xml): a transaction applied and
    // verified, held open until Confirm, Abort, its deadline, or (with a
    // client) the client's connection leaving the bus. A binding's
    // transaction has no client; nictuned asks systemd to start
    // nictune-verify@TRANSACTION.service for it.
    void hold(std::unique_ptr<HeldTransaction> held, const std::string& client, PendingCheck check,
              std::chrono::seconds timeout, const std::string& reason);
    // The earliest deadline of a pending transaction (CLOCK_MONOTONIC usec),
    // UINT64_MAX when none: the event loop's poll timeout includes it.
    [[nodiscard]] uint64_t next_deadline() const;
    // Rolls back the pending transactions whose deadline has passed.
    void expire(uint64_t now_usec);
    // Rolls back every pending transaction (nictuned is stopping).
    void abort_all(const std::string& why);

  private:
    using Findings = std::vector<sdbus::Struct<std::string, std::string, std::string, std::string,
                                               std::string, std::string, std::string>>;
    using Steps = std::vector<sdbus::Struct<std::string, int32_t, std::string, std::string,
                                            std::string, std::string, std::string, bool>>;
    using Outcomes = std::vector<sdbus::Struct<std::string, std::string, std::string, std::string,
                                               std::string, std::string>>;
    using Restored =
        std::vector<sdbus::Struct<std::string, std::string, std::string, bool, std::string>>;
    using Flags = std::map<std::string, sdbus::Variant>;

    std::tuple<Findings, std::string> Audit(const std::vector<std::string>& interfaces,
                                            const std::string& profile,
                                            const Flags& flags) override;
    std::tuple<Steps, std::string> Plan(const std::string& profile,
                                        const std::vector<std::string>& interfaces,
                                        const Flags& flags) override;
    std::tuple<std::string, std::string, Outcomes, std::string> Apply(
        const std::string& profile, const std::vector<std::string>& interfaces,
        const Flags& flags) override;
    std::tuple<std::string, std::string> Confirm(const std::string& transaction) override;
    std::tuple<std::string, std::string> Abort(const std::string& transaction,
                                               const std::string& reason) override;
    std::tuple<std::string, Restored, std::string> Rollback(const std::string& interface) override;
    std::tuple<std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>,
               std::string>
    RollbackInterfaces(const std::vector<std::string>& interfaces) override;
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> ListProfiles()
        override;
    std::tuple<std::vector<sdbus::Struct<std::string, int32_t, std::string, std::string,
                                         std::string, bool>>,
               std::string>
    Status() override;
    void Reload() override;
    std::string Version() override;

    void authorize();

    struct Pending {
        std::unique_ptr<HeldTransaction> held;
        std::string client;  // the caller's unique bus name; "" for a binding's
        PendingCheck check;
        std::string reason;  // why it was applied: request, boot, hotplug, ...
        std::chrono::seconds timeout{0};
        uint64_t deadline = 0;    // CLOCK_MONOTONIC usec
        sdbus::Slot client_gone;  // the NameOwnerChanged match for `client`
    };
    // Ends a pending transaction: commit (why empty) or abort, notes the
    // result with the watcher (log, Applied signal) and remembers it for a
    // late Confirm/Abort. Returns the final result.
    ApplyResult finish(const std::string& transaction, const std::string& how,
                       std::optional<Error> why);
    // Confirm and Abort: finish() a pending transaction, or answer what a
    // transaction that already ended ended as; an unknown one is an error.
    std::tuple<std::string, std::string> settle(const std::string& transaction,
                                                const std::string& how, std::optional<Error> why);
    void client_left(const std::string& name);
    void start_verifier(const std::string& transaction);
    nlohmann::json pending_json() const;

    std::map<std::string, Pending> pending_;
    // Transactions that ended recently (a Confirm that comes after the
    // timeout learns what happened): transaction -> (result, report).
    std::deque<std::pair<std::string, std::pair<std::string, std::string>>> ended_;
    std::unique_ptr<sdbus::IProxy> systemd_;

    Manager& manager_;
    watch::Watcher& watcher_;
    Authorizer& auth_;
    std::function<Result<void>()> reload_;
    std::function<nlohmann::json()> status_extra_;
};

}  // namespace nictune::service
