#include "dbus/client.hpp"

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <type_traits>

#include "dbus/error_details.hpp"
#include "dbus/reply.hpp"
#include "manager_proxy.h"

namespace nictune::dbus {
namespace {

using namespace std::chrono_literals;

constexpr const char* kBusName = "org.nictune1";
constexpr const char* kPath = "/org/nictune1";

// The generated proxy is the interface's signatures (from the XML, checked
// at compile time: invoke() takes its methods' types); the calls do not go
// through its methods, which are synchronous and so lose an error's details
// (reply.hpp).
using Proxy = org::nictune1::Manager_proxy;
using Flags = std::map<std::string, sdbus::Variant>;

// One method of org.nictune1.Manager: its arguments and results are those
// of the generated proxy's method passed after its name (a mismatch does
// not compile). Throws sdbus::Error only for what fails in this process (a
// string that is not UTF-8, a reply that does not read); what nictuned or
// the bus answer is the CallError.
template <class R, class... P>
CallResult<R> invoke(sdbus::IConnection& conn, const char* method, R (Proxy::*)(P...),
                     const std::remove_cvref_t<P>&... args) {
    auto proxy = sdbus::createProxy(conn, kBusName, kPath);
    auto call = proxy->createMethodCall(Proxy::INTERFACE_NAME, method);
    ((call << args), ...);
    auto reply = send_and_wait(conn, *proxy, call);
    if (!reply) return std::unexpected(std::move(reply.error()));
    if constexpr (std::is_void_v<R>) {
        return {};
    } else {
        R out;
        *reply >> out;
        return out;
    }
}

// The engine's error for a failed call: the code from the error's name, the
// fields from its details (or, from an older nictuned, the message as it
// is). Anything but one of nictuned's names is Io, named in the context.
Error to_error(const CallError& e, const char* method) {
    Error out;
    out.code = errc_from_dbus(e.error.getName());
    out.message = e.error.getMessage();
    if (e.details)
        read_error_details(*e.details, out);
    else if (out.code == Errc::Io)
        out.context = std::string("nictuned ") + method + ": " + e.error.getName();
    return out;
}

// The fields of an error inside a report: its JSON error object (the keys
// of error_details.hpp's dictionary). As there, a key that is missing or of
// another type is left alone.
void read_error_json(const nlohmann::json& j, Error& e) {
    auto string_field = [&](const char* key, std::string& out) {
        if (auto it = j.find(key); it != j.end() && it->is_string()) out = it->get<std::string>();
    };
    if (auto it = j.find("errno"); it != j.end() && it->is_number_integer())
        e.sys_errno = it->get<int>();
    string_field("context", e.context);
    string_field("interface", e.interface);
    string_field("setting", e.setting);
    string_field("message", e.message);
    string_field("kernel_message", e.kernel_message);
}

Error from_dbus(const sdbus::Error& e, const char* method) {
    return to_error(CallError{e, std::nullopt}, method);
}

// The `report` argument (JSON text) at index N of a method's results.
template <std::size_t N, class R>
Result<nlohmann::json> report_at(const char* method, const CallResult<R>& r) {
    if (!r) return std::unexpected(to_error(r.error(), method));
    return nlohmann::json::parse(std::get<N>(*r));
}

// Runs one client method: nothing leaves it as an exception (nictunectl
// calls them across the bus module's boundary).
template <class F>
auto guarded(const char* method, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const sdbus::Error& e) {
        return std::unexpected(from_dbus(e, method));
    } catch (const nlohmann::json::exception& e) {
        return fail(Errc::Internal, std::string("nictuned ") + method,
                    std::string("bad reply: ") + e.what());
    } catch (const std::exception& e) {
        return fail(Errc::Internal, std::string("nictuned ") + method, e.what());
    }
}

// The client over sdbus-c++: one connection to the bus.
class SdbusClient final : public Client {
  public:
    explicit SdbusClient(std::unique_ptr<sdbus::IConnection> conn) : conn_(std::move(conn)) {}

