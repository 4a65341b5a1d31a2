/*
 * test_race_runner.c: the race runner (host/sweep/race.c) against an
 * in-test fake backend: the entrants of one instance share one session
 * (opened once), each entrant is prepared again before its samples, the
 * rounds interleave and rotate (A B C, B C A, ...), a default that is the
 * winner is timed once, an entrant the backend refuses or gets wrong fails
 * alone. Nothing here depends on the clock.
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

#include "sweep/race.h"

struct calhost_plugin_instance {
  int id;
};
struct calhost_session {
  calhost_plugin_instance *inst;
  int work;
  int cyc[3]; /* "work=N;cyc=A,B,C": the session's runs take A, B, C, A, ... units */
  unsigned runs;
  int wrong;
  double out;
};

static int g_opens, g_closes, g_checks;
static char g_log[4096]; /* "I:work " per timed-size run (iterations > 0) */

static calhost_status f_open(calhost_plugin_instance *i, const calhost_workload *w,
                             const calhost_target *t, calhost_session **out) {
  (void)w, (void)t;
  *out = calloc(1, sizeof **out);
  (*out)->inst = i;
  g_opens++;
  return CALHOST_OK;
}
static void f_close(calhost_session *s) {
  g_closes++;
  free(s);
}
static calhost_status f_validate(calhost_plugin_instance *i, const char *p, size_t n, char *err,
                                 size_t cap) {
  (void)i;
  if (n > 5 && !strncmp(p, "work=", 5) && atoi(p + 5) > 0)
    return CALHOST_OK;
  snprintf(err, cap, "not work=N");
  return CALHOST_INVALID_ARGUMENT;
}
static calhost_status f_prepare(calhost_session *s, const char *p, size_t n) {
  (void)n;
  s->work = atoi(p + 5);
  s->wrong = strstr(p, "wrong") != NULL;
  const char *cyc = strstr(p, ";cyc=");
  memset(s->cyc, 0, sizeof s->cyc);
  if (cyc)
    sscanf(cyc + 5, "%d,%d,%d", &s->cyc[0], &s->cyc[1], &s->cyc[2]);
  return CALHOST_OK;
}
static int g_device_time; /* f_run reports work x 1 ms per iteration as the device's time (1:
                            every instance, 2: inst_a only) */

static calhost_status f_run(calhost_session *s, uint32_t iters, calhost_run_result *r) {
  int units = s->cyc[0] ? s->cyc[s->runs++ % 3] : s->work;
  if (g_device_time == 1 || (g_device_time == 2 && s->inst->id == 1)) /* 2: inst_a only */
    r->device_seconds = 1e-3 * units * iters;
  volatile double acc = 0;
  for (uint32_t it = 0; it < iters; it++)
    for (int k = 0; k < s->work * 200; k++)
      acc = acc + 1;
  s->out = s->wrong ? -1 : (double)s->work;
  size_t n = strlen(g_log);
  snprintf(g_log + n, sizeof g_log - n, "%d:%d ", s->inst->id, s->work);
  return CALHOST_OK;
}
static calhost_status f_check(calhost_session *s, char *err, size_t cap) {
  g_checks++;
  if (s->out == (double)s->work)
    return CALHOST_OK;
  snprintf(err, cap, "differs");
  return CALHOST_CHECK_FAILED;
}
static int g_default_work; /* the fake's default policy: work=N (2 unless a test sets it) */

static calhost_status f_default(calhost_session *s, char *buf, size_t cap, size_t *len) {
  (void)s;
  char text[32];
  snprintf(text, sizeof text, "work=%d", g_default_work);
  return calhost_copy_out(text, buf, cap, len);
}

static calhost_plugin_vtable vt;
static calhost_plugin_instance inst_a = {1}, inst_b = {2};
static calhost_workload wl;
static calhost_target tg;

