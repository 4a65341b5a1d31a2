/*
 * cmd_plugin_check.c: `calhost plugin check PATH`: runs the conformance
 * checker (host/check/check.c) on one plugin file: PASS/FAIL lines, only
 * the FAIL lines with --quiet, one JSON object with --json (`calhost
 * plugins`, the list, is cmd_plugins.c; `calhost check` of the store is
 * cmd_store_check.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/text.h"
#include "check/check.h"
#include "commands.h"
#include "config/values.h"

static const cli_flag plugin_flags[] = {
    {FL_TIMEOUT, "--timeout", NULL, "SECONDS", "time limit of each plugin call"},
    {FL_OPERATOR, "--operator", NULL, "OP", "operator of the sample workload"},
    {FL_DTYPE, "--dtype", NULL, "TYPE", "element type of the sample workload"},
    {FL_SHAPE, "--shape", NULL, "D,D,...", "shape of the sample workload"},
    {FL_THREADS, "--threads", NULL, "N|max", "thread count of the sample target"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

static int run_plugin(cli_context *cli, cli_args *a) {
  check_options o;
  int64_t shape[CALHOST_MAX_SHAPE_RANK];
  char why[300];
  if (strcmp(a->positional[0], "check"))
    return cli_usage(a, "unknown subcommand '%s' (check)", a->positional[0]);
  if (a->positional_count < 2)
    return cli_usage(a, "check needs the plugin file: plugin check PATH");
  const char *path = a->positional[1];
  check_options_init(&o);
  o.verbose = cli->verbose;
  o.json = cli->json;   /* one JSON object (base/json.h escapes every string) */
  o.quiet = cli->quiet; /* the FAIL lines only */
  if (cli_has(a, FL_TIMEOUT) &&
      config_value_duration(a->value[FL_TIMEOUT], 0, &o.timeout_seconds, why, sizeof why) != 0)
    return cli_usage(a, "bad --timeout '%s': %s", a->value[FL_TIMEOUT], why);
  o.operator_name = a->value[FL_OPERATOR];
  o.dtype = a->value[FL_DTYPE];
  if (cli_has(a, FL_SHAPE)) {
    size_t rank;
    if (config_value_shape(a->value[FL_SHAPE], shape, &rank, why, sizeof why) != 0)
      return cli_usage(a, "bad --shape '%s': %s", a->value[FL_SHAPE], why);
    o.shape = shape;
    o.shape_rank = rank;
  }
  if (cli_has(a, FL_THREADS)) {
    if (config_value_thread_count(a->value[FL_THREADS], &o.thread_count, why, sizeof why) != 0)
      return cli_usage(a, "bad --threads '%s': %s", a->value[FL_THREADS], why);
    if (o.thread_count == 0) { /* "max": every online CPU */
      long n = sysconf(_SC_NPROCESSORS_ONLN);
      o.thread_count = n > 0 ? (uint32_t)n : 1;
    }
  }
  if (access(path, R_OK) != 0)
    return cli_error("plugin check: %s: %s", path, strerror(errno));
  if (o.json)
    return check_plugin_check(path, &o, stdout);
  /* the checker prints what the plugin says (its error messages): through
   * the escaping filter, like every other human-readable output */
  FILE *out = base_text_filter_open(stdout);
  int rc = check_plugin_check(path, &o, out ? out : stdout);
  if (out)
    fclose(out);
  return rc;
}

const cli_command cli_cmd_plugin = {
    "plugin",
    "check PATH [--timeout S] [--operator OP] [--dtype T] [--shape D,D,...] [--threads N] [-v]",
    "plugin tools: plugin check PATH",
    "check: runs the conformance checker on one plugin file (exit 0 when every\n"
    "check passes, 1 when one fails, 2 when the file cannot be read or the\n"
    "arguments are wrong); --verbose (-v) shows each check's details and the\n"
    "plugin's debug and info logs; --quiet prints only the failed checks;\n"
    "--json prints one object: {\"plugin\", \"backend\", \"passed\", \"failed\",\n"
    "\"checks\": [{\"name\", \"status\" (pass or fail), \"message\", \"logs\":\n"
    "[{\"level\", \"message\"}]}]}.\n",
    plugin_flags,
    1,
    2,
    run_plugin,
};
