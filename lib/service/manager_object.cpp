#include "service/manager_object.hpp"

#include <time.h>

#include <limits>

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

// Names in nictune's text form ('\xff\xfeq'): a name or an alternative
// name, resolved as the kernel does.
void check_interfaces(const std::vector<std::string>& names) {
    if (names.size() > kMaxInterfaces)
        throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                           "too many interfaces (" + std::to_string(names.size()) + ")");
    for (const auto& n : names)
        if (!valid_name_or_altname(n))
            throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                               "interface name " + quote_name(n.substr(0, 64)) + " is not valid");
}

void check_profile_name(const std::string& name) {
    if (auto ok = profile::validate_name(name); !ok)
        throw sdbus::Error(dbus_error_name(Errc::InvalidArgument), ok.error().message);
}

// Reads a boolean flag; unknown keys and wrong types are the caller's error.
bool flag(const std::map<std::string, sdbus::Variant>& flags, const std::string& name) {
    auto it = flags.find(name);
    if (it == flags.end()) return false;
    if (!it->second.containsValueOfType<bool>())
        throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                           "flag " + quote(name) + " must be a boolean");
    return it->second.get<bool>();
}

void check_flags(const std::map<std::string, sdbus::Variant>& flags,
                 std::initializer_list<const char*> known) {
    for (const auto& [k, v] : flags) {
        bool ok = false;
        for (const char* n : known)
            ok |= k == n;
        if (!ok)
            throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                               "unknown flag " + quote(k.substr(0, 64)));
    }
}

// Audit's health flags: "health" (b, default true), "rtt_ms" (d). "sample"
// is refused: it would make the event loop sleep for one client;
// nictunectl samples in its own process.
void apply_health_flags(const std::map<std::string, sdbus::Variant>& flags, AuditRequest& req) {
    if (flags.contains("health")) req.health = flag(flags, "health");
    if (auto it = flags.find("rtt_ms"); it != flags.end()) {
        if (!it->second.containsValueOfType<double>())
            throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                               "flag 'rtt_ms' must be a double");
        const double v = it->second.get<double>();
        if (!(v >= 0.001 && v <= 10000))
            throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                               "flag 'rtt_ms' must be in 0.001..10000");
        req.rtt_ms = v;
    }
    if (flags.contains("sample"))
        throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                           "flag 'sample' is not taken over D-Bus: a sample would stop nictuned "
                           "for its length; run nictunectl audit --sample, which samples in its "
                           "own process");
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
std::optional<uint32_t> confirm_timeout_flag(const std::map<std::string, sdbus::Variant>& flags) {
    auto it = flags.find("confirm_timeout");
    if (it == flags.end()) return std::nullopt;
    if (!it->second.containsValueOfType<uint32_t>())
        throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                           "flag 'confirm_timeout' must be an unsigned 32-bit integer (u)");
    const uint32_t v = it->second.get<uint32_t>();
    if (v < 1 || v > kMaxConfirmTimeout)
        throw sdbus::Error(
            dbus_error_name(Errc::InvalidArgument),
            "flag 'confirm_timeout' must be 1.." + std::to_string(kMaxConfirmTimeout) + " seconds");
    return v;
}

std::string string_flag(const std::map<std::string, sdbus::Variant>& flags,
                        const std::string& name) {
    auto it = flags.find(name);
    if (it == flags.end()) return {};
    if (!it->second.containsValueOfType<std::string>())
        throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                           "flag " + quote(name) + " must be a string");
    std::string v = it->second.get<std::string>();
    if (v.size() > 255)
        throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                           "flag " + quote(name) + " is longer than 255 bytes");
    return v;
}

// Runs a handler body; anything but sdbus::Error becomes a D-Bus error here.
template <class F>
auto guarded(const char* method, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const sdbus::Error&) {
        throw;
    } catch (const std::exception& e) {
        log(Level::Error, std::string(method) + ": internal error: " + e.what());
        throw sdbus::Error(dbus_error_name(Errc::Internal),
                           text(std::string("internal error: ") + e.what()));
    } catch (...) {
        log(Level::Error, std::string(method) + ": internal error");
        throw sdbus::Error(dbus_error_name(Errc::Internal), "internal error");
    }
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

