/*
 * cmd_plugins.c: the plugin commands of the command line:
 *   calhost plugins [--json]      list every discovered plugin: path, backend,
 *                                 implementation and ABI versions, operators,
 *                                 loaded or rejected, the loader's state
 *                                 (unsafe, unloadable, duplicate, disabled)
 *                                 and the reason;
 *   calhost plugin check PATH     run the conformance checker (host/check/
 *                                 check.c) on one plugin file: PASS/FAIL
 *                                 lines, only the FAIL lines with --quiet,
 *                                 one JSON object with --json.
 * Plugin directories, explicit paths and the enabled/disabled lists come
 * from the configuration ([plugins]); CALHOST_PLUGIN_PATH adds directories.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/text.h"
#include "base/words.h"
#include "commands.h"
#include "check/check.h"
#include "config/config.h"
#include "config/values.h"
#include "loader/loader.h"
#include "runtime/binding.h"

static const char *origin_name(loader_plugin_origin o) {
  static const char *const words[] = {[CALHOST_ORIGIN_EXPLICIT] = "explicit",
                                      [CALHOST_ORIGIN_ENVIRONMENT] = "CALHOST_PLUGIN_PATH",
                                      [CALHOST_ORIGIN_CONFIG] = "config",
                                      [CALHOST_ORIGIN_DEFAULT] = "default"};
  return BASE_WORD(words, CALHOST_ORIGIN_DEFAULT, o, "unknown");
}

static void print_json(FILE *out, const loader_plugin_list *list) {
  fputs("{\"plugins\":[", out);
  for (size_t i = 0; i < list->count; i++) {
    const loader_plugin *p = list->items[i];
    fputs(i ? ",\n{" : "\n{", out);
    base_json_member_string(out, 1, "path", p->path);
    base_json_member_string(out, 0, "origin", origin_name(p->origin));
    base_json_member_string(out, 0, "backend", p->backend);
    base_json_member_string(out, 0, "implementation_version", p->implementation_version);
    base_json_member_uint(out, 0, "abi_version", p->abi_version);
    base_json_member_uint(out, 0, "plugin_abi_min", p->plugin_abi_min);
    base_json_member_uint(out, 0, "plugin_abi_max", p->plugin_abi_max);
    base_json_member_strings(out, 0, "operators", p->operators, p->operator_count);
    base_json_member_string(out, 0, "description", p->description);
    base_json_member_string(out, 0, "status", p->loaded ? "loaded" : "rejected");
    base_json_member_string(out, 0, "state", loader_plugin_state_name(p->state));
    base_json_member_string(out, 0, "reason",
                            p->loaded   ? NULL
                            : p->reason ? p->reason
                                        : "not loaded");
    fputc('}', out);
  }
  fputs("\n]}\n", out);
}

static void print_text(FILE *out, const loader_plugin_list *list) {
  size_t loaded = 0;
  if (!list->count)
    fprintf(out, "no plugins found (configure [plugins] directories or set "
                 "CALHOST_PLUGIN_PATH)\n");
  for (size_t i = 0; i < list->count; i++) {
    const loader_plugin *p = list->items[i];
    base_text_printf(out, "%s (%s)\n", p->path, origin_name(p->origin));
    if (p->backend) {
      char ops[2048] = "";
      for (size_t k = 0, n = 0; k < p->operator_count; k++)
        n += (size_t)snprintf(ops + n, n < sizeof ops ? sizeof ops - n : 0, " %s", p->operators[k]);
      base_text_printf(out,
                       "  backend %s, implementation %s, ABI %u (plugin %u..%u), "
                       "operators:%s\n",
                       p->backend, p->implementation_version ? p->implementation_version : "?",
                       p->abi_version, p->plugin_abi_min, p->plugin_abi_max, ops);
      if (p->description && *p->description)
        base_text_printf(out, "  %s\n", p->description);
    }
    if (p->loaded) {
      fprintf(out, "  loaded\n");
      loaded++;
    } else {
      base_text_printf(out, "  rejected: %s\n", p->reason ? p->reason : "not loaded");
    }
  }
  fprintf(out, "%zu plugin%s found, %zu loaded\n", list->count, list->count == 1 ? "" : "s",
          loaded);
}

static int run_plugins(cli_context *cli, cli_args *a) {
  config_settings cfg;
  loader_options o;
  loader_plugin_list list;
  (void)a;
  memset(&cfg, 0, sizeof cfg);
  if (cli_load_config(cli, &cfg) != 0)
    return 2;
  loader_options_init(&o);
  runtime_binding_loader_options(&cfg, &o);
  if (cli_discover(cli, "plugins", &o, &list) != 0) {
    config_free(&cfg);
    return 2;
  }
  if (cli->json)
    print_json(stdout, &list);
  else
    print_text(stdout, &list);
  loader_plugin_list_free(&list);
  config_free(&cfg);
  return 0;
}

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

const cli_command cli_cmd_plugins = {
    "plugins",
    "",
    "list discovered plugins",
    "Every plugin file found (configured directories, CALHOST_PLUGIN_PATH,\n"
    "explicit paths): backend, versions, operators, loaded or rejected and why.\n",
    NULL,
    0,
    0,
    run_plugins,
};

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
