/*
 * test_calibrate_search.c: the search inside `calhost calibrate`, end to end
 * (bin/calhost from CALHOST_BUILD_DIR with the cpu_gemm plugin on small
 * MatMul shapes, in a temporary directory):
 *  - --strategy/--budget (and the [calibration] strategy/budget keys) bound
 *    the candidates evaluated: the --json report's search.evaluated and its
 *    candidate list;
 *  - the rigor levels map onto strategies and budgets as documented;
 *  - --record writes a space file that the reader loads, whose entries are
 *    the evaluated candidates (all of them for an exhaustive run), and that
 *    replays deterministically; several sweeps write one file each;
 *  - a plugin describing its parameters (opencl_gemm) is recorded by name;
 *  - bad strategy names and budgets, on the command line and in the
 *    configuration, are refused with clear errors.
 * The sizes of cpu_gemm's spaces depend on the processor's widest kernels
 * (AVX-512, AVX2, portable): every expected size comes from the plugin's
 * own enumeration (cpu_gemm_candidates, linked here, with gemm_isa_detect,
 * which honours CALHOST_CPU_GEMM_MAX_ISA as the plugin does), so the test
 * passes whatever the processor; CI runs it again with the plugin capped
 * at avx2 and at portable.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "search/search.h"
#include "search/spacefile.h"

#include "gemm.h"
#include "harness.h"
#include "policy.h"

static char g_build[1024];
static char g_dir[256];

static void in_dir(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* A configuration with the build tree's cpu_gemm, one thread, quick rigor,
 * no time budget, the workloads given (INI text) and `extra` lines in
 * [calibration]. */
static void write_config(const char *workloads, const char *extra) {
  char path[512], store[512];
  in_dir(path, sizeof path, "calhost.ini");
  in_dir(store, sizeof store, "store.txt");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s\n[plugins]\ndirectories = %s/lib/calhost/plugins\n"
          "enabled = cpu_gemm\n[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 0\n"
          "repetitions = 3\n%s%s",
          store, g_build, extra ? extra : "", workloads);
  fclose(f);
}

/* A small product whose space has more than five candidates whatever the
 * kernels (6 portable, 14 AVX2, 24 AVX-512). */
static const char *const TINY = "[workload tiny]\noperator = MatMul\nshape = 96,96,96\n";

/* The size of cpu_gemm's space for an m x n x k product on one thread, on
 * this processor (or under CALHOST_CPU_GEMM_MAX_ISA), as the plugin
 * enumerates it. */
static long cpu_gemm_space(size_t m, size_t n, size_t k) {
  return (long)cpu_gemm_candidates((int)gemm_isa_detect(), m, n, k, 1, NULL, 0);
}

/* What the quick rigor evaluates of cpu_gemm's (curated) space of `size`,
 * by the rule calibrate applies (search_sweep_rigor_plan: 2%, at least 8,
 * and the whole space when that is not smaller), and that rule's strategy. */
static long quick_evaluations(long size, search_strategy *strategy) {
  uint32_t n;
  search_sweep_rigor_plan(CALHOST_SEARCH_RIGOR_QUICK, (uint64_t)size, 1, strategy, &n);
  return n && n < size ? (long)n : size;
}

/* Runs bin/calhost --config DIR/calhost.ini ARGS... in DIR (HOME and XDG
 * there); returns the exit status, *out and *err its output (malloc'd). */
static int calhost(char **out, char **err, ...) {
  char cfg[512];
  const char *argv[40];
  size_t n = 0;
  va_list ap;
  in_dir(cfg, sizeof cfg, "calhost.ini");
  argv[n++] = "--config";
  argv[n++] = cfg;
  va_start(ap, err);
  for (const char *a; (a = va_arg(ap, const char *)) && n < 39;)
    argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;
  harness_opts o = {.cwd = g_dir};
  harness_result r = {0};
  int code = harness_run_program(NULL, &o, &r, argv);
  *out = r.out;
  *err = r.err;
  return code;
}

/* The unsigned number after `"key":` in the first "search" object of json
 * (-1 when absent or null). */
static long search_number(const char *json, const char *key) {
  const char *s = strstr(json, "\"search\":{");
  char pat[64];
  if (!s)
    return -1;
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *k = strstr(s, pat);
  const char *end = strchr(s, '}');
  if (!k || (end && k > end))
    return -1;
  k += strlen(pat);
  return *k >= '0' && *k <= '9' ? strtol(k, NULL, 10) : -1;
}

