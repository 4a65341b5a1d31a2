/*
 * main.c: the calhost command line's entry point: the table of commands,
 * handed to the argument parser (args.c), which runs the one named.
 */
#include <signal.h>

#include "commands.h"

static const cli_command *const commands[] = {
    &calhost_cmd_calibrate, &calhost_cmd_plan, &calhost_cmd_lookup, &calhost_cmd_override, &calhost_cmd_invalidate,
    &calhost_cmd_check,     &calhost_cmd_list,   &calhost_cmd_export,   &calhost_cmd_import,
    &calhost_cmd_plugins,   &calhost_cmd_plugin, &calhost_cmd_devices,  &calhost_cmd_config,
    &calhost_cmd_report,    &calhost_cmd_verify,
};

int main(int argc, char **argv) {
  /* A file size limit (ulimit -f) makes a write fail with EFBIG, reported as
   * write_failed naming the file, instead of killing calhost mid-commit. */
  signal(SIGXFSZ, SIG_IGN);
  calhost_cli cli = {.argv0 = argv[0]};
  return cli_main(&cli, commands, sizeof commands / sizeof commands[0], argc, argv);
}
