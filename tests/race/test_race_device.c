/*
 * test_race_device.c: race_device: the race of device backends (issue 38:
 * "on a device, compare only backends on that device"), end to end through
 * bin/calhost and the runtime with the two OpenCL backends on this
 * machine's OpenCL device (PoCL in CI) and cpu_gemm (portable kernels) on
 * the CPU:
 *   - calibrate races opencl_gemm and clblast on their device (a line
 *     "race mm device NAME (... clock):", one race_id shared by both
 *     exact profiles, which name the device), and cpu_gemm, alone on the
 *     CPU, is in no race: a device race never takes a CPU backend;
 *   - lookup --workload --device 0 (no --plugin), --explain and
 *     calhost_runtime_choose on that device follow the race's first-ranked
 *     backend, and follow it the other way when the store's race is
 *     rewritten (the test does not depend on which backend is faster here);
 *   - the rule compares races per device (runtime_race_choose, unit cases);
 *   - model bench --device 0 on a model calibrated with them
 *     (tests/race/make_model.py) times both on the device, each node on
 *     the race's first-ranked backend (the runtime's choice there), and
 *     names the device and the clock; without --device the note says how
 *     to time the device.
 * A machine without an OpenCL device skips.
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

#include "calhost/calstore.h"
#include "calhost/runtime.h"
#include "race_common.h"
#include "runtime/race.h"

static int g_have_device;

/* PoCL's kernel cache in the build tree: it compiles each kernel once for
 * every run of the test, not in every calibrate (minutes on a loaded
 * machine) */
static char g_pocl_cache[1100];
static const char *const g_env[] = {g_pocl_cache, NULL};

static int setup(void **state) {
  (void)state;
  if (race_setup("race-device", g_env))
    return -1;
  snprintf(g_pocl_cache, sizeof g_pocl_cache, "POCL_CACHE_DIR=%s/pocl-cache", race_build);
  const char *pl = "lib/calhost/plugins";
  /* time_budget: the default 60 s a plugin is an operator's choice, not
   * what this test checks; on a loaded 2-core machine (CI with the other
   * core busy) PoCL's compiles for two nodes' sweeps took more, and
   * opencl_gemm's second node was left "time budget exhausted" */
  if (race_write_config("[plugins]\npaths = %s/%s/cpu_gemm.so, %s/%s/opencl_gemm.so, "
                        "%s/%s/clblast.so\nenabled = cpu_gemm, opencl_gemm, clblast\n"
                        "[plugin cpu_gemm]\nmax_isa = portable\n[calibration]\nthreads = 1\n"
                        "rigor = quick\ntime_budget = 300s\n[workload mm]\n"
                        "operator = MatMul\ndtype = float32\nshape = 64,64,64\n",
                        race_build, pl, race_build, pl, race_build, pl))
    return -1;
  /* an OpenCL device for both backends, or the device tests skip */
  char *out, *err;
  int rc = RUN(&out, &err, "devices", "--json");
  g_have_device = rc == 0 && out && strstr(out, "\"backend\":\"opencl_gemm\"") &&
                  strstr(out, "\"backend\":\"clblast\"") && strstr(out, "\"identity\":");
  free(out);
  free(err);
  return 0;
}

/* ---- the store's races -------------------------------------------------- */

enum { CPU_GEMM, OPENCL_GEMM, CLBLAST, NB };
static const char *const names[NB] = {"cpu_gemm", "opencl_gemm", "clblast"};

typedef struct seen {
  int found[NB];
  int raced[NB];
  runtime_race race[NB];
  char processor[NB][600];
} seen;

static int index_of(const char *backend) {
  for (int i = 0; i < NB; i++)
    if (!strcmp(backend, names[i]))
      return i;
  return -1;
}

static int visit(void *user, const calstore_profile *p) {
  seen *s = user;
  int i = index_of(p->key.backend);
  if (p->key.kind != CALSTORE_KEY_EXACT || p->source != CALSTORE_SOURCE_CALIBRATED || i < 0)
    return 0;
  s->found[i]++;
  s->raced[i] = runtime_race_read(p, &s->race[i]);
  snprintf(s->processor[i], sizeof s->processor[i], "%s", p->key.processor);
  return 0;
}

