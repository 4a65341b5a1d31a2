/*
 * run.c: the state of one calibrate run (run.h): results, failures and
 * warnings as they are recorded, the small lookups over the selection, and
 * freeing the run.
 */
#include "run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/str.h"
#include "sweep/recording.h"

void cal_warn(cal_run *r, const char *fmt, ...) {
  va_list ap;
  char **w = base_array_grow(r->warnings, r->warning_count, &r->warning_cap, sizeof *w, 8);
  if (!w)
    return;
  r->warnings = w;
  va_start(ap, fmt);
  w[r->warning_count] = base_str_vformat(fmt, ap);
  va_end(ap);
  if (w[r->warning_count])
    r->warning_count++;
}

void cal_warn_once(cal_run *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = base_str_vformat(fmt, ap);
  va_end(ap);
  if (!text)
    return;
  for (size_t i = 0; i < r->warning_count; i++)
    if (!strcmp(r->warnings[i], text)) {
      free(text);
      return;
    }
  cal_warn(r, "%s", text);
  free(text);
}

const char *cal_workload_name(const cal_run *r, size_t index) {
  return index < r->cfg->workload_count ? r->cfg->workloads[index].name : "?";
}

size_t cal_targets_per_workload(const cal_run *r) {
  return r->cur_device ? 1 : r->targets.count;
}

cal_result *cal_add_result(cal_run *r) {
  cal_result *n = base_array_grow(r->results, r->result_count, &r->result_cap, sizeof *n, 8);
  if (!n)
    return NULL;
  r->results = n;
  cal_result *x = &n[r->result_count++];
  memset(x, 0, sizeof *x);
  x->backend = base_str_dup(r->cur ? r->cur->backend : NULL);
  x->implementation = base_str_dup(r->cur ? r->cur->implementation_version : NULL);
  if (r->cur_device) {
    x->on_device = 1;
    x->device_index = r->cur_device->index;
    x->device_name = base_str_dup(r->cur_device->name);
    x->device_identity = base_str_dup(r->cur_device->identity);
  }
  return x;
}

int cal_result_known(const cal_run *r, size_t workload, uint32_t threads) {
  for (size_t i = r->results_from; i < r->result_count; i++) {
    const cal_result *x = &r->results[i];
    if (x->workload == workload && x->threads == threads && r->cur &&
        !strcmp(x->backend ? x->backend : "", r->cur->backend) &&
        x->on_device == (r->cur_device != NULL) &&
        (!r->cur_device || x->device_index == r->cur_device->index))
      return 1;
  }
  return 0;
}

int cal_add_crash(cal_run *r, int every_sweep, size_t workload, uint32_t threads,
                  const char *policy, const char *reason) {
  cal_crash *n = base_array_grow(r->crashes, r->crash_count, &r->crash_cap, sizeof *n, 4);
  if (!n)
    return -1;
  r->crashes = n;
  cal_crash *c = &n[r->crash_count];
  c->every_sweep = every_sweep;
  c->workload = workload;
  c->threads = threads;
  c->policy = base_str_dup(policy);
  c->reason = base_str_dup(reason);
  if (!c->policy || !c->reason) {
    free(c->policy);
    free(c->reason);
    return -1;
  }
  r->crash_count++;
  return 0;
}

void cal_crashes_clear(cal_run *r) {
  for (size_t i = 0; i < r->crash_count; i++) {
    free(r->crashes[i].policy);
    free(r->crashes[i].reason);
  }
  r->crash_count = 0;
}

void cal_add_failure(cal_run *r, const char *backend, const char *workload, uint32_t threads,
                     const char *candidate, const char *message, const char *output) {
  cal_failure *n = base_array_grow(r->failures, r->failure_count, &r->failure_cap, sizeof *n, 8);
  if (!n)
    return;
  r->failures = n;
  cal_failure *f = &n[r->failure_count++];
  f->backend = base_str_dup(backend);
  f->workload = base_str_dup(workload);
  f->threads = threads;
  f->candidate = base_str_dup(candidate);
  f->message = base_str_dup(message);
  f->output = output && *output ? base_str_dup(output) : NULL;
}

int cal_item_selected(const cal_run *r, const loader_plugin *p, size_t workload, size_t target) {
  const config_workload *w = &r->cfg->workloads[workload];
  return runtime_binding_serves(p, w->operator_name) &&
         calibrate_shard_has(&r->o->shard, p->backend, w->name,
                             r->targets.items[target].thread_count,
                             r->cur_device ? r->cur_device->identity : NULL);
}

size_t cal_sweeps_of(const cal_run *r, const loader_plugin *p) {
  size_t n = 0;
  for (size_t i = 0; i < r->workload_count; i++)
    for (size_t t = 0; t < cal_targets_per_workload(r); t++)
      n += (size_t)cal_item_selected(r, p, r->workloads[i], t);
  return n;
}

int cal_record_path(const cal_run *r, const char *backend, size_t workload, long device,
                    uint32_t threads, char *buf, size_t cap, char *name, size_t name_cap) {
  /* FILE itself only for an unsharded run of one sweep: a shard's count
   * of sweeps says nothing about the campaign's, and two shards of one
   * sweep each must not write the same file */
  int single = r->sweeps_total == 1 && r->o->shard.count <= 1;
  return sweep_recording_path(r->o->record_path, single, backend, cal_workload_name(r, workload),
                              device, threads, buf, cap, name, name_cap);
}

void cal_run_free(cal_run *r) {
  for (size_t i = 0; i < r->result_count; i++) {
    cal_result *x = &r->results[i];
    free(x->backend);
    free(x->implementation);
    free(x->message);
    free(x->portable_note);
    free(x->device_name);
    free(x->device_identity);
    free(x->recorded);
    sweep_record_key_free(&x->key);
    sweep_result_free(&x->sweep);
  }
  free(r->results);
  for (size_t i = 0; i < r->failure_count; i++) {
    cal_failure *f = &r->failures[i];
    free(f->backend);
    free(f->workload);
    free(f->candidate);
    free(f->message);
    free(f->output);
  }
  free(r->failures);
  for (size_t i = 0; i < r->warning_count; i++)
    free(r->warnings[i]);
  free(r->warnings);
  free(r->workloads);
  free(r->cur_candidate);
  free(r->record_error);
  cal_crashes_clear(r);
  free(r->crashes);
  loader_plugin_list_free(&r->plugins);
  processor_target_list_free(&r->targets);
  calstore_close(&r->store);
}
