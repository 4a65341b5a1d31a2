/*
 * test_measure.c: one sweep (host/sweep/measure.c) against an in-test fake
 * backend whose candidates report known device times (device_seconds, so
 * no assertion depends on this machine's clock or load): the fastest
 * correct candidate wins with its exact time, wrong / invalid / oversized
 * candidates are rejected with their reasons, clear losers are pruned, the
 * search chooses the candidates (the rigor mapping, --strategy/--budget
 * overrides, every evaluation observed), the budget and cancellation stop
 * the sweep, and the default is measured. One test runs the host-timed path
 * (the fake spins), asserting only what does not depend on the clock.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sweep/measure.h"

/* ---- the fake backend --------------------------------------------------- */

static struct fake {
  uint32_t count;
  double cost_us[64]; /* per-iteration cost of each candidate */
  double default_cost_us;
  int wrong;   /* index with a wrong output, -1 none */
  int invalid; /* index whose policy the validator refuses, -1 none */
  int huge;    /* index with a 100 KB policy, -1 none */
  int with_check;
  int with_default;
  int device_timing;        /* report device_seconds = iterations * cost (default); 0: spin */
  unsigned starts;          /* candidate_start hook calls */
  int cancel_after;         /* is_cancelled returns 1 after this many starts; -1 never */
  double device_value;      /* nonzero: run() reports this device time instead (0 uses the cost) */
  int device_zero;          /* run() reports device_seconds = 0 (a timer never started) */
  const char *default_text; /* the default policy ("c=default" when NULL) */
  unsigned prepared_default_text; /* prepare() calls with default_text */
} F;

struct calhost_session {
  double cost;
  int wrong;
};

static char huge_policy[100 * 1024];

static void spin_us(double us) {
  double end = sweep_now() + us * 1e-6;
  while (sweep_now() < end)
    ;
}

static calhost_status f_open(calhost_plugin_instance *i, const calhost_workload *w,
                             const calhost_target *t, calhost_session **out) {
  (void)i, (void)w, (void)t;
  *out = calloc(1, sizeof **out);
  return *out ? CALHOST_OK : CALHOST_NO_MEMORY;
}
static void f_close(calhost_session *s) {
  free(s);
}
static calhost_status f_count(calhost_session *s, uint32_t *n) {
  (void)s;
  *n = F.count;
  return CALHOST_OK;
}
static calhost_status f_serialize(calhost_session *s, uint32_t idx, char *buf, size_t cap,
                                  size_t *len) {
  (void)s;
  char text[32];
  if ((int)idx == F.huge)
    return calhost_copy_out(huge_policy, buf, cap, len);
  snprintf(text, sizeof text, "c=%u", idx);
  return calhost_copy_out(text, buf, cap, len);
}
static calhost_status f_default(calhost_session *s, char *buf, size_t cap, size_t *len) {
  (void)s;
  return calhost_copy_out(F.default_text ? F.default_text : "c=default", buf, cap, len);
}
static calhost_status f_validate(calhost_plugin_instance *i, const char *p, size_t n, char *err,
                                 size_t cap) {
  (void)i;
  char want[32];
  snprintf(want, sizeof want, "c=%d", F.invalid);
  if (F.invalid >= 0 && n == strlen(want) && !memcmp(p, want, n)) {
    snprintf(err, cap, "candidate %d is not allowed", F.invalid);
    return CALHOST_INVALID_ARGUMENT;
  }
  return CALHOST_OK;
}
static calhost_status f_prepare(calhost_session *s, const char *p, size_t n) {
  if (F.default_text && n == strlen(F.default_text) && !memcmp(p, F.default_text, n))
    F.prepared_default_text++;
  if (n == 9 && !memcmp(p, "c=default", 9)) {
    s->cost = F.default_cost_us;
    s->wrong = 0;
    return CALHOST_OK;
  }
  unsigned idx = (unsigned)atoi(p + 2);
  s->cost = F.cost_us[idx];
  s->wrong = (int)idx == F.wrong;
  return CALHOST_OK;
}
static calhost_status f_run(calhost_session *s, uint32_t iters, calhost_run_result *r) {
  if (F.device_zero) {
    r->device_seconds = 0;
    return CALHOST_OK;
  }
  if (F.device_value != 0) {
    r->device_seconds = F.device_value;
    return CALHOST_OK;
  }
  if (F.device_timing) {
    r->device_seconds = iters * s->cost * 1e-6;
    return CALHOST_OK;
  }
  spin_us(iters * s->cost);
  return CALHOST_OK;
}
static calhost_status f_check(calhost_session *s, char *err, size_t cap) {
  if (s->wrong) {
    snprintf(err, cap, "output 3.5 differs from reference 3.0");
    return CALHOST_CHECK_FAILED;
  }
  return CALHOST_OK;
}

static calhost_plugin_vtable vt;

static void make_vtable(void) {
  memset(&vt, 0, sizeof vt);
  vt.struct_size = sizeof vt;
  vt.abi_version = 1;
  vt.backend_name = "fake";
  vt.implementation_version = "1";
  vt.open_session = f_open;
  vt.close_session = f_close;
  vt.candidate_count = f_count;
  vt.serialize_candidate = f_serialize;
  vt.default_policy = F.with_default ? f_default : NULL;
  vt.validate_policy = f_validate;
  vt.prepare = f_prepare;
  vt.run = f_run;
  vt.check = F.with_check ? f_check : NULL;
}

static void on_start(void *user, uint32_t index, uint32_t ordinal, uint32_t total,
                     const char *policy) {
  (void)user, (void)index;
  assert_non_null(policy);
  assert_true(ordinal >= 1 && ordinal <= total);
  F.starts++;
}
static int on_cancel(void *user) {
  (void)user;
  return F.cancel_after >= 0 && F.starts > (unsigned)F.cancel_after;
}

