/*
 * cmd_calibrate_lookup.c: the deployment side of calhost for a configured
 * workload: `calhost lookup --workload W` builds the exact and portable keys
 * through the plugin's key-builder for this machine and walks the store's
 * precedence with the plugin's validator; `calhost override set|clear
 * --workload W` installs or clears a user override validated by the plugin.
 * cmd_store.c hands these forms over (see commands.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config/config.h"
#include "config/digest.h"
#include "config/values.h"
#include "json.h"
#include "loader/loader.h"
#include "processor/processor.h"

/* Everything a workload command needs: config, store, plugin, instance, key. */
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

static const char *opt_value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (!strncmp(a, name, n) && a[n] == '=')
    return a + n + 1;
  if (!strcmp(a, name) && *i + 1 < argc)
    return argv[++*i];
  return NULL;
}

static int is_opt(const char *a, const char *name) {
  size_t n = strlen(name);
  return !strcmp(a, name) || (!strncmp(a, name, n) && a[n] == '=');
}

static void wl_close(wl_ctx *c) {
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

/* Loads config, store, the plugin and builds the key. Returns 0 or 2. */
static int wl_open(calhost_cli *cli, const char *workload, const char *plugin, const char *threads,
                   wl_ctx *c) {
  char err[1024];
  memset(c, 0, sizeof *c);
  if (calhost_cli_load_config(cli, &c->cfg) != 0)
    return 2;
  c->have_cfg = 1;
  c->w = calhost_config_workload_named(&c->cfg, workload);
  if (!c->w) {
    fprintf(stderr, "calhost: no workload named '%s' in the configuration\n", workload);
    return 2;
  }
  if (!calhost_config_workload_digest(c->w, err, sizeof err)) {
    fprintf(stderr, "calhost: %s\n", err);
    return 2;
  }
  calstore_status st = calhost_cli_open_store_config(cli, &c->cfg, &c->store);
  if (st != CALSTORE_OK || !c->store)
    return 2;

  uint32_t tc = c->cfg.thread_count_count ? c->cfg.thread_counts[0] : 1;
  if (threads && calhost_value_thread_count(threads, &tc, err, sizeof err) != 0) {
    fprintf(stderr, "calhost: bad --threads '%s': %s\n", threads, err);
    return 2;
  }
  if (calhost_processor_targets(c->cfg.cpus, c->cfg.cpu_count, c->cfg.cpus_all, &tc, 1, &c->targets,
                                err, sizeof err) != 0) {
    fprintf(stderr, "calhost: %s\n", err);
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
    fprintf(stderr, "calhost: out of memory while loading plugins\n");
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
      fprintf(stderr, "calhost: plugin '%s' not found or not loadable\n", plugin);
    else
      fprintf(stderr, "calhost: no plugin serves operator %s of workload '%s'\n",
              c->w->operator_name, workload);
    return 2;
  }
  const calhost_config_plugin_section *sec = calhost_config_plugin_named(&c->cfg, c->p->backend);
  calhost_status cs = calhost_plugin_create(c->p, sec ? sec->settings : NULL,
                                            sec ? sec->setting_count : 0, &c->inst);
  if (cs != CALHOST_OK || !c->inst) {
    const char *m = calhost_plugin_take_error(c->p);
    fprintf(stderr, "calhost: %s: create failed: %s%s%s\n", c->p->backend, calhost_status_name(cs),
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
    fprintf(stderr, "calhost: %s: build_key failed for workload '%s': %s%s%s\n", c->p->backend,
            workload, calhost_status_name(cs), m ? ": " : "", m ? m : "");
    return 2;
  }
  return 0;
}

/* The plugin's validate_policy as a store validator. */
static int validate(void *user, const char *policy, size_t length, char *err, size_t cap) {
  wl_ctx *c = user;
  return calhost_plugin_validate(c->p, c->inst, policy, length, err, cap) == CALHOST_OK;
}

/* ---- JSON (the same object as the store-level lookup, through json.h) -- */

static const char *level_word(calstore_level l) {
  return calhost_level_name(l);
}

static void json_result(FILE *o, const calstore_lookup_result *r) {
  fputs("{\"status\":", o);
  calhost_json_string(o, calstore_status_name(r->status));
  fputs(",\"level\":", o);
  calhost_json_string(o, level_word(r->level));
  fputs(",\"profile\":", o);
  calhost_json_profile(o, r->profile);
  fputs(",\"rejections\":[", o);
  for (size_t i = 0; i < r->rejection_count; i++) {
    const calstore_rejection *x = &r->rejections[i];
    fputs(i ? ",{\"reason\":" : "{\"reason\":", o);
    calhost_json_string(o, calstore_reject_reason_name(x->reason));
    fputs(",\"message\":", o);
    calhost_json_string(o, x->message);
    fputs(",\"profile\":", o);
    calhost_json_profile(o, &x->profile);
    fputc('}', o);
  }
  fputs("],\"diagnostics\":[]}\n", o);
}

/* ---- explain ---------------------------------------------------------- */

static int profile_level(const calstore_profile *p) {
  int exact = p->key.kind == CALSTORE_KEY_EXACT;
  if (p->source == CALSTORE_SOURCE_OVERRIDE)
    return exact ? CALSTORE_LEVEL_EXACT_OVERRIDE : CALSTORE_LEVEL_PORTABLE_OVERRIDE;
  return exact ? CALSTORE_LEVEL_EXACT_CALIBRATED : CALSTORE_LEVEL_PORTABLE_CALIBRATED;
}

static void explain(FILE *o, const wl_ctx *c, int force_portable, const calstore_lookup_result *r) {
  fprintf(o, "lookup %s %s implementation %s (workload %s)\n", c->p->backend, c->w->operator_name,
          c->p->implementation_version, c->w->name);
  fprintf(o, "  exact key:    model %s\n                processor %s\n                threads %u\n",
          c->key.model_digest, c->key.processor, c->key.thread_count);
  fprintf(o, "  portable key:");
  for (size_t i = 0; i < c->key.structure_count; i++)
    fprintf(o, " %s=%s", c->key.structure[i].name, c->key.structure[i].value);
  fprintf(o, "\n  force_portable: %s\n", force_portable ? "yes" : "no");
  for (int lvl = CALSTORE_LEVEL_EXACT_OVERRIDE; lvl <= CALSTORE_LEVEL_PORTABLE_CALIBRATED; lvl++) {
    const char *what;
    int exact = lvl == CALSTORE_LEVEL_EXACT_OVERRIDE || lvl == CALSTORE_LEVEL_EXACT_CALIBRATED;
    if (force_portable && exact)
      what = "skipped (force_portable)";
    else if ((int)r->level == lvl)
      what = "SELECTED";
    else if (r->level != CALSTORE_LEVEL_NONE && lvl > (int)r->level)
      what = "not consulted (a higher level was selected)";
    else
      what = "no acceptable profile";
    fprintf(o, "  %d. %-20s %s\n", lvl, level_word((calstore_level)lvl), what);
    for (size_t i = 0; i < r->rejection_count; i++) {
      const calstore_rejection *x = &r->rejections[i];
      if (profile_level(&x->profile) == lvl)
        fprintf(o, "       rejected [%s] %s: policy %s\n", calstore_reject_reason_name(x->reason),
                x->message ? x->message : "", x->profile.policy);
    }
  }
  if (r->profile) {
    fprintf(o, "selected %s: %s\n", level_word(r->level), r->profile->policy);
    for (size_t i = 0; i < r->profile->measurement_count; i++)
      fprintf(o, "  %s = %g %s\n", r->profile->measurements[i].name,
              r->profile->measurements[i].value, r->profile->measurements[i].unit);
  } else {
    fprintf(o, "nothing selected\n");
  }
}

int calhost_cmd_lookup_workload(calhost_cli *cli, int argc, char **argv) {
  const char *workload = NULL, *plugin = NULL, *threads = NULL;
  int force_portable = 0, json = cli->json, want_explain = 0;
  calhost_cli local = *cli;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (is_opt(a, "--workload") && (v = opt_value(argc, argv, &i, "--workload")))
      workload = v;
    else if (is_opt(a, "--plugin") && (v = opt_value(argc, argv, &i, "--plugin")))
      plugin = v;
    else if (is_opt(a, "--threads") && (v = opt_value(argc, argv, &i, "--threads")))
      threads = v;
    else if (is_opt(a, "--config") && (v = opt_value(argc, argv, &i, "--config")))
      local.config_path = v;
    else if (is_opt(a, "--store") && (v = opt_value(argc, argv, &i, "--store")))
      local.store_path = v;
    else if (!strcmp(a, "--force-portable"))
      force_portable = 1;
    else if (!strcmp(a, "--json"))
      json = 1;
    else if (!strcmp(a, "--explain"))
      want_explain = 1;
    else
      return calhost_cli_usage_error(cli, "lookup: unknown or incomplete argument '%s'", a);
  }
  if (!workload)
    return calhost_cli_usage_error(cli, "lookup: --workload NAME is required here");
  wl_ctx c;
  int rc = wl_open(&local, workload, plugin, threads, &c);
  if (rc != 0) {
    wl_close(&c);
    return rc;
  }
  force_portable = force_portable || c.cfg.force_portable;
  calstore_lookup_options lo;
  memset(&lo, 0, sizeof lo);
  lo.backend = c.p->backend;
  lo.operator_name = c.w->operator_name;
  lo.implementation = c.p->implementation_version;
  lo.model_digest = c.key.model_digest;
  lo.processor = c.key.processor;
  lo.thread_count = c.key.thread_count;
  lo.structure = (const calstore_property *)c.key.structure;
  lo.structure_count = c.key.structure_count;
  lo.force_portable = force_portable;
  calstore_lookup_result *res = NULL;
  calstore_error err = {0};
  calstore_status st = calstore_lookup(c.store, &lo, validate, &c, &res, &err);
  if (!res) {
    fprintf(stderr, "calhost: lookup: %s: %s\n", calstore_status_name(st), err.message);
    wl_close(&c);
    return 2;
  }
  if (want_explain)
    explain(json ? stderr : stdout, &c, force_portable, res);
  if (json)
    json_result(stdout, res);
  else if (!want_explain) {
    if (res->profile)
      printf("%s %s: %s\n", level_word(res->level), c.p->backend, res->profile->policy);
    else
      printf("none: no acceptable profile for workload %s (%zu rejected)\n", workload,
             res->rejection_count);
  }
  rc = res->profile ? 0 : 1;
  calstore_lookup_result_free(&res);
  wl_close(&c);
  return rc;
}

static const char *serialize_text(void *user, size_t *length, char *err, size_t cap) {
  (void)err, (void)cap;
  *length = strlen((const char *)user);
  return user;
}

int calhost_cmd_override_workload(calhost_cli *cli, int argc, char **argv) {
  const char *workload = NULL, *plugin = NULL, *threads = NULL, *policy = NULL, *action = NULL;
  int portable = 0;
  calhost_cli local = *cli;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (!action && (!strcmp(a, "set") || !strcmp(a, "clear")))
      action = a;
    else if (is_opt(a, "--workload") && (v = opt_value(argc, argv, &i, "--workload")))
      workload = v;
    else if (is_opt(a, "--plugin") && (v = opt_value(argc, argv, &i, "--plugin")))
      plugin = v;
    else if (is_opt(a, "--threads") && (v = opt_value(argc, argv, &i, "--threads")))
      threads = v;
    else if (is_opt(a, "--policy") && (v = opt_value(argc, argv, &i, "--policy")))
      policy = v;
    else if (is_opt(a, "--config") && (v = opt_value(argc, argv, &i, "--config")))
      local.config_path = v;
    else if (is_opt(a, "--store") && (v = opt_value(argc, argv, &i, "--store")))
      local.store_path = v;
    else if (!strcmp(a, "--portable"))
      portable = 1;
    else
      return calhost_cli_usage_error(cli, "override: unknown or incomplete argument '%s'", a);
  }
  if (!action || !workload)
    return calhost_cli_usage_error(
        cli, "usage: override set|clear --workload W [--plugin B] [--threads N] [--portable] "
             "[--policy TEXT]");
  if (!strcmp(action, "set") && !policy)
    return calhost_cli_usage_error(cli, "override set: --policy TEXT is required");
  wl_ctx c;
  int rc = wl_open(&local, workload, plugin, threads, &c);
  if (rc != 0) {
    wl_close(&c);
    return rc;
  }
  calstore_key k;
  memset(&k, 0, sizeof k);
  k.backend = c.p->backend;
  k.operator_name = c.w->operator_name;
  k.implementation = c.p->implementation_version;
  if (portable) {
    k.kind = CALSTORE_KEY_PORTABLE;
    k.structure = (const calstore_property *)c.key.structure;
    k.structure_count = c.key.structure_count;
  } else {
    k.kind = CALSTORE_KEY_EXACT;
    k.model_digest = c.key.model_digest;
    k.processor = c.key.processor;
    k.thread_count = c.key.thread_count;
  }
  calstore_error err = {0};
  calstore_status st;
  if (!strcmp(action, "set"))
    st = calstore_install_override(c.store, &k, NULL, 0, serialize_text, (void *)policy, validate,
                                   &c, &err);
  else
    st = calstore_clear_override(c.store, &k, &err);
  if (st == CALSTORE_OK) {
    if (!cli->quiet)
      printf("%s %s override for %s workload %s%s\n",
             !strcmp(action, "set") ? "installed" : "cleared", portable ? "portable" : "exact",
             c.p->backend, workload, portable ? "" : " on this machine");
    rc = 0;
  } else {
    fprintf(stderr, "calhost: override %s: %s: %s\n", action, calstore_status_name(st),
            err.message);
    rc = st == CALSTORE_NOT_FOUND ? 1 : 2;
  }
  wl_close(&c);
  return rc;
}
