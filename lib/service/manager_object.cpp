#include "service/manager_object.hpp"

#include <time.h>

#include <algorithm>
#include <limits>
#include <span>
#include <string_view>

#include "dbus/error_details.hpp"
#include "engine/health.hpp"
#include "report/json_report.hpp"
#include "report/plan_report.hpp"
#include "service/log.hpp"
#include "util/json_writer.hpp"
#include "util/strings.hpp"

namespace nictune::service {
namespace {

constexpr std::size_t kMaxInterfaces = 4096;

// Every string a reply or an error carries: D-Bus takes only valid UTF-8,
// and sd-bus fails the whole message (sdbus-c++ throws) on anything else.
// Names are in text form already; a driver's version string, a profile
// file's name or an exception's text might not be.
std::string text(std::string_view s) {
    return to_valid_utf8(s);
}

// The caller's arguments are wrong; nothing was done.
std::unexpected<Error> invalid(std::string message) {
    return fail(Errc::InvalidArgument, "", std::move(message));
}

// Names in nictune's text form ('\xff\xfeq'): a name or an alternative
// name, resolved as the kernel does.
Result<void> check_interfaces(const std::vector<std::string>& names) {
    if (names.size() > kMaxInterfaces)
        return invalid("too many interfaces (" + std::to_string(names.size()) + ")");
    for (const auto& n : names)
        if (!valid_name_or_altname(n))
            return invalid("interface name " + quote_name(n.substr(0, 64)) + " is not valid");
    return {};
}

// A flag's name and D-Bus type ("" takes any: the flag is refused by what
// it means, not by its type).
struct FlagSpec {
    std::string_view name;
    std::string_view type;
    std::string_view type_words;  // "a boolean", for the message
};

constexpr FlagSpec kAuditFlags[] = {{"all", "b", "a boolean"},
                                    {"health", "b", "a boolean"},
                                    {"rtt_ms", "d", "a double"},
                                    {"sample", "", ""}};
constexpr FlagSpec kPlanFlags[] = {{"force", "b", "a boolean"}};
constexpr FlagSpec kApplyFlags[] = {{"force", "b", "a boolean"},
                                    {"keep_going", "b", "a boolean"},
                                    {"confirm_timeout", "u", "an unsigned 32-bit integer (u)"},
                                    {"verify_peer", "s", "a string"}};

// Unknown keys and wrong types are the caller's error. Checked for all of
// them before any is read, so that reading one (flag_value) cannot fail.
Result<void> check_flags(const std::map<std::string, sdbus::Variant>& flags,
                         std::span<const FlagSpec> known) {
    auto spec = [&](const std::string& name) {
        return std::ranges::find(known, std::string_view(name), &FlagSpec::name);
    };
    for (const auto& [k, v] : flags)
        if (spec(k) == known.end()) return invalid("unknown flag " + quote(k.substr(0, 64)));
    for (const auto& [k, v] : flags)
        if (auto s = spec(k); !s->type.empty() && v.peekValueType() != s->type)
            return invalid("flag " + quote(k) + " must be " + std::string(s->type_words));
    return {};
}

// A flag that check_flags has passed; none when it was not sent.
template <class T>
std::optional<T> flag_value(const std::map<std::string, sdbus::Variant>& flags,
                            const std::string& name) {
    auto it = flags.find(name);
    if (it == flags.end()) return std::nullopt;
    return it->second.get<T>();
}

bool flag(const std::map<std::string, sdbus::Variant>& flags, const std::string& name) {
    return flag_value<bool>(flags, name).value_or(false);
}

// Audit's health flags: "health" (b, default true), "rtt_ms" (d). "sample"
// is refused: it would make the event loop sleep for one client;
// nictunectl samples in its own process.
Result<void> apply_health_flags(const std::map<std::string, sdbus::Variant>& flags,
                                AuditRequest& req) {
    if (auto health = flag_value<bool>(flags, "health")) req.health = *health;
    if (auto v = flag_value<double>(flags, "rtt_ms")) {
        if (!(*v >= 0.001 && *v <= 10000)) return invalid("flag 'rtt_ms' must be in 0.001..10000");
        req.rtt_ms = *v;
    }
    if (flags.contains("sample"))
        return invalid(
            "flag 'sample' is not taken over D-Bus: a sample would stop nictuned for its length; "
            "run nictunectl audit --sample, which samples in its own process");
    return {};
}

uint64_t monotonic_usec() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000U + static_cast<uint64_t>(ts.tv_nsec) / 1000U;
}

constexpr uint32_t kMaxConfirmTimeout = 3600;
constexpr std::size_t kMaxReason = 4096;
constexpr std::size_t kEndedKept = 64;

// Apply's "confirm_timeout" (u seconds), when given.
Result<std::optional<uint32_t>> confirm_timeout_flag(
    const std::map<std::string, sdbus::Variant>& flags) {
    const auto v = flag_value<uint32_t>(flags, "confirm_timeout");
    if (v && (*v < 1 || *v > kMaxConfirmTimeout))
        return invalid("flag 'confirm_timeout' must be 1.." + std::to_string(kMaxConfirmTimeout) +
                       " seconds");
    return v;
}

Result<std::string> string_flag(const std::map<std::string, sdbus::Variant>& flags,
                                const std::string& name) {
    std::string v = flag_value<std::string>(flags, name).value_or("");
    if (v.size() > 255) return invalid("flag " + quote(name) + " is longer than 255 bytes");
    return v;
}

Result<void> check_transaction_id(const std::string& transaction) {
    if (transaction.size() > 255) return invalid("transaction id too long");
    return {};
}

}  // namespace

