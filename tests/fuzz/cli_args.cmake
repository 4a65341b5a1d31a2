# cli_args.cmake: how fuzz_cli_args links the command line. cmd_store.c's
# parsing is static, so the target compiles every host/cli source but main.c
# and links what bin/calhost links (host/cli/CMakeLists.txt).
function(calhost_fuzz_cli_args_setup target)
  file(GLOB _cli_sources "${CMAKE_SOURCE_DIR}/host/cli/*.c")
  list(FILTER _cli_sources EXCLUDE REGEX "/main\\.c$")
  target_sources(${target} PRIVATE ${_cli_sources})
  foreach(lib calstore_static calhost_config calhost_processor calhost_loader calhost_sweep
              calhost_check calhost_report)
    if(TARGET ${lib})
      target_link_libraries(${target} PRIVATE ${lib})
    endif()
  endforeach()
  target_link_libraries(${target} PRIVATE calhost::plugin_sdk Threads::Threads ${CMAKE_DL_LIBS} m)
  target_include_directories(${target} PRIVATE "${CMAKE_SOURCE_DIR}/host/cli")
endfunction()
