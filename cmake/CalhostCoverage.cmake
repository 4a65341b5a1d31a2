# CALHOST_COVERAGE: a gcov-instrumented build (GCC's --coverage: line and
# branch counters written as .gcda files beside the objects when a program
# exits). scripts/coverage.sh configures such a build, runs a chosen set of
# tests and reads the counters with lcov (Debian's lcov, installed by the
# script only when it is run). Off by default: nothing in the normal build
# or the test job depends on it.
if(NOT CALHOST_COVERAGE)
  function(calhost_coverage_program target)
  endfunction()
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
  message(FATAL_ERROR "CALHOST_COVERAGE: gcov counters need GCC (the compiler is ${CMAKE_C_COMPILER_ID})")
endif()
if(CALHOST_SANITIZE)
  message(FATAL_ERROR "CALHOST_COVERAGE and CALHOST_SANITIZE are separate builds")
endif()
# -O0: every source branch stays a counted branch (an optimiser folds some,
# which makes the branch figure depend on the compiler's choices);
# atomic counters: the store's threads would otherwise lose counts.
add_compile_options(--coverage -O0 -fprofile-update=atomic)
add_link_options(--coverage)

# calhost_coverage_program(TARGET): a program whose forked children end with
# _exit writes their counters too (coverage_exit.c). tests/CMakeLists.txt's
# calhost_add_test calls it for each test program.
function(calhost_coverage_program target)
  target_sources(${target} PRIVATE "${PROJECT_SOURCE_DIR}/cmake/coverage_exit.c")
  target_link_options(${target} PRIVATE "-Wl,--wrap=_exit")
endfunction()