static void setup_vt(void) {
  memset(&vt, 0, sizeof vt);
  vt.struct_size = sizeof vt;
  vt.abi_version = CALHOST_ABI_VERSION;
  vt.validate_policy = f_validate;
  vt.open_session = f_open;
  vt.close_session = f_close;
  vt.prepare = f_prepare;
  vt.run = f_run;
  vt.check = f_check;
  vt.default_policy = f_default;
  g_opens = g_closes = g_checks = 0;
  g_device_time = 0;
  g_default_work = 2;
  g_log[0] = '\0';
}

static sweep_race_entrant entrant(calhost_plugin_instance *i, const char *policy) {
  return (sweep_race_entrant){.vtable = &vt,
                              .abi_version = CALHOST_ABI_VERSION,
                              .instance = i,
                              .workload = &wl,
                              .target = &tg,
                              .policy = policy};
}

static sweep_rigor_params params(void) {
  sweep_rigor_params p;
  sweep_rigor_params_init(CALHOST_RIGOR_QUICK, 4, &p);
  p.min_sample_seconds = 0; /* one iteration per sample: the log stays short */
  p.warmup_samples = 0;
  p.prune = 0; /* the clock decides pruning: only where the fake reports device time */
  return p;
}

static void shares_sessions_and_interleaves(void **state) {
  (void)state;
  setup_vt();
  sweep_race_entrant e[4] = {entrant(&inst_a, "work=1"), entrant(&inst_a, NULL),
                             entrant(&inst_b, "work=4"), entrant(&inst_b, NULL)};
  sweep_rigor_params p = params();
  assert_int_equal(sweep_race_run(e, 4, &p, 0, NULL, NULL), 4);
  assert_int_equal(g_opens, 2); /* one session per instance */
  assert_int_equal(g_closes, 2);
  for (int i = 0; i < 4; i++) {
    assert_true(e[i].ok);
    assert_int_equal(e[i].figures.samples, 4);
    assert_true(e[i].figures.median_us > 0);
  }
  /* after the four ready runs, the rounds: A1 A2 B4 B2, then rotated */
  const char *rounds = strstr(g_log, "1:1 1:2 2:4 2:2 ");
  assert_non_null(rounds);
  rounds += strlen("1:1 1:2 2:4 2:2 ");
  assert_string_equal(rounds, "1:1 1:2 2:4 2:2 "
                              "1:2 2:4 2:2 1:1 "
                              "2:4 2:2 1:1 1:2 "
                              "2:2 1:1 1:2 2:4 ");
}

static void a_default_that_is_the_winner_is_timed_once(void **state) {
  (void)state;
  setup_vt();
  sweep_race_entrant e[2] = {entrant(&inst_a, "work=2"), entrant(&inst_a, NULL)};
  sweep_rigor_params p = params();
  assert_int_equal(sweep_race_run(e, 2, &p, 0, NULL, NULL), 2);
  assert_true(e[1].ok);
  assert_true(e[1].figures.median_us == e[0].figures.median_us);
  assert_string_equal(g_log, "1:2 1:2 1:2 1:2 1:2 "); /* ready, then four samples */
}

static void a_refused_or_wrong_entrant_fails_alone(void **state) {
  (void)state;
  setup_vt();
  sweep_race_entrant e[3] = {entrant(&inst_a, "bogus"), entrant(&inst_a, "work=3;wrong"),
                             entrant(&inst_b, "work=1")};
  sweep_rigor_params p = params();
  assert_int_equal(sweep_race_run(e, 3, &p, 0, NULL, NULL), 1);
  assert_false(e[0].ok);
  assert_non_null(strstr(e[0].error, "refused: not work=N"));
  assert_false(e[1].ok);
  assert_non_null(strstr(e[1].error, "wrong output: differs"));
  assert_true(e[2].ok);
  assert_true(isnan(e[0].figures.median_us));
  assert_int_equal(g_opens, g_closes);
}

/* What this run's sweep checked is not checked again (the reference of a
 * MatMul backend is then never computed); the rest is checked once per
 * entrant, before its samples. */