static calhost_workload W = {.name = "w", .operator_name = "Op", .dtype = "float32"};
static calhost_target T = {.processor = "cpu", .thread_count = 1};

static void setup_fake(uint32_t count) {
  memset(&F, 0, sizeof F);
  F.count = count;
  for (uint32_t i = 0; i < sizeof F.cost_us / sizeof F.cost_us[0]; i++)
    F.cost_us[i] = 40.0; /* every candidate a described space may name */
  F.default_cost_us = 30.0;
  F.wrong = F.invalid = F.huge = -1;
  F.with_check = F.with_default = 1;
  F.cancel_after = -1;
  F.device_timing = 1;
  memset(huge_policy, 'x', sizeof huge_policy - 1);
  huge_policy[sizeof huge_policy - 1] = '\0';
}

static int run_sweep(sweep_rigor rigor, double deadline, sweep_result *r) {
  make_vtable();
  sweep_request req = {.vtable = &vt, .abi_version = 1, .workload = &W, .target = &T};
  sweep_rigor_params_init(rigor, 0, &req.params);
  req.params.min_sample_seconds = 0.0002; /* keep the test fast */
  req.params.warmup_samples = 0;
  req.deadline = deadline;
  req.hooks.candidate_start = on_start;
  req.hooks.is_cancelled = on_cancel;
  return sweep_run(&req, r);
}

static int rejected_with(const sweep_result *r, uint32_t index, const char *needle) {
  for (size_t i = 0; i < r->rejection_count; i++)
    if (r->rejections[i].index == index && r->rejections[i].reason &&
        strstr(r->rejections[i].reason, needle))
      return 1;
  return 0;
}

/* ---- tests -------------------------------------------------------------- */

static void exhaustive_picks_the_fastest_correct_candidate(void **state) {
  (void)state;
  setup_fake(8);
  F.cost_us[2] = 5; /* fastest but wrong */
  F.wrong = 2;
  F.cost_us[5] = 10; /* fastest correct */
  F.invalid = 6;
  F.huge = 7;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, 0, &r), 0);
  assert_true(r.ok);
  assert_string_equal(r.winner_policy, "c=5");
  assert_int_equal(r.winner_index, 5);
  assert_int_equal(r.candidate_count, 8);
  assert_int_equal(r.tried, 8);
  assert_int_equal(r.pruned, 0);
  assert_int_equal(r.rejected, 3);
  assert_true(rejected_with(&r, 2, "wrong output"));
  assert_true(rejected_with(&r, 6, "candidate 6 is not allowed"));
  assert_true(rejected_with(&r, 7, "too large"));
  assert_int_equal(r.figures.samples, 20);
  assert_false(r.unchecked);
  assert_true(r.have_default);
  assert_string_equal(r.default_policy, "c=default");
  assert_true(r.device_timed);
  assert_float_equal(r.figures.median_us, 10.0, 1e-9);
  assert_float_equal(r.speedup, 3.0, 1e-9); /* the default costs 30 */
  assert_float_equal(r.figures.mad_us, 0.0, 1e-9);
  sweep_result_free(&r);
}

static void measure_prunes_clear_losers(void **state) {
  (void)state;
  setup_fake(10);
  F.cost_us[0] = 10;
  for (int i = 1; i < 10; i++)
    F.cost_us[i] = 80; /* 8x slower than the leader: clearly slower */
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_MEASURE, 0, &r), 0);
  assert_string_equal(r.winner_policy, "c=0");
  assert_int_equal(r.tried, 10);
  assert_true(r.pruned >= 8);
  assert_int_equal(r.rejected, 0);
  sweep_result_free(&r);
}

static int run_search(sweep_rigor rigor, search_strategy strategy, uint32_t budget,
                      sweep_hooks *hooks, sweep_result *r) {
  make_vtable();
  sweep_request req = {.vtable = &vt, .abi_version = 1, .workload = &W, .target = &T};
  sweep_rigor_params_init(rigor, 0, &req.params);
  req.params.min_sample_seconds = 0.0002;
  req.params.warmup_samples = 0;
  req.strategy = strategy;
  req.budget_evaluations = budget;
  if (hooks)
    req.hooks = *hooks;
  return sweep_run(&req, r);
}

/* Distinct candidate indices among r's candidates (the default excluded). */
static uint32_t distinct_candidates(const sweep_result *r) {
  uint32_t n = 0;
  for (size_t i = 0; i < r->candidate_entries; i++) {
    uint32_t idx = r->candidates[i].index;
    int seen = idx == CALHOST_SWEEP_DEFAULT_INDEX;
    for (size_t j = 0; j < i && !seen; j++)
      seen = r->candidates[j].index == idx;
    n += !seen;
  }
  return n;
}

