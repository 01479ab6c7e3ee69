# How nictune's binaries are linked: what their start-up costs (issue 16).
#
# nictunectl lives for one command, so the dynamic loader's work is a large
# part of every run: an empty C++ program with nictune's shared libraries
# takes about twice as long to start as one with libstdc++ alone, almost all
# of it symbol look-ups while relocating the libraries (BENCHMARKS.md,
# "Start-up"). Included after the find_package() calls.

# The search order of symbol look-ups is the order of DT_NEEDED: the program,
# then its libraries as listed, then theirs. Each library's own relocations
# mostly resolve into libc and libstdc++, which the default link order lists
# last, after libnl, libmnl, libsystemd, sdbus-c++, ...: every look-up first
# misses in each of those. Listed first they are found at the second step.
# Measured: 0.6 M fewer instructions at start-up (of 4.7 M; callgrind,
# `nictunectl --version`). A symbol defined twice (a template instance that
# a C++ library also exports) now binds to libstdc++'s own copy; nothing in
# these libraries interposes on libc or libstdc++ on purpose.
# The sanitizers' runtimes must come first of all (ASan checks it), so
# sanitizer and fuzz builds keep the default order.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
   AND NOT NICTUNE_SANITIZE AND NOT NICTUNE_FUZZ)
  add_link_options("LINKER:--push-state,--no-as-needed" "-l:libc.so.6" "-l:libstdc++.so.6"
                   "LINKER:--pop-state")
endif()

# Libraries compiled in instead of loaded: each shared library costs its
# loading (open, mmap, mprotect, page faults) and its own relocations at every
# start. fmt (MIT-like) and toml++ (MIT) are meant to be used either way;
# Debian ships both as headers that contain the implementation.
# - toml++: lib/profile/toml_impl.cpp compiles the implementation once
#   (TOML_IMPLEMENTATION); everything else includes the declarations only.
# - fmt: header-only (FMT_HEADER_ONLY); five files of the core use it.
add_library(nictune_toml INTERFACE)
get_target_property(_nictune_toml_inc tomlplusplus::tomlplusplus INTERFACE_INCLUDE_DIRECTORIES)
target_include_directories(nictune_toml SYSTEM INTERFACE ${_nictune_toml_inc})
target_compile_definitions(nictune_toml INTERFACE TOML_HEADER_ONLY=0)
target_compile_features(nictune_toml INTERFACE cxx_std_17)
add_library(nictune_fmt INTERFACE)
target_link_libraries(nictune_fmt INTERFACE fmt::fmt-header-only)
