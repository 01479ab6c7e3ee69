#include "dbus/client.hpp"

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>

#include "manager_proxy.h"

namespace nictune::dbus {
namespace {

using namespace std::chrono_literals;

constexpr const char* kBusName = "org.nictune1";
constexpr const char* kPath = "/org/nictune1";

// The generated proxy; signals are not used by the CLI.
class ManagerProxy final : public sdbus::ProxyInterfaces<org::nictune1::Manager_proxy> {
  public:
    ManagerProxy(sdbus::IConnection& conn) : ProxyInterfaces(conn, kBusName, kPath) {
        registerProxy();
    }
    ~ManagerProxy() { unregisterProxy(); }

  private:
    void onApplied(const std::string&, const std::string&, const std::string&, const std::string&,
                   const std::string&) override {}
    void onDrift(const std::string&, const std::string&, const std::string&, const std::string&,
                 const bool&) override {}
};

Error from_dbus(const sdbus::Error& e, const char* method) {
    Error out;
    out.code = errc_from_dbus(e.getName());
    out.message = e.getMessage();
    if (out.code == Errc::Io) out.context = std::string("nictuned ") + method + ": " + e.getName();
    return out;
}

template <class F>
Result<nlohmann::json> call(sdbus::IConnection& conn, const char* method, F&& f) {
    try {
        ManagerProxy proxy(conn);
        return nlohmann::json::parse(f(proxy));
    } catch (const sdbus::Error& e) {
        return std::unexpected(from_dbus(e, method));
    } catch (const nlohmann::json::exception& e) {
        return fail(Errc::Internal, std::string("nictuned ") + method,
                    std::string("bad reply: ") + e.what());
    } catch (const std::exception& e) {
        // Nothing leaves a method as an exception (nictunectl calls them
        // across the bus module's boundary).
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
    return call(*conn_, "Audit", [&](ManagerProxy& p) {
        std::map<std::string, sdbus::Variant> flags{{"all", sdbus::Variant(all)}};
        if (!extra.health) flags.emplace("health", sdbus::Variant(false));
        if (extra.rtt_ms) flags.emplace("rtt_ms", sdbus::Variant(*extra.rtt_ms));
        return std::get<1>(p.Audit(interfaces, profile, flags));
    });
}

Result<nlohmann::json> SdbusClient::plan(const std::string& profile,
                                         const std::vector<std::string>& interfaces, bool force) {
    return call(*conn_, "Plan", [&](ManagerProxy& p) {
        std::map<std::string, sdbus::Variant> flags{{"force", sdbus::Variant(force)}};
        return std::get<1>(p.Plan(profile, interfaces, flags));
    });
}

Result<nlohmann::json> SdbusClient::apply(const std::string& profile,
                                          const std::vector<std::string>& interfaces, bool force,
                                          bool keep_going,
                                          const std::optional<ConfirmFlags>& confirm) {
    return call(*conn_, "Apply", [&](ManagerProxy& p) {
        std::map<std::string, sdbus::Variant> flags{{"force", sdbus::Variant(force)},
                                                    {"keep_going", sdbus::Variant(keep_going)}};
        if (confirm) {
            flags.emplace("confirm_timeout", sdbus::Variant(confirm->timeout_seconds));
            if (!confirm->peer.empty()) flags.emplace("verify_peer", sdbus::Variant(confirm->peer));
        }
        return std::get<3>(p.Apply(profile, interfaces, flags));
    });
}

Result<bool> SdbusClient::has_confirm() {
    try {
        auto obj = sdbus::createProxy(*conn_, kBusName, kPath);
        std::string xml;
        obj->callMethod("Introspect")
            .onInterface("org.freedesktop.DBus.Introspectable")
            .withTimeout(10s)
            .storeResultsTo(xml);
        return xml.find("<method name=\"Confirm\">") != std::string::npos;
    } catch (const sdbus::Error& e) {
        return std::unexpected(from_dbus(e, "Introspect"));
    } catch (const std::exception& e) {
        return fail(Errc::Internal, "nictuned Introspect", e.what());
    }
}

Result<nlohmann::json> SdbusClient::confirm(const std::string& transaction) {
    return call(*conn_, "Confirm",
                [&](ManagerProxy& p) { return std::get<1>(p.Confirm(transaction)); });
}

Result<nlohmann::json> SdbusClient::abort(const std::string& transaction,
                                          const std::string& reason) {
    return call(*conn_, "Abort",
                [&](ManagerProxy& p) { return std::get<1>(p.Abort(transaction, reason)); });
}

Result<nlohmann::json> SdbusClient::rollback(const std::string& interface) {
    return call(*conn_, "Rollback",
                [&](ManagerProxy& p) { return std::get<2>(p.Rollback(interface)); });
}

Result<std::vector<Result<nlohmann::json>>> SdbusClient::rollback(
    const std::vector<std::string>& interfaces) {
    std::vector<Result<nlohmann::json>> out;
    try {
        ManagerProxy proxy(*conn_);
        auto [results, report] = proxy.RollbackInterfaces(interfaces);
        auto reports = nlohmann::json::parse(report);
        if (!reports.is_array() || reports.size() != results.size() ||
            results.size() != interfaces.size())
            return fail(Errc::Internal, "nictuned RollbackInterfaces",
                        "bad reply: one result per interface expected");
        for (std::size_t i = 0; i < results.size(); ++i) {
            const std::string& error = std::get<2>(results[i]);
            if (!error.empty()) {
                Error e;
                e.code = errc_from_dbus(error);
                e.message = std::get<3>(results[i]);
                out.push_back(std::unexpected(std::move(e)));
            } else {
                out.push_back(std::move(reports[i]));
            }
        }
        return out;
    } catch (const sdbus::Error& e) {
        // An older nictuned: one Rollback per interface, as before.
        if (e.getName() != "org.freedesktop.DBus.Error.UnknownMethod")
            return std::unexpected(from_dbus(e, "RollbackInterfaces"));
    } catch (const nlohmann::json::exception& e) {
        return fail(Errc::Internal, "nictuned RollbackInterfaces",
                    std::string("bad reply: ") + e.what());
    } catch (const std::exception& e) {
        return fail(Errc::Internal, "nictuned RollbackInterfaces", e.what());
    }
    for (const auto& name : interfaces)
        out.push_back(rollback(name));
    return out;
}

Result<nlohmann::json> SdbusClient::profiles() {
    return call(*conn_, "ListProfiles", [&](ManagerProxy& p) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& e : p.ListProfiles())
            arr.push_back({{"name", std::get<0>(e)},
                           {"path", std::get<1>(e)},
                           {"description", std::get<2>(e)},
                           {"error", std::get<3>(e).empty() ? nlohmann::json(nullptr)
                                                            : nlohmann::json(std::get<3>(e))}});
        return nlohmann::json{{"profiles", arr}}.dump();
    });
}

Result<nlohmann::json> SdbusClient::status() {
    return call(*conn_, "Status", [&](ManagerProxy& p) { return std::get<1>(p.Status()); });
}

Result<void> SdbusClient::reload() {
    auto r = call(*conn_, "Reload", [&](ManagerProxy& p) {
        p.Reload();
        return std::string("{}");
    });
    if (!r) return std::unexpected(r.error());
    return {};
}

}  // namespace nictune::dbus
