#include "service/authorizer.hpp"

#include <chrono>

namespace nictune::service {
namespace {

using namespace std::chrono_literals;

class PolkitAuthorizer final : public Authorizer {
  public:
    explicit PolkitAuthorizer(std::string address) : address_(std::move(address)) {}

    Result<void> check(const sdbus::Message& call, const std::string& action) override {
        uid_t uid = 0;
        std::string sender;
        try {
            uid = call.getCredsUid();
            sender = call.getSender();
        } catch (const sdbus::Error& e) {
            return fail(Errc::PermissionDenied, "",
                        "cannot identify the caller: " + e.getMessage());
        }
        if (uid == 0) return {};
        try {
            // A connection of its own: a call made on the daemon's connection
            // from inside a handler would block that connection.
            if (!conn_)
                conn_ = address_.empty() ? sdbus::createSystemBusConnection()
                                         : sdbus::createSessionBusConnectionWithAddress(address_);
            auto bus = sdbus::createProxy(*conn_, "org.freedesktop.DBus", "/org/freedesktop/DBus");
            bool has = false;
            bus->callMethod("NameHasOwner")
                .onInterface("org.freedesktop.DBus")
                .withTimeout(5s)
                .withArguments(std::string("org.freedesktop.PolicyKit1"))
                .storeResultsTo(has);
            if (!has)
                return fail(Errc::PermissionDenied, "",
                            "uid " + std::to_string(uid) +
                                " may not change settings: only root may (polkit is not running)");
            auto pk = sdbus::createProxy(*conn_, "org.freedesktop.PolicyKit1",
                                         "/org/freedesktop/PolicyKit1/Authority");
            sdbus::Struct<std::string, std::map<std::string, sdbus::Variant>> subject{
                std::string("system-bus-name"),
                std::map<std::string, sdbus::Variant>{{"name", sdbus::Variant(sender)}}};
            std::map<std::string, std::string> details;
            const uint32_t allow_interaction = 1;
            sdbus::Struct<bool, bool, std::map<std::string, std::string>> result;
            pk->callMethod("CheckAuthorization")
                .onInterface("org.freedesktop.PolicyKit1.Authority")
                .withTimeout(120s)  // the user may be typing a password
                .withArguments(subject, action, details, allow_interaction, std::string())
                .storeResultsTo(result);
            if (std::get<0>(result)) return {};
            return fail(Errc::PermissionDenied, "",
                        "uid " + std::to_string(uid) + " is not authorized for " + action +
                            " (polkit said no)");
        } catch (const sdbus::Error& e) {
            return fail(Errc::PermissionDenied, "",
                        "authorization failed: " + e.getName() + ": " + e.getMessage());
        }
    }

  private:
    std::string address_;
    std::unique_ptr<sdbus::IConnection> conn_;
};

}  // namespace

std::unique_ptr<Authorizer> make_polkit_authorizer(std::string bus_address) {
    return std::make_unique<PolkitAuthorizer>(std::move(bus_address));
}

}  // namespace nictune::service