static void read_races(seen *s) {
  memset(s, 0, sizeof *s);
  assert_int_equal(calstore_read_file(race_store, visit, s, NULL, NULL, NULL), CALSTORE_OK);
}

/* lookup --workload mm --device 0 (no --plugin) answers `backend` by the
 * race, and so does the runtime on device 0. */
static void device_choice_is(const char *backend) {
  char *out, *err, want[64];
  int rc = RUN(&out, &err, "lookup", "--workload", "mm", "--device", "0", "--explain");
  if (rc != 0)
    fail_msg("lookup: %d\n%s\n%s", rc, out, err);
  snprintf(want, sizeof want, "lookup %s MatMul", backend);
  if (!strstr(out, want) || !strstr(out, "backend chosen by race") || !strstr(out, "on device "))
    fail_msg("lookup --device 0 did not follow the device race to %s:\n%s", backend, out);
  free(out);
  free(err);
  calhost_runtime *rt = race_runtime_open("0", NULL);
  char e[2048];
  calhost_runtime_choice *c = NULL;
  assert_int_equal(calhost_runtime_choose(rt, "mm", 1, &c, e, sizeof e), CALHOST_RUNTIME_OK);
  assert_non_null(c->backend);
  assert_string_equal(c->backend, backend);
  assert_int_equal(c->rule, CALHOST_RUNTIME_RULE_RACE);
  for (size_t i = 0; i < c->candidate_count; i++)
    if (!strcmp(c->candidates[i].backend, backend))
      assert_int_equal(c->candidates[i].race_rank, 1);
  calhost_runtime_choice_free(&c);
  calhost_runtime_close(&rt);
}

/* ---- tests -------------------------------------------------------------- */

static void device_backends_race_on_their_device(void **state) {
  (void)state;
  if (!g_have_device)
    skip(); /* no OpenCL device on this machine */
  char *out, *err;
  int rc = RUN(&out, &err, "calibrate");
  if (rc != 0)
    fail_msg("calibrate: %d\n%s\n%s", rc, out, err);
  const char *line = strstr(out, "race mm device ");
  if (!line)
    fail_msg("no device race:\n%s\n%s", out, err);
  const char *end = strchr(line, '\n');
  assert_non_null(end);
  char race_line[2048];
  snprintf(race_line, sizeof race_line, "%.*s", (int)(end - line), line);
  assert_non_null(strstr(race_line, " clock):"));
  assert_non_null(strstr(race_line, "opencl_gemm "));
  assert_non_null(strstr(race_line, "clblast "));
  assert_null(strstr(race_line, "cpu_gemm"));   /* a CPU backend is never a device's entrant */
  assert_null(strstr(out, "race mm threads=")); /* cpu_gemm alone on the CPU: no race */
  free(out);
  free(err);

  seen s;
  read_races(&s);
  for (int i = 0; i < NB; i++)
    assert_int_equal(s.found[i], 1);
  assert_false(s.raced[CPU_GEMM]);
  assert_true(s.raced[OPENCL_GEMM] && s.raced[CLBLAST]);
  assert_true(s.race[OPENCL_GEMM].id == s.race[CLBLAST].id);
  assert_int_equal(s.race[OPENCL_GEMM].entrants, 2);
  assert_int_equal(s.race[OPENCL_GEMM].rank + s.race[CLBLAST].rank, 3); /* 1 and 2 */
  /* the racing rule's record: the rounds each winner took */
  assert_true(s.race[OPENCL_GEMM].rounds >= 1 && s.race[CLBLAST].rounds >= 1);
  /* both keys name the one device (clblast's adds its version after it) */
  assert_true(
      !strncmp(s.processor[CLBLAST], s.processor[OPENCL_GEMM], strlen(s.processor[OPENCL_GEMM])));
  assert_true(!strncmp(s.processor[OPENCL_GEMM], "opencl:", 7));

  const char *first = s.race[OPENCL_GEMM].rank == 1 ? "opencl_gemm" : "clblast";
  const char *second = s.race[OPENCL_GEMM].rank == 1 ? "clblast" : "opencl_gemm";
  device_choice_is(first);
  /* the store's race the other way: the choice follows it */
  assert_int_equal(race_rig_first(second, 2), 2);
  device_choice_is(second);
  assert_int_equal(race_rig_first(first, 2), 2);
  device_choice_is(first);

  /* calibrate again: nothing new, no race again */
  rc = RUN(&out, &err, "calibrate");
  assert_int_equal(rc, 0);
  assert_null(strstr(out, "race mm device "));
  free(out);
  free(err);
}