static void rigor_levels_map_onto_strategies_and_budgets(void **state) {
  (void)state;
  sweep_result r;
  setup_fake(40);
  F.device_timing = 1;
  /* quick: 2% of 40, at least 8, with the default strategy for that share */
  assert_int_equal(run_search(CALHOST_RIGOR_QUICK, CALHOST_SEARCH_DEFAULT, 0, NULL, &r), 0);
  assert_int_equal(r.candidate_count, 40);
  assert_int_equal(r.planned, 8);
  assert_int_equal(r.evaluated, 8);
  assert_int_equal(r.tried, 8);
  assert_int_equal(distinct_candidates(&r), 8);
  assert_int_equal(r.strategy, CALHOST_SEARCH_MODEL);
  assert_int_equal(r.budget_evaluations, 8);
  assert_int_equal(r.search_stop, CALHOST_SEARCH_STOP_EVALUATIONS);
  assert_true(r.numbered);
  sweep_result_free(&r);
  /* measure on a numbered list (the plugin's curated list): every
   * candidate, the engine pruning the clear losers (a larger described
   * space gets 10%, at least 32:
   * measure_runs_a_described_list_whole_and_a_larger_space_by_budget) */
  assert_int_equal(run_search(CALHOST_RIGOR_MEASURE, CALHOST_SEARCH_DEFAULT, 0, NULL, &r), 0);
  assert_int_equal(r.evaluated, 40);
  assert_int_equal(r.strategy, CALHOST_SEARCH_EXHAUSTIVE);
  sweep_result_free(&r);
  /* exhaustive: every candidate */
  assert_int_equal(run_search(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 0, NULL, &r), 0);
  assert_int_equal(r.evaluated, 40);
  assert_int_equal(r.strategy, CALHOST_SEARCH_EXHAUSTIVE);
  assert_int_equal(r.search_stop, CALHOST_SEARCH_STOP_EXHAUSTED);
  sweep_result_free(&r);
  /* a space the quick budget covers is measured whole */
  setup_fake(6);
  F.device_timing = 1;
  assert_int_equal(run_search(CALHOST_RIGOR_QUICK, CALHOST_SEARCH_DEFAULT, 0, NULL, &r), 0);
  assert_int_equal(r.evaluated, 6);
  assert_int_equal(r.strategy, CALHOST_SEARCH_EXHAUSTIVE);
  sweep_result_free(&r);
}

static void strategy_and_budget_override_the_rigor(void **state) {
  (void)state;
  sweep_result r;
  setup_fake(40);
  F.device_timing = 1;
  F.cost_us[17] = 5; /* the optimum */
  assert_int_equal(run_search(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_RANDOM, 5, NULL, &r), 0);
  assert_int_equal(r.strategy, CALHOST_SEARCH_RANDOM);
  assert_int_equal(r.evaluated, 5);
  assert_int_equal(r.tried, 5);
  assert_int_equal(r.planned, 5);
  assert_int_equal(distinct_candidates(&r), 5);
  sweep_result_free(&r);
  /* a budget alone: the default strategy for that budget */
  assert_int_equal(run_search(CALHOST_RIGOR_MEASURE, CALHOST_SEARCH_DEFAULT, 6, NULL, &r), 0);
  assert_int_equal(r.strategy, CALHOST_SEARCH_MODEL);
  assert_int_equal(r.evaluated, 6);
  sweep_result_free(&r);
  /* a strategy alone: the rigor's budget */
  assert_int_equal(run_search(CALHOST_RIGOR_QUICK, CALHOST_SEARCH_LOCAL, 0, NULL, &r), 0);
  assert_int_equal(r.strategy, CALHOST_SEARCH_LOCAL);
  assert_int_equal(r.evaluated, 8);
  sweep_result_free(&r);
  /* a budget above the space: the space, once each; the optimum found */
  assert_int_equal(run_search(CALHOST_RIGOR_QUICK, CALHOST_SEARCH_GENETIC, 1000, NULL, &r), 0);
  assert_int_equal(r.evaluated, 40);
  assert_int_equal(distinct_candidates(&r), 40);
  assert_int_equal(r.winner_index, 17);
  sweep_result_free(&r);
}

static struct observed {
  unsigned starts, evaluations, rejected;
  uint32_t last_evaluation;
  int numbered;
  uint64_t size;
  char param[16];
  uint32_t values;
  double best;
  uint32_t best_index;
} O;

static void on_search_start(void *user, const sweep_search_info *info) {
  (void)user;
  O.starts++;
  O.numbered = info->numbered;
  O.size = info->space_size;
  snprintf(O.param, sizeof O.param, "%s", info->params[0].name);
  O.values = info->params[0].value_count;
  assert_int_equal(info->param_count, 1);
  assert_int_equal(info->strategy, CALHOST_SEARCH_EXHAUSTIVE);
}

static void on_evaluated(void *user, const sweep_evaluation *ev) {
  (void)user;
  O.evaluations++;
  assert_int_equal(ev->evaluation, O.last_evaluation + 1);
  O.last_evaluation = ev->evaluation;
  assert_int_equal(ev->config[0], ev->index);
  assert_true(ev->seconds >= ev->compile_seconds && ev->compile_seconds >= 0);
  if (ev->rejected) {
    O.rejected++;
    assert_non_null(ev->reason);
    assert_true(isnan(ev->median_us));
    return;
  }
  assert_non_null(ev->policy);
  assert_null(ev->reason);
  assert_true(ev->median_us > 0 && ev->spread_us >= 0 && ev->samples > 0);
  if (ev->median_us < O.best) {
    O.best = ev->median_us;
    O.best_index = ev->index;
  }
}

static void every_evaluation_is_observed(void **state) {
  (void)state;
  sweep_result r;
  sweep_hooks h = {.search_start = on_search_start, .evaluated = on_evaluated};
  memset(&O, 0, sizeof O);
  O.best = INFINITY;
  setup_fake(12);
  F.device_timing = 1;
  F.cost_us[3] = 10;
  F.wrong = 5;
  F.invalid = 8;
  assert_int_equal(run_search(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 0, &h, &r), 0);
  assert_int_equal(O.starts, 1);
  assert_true(O.numbered);
  assert_int_equal(O.size, 12);
  assert_string_equal(O.param, "index");
  assert_int_equal(O.values, 12);
  assert_int_equal(O.evaluations, 12);
  assert_int_equal(O.evaluations, r.evaluated);
  assert_int_equal(O.rejected, 2);
  assert_int_equal(O.best_index, 3);
  assert_int_equal(r.winner_index, 3);
  sweep_result_free(&r);
}

