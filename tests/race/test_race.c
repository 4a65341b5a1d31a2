/*
 * test_race.c: the race of backends and the selection by measurement
 * (issue 38), end to end through bin/calhost and the runtime: race_alpha
 * (8 times slower by construction, first in the loader's order) and
 * race_beta (tests/race/CMakeLists.txt) calibrate one workload; the race
 * recorded in both profiles makes lookup --workload, --explain and
 * calhost_runtime_choose answer race_beta; [lookup] backends pins
 * race_alpha; a store merged with another machine's profiles keeps each
 * machine's race; a profile without a race falls back to the first in the
 * loader's order and says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "calhost/calstore.h"
#include "calhost/runtime.h"
#include "race_common.h"
#include "runtime/race.h"

/* The configuration: the two race plugins, one workload, threads 1,
 * rigor quick; extra appended (a [lookup] section, ...). */
static void write_config(const char *extra) {
  assert_int_equal(race_write_config("[plugins]\ndirectories = %s/lib/calhost/race-plugins\n"
                                     "[calibration]\nthreads = 1\nrigor = quick\n[workload spin]\n"
                                     "operator = Spin\nshape = 64\n%s",
                                     race_build, extra ? extra : ""),
                   0);
}

static int setup(void **state) {
  (void)state;
  return race_setup("race", NULL);
}

/* ---- the store's races -------------------------------------------------- */

typedef struct seen {
  const char *processor; /* only exact profiles of this processor (NULL: any) */
  int exact;
  runtime_race race[2]; /* race_alpha, race_beta */
  int found[2];
  char processors[2][256];
} seen;

static int visit(void *user, const calstore_profile *p) {
  seen *s = user;
  if ((p->key.kind == CALSTORE_KEY_EXACT) != s->exact)
    return 0;
  if (s->processor && p->key.processor && strcmp(s->processor, p->key.processor))
    return 0;
  int i = !strcmp(p->key.backend, "race_alpha") ? 0 : !strcmp(p->key.backend, "race_beta") ? 1 : -1;
  if (i < 0)
    return 0;
  s->found[i]++;
  runtime_race_read(p, &s->race[i]);
  if (p->key.processor)
    snprintf(s->processors[i], sizeof s->processors[i], "%s", p->key.processor);
  return 0;
}

static void read_races(seen *s, int exact, const char *processor) {
  memset(s, 0, sizeof *s);
  s->exact = exact;
  s->processor = processor;
  assert_int_equal(calstore_read_file(race_store, visit, s, NULL, NULL, NULL), CALSTORE_OK);
}

/* ---- tests -------------------------------------------------------------- */

static void calibrate_races_and_lookup_chooses_the_faster(void **state) {
  (void)state;
  char *out, *err;
  write_config(NULL);
  int rc = RUN(&out, &err, "calibrate");
  if (rc != 0)
    fprintf(stderr, "calibrate: %d\n%s\n%s\n", rc, out, err);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "race spin threads=1:"));
  assert_non_null(strstr(out, "-> race_beta"));
  free(out);
  free(err);

  /* both exact profiles carry one race; race_beta ranks first */
  seen s;
  read_races(&s, 1, NULL);
  assert_int_equal(s.found[0], 1);
  assert_int_equal(s.found[1], 1);
  assert_true(s.race[0].id > 0);
  assert_true(s.race[0].id == s.race[1].id);
  assert_int_equal(s.race[0].entrants, 2);
  assert_int_equal(s.race[1].rank, 1);
  assert_int_equal(s.race[0].rank, 2);
  assert_true(s.race[1].latency_us < s.race[0].latency_us);
  assert_true(s.race[0].default_us > 0); /* each default timed beside */
  /* so do the portable profiles (written by this machine, same policies) */
  read_races(&s, 0, NULL);
  assert_true(s.race[0].id > 0 && s.race[0].id == s.race[1].id);

  /* lookup --workload without --plugin: the race's winner, though
   * race_alpha comes first in the loader's order */
  rc = RUN(&out, &err, "lookup", "--workload", "spin");
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "exact_calibrated race_beta:"));
  free(out);
  free(err);
  rc = RUN(&out, &err, "lookup", "--workload", "spin", "--explain");
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "backend chosen by race: race_beta: fastest of 2"));
  assert_non_null(strstr(out, "race_alpha "));
  assert_non_null(strstr(out, "(default "));
  free(out);
  free(err);
  /* --json: the choice's backend, rule and reason too (as lookup --model
   * --json per node); with --plugin there is no choice */
  rc = RUN(&out, &err, "lookup", "--workload", "spin", "--json");
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "\"backend\":\"race_beta\",\"chosen_by\":\"race\","
                              "\"reason\":\"race_beta: fastest of 2"));
  free(out);
  free(err);
  rc = RUN(&out, &err, "lookup", "--workload", "spin", "--plugin", "race_alpha", "--json");
  assert_int_equal(rc, 0);
  assert_null(strstr(out, "\"chosen_by\""));
  free(out);
  free(err);

  /* --json: the races after the results */
  rc = RUN(&out, &err, "calibrate", "--force", "--json");
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "\"races\":[{\"workload\":\"spin\",\"threads\":1,\"race_id\":"));
  assert_non_null(strstr(out, "\"backend\":\"race_beta\",\"policy\":\"work=1\""));
  assert_non_null(strstr(out, "\"rank\":1"));
  assert_non_null(strstr(out, "\"race_seconds\":"));
  free(out);
  free(err);
  read_races(&s, 1, NULL); /* the forced run raced again: a later race */

  /* a second calibrate has nothing new: no race again */
  rc = RUN(&out, &err, "calibrate");
  assert_int_equal(rc, 0);
  assert_null(strstr(out, "race spin"));
  free(out);
  free(err);
  seen again;
  read_races(&again, 1, NULL);
  assert_true(again.race[0].id == s.race[0].id);
}

