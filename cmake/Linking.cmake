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
# A program with the C++ runtime linked in (NICTUNE_STATIC_CXX, below) has
# only libc to put first.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
   AND NOT NICTUNE_SANITIZE AND NOT NICTUNE_FUZZ)
  add_link_options("LINKER:--push-state,--no-as-needed" "-l:libc.so.6"
                   "$<$<NOT:$<BOOL:$<TARGET_PROPERTY:NICTUNE_STATIC_CXX>>>:-l:libstdc++.so.6>"
                   "LINKER:--pop-state")
endif()

# nictunectl links libstdc++ and libgcc in (target property
# NICTUNE_STATIC_CXX, set by nictune_static_cxx_runtime()). Loading them is
# most of what a C++ program's start costs beyond a C program's: an empty
# main with the shared libstdc++ takes 1.19 ms of CPU here against 0.71 ms
# with it linked in and 0.64 ms for C (perf stat, 300 runs each), which is
# what `ip` and `ethtool` pay: relocating libstdc++.so (1,800 symbol look-ups,
# its own), mapping three more libraries, and libgcc_s's CPU-feature probe
# (CPUID, a trap to the hypervisor on a VM). nictunectl lives for one
# command; one apply of one interface is a few milliseconds, so this is a
# sixth of it (BENCHMARKS.md, "One interface").
#   What it costs: 0.6 MB more text in nictunectl; libstdc++ fixes reach it
# with a rebuild, not with the shared library's update (the GCC Runtime
# Library Exception allows linking it in; Debian's gcc-12 has had no
# security update of libstdc++ in bookworm). nictuned, which runs for
# months and shares libstdc++'s pages with every other C++ process, and the
# bus module keep the shared library: when nictunectl opens the module, the
# process holds two copies of the runtime, which is safe because nothing
# but plain data and objects of this tree's own classes crosses between
# them, no exception crosses (lib/buslink/bus_module.hpp), and both allocate
# with libc's malloc.
#   Sanitizer and fuzz builds keep the shared runtime (their runtimes must
# intercept operator new). -DNICTUNE_STATIC_CXX_RUNTIME=OFF does too.
option(NICTUNE_STATIC_CXX_RUNTIME "Link libstdc++ and libgcc into nictunectl (start-up)" ON)
function(nictune_static_cxx_runtime target)
  if(NICTUNE_STATIC_CXX_RUNTIME AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
     AND NOT NICTUNE_SANITIZE AND NOT NICTUNE_FUZZ)
    set_target_properties(${target} PROPERTIES NICTUNE_STATIC_CXX ON)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()

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