sdbus::Error to_dbus_error(const Error& e) {
    return sdbus::Error(dbus_error_name(e.code), text(e.str()));
}

ManagerObject::ManagerObject(sdbus::IConnection& conn, Manager& manager, watch::Watcher& watcher,
                             Authorizer& auth, std::function<Result<void>()> reload,
                             std::function<nlohmann::json()> status_extra)
    : Base(conn, kObjectPath),
      manager_(manager),
      watcher_(watcher),
      auth_(auth),
      reload_(std::move(reload)),
      status_extra_(std::move(status_extra)) {
    registerAdaptor();
}

ManagerObject::~ManagerObject() {
    unregisterAdaptor();
}

// ---- replies ----

template <class... T, class F>
void ManagerObject::respond(const char* method, const sdbus::Result<T...>& reply, F&& work) {
    std::optional<Error> failed;
    std::optional<sdbus::MethodCall> call;
    try {
        // The call this handler answers, kept before the work runs (a call
        // the work makes on the bus must not change which one it is).
        // sdbus::Result holds it too, but can send an error's name and
        // message and nothing more. While a handler runs, the message being
        // processed is that call: sdbus-c++ (1.2's
        // Object::sdbus_method_callback) makes it a MethodCall and points
        // getCurrentlyProcessedMessage() at it.
        if (const sdbus::Message* msg = getObject().getCurrentlyProcessedMessage())
            call = *static_cast<const sdbus::MethodCall*>(msg);
        auto r = work();
        if (r) {
            std::apply([&](const auto&... values) { reply.returnResults(values...); }, *r);
            return;
        }
        failed = std::move(r.error());
    } catch (const sdbus::Error& e) {
        // sdbus-c++'s own (a reply it cannot send): its name, as before.
        try {
            reply.returnError(e);
        } catch (...) {
            log(Level::Error, std::string(method) + ": cannot send the error " + e.getName());
        }
        return;
    } catch (const std::exception& e) {
        // Also a reply that cannot be sent (sd-bus refuses a string that is
        // not UTF-8): the caller still gets an answer.
        log(Level::Error, std::string(method) + ": internal error: " + e.what());
        failed = Error{Errc::Internal, 0, "", text(std::string("internal error: ") + e.what()), {}};
    } catch (...) {
        log(Level::Error, std::string(method) + ": internal error");
        failed = Error{Errc::Internal, 0, "", "internal error", {}};
    }
    raise(method, call ? &*call : nullptr, *failed,
          [&](const sdbus::Error& plain) { reply.returnError(plain); });
}

