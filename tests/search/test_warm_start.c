/*
 * test_warm_start.c: calibrate's warm start from the store, end to end
 * (bin/calhost from CALHOST_BUILD_DIR with the cpu_gemm plugin on a small
 * MatMul, in a temporary directory): the search begins with the policy of
 * an exact profile of the same model on another processor; a stored policy
 * the plugin refuses is left out; --no-warm-start starts cold (the
 * plugin's own order first). On a described space (cpu_gemm) and on
 * numbered candidates (the test plugin test_good).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "search/spacefile.h"

static char g_build[1024];
static char g_dir[256];

static void in_dir(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* The build tree's cpu_gemm (described parameters), one thread, quick
 * rigor, one 48x48x48 MatMul; numbered: the test plugin test_good (four
 * numbered candidates) on a ReduceSum instead. A fresh store. */
static void write_config(int numbered) {
  char path[512], store[512];
  in_dir(path, sizeof path, "calhost.ini");
  in_dir(store, sizeof store, "store.txt");
  remove(store);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s\n[plugins]\ndirectories = %s/lib/calhost/%s\n"
          "enabled = %s\n[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 0\n"
          "repetitions = 3\n[workload tiny]\noperator = %s\nshape = %s\n",
          store, g_build, numbered ? "test-plugins" : "plugins",
          numbered ? "test_good" : "cpu_gemm", numbered ? "ReduceSum" : "MatMul",
          numbered ? "1024" : "48,48,48");
  fclose(f);
}

/* Runs bin/calhost --config DIR/calhost.ini ARGS... (NULL-terminated) in
 * DIR (HOME and XDG there) and returns its exit status; its stderr is
 * shown when it fails. */
static int calhost(const char *first, ...) {
  char cfg[512];
  const char *argv[40];
  size_t n = 0;
  va_list ap;
  in_dir(cfg, sizeof cfg, "calhost.ini");
  argv[n++] = "--config";
  argv[n++] = cfg;
  argv[n++] = first;
  va_start(ap, first);
  for (const char *a; (a = va_arg(ap, const char *)) && n < 39;)
    argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;
  harness_opts o = {.cwd = g_dir};
  harness_result r = {0};
  int rc = harness_run_program(NULL, &o, &r, argv);
  if (rc != 0)
    fprintf(stderr, "calhost exited %d: %s\n", rc, r.err);
  harness_result_free(&r);
  return rc;
}

/* The recorded space DIR/name, loaded into *s. */
static void load_record(const char *name, search_space_file *s) {
  char path[512], err[512];
  in_dir(path, sizeof path, name);
  if (search_space_load(path, s, err, sizeof err) != 0)
    fail_msg("%s", err);
}

/* Rewrites the store: the exact profile becomes another processor's with
 * `policy`; the portable profile gets a policy the plugin refuses and a
 * lower median (first in the warm start's order, and left out). */
static void fake_fleet(const char *policy) {
  char path[512];
  in_dir(path, sizeof path, "store.txt");
  char *text = harness_slurp(path, NULL);
  assert_non_null(text);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  int portable = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (!strncmp(line, "profile ", 8))
      portable = strstr(line, "portable") != NULL;
    if (!strncmp(line, "processor ", 10))
      fprintf(f, "processor \"elsewhere;isa=none\"\n");
    else if (!strncmp(line, "policy ", 7))
      fprintf(f, "policy \"%s\"\n", portable ? "kernel=nonsense;mc=1" : policy);
    else if (portable && !strncmp(line, "measurement \"median_latency\"", 29))
      fprintf(f, "measurement \"median_latency\" 0.5 \"us\"\n");
    else
      fprintf(f, "%s\n", line);
  }
  fclose(f);
  free(text);
}

/* The fleet's winner first, the refused one never, cold without it: on
 * cpu_gemm's described space, or test_good's numbered candidates. */
static void begins_with_the_fleets_winner(int numbered) {
  write_config(numbered);
  char all_path[512], warm_path[512], cold_path[512];
  in_dir(all_path, sizeof all_path, "all.space");
  in_dir(warm_path, sizeof warm_path, "warm.space");
  in_dir(cold_path, sizeof cold_path, "cold.space");
  /* every candidate, in the plugin's order: the last is the one the
   * search would not begin with */
  assert_int_equal(calhost("calibrate", "--no-warm-start", "--strategy", "exhaustive", "--record",
                           all_path, NULL),
                   0);
  search_space_file all;
  load_record("all.space", &all);
  const char *donor = NULL;
  for (size_t i = 0; i < all.entry_count; i++)
    if (!all.entries[i].rejected && all.entries[i].policy)
      donor = all.entries[i].policy;
  assert_non_null(donor);
  fake_fleet(donor);

  /* warm: the other processor's policy first; the refused one never */
  const char *budget = numbered ? "2" : "4";
  assert_int_equal(
      calhost("calibrate", "--strategy", "model", "--budget", budget, "--record", warm_path, NULL),
      0);
  search_space_file warm;
  load_record("warm.space", &warm);
  assert_true(warm.entry_count >= 1);
  assert_string_equal(warm.entries[0].policy, donor);
  for (size_t i = 0; i < warm.entry_count; i++)
    assert_null(strstr(warm.entries[i].policy ? warm.entries[i].policy : "", "nonsense"));

  /* cold: the plugin's own first candidate, as in the exhaustive order */
  assert_int_equal(calhost("calibrate", "--force", "--no-warm-start", "--strategy", "model",
                           "--budget", budget, "--record", cold_path, NULL),
                   0);
  search_space_file cold;
  load_record("cold.space", &cold);
  assert_true(cold.entry_count >= 1);
  assert_string_not_equal(cold.entries[0].policy, donor);
  assert_string_equal(cold.entries[0].policy, all.entries[0].policy);
  search_space_free(&all);
  search_space_free(&warm);
  search_space_free(&cold);
}

static void calibrate_begins_with_the_fleets_winner(void **state) {
  (void)state;
  begins_with_the_fleets_winner(0);
}

static void a_numbered_space_begins_with_the_fleets_winner(void **state) {
  (void)state;
  begins_with_the_fleets_winner(1);
}

static int setup(void **state) {
  (void)state;
  const char *b = getenv("CALHOST_BUILD_DIR");
  snprintf(g_build, sizeof g_build, "%s", b ? b : ".");
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-warm-XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  if (getenv("CALHOST_KEEP_TEST_DIR"))
    return 0;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(calibrate_begins_with_the_fleets_winner),
      cmocka_unit_test(a_numbered_space_begins_with_the_fleets_winner),
  };
  return cmocka_run_group_tests_name("calibrate's warm start", tests, setup, teardown);
}
