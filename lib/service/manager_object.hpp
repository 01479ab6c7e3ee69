// The org.nictune1.Manager object: the generated adaptor implemented over
// the engine. Every handler validates its arguments, authorizes changes, and
// answers every failure with a named D-Bus error that carries the error's
// fields: no exception leaves a handler (sdbus-c++ would terminate the
// process on anything but sdbus::Error).
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
    using RollbackResults =
        std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>;
    using Profiles = std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>;
    using Tracked = std::vector<
        sdbus::Struct<std::string, int32_t, std::string, std::string, std::string, bool>>;
    using Flags = std::map<std::string, sdbus::Variant>;

    // The handlers. Every method is annotated Async "server" in the XML, so
    // that the handler sends its own reply: an error reply then carries the
    // error's fields (respond, raise). Each still runs to its end on the
    // event loop, one call at a time, and replies before it returns.
    void Audit(sdbus::Result<Findings, std::string>&& reply, std::vector<std::string> interfaces,
               std::string profile, Flags flags) override;
    void Plan(sdbus::Result<Steps, std::string>&& reply, std::string profile,
              std::vector<std::string> interfaces, Flags flags) override;
    void Apply(sdbus::Result<std::string, std::string, Outcomes, std::string>&& reply,
               std::string profile, std::vector<std::string> interfaces, Flags flags) override;
    void Confirm(sdbus::Result<std::string, std::string>&& reply, std::string transaction) override;
    void Abort(sdbus::Result<std::string, std::string>&& reply, std::string transaction,
               std::string reason) override;
    void Rollback(sdbus::Result<std::string, Restored, std::string>&& reply,
                  std::string interface) override;
    void RollbackInterfaces(sdbus::Result<RollbackResults, std::string>&& reply,
                            std::vector<std::string> interfaces) override;
    void ListProfiles(sdbus::Result<Profiles>&& reply) override;
    void Status(sdbus::Result<Tracked, std::string>&& reply) override;
    void Reload(sdbus::Result<>&& reply) override;
    std::string Version() override;

    // What the handlers do: the reply's values, or the error to raise.
    Result<std::tuple<Findings, std::string>> audit(const std::vector<std::string>& interfaces,
                                                    const std::string& profile, const Flags& flags);
    Result<std::tuple<Steps, std::string>> plan(const std::string& profile,
                                                const std::vector<std::string>& interfaces,
                                                const Flags& flags);
    Result<std::tuple<std::string, std::string, Outcomes, std::string>> apply(
        const std::string& profile, const std::vector<std::string>& interfaces, const Flags& flags);
    Result<std::tuple<std::string, Restored, std::string>> rollback(const std::string& interface);
    Result<std::tuple<RollbackResults, std::string>> rollback_interfaces(
        const std::vector<std::string>& interfaces);
    Result<std::tuple<Tracked, std::string>> status();

    // Sends what `work` returns: its values, or its error as raise() sends
    // it. Nothing `work` throws leaves the handler (sdbus-c++ would end the
    // process on anything but sdbus::Error): an exception is an Internal
    // error.
    template <class... T, class F>
    void respond(const char* method, const sdbus::Result<T...>& reply, F&& work);
    // Replies to `call` with `e`: its name and text, then its fields
    // (dbus/error_details.hpp). Without the call, or when that reply cannot
    // be built, `plain` sends the name and text alone.
    void raise(const char* method, const sdbus::MethodCall* call, const Error& e,
               const std::function<void(const sdbus::Error&)>& plain);
    Result<void> authorize();

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
    Result<std::tuple<std::string, std::string>> settle(const std::string& transaction,
                                                        const std::string& how,
                                                        std::optional<Error> why);
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
