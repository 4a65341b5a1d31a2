/*
 * test_race_model.c: a model's nodes chosen across backends (issue 38),
 * with cpu_gemm (limited to its portable kernels) and openblas: lookup
 * --model without --plugin asks every enabled plugin (cpu_gemm sorts first;
 * a model calibrated by openblas alone still answers openblas), calibrate
 * races the two on each structure, lookup --model and
 * calhost_runtime_choose_model follow the race recorded in the store (set
 * both ways here, so nothing depends on this machine's speeds), and
 * [model NAME] backends pins a backend.
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

#include "calhost/calstore.h"
#include "calhost/runtime.h"
#include "harness.h"
#include "race_common.h"
#include "runtime/race.h"

static void write_config(const char *extra) {
  assert_int_equal(race_write_config("[plugins]\ndirectories = %s/lib/calhost/plugins\n"
                                     "enabled = cpu_gemm, openblas\n[calibration]\nthreads = 1\n"
                                     "rigor = quick\n[plugin cpu_gemm]\nmax_isa = portable\n%s",
                                     race_build, extra ? extra : ""),
                   0);
}

static int setup(void **state) {
  (void)state;
  if (race_setup("race-model", NULL))
    return -1;
  return race_make_model();
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* The runtime's choice of every node: each is `backend`. */
static void runtime_nodes_are(const char *backend, calhost_runtime_rule rule) {
  const calhost_runtime_model *m = NULL;
  calhost_runtime *rt = race_runtime_open(NULL, &m);
  char err[1024];
  calhost_runtime_model_choice *c = NULL;
  assert_int_equal(calhost_runtime_choose_model(rt, m, 0, &c, err, sizeof err), CALHOST_RUNTIME_OK);
  assert_int_equal(c->struct_size, sizeof *c);
  assert_int_equal(c->node_count, 3);
  assert_int_equal(c->chosen_count, 3);
  for (size_t i = 0; i < c->node_count; i++) {
    const calhost_runtime_node_choice *n =
        (const calhost_runtime_node_choice *)((const char *)c->nodes + i * c->node_stride);
    assert_int_equal(n->struct_size, sizeof *n);
    assert_string_equal(n->node, m->nodes[i].name);
    assert_non_null(n->backend);
    assert_string_equal(n->backend, backend);
    assert_non_null(n->policy);
    assert_non_null(n->plugin);
    assert_int_equal(n->level, CALSTORE_LEVEL_EXACT_CALIBRATED);
    assert_int_equal(n->rule, rule);
    if (rule == CALHOST_RUNTIME_RULE_RACE)
      assert_true(n->race_latency_us == 10.0);
  }
  calhost_runtime_model_choice_free(&c);
  assert_null(c);
  calhost_runtime_close(&rt);
}

static void lookup_model_asks_every_plugin(void **state) {
  (void)state;
  char *out;
  write_config(NULL);
  int rc = RUN(&out, NULL, "calibrate", "--model", race_model, "--plugin", "openblas");
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  free(out);
  /* cpu_gemm sorts first and has no profile: openblas answers each node */
  rc = RUN(&out, NULL, "lookup", "--model", race_model, "--explain");
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  assert_int_equal(count(out, "exact_calibrated openblas:"), 3);
  assert_int_equal(count(out, "backend chosen by loader order: openblas: no race recorded"), 3);
  free(out);
  runtime_nodes_are("openblas", CALHOST_RUNTIME_RULE_FIRST);
}

static void lookup_model_follows_the_race(void **state) {
  (void)state;
  char *out;
  write_config(NULL);
  int rc = RUN(&out, NULL, "calibrate", "--model", race_model);
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  /* both structures raced: openblas calibrated before, cpu_gemm now */
  assert_non_null(strstr(out, "race pair.q threads=1: "));
  assert_non_null(strstr(out, "race pair.out threads=1: "));
  free(out);
  /* 2 structures x 2 backends carry a race */
  assert_int_equal(race_rig_first("cpu_gemm", 0), 4);
  rc = RUN(&out, NULL, "lookup", "--model", race_model, "--explain");
  assert_int_equal(rc, 0);
  assert_int_equal(count(out, "exact_calibrated cpu_gemm:"), 3);
  assert_int_equal(count(out, "backend chosen by race: cpu_gemm: fastest of 2"), 3);
  free(out);
  runtime_nodes_are("cpu_gemm", CALHOST_RUNTIME_RULE_RACE);
  assert_int_equal(race_rig_first("openblas", 0), 4);
  rc = RUN(&out, NULL, "lookup", "--model", race_model, "--json");
  assert_int_equal(rc, 0);
  assert_int_equal(count(out, "\"backend\":\"openblas\""), 3);
  assert_int_equal(count(out, "\"chosen_by\":\"race\""), 3);
  free(out);
  runtime_nodes_are("openblas", CALHOST_RUNTIME_RULE_RACE);
  /* --plugin still asks that plugin alone */
  rc = RUN(&out, NULL, "lookup", "--model", race_model, "--plugin", "cpu_gemm");
  assert_int_equal(rc, 0);
  assert_int_equal(count(out, "exact_calibrated cpu_gemm:"), 3);
  free(out);
}

