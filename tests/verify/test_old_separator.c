/*
 * test_old_separator.c: a policy stored with the GPU backends' earlier ','
 * separator is the same policy as the ';' text the plugin writes now
 * (host/base/policy.h), end to end through bin/calhost with test_speed_sep
 * (tests/verify/speed_plugin.c, SEPARATED: "work=N;unit=1", reads ','):
 * verify measures a stored "work=2,unit=1" once, as the default
 * "work=2;unit=1" (no extra measurement), and a race keeps its annotation
 * on a portable profile stored with ',' while its exact one says ';'.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calhost/calstore.h"
#include "harness.h"
#include "runtime/race.h"

static char g_cfg[512], g_store[512], g_log[512];

/* bin/calhost --config g_cfg ARGS with the prepare log set; the exit
 * status, *out the output (caller frees). */
static int run(char **out, const char *const *args) {
  char env[600];
  snprintf(env, sizeof env, "CALHOST_TEST_PREPARE_LOG=%s", g_log);
  const char *const vars[] = {env, NULL};
  harness_opts o = {.cwd = harness_scratch_dir(), .timeout_s = 600, .merge_output = 1, .env = vars};
  harness_result r = {0};
  int code = harness_run_config(&o, &r, g_cfg, args);
  *out = r.out;
  r.out = NULL;
  harness_result_free(&r);
  return code;
}

#define RUN(out, ...) run(out, (const char *const[]){__VA_ARGS__, NULL})

/* test_speed_sep (and the race plugins), one workload, threads 1. */
static void write_config(void) {
  char text[2048];
  const char *b = harness_build_dir();
  snprintf(text, sizeof text,
           "[store]\npath = %s\n[plugins]\ndirectories = %s/lib/calhost/separator-plugins:"
           "%s/lib/calhost/race-plugins\n[calibration]\nthreads = 1\nrigor = quick\n"
           "[workload spin]\noperator = Spin\nshape = 64\n",
           g_store, b, b);
  assert_int_equal(harness_write(g_cfg, text), 0);
}

static int setup(void **state) {
  (void)state;
  const char *dir = harness_scratch("old-separator");
  if (!dir)
    return -1;
  snprintf(g_cfg, sizeof g_cfg, "%s/calhost.ini", dir);
  snprintf(g_store, sizeof g_store, "%s/store.txt", dir);
  snprintf(g_log, sizeof g_log, "%s/prepared.txt", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return harness_scratch_remove();
}

/* Replaces the policy of test_speed_sep's first profile of kind ("exact"
 * or "portable") in the store file with policy. */
static void store_policy(const char *kind, const char *policy) {
  char *text = harness_slurp(g_store, NULL);
  assert_non_null(text);
  char head[128];
  snprintf(head, sizeof head, "profile %s calibrated\nbackend \"test_speed_sep\"", kind);
  char *prof = strstr(text, head);
  if (!prof)
    fail_msg("no %s profile of test_speed_sep in the store:\n%s", kind, text);
  char *pol = strstr(prof, "\npolicy \"");
  assert_non_null(pol);
  pol += strlen("\npolicy \"");
  char *close = strchr(pol, '"');
  assert_non_null(close);
  size_t n = strlen(text) + strlen(policy) + 1;
  char *edited = malloc(n);
  assert_non_null(edited);
  snprintf(edited, n, "%.*s%s%s", (int)(pol - text), text, policy, close);
  assert_int_equal(harness_write(g_store, edited), 0);
  free(edited);
  free(text);
}

static void fresh_store_of_the_sep_plugin(void) {
  write_config();
  remove(g_store);
  char *out;
  int rc = RUN(&out, "calibrate", "--plugin", "test_speed_sep");
  if (rc != 0)
    fail_msg("calibrate: %d\n%s", rc, out);
  free(out);
}

/* The stored "work=2,unit=1" is the default "work=2;unit=1": measured once,
 * as the default; the old comparison measured the ',' text a second time. */
static void verify_measures_an_old_form_default_once(void **state) {
  (void)state;
  fresh_store_of_the_sep_plugin();
  store_policy("exact", "work=2,unit=1");
  remove(g_log);
  char *out;
  int rc = RUN(&out, "verify", "--json", "--plugin", "test_speed_sep");
  char *log = harness_slurp_or_empty(g_log, NULL);
  if (!strstr(out, "\"stored_policy\":\"work=2,unit=1\""))
    fail_msg("verify (%d) did not judge the stored policy:\n%s", rc, out);
  if (strstr(out, "\"verdict\":\"error\"") || strstr(out, "\"verdict\":\"invalid\""))
    fail_msg("verify (%d) could not judge the stored policy:\n%s", rc, out);
  if (!strstr(log, "work=2;unit=1\n"))
    fail_msg("the default was not measured; prepared:\n%s", log);
  if (strstr(log, "work=2,unit=1"))
    fail_msg("the stored ',' form of the default was measured again; prepared:\n%s", log);
  free(log);
  free(out);
}

typedef struct found {
  runtime_race race;
  int portables;
} found;

static int visit(void *user, const calstore_profile *p) {
  found *f = user;
  if (p->key.kind == CALSTORE_KEY_PORTABLE && !strcmp(p->key.backend, "test_speed_sep")) {
    f->portables++;
    runtime_race_read(p, &f->race);
  }
  return 0;
}

/* test_speed_sep's exact profile says "work=N;unit=1", its portable one
 * (stored earlier) "work=N,unit=1": a race against race_alpha annotates
 * both; the old comparison skipped the portable one. */
static void a_race_annotates_a_portable_profile_of_the_old_form(void **state) {
  (void)state;
  fresh_store_of_the_sep_plugin();
  char *text = harness_slurp(g_store, NULL);
  assert_non_null(text);
  const char *prof = strstr(text, "profile portable calibrated\nbackend \"test_speed_sep\"");
  if (!prof)
    fail_msg("no portable profile of test_speed_sep:\n%s", text);
  const char *pol = strstr(prof, "\npolicy \"work=");
  assert_non_null(pol);
  char old[32];
  unsigned work = 0;
  assert_int_equal(sscanf(pol, "\npolicy \"work=%u;unit=1\"", &work), 1);
  snprintf(old, sizeof old, "work=%u,unit=1", work);
  free(text);
  store_policy("portable", old);
  char *out;
  int rc = RUN(&out, "calibrate", "--plugin", "race_alpha");
  if (rc != 0 || !strstr(out, "race spin threads=1:"))
    fail_msg("calibrate --plugin race_alpha (%d) did not race:\n%s", rc, out);
  free(out);
  found f = {0};
  assert_int_equal(calstore_read_file(g_store, visit, &f, NULL, NULL, NULL), CALSTORE_OK);
  assert_int_equal(f.portables, 1);
  if (!(f.race.id > 0))
    fail_msg("the portable profile stored as %s carries no race", old);
  assert_int_equal(f.race.entrants, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(verify_measures_an_old_form_default_once),
      cmocka_unit_test(a_race_annotates_a_portable_profile_of_the_old_form),
  };
  return cmocka_run_group_tests_name("verify_old_separator", tests, setup, teardown);
}
