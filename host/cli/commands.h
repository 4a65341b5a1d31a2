/*
 * commands.h: the subcommands of the calhost command line and the context
 * they share (global options, store and config resolution).
 *
 * Each cmd_*.c file owns one family of subcommands. Every command gets the
 * arguments after its name (argv[0] is the command name) and returns the
 * process exit status: 0 success, 1 "no" (check failed, nothing selected),
 * 2 usage or operational error.
 */
#ifndef CALHOST_CLI_COMMANDS_H
#define CALHOST_CLI_COMMANDS_H

#include <stdio.h>

#include "calhost/calstore.h"

struct calhost_config;

/* Global options, parsed by main before the command name. */
typedef struct calhost_cli {
  const char *argv0;
  const char *store_path;  /* --store PATH, or NULL */
  const char *config_path; /* --config FILE, or NULL */
  int json;                /* --json (also accepted after the command) */
  int quiet;               /* --quiet */
  int verbose;             /* --verbose */
} calhost_cli;

/* Usage error: prints "calhost: MESSAGE" and a hint to stderr; returns 2. */
int calhost_cli_usage_error(const calhost_cli *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Loads the configuration named by --config, else the default search
 * (calhost_config_find_default), else the built-in defaults, into *cfg.
 * Returns 0, or prints the error (with file and line) and returns -1. */
int calhost_cli_load_config(const calhost_cli *cli, struct calhost_config *cfg);

/* Opens the store: the configuration of calhost_cli_load_config (always
 * the same rule, whatever other flags are given) supplies [store] path and
 * persistence_enabled; --store PATH replaces only the path; else the
 * default path. A load failure is printed with its line and returned; *out
 * is still set when the handle is usable (see calstore_open). */
calstore_status calhost_cli_open_store(const calhost_cli *cli, calstore **out);

/* Like calhost_cli_open_store, with a configuration the command already
 * loaded (so a command loads it once). cfg is only read. */
calstore_status calhost_cli_open_store_config(const calhost_cli *cli,
                                              const struct calhost_config *cfg, calstore **out);

/* Store commands (cmd_store.c). */
int calhost_cmd_check(calhost_cli *cli, int argc, char **argv);
int calhost_cmd_list(calhost_cli *cli, int argc, char **argv);
int calhost_cmd_export(calhost_cli *cli, int argc, char **argv);
int calhost_cmd_import(calhost_cli *cli, int argc, char **argv);
int calhost_cmd_lookup(calhost_cli *cli, int argc, char **argv);     /* with --workload: */
int calhost_cmd_override(calhost_cli *cli, int argc, char **argv);   /* hands over to the */
int calhost_cmd_invalidate(calhost_cli *cli, int argc, char **argv); /* workload forms below */

/* Plugin commands (cmd_plugins.c): `plugins [--json]`, `plugin check PATH`. */
int calhost_cmd_plugins(calhost_cli *cli, int argc, char **argv);
int calhost_cmd_plugin(calhost_cli *cli, int argc, char **argv);

/* Configuration commands (cmd_config.c): `config check [FILE]`, `config show`. */
int calhost_cmd_config(calhost_cli *cli, int argc, char **argv);

/* Calibration and deployment commands (cmd_calibrate.c). */
int calhost_cmd_calibrate(calhost_cli *cli, int argc, char **argv);
int calhost_cmd_lookup_workload(calhost_cli *cli, int argc, char **argv);
int calhost_cmd_override_workload(calhost_cli *cli, int argc, char **argv);

/* Report commands (cmd_report.c): `report RUN.json --html OUT`, and the two
 * steps of `calibrate --report DIR`: report_open creates DIR (and its
 * parents) and opens DIR/run.json for the run's JSON (NULL after printing
 * the error); report_finish closes it, writes DIR/report.html from it and
 * returns the exit status: status, or 2 when the report failed. */
int calhost_cmd_report(calhost_cli *cli, int argc, char **argv);
FILE *calhost_cli_report_open(const char *dir);
int calhost_cli_report_finish(const char *dir, FILE *json, int status, int quiet);

#endif /* CALHOST_CLI_COMMANDS_H */