static void model_section_pins_a_backend(void **state) {
  (void)state;
  char *out, extra[800];
  snprintf(extra, sizeof extra, "[model pair]\nfile = %s\nbackends = cpu_gemm\n", race_model);
  write_config(extra); /* openblas won the race last (above) */
  int rc = RUN(&out, NULL, "lookup", "--model", race_model, "--explain");
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  assert_int_equal(count(out, "exact_calibrated cpu_gemm:"), 3);
  assert_int_equal(
      count(out, "backend chosen by configuration: cpu_gemm: the first backend of [model pair] "
                 "backends with a profile"),
      3);
  free(out);
  runtime_nodes_are("cpu_gemm", CALHOST_RUNTIME_RULE_CONFIGURED);
  write_config(NULL);
}

/* model bench: every total measured, the selection's total, each node's
 * share; then its model view in headless Chromium (not blank, every SVG
 * element parsed). */
static void model_bench_and_its_report(void **state) {
  (void)state;
  char *out;
  write_config(NULL);
  int rc = RUN(&out, NULL, "model", "bench", race_model, "--json");
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "\"command\":\"model bench\""));
  assert_non_null(strstr(out, "\"calibrated_nodes\":3"));
  assert_int_equal(count(out, "\"kind\":\"selection\""), 1);
  assert_int_equal(count(out, "\"kind\":\"tuned\""), 2);
  assert_int_equal(count(out, "\"kind\":\"default\""), 2);
  assert_int_equal(count(out, "\"share\":"), 3);
  assert_null(strstr(out, "\"total_us\":null"));
  char bench[600], html[600], png[600], dom[600], cmd[4096];
  snprintf(bench, sizeof bench, "%s/bench.json", race_dir);
  FILE *f = fopen(bench, "w");
  assert_non_null(f);
  fputs(out, f);
  fclose(f);
  free(out);
  /* the text form: the totals side by side */
  rc = RUN(&out, NULL, "model", "bench", race_model);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "calhost selection"));
  assert_non_null(strstr(out, "cpu_gemm default"));
  assert_non_null(strstr(out, "openblas tuned"));
  free(out);
  snprintf(html, sizeof html, "%s/model.html", race_dir);
  rc = RUN(&out, NULL, "report", bench, "--html", html);
  assert_int_equal(rc, 0);
  free(out);
  char *page = harness_slurp_or_empty(html, NULL);
  assert_non_null(strstr(page, "Model report"));
  assert_non_null(strstr(page, "calhost selection"));
  assert_int_equal(count(page, "<tr><td><code>"), 3); /* one row per node */
  if (access("/usr/bin/chromium", X_OK) != 0)
    fail_msg("no chromium: install the Debian package `chromium` (scripts/setup.sh deps)");
  snprintf(png, sizeof png, "%s/model.png", race_dir);
  snprintf(dom, sizeof dom, "%s/model.dom", race_dir);
  const char *flags = "--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run "
                      "--disable-extensions --disable-dev-shm-usage";
  snprintf(cmd, sizeof cmd,
           "timeout 120 /usr/bin/chromium %s --user-data-dir='%s/chromium-profile' "
           "--screenshot='%s' --window-size=1200,900 'file://%s' >/dev/null 2>&1",
           flags, race_dir, png, html);
  assert_int_equal(system(cmd), 0);
  const char *src = getenv("CALHOST_SOURCE_DIR");
  snprintf(cmd, sizeof cmd, "python3 '%s/tests/report/png_check.py' '%s'", src ? src : ".", png);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  unsigned w = 0, h = 0, colours = 0;
  int top = -1;
  double nonwhite = 0;
  assert_int_equal(fscanf(p, "%u %u %lf %u %d", &w, &h, &nonwhite, &colours, &top), 5);
  assert_int_equal(pclose(p), 0);
  assert_int_equal(w, 1200);
  assert_true(nonwhite > 0.01 && nonwhite < 0.6);
  assert_true(colours > 20); /* the bars' colours beside the text */
  assert_true(top >= 0 && top < 200);
  snprintf(cmd, sizeof cmd,
           "timeout 120 /usr/bin/chromium %s --user-data-dir='%s/chromium-profile' --dump-dom "
           "'file://%s' >'%s' 2>/dev/null",
           flags, race_dir, html, dom);
  assert_int_equal(system(cmd), 0);
  char *parsed = harness_slurp_or_empty(dom, NULL);
  assert_true(count(parsed, "<svg") >= 4); /* the totals chart and a share bar per node */
  assert_int_equal(count(parsed, "<svg"), count(page, "<svg"));
  assert_int_equal(count(parsed, "<rect"), count(page, "<rect"));
  free(parsed);
  free(page);
}