void ManagerObject::raise(const char* method, const sdbus::MethodCall* call, const Error& e,
                          const std::function<void(const sdbus::Error&)>& plain) {
    try {
        const sdbus::Error named = to_dbus_error(e);
        try {
            if (call) {
                auto out = call->createErrorReply(named);
                out << dbus::error_details(e);
                out.send();
                return;
            }
        } catch (const std::exception& x) {
            log(Level::Warning,
                std::string(method) + ": cannot send the error's details: " + x.what());
        }
        plain(named);
    } catch (...) {
        log(Level::Error, std::string(method) + ": cannot send the error " +
                              dbus_error_name(e.code) + ": " + e.str());
    }
}

Result<void> ManagerObject::authorize() {
    const sdbus::Message* msg = getObject().getCurrentlyProcessedMessage();
    if (!msg) return fail(Errc::PermissionDenied, "", "no caller");
    return auth_.check(*msg, kApplyAction);
}

// ---- the methods ----

void ManagerObject::Audit(sdbus::Result<Findings, std::string>&& reply,
                          std::vector<std::string> interfaces, std::string profile, Flags flags) {
    respond("Audit", reply, [&] { return audit(interfaces, profile, flags); });
}

Result<std::tuple<ManagerObject::Findings, std::string>> ManagerObject::audit(
    const std::vector<std::string>& interfaces, const std::string& profile, const Flags& flags) {
    if (auto ok = check_interfaces(interfaces); !ok) return std::unexpected(ok.error());
    if (auto ok = check_flags(flags, kAuditFlags); !ok) return std::unexpected(ok.error());
    if (!profile.empty())
        if (auto ok = profile::validate_name(profile); !ok) return std::unexpected(ok.error());
    AuditRequest req;
    req.interfaces = interfaces;
    req.include_virtual = flag(flags, "all");
    if (!profile.empty()) req.profile = profile;
    if (auto ok = apply_health_flags(flags, req); !ok) return std::unexpected(ok.error());
    auto r = manager_.audit(req);
    if (!r) return std::unexpected(r.error());
    Findings out;
    for (const auto& a : r->interfaces)
        for (const auto& f : a.findings)
            out.emplace_back(a.state.id.name, severity_name(f.severity), text(f.key),
                             text(to_string(f.expected)), text(to_string(f.actual)),
                             text(f.message), text(f.fix));
    // The machine's own (softnet, irqbalance): no interface.
    if (r->health)
        for (const auto& f : r->health->findings)
            out.emplace_back("", severity_name(f.severity), text(f.key),
                             text(to_string(f.expected)), text(to_string(f.actual)),
                             text(f.message), text(f.fix));
    return std::tuple{std::move(out), report::audit_json_text(*r)};
}

void ManagerObject::Plan(sdbus::Result<Steps, std::string>&& reply, std::string profile,
                         std::vector<std::string> interfaces, Flags flags) {
    respond("Plan", reply, [&] { return plan(profile, interfaces, flags); });
}

Result<std::tuple<ManagerObject::Steps, std::string>> ManagerObject::plan(
    const std::string& profile, const std::vector<std::string>& interfaces, const Flags& flags) {
    if (auto ok = profile::validate_name(profile); !ok) return std::unexpected(ok.error());
    if (auto ok = check_interfaces(interfaces); !ok) return std::unexpected(ok.error());
    if (auto ok = check_flags(flags, kPlanFlags); !ok) return std::unexpected(ok.error());
    auto p = manager_.plan(ApplyRequest{profile, interfaces, flag(flags, "force"), true, false});
    if (!p) return std::unexpected(p.error());
    Steps out;
    auto add = [&](const std::string& iface, const PlanStep& s) {
        out.emplace_back(iface, s.order, text(s.setting.path()), text(to_string(s.current)),
                         text(to_string(s.target)), step_kind_name(s.kind), text(s.note),
                         s.resets_link);
    };
    for (const auto& i : p->interfaces)
        for (const auto& s : i.steps)
            add(i.id.name, s);
    for (const auto& s : p->system)
        add("", s);
    return std::tuple{std::move(out), report::plan_json_text(*p)};
}

void ManagerObject::Apply(sdbus::Result<std::string, std::string, Outcomes, std::string>&& reply,
                          std::string profile, std::vector<std::string> interfaces, Flags flags) {
    respond("Apply", reply, [&] { return apply(profile, interfaces, flags); });
}

