/*
 * run.c: the run's state (run.h) as it is recorded: the sink (results,
 * failures, warnings; merging a wave's sink into the run's), the cursor
 * (crashes of the current plugin), the small lookups over the selection
 * and the pass, and the store probe of an exact key.
 */
#include "run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/str.h"
#include "sweep/recording.h"

/* ---- the sink ---------------------------------------------------------- */

void cal_warn(cal_run *r, const char *fmt, ...) {
  cal_sink *s = r->sink;
  va_list ap;
  char **w = base_array_grow(s->warnings, s->warning_count, &s->warning_cap, sizeof *w, 8);
  if (!w)
    return;
  s->warnings = w;
  va_start(ap, fmt);
  w[s->warning_count] = base_str_vformat(fmt, ap);
  va_end(ap);
  if (w[s->warning_count])
    s->warning_count++;
}

void cal_warn_once(cal_run *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = base_str_vformat(fmt, ap);
  va_end(ap);
  if (!text)
    return;
  for (size_t i = 0; i < r->sink->warning_count; i++)
    if (!strcmp(r->sink->warnings[i], text)) {
      free(text);
      return;
    }
  cal_warn(r, "%s", text);
  free(text);
}

cal_result *cal_add_result(cal_run *r) {
  cal_sink *s = r->sink;
  cal_result *n = base_array_grow(s->results, s->result_count, &s->result_cap, sizeof *n, 8);
  if (!n)
    return NULL;
  s->results = n;
  cal_result *x = &n[s->result_count++];
  memset(x, 0, sizeof *x);
  const loader_plugin *p = r->cur.plugin;
  x->backend = base_str_dup(p ? p->backend : NULL);
  x->implementation = base_str_dup(p ? p->implementation_version : NULL);
  if (r->cur.device) {
    x->on_device = 1;
    x->device_index = r->cur.device->index;
    x->device_name = base_str_dup(r->cur.device->name);
    x->device_identity = base_str_dup(r->cur.device->identity);
  }
  return x;
}

void cal_add_failure(cal_run *r, const char *backend, const char *workload, uint32_t threads,
                     const char *candidate, const char *message, const char *output) {
  cal_sink *s = r->sink;
  cal_failure *n = base_array_grow(s->failures, s->failure_count, &s->failure_cap, sizeof *n, 8);
  if (!n)
    return;
  s->failures = n;
  cal_failure *f = &n[s->failure_count++];
  f->backend = base_str_dup(backend);
  f->workload = base_str_dup(workload);
  f->threads = threads;
  f->candidate = base_str_dup(candidate);
  f->message = base_str_dup(message);
  f->output = output && *output ? base_str_dup(output) : NULL;
}

/* Appends the n items of *from (each `size` bytes) to *to (*to_count used,
 * *to_cap allocated); on success *from is freed and emptied, else (out of
 * memory) *from is left as it is. */
static void move_items(void **to, size_t *to_count, size_t *to_cap, void **from, size_t *n,
                       size_t size) {
  if (!*n)
    return;
  char *a = realloc(*to, (*to_count + *n) * size);
  if (!a)
    return;
  memcpy(a + *to_count * size, *from, *n * size);
  *to = a;
  *to_count += *n;
  *to_cap = *to_count;
  free(*from);
  *from = NULL;
  *n = 0;
}

void cal_sink_merge(cal_sink *into, cal_sink *from) {
  move_items((void **)&into->results, &into->result_count, &into->result_cap,
             (void **)&from->results, &from->result_count, sizeof *from->results);
  move_items((void **)&into->failures, &into->failure_count, &into->failure_cap,
             (void **)&from->failures, &from->failure_count, sizeof *from->failures);
  move_items((void **)&into->warnings, &into->warning_count, &into->warning_cap,
             (void **)&from->warnings, &from->warning_count, sizeof *from->warnings);
  into->commits += from->commits;
  from->commits = 0;
  cal_sink_free(from); /* only what did not move */
}

static void result_free(cal_result *x) {
  free(x->backend);
  free(x->implementation);
  free(x->message);
  free(x->portable_note);
  free(x->device_name);
  free(x->device_identity);
  free(x->recorded);
  base_key_free(&x->key);
  sweep_result_free(&x->sweep);
}

void cal_sink_free(cal_sink *s) {
  for (size_t i = 0; i < s->result_count; i++)
    result_free(&s->results[i]);
  free(s->results);
  for (size_t i = 0; i < s->failure_count; i++) {
    cal_failure *f = &s->failures[i];
    free(f->backend);
    free(f->workload);
    free(f->candidate);
    free(f->message);
    free(f->output);
  }
  free(s->failures);
  for (size_t i = 0; i < s->warning_count; i++)
    free(s->warnings[i]);
  free(s->warnings);
  memset(s, 0, sizeof *s);
}

/* ---- the cursor -------------------------------------------------------- */

