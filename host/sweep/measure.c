/*
 * measure.c: the measurement engine for one sweep (see measure.h).
 *
 * Plan: the default policy (if the plugin has one) is measured first, in
 * full: it is the first leader and never pruned. Then the search part
 * (host/search) chooses the candidates, one at a time, within its budget:
 * its evaluate callback is round one of a candidate here: serialize,
 * validate, prepare, run once and check the output against the reference (a
 * wrong or failing candidate, or one whose policy the request says to avoid
 * because it killed an earlier attempt, is rejected with the reason, and
 * the search sees it rejected), size a sample to the rigor's minimum time (this doubles
 * as warm-up), warm up, then take prune_after samples (or every sample when
 * pruning is off); a candidate whose lower quartile is above the leader's
 * median x (1 + margin) is pruned. The search is given the median of those
 * samples. After the search, with halving, only the better half of the
 * survivors goes on; round two re-prepares the survivors and completes
 * their samples. The winner is the lowest median; the default wins when
 * nothing beats it. The search's space is the plugin's named parameters
 * when it describes them (ABI 2 describe_space; the default's assignment and
 * the numbered candidates as the plausible order), else the numbered
 * candidates (one ordered parameter "index", the plugin's order as the
 * plausible order). With explicit candidate policies in the request
 * (calhost verify) the space is those policies, every one measured, and the
 * default. Under the time budget, measure's search stops at 70% of the
 * sweep's share so that the racing has time.
 */
#include "measure.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/str.h"
#include "base/words.h"
#include "isolate.h"
#include "loader/entries.h"
#include "stats.h"

/* May the sweep call optional entry `field`? (the loader's one rule) */
#define VT_HAS(s, field) CALHOST_VTABLE_CALLABLE((s)->vt, (s)->req->abi_version, field)

enum entry_state { ENTRY_ACTIVE, ENTRY_PRUNED, ENTRY_REJECTED };

typedef struct entry {
  uint32_t index;
  uint32_t *config; /* the search's configuration (param_count positions), NULL for the default */
  char *policy;
  size_t policy_length;
  enum entry_state state;
  double *samples;
  uint32_t n;
  uint32_t iterations;
  double median;
  const char *why;        /* why it was pruned (for the report), or NULL */
  char *reason;           /* why it was rejected, or NULL */
  double compile_seconds; /* its first prepare */
} entry;

typedef struct sweep {
  const sweep_request *req;
  const calhost_plugin_vtable *vt;
  calhost_session *session;
  sweep_result *out;
  size_t rejection_cap; /* allocated in out->rejections */
  size_t max_policy;
  int any_device_timing;
  int all_device_timing;
  /* the candidates run so far: the default first, then in search order */
  entry *es;
  size_t ne, cap;
  uint32_t reps, first; /* samples per candidate; in round one */
  /* the search's space: the numbered candidates (param, words), or the
   * plugin's named parameters (ABI 2 describe_space) */
  search_param param; /* numbered: the one parameter "index" */
  char **words;
  uint32_t count;
  const search_param *params;
  size_t np;
  int named;
  search_param *named_params; /* named: allocated here, strings the plugin's */
  size_t last;                /* the entry evaluate filled last */
  uint32_t shown;             /* runs announced ahead of the search's (the default: 1) */
  int oom;                    /* evaluate ran out of memory */
  /* the plugin reported a device time of zero or not finite: the sweep
   * stops at once (every later time would be as wrong), timer_why says so */
  int bad_timer;
  char timer_why[512];
  const uint32_t *default_config; /* named: the default's assignment (plugin's), or NULL */
  size_t default_entry;           /* the default's entry in es, when have_default_entry */
  int have_default_entry;
  int last_is_default; /* the search's last evaluation was the default (not re-run) */
} sweep;

double sweep_now(void) {
  return isolate_monotonic_seconds();
}

static const char *status_word(calhost_status st) {
  static const char *const words[] = {[CALHOST_OK] = "ok",
                                      [CALHOST_ERROR] = "error",
                                      [CALHOST_INVALID_ARGUMENT] = "invalid argument",
                                      [CALHOST_UNSUPPORTED] = "unsupported",
                                      [CALHOST_BUFFER_TOO_SMALL] = "buffer too small",
                                      [CALHOST_NO_MEMORY] = "out of memory",
                                      [CALHOST_CANCELLED] = "cancelled",
                                      [CALHOST_CHECK_FAILED] = "check failed",
                                      [CALHOST_ABI_MISMATCH] = "ABI mismatch"};
  return BASE_WORD(words, CALHOST_ABI_MISMATCH, st, "unknown status");
}

static const char *plugin_message(sweep *s) {
  const sweep_hooks *h = &s->req->hooks;
  const char *m = h->take_plugin_error ? h->take_plugin_error(h->user) : NULL;
  return m && *m ? m : NULL;
}

/* "what: status (plugin message)" into buf. */
static void describe_failure(sweep *s, char *buf, size_t cap, const char *what, calhost_status st) {
  const char *m = plugin_message(s);
  if (m)
    snprintf(buf, cap, "%s: %s (%s)", what, status_word(st), m);
  else
    snprintf(buf, cap, "%s: %s", what, status_word(st));
}

static int cancelled(sweep *s) {
  const sweep_hooks *h = &s->req->hooks;
  if (h->is_cancelled && h->is_cancelled(h->user)) {
    s->out->cancelled = 1;
    return 1;
  }
  return 0;
}

static int over_budget(sweep *s) {
  return s->req->deadline > 0 && sweep_now() >= s->req->deadline;
}

/* A plugin call returned CALHOST_CANCELLED: the user's cancellation when the
 * hook says so, else the plugin saw the time budget run out (its host
 * services report the budget too): stop measuring, keep what was measured. */
static void plugin_cancelled(sweep *s, entry *e) {
  if (!cancelled(s) && !s->out->budget_exhausted) {
    s->out->budget_exhausted = 1;
    s->out->budget_after = s->out->tried;
  }
  e->state = ENTRY_PRUNED; /* incomplete: not a contender, not counted */
  e->why =
      s->out->cancelled ? "stopped: calibration cancelled" : "stopped: the time budget ran out";
}

