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
 * sweep's share so that the racing has time. The space, its plausible
 * order, warm start and budget are built in space.c; the policy texts and
 * the plugin's failure and warning texts in texts.c.
 */
#include "measure.h"
#include "measure_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/clock.h"
#include "base/policy.h"
#include "base/str.h"
#include "base/words.h"
#include "isolate/isolate.h"
#include "loader/entries.h"
#include "stats.h"

double sweep_now(void) {
  return base_monotonic_seconds();
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

/* Runs the prepared candidate `iterations` times (one run() call); on
 * CALHOST_OK *seconds is the whole call's time: the plugin's device_seconds
 * when it reports a finite value > 0, else (a negative value: not reported)
 * the host's clock around run(). A device time of exactly 0, NaN or an
 * infinity is no measurement (a device timer that was never started: an
 * OpenCL queue without CL_QUEUE_PROFILING_ENABLE reads 0): it sets
 * s->bad_timer with the reason and returns CALHOST_ERROR, and the sweep
 * stops at once, saying what to fix. Returns run()'s status. */
calhost_status sweep_run_timed(const calhost_plugin_vtable *vt, calhost_session *session,
                               uint32_t iterations, calhost_run_result *rr, double *host_seconds) {
  memset(rr, 0, sizeof *rr);
  rr->header.struct_type = CALHOST_STRUCT_RUN_RESULT;
  rr->header.struct_version = 1;
  rr->header.struct_size = sizeof *rr;
  rr->device_seconds = -1.0;
  double t0 = sweep_now();
  calhost_status st = vt->run(session, iterations, rr);
  *host_seconds = sweep_now() - t0;
  return st;
}

static calhost_status timed_run(sweep *s, uint32_t iterations, double *seconds) {
  calhost_run_result rr;
  double host_seconds;
  calhost_status st = sweep_run_timed(s->vt, s->session, iterations, &rr, &host_seconds);
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
    *seconds = host_seconds;
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
  sweep_describe_failure(s, why, sizeof why, what, st);
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
                 err[0] ? err
                        : (sweep_plugin_message(s) ? sweep_plugin_message(s)
                                                   : "differs from reference"));
      else
        sweep_describe_failure(s, why, sizeof why, "check failed", st);
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
  if (!e->policy && sweep_serialize(s, e->index, e->config, &e->policy, &e->policy_length, why,
                                    sizeof why) != 0) {
    if (!is_default)
      s->out->tried++;
    add_rejection(s, e, why);
    return 0;
  }
  if (!is_default)
    s->out->tried++;
  for (size_t i = 0; i < s->req->avoid_count; i++)
    if (base_policy_same(e->policy, s->req->avoid_policies[i])) {
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
    snprintf(why, sizeof why, "invalid policy: %s", err[0] ? err : sweep_status_word(st));
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
  if (s->have_default_entry && sweep_serialize(s, s->named ? 0 : config[0], config, &policy,
                                               &length, why, sizeof why) == 0) {
    const entry *d = &s->es[s->default_entry];
    if (base_policy_same_n(d->policy, d->policy_length, policy, length)) {
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

/* Opens the session and counts the candidates (the request's explicit
 * policies, else the plugin's candidate_count) into s->count, with the
 * samples per candidate. 0, or -1 with out->error set (s->session NULL when
 * open_session failed). */
static int open_sweep(sweep *s) {
  const sweep_request *req = s->req;
  const sweep_rigor_params *p = &req->params;
  sweep_result *out = s->out;
  calhost_status st = s->vt->open_session(req->instance, req->workload, req->target, &s->session);
  if (st != CALHOST_OK || !s->session) {
    sweep_describe_failure(s, out->error, sizeof out->error, "open_session failed",
                           st == CALHOST_OK ? CALHOST_ERROR : st);
    s->session = NULL;
    return -1;
  }
  uint32_t count = (uint32_t)req->policy_count;
  st = count ? CALHOST_OK : s->vt->candidate_count(s->session, &count);
  if (st != CALHOST_OK || count == 0) {
    if (st == CALHOST_OK)
      snprintf(out->error, sizeof out->error, "the plugin offers no candidates");
    else
      sweep_describe_failure(s, out->error, sizeof out->error, "candidate_count failed", st);
    return -1;
  }
  out->candidate_count = count;
  s->count = count;
  s->reps = p->repetitions ? p->repetitions : 1;
  s->first = p->prune ? (p->prune_after < s->reps ? p->prune_after : s->reps) : s->reps;
  return 0;
}

/* The default first: it is the first leader, and never pruned. 0, or -1
 * when out of memory. */
static int measure_default(sweep *s) {
  if (!VT_HAS(s, default_policy))
    return 0;
  entry *e = add_entry(s, CALHOST_SWEEP_DEFAULT_INDEX);
  if (!e)
    return -1;
  s->shown = 1;
  first_round(s, e, 1, s->out->planned + 1);
  s->have_default_entry = 1;
  s->default_entry = 0;
  return 0;
}

/* Tells hooks.search_start what the search is about to do. */
static void announce_search(sweep *s, const sweep_space *sp) {
  const sweep_hooks *h = &s->req->hooks;
  if (!h->search_start)
    return;
  sweep_search_info info = {.params = s->params,
                            .param_count = s->np,
                            .numbered = !sp->named,
                            .space_size = sp->size,
                            .curated = sp->curated,
                            .strategy = sp->so.strategy,
                            .budget_evaluations = sp->so.max_evaluations,
                            .budget_seconds = sp->so.max_seconds,
                            .request = s->req,
                            .default_median_us = NAN};
  if (s->have_default_entry) {
    const entry *d = &s->es[s->default_entry];
    info.default_policy = d->policy;
    if (d->state == ENTRY_ACTIVE && d->n > 0)
      info.default_median_us = d->median;
  }
  h->search_start(h->user, &info);
}

/* Round one: the search chooses the candidates (search_evaluate runs each).
 * 0, or -1 with out->error set when the search itself failed. */
static int round_one(sweep *s, sweep_space *sp) {
  const sweep_request *req = s->req;
  announce_search(s, sp);
  /* Under the time budget, racing (halving, then round two) needs time
   * after the search: the search gets 70% of what is left of the sweep's
   * share, and stops there as on a seconds budget. */
  if (req->deadline > 0 && req->params.halving) {
    double left = (req->deadline - sweep_now()) * 0.7;
    if (left > 0 && (sp->so.max_seconds == 0 || left < sp->so.max_seconds))
      sp->so.max_seconds = left;
  }
  search_result sr;
  if (search_run(&sp->space, &sp->so, &sr) != 0) {
    snprintf(s->out->error, sizeof s->out->error, "search: %s", sr.error);
    return -1;
  }
  s->out->search_stop = (uint32_t)sr.stop;
  s->out->search_seconds = sr.seconds;
  search_result_free(&sr);
  return 0;
}

/* Whether the sweep must end here (a bad device timer, cancelled; with
 * oom, out of memory in evaluate): 1 with out->error set, else 0. */
static int ended(sweep *s, int oom) {
  sweep_result *out = s->out;
  if (oom && s->oom)
    snprintf(out->error, sizeof out->error, "out of memory");
  else if (s->bad_timer)
    snprintf(out->error, sizeof out->error, "%s", s->timer_why);
  else if (out->cancelled)
    snprintf(out->error, sizeof out->error, "cancelled");
  else
    return 0;
  return 1;
}

/* Prunes again against the final leader of round one, then (halving) keeps
 * the faster half: the survivors into act (room for s->ne), their number
 * into *nact. */
static void prune_and_halve(sweep *s, entry **act, size_t *nact) {
  const sweep_rigor_params *p = &s->req->params;
  entry *es = s->es;
  size_t ne = s->ne, n = 0;
  if (p->prune) {
    double lead = leader_median(es, ne);
    for (size_t i = 0; i < ne; i++) {
      entry *e = &es[i];
      if (e->state == ENTRY_ACTIVE && e->n > 0 && e->index != CALHOST_SWEEP_DEFAULT_INDEX &&
          e->median > lead &&
          sweep_stats_should_prune(e->samples, e->n, lead, p->prune_margin, p->prune_after)) {
        e->state = ENTRY_PRUNED;
        e->why = PRUNE_WHY;
        s->out->pruned++;
      }
    }
  }
  for (size_t i = 0; i < ne; i++)
    if (es[i].state == ENTRY_ACTIVE && es[i].n > 0 && es[i].index != CALHOST_SWEEP_DEFAULT_INDEX)
      act[n++] = &es[i];
  if (p->halving && n > 2) {
    qsort(act, n, sizeof *act, cmp_median);
    size_t keep = (n + 1) / 2;
    for (size_t i = keep; i < n; i++) {
      act[i]->state = ENTRY_PRUNED;
      act[i]->why = "in the slower half after round one (successive halving)";
      s->out->pruned++;
    }
    n = keep;
  }
  *nact = n;
}

/* Round two: completes the survivors' samples (re-prepared), within the
 * budget and until cancelled. */
static void round_two(sweep *s, entry **act, size_t nact) {
  sweep_result *out = s->out;
  for (size_t i = 0; i < nact && !out->budget_exhausted; i++) {
    entry *e = act[i];
    if (e->n >= s->reps)
      continue;
    if (cancelled(s))
      break;
    if (over_budget(s)) {
      out->budget_exhausted = 1;
      out->budget_after = out->tried;
      break;
    }
    notify(s, e, (uint32_t)i + 1, (uint32_t)nact);
    int failed = ready_entry(s, e, 0) != 0 || take_samples(s, e, s->reps) != 0;
    notify_end(s);
    if (failed && stopped(s))
      break;
  }
}

/* Races round one's candidates: prune, halve, round two. 0, or -1 with
 * out->error set. */
static int race(sweep *s) {
  entry **act = malloc((s->ne ? s->ne : 1) * sizeof *act);
  size_t nact = 0;
  if (!act)
    return base_str_fail(s->out->error, sizeof s->out->error, "out of memory");
  prune_and_halve(s, act, &nact);
  round_two(s, act, nact);
  free(act);
  return ended(s, 0) ? -1 : 0;
}

/* Why no winner may be stored, into out->error: every candidate refused
 * (best is the default only because nothing else ran; a plugin bug, or a
 * space this shape cannot run: storing it would pass the default off as
 * measured against its alternatives), or nothing valid at all. 1 when so. */
static int no_winner(sweep *s, const entry *best, const entry *def) {
  sweep_result *out = s->out;
  if (best && best == def && !s->req->policy_count && out->tried > 0 &&
      out->rejected == out->tried) {
    const char *first_why = NULL;
    for (size_t i = 0; i < out->rejection_count && !first_why; i++)
      if (out->rejections[i].index != CALHOST_SWEEP_DEFAULT_INDEX)
        first_why = out->rejections[i].reason;
    snprintf(out->error, sizeof out->error,
             "every candidate was rejected (%u of %u tried), so the default was compared with "
             "nothing%s%.400s",
             out->rejected, out->tried, first_why ? "; first: " : "", first_why ? first_why : "");
    return 1;
  }
  if (!best) {
    const char *first_why =
        out->rejection_count && out->rejections[0].reason ? out->rejections[0].reason : NULL;
    snprintf(out->error, sizeof out->error, "no valid candidate (%u tried, %u rejected%s)%s%.400s",
             out->tried, out->rejected, out->budget_exhausted ? ", budget exhausted" : "",
             first_why ? "; first: " : "", first_why ? first_why : "");
    return 1;
  }
  return 0;
}

/* The winner: the lowest median; the default when nothing beats it. Fills
 * out's winner, default and figures. 0, or -1 with out->error set. */
static int choose_winner(sweep *s) {
  sweep_result *out = s->out;
  entry *best = NULL, *def = NULL;
  for (size_t i = 0; i < s->ne; i++) {
    entry *e = &s->es[i];
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
  if (no_winner(s, best, def))
    return -1;
  sweep_figures fig;
  if (sweep_figures_fill(best->samples, best->n, best->iterations, s->req->params.noise_threshold,
                         &fig) != 0)
    return base_str_fail(out->error, sizeof out->error, "out of memory");
  out->winner_policy = base_str_dup(best->policy);
  out->winner_index = best->index;
  out->figures = fig;
  out->device_timed = s->any_device_timing && s->all_device_timing;
  out->speedup =
      out->have_default && fig.median_us > 0 ? out->default_median_us / fig.median_us : 0;
  out->ok = out->winner_policy != NULL;
  return out->ok ? 0 : -1;
}

int sweep_run(const sweep_request *req, sweep_result *out) {
  memset(out, 0, sizeof *out);
  out->winner_index = CALHOST_SWEEP_DEFAULT_INDEX;
  if (!req || !req->vtable || !req->workload || !req->target) {
    snprintf(out->error, sizeof out->error, "invalid sweep request");
    return -1;
  }
  sweep s = {.req = req, .vt = req->vtable, .out = out, .all_device_timing = 1};
  s.max_policy = req->max_policy_length ? req->max_policy_length : CALHOST_SWEEP_MAX_POLICY;
  sweep_space sp;
  memset(&sp, 0, sizeof sp);
  int rc = -1;
  if (open_sweep(&s) != 0) {
    if (!s.session)
      return -1;
    goto done;
  }
  if (sweep_space_build(&s, &sp) != 0)
    goto done;
  sp.space.evaluate = search_evaluate;
  sp.space.user = &s;
  sp.so.observe = search_observe;
  sp.so.observe_user = &s;
  if (measure_default(&s) != 0) {
    snprintf(out->error, sizeof out->error, "out of memory");
    goto done;
  }
  if (!stopped(&s) && round_one(&s, &sp) != 0)
    goto done;
  if (ended(&s, 1) || race(&s) != 0)
    goto done;
  rc = choose_winner(&s);

done:
  record_candidates(&s, s.es, s.ne);
  free_entries(s.es, s.ne);
  sweep_space_free(&s, &sp);
  req->vtable->close_session(s.session);
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
