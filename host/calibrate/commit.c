/*
 * commit.c: storing a plugin's finished sweeps (run.h): one batch per
 * commit, the measurements of each profile, the exact keys, and the
 * portable rule (per workload, the winner of the smallest thread count
 * becomes the portable profile unless one of this implementation exists).
 * Runs in the parent; policies were validated by the plugin in the child,
 * so a commit needs no plugin: verify --recalibrate commits every plugin's
 * results in one batch at the end, exact profiles only.
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
  if (r->set->env.load_average[0] >= 0)
    m[n++] = (calstore_measurement){"load_average", r->set->env.load_average[0], ""};
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
  return runtime_binding_store_key(kind, x->backend, cal_workload_operator(r, x->workload),
                                   x->implementation, x->key.model_digest, x->key.processor,
                                   x->key.thread_count, x->key.structure, x->key.structure_count,
                                   k);
}

/* A sharded run writes a workload's portable profile only in the shard
 * that owns the workload's item of the smallest target thread count, so
 * the shards together write what the unsharded run writes (calibrate.h). */
static int owns_portable(const cal_run *r, const cal_result *best) {
  if (r->set->o->shard.count <= 1)
    return 1;
  /* a device item has one target per device: every shard holding one may
   * write the portable profile (a put if absent, as the unsharded run's
   * later devices do) */
  if (best->on_device)
    return 1;
  uint32_t smallest = UINT32_MAX;
  const processor_target_list *targets = &r->set->targets;
  for (size_t t = 0; t < targets->count; t++)
    if (targets->items[t].thread_count < smallest)
      smallest = targets->items[t].thread_count;
  return best->threads == smallest;
}

/* One batch of pending results: what was queued, whether each exact
 * profile was written, and the results whose winner is queued as a
 * workload's portable profile (settled after the commit). */
typedef struct commit_batch {
  cal_run *r;
  calstore_batch *b;
  size_t *queued;
  int *exact_stored;
  size_t nqueued;
  size_t *port;
  int *port_stored;
  size_t nport;
} commit_batch;

/* The pending results' count, and whose failure a failed batch is: the
 * current plugin's; none current, the one backend of every pending result,
 * else (several) NULL: calhost's. */
static size_t pending_of(const cal_run *r, const char **owner) {
  size_t pending = 0;
  int mixed = 0;
  *owner = NULL;
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if (x->kind != CAL_PENDING)
      continue;
    pending++;
    if (!*owner)
      *owner = x->backend;
    else if (strcmp(*owner, x->backend))
      mixed = 1;
  }
  if (r->cur.plugin)
    *owner = r->cur.plugin->backend;
  else if (mixed)
    *owner = NULL;
  return pending;
}

/* Queues the exact profile of every pending result. */
static void queue_exact(commit_batch *cb) {
  cal_run *r = cb->r;
  calstore_measurement m[16];
  calstore_error err;
  for (size_t i = 0; i < r->sink->result_count; i++) {
    cal_result *x = &r->sink->results[i];
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
    cb->exact_stored[cb->nqueued] = 1;
    calstore_status st = queue_profile(cb->b, r->pass.force, &k.key, m, n, &ref,
                                       &cb->exact_stored[cb->nqueued], &err);
    runtime_binding_key_free(&k);
    if (st != CALSTORE_OK) {
      char msg[1200];
      snprintf(msg, sizeof msg, "not stored: %s: %s", calstore_status_name(st), err.message);
      x->kind = CAL_NOT_STORED;
      x->message = base_str_dup(msg);
      continue;
    }
    cb->queued[cb->nqueued++] = i;
    x->kind = CAL_STORED;
  }
}

/* The result whose winner is x's workload's portable profile: the stored
 * result of the smallest thread count of x's backend and workload not yet
 * settled. */
static cal_result *portable_source(cal_run *r, cal_result *x) {
  cal_result *best = x;
  for (size_t j = 0; j < r->sink->result_count; j++) {
    cal_result *y = &r->sink->results[j];
    if (y->kind == CAL_STORED && !y->portable_stored && !y->portable_note &&
        y->workload == x->workload && !strcmp(y->backend, x->backend) &&
        y->key.thread_count < best->key.thread_count)
      best = y;
  }
  return best;
}

/* Queues best's winner as its workload's portable profile; the other
 * results of the workload say where the portable profile came from. */
static void queue_portable_of(commit_batch *cb, cal_result *best) {
  cal_run *r = cb->r;
  runtime_binding_key k;
  if (store_key(r, best, CALSTORE_KEY_PORTABLE, &k) != 0) {
    best->portable_note = base_str_dup("portable profile not stored: out of memory");
    return;
  }
  for (size_t j = 0; j < r->sink->result_count; j++) {
    cal_result *y = &r->sink->results[j];
    if (y != best && y->kind == CAL_STORED && y->workload == best->workload &&
        !strcmp(y->backend, best->backend) && !y->portable_note && !y->portable_stored)
      y->portable_note = base_str_dup("portable profile taken from the smallest thread count");
  }
  calstore_measurement m[16];
  calstore_error err;
  policy_ref ref = {best->sweep.winner_policy};
  size_t n = build_measurements(r, best, m, 1);
  memset(&err, 0, sizeof err);
  cb->port_stored[cb->nport] = 1;
  calstore_status st =
      queue_profile(cb->b, r->pass.force, &k.key, m, n, &ref, &cb->port_stored[cb->nport], &err);
  runtime_binding_key_free(&k);
  if (st == CALSTORE_OK) {
    best->portable_stored = 1; /* settled after the commit */
    cb->port[cb->nport++] = (size_t)(best - r->sink->results);
  } else {
    char msg[1200];
    snprintf(msg, sizeof msg, "portable profile not stored: %s", err.message);
    best->portable_note = base_str_dup(msg);
  }
}

