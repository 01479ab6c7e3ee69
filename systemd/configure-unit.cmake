# Writes nictuned.service (and nictune-verify@.service) from its template.
# Runs at install time (so that ExecStart follows `cmake --install --prefix`)
# and at build time for the test copy; both with `cmake -P` semantics:
#   TEMPLATE  nictuned.service.in (nictune-verify@.service.in)
#   OUTPUT    the unit to write
#   SBINDIR   where nictuned is (ExecStart=SBINDIR/nictuned)
#   BINDIR    where nictunectl is (nictune-verify@.service)
#   DAEMON    the binary to read the shared-library dependencies from
#             (the build tree's: the installed one has the same dependencies)
#   MODULES   optional: shared objects DAEMON opens with dlopen (nictunectl's
#             bus module, lib/buslink/): their libraries count too
#   MODULE_DIR optional: where those are installed (mapped from there)
#
# ExecPaths= (everything else is NoExecPaths=/) must hold the daemon and every
# directory it maps shared libraries from, including the ELF interpreter. They
# are resolved from the binary itself, so a build against libraries in
# /usr/local/lib or /opt gets them too. The interpreter (ld.so) and the NSS and
# gconv modules glibc may dlopen live in libc's directory, which is always
# among them.
foreach(var TEMPLATE OUTPUT DAEMON)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "configure-unit.cmake: ${var} is not set")
  endif()
endforeach()

set(_dirs "")
if(EXISTS "${DAEMON}")
  set(_modules "")
  if(DEFINED MODULES AND NOT MODULES STREQUAL "")
    set(_modules MODULES ${MODULES})
  endif()
  file(GET_RUNTIME_DEPENDENCIES
    EXECUTABLES "${DAEMON}" ${_modules}
    RESOLVED_DEPENDENCIES_VAR _libs
    UNRESOLVED_DEPENDENCIES_VAR _missing)
  if(_missing)
    message(WARNING "nictuned.service: unresolved libraries of ${DAEMON}: ${_missing}")
  endif()
  foreach(_lib IN LISTS _libs)
    # The kernel checks noexec on the mount the file really lives on.
    file(REAL_PATH "${_lib}" _real)
    get_filename_component(_dir "${_real}" DIRECTORY)
    list(APPEND _dirs "${_dir}")
  endforeach()
  if(DEFINED MODULE_DIR AND NOT MODULE_DIR STREQUAL "")
    list(APPEND _dirs "${MODULE_DIR}")
  endif()
  list(REMOVE_DUPLICATES _dirs)
  list(SORT _dirs)
endif()
if(NOT _dirs)
  message(WARNING "nictuned.service: no shared libraries found for '${DAEMON}'; "
                  "allowing the usual library directories in ExecPaths=")
  set(_dirs -/usr/lib -/usr/lib64 -/lib -/lib64)
endif()
list(JOIN _dirs " " NICTUNE_LIBRARY_DIRS)

configure_file("${TEMPLATE}" "${OUTPUT}" @ONLY)