/* The rule compares races per device: a CPU race and a device race are
 * never compared (the device of the first raced entry in the loader's
 * order decides), a race id shared across devices is no race, and the
 * first-ranked entry of a race is chosen, not the lowest latency (a tie
 * settled by the tie rule). */
static void races_are_compared_per_device(void **state) {
  (void)state;
  const char *dev = "opencl:PoCL/cpu";
  runtime_race cpu_a = {.id = 10, .latency_us = 5, .default_us = NAN, .entrants = 2, .rank = 1};
  runtime_race cpu_b = {.id = 10, .latency_us = 6, .default_us = NAN, .entrants = 2, .rank = 2};
  runtime_race dev_c = {.id = 20, .latency_us = 9, .default_us = NAN, .entrants = 2, .rank = 2};
  runtime_race dev_d = {.id = 20, .latency_us = 3, .default_us = NAN, .entrants = 2, .rank = 1};
  runtime_race_entry e[4] = {{"c", 1, dev_c, 1, dev},
                             {"d", 1, dev_d, 1, dev},
                             {"a", 1, cpu_a, 1, NULL},
                             {"b", 1, cpu_b, 1, NULL}};
  const char *rule;
  /* c sorts first: its device's race (20) decides: d; the CPU's race
   * (older, and never compared with it) does not */
  assert_int_equal(runtime_race_choose(e, 4, NULL, 0, &rule), 1);
  assert_string_equal(rule, "race");
  /* the CPU backends first: the CPU's race decides, although the device's
   * is later (the old rule: the latest race, d) */
  runtime_race_entry f[4] = {e[2], e[3], e[0], e[1]};
  assert_int_equal(runtime_race_choose(f, 4, NULL, 0, &rule), 0);
  assert_string_equal(rule, "race");
  /* one race id on two devices is no race between them */
  runtime_race_entry g[3] = {
      {"x", 1, dev_c, 1, dev}, {"y", 1, dev_d, 1, "opencl:other"}, {"z", 1, cpu_a, 1, NULL}};
  assert_int_equal(runtime_race_choose(g, 3, NULL, 0, &rule), 0);
  assert_string_equal(rule, "first");
  /* a tie settled by the tie rule: rank 1 is chosen though slower */
  runtime_race t1 = {
      .id = 30, .latency_us = 10.1, .default_us = NAN, .entrants = 2, .rank = 1, .tie = 2};
  runtime_race t2 = {
      .id = 30, .latency_us = 10.0, .default_us = NAN, .entrants = 2, .rank = 2, .tie = 2};
  runtime_race_entry h[2] = {{"p", 1, t2, 1, NULL}, {"q", 1, t1, 1, NULL}};
  assert_int_equal(runtime_race_choose(h, 2, NULL, 0, &rule), 1);
  /* the tie is recorded and read back */
  calstore_measurement m[RUNTIME_RACE_MEASUREMENTS];
  size_t n = 0;
  runtime_race_append(&t1, m, &n);
  calstore_profile p = {.measurements = m, .measurement_count = n};
  runtime_race back;
  assert_int_equal(runtime_race_read(&p, &back), 1);
  assert_int_equal(back.tie, 2);
  assert_int_equal(back.rank, 1);
}

/* The backend of node `node` (of workload `workload`) in model bench's
 * JSON (into buf). */
static void bench_node_backend(const char *json, const char *node, const char *workload, char *buf,
                               size_t cap) {
  char want[128];
  snprintf(want, sizeof want, "\"name\":\"%s\",\"workload\":\"%s\",\"backend\":\"", node, workload);
  const char *p = strstr(json, want);
  if (!p)
    fail_msg("model bench names no node %s:\n%s", node, json);
  p += strlen(want);
  const char *e = strchr(p, '"');
  assert_non_null(e);
  snprintf(buf, cap, "%.*s", (int)(e - p), p);
}

/* model bench --device 0 (issue 38 item 3, "on a device, the device's
 * time"): a model calibrated with opencl_gemm and clblast on the OpenCL
 * device; the bench times both there (each tuned total measured), each
 * node's backend is the race's first-ranked one (the runtime's choice on
 * device 0, rule race), the device and the clock are named; without
 * --device the CPU bench's note names --device. */