Result<std::tuple<std::string, std::string, ManagerObject::Outcomes, std::string>>
ManagerObject::apply(const std::string& profile, const std::vector<std::string>& interfaces,
                     const Flags& flags) {
    if (auto ok = profile::validate_name(profile); !ok) return std::unexpected(ok.error());
    if (auto ok = check_interfaces(interfaces); !ok) return std::unexpected(ok.error());
    if (auto ok = check_flags(flags, kApplyFlags); !ok) return std::unexpected(ok.error());
    const auto confirm = confirm_timeout_flag(flags);
    if (!confirm) return std::unexpected(confirm.error());
    const auto peer = string_flag(flags, "verify_peer");
    if (!peer) return std::unexpected(peer.error());
    if (*confirm && flag(flags, "keep_going"))
        return invalid(
            "flag 'confirm_timeout' cannot go with 'keep_going': a held transaction must be "
            "whole to be undone whole");
    if (!peer->empty() && !*confirm) return invalid("flag 'verify_peer' needs 'confirm_timeout'");
    if (auto ok = authorize(); !ok) return std::unexpected(ok.error());
    ApplyOptions hooks;
    std::unique_ptr<HeldTransaction> held;
    PendingCheck check{*peer, std::nullopt};
    if (*confirm) {
        hooks.hold = &held;
        hooks.check_name = check.describe();
    }
    auto r = manager_.apply(
        ApplyRequest{profile, interfaces, flag(flags, "force"), false, flag(flags, "keep_going")},
        hooks);
    if (!r) return std::unexpected(r.error());
    if (r->result == TxResult::Refused && r->refusals.empty() && r->error &&
        r->error->code == Errc::Busy)
        return std::unexpected(*r->error);
    if (held) {
        const sdbus::Message* msg = getObject().getCurrentlyProcessedMessage();
        hold(std::move(held), msg ? msg->getSender() : std::string(), std::move(check),
             std::chrono::seconds(**confirm), "request");
    } else {
        watcher_.note_request(*r);
    }
    Outcomes out;
    auto add = [&](const std::string& iface, const StepResult& s) {
        out.emplace_back(iface, text(s.step.setting.path()), outcome_name(s.outcome),
                         text(to_string(s.step.current)), text(to_string(s.actual)),
                         s.error ? text(s.error->str()) : std::string());
    };
    for (const auto& i : r->interfaces)
        for (const auto& s : i.steps)
            add(i.name, s);
    for (const auto& s : r->system)
        add("", s);
    return std::tuple{text(r->transaction), std::string(tx_result_name(r->result)), std::move(out),
                      report::apply_json_text(*r)};
}

// ---- confirmed apply: pending transactions ----

std::string PendingCheck::describe() const {
    return peer.empty() ? std::string("confirmation") : "peer " + peer;
}

void ManagerObject::hold(std::unique_ptr<HeldTransaction> held, const std::string& client,
                         PendingCheck check, std::chrono::seconds timeout,
                         const std::string& reason) {
    const ApplyResult& r = held->result();
    const std::string tx = r.transaction;
    Pending p;
    p.client = client;
    p.check = std::move(check);
    p.reason = reason;
    p.timeout = timeout;
    p.deadline = monotonic_usec() + static_cast<uint64_t>(timeout.count()) * 1000000U;
    watcher_.note_request(r, reason);
    log(Level::Notice,
        "transaction " + tx + " (profile " + r.profile + ", " + join(held->interfaces(), ", ") +
            ") applied; waiting up to " + std::to_string(timeout.count()) + " s for " +
            p.check.describe() + (client.empty() ? std::string() : " from " + client),
        {"", r.profile, "", tx});
    p.held = std::move(held);
    auto& slot = pending_[tx];
    slot = std::move(p);
    if (!client.empty()) {
        // The client probes in its own process; if it goes away without a
        // verdict, nobody will give one: roll back now rather than at the
        // deadline.
        try {
            auto& conn = getObject().getConnection();
            slot.client_gone = conn.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                "member='NameOwnerChanged',arg0='" +
                    client + "'",
                [this](sdbus::Message& m) {
                    try {
                        std::string name, old_owner, new_owner;
                        m >> name >> old_owner >> new_owner;
                        if (new_owner.empty()) client_left(name);
                    } catch (const std::exception& e) {
                        log(Level::Error, std::string("NameOwnerChanged: ") + e.what());
                    }
                });
            // It may have left before the match was in place.
            auto bus = sdbus::createProxy(conn, "org.freedesktop.DBus", "/org/freedesktop/DBus");
            bool has = true;
            bus->callMethod("NameHasOwner")
                .onInterface("org.freedesktop.DBus")
                .withTimeout(std::chrono::seconds(5))
                .withArguments(client)
                .storeResultsTo(has);
            if (!has) client_left(client);
        } catch (const std::exception& e) {
            // The deadline still ends it.
            log(Level::Warning, "cannot watch the client " + client + " of transaction " + tx +
                                    ": " + e.what() + "; the timeout still applies");
        }
    } else {
        start_verifier(tx);
    }
}

