/*
 * main.c: the calhost command line's entry point. Parses the global options
 * (--store, --config, --json, --quiet, --verbose) and dispatches to the
 * subcommand; each family of subcommands lives in its own cmd_*.c file.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

typedef int (*command_fn)(calhost_cli *cli, int argc, char **argv);

static const struct command {
  const char *name;
  command_fn fn;
  const char *summary;
} commands[] = {
    {"calibrate", calhost_cmd_calibrate, "run calibration sweeps and store the winners"},
    {"lookup", calhost_cmd_lookup, "select a profile for a key or a workload"},
    {"override", calhost_cmd_override, "set or clear a user override"},
    {"invalidate", calhost_cmd_invalidate, "remove a backend's profiles"},
    {"check", calhost_cmd_check, "check the store file"},
    {"list", calhost_cmd_list, "list stored profiles"},
    {"export", calhost_cmd_export, "write the profiles to a file"},
    {"import", calhost_cmd_import, "merge profiles from other store files"},
    {"plugins", calhost_cmd_plugins, "list discovered plugins"},
    {"plugin", calhost_cmd_plugin, "plugin tools: plugin check PATH"},
    {"config", calhost_cmd_config, "config check [FILE] | config show"},
    {"report", calhost_cmd_report, "write the HTML page of a calibrate run"},
};

static void usage(FILE *out) {
  fprintf(out, "usage: calhost [--store PATH] [--config FILE] [--json] [--quiet] [--verbose]\n"
               "               COMMAND [ARGS...]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nSee README.md for every command's options.\n");
}

int main(int argc, char **argv) {
  /* A file size limit (ulimit -f) makes a write fail with EFBIG, reported as
   * write_failed naming the file, instead of killing calhost mid-commit. */
  signal(SIGXFSZ, SIG_IGN);
  calhost_cli cli = {.argv0 = argv[0]};
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--store") || !strcmp(a, "--config")) {
      if (i + 1 >= argc)
        return calhost_cli_usage_error(&cli, "%s needs a value", a);
      if (a[2] == 's')
        cli.store_path = argv[++i];
      else
        cli.config_path = argv[++i];
    } else if (!strncmp(a, "--store=", 8)) {
      cli.store_path = a + 8;
    } else if (!strncmp(a, "--config=", 9)) {
      cli.config_path = a + 9;
    } else if (!strcmp(a, "--json")) {
      cli.json = 1;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
      cli.quiet = 1;
    } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
      cli.verbose = 1;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else {
      return calhost_cli_usage_error(&cli, "unknown option '%s'", a);
    }
  }
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
    if (!strcmp(argv[i], commands[c].name))
      return commands[c].fn(&cli, argc - i, argv + i);
  return calhost_cli_usage_error(&cli, "unknown command '%s'", argv[i]);
}
