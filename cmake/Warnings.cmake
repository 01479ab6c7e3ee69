# Warning set for nictune's own code. System headers (libmnl, libnl, kernel
# UAPI) are included as SYSTEM and do not trigger these.
add_library(nictune_warnings INTERFACE)
target_compile_options(nictune_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
  -Wcast-align -Wformat=2 -Wimplicit-fallthrough -Wmissing-declarations
  # g++ only (clang, used for the fuzz build, does not know them)
  $<$<CXX_COMPILER_ID:GNU>:-Wduplicated-cond -Wlogical-op -Wuseless-cast>)
if(NICTUNE_WERROR)
  target_compile_options(nictune_warnings INTERFACE -Werror)
endif()

add_library(nictune_sanitize INTERFACE)
if(NICTUNE_SANITIZE)
  target_compile_options(nictune_sanitize INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(nictune_sanitize INTERFACE -fsanitize=address,undefined)
endif()