void ManagerObject::start_verifier(const std::string& tx) {
    // A binding's check needs IP sockets, which nictuned's unit does not
    // allow: systemd runs it in nictune-verify@.service (nictunectl confirm).
    // Asynchronous: the event loop never waits for systemd.
    const std::string unit = "nictune-verify@" + tx + ".service";
    try {
        if (!systemd_)
            systemd_ = sdbus::createProxy(getObject().getConnection(), "org.freedesktop.systemd1",
                                          "/org/freedesktop/systemd1");
        systemd_->callMethodAsync("StartUnit")
            .onInterface("org.freedesktop.systemd1.Manager")
            .withArguments(unit, std::string("replace"))
            .uponReplyInvoke([unit](const sdbus::Error* e, sdbus::ObjectPath) {
                if (e)
                    log(Level::Warning, "cannot start " + unit + ": " + e->getName() + ": " +
                                            e->getMessage() +
                                            "; the transaction rolls back at its timeout");
                else
                    log(Level::Info, "started " + unit);
            });
    } catch (const std::exception& e) {
        log(Level::Warning, "cannot start " + unit + ": " + e.what() +
                                "; the transaction rolls back at its timeout");
    }
}

ApplyResult ManagerObject::finish(const std::string& tx, const std::string& how,
                                  std::optional<Error> why) {
    auto it = pending_.find(tx);
    Pending p = std::move(it->second);
    pending_.erase(it);
    ApplyResult r = why ? p.held->abort(std::move(*why)) : p.held->commit();
    // The end of every pending transaction is in the journal, also for
    // interfaces no binding tracks.
    log(r.result == TxResult::Applied ? Level::Notice : Level::Warning,
        "transaction " + tx + " (profile " + r.profile + ", " + join(p.held->interfaces(), ", ") +
            "): " + tx_result_name(r.result) + " (" + how + ")" +
            (r.error ? ": " + r.error->str() : std::string()),
        {"", r.profile, "", tx});
    watcher_.note_request(r, how);
    ended_.emplace_back(
        tx, std::pair{std::string(tx_result_name(r.result)), report::apply_json_text(r)});
    while (ended_.size() > kEndedKept)
        ended_.pop_front();
    return r;
}

void ManagerObject::client_left(const std::string& name) {
    std::vector<std::string> gone;
    for (const auto& [tx, p] : pending_)
        if (p.client == name) gone.push_back(tx);
    for (const auto& tx : gone)
        finish(
            tx, "disconnect",
            Error{Errc::Io, 0, "", "the client " + name + " left the bus before confirming", {}});
}

uint64_t ManagerObject::next_deadline() const {
    uint64_t d = std::numeric_limits<uint64_t>::max();
    for (const auto& [tx, p] : pending_)
        d = std::min(d, p.deadline);
    return d;
}

void ManagerObject::expire(uint64_t now) {
    std::vector<std::pair<std::string, std::chrono::seconds>> due;
    for (const auto& [tx, p] : pending_)
        if (p.deadline <= now) due.emplace_back(tx, p.timeout);
    for (const auto& [tx, timeout] : due)
        finish(tx, "timeout",
               Error{Errc::Io,
                     0,
                     "",
                     "no confirmation within " + std::to_string(timeout.count()) + " s",
                     {}});
}