static uint32_t first_index[3];
static unsigned first_n;
static void on_first_evaluated(void *user, const sweep_evaluation *ev) {
  (void)user;
  if (first_n < 3)
    first_index[first_n++] = ev->index;
}

/* A numbered list is the plugin's curated list: quick's model search
 * begins with its first three candidates (search_space.starts_curated),
 * not two and a space-filling pick (which lands at the far end). */
static void quick_begins_with_the_first_three_of_a_numbered_list(void **state) {
  (void)state;
  sweep_result r;
  sweep_hooks h = {.evaluated = on_first_evaluated};
  first_n = 0;
  setup_fake(64);
  assert_int_equal(run_search(CALHOST_RIGOR_QUICK, CALHOST_SEARCH_DEFAULT, 0, &h, &r), 0);
  assert_int_equal(r.strategy, CALHOST_SEARCH_MODEL);
  assert_true(r.evaluated >= 4);
  assert_int_equal(first_n, 3);
  assert_int_equal(first_index[0], 0);
  assert_int_equal(first_index[1], 1);
  assert_int_equal(first_index[2], 2);
  sweep_result_free(&r);
}

static void default_wins_when_nothing_beats_it(void **state) {
  (void)state;
  setup_fake(4);
  F.default_cost_us = 5;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, 0, &r), 0);
  assert_string_equal(r.winner_policy, "c=default");
  assert_int_equal(r.winner_index, CALHOST_SWEEP_DEFAULT_INDEX);
  assert_float_equal(r.speedup, 1.0, 1e-9);
  sweep_result_free(&r);
}

static void no_check_marks_unchecked_and_no_default_means_no_speedup(void **state) {
  (void)state;
  setup_fake(3);
  F.with_check = 0;
  F.with_default = 0;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, 0, &r), 0);
  assert_true(r.unchecked);
  assert_false(r.have_default);
  assert_float_equal(r.speedup, 0.0, 0);
  sweep_result_free(&r);
}

static void exhausted_budget_stops_enumeration(void **state) {
  (void)state;
  setup_fake(6);
  sweep_result r;
  /* a deadline already past: only the default is measured */
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, sweep_now() - 1, &r), 0);
  assert_true(r.budget_exhausted);
  assert_int_equal(r.budget_after, 0);
  assert_int_equal(r.tried, 0);
  assert_string_equal(r.winner_policy, "c=default");
  sweep_result_free(&r);
}

static void exhausted_budget_without_default_is_a_failure(void **state) {
  (void)state;
  setup_fake(6);
  F.with_default = 0;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, sweep_now() - 1, &r), -1);
  assert_false(r.ok);
  assert_non_null(strstr(r.error, "budget"));
  sweep_result_free(&r);
}

static void cancellation_stops_the_sweep(void **state) {
  (void)state;
  setup_fake(6);
  F.cancel_after = 2;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, 0, &r), -1);
  assert_true(r.cancelled);
  assert_false(r.ok);
  sweep_result_free(&r);
}

static void every_candidate_is_announced_before_it_runs(void **state) {
  (void)state;
  setup_fake(5);
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, 0, &r), 0);
  assert_int_equal(F.starts, 6); /* default + 5 */
  sweep_result_free(&r);
}

/* Without device_seconds the host times the runs itself: the result says
 * so and every candidate gets a positive time (no bound on it: that would
 * be a wall-clock assertion). */
static void host_timing_is_used_without_device_seconds(void **state) {
  (void)state;
  setup_fake(3);
  F.device_timing = 0;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, 0, &r), 0);
  assert_true(r.ok);
  assert_false(r.device_timed);
  assert_int_equal(r.tried, 3);
  assert_true(r.figures.median_us > 0);
  sweep_result_free(&r);
}

static void device_timings_are_used_when_reported(void **state) {
  (void)state;
  setup_fake(3);
  F.cost_us[1] = 7;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, 0, &r), 0);
  assert_true(r.device_timed);
  assert_string_equal(r.winner_policy, "c=1");
  assert_float_equal(r.figures.median_us, 7.0, 1e-6);
  assert_float_equal(r.figures.mad_us, 0.0, 1e-9);
  assert_false(r.figures.noisy);
  sweep_result_free(&r);
}

static void all_candidates_wrong_is_a_failure_with_reasons(void **state) {
  (void)state;
  setup_fake(1);
  F.wrong = 0;
  F.with_default = 0;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_MEASURE, 0, &r), -1);
  assert_int_equal(r.rejected, 1);
  assert_non_null(strstr(r.error, "no valid candidate"));
  sweep_result_free(&r);
}

/* A default that "wins" only because every candidate was refused is not
 * stored as a calibration: the sweep fails and says why. */
static void a_default_compared_with_nothing_is_a_failure(void **state) {
  (void)state;
  setup_fake(1);
  F.invalid = 0; /* the one candidate is refused; the default runs */
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, 0, &r), -1);
  assert_int_equal(r.ok, 0);
  assert_non_null(strstr(r.error, "every candidate was rejected (1 of 1 tried)"));
  assert_non_null(strstr(r.error, "candidate 0 is not allowed"));
  assert_null(r.winner_policy);
  sweep_result_free(&r);
}

/* A numbered space too large to number fails at once and says what to do
 * (it ran out of memory, or took minutes, numbering every candidate). */
static void a_huge_numbered_space_is_refused_with_a_reason(void **state) {
  (void)state;
  setup_fake(1);
  F.count = 4000000000u;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_QUICK, 0, &r), -1);
  assert_non_null(strstr(r.error, "candidate_count 4000000000 is more than"));
  assert_non_null(strstr(r.error, "describe_space"));
  assert_int_equal(F.starts, 0); /* nothing ran */
  sweep_result_free(&r);
}

