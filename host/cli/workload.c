/*
 * workload.c: the workload forms of `lookup` and `override` over the
 * deployment runtime (see workload.h), through its public API
 * (calhost/runtime.h) alone, as a deployment uses it.
 */
#include "workload.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "config/values.h"

int wl_refuse_key_flags(const cli_args *a) {
  static const cli_flag key_flags[] = {WL_KEY_FLAGS, {FL_NONE, NULL, NULL, NULL, NULL}};
  for (const cli_flag *f = key_flags; f->id != FL_NONE; f++)
    if (cli_has(a, f->id))
      return cli_usage(a, "%s cannot be combined with --workload (the plugin builds the key)",
                       f->name);
  return 0;
}

calhost_runtime_status wl_runtime_open(cli_context *cli, int force_portable, const char *device,
                                       calhost_runtime **rt, char *err, size_t err_capacity) {
  char path[4096];
  const char *file = NULL;
  config_settings cfg;
  *rt = NULL;
  if (err_capacity)
    err[0] = '\0';
  /* the command's own reading: its search, its notes, its errors */
  if (cli_load_config_file(cli, &cfg, path, sizeof path, &file) != 0)
    return CALHOST_RUNTIME_CONFIG;
  config_free(&cfg);
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = file; /* NULL: the built-in defaults, as the command said */
  o.store_path = cli->store_path;
  o.force_portable = force_portable;
  o.device = device;
  return calhost_runtime_open(&o, rt, err, err_capacity);
}

calhost_runtime_status wl_open_key(cli_context *cli, const char *cmd, const char *backend,
                                   int force_portable, wl_ctx *c, char *unvalidated,
                                   size_t unvalidated_cap) {
  char why[4608];
  memset(c, 0, sizeof *c);
  unvalidated[0] = '\0';
  calhost_runtime_status rs = wl_runtime_open(cli, force_portable, NULL, &c->rt, why, sizeof why);
  if (rs != CALHOST_RUNTIME_OK) {
    if (why[0])
      cli_error("%s", why);
    return rs;
  }
  rs = calhost_runtime_load_plugin(c->rt, backend, NULL, &c->plugin, why, sizeof why);
  if (rs == CALHOST_RUNTIME_NOT_FOUND || rs == CALHOST_RUNTIME_PLUGIN) {
    c->plugin = NULL;
    snprintf(unvalidated, unvalidated_cap, "policy not validated: %s", why);
    if (!cli->quiet)
      cli_error("warning: %s", unvalidated);
  } else if (rs != CALHOST_RUNTIME_OK) {
    cli_error("%s: %s", cmd, why);
    wl_close(c);
    return rs;
  }
  return CALHOST_RUNTIME_OK;
}

void wl_close(wl_ctx *c) {
  calhost_runtime_selection_free(&c->sel);
  calhost_runtime_close(&c->rt);
  c->plugin = NULL;
}

/* Appends "NAME (WHAT)" to c->asked, ", "-separated. */
static void asked(wl_ctx *c, const char *name, const char *what) {
  size_t n = strlen(c->asked);
  snprintf(c->asked + n, sizeof c->asked - n, "%s%s (%s)", n ? ", " : "", name, what);
  c->asked_count++;
}

/* A lookup without --plugin: every enabled plugin serving the workload's
 * operator, in the loader's order (c->plugin, loaded by the workload, is the
 * first), until one selects a profile; a plugin that cannot build the key
 * here (no device, a failing create) is passed over and named in c->asked.
 * Without any selection the answer is the first plugin's "none". */
static calhost_runtime_status select_any(wl_ctx *c, const char *workload, uint32_t tc, char *err,
                                         size_t cap) {
  const char *const *names;
  size_t n;
  calhost_runtime_status listed =
      calhost_runtime_serving_backends(c->rt, workload, &names, &n, err, cap);
  if (listed != CALHOST_RUNTIME_OK)
    return listed;
  calhost_runtime_status first = CALHOST_RUNTIME_OK;
  char first_err[4608] = "";
  calhost_runtime_plugin *none_plugin = NULL;
  calhost_runtime_selection *none = NULL;
  for (size_t i = 0; i < n; i++) {
    const char *name = names[i];
    calhost_runtime_plugin *p = NULL;
    calhost_runtime_selection *sel = NULL;
    char why[4608];
    calhost_runtime_status st = calhost_runtime_load_plugin(c->rt, name, NULL, &p, why, sizeof why);
    if (st == CALHOST_RUNTIME_OK)
      st = calhost_runtime_select(c->rt, p, workload, tc, &sel, why, sizeof why);
    if (st != CALHOST_RUNTIME_OK) {
      if (first == CALHOST_RUNTIME_OK) {
        first = st;
        snprintf(first_err, sizeof first_err, "%s", why);
      }
      asked(c, name, why);
      continue;
    }
    if (sel->result && sel->result->profile) {
      asked(c, name, "selected");
      calhost_runtime_selection_free(&none);
      c->plugin = p;
      c->sel = sel;
      return CALHOST_RUNTIME_OK;
    }
    char what[64];
    snprintf(what, sizeof what, "none, %zu rejected",
             sel->result ? sel->result->rejection_count : 0);
    asked(c, name, what);
    if (!none) {
      none = sel;
      none_plugin = p;
    } else {
      calhost_runtime_selection_free(&sel);
    }
  }
  if (none) {
    c->plugin = none_plugin;
    c->sel = none;
    return CALHOST_RUNTIME_OK;
  }
  if (first == CALHOST_RUNTIME_OK) { /* cannot be: the workload loaded c->plugin */
    snprintf(err, cap, "no plugin serves workload '%s'", workload);
    return CALHOST_RUNTIME_NOT_FOUND;
  }
  snprintf(err, cap, "%s", first_err);
  return first;
}

int wl_open(cli_context *cli, const char *workload, const char *plugin, const char *threads,
            const char *device, int force_portable, int select, wl_ctx *c) {
  char err[4608];
  memset(c, 0, sizeof *c);
  uint32_t tc = 0; /* the runtime's default: the first configured count */
  if (threads) {
    if (config_value_thread_count(threads, &tc, err, sizeof err) != 0) {
      cli_error("bad --threads '%s': %s", threads, err);
      return 2;
    }
    if (tc == 0) /* "max" */
      tc = CALHOST_RUNTIME_THREADS_MAX;
  }
  calhost_runtime_status st = wl_runtime_open(cli, force_portable, device, &c->rt, err, sizeof err);
  c->status = st;
  if (st == CALHOST_RUNTIME_CONFIG && !err[0])
    return 2; /* the command said why */
  if (st == CALHOST_RUNTIME_OK)
    st = calhost_runtime_load_plugin(c->rt, plugin, workload, &c->plugin, err, sizeof err);
  if (st == CALHOST_RUNTIME_OK && select && !plugin)
    st = select_any(c, workload, tc, err, sizeof err);
  else if (st == CALHOST_RUNTIME_OK)
    st = select
             ? calhost_runtime_select(c->rt, c->plugin, workload, tc, &c->sel, err, sizeof err)
             : calhost_runtime_build_keys(c->rt, c->plugin, workload, tc, &c->sel, err, sizeof err);
  c->status = st;
  if (st != CALHOST_RUNTIME_OK) {
    cli_error("%s", err);
    return 2;
  }
  return 0;
}