static void a_swept_entrant_is_not_checked_again(void **state) {
  (void)state;
  setup_vt();
  sweep_race_entrant e[4] = {entrant(&inst_a, "work=1"), entrant(&inst_a, NULL),
                             entrant(&inst_b, "work=3;wrong"), entrant(&inst_b, "work=4;wrong")};
  e[0].checked = e[2].checked = 1;
  sweep_rigor_params p = params();
  assert_int_equal(sweep_race_run(e, 4, &p, 0, NULL, NULL), 3);
  assert_int_equal(g_checks, 2); /* the default and work=4, once each */
  assert_true(e[0].ok && e[1].ok && e[2].ok);
  assert_false(e[3].ok);
  assert_non_null(strstr(e[3].error, "wrong output"));
}

/* The run that sizes an entrant's sample is its first warm-up sample: a
 * rigor of one warm-up sample adds no warm-up round. */
static void the_sizing_run_is_the_first_warmup(void **state) {
  (void)state;
  setup_vt();
  sweep_race_entrant e[2] = {entrant(&inst_a, "work=1"), entrant(&inst_b, "work=2")};
  sweep_rigor_params p = params();
  p.warmup_samples = 1;
  assert_int_equal(sweep_race_run(e, 2, &p, 0, NULL, NULL), 2);
  assert_int_equal(e[0].figures.samples, 4);
  assert_string_equal(g_log, "1:1 2:2 "
                             "1:1 2:2 2:2 1:1 1:1 2:2 2:2 1:1 ");
  setup_vt();
  p.warmup_samples = 2; /* one warm-up round */
  assert_int_equal(sweep_race_run(e, 2, &p, 0, NULL, NULL), 2);
  assert_int_equal(e[1].figures.samples, 4);
  assert_string_equal(g_log, "1:1 2:2 "
                             "1:1 2:2 2:2 1:1 1:1 2:2 2:2 1:1 1:1 2:2 ");
}

/* The rigor's pruning applies as in the sweep: after prune_after samples,
 * a prunable entrant (a default) clearly slower than the leader takes no
 * more; its figures are those samples'. An entrant that decides the race
 * takes every sample. (Device time: the fake's figures are exact.) */
static void a_clearly_slower_entrant_is_pruned(void **state) {
  (void)state;
  setup_vt();
  g_device_time = 1;
  sweep_race_entrant e[4] = {entrant(&inst_a, "work=2"), entrant(&inst_a, "work=9"),
                             entrant(&inst_b, "work=1"), entrant(&inst_b, "work=7")};
  e[0].prunable = e[1].prunable = e[2].prunable = 1;
  sweep_rigor_params p = params();
  p.prune = 1;
  p.prune_after = 2;
  p.prune_margin = 0.25;
  assert_int_equal(sweep_race_run(e, 4, &p, 0, NULL, NULL), 4);
  assert_int_equal(e[2].figures.samples, 4); /* the leader */
  assert_int_equal(e[3].figures.samples, 4); /* not prunable */
  assert_int_equal(e[0].figures.samples, 2); /* 2 ms > 1 ms x 1.25 */
  assert_int_equal(e[1].figures.samples, 2);
  assert_true(fabs(e[0].figures.median_us - 2000.0) < 1e-6);
  assert_true(fabs(e[1].figures.median_us - 9000.0) < 1e-6);
  assert_true(fabs(e[2].figures.median_us - 1000.0) < 1e-6);
  /* within the margin: never pruned */
  setup_vt();
  g_device_time = 1;
  sweep_race_entrant f[2] = {entrant(&inst_a, "work=5"), entrant(&inst_b, "work=4")};
  f[0].prunable = f[1].prunable = 1;
  assert_int_equal(sweep_race_run(f, 2, &p, 0, NULL, NULL), 2);
  assert_int_equal(f[0].figures.samples, 4);
  assert_int_equal(f[1].figures.samples, 4);
}

/* The racing rule (race.h): a default clearly behind is dropped after its
 * first round, a contender clearly behind the leading one after
 * SWEEP_RACE_MIN_ROUNDS, and then the race is decided: the leader stops
 * too (the uniform race took 4 samples of each). Device time: exact. */
