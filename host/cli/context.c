/*
 * context.c: what every command shares: error output, resolving and
 * loading the configuration (--config, else the default search of
 * config_find_default, else the built-in defaults: one rule,
 * whatever other flags are given), opening the store the host owns (the
 * binding's precedence: --store > [store] path > the default path), the
 * answer of a store command that succeeded (and its note when persistence
 * is disabled) and the key flags of `lookup` and `override`.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "commands.h"
#include "config/config.h"
#include "config/values.h"
#include "loader/loader.h"
#include "runtime/binding.h"

int cli_error(const char *fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  base_text_printf(stderr, "calhost: %s\n", msg);
  return 2;
}

void cli_store_error(const char *what, calstore_status st, const calstore_error *err) {
  char msg[4608];
  runtime_binding_store_error(msg, sizeof msg, st, err, NULL);
  cli_error("%s%s%s", what ? what : "", what ? ": " : "", msg);
}

int cli_store_failed(const char *cmd, calstore_status st, const calstore_error *err) {
  return cli_error("%s: %s: %s", cmd, calstore_status_name(st), err->message);
}

/* The configuration this command loaded (cli_load_config; one per
 * command): whether [store] persistence_enabled is false, and its file,
 * for cli_store_change_kept. */
static int g_persistence_off;
static char g_persistence_file[4096];

int cli_store_change_kept(const cli_context *cli) {
  if (!g_persistence_off)
    return 1;
  if (!cli->json && !cli->quiet)
    base_text_printf(stderr,
                     "calhost: note: persistence is disabled ([store] persistence_enabled = "
                     "false in %s): the change is not kept\n",
                     g_persistence_file);
  return 0;
}

/* The durability warning of this command's commit (cli_store_durability). */
static char g_store_warning[1400];

calstore_status cli_store_durability(const char *cmd, calstore_status st, int applied,
                                     const calstore_error *err) {
  if (st == CALSTORE_OK || !applied)
    return st;
  snprintf(g_store_warning, sizeof g_store_warning,
           "the change is stored, but durability is not guaranteed (it may not survive a power "
           "loss): %s",
           err->message);
  cli_error("warning: %s: %s", cmd, g_store_warning);
  return CALSTORE_OK;
}

const char *cli_store_warning(void) {
  return g_store_warning[0] ? g_store_warning : NULL;
}

int cli_store_done(const cli_context *cli, int change, const char *key, size_t count,
                   const char *fmt, ...) {
  if (cli->json) {
    fputc('{', stdout);
    base_json_member_string(stdout, 1, "status", "ok");
    if (key)
      base_json_member_uint(stdout, 0, key, count);
    if (change)
      base_json_member_bool(stdout, 0, "persisted", cli_store_change_kept(cli));
    if (cli_store_warning())
      base_json_member_string(stdout, 0, "warning", cli_store_warning());
    fputs("}\n", stdout);
    return 0;
  }
  if (!cli->quiet) {
    va_list ap;
    va_start(ap, fmt);
    base_text_vprintf(stdout, fmt, ap);
    va_end(ap);
  }
  if (change) {
    fflush(stdout); /* the note follows the line it qualifies */
    cli_store_change_kept(cli);
  }
  return 0;
}

const char *cli_config_file(const cli_context *cli, char *buf, size_t cap) {
  if (cli->config_path)
    return cli->config_path;
  if (config_find_default(buf, cap) == 0)
    return buf;
  return NULL;
}

void cli_print_search_places(FILE *out, const char *before, const char *after) {
  char places[4 * 4096];
  config_search_places(places, sizeof places);
  base_text_printf(out, "%s%s%s\n", before, places, after);
}

int cli_load_config(const cli_context *cli, config_settings *cfg) {
  char path[4096];
  const char *file;
  return cli_load_config_file(cli, cfg, path, sizeof path, &file);
}

int cli_load_config_file(const cli_context *cli, config_settings *cfg, char *path, size_t cap,
                         const char **chosen) {
  char err[1024];
  loader_log_set_verbose(cli->verbose); /* --verbose shows plugins' debug and info logs */
  const char *file = cli_config_file(cli, path, cap);
  *chosen = file;
  if (!file) {
    /* Said always (not only with --verbose): an installation without its
     * config otherwise fails later with "no workload". */
    if (!cli->quiet)
      cli_print_search_places(stderr, "calhost: no configuration file found (searched ",
                              "); using the built-in defaults, which have no workloads");
    if (config_defaults(cfg) != 0) {
      fprintf(stderr, "calhost: out of memory\n");
      return -1;
    }
    return 0;
  }
  if (cli->verbose)
    base_text_printf(stderr, "calhost: configuration: %s\n", file);
  if (config_load(file, cfg, err, sizeof err) != 0) {
    cli_error("%s", err);
    return -1;
  }
  g_persistence_off = !cfg->persistence_enabled;
  snprintf(g_persistence_file, sizeof g_persistence_file, "%s", file);
  return 0;
}