void ManagerObject::authorize() {
    const sdbus::Message* msg = getObject().getCurrentlyProcessedMessage();
    if (!msg) throw sdbus::Error(dbus_error_name(Errc::PermissionDenied), "no caller");
    if (auto ok = auth_.check(*msg, kApplyAction); !ok) throw to_dbus_error(ok.error());
}

std::tuple<ManagerObject::Findings, std::string> ManagerObject::Audit(
    const std::vector<std::string>& interfaces, const std::string& profile, const Flags& flags) {
    return guarded("Audit", [&] {
        check_interfaces(interfaces);
        check_flags(flags, {"all", "health", "rtt_ms", "sample"});
        if (!profile.empty()) check_profile_name(profile);
        AuditRequest req;
        req.interfaces = interfaces;
        req.include_virtual = flag(flags, "all");
        if (!profile.empty()) req.profile = profile;
        apply_health_flags(flags, req);
        auto r = manager_.audit(req);
        if (!r) throw to_dbus_error(r.error());
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
    });
}

std::tuple<ManagerObject::Steps, std::string> ManagerObject::Plan(
    const std::string& profile, const std::vector<std::string>& interfaces, const Flags& flags) {
    return guarded("Plan", [&] {
        check_profile_name(profile);
        check_interfaces(interfaces);
        check_flags(flags, {"force"});
        auto p =
            manager_.plan(ApplyRequest{profile, interfaces, flag(flags, "force"), true, false});
        if (!p) throw to_dbus_error(p.error());
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
    });
}

std::tuple<std::string, std::string, ManagerObject::Outcomes, std::string> ManagerObject::Apply(
    const std::string& profile, const std::vector<std::string>& interfaces, const Flags& flags) {
    return guarded("Apply", [&] {
        check_profile_name(profile);
        check_interfaces(interfaces);
        check_flags(flags, {"force", "keep_going", "confirm_timeout", "verify_peer"});
        const auto confirm = confirm_timeout_flag(flags);
        const std::string peer = string_flag(flags, "verify_peer");
        if (confirm && flag(flags, "keep_going"))
            throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                               "flag 'confirm_timeout' cannot go with 'keep_going': a held "
                               "transaction must be whole to be undone whole");
        if (!peer.empty() && !confirm)
            throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                               "flag 'verify_peer' needs 'confirm_timeout'");
        authorize();
        ApplyOptions hooks;
        std::unique_ptr<HeldTransaction> held;
        PendingCheck check{peer, std::nullopt};
        if (confirm) {
            hooks.hold = &held;
            hooks.check_name = check.describe();
        }
        auto r = manager_.apply(ApplyRequest{profile, interfaces, flag(flags, "force"), false,
                                             flag(flags, "keep_going")},
                                hooks);
        if (!r) throw to_dbus_error(r.error());
        if (r->result == TxResult::Refused && r->refusals.empty() && r->error &&
            r->error->code == Errc::Busy)
            throw to_dbus_error(*r->error);
        if (held) {
            const sdbus::Message* msg = getObject().getCurrentlyProcessedMessage();
            hold(std::move(held), msg ? msg->getSender() : std::string(), std::move(check),
                 std::chrono::seconds(*confirm), "request");
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
        return std::tuple{text(r->transaction), std::string(tx_result_name(r->result)),
                          std::move(out), report::apply_json_text(*r)};
    });
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

std::tuple<std::string, std::string> ManagerObject::Confirm(const std::string& transaction) {
    return guarded("Confirm", [&] {
        if (transaction.size() > 255)
            throw sdbus::Error(dbus_error_name(Errc::InvalidArgument), "transaction id too long");
        authorize();
        return settle(transaction, "confirmed", std::nullopt);
    });
}

std::tuple<std::string, std::string> ManagerObject::settle(const std::string& transaction,
                                                           const std::string& how,
                                                           std::optional<Error> why) {
    if (pending_.contains(transaction)) {
        auto r = finish(transaction, how, std::move(why));
        return std::tuple{std::string(tx_result_name(r.result)), report::apply_json_text(r)};
    }
    for (const auto& [tx, ended] : ended_)
        if (tx == transaction) return std::tuple{ended.first, ended.second};
    throw sdbus::Error(
        dbus_error_name(Errc::InvalidArgument),
        "no transaction " + quote(text(transaction)) + " is waiting for confirmation");
}