/* Entries of the first result's "candidates" list that are not the default. */
static long candidates_run(const char *json) {
  long n = 0;
  for (const char *p = json; (p = strstr(p, "\"default\":false,\"winner\":")); p++)
    n++;
  return n;
}

static void budget_and_strategy_bound_the_evaluations(void **state) {
  (void)state;
  char *out, *err;
  write_config(TINY, NULL);
  int rc = calhost(&out, &err, "--json", "calibrate", "--force", "--strategy", "random", "--budget",
                   "5", NULL);
  if (rc != 0)
    fprintf(stderr, "%s\n%s\n", out, err);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "\"strategy\":\"random\""));
  assert_int_equal(search_number(out, "evaluated"), 5);
  assert_int_equal(search_number(out, "budget_evaluations"), 5);
  assert_int_equal(search_number(out, "space_size"), cpu_gemm_space(96, 96, 96));
  assert_int_equal(candidates_run(out), 5);
  assert_non_null(strstr(out, "\"stopped\":\"evaluations\""));
  free(out);
  free(err);
  /* the same from the configuration; a flag wins over it */
  write_config(TINY, "strategy = local\nbudget = 3\n");
  assert_int_equal(calhost(&out, &err, "--json", "calibrate", "--force", NULL), 0);
  assert_non_null(strstr(out, "\"strategy\":\"local\""));
  assert_int_equal(search_number(out, "evaluated"), 3);
  assert_int_equal(candidates_run(out), 3);
  free(out);
  free(err);
  assert_int_equal(calhost(&out, &err, "--json", "calibrate", "--force", "--budget", "4", NULL), 0);
  assert_non_null(strstr(out, "\"strategy\":\"local\""));
  assert_int_equal(search_number(out, "evaluated"), 4);
  free(out);
  free(err);
  /* `config show` lists both keys with their origin */
  assert_int_equal(calhost(&out, &err, "config", "show", NULL), 0);
  assert_non_null(strstr(out, "strategy = local"));
  assert_non_null(strstr(out, "budget = 3"));
  free(out);
  free(err);
}

static void rigor_levels_map_onto_strategies(void **state) {
  (void)state;
  char *out, *err;
  /* quick evaluates 2%, at least 8, with the model strategy (84 candidates
   * on an AVX-512 processor, 48 on an AVX2 one, 21 with portable kernels
   * only) */
  long sq = cpu_gemm_space(256, 256, 256), tiny = cpu_gemm_space(96, 96, 96);
  assert_true(tiny > 5);
  search_strategy quick_strategy;
  long quick = quick_evaluations(sq, &quick_strategy);
  assert_true(sq > 8);
  assert_true(quick >= 8 && quick < sq); /* a search, not the whole space */
  assert_int_equal(quick_strategy, CALHOST_SEARCH_MODEL);
  write_config("[workload sq]\noperator = MatMul\nshape = 256,256,256\n", NULL);
  assert_int_equal(calhost(&out, &err, "--json", "calibrate", "--force", NULL), 0);
  assert_non_null(strstr(out, "\"strategy\":\"model\""));
  assert_int_equal(search_number(out, "space_size"), sq);
  assert_int_equal(search_number(out, "evaluated"), quick);
  assert_int_equal(candidates_run(out), quick);
  free(out);
  free(err);
  /* measure: cpu_gemm's described space is its curated list: run whole,
   * pruned, as a numbered list would be */
  assert_int_equal(
      calhost(&out, &err, "--json", "calibrate", "--force", "--rigor", "measure", NULL), 0);
  assert_non_null(strstr(out, "\"space\":\"parameters\""));
  assert_non_null(strstr(out, "\"strategy\":\"exhaustive\""));
  assert_int_equal(search_number(out, "evaluated"), sq);
  free(out);
  free(err);
  /* a small space is measured whole as well */
  write_config(TINY, NULL);
  assert_int_equal(
      calhost(&out, &err, "--json", "calibrate", "--force", "--rigor", "measure", NULL), 0);
  assert_non_null(strstr(out, "\"strategy\":\"exhaustive\""));
  assert_int_equal(search_number(out, "evaluated"), tiny);
  assert_int_equal(search_number(out, "budget_evaluations"), -1); /* null: the whole space */
  free(out);
  free(err);
}