static int stopped(const sweep *s) {
  return s->out->cancelled || s->out->budget_exhausted || s->bad_timer;
}

static void add_rejection(sweep *s, entry *e, const char *reason) {
  sweep_result *o = s->out;
  sweep_rejection *r =
      base_array_grow(o->rejections, o->rejection_count, &s->rejection_cap, sizeof *r, 8);
  e->state = ENTRY_REJECTED;
  if (e->index != CALHOST_SWEEP_DEFAULT_INDEX)
    o->rejected++;
  free(e->reason);
  e->reason = base_str_dup(reason);
  if (!r)
    return;
  o->rejections = r;
  r[o->rejection_count].index = e->index;
  r[o->rejection_count].policy = base_str_dup(e->policy);
  r[o->rejection_count].reason = base_str_dup(reason);
  o->rejection_count++;
}

/* Appends a warning about the plugin (out->warning, "; "-joined): what the
 * sweep noticed without failing, for calibrate to show once per plugin. */
static void add_warning(sweep *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_warning(sweep *s, const char *fmt, ...) {
  char text[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  char *old = s->out->warning;
  size_t n = old ? strlen(old) : 0;
  char *w = malloc(n + 2 + strlen(text) + 1);
  if (!w)
    return;
  sprintf(w, "%s%s%s", old ? old : "", old ? "; " : "", text);
  free(old);
  s->out->warning = w;
}

/* Checks the policy text itself: non-empty, printable, no line breaks. */
static int policy_text_ok(const char *p, size_t n, char *why, size_t cap) {
  if (n == 0) {
    snprintf(why, cap, "empty policy");
    return 0;
  }
  size_t i = base_str_control_at(p, n);
  if (i < n) {
    snprintf(why, cap, "policy contains a control character (byte %zu)", i);
    return 0;
  }
  return 1;
}

/* Serializes candidate `index` (or the default) into a fresh string.
 * Returns 0, or -1 with the reason in why. */
static int serialize(sweep *s, uint32_t index, const uint32_t *config, char **policy,
                     size_t *length, char *why, size_t cap) {
  size_t bufcap = 256, len = 0;
  *policy = NULL;
  for (int attempt = 0; attempt < 4; attempt++) {
    char *buf = malloc(bufcap);
    if (!buf)
      return base_str_fail(why, cap, "out of memory");
    calhost_status st;
    len = 0;
    if (index != CALHOST_SWEEP_DEFAULT_INDEX && s->req->policy_count) /* explicit */
      st = calhost_copy_out(s->req->policies[index] ? s->req->policies[index] : "", buf, bufcap,
                            &len);
    else if (index == CALHOST_SWEEP_DEFAULT_INDEX)
      st = s->vt->default_policy(s->session, buf, bufcap, &len);
    else if (s->named && config)
      st = s->vt->serialize_assignment(s->session, config, s->np, buf, bufcap, &len);
    else
      st = s->vt->serialize_candidate(s->session, index, buf, bufcap, &len);
    if (st == CALHOST_BUFFER_TOO_SMALL) {
      free(buf);
      if (len > s->max_policy + 1)
        return base_str_fail(why, cap, "policy too large (%zu bytes, limit %zu)", len,
                             s->max_policy);
      bufcap = len > bufcap ? len : bufcap * 2;
      continue;
    }
    if (st != CALHOST_OK) {
      free(buf);
      describe_failure(s, why, cap, "serialization failed", st);
      return -1;
    }
    if (len >= bufcap) { /* a plugin that lies about the length */
      free(buf);
      return base_str_fail(why, cap, "serializer reported length %zu for a %zu-byte buffer", len,
                           bufcap);
    }
    buf[len] = '\0';
    if (len > s->max_policy) {
      free(buf);
      return base_str_fail(why, cap, "policy too large (%zu bytes, limit %zu)", len, s->max_policy);
    }
    if (!policy_text_ok(buf, len, why, cap)) {
      free(buf);
      return -1;
    }
    *policy = buf;
    *length = len;
    return 0;
  }
  return base_str_fail(why, cap, "serializer keeps asking for a larger buffer");
}

/* Runs the prepared candidate `iterations` times (one run() call); on
 * CALHOST_OK *seconds is the whole call's time: the plugin's device_seconds
 * when it reports a finite value > 0, else (a negative value: not reported)
 * the host's clock around run(). A device time of exactly 0, NaN or an
 * infinity is no measurement (a device timer that was never started: an
 * OpenCL queue without CL_QUEUE_PROFILING_ENABLE reads 0): it sets
 * s->bad_timer with the reason and returns CALHOST_ERROR, and the sweep
 * stops at once, saying what to fix. Returns run()'s status. */
static calhost_status timed_run(sweep *s, uint32_t iterations, double *seconds) {
  calhost_run_result rr;
  memset(&rr, 0, sizeof rr);
  rr.header.struct_type = CALHOST_STRUCT_RUN_RESULT;
  rr.header.struct_version = 1;
  rr.header.struct_size = sizeof rr;
  rr.device_seconds = -1.0;
  double t0 = sweep_now();
  calhost_status st = s->vt->run(s->session, iterations, &rr);
  double t1 = sweep_now();
  if (st != CALHOST_OK)
    return st;
  if (rr.device_seconds == 0 || !isfinite(rr.device_seconds)) {
    s->bad_timer = 1;
    snprintf(s->timer_why, sizeof s->timer_why,
             "run() reported a device time of %s for %u iteration%s, which is no measurement: "
             "report the elapsed device time (> 0 s) in device_seconds, e.g. the sum of the "
             "OpenCL profiling events' END - START (the queue needs CL_QUEUE_PROFILING_ENABLE), "
             "or leave it negative so that the host times run()",
             rr.device_seconds == 0     ? "0 s"
             : isnan(rr.device_seconds) ? "NaN"
                                        : "an infinity",
             iterations, iterations == 1 ? "" : "s");
    return CALHOST_ERROR;
  }
  if (rr.device_seconds > 0) {
    *seconds = rr.device_seconds;
    s->any_device_timing = 1;
  } else {
    *seconds = t1 - t0;
    s->all_device_timing = 0;
  }
  return CALHOST_OK;
}

/* Settles a plugin call made for entry e: 0 when st is CALHOST_OK; else -1
 * after recording the cancellation or rejecting e with "WHAT: reason". */
static int outcome(sweep *s, entry *e, calhost_status st, const char *what) {
  char why[640];
  if (st == CALHOST_OK)
    return 0;
  if (st == CALHOST_CANCELLED) {
    plugin_cancelled(s, e);
    return -1;
  }
  describe_failure(s, why, sizeof why, what, st);
  add_rejection(s, e, why);
  return -1;
}

/* timed_run for entry e, settled by outcome(): 0 with *seconds, else -1. */
static int run_entry(sweep *s, entry *e, uint32_t iterations, double *seconds) {
  calhost_status st = timed_run(s, iterations, seconds);
  if (s->bad_timer) {
    add_rejection(s, e, s->timer_why);
    return -1;
  }
  return outcome(s, e, st, "run failed");
}

/* prepare; and in the first round run once, check, size samples. */
static int ready_entry(sweep *s, entry *e, int first_round) {
  char why[640];
  double t0 = sweep_now();
  calhost_status st = s->vt->prepare(s->session, e->policy, e->policy_length);
  if (first_round)
    e->compile_seconds = sweep_now() - t0;
  if (outcome(s, e, st, "prepare failed") != 0)
    return -1;
  if (!first_round)
    return 0;
  double t;
  if (run_entry(s, e, 1, &t) != 0)
    return -1;
  if (VT_HAS(s, check)) {
    char err[512] = "";
    st = s->vt->check(s->session, err, sizeof err);
    err[sizeof err - 1] = '\0';
    if (st != CALHOST_OK) {
      if (st == CALHOST_CHECK_FAILED)
        snprintf(why, sizeof why, "wrong output: %s",
                 err[0] ? err : (plugin_message(s) ? plugin_message(s) : "differs from reference"));
      else
        describe_failure(s, why, sizeof why, "check failed", st);
      add_rejection(s, e, why);
      return -1;
    }
  } else {
    s->out->unchecked = 1;
  }
  /* Size a sample: grow iterations until one sample lasts min_sample_seconds. */
  double min_t = s->req->params.min_sample_seconds;
  uint32_t iters = 1;
  for (int step = 0; step < 24 && t < min_t; step++) {
    double grow = t > 0 ? min_t / t * 1.2 : 10.0;
    if (grow > 10.0)
      grow = 10.0;
    if (grow < 1.5)
      grow = 1.5;
    double next = ceil((double)iters * grow);
    if (next > (double)(1u << 24)) {
      iters = 1u << 24;
      break;
    }
    iters = (uint32_t)next;
    if (run_entry(s, e, iters, &t) != 0)
      return -1;
    if (cancelled(s)) {
      e->state = ENTRY_PRUNED;
      e->why = "stopped: calibration cancelled";
      return -1;
    }
  }
  /* Confirm: one preempted run can end sizing early; re-time and rescale. */
  for (int confirm = 0; confirm < 3 && iters < (1u << 24); confirm++) {
    if (run_entry(s, e, iters, &t) != 0)
      return -1;
    if (t >= min_t * 0.8)
      break;
    double grow = t > 0 ? min_t / t * 1.2 : 10.0;
    double next = ceil((double)iters * (grow > 10.0 ? 10.0 : grow));
    iters = next > (double)(1u << 24) ? (1u << 24) : (uint32_t)next;
  }
  e->iterations = iters;
  return 0;
}

static int take_samples(sweep *s, entry *e, uint32_t upto) {
  for (uint32_t w = 0; w < s->req->params.warmup_samples; w++) {
    double t;
    if (run_entry(s, e, e->iterations, &t) != 0)
      return -1;
  }
  while (e->n < upto) {
    if (cancelled(s)) {
      e->state = ENTRY_PRUNED;
      e->why = "stopped: calibration cancelled";
      return -1;
    }
    double t;
    if (run_entry(s, e, e->iterations, &t) != 0)
      return -1;
    e->samples[e->n++] = t / (double)e->iterations * 1e6;
  }
  e->median = sweep_stats_median(e->samples, e->n);
  return 0;
}

/* The best median among active, measured entries, or INFINITY. */
static double leader_median(entry *es, size_t n) {
  double best = INFINITY;
  for (size_t i = 0; i < n; i++)
    if (es[i].state == ENTRY_ACTIVE && es[i].n > 0 && es[i].median < best)
      best = es[i].median;
  return best;
}

static int cmp_median(const void *a, const void *b) {
  const entry *x = *(entry *const *)a, *y = *(entry *const *)b;
  return (x->median > y->median) - (x->median < y->median);
}

static void free_entries(entry *es, size_t n) {
  for (size_t i = 0; es && i < n; i++) {
    free(es[i].policy);
    free(es[i].samples);
    free(es[i].config);
    free(es[i].reason);
  }
  free(es);
}

#define PRUNE_WHY                                                                                  \
  "clearly slower than the leader (lower quartile above the leader's median plus the margin)"

/* Fills out->candidates from the entries: what became of each, with the
 * statistics of the samples it got (for the report). */
static void record_candidates(sweep *s, const entry *es, size_t ne) {
  sweep_result *o = s->out;
  o->candidates = ne ? calloc(ne, sizeof *o->candidates) : NULL;
  if (!o->candidates)
    return;
  for (size_t i = 0; i < ne; i++) {
    const entry *e = &es[i];
    sweep_candidate *c = &o->candidates[o->candidate_entries++];
    const char *why = e->why;
    c->index = e->index;
    c->policy = base_str_dup(e->policy);
    sweep_figures_fill(e->samples, e->n, e->iterations, s->req->params.noise_threshold,
                       &c->figures);
    static const sweep_candidate_status status_of[] = {
        [ENTRY_ACTIVE] = CALHOST_CANDIDATE_MEASURED,
        [ENTRY_PRUNED] = CALHOST_CANDIDATE_PRUNED,
        [ENTRY_REJECTED] = CALHOST_CANDIDATE_REJECTED,
    };
    c->status = status_of[e->state];
    if (e->state == ENTRY_REJECTED)
      why = e->reason ? e->reason : "rejected";
    if (e->state == ENTRY_ACTIVE && !e->n) /* stopped before its first sample */
      c->status = CALHOST_CANDIDATE_UNMEASURED, why = "not measured: the sweep stopped before it";
    c->reason = base_str_dup(why);
  }
}

static void notify(sweep *s, entry *e, uint32_t ordinal, uint32_t total) {
  const sweep_hooks *h = &s->req->hooks;
  if (h->candidate_start)
    h->candidate_start(h->user, e->index, ordinal, total, e->policy);
}

static void notify_end(sweep *s) {
  const sweep_hooks *h = &s->req->hooks;
  if (h->candidate_end)
    h->candidate_end(h->user);
}

/* Appends an entry for candidate `index` (its samples allocated); NULL when
 * out of memory. Pointers into s->es are invalidated. */
static entry *add_entry(sweep *s, uint32_t index) {
  entry *n = base_array_grow(s->es, s->ne, &s->cap, sizeof *n, 16);
  if (!n)
    return NULL;
  s->es = n;
  entry *e = &s->es[s->ne];
  memset(e, 0, sizeof *e);
  e->index = index;
  e->samples = calloc(s->reps, sizeof *e->samples);
  if (!e->samples)
    return NULL;
  s->ne++;
  return e;
}

/* Round one of entry e (see the top of the file): serialize, validate,
 * prepare, check, size, warm up, the first samples, prune. Returns 0 when e
 * was measured (maybe pruned) or rejected, -1 when the sweep stopped
 * (cancelled, the time budget). */
static int first_round(sweep *s, entry *e, uint32_t ordinal, uint32_t total) {
  const sweep_rigor_params *p = &s->req->params;
  int is_default = e->index == CALHOST_SWEEP_DEFAULT_INDEX;
  char why[640];
  if (!e->policy &&
      serialize(s, e->index, e->config, &e->policy, &e->policy_length, why, sizeof why) != 0) {
    if (!is_default)
      s->out->tried++;
    add_rejection(s, e, why);
    return 0;
  }
  if (!is_default)
    s->out->tried++;
  for (size_t i = 0; i < s->req->avoid_count; i++)
    if (!strcmp(e->policy, s->req->avoid_policies[i])) {
      add_rejection(s, e, s->req->avoid_reasons[i]);
      return 0;
    }
  char err[512] = "";
  notify(s, e, ordinal, total);
  calhost_status st =
      s->vt->validate_policy(s->req->instance, e->policy, e->policy_length, err, sizeof err);
  err[sizeof err - 1] = '\0';
  if (st != CALHOST_OK) {
    notify_end(s);
    snprintf(why, sizeof why, "invalid policy: %s", err[0] ? err : status_word(st));
    add_rejection(s, e, why);
    return 0;
  }
  int failed =
      ready_entry(s, e, 1) != 0 || take_samples(s, e, is_default ? s->reps : s->first) != 0;
  notify_end(s);
  if (failed)
    return stopped(s) ? -1 : 0;
  if (!is_default && p->prune) {
    double lead = leader_median(s->es, s->ne);
    if (e->median > lead &&
        sweep_stats_should_prune(e->samples, e->n, lead, p->prune_margin, p->prune_after)) {
      e->state = ENTRY_PRUNED;
      e->why = PRUNE_WHY;
      s->out->pruned++;
    }
  }
  return 0;
}

/* The search's evaluate callback: round one of a configuration. */
static int search_evaluate(void *user, const uint32_t *config, search_outcome *o) {
  sweep *s = user;
  if (cancelled(s))
    return 1;
  if (over_budget(s)) {
    s->out->budget_exhausted = 1;
    s->out->budget_after = s->out->tried;
    return 1;
  }
  /* The default's policy again (a described space whose point serializes
   * to it): answered with the default's measurement, never re-run nor
   * listed twice. */
  char *policy = NULL, why[640];
  size_t length = 0;
  s->last_is_default = 0;
  if (s->have_default_entry &&
      serialize(s, s->named ? 0 : config[0], config, &policy, &length, why, sizeof why) == 0) {
    const entry *d = &s->es[s->default_entry];
    if (d->policy && d->policy_length == length && !memcmp(d->policy, policy, length)) {
      free(policy);
      s->last_is_default = 1;
      s->last = s->default_entry;
      o->seconds = 0;
      if (d->state == ENTRY_REJECTED || d->n == 0)
        o->rejected = 1;
      else
        o->cost = d->median;
      return 0;
    }
  }
  entry *e = add_entry(s, s->named ? s->out->evaluated : config[0]);
  if (!e || !(e->config = malloc(s->np * sizeof *e->config))) {
    free(policy);
    s->oom = 1;
    return 1;
  }
  e->policy = policy;
  e->policy_length = length;
  memcpy(e->config, config, s->np * sizeof *config);
  double t0 = sweep_now();
  uint32_t total = (s->out->planned ? s->out->planned : s->out->evaluated + 1) + s->shown;
  if (first_round(s, e, s->out->evaluated + 1 + s->shown, total) != 0)
    return 1;
  s->out->evaluated++;
  s->last = (size_t)(e - s->es);
  o->seconds = sweep_now() - t0;
  if (e->state == ENTRY_REJECTED || e->n == 0)
    o->rejected = 1;
  else
    o->cost = e->median;
  return 0;
}

/* The search's observe hook: hands the evaluation to hooks.evaluated. */
static void search_observe(void *user, const uint32_t *config, const search_outcome *o,
                           uint32_t evaluation, double best) {
  sweep *s = user;
  const sweep_hooks *h = &s->req->hooks;
  (void)best;
  if (!h->evaluated)
    return;
  const entry *e = &s->es[s->last];
  sweep_evaluation ev = {.evaluation = evaluation,
                         .index = e->index,
                         .config = config,
                         .policy = e->policy,
                         .rejected = o->rejected,
                         .reason = o->rejected ? (e->reason ? e->reason : "rejected") : NULL,
                         .pruned = e->state == ENTRY_PRUNED,
                         .median_us = NAN,
                         .spread_us = NAN,
                         .samples = e->n,
                         .compile_seconds = e->compile_seconds,
                         .seconds = o->seconds};
  if (!o->rejected) {
    ev.median_us = e->median;
    ev.spread_us = sweep_stats_mad(e->samples, e->n);
  }
  h->evaluated(h->user, &ev);
}

/* The search's strategy and budget for this sweep (see measure.h); curated:
 * the space is the plugin's candidate list, which the rigor measure runs
 * whole when it has at most CALHOST_SEARCH_CURATED_WHOLE_MAX candidates
 * (search_sweep_rigor_plan): the plugin curated it to be affordable, the
 * engine's pruning keeps it so, and on cpu_gemm a 10% model search chose
 * winners up to 1.2x slower than the whole list's (search-bench --live). A
 * larger space (an OpenCL backend's described space) gets the search's
 * measure budget. */
static void search_plan(const sweep_request *req, uint64_t size, int curated,
                        search_strategy *strategy, uint32_t *evaluations, double *seconds) {
  search_rigor rg = req->params.rigor == CALHOST_RIGOR_QUICK ? CALHOST_SEARCH_RIGOR_QUICK
                    : req->params.rigor == CALHOST_RIGOR_EXHAUSTIVE
                        ? CALHOST_SEARCH_RIGOR_EXHAUSTIVE
                        : CALHOST_SEARCH_RIGOR_MEASURE;
  search_strategy rigor_strategy;
  uint32_t rigor_budget;
  search_sweep_rigor_plan(rg, size, curated, &rigor_strategy, &rigor_budget);
  *seconds = req->budget_seconds > 0 ? req->budget_seconds : 0;
  if (req->budget_evaluations)
    *evaluations =
        size && req->budget_evaluations > size ? (uint32_t)size : req->budget_evaluations;
  else if (*seconds > 0)
    *evaluations = 0; /* the seconds alone bound it */
  else
    *evaluations = rigor_budget;
  if (size && *evaluations >= size)
    *evaluations = 0;      /* the whole space: the search ends exhausted */
  if (req->policy_count) { /* explicit candidates (verify): every one */
    *evaluations = 0;
    *seconds = 0;
    *strategy = CALHOST_SEARCH_EXHAUSTIVE;
    return;
  }
  if (req->strategy != CALHOST_SEARCH_DEFAULT)
    *strategy = req->strategy;
  else if (rg == CALHOST_SEARCH_RIGOR_EXHAUSTIVE) /* a budget with it: the first N, in order */
    *strategy = CALHOST_SEARCH_EXHAUSTIVE;
  else if (!req->budget_evaluations && *seconds == 0)
    *strategy = rigor_strategy;
  else if (!*evaluations && *seconds > 0) /* a time alone: presumed below the space */
    *strategy = search_default_strategy(size > 1 ? size - 1 : 1, size);
  else
    *strategy = search_default_strategy(*evaluations, size);
}

/* The named space's validity test: the plugin's assignment_valid. */
static int named_valid(void *user, const uint32_t *config) {
  sweep *s = user;
  char err[256];
  if (s->default_config && !memcmp(s->default_config, config, s->np * sizeof *config))
    return 0; /* the default's point: measured as the default, never proposed */
  return s->vt->assignment_valid(s->session, config, s->np, err, sizeof err) == CALHOST_OK;
}

/* Appends config to the plausible order unless invalid or already there. */
static int add_start(sweep *s, uint32_t **starts, size_t *n, size_t cap, const uint32_t *config) {
  if (*n >= cap || !named_valid(s, config))
    return 0;
  if (s->default_config && !memcmp(s->default_config, config, s->np * sizeof *config))
    return 0; /* the default's point: measured as the default */
  for (size_t i = 0; i < *n; i++)
    if (!memcmp(*starts + i * s->np, config, s->np * sizeof *config))
      return 0;
  memcpy(*starts + *n * s->np, config, s->np * sizeof *config);
  (*n)++;
  return 0;
}

/* Whether assignment a serializes to the default policy (then the default
 * is measured once, as the default, and never as a search candidate). */
static int default_is_assignment(sweep *s, const uint32_t *a) {
  char *p = NULL, *d = NULL, why[640];
  size_t lp = 0, ld = 0;
  if (!VT_HAS(s, default_policy))
    return 0;
  int same = serialize(s, 0, a, &p, &lp, why, sizeof why) == 0 &&
             serialize(s, CALHOST_SWEEP_DEFAULT_INDEX, NULL, &d, &ld, why, sizeof why) == 0 &&
             lp == ld && !memcmp(p, d, lp);
  free(p);
  free(d);
  plugin_message(s);
  return same;
}

/* [A-Za-z0-9_]+ */
static int parameter_name_ok(const char *s) {
  if (!s || !*s)
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return 0;
  return 1;
}

int sweep_space_defect(const calhost_parameter_space *ps, char *why, size_t cap) {
  size_t np = ps->parameter_count;
  if (!ps->parameters || np < 1 || np > 64)
    return base_str_fail(why, cap, "describe_space gave %zu parameters (1 to 64 allowed)", np);
  for (size_t i = 0; i < np; i++) {
    const calhost_parameter *q = &ps->parameters[i];
    if (!parameter_name_ok(q->name))
      return base_str_fail(why, cap, "parameter %zu: the name must be [A-Za-z0-9_]+", i);
    for (size_t j = 0; j < i; j++)
      if (!strcmp(ps->parameters[j].name, q->name))
        return base_str_fail(why, cap, "parameter '%s' appears twice", q->name);
    if (q->value_count < 1 || !q->values)
      return base_str_fail(why, cap, "parameter '%s' has no values", q->name);
    for (uint32_t v = 0; v < q->value_count; v++) {
      if (!base_str_is_word(q->values[v]))
        return base_str_fail(why, cap,
                             "parameter '%s': value %u is empty, NULL or not a printable word",
                             q->name, v);
      for (uint32_t w = 0; w < v; w++)
        if (!strcmp(q->values[w], q->values[v]))
          return base_str_fail(why, cap, "parameter '%s': value '%s' appears twice", q->name,
                               q->values[v]);
    }
  }
  return 0;
}

/* The plugin's named parameters (ABI 2: describe_space, assignment_valid,
 * serialize_assignment) as the search's space, with the plausible order:
 * the default's assignment, then the numbered candidates (the plugin's
 * curated list, in its order) mapped through policy_assignment when the
 * plugin has it. Returns 1 when set up, 0 when the session has only
 * numbered candidates or describes a space sweep_space_defect refuses
 * (`plugin check` names the defect), -1 when out of memory. */
static int named_space(sweep *s, uint32_t count, uint32_t **starts, size_t *nstart) {
  if (!VT_HAS(s, describe_space) || !VT_HAS(s, assignment_valid) ||
      !VT_HAS(s, serialize_assignment))
    return 0;
  calhost_parameter_space ps;
  memset(&ps, 0, sizeof ps);
  ps.header.struct_type = CALHOST_STRUCT_PARAMETER_SPACE;
  ps.header.struct_version = 1;
  ps.header.struct_size = sizeof ps;
  if (s->vt->describe_space(s->session, &ps) != CALHOST_OK) {
    plugin_message(s); /* CALHOST_UNSUPPORTED: numbered only */
    return 0;
  }
  char defect[512];
  if (sweep_space_defect(&ps, defect, sizeof defect) != 0) {
    add_warning(s,
                "its described parameter space is unusable (%s), so the %u numbered candidates "
                "were searched instead (`calhost plugin check` names the defect too)",
                defect, count);
    return 0;
  }
  s->named_params = calloc(ps.parameter_count, sizeof *s->named_params);
  if (!s->named_params)
    return -1;
  for (uint32_t i = 0; i < ps.parameter_count; i++) {
    s->named_params[i].name = ps.parameters[i].name;
    s->named_params[i].values = ps.parameters[i].values;
    s->named_params[i].value_count = ps.parameters[i].value_count;
    s->named_params[i].ordered = (ps.parameters[i].flags & CALHOST_PARAMETER_ORDERED) != 0;
  }
  s->params = s->named_params;
  s->np = ps.parameter_count;
  s->named = 1;
  size_t cap = 1 + (count < 1024 ? count : 1024), n = 0;
  uint32_t *a = malloc(s->np * sizeof *a);
  *starts = malloc(cap * s->np * sizeof **starts);
  if (!a || !*starts) {
    free(a);
    return -1;
  }
  if (ps.default_assignment) {
    char err[256] = "";
    if (s->vt->assignment_valid(s->session, ps.default_assignment, s->np, err, sizeof err) !=
        CALHOST_OK) {
      const char *m = plugin_message(s);
      add_warning(s,
                  "the default assignment of its described space is refused by its own "
                  "assignment_valid (%s), so the speedup is measured against a default outside "
                  "the space",
                  err[0] ? err
                  : m    ? m
                         : "no reason given");
    } else if (default_is_assignment(s, ps.default_assignment)) {
      s->default_config = ps.default_assignment; /* measured as the default only */
    } else {
      add_start(s, starts, &n, cap, ps.default_assignment);
    }
  }
  if (VT_HAS(s, policy_assignment))
    for (uint32_t i = 0; i < count && n < cap; i++) {
      char *policy = NULL, why[640];
      size_t len = 0;
      if (serialize(s, i, NULL, &policy, &len, why, sizeof why) == 0 &&
          s->vt->policy_assignment(s->session, policy, len, a, s->np) == CALHOST_OK)
        add_start(s, starts, &n, cap, a);
      free(policy);
      plugin_message(s);
    }
  free(a);
  *nstart = n;
  return 1;
}

/* The request's warm policies (sweep_request.warm_policies) as
 * configurations of the search's space, each validated by the plugin in
 * this session, into *out (malloc'd, *n of s->np positions each; NULL / 0
 * when none is usable). 0, or -1 when out of memory. */
static int warm_configs(sweep *s, uint32_t **out, size_t *n) {
  const sweep_request *req = s->req;
  size_t nw = req->warm_count;
  *out = NULL;
  *n = 0;
  if (!nw || !req->warm_policies || req->policy_count)
    return 0;
  if (s->named && !VT_HAS(s, policy_assignment))
    return 0;
  /* per warm policy: its configuration and whether the plugin took it */
  uint32_t *cfg = malloc(nw * s->np * sizeof *cfg);
  unsigned char *ok = calloc(nw, 1);
  if (!cfg || !ok) {
    free(cfg);
    free(ok);
    return -1;
  }
  if (s->named) {
    for (size_t w = 0; w < nw; w++) {
      const char *pol = req->warm_policies[w];
      ok[w] = pol && *pol &&
              s->vt->policy_assignment(s->session, pol, strlen(pol), cfg + w * s->np, s->np) ==
                  CALHOST_OK &&
              named_valid(s, cfg + w * s->np);
      plugin_message(s);
    }
  } else { /* each candidate serialized once, matched against every policy */
    uint32_t most = s->count < SWEEP_WARM_NUMBERED_MAX ? s->count : SWEEP_WARM_NUMBERED_MAX;
    for (uint32_t i = 0; i < most; i++) {
      char *cand = NULL, why[640];
      size_t len = 0;
      if (serialize(s, i, NULL, &cand, &len, why, sizeof why) == 0)
        for (size_t w = 0; w < nw; w++) {
          const char *pol = req->warm_policies[w];
          if (!ok[w] && pol && strlen(pol) == len && !memcmp(cand, pol, len)) {
            cfg[w] = i;
            ok[w] = 1;
          }
        }
      free(cand);
      plugin_message(s);
    }
  }
  for (size_t w = 0; w < nw; w++) /* the plugin's, in the request's order */
    if (ok[w])
      memmove(cfg + (*n)++ * s->np, cfg + w * s->np, s->np * sizeof *cfg);
  free(ok);
  if (*n)
    *out = cfg;
  else
    free(cfg);
  return 0;
}

int sweep_run(const sweep_request *req, sweep_result *out) {
  memset(out, 0, sizeof *out);
  out->winner_index = CALHOST_SWEEP_DEFAULT_INDEX;
  if (!req || !req->vtable || !req->workload || !req->target) {
    snprintf(out->error, sizeof out->error, "invalid sweep request");
    return -1;
  }
  const sweep_rigor_params *p = &req->params;
  sweep s = {.req = req, .vt = req->vtable, .out = out, .all_device_timing = 1};
  s.max_policy = req->max_policy_length ? req->max_policy_length : CALHOST_SWEEP_MAX_POLICY;
  const calhost_plugin_vtable *vt = req->vtable;
  uint32_t *starts = NULL, *warm = NULL;
  int rc = -1;

  calhost_status st = vt->open_session(req->instance, req->workload, req->target, &s.session);
  if (st != CALHOST_OK || !s.session) {
    describe_failure(&s, out->error, sizeof out->error, "open_session failed",
                     st == CALHOST_OK ? CALHOST_ERROR : st);
    return -1;
  }
  uint32_t count = (uint32_t)req->policy_count;
  st = count ? CALHOST_OK : vt->candidate_count(s.session, &count);
  if (st != CALHOST_OK || count == 0) {
    if (st == CALHOST_OK)
      snprintf(out->error, sizeof out->error, "the plugin offers no candidates");
    else
      describe_failure(&s, out->error, sizeof out->error, "candidate_count failed", st);
    goto done;
  }
  out->candidate_count = count;
  s.count = count;
  s.reps = p->repetitions ? p->repetitions : 1;
  s.first = p->prune ? (p->prune_after < s.reps ? p->prune_after : s.reps) : s.reps;

  /* The search's space: the plugin's named parameters when it describes
   * them (ABI 2), else the numbered candidates in the plugin's order. */
  size_t nstart = 0;
  int named = 0;
  if (!req->policy_count) /* explicit candidates (verify): numbered */
    named = named_space(&s, count, &starts, &nstart);
  if (named < 0) {
    snprintf(out->error, sizeof out->error, "out of memory");
    goto done;
  }
  if (!named && count > SWEEP_MAX_NUMBERED) {
    snprintf(out->error, sizeof out->error,
             "candidate_count %u is more than a numbered space holds (at most %u): describe the "
             "parameters (describe_space) so that the search need not number every candidate",
             count, SWEEP_MAX_NUMBERED);
    goto done;
  }
  if (!named) {
    nstart = count < 1024 ? count : 1024;
    starts = malloc(nstart * sizeof *starts);
    if (!starts || search_numbered(count, &s.param, &s.words) != 0) {
      snprintf(out->error, sizeof out->error, "out of memory");
      goto done;
    }
    for (size_t i = 0; i < nstart; i++)
      starts[i] = (uint32_t)i;
    s.params = &s.param;
    s.np = 1;
  }
  search_space space = {.name = req->workload->name,
                        .params = s.params,
                        .param_count = s.np,
                        .evaluate = search_evaluate,
                        .user = &s,
                        .starts = starts,
                        .start_count = nstart};
  if (named)
    space.valid = named_valid;
  if (warm_configs(&s, &warm, &space.warm_count) != 0) {
    snprintf(out->error, sizeof out->error, "out of memory");
    goto done;
  }
  space.warm = warm;
  uint64_t size = named ? search_count_valid(&space, 1u << 20) : count;
  search_options so;
  search_options_init(&so);
  /* size 0: a described space too large to count, never a curated list */
  int curated = !named || (size && size <= count);
  space.starts_curated = curated && starts != NULL; /* the plugin's list, ranked */
  search_plan(req, size, curated, &so.strategy, &so.max_evaluations, &so.max_seconds);
  so.seed = req->seed ? req->seed : 1;
  so.observe = search_observe;
  so.observe_user = &s;
  out->numbered = !named;
  out->space_size = size;
  out->strategy = (uint32_t)so.strategy;
  out->budget_evaluations = so.max_evaluations;
  out->budget_seconds = so.max_seconds;
  out->planned = so.max_evaluations                     ? so.max_evaluations
                 : size && size <= (uint64_t)UINT32_MAX ? (uint32_t)size
                                                        : 0;

  /* The default first: it is the first leader, and never pruned. */
  if (VT_HAS(&s, default_policy)) {
    entry *e = add_entry(&s, CALHOST_SWEEP_DEFAULT_INDEX);
    if (!e) {
      snprintf(out->error, sizeof out->error, "out of memory");
      goto done;
    }
    s.shown = 1;
    first_round(&s, e, 1, out->planned + 1);
    s.have_default_entry = 1;
    s.default_entry = 0;
  }

  /* Round one: the search chooses the candidates. */
  if (!stopped(&s)) {
    const sweep_hooks *h = &req->hooks;
    if (h->search_start) {
      sweep_search_info info = {.params = s.params,
                                .param_count = s.np,
                                .numbered = !named,
                                .space_size = size,
                                .curated = curated,
                                .strategy = so.strategy,
                                .budget_evaluations = so.max_evaluations,
                                .budget_seconds = so.max_seconds,
                                .request = req,
                                .default_median_us = NAN};
      if (s.have_default_entry) {
        const entry *d = &s.es[s.default_entry];
        info.default_policy = d->policy;
        if (d->state == ENTRY_ACTIVE && d->n > 0)
          info.default_median_us = d->median;
      }
      h->search_start(h->user, &info);
    }
    /* Under the time budget, racing (halving, then round two) needs time
     * after the search: the search gets 70% of what is left of the sweep's
     * share, and stops there as on a seconds budget. */
    if (req->deadline > 0 && p->halving) {
      double left = (req->deadline - sweep_now()) * 0.7;
      if (left > 0 && (so.max_seconds == 0 || left < so.max_seconds))
        so.max_seconds = left;
    }
    search_result sr;
    if (search_run(&space, &so, &sr) != 0) {
      snprintf(out->error, sizeof out->error, "search: %s", sr.error);
      goto done;
    }
    out->search_stop = (uint32_t)sr.stop;
    out->search_seconds = sr.seconds;
    search_result_free(&sr);
  }
  if (s.oom) {
    snprintf(out->error, sizeof out->error, "out of memory");
    goto done;
  }
  if (s.bad_timer) {
    snprintf(out->error, sizeof out->error, "%s", s.timer_why);
    goto done;
  }
  if (out->cancelled) {
    snprintf(out->error, sizeof out->error, "cancelled");
    goto done;
  }

  /* Prune again against the final leader of round one, then halve. */
  entry *es = s.es;
  size_t ne = s.ne;
  entry **act = malloc((ne ? ne : 1) * sizeof *act);
  size_t nact = 0;
  if (!act) {
    snprintf(out->error, sizeof out->error, "out of memory");
    goto done;
  }
  if (p->prune) {
    double lead = leader_median(es, ne);
    for (size_t i = 0; i < ne; i++) {
      entry *e = &es[i];
      if (e->state == ENTRY_ACTIVE && e->n > 0 && e->index != CALHOST_SWEEP_DEFAULT_INDEX &&
          e->median > lead &&
          sweep_stats_should_prune(e->samples, e->n, lead, p->prune_margin, p->prune_after)) {
        e->state = ENTRY_PRUNED;
        e->why = PRUNE_WHY;
        out->pruned++;
      }
    }
  }
  for (size_t i = 0; i < ne; i++)
    if (es[i].state == ENTRY_ACTIVE && es[i].n > 0 && es[i].index != CALHOST_SWEEP_DEFAULT_INDEX)
      act[nact++] = &es[i];
  if (p->halving && nact > 2) {
    qsort(act, nact, sizeof *act, cmp_median);
    size_t keep = (nact + 1) / 2;
    for (size_t i = keep; i < nact; i++) {
      act[i]->state = ENTRY_PRUNED;
      act[i]->why = "in the slower half after round one (successive halving)";
      out->pruned++;
    }
    nact = keep;
  }

  /* Round two: complete the survivors' samples. */
  for (size_t i = 0; i < nact && !out->budget_exhausted; i++) {
    entry *e = act[i];
    if (e->n >= s.reps)
      continue;
    if (cancelled(&s))
      break;
    if (over_budget(&s)) {
      out->budget_exhausted = 1;
      out->budget_after = out->tried;
      break;
    }
    notify(&s, e, (uint32_t)i + 1, (uint32_t)nact);
    int failed = ready_entry(&s, e, 0) != 0 || take_samples(&s, e, s.reps) != 0;
    notify_end(&s);
    if (failed && stopped(&s))
      break;
  }
  free(act);
  if (s.bad_timer) {
    snprintf(out->error, sizeof out->error, "%s", s.timer_why);
    goto done;
  }
  if (out->cancelled) {
    snprintf(out->error, sizeof out->error, "cancelled");
    goto done;
  }

  /* The winner: the lowest median; the default when nothing beats it. */
  entry *best = NULL, *def = NULL;
  for (size_t i = 0; i < ne; i++) {
    entry *e = &es[i];
    if (e->state != ENTRY_ACTIVE || e->n == 0)
      continue;
    if (e->index == CALHOST_SWEEP_DEFAULT_INDEX) {
      def = e;
      continue;
    }
    if (!best || e->median < best->median)
      best = e;
  }
  if (def) {
    out->have_default = 1;
    out->default_policy = base_str_dup(def->policy);
    out->default_median_us = def->median;
    if (!best || def->median < best->median)
      best = def;
  }
  /* A default that only "won" because every candidate was refused is no
   * calibration (a plugin bug, or a space this shape cannot run): storing
   * it would pass the default off as measured against its alternatives. */
  if (best && best == def && !req->policy_count && out->tried > 0 && out->rejected == out->tried) {
    const char *first_why = NULL;
    for (size_t i = 0; i < out->rejection_count && !first_why; i++)
      if (out->rejections[i].index != CALHOST_SWEEP_DEFAULT_INDEX)
        first_why = out->rejections[i].reason;
    snprintf(out->error, sizeof out->error,
             "every candidate was rejected (%u of %u tried), so the default was compared with "
             "nothing%s%.400s",
             out->rejected, out->tried, first_why ? "; first: " : "", first_why ? first_why : "");
    goto done;
  }
  if (!best) {
    const char *first_why =
        out->rejection_count && out->rejections[0].reason ? out->rejections[0].reason : NULL;
    snprintf(out->error, sizeof out->error, "no valid candidate (%u tried, %u rejected%s)%s%.400s",
             out->tried, out->rejected, out->budget_exhausted ? ", budget exhausted" : "",
             first_why ? "; first: " : "", first_why ? first_why : "");
    goto done;
  }
  sweep_figures fig;
  if (sweep_figures_fill(best->samples, best->n, best->iterations, p->noise_threshold, &fig) != 0) {
    snprintf(out->error, sizeof out->error, "out of memory");
    goto done;
  }
  out->winner_policy = base_str_dup(best->policy);
  out->winner_index = best->index;
  out->figures = fig;
  out->device_timed = s.any_device_timing && s.all_device_timing;
  out->speedup =
      out->have_default && fig.median_us > 0 ? out->default_median_us / fig.median_us : 0;
  out->ok = out->winner_policy != NULL;
  rc = out->ok ? 0 : -1;

done:
  record_candidates(&s, s.es, s.ne);
  free_entries(s.es, s.ne);
  free(starts);
  free(warm);
  free(s.named_params);
  search_numbered_free(s.words, s.words ? count : 0);
  vt->close_session(s.session);
  return rc;
}

void sweep_result_free(sweep_result *r) {
  if (!r)
    return;
  free(r->winner_policy);
  free(r->default_policy);
  free(r->warning);
  for (size_t i = 0; i < r->rejection_count; i++) {
    free(r->rejections[i].policy);
    free(r->rejections[i].reason);
  }
  free(r->rejections);
  for (size_t i = 0; i < r->candidate_entries; i++) {
    free(r->candidates[i].policy);
    free(r->candidates[i].reason);
  }
  free(r->candidates);
  memset(r, 0, sizeof *r);
}