std::tuple<std::string, std::string> ManagerObject::Abort(const std::string& transaction,
                                                          const std::string& reason) {
    return guarded("Abort", [&] {
        if (transaction.size() > 255)
            throw sdbus::Error(dbus_error_name(Errc::InvalidArgument), "transaction id too long");
        if (reason.size() > kMaxReason)
            throw sdbus::Error(dbus_error_name(Errc::InvalidArgument),
                               "reason longer than " + std::to_string(kMaxReason) + " bytes");
        authorize();
        return settle(transaction, "aborted",
                      Error{Errc::Io,
                            0,
                            "",
                            reason.empty() ? std::string("aborted by the client") : reason,
                            {}});
    });
}

std::tuple<std::string, ManagerObject::Restored, std::string> ManagerObject::Rollback(
    const std::string& interface) {
    return guarded("Rollback", [&] {
        check_interfaces({interface});
        authorize();
        auto r = manager_.rollback(interface);
        // Busy and the caller's own mistakes (an unknown interface) are errors.
        if (r.result == TxResult::Refused && r.error &&
            (r.error->code == Errc::Busy || r.error->is_user_error()))
            throw to_dbus_error(*r.error);
        // Under the device's current name: `interface` may be an alternative name.
        if (r.result == TxResult::RolledBack) watcher_.note_rollback(r.interface);
        Restored out;
        for (const auto& x : r.restored)
            out.emplace_back(x.interface, text(x.key), text(to_string(x.value)), x.ok,
                             text(x.message));
        return std::tuple{std::string(r.nothing_saved ? "nothing_saved" : tx_result_name(r.result)),
                          std::move(out), report::rollback_json_text(r)};
    });
}

std::tuple<std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>,
           std::string>
ManagerObject::RollbackInterfaces(const std::vector<std::string>& interfaces) {
    return guarded("RollbackInterfaces", [&] {
        check_interfaces(interfaces);
        authorize();
        auto rs = manager_.rollback(interfaces);
        std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> out;
        std::string report = "[";
        for (std::size_t i = 0; i < rs.size(); ++i) {
            const RollbackResult& r = rs[i];
            if (i) report += ',';
            // What Rollback would raise for this interface alone.
            if (r.result == TxResult::Refused && r.error &&
                (r.error->code == Errc::Busy || r.error->is_user_error())) {
                out.emplace_back(r.interface, std::string(tx_result_name(r.result)),
                                 dbus_error_name(r.error->code), text(r.error->str()));
                report += "{}";
                continue;
            }
            if (r.result == TxResult::RolledBack) watcher_.note_rollback(r.interface);
            out.emplace_back(
                r.interface,
                std::string(r.nothing_saved ? "nothing_saved" : tx_result_name(r.result)),
                std::string(), std::string());
            report += report::rollback_json_text(r);
        }
        report += ']';
        return std::tuple{std::move(out), std::move(report)};
    });
}

std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>
ManagerObject::ListProfiles() {
    return guarded("ListProfiles", [&] {
        std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> out;
        for (const auto& e : manager_.profiles().list())
            out.emplace_back(text(e.name), text(e.path.string()), text(e.description),
                             e.error ? text(e.error->str()) : std::string());
        return out;
    });
}

std::tuple<
    std::vector<sdbus::Struct<std::string, int32_t, std::string, std::string, std::string, bool>>,
    std::string>
ManagerObject::Status() {
    return guarded("Status", [&] {
        std::vector<
            sdbus::Struct<std::string, int32_t, std::string, std::string, std::string, bool>>
            out;
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
    });
}

void ManagerObject::Reload() {
    guarded("Reload", [&] {
        authorize();
        if (auto r = reload_(); !r) throw to_dbus_error(r.error());
    });
}

std::string ManagerObject::Version() {
    return NICTUNE_VERSION;
}

}  // namespace nictune::service
