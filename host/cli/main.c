/*
 * main.c: the calhost command line's entry point: the table of commands,
 * handed to the argument parser (args.c), which runs the one named.
 */
#include <signal.h>

#include "commands.h"
#include "loader/loader.h"

static const cli_command *const commands[] = {
    &cli_cmd_calibrate, &cli_cmd_plan,    &cli_cmd_lookup, &cli_cmd_override, &cli_cmd_invalidate,
    &cli_cmd_check,     &cli_cmd_list,    &cli_cmd_export, &cli_cmd_import,   &cli_cmd_plugins,
    &cli_cmd_plugin,    &cli_cmd_devices, &cli_cmd_config, &cli_cmd_report,   &cli_cmd_verify,
    &cli_cmd_model,
};

int main(int argc, char **argv) {
  /* A file size limit (ulimit -f) makes a write fail with EFBIG, reported as
   * write_failed naming the file, instead of killing calhost mid-commit. */
  signal(SIGXFSZ, SIG_IGN);
  /* calhost owns its stdout: plugin calls in this process print to stderr
   * (`lookup --json` stays JSON); a plugin calling exit() in one of them
   * ends calhost with status 2 naming it, never a silent success. */
  loader_stdout_guard_enable(1);
  loader_exit_guard_install();
  cli_context cli = {.argv0 = argv[0]};
  return cli_main(&cli, commands, sizeof commands / sizeof commands[0], argc, argv);
}