static void runtime_chooses_by_the_race(void **state) {
  (void)state;
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = race_cfg;
  calhost_runtime *rt = NULL;
  char err[1024];
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
  calhost_runtime_choice *c = NULL;
  assert_int_equal(calhost_runtime_choose(rt, "spin", 0, &c, err, sizeof err), CALHOST_RUNTIME_OK);
  assert_int_equal(c->struct_size, sizeof *c);
  assert_string_equal(c->backend, "race_beta");
  assert_int_equal(c->rule, CALHOST_RUNTIME_RULE_RACE);
  assert_int_equal(c->candidate_count, 2);
  assert_string_equal(c->candidates[0].backend, "race_alpha");
  assert_true(c->candidates[0].raced && c->candidates[1].raced);
  assert_true(c->candidates[1].race_latency_us < c->candidates[0].race_latency_us);
  assert_non_null(c->selection);
  assert_non_null(c->selection->result->profile);
  assert_string_equal(c->selection->exact.backend, "race_beta");
  calhost_runtime_choice_free(&c);
  assert_null(c);
  /* force_portable: the portable profiles' race (this machine's) */
  calhost_runtime_close(&rt);
  o.force_portable = 1;
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
  assert_int_equal(calhost_runtime_choose(rt, "spin", 0, &c, err, sizeof err), CALHOST_RUNTIME_OK);
  assert_string_equal(c->backend, "race_beta");
  assert_int_equal(c->rule, CALHOST_RUNTIME_RULE_RACE);
  assert_int_equal(c->selection->result->level, CALSTORE_LEVEL_PORTABLE_CALIBRATED);
  calhost_runtime_choice_free(&c);
  calhost_runtime_close(&rt);
}

static void configuration_pins_a_backend(void **state) {
  (void)state;
  char *out, *err;
  write_config("[lookup]\nbackends = race_alpha\n");
  int rc = RUN(&out, &err, "lookup", "--workload", "spin");
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "exact_calibrated race_alpha:"));
  free(out);
  free(err);
  rc = RUN(&out, &err, "lookup", "--workload", "spin", "--explain");
  assert_non_null(strstr(out, "backend chosen by configuration: race_alpha: the first backend of "
                              "[lookup] backends with a profile"));
  free(out);
  free(err);
  /* an order: the first listed with a profile */
  write_config("[lookup]\nbackends = race_beta, race_alpha\n");
  rc = RUN(&out, &err, "lookup", "--workload", "spin");
  assert_non_null(strstr(out, "race_beta:"));
  free(out);
  free(err);
  /* config show lists the key with its value */
  rc = RUN(&out, &err, "config", "show");
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "race_beta, race_alpha"));
  free(out);
  free(err);
  /* a bad name is refused with the file and line */
  write_config("[lookup]\nbackends = race beta!\n");
  rc = RUN(&out, &err, "lookup", "--workload", "spin");
  assert_int_equal(rc, 2);
  assert_non_null(strstr(err, "calhost.ini:"));
  free(out);
  free(err);
  write_config(NULL);
}

/* What a rigged race that race_alpha won records for p's backend: race id,
 * race_alpha first of 2 in 10 us, race_beta second in beta_us, no
 * defaults. */
