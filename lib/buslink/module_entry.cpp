// The bus module's entry: the table of bus_module.hpp over the sdbus-c++
// clients linked into the module. Only nictune_bus_module is exported
// (lib/buslink/module.map); everything else in the module, the copies of
// the core's code it uses included, stays private to it.
#include <exception>

#include "buslink/bus_module.hpp"
#include "services/systemd1.hpp"

namespace nictune::buslink {
namespace {

std::unique_ptr<dbus::Client> connect_client(const std::string& address, std::string* why) {
    try {
        return dbus::Client::connect(address, why);
    } catch (const std::exception& e) {
        *why = std::string("no D-Bus connection: ") + e.what();
    } catch (...) {
        *why = "no D-Bus connection: unknown exception";
    }
    return nullptr;
}

TunedState tuned_state(const tuned::Options& opts) {
    try {
        return tuned::read_state(opts);
    } catch (const std::exception& e) {
        TunedState st;
        st.detail = std::string("tuned state unreadable: ") + e.what();
        return st;
    } catch (...) {
        TunedState st;
        st.detail = "tuned state unreadable: unknown exception";
        return st;
    }
}

Result<void> tuned_switch(const tuned::Options& opts, const std::string& profile) {
    try {
        return tuned::switch_profile(opts, profile);
    } catch (const std::exception& e) {
        return fail(Errc::Internal, "tuned.profile=\"" + profile + "\": set", e.what());
    } catch (...) {
        return fail(Errc::Internal, "tuned.profile=\"" + profile + "\": set", "unknown exception");
    }
}

Known<bool> unit_active(const services::BusOptions& opts, const std::string& unit,
                        std::string* state) {
    try {
        return services::unit_active(opts, unit, state);
    } catch (const std::exception& e) {
        return Known<bool>::none(std::string("systemd: ") + e.what());
    } catch (...) {
        return Known<bool>::none("systemd: unknown exception");
    }
}

std::unique_ptr<services::NmClient> nm_client(const services::BusOptions& opts) {
    try {
        return services::NmClient::open(opts);
    } catch (...) {
        return nullptr;  // nictunectl's side answers "unknown" for each device
    }
}

constexpr BusModule kModule{
    kAbi,        sizeof(BusModule), NICTUNE_VERSION, connect_client,
    tuned_state, tuned_switch,      unit_active,     nm_client,
};

}  // namespace
}  // namespace nictune::buslink

extern "C" [[gnu::visibility("default")]] const nictune::buslink::BusModule* nictune_bus_module() {
    return &nictune::buslink::kModule;
}
