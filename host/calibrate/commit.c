/*
 * commit.c: storing a plugin's finished sweeps (run.h): one batch per
 * commit, the measurements of each profile, the exact keys, and the
 * portable rule (per workload, the winner of the smallest thread count
 * becomes the portable profile unless one of this implementation exists).
 * Runs in the parent; policies were validated by the plugin in the child,
 * so a commit needs no plugin: verify --recalibrate holds every plugin's
 * results and commits them in one batch at the end (cal_commit_held).
 */
#include "base/str.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/binding.h"

typedef struct policy_ref {
  const char *text;
} policy_ref;

static const char *serialize_ref(void *user, size_t *length, char *err, size_t cap) {
  policy_ref *p = user;
  (void)err, (void)cap;
  *length = strlen(p->text);
  return p->text;
}

/* Queues a winner's profile in batch b: with force (--force) it replaces
 * what is stored under key; else it is written only where nothing is, and
 * *stored (valid until the commit) receives at the commit 1 when it was
 * written, 0 when a stored profile was kept. No validator: the plugin
 * validated the policy in the child. */
static calstore_status queue_profile(calstore_batch *b, int force, const calstore_key *key,
                                     const calstore_measurement *m, size_t n, policy_ref *ref,
                                     int *stored, calstore_error *err) {
  if (force)
    return calstore_batch_store(b, key, m, n, serialize_ref, ref, NULL, NULL, err);
  return calstore_batch_store_if_absent(b, key, m, n, serialize_ref, ref, NULL, NULL, stored, err);
}

static size_t build_measurements(const cal_run *r, const cal_result *x, calstore_measurement *m,
                                 int portable) {
  const sweep_result *s = &x->sweep;
  size_t n = 0;
  m[n++] = (calstore_measurement){"median_latency", s->figures.median_us, "us"};
  m[n++] = (calstore_measurement){"spread", s->figures.mad_us, "us"};
  m[n++] = (calstore_measurement){"cv", s->figures.cv, ""};
  m[n++] = (calstore_measurement){"samples", (double)s->figures.samples, "count"};
  m[n++] = (calstore_measurement){"candidates_tried", (double)s->tried, "count"};
  m[n++] = (calstore_measurement){"candidates_pruned", (double)s->pruned, "count"};
  m[n++] = (calstore_measurement){"candidates_rejected", (double)s->rejected, "count"};
  if (s->have_default && s->speedup > 0)
    m[n++] = (calstore_measurement){"speedup_vs_default", s->speedup, "x"};
  if (r->env.load_average[0] >= 0)
    m[n++] = (calstore_measurement){"load_average", r->env.load_average[0], ""};
  m[n++] = (calstore_measurement){"noisy", s->figures.noisy ? 1.0 : 0.0, "flag"};
  m[n++] = (calstore_measurement){"unchecked", s->unchecked ? 1.0 : 0.0, "flag"};
  if (portable)
    m[n++] = (calstore_measurement){"source_threads", (double)x->key.thread_count, "count"};
  return n;
}

/* The store key of a result (exact or portable), through the binding's one
 * conversion of a built key. Returns 0, or -1 out of memory. */
static int store_key(const cal_run *r, const cal_result *x, calstore_key_kind kind,
                     runtime_binding_key *k) {
  return runtime_binding_store_key(kind, x->backend, r->cfg->workloads[x->workload].operator_name,
                                   x->implementation, x->key.model_digest, x->key.processor,
                                   x->key.thread_count, x->key.structure, x->key.structure_count,
                                   k);
}

/* A sharded run writes a workload's portable profile only in the shard
 * that owns the workload's item of the smallest target thread count, so
 * the shards together write what the unsharded run writes (calibrate.h). */
static int owns_portable(const cal_run *r, const cal_result *best) {
  if (r->o->shard.count <= 1)
    return 1;
  /* a device item has one target per device: every shard holding one may
   * write the portable profile (a put if absent, as the unsharded run's
   * later devices do) */
  if (best->on_device)
    return 1;
  uint32_t smallest = UINT32_MAX;
  for (size_t t = 0; t < r->targets.count; t++)
    if (r->targets.items[t].thread_count < smallest)
      smallest = r->targets.items[t].thread_count;
  return best->threads == smallest;
}

