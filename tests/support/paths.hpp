// The programs under test, as the test targets' compile definitions name
// them (tests/CMakeLists.txt). Defined once here: the test binaries are unity
// builds, where two files' definitions would meet in one translation unit.
#pragma once

#include <string>

namespace nictune::test {

inline const std::string kCtl = NICTUNECTL_PATH;
inline const std::string kDaemon = NICTUNED_PATH;

}  // namespace nictune::test
