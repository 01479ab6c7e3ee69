// A shared library opened with dlopen on first use and never closed, whose
// functions are bound by name into a caller's table: what libkmod
// (kmod.cpp) and libsystemd's sd-hwdb and sd-device (sd_api.cpp) are, so
// that nictunectl does not load and relocate them at every start.
#pragma once

#include <string>

namespace nictune::sysinfo::detail {

class DynLib {
  public:
    // `what` names the library in the error when it does not open:
    // "WHAT is not installed (dlerror)".
    DynLib(const char* soname, const char* what);
    // Sets `f` to the function `name`, or to null; the first one missing is
    // the error ("SONAME has no NAME"). A library that did not open binds
    // nothing.
    template <class F>
    DynLib& bind(const char* name, F& f) {
        f = reinterpret_cast<F>(symbol(name));
        return *this;
    }
    // Empty when the library opened and every bind found its function.
    [[nodiscard]] const std::string& error() const { return error_; }

  private:
    void* symbol(const char* name);
    void* lib_ = nullptr;
    const char* soname_;
    std::string error_;
};

}  // namespace nictune::sysinfo::detail
