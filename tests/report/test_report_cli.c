/*
 * test_report_cli.c: the report through bin/calhost (from CALHOST_BUILD_DIR):
 *  - `calhost report RUN.json --html OUT` writes the page; a missing run
 *    file or a missing --html is an error (exit 2) naming what is wrong;
 *  - `calhost calibrate --report DIR` (DIR created with its parents) writes
 *    DIR/run.json and DIR/report.html, with every candidate of each sweep:
 *    a good test plugin's candidates measured or pruned, a plugin that
 *    refuses every policy with each candidate rejected and its reason;
 *  - the page renders in headless Chromium: the screenshot is not blank
 *    and the browser's DOM holds the SVG charts of the source (Chromium
 *    is required: scripts/setup.sh installs it).
 */
#include <fcntl.h>
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
#include <jansson.h>

#include "harness.h"

static char g_build[1024], g_source[1024], g_dir[256], g_data[1200];

static size_t count(const char *hay, const char *needle) {
  size_t n = 0, k = strlen(needle);
  for (const char *p = strstr(hay, needle); p; p = strstr(p + k, needle))
    n++;
  return n;
}

static harness_result g_last; /* the last command's output */

/* Runs bin/calhost with args (NULL-terminated) with the harness's
 * environment (HOME and XDG in the temp dir); returns the exit status. */
static int calhost(const char *const *args) {
  harness_opts o = {.cwd = g_dir};
  return harness_run_program(NULL, &o, &g_last, args);
}

/* The last command's stderr (the caller frees). */
static char *err_text(void) {
  char *e = strdup(g_last.err ? g_last.err : "");
  assert_non_null(e);
  return e;
}

static void copy_file(const char *from, const char *to) {
  char *cmd = malloc(4096);
  snprintf(cmd, 4096, "cp '%s' '%s'", from, to);
  assert_int_equal(system(cmd), 0);
  free(cmd);
}

/* ---- calhost report ------------------------------------------------------ */

static void report_command_writes_the_page(void **state) {
  (void)state;
  char out[400];
  snprintf(out, sizeof out, "%s/page.html", g_dir);
  const char *ok[] = {"report", g_data, "--html", out, NULL};
  assert_int_equal(calhost(ok), 0);
  char *html = harness_slurp_or_empty(out, NULL);
  assert_true(count(html, "<svg class=\"chart candidates\"") >= 4);
  free(html);

  char missing[400];
  snprintf(missing, sizeof missing, "%s/no-such-run.json", g_dir);
  const char *bad[] = {"report", missing, "--html", out, NULL};
  assert_int_equal(calhost(bad), 2);
  char *e = err_text();
  assert_non_null(strstr(e, missing));
  free(e);
  const char *no_html[] = {"report", g_data, NULL};
  assert_int_equal(calhost(no_html), 2);
  e = err_text();
  assert_non_null(strstr(e, "--html"));
  free(e);
}

/* The page replaces OUT whole, never over its own input; another
 * command's JSON (verify's, which has results too) is refused by name. */
