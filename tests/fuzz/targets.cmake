# targets.cmake: the fuzz targets and what each needs, shared by
# tests/fuzz/CMakeLists.txt (libFuzzer builds, CALHOST_FUZZ=ON, clang) and
# tests/reliability/CMakeLists.txt (the replay of the committed corpus in the
# ordinary suite). A target whose libraries are not built (yet) is skipped
# with a message.
#
#   calhost_fuzz_setup(TARGET NAME) adds fuzz_NAME.c and its libraries to an
#   existing executable TARGET.
set(CALHOST_FUZZ_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(CALHOST_FUZZ_NAMES)

macro(_calhost_fuzz_declare name)
  set(_calhost_fuzz_ok TRUE)
  foreach(_dep ${ARGN})
    if(NOT TARGET ${_dep})
      set(_calhost_fuzz_ok FALSE)
      message(STATUS "calhost fuzz: target ${name} skipped (${_dep} is not built)")
    endif()
  endforeach()
  if(_calhost_fuzz_ok)
    list(APPEND CALHOST_FUZZ_NAMES ${name})
  endif()
endmacro()

_calhost_fuzz_declare(store_parse calstore_static)
_calhost_fuzz_declare(config calhost_config_core)
_calhost_fuzz_declare(policy_validators calhost::plugin_sdk)
if(EXISTS "${CALHOST_FUZZ_DIR}/fuzz_cli_args.c")
  _calhost_fuzz_declare(cli_args calstore_static)
endif()

function(calhost_fuzz_setup target name)
  target_sources(${target} PRIVATE "${CALHOST_FUZZ_DIR}/fuzz_${name}.c")
  target_include_directories(${target} PRIVATE "${CALHOST_FUZZ_DIR}" "${CMAKE_SOURCE_DIR}/host"
                                               "${CMAKE_SOURCE_DIR}/include")
  if(name STREQUAL "store_parse")
    target_link_libraries(${target} PRIVATE calstore_static m)
  elseif(name STREQUAL "config")
    target_link_libraries(${target} PRIVATE calhost_config_core) # the parser alone: no OpenSSL
  elseif(name STREQUAL "policy_validators")
    target_link_libraries(${target} PRIVATE calhost::plugin_sdk ${CMAKE_DL_LIBS})
    # The validators come from the shipped plugins: build them first.
    foreach(p example cpu_gemm openblas)
      if(TARGET ${p})
        add_dependencies(${target} ${p})
      endif()
    endforeach()
  elseif(name STREQUAL "cli_args")
    include("${CALHOST_FUZZ_DIR}/cli_args.cmake")
    calhost_fuzz_cli_args_setup(${target})
  endif()
endfunction()