static void record_writes_a_space_that_replays(void **state) {
  (void)state;
  char *out, *err, path[512], msg[512];
  write_config(TINY, NULL);
  in_dir(path, sizeof path, "tiny.space");
  int rc = calhost(&out, &err, "--json", "calibrate", "--force", "--rigor", "exhaustive",
                   "--record", path, NULL);
  if (rc != 0)
    fprintf(stderr, "%s\n%s\n", out, err);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "\"recorded\":\""));
  long evaluated = search_number(out, "evaluated");
  free(out);
  free(err);

  search_space_file sp;
  assert_int_equal(search_space_load(path, &sp, msg, sizeof msg), 0);
  /* cpu_gemm describes its candidates (ABI 2): kernel, mc, nc, kc, split */
  assert_int_equal(sp.param_count, 5);
  assert_string_equal(sp.params[0].name, "kernel");
  assert_string_equal(sp.params[4].name, "split");
  assert_int_equal((long)sp.entry_count, evaluated);
  /* exhaustive: the complete space */
  assert_int_equal((long)sp.entry_count, cpu_gemm_space(96, 96, 96));
  assert_true(search_space_ok_count(&sp) > 0);
  int plugin_meta = 0;
  for (size_t i = 0; i < sp.meta_count; i++)
    plugin_meta |= !strcmp(sp.meta[i], "plugin cpu_gemm");
  assert_true(plugin_meta);
  /* cpu_gemm's space is its curated list: a replay spends what measure
   * would, the whole list */
  assert_int_equal(sp.curated, 1);
  for (size_t i = 0; i < sp.entry_count; i++) {
    assert_non_null(sp.entries[i].policy);
    assert_true(sp.entries[i].rejected || sp.entries[i].median > 0);
    assert_true(sp.entries[i].seconds >= sp.entries[i].compile_seconds);
  }
  /* replay: deterministic for a seed, and exhaustive finds the recorded best */
  double best[2];
  for (int k = 0; k < 3; k++) {
    search_space_replay rp;
    search_space ss;
    search_options o;
    search_result res;
    assert_int_equal(search_space_replay_init(&sp, 1, &rp, &ss), 0);
    search_options_init(&o);
    o.strategy = k < 2 ? CALHOST_SEARCH_MODEL : CALHOST_SEARCH_EXHAUSTIVE;
    o.seed = 7;
    o.max_evaluations = k < 2 ? 5 : 0;
    assert_int_equal(search_run(&ss, &o, &res), 0);
    assert_true(res.found);
    if (k < 2) {
      assert_int_equal(res.evaluations, 5);
      best[k] = res.best_cost;
    } else {
      assert_int_equal((long)res.evaluations, cpu_gemm_space(96, 96, 96));
      assert_true(res.best_cost == search_space_best(&sp));
    }
    search_result_free(&res);
    search_space_replay_free(&rp);
  }
  assert_true(best[0] == best[1]);
  search_space_free(&sp);

  /* several sweeps: one file per sweep, named after it */
  write_config("[workload a]\noperator = MatMul\nshape = 48,48,48\n"
               "[workload b]\noperator = MatMul\nshape = 40,40,40\n",
               NULL);
  in_dir(path, sizeof path, "run.space");
  assert_int_equal(
      calhost(&out, &err, "calibrate", "--force", "--budget", "2", "--record", path, NULL), 0);
  assert_non_null(strstr(out, "recorded 2 evaluated candidates"));
  free(out);
  free(err);
  const char *names[] = {"run-cpu_gemm-a-t1.space", "run-cpu_gemm-b-t1.space"};
  for (int i = 0; i < 2; i++) {
    in_dir(path, sizeof path, names[i]);
    assert_int_equal(search_space_load(path, &sp, msg, sizeof msg), 0);
    assert_int_equal(sp.entry_count, 2);
    search_space_free(&sp);
  }
}

/* A plugin that describes its parameters (ABI 2: opencl_gemm on the
 * machine's OpenCL device, PoCL in CI) is searched and recorded by name. */