/* Policies the request says to avoid (they killed an earlier attempt's
 * process) are rejected with the given reason and never prepared. */
static void avoided_policies_are_rejected_without_running(void **state) {
  (void)state;
  setup_fake(3);
  F.cost_us[1] = 5.0; /* the fastest, but it "crashed" before */
  make_vtable();
  sweep_request req = {.vtable = &vt, .abi_version = 1, .workload = &W, .target = &T};
  sweep_rigor_params_init(CALHOST_RIGOR_EXHAUSTIVE, 0, &req.params);
  req.params.min_sample_seconds = 0.0002;
  req.params.warmup_samples = 0;
  req.hooks.candidate_start = on_start;
  const char *avoid[] = {"c=1"}, *why[] = {"killed by signal 11 (SIGSEGV) earlier"};
  req.avoid_policies = avoid;
  req.avoid_reasons = why;
  req.avoid_count = 1;
  sweep_result r;
  assert_int_equal(sweep_run(&req, &r), 0);
  assert_string_not_equal(r.winner_policy, "c=1");
  assert_true(rejected_with(&r, 1, "SIGSEGV"));
  assert_int_equal(F.starts, 3); /* the default, c=0 and c=2: c=1 never announced */
  sweep_result_free(&r);
}

/* ---- a described parameter space (ABI 2) -------------------------------- */

/* a: ordered 1,2,4,8 (or the first g_a_count of 1..16 as powers and
 * steps); b: categories x,y,z; (a=8, b=z) is invalid. The assignment (i, j)
 * is the fake's candidate c=3i+j, so prepare, run and the costs work as for
 * numbered candidates. */
static const char *const A_VALUES[] = {"1",  "2",  "4",  "8",  "10", "12", "14", "16",
                                       "18", "20", "22", "24", "26", "28", "30", "32"},
                         *const B_VALUES[] = {"x", "y", "z"};
static calhost_parameter PARAMS[] = {{"a", A_VALUES, 4, CALHOST_PARAMETER_ORDERED},
                                     {"b", B_VALUES, 3, 0}};
static const uint32_t DEFAULT_ASSIGNMENT[] = {0, 0};
static unsigned g_invalid_serialized;
static uint32_t g_a_count = 4; /* the values of a in the space: 4, or up to 16 */

static int a_valid(const uint32_t *a, size_t n) {
  return n == 2 && a[0] < g_a_count && a[1] < 3 && !(a[0] == 3 && a[1] == 2);
}
static calhost_status f_describe(calhost_session *s, calhost_parameter_space *out) {
  (void)s;
  PARAMS[0].value_count = g_a_count;
  out->parameters = PARAMS;
  out->parameter_count = 2;
  out->default_assignment = DEFAULT_ASSIGNMENT;
  return CALHOST_OK;
}
static calhost_status f_valid(calhost_session *s, const uint32_t *a, size_t n, char *err,
                              size_t cap) {
  (void)s;
  if (a_valid(a, n))
    return CALHOST_OK;
  snprintf(err, cap, "a=8 with b=z");
  return CALHOST_INVALID_ARGUMENT;
}
static calhost_status f_serialize_a(calhost_session *s, const uint32_t *a, size_t n, char *buf,
                                    size_t cap, size_t *len) {
  (void)s;
  char text[32];
  if (!a_valid(a, n)) {
    g_invalid_serialized++;
    return CALHOST_INVALID_ARGUMENT;
  }
  snprintf(text, sizeof text, "c=%u", a[0] * 3 + a[1]);
  return calhost_copy_out(text, buf, cap, len);
}
static calhost_status f_policy_a(calhost_session *s, const char *p, size_t len, uint32_t *a,
                                 size_t n) {
  (void)s;
  if (n != 2 || len < 3 || strncmp(p, "c=", 2))
    return CALHOST_INVALID_ARGUMENT;
  unsigned c = (unsigned)atoi(p + 2);
  a[0] = c / 3;
  a[1] = c % 3;
  return CALHOST_OK;
}

/* A sweep of the fake with a described space (ABI 2): these space functions
 * (policy_assignment may be NULL), this rigor, strategy and budget. */
static int
run_space(calhost_status (*describe)(calhost_session *, calhost_parameter_space *),
          calhost_status (*valid)(calhost_session *, const uint32_t *, size_t, char *, size_t),
          calhost_status (*serialize)(calhost_session *, const uint32_t *, size_t, char *, size_t,
                                      size_t *),
          calhost_status (*policy)(calhost_session *, const char *, size_t, uint32_t *, size_t),
          sweep_rigor rigor, search_strategy strategy, uint32_t budget, sweep_result *r) {
  make_vtable();
  vt.abi_version = 2;
  vt.describe_space = describe;
  vt.assignment_valid = valid;
  vt.serialize_assignment = serialize;
  vt.policy_assignment = policy;
  sweep_request req = {.vtable = &vt, .abi_version = 2, .workload = &W, .target = &T};
  sweep_rigor_params_init(rigor, 0, &req.params);
  req.params.min_sample_seconds = 0.0002;
  req.params.warmup_samples = 0;
  req.strategy = strategy;
  req.budget_evaluations = budget;
  return sweep_run(&req, r);
}

static int run_named(sweep_rigor rigor, search_strategy strategy, uint32_t budget,
                     sweep_result *r) {
  return run_space(f_describe, f_valid, f_serialize_a, f_policy_a, rigor, strategy, budget, r);
}

/* A described space too large to count (40^4 configurations): measure
 * searches it within the minimum budget, never every configuration. */
