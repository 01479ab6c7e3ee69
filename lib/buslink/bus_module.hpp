// The bus module: nictune's D-Bus clients (dbus/client.cpp,
// tuned/tuned_client.cpp, services/*.cpp) with sdbus-c++ and libsystemd
// behind them, built as a shared object of their own (nictune-bus.so, in the
// package's private library directory) that nictunectl opens with dlopen the
// first time a command needs the bus. Its start then loads neither library
// nor the six that libsystemd pulls in (BENCHMARKS.md, "Start-up and one
// interface"). nictuned and the tests link the clients directly.
//
// This table is all that crosses: plain function pointers, filled by the
// module (module_entry.cpp), called by nictunectl's side (lazy.cpp). Both
// are built from one tree by one compiler; the module refuses to be used
// by a program of another version or table layout. No exception crosses:
// every entry catches everything and answers with a value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dbus/client.hpp"
#include "model/health.hpp"
#include "model/nic_state.hpp"
#include "services/network_manager.hpp"
#include "tuned/tuned_client.hpp"
#include "util/error.hpp"

namespace nictune::buslink {

// Raised whenever the table or a type it passes changes shape.
inline constexpr std::uint32_t kAbi = 1;

struct BusModule {
    std::uint32_t abi;
    std::size_t table_size;  // sizeof(BusModule) where the module was built
    const char* version;     // NICTUNE_VERSION of the module
    // dbus::Client::connect
    std::unique_ptr<dbus::Client> (*connect_client)(const std::string& address, std::string* why);
    // tuned::read_state, tuned::switch_profile
    TunedState (*tuned_state)(const tuned::Options& opts);
    Result<void> (*tuned_switch)(const tuned::Options& opts, const std::string& profile);
    // services::unit_active, services::NmClient::open
    Known<bool> (*unit_active)(const services::BusOptions& opts, const std::string& unit,
                               std::string* state);
    std::unique_ptr<services::NmClient> (*nm_client)(const services::BusOptions& opts);
};

}  // namespace nictune::buslink

// The module's one exported symbol.
#define NICTUNE_BUS_MODULE_ENTRY "nictune_bus_module"
extern "C" const nictune::buslink::BusModule* nictune_bus_module();
