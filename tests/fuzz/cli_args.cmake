# cli_args.cmake: how fuzz_cli_args links the command line: the calhost_cli
# library (every host/cli source but main.c, see host/cli/CMakeLists.txt).
function(calhost_fuzz_cli_args_setup target)
  target_link_libraries(${target} PRIVATE calhost_cli)
endfunction()