static const char *const W40[] = {"0",  "1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",  "9",
                                  "10", "11", "12", "13", "14", "15", "16", "17", "18", "19",
                                  "20", "21", "22", "23", "24", "25", "26", "27", "28", "29",
                                  "30", "31", "32", "33", "34", "35", "36", "37", "38", "39"};
static calhost_parameter HUGE[] = {{"p", W40, 40, CALHOST_PARAMETER_ORDERED},
                                   {"q", W40, 40, CALHOST_PARAMETER_ORDERED},
                                   {"r", W40, 40, CALHOST_PARAMETER_ORDERED},
                                   {"s", W40, 40, CALHOST_PARAMETER_ORDERED}};
static const uint32_t HUGE_DEFAULT[] = {0, 0, 0, 0};
static calhost_status f_describe_huge(calhost_session *s, calhost_parameter_space *out) {
  (void)s;
  out->parameters = HUGE;
  out->parameter_count = 4;
  out->default_assignment = HUGE_DEFAULT;
  return CALHOST_OK;
}
static calhost_status f_valid_huge(calhost_session *s, const uint32_t *a, size_t n, char *err,
                                   size_t cap) {
  (void)s;
  (void)a;
  (void)err;
  (void)cap;
  return n == 4 ? CALHOST_OK : CALHOST_INVALID_ARGUMENT;
}
static calhost_status f_serialize_huge(calhost_session *s, const uint32_t *a, size_t n, char *buf,
                                       size_t cap, size_t *len) {
  (void)s;
  char text[32];
  snprintf(text, sizeof text, "c=%u", n == 4 ? (a[0] + a[1] + a[2] + a[3]) % 12 : 0);
  return calhost_copy_out(text, buf, cap, len);
}

static void a_space_too_large_to_count_gets_the_minimum_budget(void **state) {
  (void)state;
  setup_fake(12);
  sweep_result r;
  assert_int_equal(run_space(f_describe_huge, f_valid_huge, f_serialize_huge, NULL,
                             CALHOST_RIGOR_MEASURE, CALHOST_SEARCH_DEFAULT, 0, &r),
                   0);
  assert_false(r.numbered);
  assert_true(r.space_size == 0); /* too many to count */
  assert_int_equal(r.budget_evaluations, 32);
  assert_true(r.evaluated <= 32);
  assert_int_not_equal(r.strategy, CALHOST_SEARCH_EXHAUSTIVE);
  sweep_result_free(&r);
}

static void described_parameters_are_searched_by_name(void **state) {
  (void)state;
  sweep_result r;
  setup_fake(4); /* 4 numbered candidates: c=0..3, the plausible order */
  F.device_timing = 1;
  for (int i = 0; i < 12; i++)
    F.cost_us[i] = 40;
  F.cost_us[7] = 5;  /* (a=4, b=y): the optimum */
  F.cost_us[11] = 1; /* (a=8, b=z): faster still, but invalid: never run */
  g_invalid_serialized = 0;
  assert_int_equal(run_named(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 0, &r), 0);
  assert_false(r.numbered);
  assert_int_equal(r.space_size, 11);
  assert_int_equal(r.evaluated, 11);
  assert_int_equal(distinct_candidates(&r), 11);
  assert_int_equal(g_invalid_serialized, 0);
  assert_string_equal(r.winner_policy, "c=7");
  for (size_t i = 0; i < r.candidate_entries; i++)
    assert_string_not_equal(r.candidates[i].policy, "c=11");
  sweep_result_free(&r);
  /* the plausible order: the default's assignment, then the numbered
   * candidates through policy_assignment */
  assert_int_equal(run_named(CALHOST_RIGOR_QUICK, CALHOST_SEARCH_EXHAUSTIVE, 4, &r), 0);
  assert_int_equal(r.evaluated, 4);
  static const char *const order[] = {"c=0", "c=1", "c=2", "c=3"};
  size_t k = 0;
  for (size_t i = 0; i < r.candidate_entries; i++)
    if (r.candidates[i].index != CALHOST_SWEEP_DEFAULT_INDEX)
      assert_string_equal(r.candidates[i].policy, order[k++]);
  assert_int_equal(k, 4);
  sweep_result_free(&r);
  /* a budget: every strategy stays within it, valid and distinct */
  for (int st = CALHOST_SEARCH_RANDOM; st < CALHOST_SEARCH_STRATEGY_COUNT; st++) {
    assert_int_equal(run_named(CALHOST_RIGOR_QUICK, (search_strategy)st, 6, &r), 0);
    assert_int_equal(r.evaluated, 6);
    assert_int_equal(distinct_candidates(&r), 6);
    assert_int_equal(g_invalid_serialized, 0);
    sweep_result_free(&r);
  }
}

/* One rule of a usable description (sweep_space_defect), used by the sweep
 * and by `plugin check`: each defect is named, and a sweep given a
 * defective description runs the numbered candidates instead. */