int cal_result_known(const cal_run *r, size_t workload, uint32_t threads) {
  const loader_plugin *p = r->cur.plugin;
  for (size_t i = r->cur.results_from; p && i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if (x->workload == workload && x->threads == threads &&
        !strcmp(x->backend ? x->backend : "", p->backend) &&
        x->on_device == (r->cur.device != NULL) &&
        (!r->cur.device || x->device_index == r->cur.device->index))
      return 1;
  }
  return 0;
}

int cal_add_crash(cal_run *r, int every_sweep, size_t workload, uint32_t threads,
                  const char *policy, const char *reason) {
  cal_cursor *cur = &r->cur;
  cal_crash *n = base_array_grow(cur->crashes, cur->crash_count, &cur->crash_cap, sizeof *n, 4);
  if (!n)
    return -1;
  cur->crashes = n;
  cal_crash *c = &n[cur->crash_count];
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
  cur->crash_count++;
  return 0;
}

void cal_cursor_free(cal_cursor *c) {
  for (size_t i = 0; i < c->crash_count; i++) {
    free(c->crashes[i].policy);
    free(c->crashes[i].reason);
  }
  free(c->crashes);
  free(c->candidate);
  free(c->record_error);
  memset(c, 0, sizeof *c);
}

void cal_cursor_start(cal_cursor *c, loader_plugin *p, const runtime_device *d) {
  cal_cursor_free(c);
  c->plugin = p;
  c->device = d;
}

/* ---- lookups over the selection and the pass -------------------------- */

const char *cal_workload_name(const cal_run *r, size_t index) {
  return index < r->set->cfg->workload_count ? r->set->cfg->workloads[index].name : "?";
}

const char *cal_workload_operator(const cal_run *r, size_t index) {
  return index < r->set->cfg->workload_count ? r->set->cfg->workloads[index].operator_name : "?";
}

size_t cal_targets_per_workload(const cal_run *r) {
  return r->cur.device ? 1 : r->set->targets.count;
}

int cal_item_selected(const cal_run *r, const loader_plugin *p, size_t workload, size_t target) {
  const config_workload *w = &r->set->cfg->workloads[workload];
  return runtime_binding_serves(p, w->operator_name) &&
         calibrate_shard_has(&r->set->o->shard, p->backend, w->name,
                             r->set->targets.items[target].thread_count,
                             r->cur.device ? r->cur.device->identity : NULL);
}

size_t cal_sweeps_of(const cal_run *r, const loader_plugin *p) {
  size_t n = 0;
  for (size_t i = 0; i < r->set->workload_count; i++)
    for (size_t t = 0; t < cal_targets_per_workload(r); t++)
      n += (size_t)cal_item_selected(r, p, r->set->workloads[i], t);
  return n;
}

size_t cal_pass_keys_of(const cal_run *r, const char *backend) {
  size_t n = 0;
  for (size_t i = 0; i < r->pass.only_key_count; i++)
    n += !strcmp(r->pass.only_keys[i].backend, backend);
  return n;
}

int cal_pass_wants(const cal_run *r, const char *backend, size_t workload, uint32_t thread_count,
                   const char *processor) {
  if (!r->pass.only_keys)
    return 1;
  for (size_t i = 0; i < r->pass.only_key_count; i++) {
    const cal_key_ref *k = &r->pass.only_keys[i];
    if (k->workload == workload && k->thread_count == thread_count &&
        !strcmp(k->backend, backend) && (!k->processor || !strcmp(k->processor, processor)))
      return 1;
  }
  return 0;
}

int cal_record_path(const cal_run *r, const char *backend, size_t workload, long device,
                    uint32_t threads, char *buf, size_t cap, char *name, size_t name_cap) {
  /* FILE itself only for an unsharded run of one sweep: a shard's count
   * of sweeps says nothing about the campaign's, and two shards of one
   * sweep each must not write the same file */
  int single = r->sweeps_total == 1 && r->set->o->shard.count <= 1;
  return sweep_recording_path(r->set->o->record_path, single, backend,
                              cal_workload_name(r, workload), device, threads, buf, cap, name,
                              name_cap);
}

calstore_lookup_result *cal_stored_exact(const cal_run *r, const char *op,
                                         const calhost_built_key *k) {
  const loader_plugin *p = r->cur.plugin;
  runtime_binding_key key;
  if (runtime_binding_store_key(CALSTORE_KEY_EXACT, p->backend, op, p->implementation_version,
                                k->model_digest, k->processor, k->thread_count, NULL, 0, &key) != 0)
    return NULL;
  calstore_lookup_result *res = NULL;
  if (calstore_get(r->set->store, &key.key, CALSTORE_SOURCE_CALIBRATED, &res, NULL) !=
          CALSTORE_OK ||
      !res->profile)
    calstore_lookup_result_free(&res);
  runtime_binding_key_free(&key);
  return res;
}