    Result<nlohmann::json> audit(const std::vector<std::string>& interfaces,
                                 const std::string& profile, bool all,
                                 const AuditFlags& extra) override;
    Result<nlohmann::json> plan(const std::string& profile,
                                const std::vector<std::string>& interfaces, bool force) override;
    Result<nlohmann::json> apply(const std::string& profile,
                                 const std::vector<std::string>& interfaces, bool force,
                                 bool keep_going,
                                 const std::optional<ConfirmFlags>& confirm) override;
    Result<bool> has_confirm() override;
    Result<nlohmann::json> confirm(const std::string& transaction) override;
    Result<nlohmann::json> abort(const std::string& transaction,
                                 const std::string& reason) override;
    Result<nlohmann::json> rollback(const std::string& interface) override;
    Result<std::vector<Result<nlohmann::json>>> rollback(
        const std::vector<std::string>& interfaces) override;
    Result<nlohmann::json> profiles() override;
    Result<nlohmann::json> status() override;
    Result<void> reload() override;

  private:
    std::unique_ptr<sdbus::IConnection> conn_;
};

}  // namespace

Errc errc_from_dbus(const std::string& name) {
    return errc_from_dbus_name(name).value_or(Errc::Io);
}

std::unique_ptr<Client> Client::connect(const std::string& address, std::string* why) {
    try {
        std::unique_ptr<sdbus::IConnection> conn =
            address.empty() ? sdbus::createSystemBusConnection()
                            : sdbus::createSessionBusConnectionWithAddress(address);
        // Applying a profile may reset several NICs and switch tuned.
        conn->setMethodCallTimeout(180s);
        auto bus = sdbus::createProxy(*conn, "org.freedesktop.DBus", "/org/freedesktop/DBus");
        bool has = false;
        bus->callMethod("NameHasOwner")
            .onInterface("org.freedesktop.DBus")
            .withTimeout(5s)
            .withArguments(std::string(kBusName))
            .storeResultsTo(has);
        if (!has) {
            *why = "nictuned is not running (no owner of org.nictune1)";
            return nullptr;
        }
        return std::make_unique<SdbusClient>(std::move(conn));
    } catch (const sdbus::Error& e) {
        *why = "no D-Bus connection: " + e.getMessage();
    } catch (const std::exception& e) {
        *why = std::string("no D-Bus connection: ") + e.what();
    }
    return nullptr;
}

Result<nlohmann::json> SdbusClient::audit(const std::vector<std::string>& interfaces,
                                          const std::string& profile, bool all,
                                          const AuditFlags& extra) {
    return guarded("Audit", [&] {
        Flags flags{{"all", sdbus::Variant(all)}};
        if (!extra.health) flags.emplace("health", sdbus::Variant(false));
        if (extra.rtt_ms) flags.emplace("rtt_ms", sdbus::Variant(*extra.rtt_ms));
        return report_at<1>("Audit",
                            invoke(*conn_, "Audit", &Proxy::Audit, interfaces, profile, flags));
    });
}

Result<nlohmann::json> SdbusClient::plan(const std::string& profile,
                                         const std::vector<std::string>& interfaces, bool force) {
    return guarded("Plan", [&] {
        Flags flags{{"force", sdbus::Variant(force)}};
        return report_at<1>("Plan",
                            invoke(*conn_, "Plan", &Proxy::Plan, profile, interfaces, flags));
    });
}

Result<nlohmann::json> SdbusClient::apply(const std::string& profile,
                                          const std::vector<std::string>& interfaces, bool force,
                                          bool keep_going,
                                          const std::optional<ConfirmFlags>& confirm) {
    return guarded("Apply", [&] {
        Flags flags{{"force", sdbus::Variant(force)}, {"keep_going", sdbus::Variant(keep_going)}};
        if (confirm) {
            flags.emplace("confirm_timeout", sdbus::Variant(confirm->timeout_seconds));
            if (!confirm->peer.empty()) flags.emplace("verify_peer", sdbus::Variant(confirm->peer));
        }
        return report_at<3>("Apply",
                            invoke(*conn_, "Apply", &Proxy::Apply, profile, interfaces, flags));
    });
}

