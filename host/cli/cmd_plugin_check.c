/*
 * cmd_plugin_check.c: `calhost plugin check PATH`: runs the conformance
 * checker (host/check/check.c) on one plugin file: PASS/FAIL lines, only
 * the FAIL lines with --quiet, one JSON object with --json (`calhost
 * plugins`, the list, is cmd_plugins.c; `calhost check` of the store is
 * cmd_store_check.c).
 */
#include <ctype.h>
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
    {FL_SETTING, "--setting", NULL, "KEY=VALUE",
     "a setting of the plugin's [plugin NAME] section (repeatable)"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

/* The most --setting flags plugin check takes. */
#define MAX_SETTINGS 64

/* --setting KEY=VALUE (repeatable) into props (KEY [A-Za-z0-9_.-]+, as a
 * [plugin NAME] section's keys; each KEY once; the strings point into
 * argv, which text is cut at the '='), except the host's keys of the
 * section, which calibrate never passes to create(): devices (the device
 * selection) and time_budget (the plugin's budget) go into o, parsed by the
 * config's parsers (o->devices is malloc'd: config_value_strings_free).
 * Returns the count, or -1 after the usage error. */
static long parse_settings(cli_args *a, calhost_property *props, check_options *o) {
  char *v[MAX_SETTINGS];
  size_t n = cli_all(a, FL_SETTING, v, MAX_SETTINGS);
  if (n > MAX_SETTINGS)
    return cli_usage(a, "at most %d --setting flags", MAX_SETTINGS), -1;
  for (size_t i = 0; i < n; i++) {
    char *eq = strchr(v[i], '=');
    if (!eq || eq == v[i])
      return cli_usage(a, "bad --setting '%s': give KEY=VALUE", v[i]), -1;
    for (const char *k = v[i]; k < eq; k++)
      if (!isalnum((unsigned char)*k) && *k != '_' && *k != '.' && *k != '-')
        return cli_usage(a, "bad --setting '%s': the key must be [A-Za-z0-9_.-]+", v[i]), -1;
    *eq = '\0';
    for (size_t j = 0; j < i; j++)
      if (!strcmp(props[j].name, v[i]))
        return cli_usage(a, "--setting %s is given twice", v[i]), -1;
    props[i].name = v[i];
    props[i].value = eq + 1;
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    char why[300];
    if (!strcmp(props[i].name, "devices")) {
      char **list;
      size_t count;
      int all;
      if (config_value_devices(props[i].value, &list, &count, &all, why, sizeof why) != 0)
        return cli_usage(a, "bad --setting devices=%s: %s", props[i].value, why), -1;
      o->devices = (const char *const *)list;
      o->device_count = count;
    } else if (!strcmp(props[i].name, "time_budget")) {
      if (config_value_duration(props[i].value, 1, &o->time_budget_seconds, why, sizeof why) != 0) {
        config_value_strings_free((char **)o->devices, o->device_count);
        o->devices = NULL;
        return cli_usage(a, "bad --setting time_budget=%s: %s", props[i].value, why), -1;
      }
    } else {
      props[kept++] = props[i];
    }
  }
  return (long)kept;
}

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
  calhost_property settings[MAX_SETTINGS];
  long ns = parse_settings(a, settings, &o);
  if (ns < 0)
    return 2;
  o.settings = settings;
  o.setting_count = (size_t)ns;
  int rc;
  if (access(path, R_OK) != 0) {
    rc = cli_error("plugin check: %s: %s", path, strerror(errno));
  } else if (o.json) {
    rc = check_plugin_check(path, &o, stdout);
  } else {
    /* the checker prints what the plugin says (its error messages): through
     * the escaping filter, like every other human-readable output */
    FILE *out = base_text_filter_open(stdout);
    rc = check_plugin_check(path, &o, out ? out : stdout);
    if (out)
      fclose(out);
  }
  config_value_strings_free((char **)o.devices, o.device_count);
  return rc;
}

const cli_command cli_cmd_plugin = {
    "plugin",
    "check PATH [--timeout S] [--operator OP] [--dtype T] [--shape D,D,...] [--threads N]\n"
    "       [--setting KEY=VALUE]... [-v]",
    "plugin tools: plugin check PATH",
    "check: runs the conformance checker on one plugin file (exit 0 when every\n"
    "check passes, 1 when one fails, 2 when the file cannot be read or the\n"
    "arguments are wrong); --setting KEY=VALUE (repeatable) gives create() the\n"
    "setting, as the plugin's [plugin NAME] section would (fault paths and\n"
    "settings without recompiling); devices=... and time_budget=... are calhost's\n"
    "keys of that section, as for calibrate: the checks run on the first device\n"
    "selected, the sample sweep within the budget, and create() never sees them;\n"
    "--verbose (-v) shows each check's details and the plugin's debug and info\n"
    "logs; --quiet prints only the failed checks;\n"
    "--json prints one object: {\"plugin\", \"backend\", \"passed\", \"failed\",\n"
    "\"skipped\", \"checks\": [{\"name\", \"status\" (pass, fail or skip), \"message\", \"logs\":\n"
    "[{\"level\", \"message\"}]}]}.\n",
    plugin_flags,
    1,
    2,
    run_plugin,
};
