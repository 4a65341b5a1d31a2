/*
 * setup.c: the set-up of a run of the calibrate driver (run.h's
 * cal_setup): the store (--store > [store] path > the default), the
 * pre-flight checks of what the run will write, the selected workloads
 * (their model digests hashed once, here in the parent), the targets and
 * environment, and the plugins (discovered and loaded; every backend asked
 * for must load). The same for calibrate, plan and verify; a mode says
 * through its table what it needs (a plan opens no store).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/files.h"
#include "base/str.h"
#include "base/text.h"
#include "config/digest.h"
#include "run.h"
#include "sweep/recording.h"

/* The store, and what the run will write checked before any sweep: the
 * store (its folders are created) and a --record file. Returns 0, or 2. */
static int open_store(cal_setup *set, const cal_mode *m, calstore_status *store_failed, char *err,
                      size_t cap) {
  const calibrate_options *o = set->o;
  if ((*store_failed = runtime_binding_open_store(set->cfg, o->store_path, &set->store, err,
                                                  cap)) != CALSTORE_OK ||
      !set->store) {
    base_text_printf(set->err, "calhost: %s\n", err);
    if (*store_failed == CALSTORE_OK)
      *store_failed = CALSTORE_UNREADABLE;
    return 2;
  }
  const char *store_path = calstore_path(set->store);
  if (m->writes_store && set->cfg->persistence_enabled && store_path &&
      base_path_writable(store_path, 1, err, cap) != 0) {
    base_text_printf(set->err, "calhost: %s: cannot write the store %s: %s\n", m->command,
                     store_path, err);
    return 2;
  }
  /* --record follows the rule of every output file (base_output_prepare):
   * its folders are created, and what stands at FILE must be a regular
   * file or nothing */
  if (o->record_path && base_output_prepare(o->record_path, err, cap) != 0) {
    base_text_printf(set->err, "calhost: %s: --record: cannot write %s: %s\n", m->command,
                     o->record_path, err);
    return 2;
  }
  if (o->record_path) /* the run the sweeps' recordings belong to (recording.h) */
    sweep_recording_new_run();
  return 0;
}

/* A workload name and its index, sorted by name: --workload filters are
 * matched by binary search, so a run of a model's S structures costs
 * S log S, not S squared. */
typedef struct named_index {
  const char *name;
  size_t index;
} named_index;

static int by_name(const void *a, const void *b) {
  return strcmp(((const named_index *)a)->name, ((const named_index *)b)->name);
}

/* The workloads --workload selects (all without it), their model digests
 * hashed when the run runs plugins. Returns 0, or 2. */
static int select_workloads(cal_setup *set, const cal_mode *m, char *err, size_t cap) {
  const calibrate_options *o = set->o;
  const config_settings *cfg = set->cfg;
  set->workloads = calloc(cfg->workload_count + 1, sizeof *set->workloads);
  unsigned char *chosen = calloc(cfg->workload_count + 1, 1);
  named_index *sorted = calloc(cfg->workload_count + 1, sizeof *sorted);
  if (!set->workloads || !chosen || !sorted) {
    free(chosen), free(sorted);
    return 2;
  }
  for (size_t i = 0; i < cfg->workload_count; i++)
    sorted[i] = (named_index){cfg->workloads[i].name, i};
  qsort(sorted, cfg->workload_count, sizeof *sorted, by_name);
  for (size_t i = 0; i < o->workload_count; i++) {
    named_index key = {o->workloads[i], 0};
    const named_index *f = bsearch(&key, sorted, cfg->workload_count, sizeof *sorted, by_name);
    if (!f) {
      base_text_printf(set->err, "calhost: %s: no workload named '%s' in the configuration\n",
                       m->command, o->workloads[i]);
      free(chosen), free(sorted);
      return 2;
    }
    chosen[f->index] = 1;
  }
  free(sorted);
  for (size_t i = 0; i < cfg->workload_count; i++)
    if (!o->workload_count || chosen[i]) {
      /* The model digest, hashed once here in the parent: every child
       * inherits it. */
      if (m->runs_plugins && !config_workload_digest(&cfg->workloads[i], err, cap)) {
        base_text_printf(set->err, "calhost: %s: %s\n", m->command, err);
        free(chosen);
        return 2;
      }
      set->workloads[set->workload_count++] = i;
    }
  free(chosen);
  if (!set->workload_count) {
    fprintf(set->err, "calhost: %s: the configuration has no workload\n", m->command);
    return 2;
  }
  return 0;
}

/* The targets of the configured thread counts (1 without any), and the
 * environment when the run runs plugins. Returns 0, or 2. */
static int select_targets(cal_run *r, cal_setup *set, const cal_mode *m, char *err, size_t cap) {
  static const uint32_t one_thread = 1;
  const uint32_t *tc = set->cfg->thread_counts;
  size_t ntc = set->cfg->thread_count_count;
  if (!tc || !ntc) {
    tc = &one_thread;
    ntc = 1;
  }
  if (runtime_binding_targets(set->cfg, tc, ntc, &set->targets, err, cap) != 0) {
    base_text_printf(set->err, "calhost: %s: %s\n", m->command, err);
    return 2;
  }
  if (m->runs_plugins) {
    processor_environment_record(set->targets.cpus, set->targets.cpu_count, &set->env);
    for (size_t i = 0; i < set->env.warning_count; i++)
      cal_warn(r, "%s", set->env.warnings[i]);
  }
  return 0;
}

