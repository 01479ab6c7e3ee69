# The operator's path (issue 18): the Debian package installed with apt into
# a systemd guest, its checks, then removed and purged
# (tests/operators/run-vm-package, tests/vm/guest/suite-package.sh). One
# boot, one test per check, like the suite's other boots. The .deb is the one
# debian_package (tests/operators) builds and checks: its fixture
# nictune_deb. Labels vm and systemd-vm, like units_vm (tests/systemd).
# Not included by tests/vm/CMakeLists.txt yet: the boot has not run to the
# end once.
add_test(NAME vm_boot_package COMMAND ${PROJECT_SOURCE_DIR}/tests/operators/run-vm-package)
set_tests_properties(vm_boot_package PROPERTIES
  LABELS "vm;systemd-vm" TIMEOUT 1800 SKIP_RETURN_CODE 77
  FIXTURES_REQUIRED "vm_cache;nictune_deb" FIXTURES_SETUP vm_package
  RESOURCE_LOCK nictune_vm ENVIRONMENT "${NICTUNE_VM_ENV};NICTUNE_SECURITY_MAX=2.0")

set(NICTUNE_VM_CHECKS_package install journal metrics man completion remove purge)
foreach(check IN LISTS NICTUNE_VM_CHECKS_package)
  add_test(NAME vm_package_${check} COMMAND ${NICTUNE_VM_DIR}/suite/result.sh package ${check})
  set_tests_properties(vm_package_${check} PROPERTIES
    LABELS "vm;systemd-vm" TIMEOUT 60 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED vm_package ENVIRONMENT "${NICTUNE_VM_ENV}")
endforeach()