static void a_defective_description_is_named_and_the_sweep_runs_numbered(void **state) {
  (void)state;
  char why[256];
  static const char *const ok_values[] = {"1", "2"}, *const spaced[] = {"1", "a b"},
                           *const twice[] = {"1", "1"}, *const empty[] = {"1", ""};
  calhost_parameter p[2] = {{"a", ok_values, 2, 0}, {"b", ok_values, 2, 0}};
  calhost_parameter_space ps = {.parameters = p, .parameter_count = 2};
  assert_int_equal(sweep_space_defect(&ps, why, sizeof why), 0);
  p[1].name = "a";
  assert_int_equal(sweep_space_defect(&ps, why, sizeof why), -1);
  assert_non_null(strstr(why, "'a' appears twice"));
  p[1].name = "b-c";
  assert_int_equal(sweep_space_defect(&ps, why, sizeof why), -1);
  assert_non_null(strstr(why, "[A-Za-z0-9_]+"));
  p[1].name = "b";
  const char *const *bad[] = {spaced, twice, empty};
  const char *said[] = {"not a printable word", "appears twice", "not a printable word"};
  for (int i = 0; i < 3; i++) {
    p[1].values = bad[i];
    assert_int_equal(sweep_space_defect(&ps, why, sizeof why), -1);
    assert_non_null(strstr(why, said[i]));
  }
  p[1].values = ok_values;
  p[1].value_count = 0;
  assert_int_equal(sweep_space_defect(&ps, why, sizeof why), -1);
  assert_non_null(strstr(why, "has no values"));
  ps.parameter_count = 0;
  assert_int_equal(sweep_space_defect(&ps, NULL, 0), -1);

  /* the fake's description with a duplicated value: numbered candidates */
  sweep_result r;
  setup_fake(4);
  static const char *const dup_b[] = {"x", "y", "x"};
  PARAMS[1].values = dup_b;
  assert_int_equal(run_named(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 0, &r), 0);
  PARAMS[1].values = B_VALUES;
  assert_true(r.numbered);
  assert_int_equal(r.evaluated, 4);
  sweep_result_free(&r);
}

/* measure runs a described space no larger than the numbered list whole
 * (it is the plugin's curated list, described: cpu_gemm's), and a larger
 * one by its budget: 10%, at least 32. */
static void measure_runs_a_described_list_whole_and_a_larger_space_by_budget(void **state) {
  (void)state;
  sweep_result r;
  g_a_count = 16; /* 16 x 3 - 1 = 47 valid points */
  setup_fake(48);
  for (int i = 0; i < 48; i++)
    F.cost_us[i] = 40;
  assert_int_equal(run_named(CALHOST_RIGOR_MEASURE, CALHOST_SEARCH_DEFAULT, 0, &r), 0);
  assert_false(r.numbered);
  assert_int_equal(r.space_size, 47);
  assert_int_equal(r.strategy, CALHOST_SEARCH_EXHAUSTIVE);
  assert_int_equal(r.evaluated, 47);
  sweep_result_free(&r);
  setup_fake(8); /* a curated list of 8, a space of 47 */
  for (int i = 0; i < 48; i++)
    F.cost_us[i] = 40;
  assert_int_equal(run_named(CALHOST_RIGOR_MEASURE, CALHOST_SEARCH_DEFAULT, 0, &r), 0);
  assert_int_equal(r.space_size, 47);
  assert_int_equal(r.strategy, CALHOST_SEARCH_MODEL);
  assert_int_equal(r.budget_evaluations, 32);
  assert_int_equal(r.evaluated, 32);
  assert_int_equal(distinct_candidates(&r), 32);
  sweep_result_free(&r);
  g_a_count = 4;
}

/* A device time of 0 (a plugin that forgot CL_QUEUE_PROFILING_ENABLE) or
 * not finite is refused at once: the sweep stops after the first run and
 * says what to fix, instead of growing the iterations until a timeout. */
static void a_zero_or_non_finite_device_time_stops_the_sweep_at_once(void **state) {
  (void)state;
  const double bad[] = {0, NAN, INFINITY};
  for (int i = 0; i < 3; i++) {
    setup_fake(6);
    if (i == 0)
      F.device_zero = 1;
    else
      F.device_value = bad[i];
    sweep_result r;
    assert_int_equal(run_sweep(CALHOST_RIGOR_QUICK, 0, &r), -1);
    assert_false(r.ok);
    assert_int_equal(F.starts, 1); /* the default only: nothing after it ran */
    assert_non_null(strstr(r.error, i == 0 ? "device time of 0 s" : i == 1 ? "NaN" : "infinity"));
    assert_non_null(strstr(r.error, "CL_QUEUE_PROFILING_ENABLE"));
    assert_non_null(strstr(r.error, "leave it negative"));
    assert_true(rejected_with(&r, CALHOST_SWEEP_DEFAULT_INDEX, "no measurement"));
    sweep_result_free(&r);
  }
  /* without a default the first candidate is refused the same way */
  setup_fake(6);
  F.device_zero = 1;
  F.with_default = 0;
  sweep_result r;
  assert_int_equal(run_sweep(CALHOST_RIGOR_EXHAUSTIVE, 0, &r), -1);
  assert_int_equal(F.starts, 1);
  assert_non_null(strstr(r.error, "device time of 0 s"));
  sweep_result_free(&r);
}

/* On a described space whose default assignment serializes to the default
 * policy, the default is measured once (as the default): it is not the
 * search's first candidate, spends none of its budget, and is listed and
 * rejected once. */
static void the_default_is_measured_once_on_a_described_space(void **state) {
  (void)state;
  for (int wrong = 0; wrong < 2; wrong++) {
    setup_fake(4);
    F.default_text = "c=0"; /* the default assignment (0, 0) */
    if (wrong)
      F.wrong = 0;
    sweep_result r;
    assert_int_equal(run_named(CALHOST_RIGOR_QUICK, CALHOST_SEARCH_EXHAUSTIVE, 4, &r), 0);
    assert_int_equal(F.prepared_default_text, 1);
    assert_int_equal(r.evaluated, 4); /* four candidates besides the default */
    size_t listed = 0, rejections = 0;
    for (size_t i = 0; i < r.candidate_entries; i++)
      listed += r.candidates[i].policy && !strcmp(r.candidates[i].policy, "c=0");
    for (size_t i = 0; i < r.rejection_count; i++)
      rejections += r.rejections[i].policy && !strcmp(r.rejections[i].policy, "c=0");
    assert_int_equal(listed, 1);
    assert_int_equal(rejections, (size_t)wrong);
    sweep_result_free(&r);
  }
  /* the search proposing the default's point anyway (exhaustive: the whole
   * space) gets the default's figures without running it again */
  setup_fake(4);
  F.default_text = "c=0";
  sweep_result r;
  assert_int_equal(run_named(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 0, &r), 0);
  assert_int_equal(F.prepared_default_text, 1);
  size_t listed = 0;
  for (size_t i = 0; i < r.candidate_entries; i++)
    listed += r.candidates[i].policy && !strcmp(r.candidates[i].policy, "c=0");
  assert_int_equal(listed, 1);
  sweep_result_free(&r);
}