static runtime_race alpha_first(const calstore_profile *p, double id, double beta_us) {
  int alpha = !strcmp(p->key.backend, "race_alpha");
  return (runtime_race){.id = id,
                        .latency_us = alpha ? 10.0 : beta_us,
                        .default_us = NAN,
                        .entrants = 2,
                        .rank = alpha ? 1u : 2u};
}

/* Another machine's copy of each exact profile: processor "other machine",
 * a race of its own where race_alpha won. */
static int put_other(void *user, const calstore_profile *p, const runtime_race *old,
                     runtime_race *r, calstore_profile *q) {
  (void)user;
  (void)old;
  *r = alpha_first(p, 1.5e15, 20.0);
  q->key.processor = "other machine";
  return 1;
}

static void a_merged_store_keeps_each_machines_race(void **state) {
  (void)state;
  char other[600];
  snprintf(other, sizeof other, "%s/other.txt", race_dir);
  race_rig(other, 0, put_other, NULL); /* every exact profile, raced or not */
  /* the fleet's merge: import the other node's store into this one */
  char *out, *err;
  int rc = RUN(&out, &err, "import", other);
  if (rc != 0)
    fprintf(stderr, "%s\n%s\n", out, err);
  assert_int_equal(rc, 0);
  free(out);
  free(err);
  seen here, there;
  read_races(&there, 1, "other machine");
  assert_int_equal(there.found[0], 1);
  assert_int_equal(there.found[1], 1);
  assert_int_equal(there.race[0].rank, 1);
  read_races(&here, 1, NULL);
  assert_int_equal(here.found[0], 2); /* both machines' profiles */
  /* each machine's rule: its own race */
  runtime_race_entry e[2] = {{"race_alpha", 1, there.race[0], 1, NULL},
                             {"race_beta", 1, there.race[1], 1, NULL}};
  const char *rule;
  assert_int_equal(runtime_race_choose(e, 2, NULL, 0, &rule), 0);
  assert_string_equal(rule, "race");
  rc = RUN(&out, &err, "lookup", "--workload", "spin");
  assert_non_null(strstr(out, "exact_calibrated race_beta:")); /* this machine's race */
  free(out);
  free(err);
}

static void without_a_race_the_first_answers_and_says_so(void **state) {
  (void)state;
  runtime_race none = {.default_us = NAN};
  runtime_race_entry e[2] = {{"race_alpha", 1, none, 0, NULL}, {"race_beta", 1, none, 0, NULL}};
  const char *rule;
  assert_int_equal(runtime_race_choose(e, 2, NULL, 0, &rule), 0);
  assert_string_equal(rule, "first");
  /* a race between only one of them is no race */
  e[1].race =
      (runtime_race){.id = 5, .latency_us = 1.0, .default_us = NAN, .entrants = 2, .rank = 1};
  e[1].raced = 1;
  assert_int_equal(runtime_race_choose(e, 2, NULL, 0, &rule), 0);
  assert_string_equal(rule, "first");
  /* the later race supersedes an earlier one */
  runtime_race_entry f[3] = {
      {"a", 1, {.id = 10, .latency_us = 5.0, .default_us = NAN, .entrants = 2, .rank = 2}, 1, NULL},
      {"b", 1, {.id = 20, .latency_us = 9.0, .default_us = NAN, .entrants = 2, .rank = 1}, 1, NULL},
      {"c",
       1,
       {.id = 20, .latency_us = 12.0, .default_us = NAN, .entrants = 2, .rank = 2},
       1,
       NULL}};
  f[0].race.id = 20; /* a and b and c: race 20, b is fastest */
  f[0].race.latency_us = 30.0;
  assert_int_equal(runtime_race_choose(f, 3, NULL, 0, &rule), 1);
  f[0].race.id = 10; /* a in an older race only: not compared */
  f[0].race.latency_us = 1.0;
  assert_int_equal(runtime_race_choose(f, 3, NULL, 0, &rule), 1);
  /* a configured order that names no backend with a profile: none */
  char *order[] = {(char *)"zzz"};
  assert_int_equal(runtime_race_choose(f, 3, order, 1, &rule), -1);
  assert_string_equal(rule, "configured");
}

/* A run narrowed to one backend races it against the profiles another
 * backend stored earlier for the same key. */