/* The portable rule: per workload, the winner of the smallest thread
 * count. */
static void queue_portable(commit_batch *cb) {
  cal_run *r = cb->r;
  for (size_t i = 0; i < r->sink->result_count; i++) {
    cal_result *x = &r->sink->results[i];
    if (x->kind != CAL_STORED || x->portable_stored || x->portable_note)
      continue;
    cal_result *best = portable_source(r, x);
    if (!owns_portable(r, best))
      best->portable_note =
          base_str_dup("portable profile left to the shard of the smallest thread count");
    else
      queue_portable_of(cb, best);
  }
}

/* After a failed commit: nothing queued was stored. */
static void settle_failed(commit_batch *cb, const char *owner, calstore_status st,
                          const calstore_error *err) {
  cal_run *r = cb->r;
  char msg[1200];
  snprintf(msg, sizeof msg, "commit failed: %s: %s", calstore_status_name(st), err->message);
  for (size_t i = 0; i < cb->nqueued; i++) {
    cal_result *x = &r->sink->results[cb->queued[i]];
    if (x->kind == CAL_STORED) {
      x->kind = CAL_NOT_STORED;
      free(x->message);
      x->message = base_str_dup(msg);
      x->portable_stored = 0;
    }
  }
  cal_add_failure(r, owner, NULL, 0, NULL, msg, NULL);
}

/* After a commit: what it kept instead of writing (stored meanwhile
 * elsewhere). */
static void settle_committed(commit_batch *cb) {
  cal_run *r = cb->r;
  r->sink->commits++;
  for (size_t i = 0; i < cb->nqueued; i++) {
    cal_result *x = &r->sink->results[cb->queued[i]];
    if (!cb->exact_stored[i] && x->kind == CAL_STORED) {
      x->kind = CAL_SKIPPED;
      free(x->message);
      x->message = base_str_dup("already calibrated: another writer stored this key meanwhile; "
                                "kept (use --force to recalibrate)");
    }
  }
  for (size_t i = 0; i < cb->nport; i++) {
    cal_result *x = &r->sink->results[cb->port[i]];
    if (!cb->port_stored[i]) {
      x->portable_stored = 0;
      free(x->portable_note);
      x->portable_note = base_str_dup("portable profile kept (one of this implementation exists; "
                                      "--force replaces it)");
    }
  }
}

/* Commits the batch and settles every queued result by the outcome. */
static void commit_and_settle(commit_batch *cb, const char *owner) {
  calstore_error err;
  memset(&err, 0, sizeof err);
  int applied = 0;
  calstore_status st = calstore_batch_commit_applied(&cb->b, &applied, &err);
  if (st != CALSTORE_OK && applied) {
    /* renamed, but the directory sync failed: every process already reads
     * the results (the next run skips them), so they are stored; only
     * their durability is in doubt */
    cal_warn(cb->r,
             "stored, but durability is not guaranteed (the change may not survive a power "
             "loss): %s",
             err.message);
    st = CALSTORE_OK;
  }
  if (st != CALSTORE_OK)
    settle_failed(cb, owner, st, &err);
  else
    settle_committed(cb);
}

/* Without --force nothing stored is replaced, and that is decided by the
 * commit itself (conditional puts, against the file as reloaded under the
 * lock), not by this process's snapshot: an exact profile or a portable
 * profile of this implementation and structure that another process stored
 * meanwhile (a concurrent calibrate, an import) is kept. */
void cal_commit_pending(cal_run *r, int portable) {
  const char *owner;
  size_t pending = pending_of(r, &owner);
  if (!pending)
    return;
  commit_batch cb = {.r = r};
  calstore_error err = {0};
  calstore_status st = calstore_batch_begin(r->set->store, &cb.b, &err);
  if (st != CALSTORE_OK) {
    for (size_t i = 0; i < r->sink->result_count; i++)
      if (r->sink->results[i].kind == CAL_PENDING) {
        r->sink->results[i].kind = CAL_NOT_STORED;
        r->sink->results[i].message = base_str_dup(err.message);
      }
    cal_add_failure(r, owner, NULL, 0, NULL, err.message, NULL);
    return;
  }
  cb.queued = calloc(pending, sizeof *cb.queued);
  cb.exact_stored = calloc(pending, sizeof *cb.exact_stored);
  cb.port = calloc(pending, sizeof *cb.port);
  cb.port_stored = calloc(pending, sizeof *cb.port_stored);
  if (cb.queued && cb.exact_stored && cb.port && cb.port_stored) {
    queue_exact(&cb);
    if (portable)
      queue_portable(&cb);
    commit_and_settle(&cb, owner);
  } else {
    calstore_batch_abort(&cb.b);
  }
  free(cb.queued);
  free(cb.exact_stored);
  free(cb.port);
  free(cb.port_stored);
}
