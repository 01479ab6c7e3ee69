#include "sysinfo/dynlib.hpp"

#include <dlfcn.h>

namespace nictune::sysinfo::detail {

DynLib::DynLib(const char* soname, const char* what) : soname_(soname) {
    // RTLD_LOCAL: its symbols serve only the tables bound from it.
    lib_ = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) {
        const char* e = dlerror();
        error_ = std::string(what) + " is not installed (" + (e ? e : "dlopen failed") + ")";
    }
}

void* DynLib::symbol(const char* name) {
    if (lib_ == nullptr) return nullptr;
    void* f = dlsym(lib_, name);
    if (f == nullptr && error_.empty()) error_ = std::string(soname_) + " has no " + name;
    return f;
}

}  // namespace nictune::sysinfo::detail
