/*
 * workload.c: the workload forms of `lookup` and `override` over the
 * deployment runtime (see workload.h).
 */
#include "workload.h"

#include <stdio.h>
#include <string.h>

#include "config/values.h"
#include "runtime/internal.h"

int wl_refuse_key_flags(const cli_args *a) {
  static const cli_flag key_flags[] = {WL_KEY_FLAGS, {FL_NONE, NULL, NULL, NULL, NULL}};
  for (const cli_flag *f = key_flags; f->id != FL_NONE; f++)
    if (cli_has(a, f->id))
      return cli_usage(a, "%s cannot be combined with --workload (the plugin builds the key)",
                       f->name);
  return 0;
}

calhost_runtime_status wl_open_key(cli_context *cli, const char *cmd, const char *backend,
                                   int force_portable, wl_ctx *c, char *unvalidated,
                                   size_t unvalidated_cap) {
  char why[4608];
  config_settings cfg;
  memset(c, 0, sizeof *c);
  unvalidated[0] = '\0';
  if (cli_load_config(cli, &cfg) != 0)
    return CALHOST_RUNTIME_CONFIG;
  calhost_runtime_status rs =
      runtime_open_config(&cfg, cli->store_path, force_portable, &c->rt, why, sizeof why);
  if (rs != CALHOST_RUNTIME_OK) {
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
  config_settings cfg;
  c->status = CALHOST_RUNTIME_CONFIG;
  if (cli_load_config(cli, &cfg) != 0)
    return 2;
  calhost_runtime_status st =
      runtime_open_config(&cfg, cli->store_path, force_portable, &c->rt, err, sizeof err);
  if (st == CALHOST_RUNTIME_OK && device)
    st = runtime_set_device(c->rt, device);
  if (st == CALHOST_RUNTIME_OK)
    st = calhost_runtime_load_plugin(c->rt, plugin, workload, &c->plugin, err, sizeof err);
  if (st == CALHOST_RUNTIME_OK)
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