static void described_parameters_are_recorded_by_name(void **state) {
  (void)state;
  char *out, *err, path[512], msg[512], cfg[512], store[512];
  in_dir(cfg, sizeof cfg, "calhost.ini");
  in_dir(store, sizeof store, "store.txt");
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s\n[plugins]\ndirectories = %s/lib/calhost/plugins\n"
          "enabled = opencl_gemm\n[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 0\n"
          "repetitions = 3\n%s",
          store, g_build, TINY);
  fclose(f);
  in_dir(path, sizeof path, "ocl.space");
  int rc = calhost(&out, &err, "--json", "calibrate", "--force", "--budget", "3", "--record", path,
                   NULL);
  if (rc != 0 || !strstr(out, "\"space\":\"parameters\"")) {
    /* no usable OpenCL device here */
    fprintf(stderr, "opencl_gemm not calibrated (rc %d): %.300s\n", rc, err);
    free(out);
    free(err);
    skip();
  }
  assert_int_equal(search_number(out, "evaluated"), 3);
  assert_true(search_number(out, "space_size") > 1000);
  free(out);
  free(err);
  search_space_file sp;
  assert_int_equal(search_space_load(path, &sp, msg, sizeof msg), 0);
  assert_true(sp.param_count > 1);
  assert_int_equal(sp.entry_count, 3);
  assert_int_equal(sp.curated, 0); /* a described space larger than its list */
  for (size_t i = 0; i < sp.param_count; i++)
    assert_string_not_equal(sp.params[i].name, "index");
  for (size_t i = 0; i < sp.entry_count; i++)
    assert_non_null(sp.entries[i].policy);
  search_space_free(&sp);
}

static void bad_strategies_and_budgets_are_refused(void **state) {
  (void)state;
  char *out, *err;
  write_config(TINY, NULL);
  static const char *const bad[][3] = {
      {"--strategy", "fastest", "'fastest' is not a search strategy"},
      {"--strategy", "", "is not a search strategy"},
      {"--budget", "5x", "'5x' is not a search budget"},
      {"--budget", "-3", "is not a search budget"},
      {"--budget", "1.5", "is not a search budget"}, /* seconds need their unit */
      {"--budget", "0s", "is not a search budget"},
      {"--budget", "2000000000", "is not a search budget"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(calhost(&out, &err, "calibrate", bad[i][0], bad[i][1], NULL), 2);
    if (!strstr(err, bad[i][2]))
      fprintf(stderr, "%s %s: %s\n", bad[i][0], bad[i][1], err);
    assert_non_null(strstr(err, bad[i][2]));
    assert_non_null(strstr(err, bad[i][0])); /* names the flag */
    free(out);
    free(err);
  }
  /* in the configuration: the file and line */
  write_config(TINY, "strategy = hill\n");
  assert_int_equal(calhost(&out, &err, "calibrate", NULL), 2);
  assert_non_null(strstr(err, "calhost.ini:11"));
  assert_non_null(strstr(err, "'hill' is not a search strategy"));
  free(out);
  free(err);
  write_config(TINY, "budget = ten\n");
  assert_int_equal(calhost(&out, &err, "calibrate", NULL), 2);
  assert_non_null(strstr(err, "calhost.ini:11"));
  assert_non_null(strstr(err, "is not a search budget"));
  free(out);
  free(err);
  /* a seconds budget is accepted */
  write_config(TINY, "budget = 30s\n");
  assert_int_equal(calhost(&out, &err, "--json", "calibrate", "--force", NULL), 0);
  assert_non_null(strstr(out, "\"budget_seconds\":30"));
  free(out);
  free(err);
}

static int setup(void **state) {
  (void)state;
  const char *b = getenv("CALHOST_BUILD_DIR");
  snprintf(g_build, sizeof g_build, "%s", b ? b : ".");
  /* calhost (a child, run natively) and this process must see the same
   * kernels: under valgrind this process sees no AVX-512 (valgrind does
   * not emulate it) while the child does, so the child is capped at what
   * this process detects (a no-op natively; an explicit cap is kept) */
  if (!getenv("CALHOST_CPU_GEMM_MAX_ISA"))
    setenv("CALHOST_CPU_GEMM_MAX_ISA", gemm_isa_name(gemm_isa_detect()), 1);
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-search-XXXXXX");
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
      cmocka_unit_test(budget_and_strategy_bound_the_evaluations),
      cmocka_unit_test(rigor_levels_map_onto_strategies),
      cmocka_unit_test(record_writes_a_space_that_replays),
      cmocka_unit_test(described_parameters_are_recorded_by_name),
      cmocka_unit_test(bad_strategies_and_budgets_are_refused),
  };
  return cmocka_run_group_tests_name("calibrate --strategy/--budget/--record", tests, setup,
                                     teardown);
}