/* Commits every pending result of the current plugin in one batch, with
 * the portable profile of each workload among them.
 *
 * Without --force nothing stored is replaced, and that is decided by the
 * commit itself (conditional puts, against the file as reloaded under the
 * lock), not by this process's snapshot: an exact profile or a portable
 * profile of this implementation and structure that another process stored
 * meanwhile (a concurrent calibrate, an import) is kept. */
void cal_commit_pending(cal_run *r) {
  size_t pending = 0;
  const char *batch_backend = NULL; /* whose failure a failed batch is */
  int mixed = 0;
  if (r->hold_commits) /* verify --recalibrate: one batch at the end */
    return;
  for (size_t i = 0; i < r->result_count; i++)
    if (r->results[i].kind == CAL_PENDING) {
      pending++;
      if (!batch_backend)
        batch_backend = r->results[i].backend;
      else if (strcmp(batch_backend, r->results[i].backend))
        mixed = 1;
    }
  if (!pending)
    return;
  /* a held commit (cal_commit_held) may span plugins: then it is calhost's */
  if (r->cur)
    batch_backend = r->cur->backend;
  else if (mixed)
    batch_backend = NULL;
  int force = r->force;
  calstore_error err = {0};
  calstore_batch *b = NULL;
  calstore_status st = calstore_batch_begin(r->store, &b, &err);
  if (st != CALSTORE_OK) {
    for (size_t i = 0; i < r->result_count; i++)
      if (r->results[i].kind == CAL_PENDING) {
        r->results[i].kind = CAL_NOT_STORED;
        r->results[i].message = base_str_dup(err.message);
      }
    cal_add_failure(r, batch_backend, NULL, 0, NULL, err.message, NULL);
    return;
  }
  calstore_measurement m[16];
  /* what was queued: results, whether their exact profile was written, and
   * the results whose winner is queued as a workload's portable profile */
  size_t *queued = calloc(pending, sizeof *queued);
  int *exact_stored = calloc(pending, sizeof *exact_stored);
  size_t *port = calloc(pending, sizeof *port);
  int *port_stored = calloc(pending, sizeof *port_stored);
  size_t nqueued = 0, nport = 0;
  if (!queued || !exact_stored || !port || !port_stored) {
    free(queued);
    free(exact_stored);
    free(port);
    free(port_stored);
    calstore_batch_abort(&b);
    return;
  }
  for (size_t i = 0; i < r->result_count; i++) {
    cal_result *x = &r->results[i];
    if (x->kind != CAL_PENDING)
      continue;
    runtime_binding_key k;
    policy_ref ref = {x->sweep.winner_policy};
    size_t n = build_measurements(r, x, m, 0);
    memset(&err, 0, sizeof err);
    if (strlen(ref.text) > CALHOST_POLICY_MAX_LENGTH) {
      x->kind = CAL_NOT_STORED;
      x->message = base_str_dup("oversized policy (not stored)");
      continue;
    }
    if (store_key(r, x, CALSTORE_KEY_EXACT, &k) != 0) {
      x->kind = CAL_NOT_STORED;
      x->message = base_str_dup("out of memory (not stored)");
      continue;
    }
    exact_stored[nqueued] = 1;
    st = queue_profile(b, force, &k.key, m, n, &ref, &exact_stored[nqueued], &err);
    runtime_binding_key_free(&k);
    if (st != CALSTORE_OK) {
      char msg[1200];
      snprintf(msg, sizeof msg, "not stored: %s: %s", calstore_status_name(st), err.message);
      x->kind = CAL_NOT_STORED;
      x->message = base_str_dup(msg);
      continue;
    }
    queued[nqueued++] = i;
    x->kind = CAL_STORED;
  }
  /* The portable rule: per workload, the winner of the smallest thread
   * count (verify's recalibration replaces exact profiles only). */
  for (size_t i = 0; i < r->result_count && !r->recalibrating; i++) {
    cal_result *x = &r->results[i];
    if (x->kind != CAL_STORED || x->portable_stored || x->portable_note)
      continue;
    cal_result *best = x;
    for (size_t j = 0; j < r->result_count; j++) {
      cal_result *y = &r->results[j];
      if (y->kind == CAL_STORED && !y->portable_stored && !y->portable_note &&
          y->workload == x->workload && !strcmp(y->backend, x->backend) &&
          y->key.thread_count < best->key.thread_count)
        best = y;
    }
    if (!owns_portable(r, best)) {
      best->portable_note =
          base_str_dup("portable profile left to the shard of the smallest thread count");
      continue;
    }
    runtime_binding_key k;
    if (store_key(r, best, CALSTORE_KEY_PORTABLE, &k) != 0) {
      best->portable_note = base_str_dup("portable profile not stored: out of memory");
      continue;
    }
    for (size_t j = 0; j < r->result_count; j++) {
      cal_result *y = &r->results[j];
      if (y != best && y->kind == CAL_STORED && y->workload == best->workload &&
          !strcmp(y->backend, best->backend) && !y->portable_note && !y->portable_stored)
        y->portable_note = base_str_dup("portable profile taken from the smallest thread count");
    }
    policy_ref ref = {best->sweep.winner_policy};
    size_t n = build_measurements(r, best, m, 1);
    memset(&err, 0, sizeof err);
    port_stored[nport] = 1;
    st = queue_profile(b, force, &k.key, m, n, &ref, &port_stored[nport], &err);
    runtime_binding_key_free(&k);
    if (st == CALSTORE_OK) {
      best->portable_stored = 1; /* settled after the commit */
      port[nport++] = (size_t)(best - r->results);
    } else {
      char msg[1200];
      snprintf(msg, sizeof msg, "portable profile not stored: %s", err.message);
      best->portable_note = base_str_dup(msg);
    }
  }
  memset(&err, 0, sizeof err);
  int applied = 0;
  st = calstore_batch_commit_applied(&b, &applied, &err);
  if (st != CALSTORE_OK && applied) {
    /* renamed, but the directory sync failed: every process already reads
     * the results (the next run skips them), so they are stored; only
     * their durability is in doubt */
    cal_warn(r,
             "stored, but durability is not guaranteed (the change may not survive a power "
             "loss): %s",
             err.message);
    st = CALSTORE_OK;
  }
  if (st != CALSTORE_OK) {
    char msg[1200];
    snprintf(msg, sizeof msg, "commit failed: %s: %s", calstore_status_name(st), err.message);
    for (size_t i = 0; i < nqueued; i++) {
      cal_result *x = &r->results[queued[i]];
      if (x->kind == CAL_STORED) {
        x->kind = CAL_NOT_STORED;
        free(x->message);
        x->message = base_str_dup(msg);
        x->portable_stored = 0;
      }
    }
    cal_add_failure(r, batch_backend, NULL, 0, NULL, msg, NULL);
  } else {
    r->commits++;
    /* what the commit kept instead of writing (stored meanwhile elsewhere) */
    for (size_t i = 0; i < nqueued; i++) {
      cal_result *x = &r->results[queued[i]];
      if (!exact_stored[i] && x->kind == CAL_STORED) {
        x->kind = CAL_SKIPPED;
        free(x->message);
        x->message = base_str_dup("already calibrated: another writer stored this key meanwhile; "
                                  "kept (use --force to recalibrate)");
      }
    }
    for (size_t i = 0; i < nport; i++) {
      cal_result *x = &r->results[port[i]];
      if (!port_stored[i]) {
        x->portable_stored = 0;
        free(x->portable_note);
        x->portable_note = base_str_dup("portable profile kept (one of this implementation exists; "
                                        "--force replaces it)");
      }
    }
  }
  free(queued);
  free(exact_stored);
  free(port);
  free(port_stored);
}

void cal_commit_held(cal_run *r) {
  r->hold_commits = 0;
  r->cur = NULL;
  cal_commit_pending(r);
}