void ManagerObject::abort_all(const std::string& why) {
    std::vector<std::string> all;
    for (const auto& [tx, p] : pending_)
        all.push_back(tx);
    for (const auto& tx : all)
        finish(tx, "stopping", Error{Errc::Io, 0, "", why, {}});
}

nlohmann::json ManagerObject::pending_json() const {
    nlohmann::json out = nlohmann::json::array();
    const uint64_t now = monotonic_usec();
    for (const auto& [tx, p] : pending_) {
        const ApplyResult& r = p.held->result();
        out.push_back(
            {{"transaction", tx},
             {"profile", r.profile},
             {"interfaces", p.held->interfaces()},
             {"peer",
              p.check.peer.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.check.peer)},
             {"min_gbps", p.check.min_gbps ? nlohmann::json(*p.check.min_gbps) : nlohmann::json()},
             {"client", p.client.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.client)},
             {"reason", p.reason},
             {"timeout", p.timeout.count()},
             {"seconds_left",
              p.deadline > now ? static_cast<double>(p.deadline - now) / 1e6 : 0.0}});
    }
    return out;
}
void ManagerObject::Confirm(sdbus::Result<std::string, std::string>&& reply,
                            std::string transaction) {
    respond("Confirm", reply, [&]() -> Result<std::tuple<std::string, std::string>> {
        if (auto ok = check_transaction_id(transaction); !ok) return std::unexpected(ok.error());
        if (auto ok = authorize(); !ok) return std::unexpected(ok.error());
        return settle(transaction, "confirmed", std::nullopt);
    });
}

Result<std::tuple<std::string, std::string>> ManagerObject::settle(const std::string& transaction,
                                                                   const std::string& how,
                                                                   std::optional<Error> why) {
    if (pending_.contains(transaction)) {
        auto r = finish(transaction, how, std::move(why));
        return std::tuple{std::string(tx_result_name(r.result)), report::apply_json_text(r)};
    }
    for (const auto& [tx, ended] : ended_)
        if (tx == transaction) return std::tuple{ended.first, ended.second};
    return invalid("no transaction " + quote(text(transaction)) + " is waiting for confirmation");
}

void ManagerObject::Abort(sdbus::Result<std::string, std::string>&& reply, std::string transaction,
                          std::string reason) {
    respond("Abort", reply, [&]() -> Result<std::tuple<std::string, std::string>> {
        if (auto ok = check_transaction_id(transaction); !ok) return std::unexpected(ok.error());
        if (reason.size() > kMaxReason)
            return invalid("reason longer than " + std::to_string(kMaxReason) + " bytes");
        if (auto ok = authorize(); !ok) return std::unexpected(ok.error());
        return settle(transaction, "aborted",
                      Error{Errc::Io,
                            0,
                            "",
                            reason.empty() ? std::string("aborted by the client") : reason,
                            {}});
    });
}

void ManagerObject::Rollback(sdbus::Result<std::string, Restored, std::string>&& reply,
                             std::string interface) {
    respond("Rollback", reply, [&] { return rollback(interface); });
}

Result<std::tuple<std::string, ManagerObject::Restored, std::string>> ManagerObject::rollback(
    const std::string& interface) {
    if (auto ok = check_interfaces({interface}); !ok) return std::unexpected(ok.error());
    if (auto ok = authorize(); !ok) return std::unexpected(ok.error());
    auto r = manager_.rollback(interface);
    // Busy and the caller's own mistakes (an unknown interface) are errors.
    if (r.result == TxResult::Refused && r.error &&
        (r.error->code == Errc::Busy || r.error->is_user_error()))
        return std::unexpected(*r.error);
    // Under the device's current name: `interface` may be an alternative name.
    if (r.result == TxResult::RolledBack) watcher_.note_rollback(r.interface);
    Restored out;
    for (const auto& x : r.restored)
        out.emplace_back(x.interface, text(x.key), text(to_string(x.value)), x.ok, text(x.message));
    return std::tuple{std::string(r.nothing_saved ? "nothing_saved" : tx_result_name(r.result)),
                      std::move(out), report::rollback_json_text(r)};
}

void ManagerObject::RollbackInterfaces(sdbus::Result<RollbackResults, std::string>&& reply,
                                       std::vector<std::string> interfaces) {
    respond("RollbackInterfaces", reply, [&] { return rollback_interfaces(interfaces); });
}