static void racing_drops_the_clearly_behind_and_stops_when_decided(void **state) {
  (void)state;
  setup_vt();
  g_device_time = 1;
  sweep_race_entrant e[4] = {entrant(&inst_a, "work=1"), entrant(&inst_a, NULL),
                             entrant(&inst_b, "work=2"), entrant(&inst_b, NULL)};
  e[1].prunable = e[3].prunable = 1; /* the defaults (work=2; inst_b's is its winner) */
  sweep_rigor_params p = params();
  p.prune = 1;
  assert_int_equal(sweep_race_run(e, 4, &p, 1, NULL, NULL), 4);
  assert_int_equal(e[0].rounds, SWEEP_RACE_MIN_ROUNDS); /* the leader: decided */
  assert_false(e[0].dropped);
  assert_int_equal(e[1].rounds, 1); /* 2 ms > 1 ms x 1.25 after one round */
  assert_true(e[1].dropped);
  assert_int_equal(e[2].rounds, SWEEP_RACE_MIN_ROUNDS); /* 2 ms > 1 ms x 1.05 */
  assert_true(e[2].dropped);
  assert_int_equal(e[3].rounds, e[2].rounds); /* its winner's twin */
  assert_int_equal(e[0].figures.samples, SWEEP_RACE_MIN_ROUNDS);
  assert_true(fabs(e[2].figures.median_us - 2000.0) < 1e-6);
  for (int i = 0; i < 4; i++)
    assert_int_equal(e[i].tied, 0);
  /* without racing (model bench), the same entrants take every round */
  setup_vt();
  g_device_time = 1;
  p.prune = 0;
  assert_int_equal(sweep_race_run(e, 4, &p, 1, NULL, NULL), 4);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(e[i].rounds, 4);
    assert_false(e[i].dropped);
  }
}

/* Contenders level within the noise are a tie after the planned rounds
 * (more rounds would not separate what the noise bound calls level); the
 * defaults clearly behind are dropped after one round. */
static void racing_calls_a_tie_of_level_contenders(void **state) {
  (void)state;
  setup_vt();
  g_device_time = 1;
  g_default_work = 9;
  sweep_race_entrant e[4] = {entrant(&inst_a, "work=3"), entrant(&inst_a, NULL),
                             entrant(&inst_b, "work=3"), entrant(&inst_b, NULL)};
  e[1].prunable = e[3].prunable = 1;
  sweep_rigor_params p = params();
  p.prune = 1;
  assert_int_equal(sweep_race_run(e, 4, &p, 1, NULL, NULL), 4);
  assert_int_equal(e[1].rounds, 1);
  assert_int_equal(e[3].rounds, 1);
  assert_true(e[1].dropped && e[3].dropped);
  assert_int_equal(e[0].rounds, 4);
  assert_int_equal(e[2].rounds, 4);
  assert_false(e[0].dropped || e[2].dropped);
  assert_int_equal(e[0].tied, 2);
  assert_int_equal(e[2].tied, 2);
  assert_int_equal(e[1].tied, 0); /* a default is never in a tie */
}

/* An undecided contender, neither clearly behind nor level (samples 120
 * 100 106 120 ... ms against the leader's 100: its median above 105, its
 * lower quartile not), takes the rounds the dropped defaults saved, with
 * the leader (budget 4 rounds x 4 entrants = 16 samples: 2 by the
 * defaults, 2 x 7 by the leader and it); never past the cap. */