Result<bool> SdbusClient::has_confirm() {
    return guarded("Introspect", [&]() -> Result<bool> {
        auto obj = sdbus::createProxy(*conn_, kBusName, kPath);
        std::string xml;
        obj->callMethod("Introspect")
            .onInterface("org.freedesktop.DBus.Introspectable")
            .withTimeout(10s)
            .storeResultsTo(xml);
        return xml.find("<method name=\"Confirm\">") != std::string::npos;
    });
}

Result<nlohmann::json> SdbusClient::confirm(const std::string& transaction) {
    return guarded("Confirm", [&] {
        return report_at<1>("Confirm", invoke(*conn_, "Confirm", &Proxy::Confirm, transaction));
    });
}

Result<nlohmann::json> SdbusClient::abort(const std::string& transaction,
                                          const std::string& reason) {
    return guarded("Abort", [&] {
        return report_at<1>("Abort", invoke(*conn_, "Abort", &Proxy::Abort, transaction, reason));
    });
}

Result<nlohmann::json> SdbusClient::rollback(const std::string& interface) {
    return guarded("Rollback", [&] {
        return report_at<2>("Rollback", invoke(*conn_, "Rollback", &Proxy::Rollback, interface));
    });
}

Result<std::vector<Result<nlohmann::json>>> SdbusClient::rollback(
    const std::vector<std::string>& interfaces) {
    bool older = false;
    auto all = guarded("RollbackInterfaces", [&]() -> Result<std::vector<Result<nlohmann::json>>> {
        auto r = invoke(*conn_, "RollbackInterfaces", &Proxy::RollbackInterfaces, interfaces);
        if (!r && r.error().error.getName() == "org.freedesktop.DBus.Error.UnknownMethod") {
            older = true;
            return {};
        }
        if (!r) return std::unexpected(to_error(r.error(), "RollbackInterfaces"));
        const auto& [results, report] = *r;
        auto reports = nlohmann::json::parse(report);
        if (!reports.is_array() || reports.size() != results.size() ||
            results.size() != interfaces.size())
            return fail(Errc::Internal, "nictuned RollbackInterfaces",
                        "bad reply: one result per interface expected");
        std::vector<Result<nlohmann::json>> out;
        for (std::size_t i = 0; i < results.size(); ++i) {
            const std::string& error = std::get<2>(results[i]);
            if (!error.empty()) {
                Error e;
                e.code = errc_from_dbus(error);
                e.message = std::get<3>(results[i]);
                // Its fields, from a nictuned that sends them ({} before).
                if (auto f = reports[i].find("error"); f != reports[i].end() && f->is_object())
                    read_error_json(*f, e);
                out.push_back(std::unexpected(std::move(e)));
            } else {
                out.push_back(std::move(reports[i]));
            }
        }
        return out;
    });
    if (!older) return all;
    // An older nictuned: one Rollback per interface, as before.
    std::vector<Result<nlohmann::json>> out;
    for (const auto& name : interfaces)
        out.push_back(rollback(name));
    return out;
}

Result<nlohmann::json> SdbusClient::profiles() {
    return guarded("ListProfiles", [&]() -> Result<nlohmann::json> {
        auto r = invoke(*conn_, "ListProfiles", &Proxy::ListProfiles);
        if (!r) return std::unexpected(to_error(r.error(), "ListProfiles"));
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& e : *r)
            arr.push_back({{"name", std::get<0>(e)},
                           {"path", std::get<1>(e)},
                           {"description", std::get<2>(e)},
                           {"error", std::get<3>(e).empty() ? nlohmann::json(nullptr)
                                                            : nlohmann::json(std::get<3>(e))}});
        return nlohmann::json{{"profiles", arr}};
    });
}

Result<nlohmann::json> SdbusClient::status() {
    return guarded(
        "Status", [&] { return report_at<1>("Status", invoke(*conn_, "Status", &Proxy::Status)); });
}

Result<void> SdbusClient::reload() {
    return guarded("Reload", [&]() -> Result<void> {
        auto r = invoke(*conn_, "Reload", &Proxy::Reload);
        if (!r) return std::unexpected(to_error(r.error(), "Reload"));
        return {};
    });
}

}  // namespace nictune::dbus
