// nictunectl's side of the bus module (bus_module.hpp): the D-Bus clients'
// entry points, each opening the module on first use and calling through
// its table. Linked into nictunectl only; nictuned and the tests link the
// clients themselves (one of the two definitions of each function, never
// both, is in a program).
//
// The module is looked for at NICTUNE_BUS_MODULE_RELPATH from the
// directory of the running program (/proc/self/exe): the package's private
// library directory when installed (/usr/bin/nictunectl ->
// /usr/lib/<triplet>/nictune/nictune-bus.so), the build tree's copy when run
// from there, with no RUNPATH (which would make the loader search it for
// every library at every start) and nothing read from the environment. A
// module that cannot be loaded is an answer, not a crash: "cannot load
// PATH: reason", as unknown, not running, or an error, whichever the entry
// point gives.
#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "buslink/bus_module.hpp"
#include "services/systemd1.hpp"

namespace nictune {
namespace buslink {
namespace {

std::filesystem::path module_path() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    // Without /proc: the installed place.
    if (ec) return std::filesystem::path(NICTUNE_BUS_MODULE_PATH);
    return (exe.parent_path() / NICTUNE_BUS_MODULE_RELPATH).lexically_normal();
}

struct Loaded {
    const BusModule* module = nullptr;
    std::string error;  // "cannot load PATH: reason" when module is null
};

Loaded open_module() {
    Loaded l;
    const std::string path = module_path().string();
    auto refuse = [&](const std::string& why) {
        l.error = "cannot load " + path + ": " + why;
        return l;
    };
    // Never closed: the clients it makes live until the process ends.
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char* e = dlerror();
        return refuse(e ? e : "dlopen failed");
    }
    using Entry = const BusModule* (*)();
    const auto entry = reinterpret_cast<Entry>(dlsym(lib, NICTUNE_BUS_MODULE_ENTRY));
    if (entry == nullptr) return refuse("no " NICTUNE_BUS_MODULE_ENTRY " in it");
    const BusModule* m = entry();
    if (m == nullptr || m->abi != kAbi || m->table_size != sizeof(BusModule) ||
        m->version == nullptr || std::strcmp(m->version, NICTUNE_VERSION) != 0)
        return refuse(std::string("it is of another nictune (version ") +
                      (m && m->version ? m->version : "?") + ", this is " NICTUNE_VERSION ")");
    l.module = m;
    return l;
}

const Loaded& loaded() {
    static const Loaded l = open_module();
    return l;
}

// What a client without the module answers: unknown, with the reason.
class UnloadedNmClient final : public services::NmClient {
  public:
    explicit UnloadedNmClient(std::string why) : why_(std::move(why)) {}
    Known<services::NmDevice> device(const std::string&) override {
        return Known<services::NmDevice>::none(why_);
    }

  private:
    std::string why_;
};

}  // namespace
}  // namespace buslink

std::unique_ptr<dbus::Client> dbus::Client::connect(const std::string& address, std::string* why) {
    const auto& l = buslink::loaded();
    if (l.module == nullptr) {
        *why = l.error;
        return nullptr;
    }
    return l.module->connect_client(address, why);
}

TunedState tuned::read_state(const Options& opts) {
    const auto& l = buslink::loaded();
    if (l.module == nullptr)
        return read_files(opts, "tuned's D-Bus state not asked (" + l.error + ")");
    return l.module->tuned_state(opts);
}

Result<void> tuned::switch_profile(const Options& opts, const std::string& profile) {
    const auto& l = buslink::loaded();
    if (l.module == nullptr)
        return fail(Errc::Internal, "tuned.profile=\"" + profile + "\": set", l.error);
    return l.module->tuned_switch(opts, profile);
}

Known<bool> services::unit_active(const BusOptions& opts, const std::string& unit,
                                  std::string* state) {
    const auto& l = buslink::loaded();
    if (l.module == nullptr) return Known<bool>::none(l.error);
    return l.module->unit_active(opts, unit, state);
}

std::unique_ptr<services::NmClient> services::NmClient::open(BusOptions opts) {
    const auto& l = buslink::loaded();
    if (l.module == nullptr) return std::make_unique<buslink::UnloadedNmClient>(l.error);
    if (auto c = l.module->nm_client(opts)) return c;
    return std::make_unique<buslink::UnloadedNmClient>("NetworkManager: no client (out of memory)");
}

}  // namespace nictune