int cli_discover(const cli_context *cli, const char *what, loader_options *o,
                 loader_plugin_list *list) {
  if (cli->quiet)
    o->services.min_log_level = CALHOST_LOG_ERROR;
  if (loader_discover(o, list) < 0) {
    cli_error("%s: out of memory", what);
    return -1;
  }
  return 0;
}

calstore_status cli_open_store_config(const cli_context *cli, const config_settings *cfg,
                                      calstore **out) {
  char msg[4608];
  calstore_status st = runtime_binding_open_store(cfg, cli->store_path, out, msg, sizeof msg);
  if (st != CALSTORE_OK) {
    cli_error("%s", msg);
    if (cli->json) { /* the answer on stdout too, as an override's "no" */
      base_json_status_message(stdout, calstore_status_name(st), msg);
    }
  }
  return st;
}

calstore_status cli_open_store(const cli_context *cli, calstore **out) {
  config_settings cfg = {0};
  /* The same configuration whatever other flags are given: --store replaces
   * only the path, [store] persistence_enabled still applies. */
  if (cli_load_config(cli, &cfg) != 0)
    return CALSTORE_INVALID_ARGUMENT;
  calstore_status st = cli_open_store_config(cli, &cfg, out);
  config_free(&cfg);
  if (st != CALSTORE_OK)
    calstore_close(out);
  return st;
}

int cli_store_path(const cli_context *cli, char *buf, size_t cap) {
  calstore_options opts;
  config_settings cfg = {0};
  int rc = 0;
  if (cli_load_config(cli, &cfg) != 0)
    return -1;
  calstore_options_init(&opts);
  runtime_binding_store_options(&cfg, cli->store_path, &opts);
  if (opts.path) {
    if (snprintf(buf, cap, "%s", opts.path) >= (int)cap) {
      cli_error("store path too long");
      rc = -1;
    }
  } else if (calstore_default_path(buf, cap) != CALSTORE_OK) {
    cli_error("no store path: set --store, [store] path, XDG_CACHE_HOME or HOME");
    rc = -1;
  }
  config_free(&cfg);
  return rc;
}

int cli_key_flags(cli_args *a, int portable, int lookup, calstore_key *k,
                  calstore_property *structure) {
  memset(k, 0, sizeof *k);
  static const struct {
    cli_flag_id id;
    const char *name;
  } required[] = {{FL_BACKEND, "--backend"},
                  {FL_OPERATOR, "--operator"},
                  {FL_IMPLEMENTATION, "--implementation"}};
  k->backend = a->value[FL_BACKEND];
  k->operator_name = a->value[FL_OPERATOR];
  k->implementation = a->value[FL_IMPLEMENTATION];
  k->model_digest = a->value[FL_MODEL_DIGEST];
  k->processor = a->value[FL_PROCESSOR];
  if (cli_has(a, FL_THREADS)) {
    /* a key's thread count: any the store format holds (config/values.h) */
    unsigned long long v;
    char why[200];
    if (config_value_uint(a->value[FL_THREADS], 1, UINT32_MAX, &v, why, sizeof why) != 0)
      return cli_usage(a, "--threads: '%s': %s", a->value[FL_THREADS], why);
    k->thread_count = (uint32_t)v;
  }
  for (size_t i = 0; i < 3; i++)
    if (!cli_has(a, required[i].id))
      return cli_usage(a, "%s is required", required[i].name);
  char *pairs[CALHOST_CLI_MAX_STRUCTURE];
  size_t n = cli_all(a, FL_STRUCTURE, pairs, CALHOST_CLI_MAX_STRUCTURE);
  if (n > CALHOST_CLI_MAX_STRUCTURE)
    return cli_usage(a, "--structure: more than %d properties", CALHOST_CLI_MAX_STRUCTURE);
  for (size_t i = 0; i < n; i++) {
    char *eq = strchr(pairs[i], '=');
    if (!eq || eq == pairs[i])
      return cli_usage(a, "--structure: '%s' is not NAME=VALUE", pairs[i]);
    *eq = '\0'; /* split in place: argv strings are writable */
    structure[i].name = pairs[i];
    structure[i].value = eq + 1;
  }
  k->structure = structure;
  k->structure_count = n;
  int exact_given = k->model_digest || k->processor || cli_has(a, FL_THREADS);
  if (lookup) {
    if (!exact_given && !n)
      return cli_usage(a, "give the exact key (--model-digest, --processor, --threads) "
                          "and/or --structure");
    return 0;
  }
  if (portable) {
    if (exact_given)
      return cli_usage(a, "--portable takes --structure, not --model-digest/--processor/--threads");
    if (!n)
      return cli_usage(a, "--portable needs at least one --structure");
    k->kind = CALSTORE_KEY_PORTABLE;
    return 0;
  }
  if (n)
    return cli_usage(a, "--structure needs --portable");
  if (!k->model_digest)
    return cli_usage(a, "--model-digest is required");
  if (!k->processor)
    return cli_usage(a, "--processor is required");
  if (!cli_has(a, FL_THREADS))
    return cli_usage(a, "--threads is required");
  k->kind = CALSTORE_KEY_EXACT;
  k->structure = NULL;
  return 0;
}
