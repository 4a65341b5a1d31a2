/*
 * plan.c: `calhost plan` (calibrate.h's calibrate_plan) as a mode of the
 * driver (run.h's cal_mode): the same selection of plugins, workloads,
 * targets and devices as calibrate, and every work item of the run, all
 * shards, each with its shard; nothing is measured, no store is opened.
 */
#include "calibrate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/str.h"
#include "base/text.h"
#include "run.h"

void calibrate_work_list_free(calibrate_work_list *list) {
  if (!list)
    return;
  for (size_t i = 0; i < list->count; i++) {
    calibrate_work_item *x = &list->items[i];
    free(x->backend);
    free(x->implementation);
    free(x->workload);
    free(x->operator_name);
    free(x->device);
  }
  free(list->items);
  memset(list, 0, sizeof *list);
}

/* The items of plugin p on device d (NULL: its CPU targets); -1 when out
 * of memory. */
static int plan_items(const cal_run *r, const loader_plugin *p, const runtime_device *d,
                      calibrate_work_list *out) {
  const calibrate_options *o = r->set->o;
  for (size_t w = 0; w < r->set->workload_count; w++) {
    const config_workload *cw = &r->set->cfg->workloads[r->set->workloads[w]];
    if (!runtime_binding_serves(p, cw->operator_name))
      continue;
    for (size_t t = 0; t < (d ? 1 : r->set->targets.count); t++) {
      calibrate_work_item *n = base_array_grow(out->items, out->count, &out->cap, sizeof *n, 16);
      if (!n)
        return -1;
      out->items = n;
      calibrate_work_item *x = &n[out->count++];
      memset(x, 0, sizeof *x);
      x->backend = base_str_dup(p->backend);
      x->implementation = base_str_dup(p->implementation_version);
      x->workload = base_str_dup(cw->name);
      x->operator_name = base_str_dup(cw->operator_name);
      x->threads = r->set->targets.items[t].thread_count;
      x->device = d ? base_str_dup(d->identity) : NULL;
      x->device_index = d ? d->index : 0;
      x->shard = calibrate_shard_of(p->backend, cw->name, x->threads, d ? d->identity : NULL,
                                    o->shard.count);
      if (!x->backend || !x->implementation || !x->workload || !x->operator_name ||
          (d && !x->device))
        return -1;
    }
  }
  return 0;
}

/* A device backend's items: its devices are listed (in a child), one item
 * per selected device and workload. Returns 0, -1 when out of memory. */
static int plan_device_items(cal_run *r, loader_plugin *p, calibrate_work_list *out) {
  runtime_device_list devices;
  size_t *sel, nsel;
  int st = cal_select_devices(r, p, &devices, &sel, &nsel);
  if (st < 0)
    return 0;
  if (st == 0 && !devices.count)
    cal_note_no_device(r, p);
  int rc = sel ? 0 : -1;
  for (size_t k = 0; rc == 0 && k < nsel; k++)
    rc = plan_items(r, p, &devices.items[sel[k]], out);
  free(sel);
  runtime_device_list_free(&devices);
  return rc;
}

/* Every item the run would calibrate, all shards; -1 when out of memory. */
static int fill_plan(cal_run *r, calibrate_work_list *out) {
  const calibrate_options *o = r->set->o;
  for (size_t i = 0; i < r->set->plugins.count; i++) {
    loader_plugin *p = r->set->plugins.items[i];
    if (!p->loaded || !base_str_allowed(o->plugins, o->plugin_count, NULL, 0, p->backend))
      continue;
    int rc =
        runtime_devices_supported(p) ? plan_device_items(r, p, out) : plan_items(r, p, NULL, out);
    if (rc != 0)
      return -1;
  }
  return 0;
}

static int plan_run(cal_run *r) {
  calibrate_work_list *plan = r->mode_state;
  int status = fill_plan(r, plan) != 0 ? 2 : r->sink->failure_count ? 1 : 0;
  if (status == 0 && !plan->count) { /* calibrate's "no" for the same flags */
    char why[400];
    if (!r->no_device_count) /* only device backends without a device here: a skip */
      status = 1;
    cal_warn(r, "nothing to calibrate: %s", cal_nothing_reason(r, why, sizeof why));
  }
  return status;
}

/* The caller prints the plan; what is missing from it goes to err. */
static void plan_print(cal_run *r, int status) {
  (void)status;
  for (size_t i = 0; i < r->sink->failure_count; i++)
    base_text_printf(r->set->err, "calhost: plan: %s: %s\n", r->sink->failures[i].backend,
                     r->sink->failures[i].message);
  for (size_t i = 0; i < r->sink->warning_count; i++)
    base_text_printf(r->set->err, "calhost: plan: %s\n", r->sink->warnings[i]);
}

static const cal_mode plan_mode = {
    .command = "plan",
    .runs_plugins = 0,
    .run = plan_run,
    .print = plan_print,
};

int calibrate_plan(const calibrate_options *o, calibrate_work_list *out) {
  return cal_execute(o, &plan_mode, out);
}
