/*
 * workload.c: the deployment side of a configured workload (see
 * workload.h): configuration, store, plugin, target and built key.
 */
#include "workload.h"

#include "config/digest.h"
#include "config/values.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wl_close(wl_ctx *c) {
  if (c->inst && c->p)
    calhost_plugin_destroy(c->p, c->inst);
  c->inst = NULL;
  if (c->have_plugins)
    calhost_plugin_list_free(&c->plugins);
  if (c->have_targets)
    calhost_target_list_free(&c->targets);
  calstore_close(&c->store);
  if (c->have_cfg)
    calhost_config_free(&c->cfg);
}

static int serves(const calhost_plugin *p, const char *op) {
  for (size_t i = 0; i < p->operator_count; i++)
    if (!strcmp(p->operators[i], op))
      return 1;
  return 0;
}

int wl_open(calhost_cli *cli, const char *workload, const char *plugin, const char *threads,
            wl_ctx *c) {
  char err[1024];
  memset(c, 0, sizeof *c);
  if (calhost_cli_load_config(cli, &c->cfg) != 0)
    return 2;
  c->have_cfg = 1;
  c->w = calhost_config_workload_named(&c->cfg, workload);
  if (!c->w) {
    calhost_cli_error("no workload named '%s' in the configuration", workload);
    return 2;
  }
  if (!calhost_config_workload_digest(c->w, err, sizeof err)) {
    calhost_cli_error("%s", err);
    return 2;
  }
  calstore_status st = calhost_cli_open_store_config(cli, &c->cfg, &c->store);
  if (st != CALSTORE_OK || !c->store)
    return 2;

  uint32_t tc = c->cfg.thread_count_count ? c->cfg.thread_counts[0] : 1;
  if (threads && calhost_value_thread_count(threads, &tc, err, sizeof err) != 0) {
    calhost_cli_error("bad --threads '%s': %s", threads, err);
    return 2;
  }
  if (calhost_processor_targets(c->cfg.cpus, c->cfg.cpu_count, c->cfg.cpus_all, &tc, 1, &c->targets,
                                err, sizeof err) != 0) {
    calhost_cli_error("%s", err);
    return 2;
  }
  c->have_targets = 1;

  calhost_loader_options lo;
  calhost_loader_options_init(&lo);
  char *only[1] = {(char *)plugin};
  lo.config_dirs = c->cfg.plugin_dirs;
  lo.config_dir_count = c->cfg.plugin_dir_count;
  lo.explicit_paths = c->cfg.plugin_paths;
  lo.explicit_path_count = c->cfg.plugin_path_count;
  lo.enabled = plugin ? only : c->cfg.enabled_backends;
  lo.enabled_count = plugin ? 1 : c->cfg.enabled_count;
  lo.disabled = c->cfg.disabled_backends;
  lo.disabled_count = c->cfg.disabled_count;
  if (calhost_loader_discover(&lo, &c->plugins) < 0) {
    calhost_cli_error("out of memory while loading plugins");
    return 2;
  }
  c->have_plugins = 1;
  for (size_t i = 0; i < c->plugins.count && !c->p; i++) {
    calhost_plugin *p = c->plugins.items[i];
    if (p->loaded && (plugin ? !strcmp(p->backend, plugin) : serves(p, c->w->operator_name)))
      c->p = p;
  }
  if (!c->p) {
    if (plugin)
      calhost_cli_error("plugin '%s' not found or not loadable", plugin);
    else
      calhost_cli_error("no plugin serves operator %s of workload '%s'", c->w->operator_name,
                        workload);
    return 2;
  }
  const calhost_config_plugin_section *sec = calhost_config_plugin_named(&c->cfg, c->p->backend);
  calhost_status cs = calhost_plugin_create(c->p, sec ? sec->settings : NULL,
                                            sec ? sec->setting_count : 0, &c->inst);
  if (cs != CALHOST_OK || !c->inst) {
    const char *m = calhost_plugin_take_error(c->p);
    calhost_cli_error("%s: create failed: %s%s%s", c->p->backend, calhost_status_name(cs),
                      m ? ": " : "", m ? m : "");
    c->inst = NULL;
    return 2;
  }
  memset(&c->wl, 0, sizeof c->wl);
  c->wl.header = (calhost_struct_header){CALHOST_STRUCT_WORKLOAD, 1, sizeof c->wl};
  c->wl.name = c->w->name;
  c->wl.operator_name = c->w->operator_name;
  c->wl.dtype = c->w->dtype ? c->w->dtype : "float32";
  c->wl.shape = c->w->shape;
  c->wl.shape_rank = c->w->shape_rank;
  c->wl.properties = c->w->properties;
  c->wl.property_count = c->w->property_count;
  c->wl.model_digest = c->w->model_digest;
  memset(&c->tg, 0, sizeof c->tg);
  c->tg.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof c->tg};
  c->tg.processor = c->targets.processor.description;
  c->tg.thread_count = c->targets.items[0].thread_count;
  c->tg.cpus = c->targets.items[0].cpus;
  c->tg.cpu_count = c->targets.items[0].cpu_count;
  c->tg.features = c->targets.processor.features;
  memset(&c->key, 0, sizeof c->key);
  c->key.header = (calhost_struct_header){CALHOST_STRUCT_BUILT_KEY, 1, sizeof c->key};
  cs = calhost_plugin_build_key(c->p, c->inst, &c->wl, &c->tg, &c->key);
  if (cs != CALHOST_OK) {
    const char *m = calhost_plugin_take_error(c->p);
    calhost_cli_error("%s: build_key failed for workload '%s': %s%s%s", c->p->backend, workload,
                      calhost_status_name(cs), m ? ": " : "", m ? m : "");
    return 2;
  }
  return 0;
}

int wl_validate(void *user, const char *policy, size_t length, char *err, size_t cap) {
  wl_ctx *c = user;
  return calhost_plugin_validate(c->p, c->inst, policy, length, err, cap) == CALHOST_OK;
}