static void report_never_destroys_its_input_or_the_last_page(void **state) {
  (void)state;
  char run[400], page[400], verify[400];
  snprintf(run, sizeof run, "%s/own.json", g_dir);
  snprintf(page, sizeof page, "%s/own.html", g_dir);
  snprintf(verify, sizeof verify, "%s/verify.json", g_dir);
  copy_file(g_data, run);
  char *before = harness_slurp_or_empty(run, NULL);
  const char *self[] = {"report", run, "--html", run, NULL};
  assert_int_equal(calhost(self), 2);
  char *e = err_text(), *after = harness_slurp_or_empty(run, NULL);
  assert_non_null(strstr(e, "is the input itself"));
  assert_string_equal(after, before); /* the run file is intact */
  free(e);
  free(after);
  const char *ok[] = {"report", run, "--html", page, NULL};
  assert_int_equal(calhost(ok), 0);
  char *good = harness_slurp_or_empty(page, NULL);
  FILE *f = fopen(verify, "w");
  assert_non_null(f);
  fputs("{\"command\": \"verify\", \"results\": []}\n", f);
  fclose(f);
  const char *other[] = {"report", verify, "--html", page, NULL};
  assert_int_equal(calhost(other), 2);
  e = err_text();
  assert_non_null(strstr(e, "the JSON report of `calhost verify`, not of `calhost calibrate"));
  after = harness_slurp_or_empty(page, NULL);
  assert_string_equal(after, good); /* the last page stays */
  free(e);
  free(after);
  /* a FIFO nobody writes to is an empty input, at once (it used to wait
   * for a writer forever), and so is an empty file */
  char fifo[400];
  snprintf(fifo, sizeof fifo, "%s/nobody.fifo", g_dir);
  unlink(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  const char *from_fifo[] = {"report", fifo, "--html", page, NULL};
  assert_int_equal(calhost(from_fifo), 2);
  e = err_text();
  assert_non_null(strstr(e, "nobody.fifo: empty (nothing was written to it)"));
  after = harness_slurp_or_empty(page, NULL);
  assert_string_equal(after, good);
  free(e);
  free(after);
  free(good);
  free(before);
}

/* ---- calhost calibrate --report ------------------------------------------ */

static const json_t *result_of(const json_t *run, const char *plugin) {
  const json_t *res = json_object_get(run, "results");
  for (size_t i = 0; i < json_array_size(res); i++) {
    const json_t *r = json_array_get(res, i);
    const char *p = json_string_value(json_object_get(r, "plugin"));
    if (p && !strcmp(p, plugin))
      return r;
  }
  return NULL;
}

static void calibrate_report_keeps_every_candidate(void **state) {
  (void)state;
  char plugins[400], cfg[400], store[400], text[2048], from[1400], to[600];
  snprintf(plugins, sizeof plugins, "%s/plugins", g_dir);
  mkdir(plugins, 0700);
  const char *names[] = {"test_good", "test_refuse_all"};
  for (size_t i = 0; i < 2; i++) {
    snprintf(from, sizeof from, "%s/lib/calhost/test-plugins/%s.so", g_build, names[i]);
    snprintf(to, sizeof to, "%s/%s.so", plugins, names[i]);
    copy_file(from, to);
  }
  snprintf(cfg, sizeof cfg, "%s/calhost.ini", g_dir);
  snprintf(store, sizeof store, "%s/store.txt", g_dir);
  snprintf(text, sizeof text,
           "[store]\npath = %s\n[plugins]\ndirectories = %s\nenabled = test_good, "
           "test_refuse_all\n[calibration]\nthreads = 1\nrigor = measure\ntime_budget = 10\n"
           "[workload sum_4k]\noperator = ReduceSum\nshape = 4096\n",
           store, plugins);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  char dir[400];
  snprintf(dir, sizeof dir, "%s/reports/first", g_dir); /* parents created too */
  const char *args[] = {"--config", cfg, "calibrate", "--report", dir, "--quiet", NULL};
  int rc = calhost(args);
  char *e = err_text();
  if (rc != 1)
    fprintf(stderr, "calhost said: %s\n", e);
  assert_int_equal(rc, 1); /* test_refuse_all fails; test_good is stored */
  free(e);

  char path[500];
  snprintf(path, sizeof path, "%s/run.json", dir);
  json_error_t je;
  json_t *run = json_load_file(path, 0, &je);
  assert_non_null(run);
  const json_t *good = result_of(run, "test_good"), *refuse = result_of(run, "test_refuse_all");
  assert_non_null(good);
  assert_non_null(refuse);
  /* test_good: its 4 candidates (no default), each measured or pruned, with
   * a median and samples; the winner is marked and is the fastest measured */
  const json_t *cs = json_object_get(good, "candidates");
  assert_int_equal(json_array_size(cs), 4);
  size_t winners = 0;
  double best = 1e300, win = -1;
  for (size_t i = 0; i < 4; i++) {
    const json_t *c = json_array_get(cs, i);
    const char *st = json_string_value(json_object_get(c, "status"));
    assert_non_null(st);
    assert_true(!strcmp(st, "measured") || !strcmp(st, "pruned"));
    assert_true(json_is_number(json_object_get(c, "median_us")));
    assert_true(json_integer_value(json_object_get(c, "samples")) >= 1);
    double m = json_number_value(json_object_get(c, "median_us"));
    if (!strcmp(st, "measured") && m < best)
      best = m;
    if (json_is_true(json_object_get(c, "winner")))
      winners++, win = m;
    if (!strcmp(st, "pruned"))
      assert_non_null(json_string_value(json_object_get(c, "reason")));
  }
  assert_int_equal(winners, 1);
  assert_float_equal(win, best, 0);
  /* test_refuse_all: every candidate rejected, with the validator's reason */
  cs = json_object_get(refuse, "candidates");
  assert_int_equal(json_array_size(cs), 4);
  for (size_t i = 0; i < 4; i++) {
    const json_t *c = json_array_get(cs, i);
    assert_string_equal(json_string_value(json_object_get(c, "status")), "rejected");
    assert_non_null(strstr(json_string_value(json_object_get(c, "reason")), "not a test policy"));
    assert_true(json_is_null(json_object_get(c, "median_us")));
  }
  json_decref(run);

  snprintf(path, sizeof path, "%s/report.html", dir);
  char *html = harness_slurp_or_empty(path, NULL);
  /* a chart for test_good; the failed sweep has no point to draw: a note */
  assert_int_equal(count(html, "<svg class=\"chart candidates\""), 1);
  assert_non_null(strstr(html, "No candidate was measured"));
  assert_true(count(html, "not a test policy") >= 4);
  assert_non_null(strstr(html, "test_refuse_all"));
  free(html);
}

/* ---- headless Chromium ---------------------------------------------------- */

static const char *find_chromium(void) {
  static const char *const names[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                                      "/usr/bin/google-chrome"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (access(names[i], X_OK) == 0)
      return names[i];
  return NULL;
}

static void page_renders_in_headless_chromium(void **state) {
  (void)state;
  const char *chromium = find_chromium();
  if (!chromium)
    fail_msg("no chromium: install the Debian package `chromium` (scripts/setup.sh deps)");
  char html[400], png[400], dom[400], cmd[4096];
  snprintf(html, sizeof html, "%s/render.html", g_dir);
  snprintf(png, sizeof png, "%s/render.png", g_dir);
  snprintf(dom, sizeof dom, "%s/render.dom", g_dir);
  const char *args[] = {"report", g_data, "--html", html, NULL};
  assert_int_equal(calhost(args), 0);
  const char *flags = "--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run "
                      "--disable-extensions --disable-dev-shm-usage";
  snprintf(cmd, sizeof cmd,
           "timeout 120 %s %s --user-data-dir='%s/chromium-profile' --screenshot='%s' "
           "--window-size=1200,2000 'file://%s' >'%s/chromium.log' 2>&1",
           chromium, flags, g_dir, png, html, g_dir);
  int rc = system(cmd);
  struct stat st;
  if (rc != 0 || stat(png, &st) != 0 || st.st_size == 0) {
    char log[500];
    snprintf(log, sizeof log, "%s/chromium.log", g_dir);
    char *text = harness_slurp_or_empty(log, NULL);
    fprintf(stderr, "chromium could not start (status %d): %.600s\n", rc, text);
    free(text);
    fail_msg("chromium did not render the page");
  }
  /* not blank: decode the PNG and count the pixels that are not white */
  snprintf(cmd, sizeof cmd, "python3 '%s/tests/report/png_check.py' '%s'", g_source, png);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  unsigned w = 0, h = 0, colours = 0;
  int top = -1;
  double nonwhite = 0;
  int got = fscanf(p, "%u %u %lf %u %d", &w, &h, &nonwhite, &colours, &top);
  assert_int_equal(pclose(p), 0);
  assert_int_equal(got, 5);
  fprintf(stderr, "screenshot %ux%u: %.1f%% not white, %u colours, content from row %d\n", w, h,
          nonwhite * 100, colours, top);
  assert_int_equal(w, 1200);
  assert_int_equal(h, 2000);
  assert_true(nonwhite > 0.02 && nonwhite < 0.6); /* text and charts on a white page */
  assert_true(colours > 50);                      /* charts: more than black on white */
  assert_true(top >= 0 && top < 200);             /* the title at the top */
  /* the browser's DOM holds the charts of the source (the SVG parsed) */
  snprintf(cmd, sizeof cmd,
           "timeout 120 %s %s --user-data-dir='%s/chromium-profile' --dump-dom 'file://%s' "
           ">'%s' 2>/dev/null",
           chromium, flags, g_dir, html, dom);
  assert_int_equal(system(cmd), 0);
  char *src = harness_slurp_or_empty(html, NULL), *parsed = harness_slurp_or_empty(dom, NULL);
  assert_true(count(parsed, "<svg") >= 4);
  assert_int_equal(count(parsed, "<svg"), count(src, "<svg"));
  assert_int_equal(count(parsed, "<circle"), count(src, "<circle"));
  assert_int_equal(count(parsed, "<rect"), count(src, "<rect"));
  free(src);
  free(parsed);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-report-XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  harness_result_free(&g_last);
  if (getenv("CALHOST_KEEP_TEST_DIR"))
    return 0;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const char *b = getenv("CALHOST_BUILD_DIR"), *s = getenv("CALHOST_SOURCE_DIR");
  snprintf(g_build, sizeof g_build, "%s", b ? b : "build");
  snprintf(g_source, sizeof g_source, "%s", s ? s : ".");
  snprintf(g_data, sizeof g_data, "%s/tests/report/data/run-quick.json", g_source);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(report_command_writes_the_page),
      cmocka_unit_test(report_never_destroys_its_input_or_the_last_page),
      cmocka_unit_test(calibrate_report_keeps_every_candidate),
      cmocka_unit_test(page_renders_in_headless_chromium),
  };
  return cmocka_run_group_tests_name("report_cli", tests, setup, teardown);
}