/* Every backend asked for (--plugin, else the enabled list) must load: the
 * others are failures of the run, with the reason. */
static void require_loaded(cal_run *r, cal_setup *set, char *const *want, size_t nwant) {
  for (size_t i = 0; i < nwant; i++) {
    loader_plugin *p = loader_plugin_list_find(&set->plugins, want[i]);
    if (p && p->loaded)
      continue;
    char *why = NULL;
    if (base_str_listed(set->cfg->disabled_backends, set->cfg->disabled_count, want[i]))
      why =
          base_str_format("disabled by the configuration ([plugins] disabled in %s)",
                          set->cfg->source_path ? set->cfg->source_path : "the built-in defaults");
    cal_add_failure(r, want[i], NULL, 0, NULL,
                    why              ? why
                    : p && p->reason ? p->reason
                                     : "not found (or it failed to load)",
                    NULL);
    free(why);
  }
}

/* The loaded plugins the run may use (with --plugin, those named), and the
 * sweeps of the CPU backends among them added to the run's total (a device
 * backend's once its devices are listed); a plugin that did not load and
 * was not asked for is a warning. */
static size_t count_usable(cal_run *r, cal_setup *set, char *const *want, size_t nwant) {
  const calibrate_options *o = set->o;
  size_t usable = 0;
  for (size_t i = 0; i < set->plugins.count; i++) {
    loader_plugin *p = set->plugins.items[i];
    if (!base_str_allowed(o->plugins, o->plugin_count, NULL, 0, p->backend))
      continue;
    if (!p->loaded) {
      /* named in the enabled list: a failure (require_loaded); otherwise a warning */
      int wanted = p->backend && base_str_listed(want, nwant, p->backend);
      if (p->reason && !wanted && p->state != CALHOST_PLUGIN_DISABLED)
        cal_warn(r, "plugin %s not loaded: %s", p->path ? p->path : "?", p->reason);
      continue;
    }
    usable++;
    if (!runtime_devices_supported(p))
      r->sweeps_total += cal_sweeps_of(r, p);
  }
  return usable;
}

/* The plugins: --plugin narrows the configuration's enabled list (nothing
 * else is loaded). Returns 0, or the exit status 2 (*print: the run's
 * output is still printed). */
static int load_plugins(cal_run *r, cal_setup *set, const cal_mode *m, int *print) {
  const calibrate_options *o = set->o;
  const config_settings *cfg = set->cfg;
  char **only = calloc(o->plugin_count + 1, sizeof *only); /* --plugin names that are enabled */
  size_t nonly = 0;
  if (!only)
    return 2;
  for (size_t i = 0; i < o->plugin_count; i++) {
    if (cfg->enabled_count &&
        !base_str_listed(cfg->enabled_backends, cfg->enabled_count, o->plugins[i])) {
      cal_add_failure(r, o->plugins[i], NULL, 0, NULL, "not enabled in the configuration", NULL);
      continue;
    }
    only[nonly++] = o->plugins[i];
  }
  int status = 0;
  if (o->plugin_count && !nonly) {
    fprintf(set->err, "calhost: %s: none of the --plugin backends is enabled\n", m->command);
    *print = 1;
    free(only);
    return 2;
  }
  loader_options lo;
  loader_options_init(&lo);
  runtime_binding_loader_options(cfg, &lo);
  lo.enabled = nonly ? only : cfg->enabled_backends;
  lo.enabled_count = nonly ? nonly : cfg->enabled_count;
  lo.services.user = r;
  lo.services.cancel_flag = cal_cancel_flag();
  lo.services.is_cancelled = cal_budget_over;
  if (loader_discover(&lo, &set->plugins) < 0) {
    fprintf(set->err, "calhost: %s: out of memory while loading plugins\n", m->command);
    free(only);
    return 2;
  }
  char *const *want = nonly ? only : cfg->enabled_backends;
  size_t nwant = nonly ? nonly : cfg->enabled_count;
  require_loaded(r, set, want, nwant);
  if (!count_usable(r, set, want, nwant)) {
    fprintf(set->err, "calhost: %s: no plugin to calibrate\n", m->command);
    *print = 1;
    status = 2;
  }
  free(only);
  return status;
}

int cal_setup_open(cal_run *r, cal_setup *set, const cal_mode *m, int *print,
                   calstore_status *store_failed, char *err, size_t cap) {
  r->set = set;
  *print = 0;
  *store_failed = CALSTORE_OK;
  sweep_rigor_params_init(set->cfg->rigor, set->cfg->repetitions, &set->params);
  snprintf(set->rigor_name, sizeof set->rigor_name, "%s", base_rigor_name(set->cfg->rigor));
  int status = 0;
  if (m->runs_plugins)
    status = open_store(set, m, store_failed, err, cap);
  if (!status)
    status = select_workloads(set, m, err, cap);
  if (!status)
    status = select_targets(r, set, m, err, cap);
  if (!status)
    status = load_plugins(r, set, m, print);
  return status;
}

void cal_setup_close(cal_setup *set) {
  free(set->workloads);
  set->workloads = NULL;
  loader_plugin_list_free(&set->plugins);
  processor_target_list_free(&set->targets);
  calstore_close(&set->store);
}
