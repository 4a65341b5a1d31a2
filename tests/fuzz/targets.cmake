# targets.cmake: the fuzz targets and what each needs, shared by
# tests/fuzz/CMakeLists.txt (libFuzzer builds, CALHOST_FUZZ=ON, clang) and
# tests/reliability/CMakeLists.txt (the replay of the committed corpus in the
# ordinary suite).
#
#   calhost_fuzz_setup(TARGET NAME) adds fuzz_NAME.c and its libraries to an
#   existing executable TARGET.
set(CALHOST_FUZZ_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(CALHOST_FUZZ_NAMES store_parse config policy_validators cli_args model)

function(calhost_fuzz_setup target name)
  target_sources(${target} PRIVATE "${CALHOST_FUZZ_DIR}/fuzz_${name}.c")
  target_include_directories(${target} PRIVATE "${CALHOST_FUZZ_DIR}")
  if(name STREQUAL "store_parse")
    target_link_libraries(${target} PRIVATE calstore_static m)
  elseif(name STREQUAL "config")
    target_link_libraries(${target} PRIVATE calhost_config_core) # the parser alone: no OpenSSL
  elseif(name STREQUAL "policy_validators")
    target_link_libraries(${target} PRIVATE calhost_test_host)
    # The validators come from the shipped plugins: build them first.
    add_dependencies(${target} example cpu_gemm)
    if(CALHOST_OPENBLAS)
      add_dependencies(${target} openblas)
    endif()
  elseif(name STREQUAL "cli_args")
    target_link_libraries(${target} PRIVATE calhost_cli) # every host/cli source but main.c
  elseif(name STREQUAL "model")
    target_link_libraries(${target} PRIVATE calhost_model) # the ONNX reader (protobuf-c)
  endif()
endfunction()