static void model_bench_on_the_device(void **state) {
  (void)state;
  if (!g_have_device)
    skip(); /* no OpenCL device on this machine */
  assert_int_equal(race_make_model(), 0);
  char *out, *err;
  int rc = RUN(&out, &err, "calibrate", "--model", race_model);
  if (rc != 0 || !strstr(out, "race pair.q device ") || !strstr(out, "race pair.out device "))
    fail_msg("calibrate --model: %d\n%s\n%s", rc, out, err);
  free(out);
  free(err);

  rc = RUN(&out, &err, "model", "bench", race_model, "--device", "0", "--json");
  if (rc != 0)
    fail_msg("model bench --device 0: %d\n%s\n%s", rc, out, err);
  assert_non_null(strstr(out, "\"device_spec\":\"0\""));
  assert_non_null(strstr(out, "\"device\":\"opencl:"));
  if (!strstr(out, "\"clock\":\"host\"") && !strstr(out, "\"clock\":\"device\""))
    fail_msg("model bench names no clock:\n%s", out);
  const char *const timed[] = {"opencl_gemm", "clblast"};
  for (int i = 0; i < 2; i++) {
    char want[160];
    snprintf(want, sizeof want,
             "\"name\":\"%s tuned\",\"backend\":\"%s\",\"kind\":\"tuned\",\"total_us\":", timed[i],
             timed[i]);
    const char *p = strstr(out, want);
    if (!p || !(p[strlen(want)] >= '0' && p[strlen(want)] <= '9'))
      fail_msg("model bench --device 0 did not time %s:\n%s", timed[i], out);
  }
  assert_null(strstr(out, "\"name\":\"cpu_gemm tuned\"")); /* a CPU backend: not on the device */
  assert_non_null(strstr(out, "\"name\":\"calhost selection\",\"backend\":null,"
                              "\"kind\":\"selection\",\"total_us\":"));

  /* each node's backend: the race's first-ranked on device 0 */
  const calhost_runtime_model *m = NULL;
  calhost_runtime *rt = race_runtime_open("0", &m);
  char e[2048];
  const char *const nodes[] = {"q", "k", "out"};
  const char *const workloads[] = {"pair.q", "pair.q", "pair.out"};
  for (int i = 0; i < 3; i++) {
    calhost_runtime_choice *c = NULL;
    assert_int_equal(calhost_runtime_choose(rt, workloads[i], 0, &c, e, sizeof e),
                     CALHOST_RUNTIME_OK);
    assert_non_null(c->backend);
    assert_int_equal(c->rule, CALHOST_RUNTIME_RULE_RACE);
    const char *first = NULL;
    for (size_t k = 0; k < c->candidate_count; k++)
      if (c->candidates[k].race_rank == 1)
        first = c->candidates[k].backend;
    assert_non_null(first);
    assert_string_equal(c->backend, first);
    char got[64];
    bench_node_backend(out, nodes[i], workloads[i], got, sizeof got);
    if (strcmp(got, first))
      fail_msg("model bench gives node %s %s, the race ranked %s first:\n%s", nodes[i], got, first,
               out);
    calhost_runtime_choice_free(&c);
  }
  calhost_runtime_close(&rt);
  free(out);
  free(err);

  /* text: the device named; without --device the note says how */
  rc = RUN(&out, &err, "model", "bench", race_model, "--device", "0");
  assert_int_equal(rc, 0);
  if (!strstr(out, "device 0, ") || !strstr(out, " clock, interleaved") ||
      !strstr(out, "\ndevice 0: opencl:"))
    fail_msg("model bench --device 0 does not name the device and clock:\n%s", out);
  free(out);
  free(err);
  rc = RUN(&out, &err, "model", "bench", race_model);
  if (rc == 2 || !strstr(out, "note: opencl_gemm drives devices: not timed on the CPUs (time its "
                              "device with model bench --device N"))
    fail_msg("model bench without --device: %d\n%s\n%s", rc, out, err);
  free(out);
  free(err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(device_backends_race_on_their_device),
      cmocka_unit_test(races_are_compared_per_device),
      cmocka_unit_test(model_bench_on_the_device),
  };
  return cmocka_run_group_tests_name("race_device", tests, setup, race_teardown);
}