Result<std::tuple<ManagerObject::RollbackResults, std::string>> ManagerObject::rollback_interfaces(
    const std::vector<std::string>& interfaces) {
    if (auto ok = check_interfaces(interfaces); !ok) return std::unexpected(ok.error());
    if (auto ok = authorize(); !ok) return std::unexpected(ok.error());
    auto rs = manager_.rollback(interfaces);
    RollbackResults out;
    std::string report = "[";
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const RollbackResult& r = rs[i];
        if (i) report += ',';
        // What Rollback would raise for this interface alone.
        if (r.result == TxResult::Refused && r.error &&
            (r.error->code == Errc::Busy || r.error->is_user_error())) {
            out.emplace_back(r.interface, std::string(tx_result_name(r.result)),
                             dbus_error_name(r.error->code), text(r.error->str()));
            // Its fields, as an error reply's details carry them (an older
            // client reads name and message and skips this).
            report += nlohmann::json{{"error", report::error_json(*r.error)}}.dump(
                -1, ' ', false, nlohmann::json::error_handler_t::replace);
            continue;
        }
        if (r.result == TxResult::RolledBack) watcher_.note_rollback(r.interface);
        out.emplace_back(r.interface,
                         std::string(r.nothing_saved ? "nothing_saved" : tx_result_name(r.result)),
                         std::string(), std::string());
        report += report::rollback_json_text(r);
    }
    report += ']';
    return std::tuple{std::move(out), std::move(report)};
}

void ManagerObject::ListProfiles(sdbus::Result<Profiles>&& reply) {
    respond("ListProfiles", reply, [&]() -> Result<std::tuple<Profiles>> {
        Profiles out;
        for (const auto& e : manager_.profiles().list())
            out.emplace_back(text(e.name), text(e.path.string()), text(e.description),
                             e.error ? text(e.error->str()) : std::string());
        return std::tuple{std::move(out)};
    });
}

void ManagerObject::Status(sdbus::Result<Tracked, std::string>&& reply) {
    respond("Status", reply, [&] { return status(); });
}

Result<std::tuple<ManagerObject::Tracked, std::string>> ManagerObject::status() {
    Tracked out;
    nlohmann::json ifs = nlohmann::json::array();
    for (const auto& [idx, t] : watcher_.tracked()) {
        if (!t.binding && t.last_result.empty()) continue;
        const bool enforce = t.binding && t.binding->enforce;
        out.emplace_back(t.name, t.ifindex, text(t.profile), t.last_result,
                         text(join(t.drifted, ",")), enforce);
        ifs.push_back({{"name", t.name},
                       {"altnames", t.altnames},
                       {"ifindex", t.ifindex},
                       {"profile", t.profile},
                       {"binding", t.binding ? nlohmann::json(t.binding->describe())
                                             : nlohmann::json(nullptr)},
                       {"enforce", enforce},
                       {"enforcement_suspended", t.enforcement_suspended},
                       {"last_result", t.last_result},
                       {"transaction", t.transaction},
                       {"drifted", t.drifted}});
    }
    nlohmann::json bindings = nlohmann::json::array();
    for (const auto& b : watcher_.config().bindings)
        bindings.push_back({{"profile", b.profile},
                            {"enforce", b.enforce},
                            {"match", b.describe()},
                            {"at", b.loc.str()}});
    nlohmann::json j = status_extra_ ? status_extra_() : nlohmann::json::object();
    j["interfaces"] = std::move(ifs);
    j["bindings"] = std::move(bindings);
    j["config"] = watcher_.config().file.string();
    j["pending"] = pending_json();
    // A path from the command line need not be UTF-8: U+FFFD, never a throw.
    return std::tuple{std::move(out),
                      j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

void ManagerObject::Reload(sdbus::Result<>&& reply) {
    respond("Reload", reply, [&]() -> Result<std::tuple<>> {
        if (auto ok = authorize(); !ok) return std::unexpected(ok.error());
        if (auto r = reload_(); !r) return std::unexpected(r.error());
        return std::tuple<>{};
    });
}

std::string ManagerObject::Version() {
    return NICTUNE_VERSION;
}

}  // namespace nictune::service
