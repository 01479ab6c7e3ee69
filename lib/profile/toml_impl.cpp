// toml++'s implementation, compiled into the core once instead of loaded
// from libtomlplusplus.so at every start (cmake/Linking.cmake says why).
// Every other file includes profile/toml.hpp (toml++ with its one fix) for
// the declarations only (TOML_HEADER_ONLY=0, from the nictune_toml target).
#define TOML_IMPLEMENTATION
#include "profile/toml.hpp"