/* Issue 38's "done when", on this machine's own race (nothing rigged):
 * calibrate --model races both backends per structure; the runtime hands
 * each node the backend whose winner was fastest in the recorded race
 * (calhost_runtime_choose_model, rule race); model bench times that very
 * selection (its nodes' backends are the runtime's), and with --rounds
 * states each total as the median of its rounds with the ratio's spread. */
static void calibrate_then_bench_hands_the_race_winner(void **state) {
  (void)state;
  char *out;
  write_config(NULL);
  unlink(race_store);
  int rc = RUN(&out, NULL, "calibrate", "--model", race_model);
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  assert_int_equal(count(out, " threads=1: "), 2); /* one race per structure */
  free(out);
  const calhost_runtime_model *m = NULL;
  calhost_runtime *rt = race_runtime_open(NULL, &m);
  char err[1024];
  calhost_runtime_model_choice *mc = NULL;
  assert_int_equal(calhost_runtime_choose_model(rt, m, 0, &mc, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_int_equal(mc->chosen_count, 3);
  char expect[3][64];
  for (size_t i = 0; i < mc->node_count; i++) {
    const calhost_runtime_node_choice *n =
        (const calhost_runtime_node_choice *)((const char *)mc->nodes + i * mc->node_stride);
    assert_non_null(n->backend);
    assert_int_equal(n->rule, CALHOST_RUNTIME_RULE_RACE);
    assert_true(n->race_latency_us > 0);
    /* the first-ranked of the race the store records for the node's
     * structure: the fastest, unless a tie within the noise (the tie rule) */
    calhost_runtime_choice *c = NULL;
    assert_int_equal(calhost_runtime_choose(rt, n->workload, 0, &c, err, sizeof err),
                     CALHOST_RUNTIME_OK);
    assert_int_equal(c->candidate_count, 2);
    for (size_t k = 0; k < c->candidate_count; k++) {
      assert_true(c->candidates[k].raced);
      assert_true(c->candidates[k].race_id == c->candidates[0].race_id);
      if (!strcmp(c->candidates[k].backend, n->backend))
        assert_int_equal(c->candidates[k].race_rank, 1);
      else
        assert_true(n->race_latency_us <= c->candidates[k].race_latency_us ||
                    c->candidates[k].race_tie >= 2);
    }
    calhost_runtime_choice_free(&c);
    snprintf(expect[i], sizeof expect[i], "\"name\":\"%s\",\"workload\":\"%s\",\"backend\":\"%s\"",
             n->node, n->workload, n->backend);
  }
  calhost_runtime_model_choice_free(&mc);
  calhost_runtime_close(&rt);
  rc = RUN(&out, NULL, "model", "bench", race_model, "--rounds", "2", "--json");
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  for (size_t i = 0; i < 3; i++)
    if (!strstr(out, expect[i]))
      fail_msg("model bench does not time the runtime's choice %s:\n%s", expect[i], out);
  assert_non_null(strstr(out, "\"rounds\":2"));
  assert_int_equal(count(out, "\"round_totals_us\":["), 5);
  assert_null(strstr(out, "\"round_totals_us\":[null"));
  assert_non_null(strstr(out, "\"selection_vs_best_tuned\":{\"median\":"));
  assert_null(strstr(out, "\"selection_vs_best_tuned\":{\"median\":null"));
  free(out);
  rc = RUN(&out, NULL, "model", "bench", race_model, "--rounds", "0");
  assert_int_equal(rc, 2);
  assert_non_null(strstr(out, "--rounds"));
  free(out);
  rc = RUN(&out, NULL, "model", "show", race_model, "--rounds", "2");
  assert_int_equal(rc, 2);
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lookup_model_asks_every_plugin),
      cmocka_unit_test(lookup_model_follows_the_race),
      cmocka_unit_test(model_section_pins_a_backend),
      cmocka_unit_test(model_bench_and_its_report),
      cmocka_unit_test(calibrate_then_bench_hands_the_race_winner),
  };
  return cmocka_run_group_tests_name("race_model", tests, setup, race_teardown);
}
