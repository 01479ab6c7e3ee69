# NICTUNE_FUZZ: the libFuzzer build (tests/fuzz, driven by tests/fuzz/run-fuzzers).
# libFuzzer ships with clang, so the option needs a clang C++ compiler; a
# separate build directory keeps the normal g++ build untouched:
#   CXX=clang++-19 cmake -S . -B build-fuzz -DNICTUNE_FUZZ=ON
# Everything that links nictune_core is compiled with coverage
# instrumentation and ASan/UBSan; each fuzz target adds libFuzzer's main.
if(NICTUNE_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(WARNING "NICTUNE_FUZZ needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}; "
                  "fuzz targets are not built")
  set(NICTUNE_FUZZ OFF)
endif()
if(NICTUNE_FUZZ)
  target_compile_options(nictune_sanitize INTERFACE
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(nictune_sanitize INTERFACE -fsanitize=address,undefined)
endif()