static const uint32_t INVALID_DEFAULT[] = {3, 2}; /* a=8, b=z: refused by f_valid */
static calhost_status f_describe_bad_default(calhost_session *s, calhost_parameter_space *out) {
  calhost_status st = f_describe(s, out);
  out->default_assignment = INVALID_DEFAULT;
  return st;
}

/* What the sweep notices about the plugin without failing is a warning in
 * the result: a description it cannot use (named, with the fallback), a
 * default assignment the plugin's own validity rule refuses. */
static void an_unusable_space_and_an_invalid_default_are_warnings(void **state) {
  (void)state;
  sweep_result r;
  setup_fake(4);
  static const char *const dup_b[] = {"x", "y", "x"};
  PARAMS[1].values = dup_b;
  assert_int_equal(run_named(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 0, &r), 0);
  PARAMS[1].values = B_VALUES;
  assert_true(r.numbered);
  assert_non_null(r.warning);
  assert_non_null(strstr(r.warning, "'b': value 'x' appears twice"));
  assert_non_null(strstr(r.warning, "the 4 numbered candidates were searched instead"));
  sweep_result_free(&r);

  setup_fake(4);
  assert_int_equal(run_space(f_describe_bad_default, f_valid, f_serialize_a, f_policy_a,
                             CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 0, &r),
                   0);
  assert_false(r.numbered);
  assert_non_null(r.warning);
  assert_non_null(strstr(r.warning, "refused by its own assignment_valid (a=8 with b=z)"));
  sweep_result_free(&r);

  setup_fake(4); /* a good description: no warning */
  assert_int_equal(run_named(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 0, &r), 0);
  assert_null(r.warning);
  sweep_result_free(&r);
}

/* --rigor exhaustive with --budget N runs the exhaustive strategy on the
 * first N candidates in the plugin's order (it ran `model` before). */
static void exhaustive_with_a_budget_runs_the_first_n_in_order(void **state) {
  (void)state;
  sweep_result r;
  setup_fake(40);
  assert_int_equal(run_search(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 10, NULL, &r), 0);
  assert_int_equal(r.strategy, CALHOST_SEARCH_EXHAUSTIVE);
  assert_int_equal(r.evaluated, 10);
  uint32_t k = 0;
  for (size_t i = 0; i < r.candidate_entries; i++)
    if (r.candidates[i].index != CALHOST_SWEEP_DEFAULT_INDEX)
      assert_int_equal(r.candidates[i].index, k++);
  assert_int_equal(k, 10);
  sweep_result_free(&r);
  setup_fake(12); /* named: the same */
  assert_int_equal(run_named(CALHOST_RIGOR_EXHAUSTIVE, CALHOST_SEARCH_DEFAULT, 5, &r), 0);
  assert_int_equal(r.strategy, CALHOST_SEARCH_EXHAUSTIVE);
  assert_int_equal(r.evaluated, 5);
  sweep_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(exhaustive_picks_the_fastest_correct_candidate),
      cmocka_unit_test(measure_prunes_clear_losers),
      cmocka_unit_test(rigor_levels_map_onto_strategies_and_budgets),
      cmocka_unit_test(strategy_and_budget_override_the_rigor),
      cmocka_unit_test(every_evaluation_is_observed),
      cmocka_unit_test(quick_begins_with_the_first_three_of_a_numbered_list),
      cmocka_unit_test(described_parameters_are_searched_by_name),
      cmocka_unit_test(a_defective_description_is_named_and_the_sweep_runs_numbered),
      cmocka_unit_test(measure_runs_a_described_list_whole_and_a_larger_space_by_budget),
      cmocka_unit_test(default_wins_when_nothing_beats_it),
      cmocka_unit_test(no_check_marks_unchecked_and_no_default_means_no_speedup),
      cmocka_unit_test(exhausted_budget_stops_enumeration),
      cmocka_unit_test(exhausted_budget_without_default_is_a_failure),
      cmocka_unit_test(cancellation_stops_the_sweep),
      cmocka_unit_test(every_candidate_is_announced_before_it_runs),
      cmocka_unit_test(device_timings_are_used_when_reported),
      cmocka_unit_test(host_timing_is_used_without_device_seconds),
      cmocka_unit_test(all_candidates_wrong_is_a_failure_with_reasons),
      cmocka_unit_test(a_default_compared_with_nothing_is_a_failure),
      cmocka_unit_test(avoided_policies_are_rejected_without_running),
      cmocka_unit_test(a_huge_numbered_space_is_refused_with_a_reason),
      cmocka_unit_test(a_space_too_large_to_count_gets_the_minimum_budget),
      cmocka_unit_test(a_zero_or_non_finite_device_time_stops_the_sweep_at_once),
      cmocka_unit_test(the_default_is_measured_once_on_a_described_space),
      cmocka_unit_test(an_unusable_space_and_an_invalid_default_are_warnings),
      cmocka_unit_test(exhaustive_with_a_budget_runs_the_first_n_in_order),
  };
  return cmocka_run_group_tests_name("sweep measurement", tests, NULL, NULL);
}
