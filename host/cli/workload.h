/*
 * workload.h: the deployment side of a configured workload, shared by the
 * workload forms of `lookup` and `override`: the configuration, the store,
 * the plugin that serves the workload (created with its [plugin NAME]
 * settings), the target of this machine and the key the plugin builds for
 * it, and the plugin's validator as a store validator.
 */
#ifndef CALHOST_CLI_WORKLOAD_H
#define CALHOST_CLI_WORKLOAD_H

#include "commands.h"
#include "config/config.h"
#include "loader/loader.h"
#include "processor/processor.h"

typedef struct wl_ctx {
  calhost_config cfg;
  int have_cfg;
  calstore *store;
  calhost_plugin_list plugins;
  int have_plugins;
  calhost_plugin *p;
  calhost_plugin_instance *inst;
  calhost_target_list targets;
  int have_targets;
  const calhost_config_workload *w;
  calhost_workload wl;
  calhost_target tg;
  calhost_built_key key;
} wl_ctx;

/* Loads the configuration and the store, finds the plugin (plugin, else
 * the first loaded one serving the workload's operator), creates it and
 * builds the key for `threads` ("N" or "max"; NULL: the first configured
 * thread count). Returns 0, or prints why and returns 2; call wl_close
 * either way. */
int wl_open(calhost_cli *cli, const char *workload, const char *plugin, const char *threads,
            wl_ctx *c);

/* Releases everything wl_open acquired. */
void wl_close(wl_ctx *c);

/* The plugin's validate_policy as a calstore_validator_fn (user: wl_ctx). */
int wl_validate(void *user, const char *policy, size_t length, char *err, size_t cap);

#endif /* CALHOST_CLI_WORKLOAD_H */
