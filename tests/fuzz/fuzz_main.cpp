// libFuzzer entry point of one target; CMake compiles it once per target
// with NICTUNE_FUZZ_TARGET naming it (see harness.hpp for what each one does).
#include <cstddef>
#include <cstdint>

#include "fuzz/harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const nictune::fuzz::Target* const target =
        nictune::fuzz::find_target(NICTUNE_FUZZ_TARGET);
    target->run({data, size});
    return 0;
}