static void a_backend_calibrated_earlier_joins_the_race(void **state) {
  (void)state;
  char *out, *err;
  write_config(NULL);
  remove(race_store);
  int rc = RUN(&out, &err, "calibrate", "--plugin", "race_beta");
  assert_int_equal(rc, 0);
  assert_null(strstr(out, "race spin")); /* one backend: no race */
  free(out);
  free(err);
  rc = RUN(&out, &err, "calibrate", "--plugin", "race_alpha");
  assert_int_equal(rc, 0);
  if (!strstr(out, "race spin threads=1:") || !strstr(out, "-> race_beta"))
    fail_msg("race_beta (8 times faster) did not win the race; calibrate said:\n%s%s", out, err);
  free(out);
  free(err);
  seen s;
  read_races(&s, 1, NULL);
  assert_true(s.race[0].id > 0 && s.race[0].id == s.race[1].id);
  assert_int_equal(s.race[1].rank, 1);
  rc = RUN(&out, &err, "lookup", "--workload", "spin");
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "exact_calibrated race_beta:"));
  free(out);
  free(err);
}

/* Makes race_beta's exact calibrated profile in the store file run its
 * policy with ";wrong" appended (the speed plugin's wrong output). */
static void make_beta_wrong(void) {
  FILE *f = fopen(race_store, "rb");
  assert_non_null(f);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  char *prof = strstr(text, "profile exact calibrated\nbackend \"race_beta\"");
  assert_non_null(prof);
  char *pol = strstr(prof, "\npolicy \"");
  assert_non_null(pol);
  char *close = strchr(pol + 10, '"');
  assert_non_null(close);
  f = fopen(race_store, "wb");
  assert_non_null(f);
  fwrite(text, 1, (size_t)(close - text), f);
  fputs(";wrong", f);
  fputs(close, f);
  fclose(f);
}

/* The race checks only what this run's sweeps did not: a profile another
 * run stored (here: one whose output is wrong) is checked in the race and
 * not timed, while the freshly swept backend is raced without a second
 * check. */
static void a_stored_profile_is_still_checked(void **state) {
  (void)state;
  char *out, *err;
  write_config(NULL);
  remove(race_store);
  int rc = RUN(&out, &err, "calibrate", "--plugin", "race_beta");
  assert_int_equal(rc, 0);
  free(out);
  free(err);
  make_beta_wrong();
  rc = RUN(&out, &err, "calibrate", "--plugin", "race_alpha");
  if (!strstr(out, "race_beta not timed: wrong output"))
    fail_msg("the stored wrong policy was not checked in the race:\n%s\n%s", out, err);
  assert_null(strstr(out, "-> race_beta"));
  free(out);
  free(err);
}

/* Rewrites this machine's race: race_alpha and race_beta tied within the
 * noise, race_alpha (8 times slower by construction) first with the lower
 * median: the recorded race decides, and --explain tells the tie. */
static int put_tie(void *user, const calstore_profile *p, const runtime_race *old, runtime_race *r,
                   calstore_profile *q) {
  (void)user;
  (void)q;
  *r = alpha_first(p, old->id, 10.1);
  r->rounds = 10;
  r->tie = 2;
  return 1;
}

static void a_tie_is_chosen_by_rank_and_explained(void **state) {
  (void)state;
  char *out, *err;
  write_config(NULL);
  remove(race_store);
  assert_int_equal(RUN(&out, &err, "calibrate"), 0);
  free(out);
  free(err);
  race_rig(race_store, 1, put_tie, NULL);
  int rc = RUN(&out, &err, "lookup", "--workload", "spin", "--explain");
  assert_int_equal(rc, 0);
  if (!strstr(out,
              "backend chosen by race: race_alpha: tied with 1 other within the race's noise") ||
      !strstr(out, "chosen by the tie rule (the lower median") ||
      !strstr(out, "; 10 rounds, tied)"))
    fail_msg("the tie is not told:\n%s", out);
  assert_non_null(strstr(out, "lookup race_alpha "));
  free(out);
  free(err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(calibrate_races_and_lookup_chooses_the_faster),
      cmocka_unit_test(runtime_chooses_by_the_race),
      cmocka_unit_test(configuration_pins_a_backend),
      cmocka_unit_test(a_merged_store_keeps_each_machines_race),
      cmocka_unit_test(without_a_race_the_first_answers_and_says_so),
      cmocka_unit_test(a_backend_calibrated_earlier_joins_the_race),
      cmocka_unit_test(a_stored_profile_is_still_checked),
      cmocka_unit_test(a_tie_is_chosen_by_rank_and_explained),
  };
  return cmocka_run_group_tests_name("race_selection", tests, setup, race_teardown);
}