static void racing_gives_an_undecided_contender_the_saved_rounds(void **state) {
  (void)state;
  setup_vt();
  g_device_time = 1;
  g_default_work = 600;
  /* the sizing run takes the cycle's first value: the samples start at 120 */
  const char *undecided = "work=100;cyc=106,120,100";
  sweep_race_entrant e[4] = {entrant(&inst_a, "work=100"), entrant(&inst_a, NULL),
                             entrant(&inst_b, undecided), entrant(&inst_b, NULL)};
  e[1].prunable = e[3].prunable = 1;
  sweep_rigor_params p = params();
  p.prune = 1;
  assert_int_equal(sweep_race_run(e, 4, &p, 1, NULL, NULL), 4);
  assert_int_equal(e[1].rounds, 1);
  assert_int_equal(e[3].rounds, 1);
  assert_int_equal(e[0].rounds, 7);
  assert_int_equal(e[2].rounds, 7);
  assert_false(e[2].dropped);
  assert_int_equal(e[2].tied, 0); /* it ends at 106 ms: behind the noise, no tie */
  assert_true(fabs(e[2].figures.median_us - 106000.0) < 1e-6);
  /* never past the cap: 4 x SWEEP_RACE_ROUND_CAP rounds, whatever the budget */
  setup_vt();
  g_device_time = 1;
  g_default_work = 600;
  sweep_race_entrant f[6] = {entrant(&inst_a, "work=100"), entrant(&inst_b, undecided),
                             entrant(&inst_a, "work=500"), entrant(&inst_b, "work=500"),
                             entrant(&inst_a, NULL),       entrant(&inst_b, NULL)};
  f[2].prunable = f[3].prunable = f[4].prunable = f[5].prunable = 1;
  assert_int_equal(sweep_race_run(f, 6, &p, 1, NULL, NULL), 6);
  assert_int_equal(f[0].rounds, 4 * SWEEP_RACE_ROUND_CAP);
  assert_int_equal(f[1].rounds, 4 * SWEEP_RACE_ROUND_CAP);
}

/* One clock per race: the device's when every entrant reports it, else
 * the host's for all (inst_a reports device time, inst_b does not: a
 * device millisecond against a host microsecond would be no comparison). */
static void a_race_of_mixed_clocks_is_timed_by_the_host(void **state) {
  (void)state;
  setup_vt();
  g_device_time = 1;
  sweep_race_entrant e[2] = {entrant(&inst_a, "work=1"), entrant(&inst_b, "work=2")};
  sweep_rigor_params p = params();
  assert_int_equal(sweep_race_run(e, 2, &p, 1, NULL, NULL), 2);
  assert_true(e[0].device_clock && e[1].device_clock);
  assert_true(fabs(e[0].figures.median_us - 1000.0) < 1e-6);
  setup_vt();
  g_device_time = 2;
  assert_int_equal(sweep_race_run(e, 2, &p, 1, NULL, NULL), 2);
  assert_false(e[0].device_clock || e[1].device_clock);
  assert_true(e[0].figures.median_us < 500.0); /* the host's time of the fake's loop */
}

static int stop_now(void *user) {
  (void)user;
  return 1;
}

static void cancelled_before_a_sample(void **state) {
  (void)state;
  setup_vt();
  sweep_race_entrant e[1] = {entrant(&inst_a, "work=1")};
  sweep_rigor_params p = params();
  assert_int_equal(sweep_race_run(e, 1, &p, 0, stop_now, NULL), 0);
  assert_false(e[0].ok);
  assert_non_null(strstr(e[0].error, "stopped"));
  assert_int_equal(g_opens, g_closes);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shares_sessions_and_interleaves),
      cmocka_unit_test(a_default_that_is_the_winner_is_timed_once),
      cmocka_unit_test(a_refused_or_wrong_entrant_fails_alone),
      cmocka_unit_test(cancelled_before_a_sample),
      cmocka_unit_test(a_swept_entrant_is_not_checked_again),
      cmocka_unit_test(the_sizing_run_is_the_first_warmup),
      cmocka_unit_test(a_clearly_slower_entrant_is_pruned),
      cmocka_unit_test(racing_drops_the_clearly_behind_and_stops_when_decided),
      cmocka_unit_test(racing_calls_a_tie_of_level_contenders),
      cmocka_unit_test(racing_gives_an_undecided_contender_the_saved_rounds),
      cmocka_unit_test(a_race_of_mixed_clocks_is_timed_by_the_host),
  };
  return cmocka_run_group_tests_name("sweep_race", tests, NULL, NULL);
}
