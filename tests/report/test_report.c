/*
 * test_report.c: `calhost report` (host/report): the HTML page of a
 * recorded quick calibration (tests/report/data/run-quick.json, written by
 * a real `calhost calibrate --rigor quick --json`) has one candidate chart
 * per measured sweep, one point per candidate with samples and a heat map
 * where a parameter varies; hostile strings (markup, control characters,
 * invalid UTF-8) are escaped; the page is self-contained; policies parse
 * into parameters and the heat map has a cell per pair of values; broken
 * run files are refused by name; a run file without per-candidate data
 * still renders; the sweep's candidates fit in the child's record frame.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "report/internal.h"
#include "report/report.h"
#include "sweep/recording.h"
#include "sweep/records.h"

static char g_data[1024];

/* ---- helpers ------------------------------------------------------------ */

static char *render(const json_t *run) {
  char *buf = NULL, err[512] = "";
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  int rc = report_write_html(run, "run.json", f, err, sizeof err);
  fclose(f);
  if (rc != 0)
    fprintf(stderr, "render: %s\n", err);
  assert_int_equal(rc, 0);
  return buf;
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0, k = strlen(needle);
  for (const char *p = strstr(hay, needle); p; p = strstr(p + k, needle))
    n++;
  return n;
}

static json_t *load_recorded(void) {
  char err[512];
  json_t *run = report_load(g_data, err, sizeof err);
  if (!run)
    fprintf(stderr, "%s\n", err);
  assert_non_null(run);
  return run;
}

static void write_bytes(const char *path, const char *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, n, f), n);
  fclose(f);
}

/* The text between the n-th occurrence of open and the next close. */
static char *nth_block(const char *html, const char *open, const char *close, size_t n) {
  const char *p = html;
  for (size_t i = 0; p && i <= n; i++) {
    p = strstr(p, open);
    if (p && i < n)
      p += strlen(open);
  }
  if (!p)
    return NULL;
  const char *e = strstr(p, close);
  assert_non_null(e);
  return strndup(p, (size_t)(e - p));
}

/* ---- the recorded run ---------------------------------------------------- */

static void recorded_run_draws_a_chart_and_a_point_per_candidate(void **state) {
  (void)state;
  json_t *run = load_recorded();
  char *html = render(run);
  const json_t *res = json_object_get(run, "results");
  size_t charts = 0, measured_sweeps = 0;
  for (size_t i = 0; i < json_array_size(res); i++) {
    const json_t *r = json_array_get(res, i);
    if (!json_is_object(json_object_get(r, "measurements")))
      continue;
    /* the i-th candidate chart belongs to the i-th measured sweep: one point
     * (class "pt ...") per candidate with a median, one title per point */
    size_t with_median = 0;
    const json_t *cs = json_object_get(r, "candidates");
    for (size_t k = 0; k < json_array_size(cs); k++)
      with_median += json_is_number(json_object_get(json_array_get(cs, k), "median_us"));
    assert_true(with_median >= 1);
    char *svg = nth_block(html, "<svg class=\"chart candidates\"", "</svg>", measured_sweeps);
    assert_non_null(svg);
    assert_int_equal(count(svg, "class=\"pt "), with_median);
    assert_int_equal(count(svg, "<title>"), with_median);
    assert_int_equal(count(svg, "class=\"pt winner\""), 1);
    free(svg);
    measured_sweeps++;
  }
  charts = count(html, "<svg class=\"chart candidates\"");
  assert_true(measured_sweeps >= 4);
  assert_int_equal(charts, measured_sweeps);
  /* a section per measured sweep, and the summary first, the environment last */
  assert_int_equal(count(html, "<section class=\"result\""), measured_sweeps);
  const char *sum = strstr(html, "id=\"summary\""), *env = strstr(html, "id=\"environment\"");
  assert_non_null(sum);
  assert_non_null(env);
  assert_true(sum < strstr(html, "<section class=\"result\""));
  assert_true(env > strstr(html, "</section>"));
  /* the environment names the processor, the governor and every plugin version */
  assert_non_null(strstr(env, "governor"));
  assert_non_null(strstr(env, "1.1.0"));
  assert_non_null(strstr(env, "AuthenticAMD") ? strstr(env, "AuthenticAMD") : strstr(env, "x86"));
  free(html);
  json_decref(run);
}

static void recorded_run_has_heat_maps_where_parameters_vary(void **state) {
  (void)state;
  json_t *run = load_recorded();
  char *html = render(run);
  size_t maps = count(html, "<svg class=\"chart heatmap\"");
  /* every cpu_gemm sweep varies the kernel (at least two values) */
  size_t gemm = 0;
  const json_t *res = json_object_get(run, "results");
  for (size_t i = 0; i < json_array_size(res); i++) {
    const json_t *r = json_array_get(res, i);
    const char *p = json_string_value(json_object_get(r, "plugin"));
    gemm += p && !strcmp(p, "cpu_gemm") && json_is_object(json_object_get(r, "measurements"));
  }
  assert_true(gemm >= 2);
  assert_true(maps >= gemm);
  for (size_t i = 0; i < maps; i++) {
    char *svg = nth_block(html, "<svg class=\"chart heatmap\"", "</svg>", i);
    assert_true(count(svg, "<rect class=\"cell") >= 2);
    assert_int_equal(count(svg, "class=\"cell win\""), 1); /* the winner's cell is framed */
    free(svg);
  }
  assert_non_null(strstr(html, "kernel"));
  free(html);
  json_decref(run);
}

static void page_is_self_contained(void **state) {
  (void)state;
  json_t *run = load_recorded();
  char *html = render(run);
  assert_null(strstr(html, "http:"));
  assert_null(strstr(html, "https:"));
  assert_null(strstr(html, "<script"));
  assert_null(strstr(html, "<link"));
  assert_null(strstr(html, "<img"));
  assert_null(strstr(html, "<iframe"));
  assert_null(strstr(html, "@import"));
  assert_null(strstr(html, " src="));
  for (const char *p = strstr(html, "url("); p; p = strstr(p + 4, "url("))
    assert_int_equal(p[4], '#'); /* only the page's own gradients */
  assert_non_null(strstr(html, "<meta charset=\"utf-8\">"));
  free(html);
  json_decref(run);
}

/* ---- hostile strings ----------------------------------------------------- */

static int valid_utf8(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s);
  while (left) {
    size_t k = rpt_utf8_seq(p, left);
    if (!k)
      return 0;
    p += k, left -= k;
  }
  return 1;
}

static void hostile_strings_are_escaped(void **state) {
  (void)state;
  char path[] = "/tmp/calhost-report-hostile-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  /* raw invalid UTF-8 (\xff, an overlong '/', a lone continuation byte, a
   * surrogate) and escaped control characters in every kind of string */
  static const char run[] =
      "{\"calhost_version\":\"0.1.0<b>\",\"rigor\":\"quick\",\"environment\":{"
      "\"processor\":\"x86_64;model=</code><script>alert(1)</"
      "script>\",\"governor\":\"perf\\u001b[31m"
      "\",\"load_average\":[0.5,\"x\",null]},"
      "\"results\":[{\"plugin\":\"<script>alert('p')</script>\",\"implementation\":\"1\\u0000x\","
      "\"workload\":\"w\\\"><img src=x onerror=alert(1)>\",\"operator\":\"Op\\u0007\","
      "\"threads\":1,\"status\":\"stored\",\"message\":\"bad \xff\xfe bytes \xc0\xaf \x80 "
      "\xed\xa0\x80 end\",\"key\":{\"structure\":{\"<k>\":\"<v>\"}},"
      "\"winner\":\"a=<b>;c=&amp;\",\"winner_is_default\":false,"
      "\"measurements\":{\"median_latency_us\":5,\"spread_us\":0.5,\"cv\":0.1,"
      "\"samples\":5,\"speedup_vs_default\":2,\"default_median_latency_us\":10,\"noisy\":true},"
      "\"counts\":{\"candidates\":3,\"planned\":3,\"tried\":3,\"pruned\":1,\"rejected\":1},"
      "\"default_policy\":\"a=<i>;c=0\",\"rejected\":[],"
      "\"candidates\":["
      "{\"policy\":\"a=<i>;c=0\",\"default\":true,\"status\":\"measured\",\"median_us\":10,"
      "\"spread_us\":1,\"samples\":5},"
      "{\"policy\":\"a=<b>;c=&amp;\",\"winner\":true,\"status\":\"measured\",\"median_us\":5,"
      "\"spread_us\":0.5,\"samples\":5,\"noisy\":true},"
      "{\"policy\":\"a=\\u0001;c=</svg><script>\",\"status\":\"pruned\",\"reason\":"
      "\"slow\\u0002</td>\",\"median_us\":9,\"spread_us\":0,\"samples\":3},"
      "{\"policy\":\"a=\xff\",\"status\":\"rejected\",\"reason\":\"wrong output: <marquee>\","
      "\"median_us\":null}]}],"
      "\"failures\":[{\"plugin\":\"evil\",\"workload\":\"<w>\",\"threads\":1,\"candidate\":"
      "\"<c>\",\"message\":\"crashed <blink>\",\"output\":\"\\u001b]0;title\\u0007<pre>\"}],"
      "\"warnings\":[\"<warn>\\u0085 C1\"],\"seconds\":1.5,\"exit_status\":1}";
  /* \u0000 needs JSON_ALLOW_NUL in jansson: the loader must refuse it by
   * name, so first prove that, then use a string without it */
  write_bytes(path, run, sizeof run - 1);
  char err[512];
  json_t *j = report_load(path, err, sizeof err);
  assert_null(j);
  assert_non_null(strstr(err, path));
  char *fixed = strdup(run);
  char *nul = strstr(fixed, "\\u0000");
  memcpy(nul, "\\u0020", 6);
  write_bytes(path, fixed, strlen(fixed));
  free(fixed);
  j = report_load(path, err, sizeof err);
  if (!j)
    fprintf(stderr, "%s\n", err);
  assert_non_null(j);
  char *html = render(j);
  /* no markup from the run survives */
  assert_null(strstr(html, "<script"));
  assert_null(strstr(html, "<img"));
  assert_null(strstr(html, "<marquee"));
  assert_null(strstr(html, "<blink"));
  assert_null(strstr(html, "<k>"));
  assert_null(strstr(html, "<w>"));
  assert_null(strstr(html, "<warn>"));
  assert_null(strstr(html, "<b>"));
  assert_int_equal(count(html, "<pre>"), 1); /* ours, around the plugin output */
  assert_non_null(strstr(html, "&lt;script&gt;alert(&#39;p&#39;)&lt;/script&gt;"));
  assert_non_null(strstr(html, "w&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
  assert_non_null(strstr(html, "c=&amp;amp;"));
  /* no control character but line feed and tab; valid UTF-8 throughout,
   * the bad bytes and controls shown as U+FFFD */
  for (const unsigned char *p = (const unsigned char *)html; *p; p++)
    assert_true(*p >= 0x20 || *p == '\n' || *p == '\t');
  assert_true(valid_utf8(html));
  assert_null(strstr(html, "\xC2\x85")); /* the C1 control */
  assert_true(count(html, "\xEF\xBF\xBD") >= 8);
  /* and the charts still drew: 3 points (the rejected one has no median) */
  char *svg = nth_block(html, "<svg class=\"chart candidates\"", "</svg>", 0);
  assert_int_equal(count(svg, "class=\"pt "), 3);
  free(svg);
  free(html);
  json_decref(j);
  unlink(path);
}

static void absurd_numbers_are_not_drawn(void **state) {
  (void)state;
  /* medians of 0, below 0, 1e308 and a 1e308 spread: the page keeps its
   * geometry finite (no nan or inf coordinate) and the sane points drawn */
  static const char run[] =
      "{\"results\":[{\"plugin\":\"p\",\"workload\":\"w\",\"threads\":1,"
      "\"status\":\"stored\",\"winner\":\"a=1\",\"measurements\":{\"median_latency_us\":"
      "1e308,\"spread_us\":1e308,\"speedup_vs_default\":1e308,"
      "\"default_median_latency_us\":-3},\"candidates\":["
      "{\"policy\":\"a=1\",\"status\":\"measured\",\"median_us\":1e308,\"spread_us\":1e308},"
      "{\"policy\":\"a=2\",\"status\":\"measured\",\"median_us\":0,\"spread_us\":-1},"
      "{\"policy\":\"a=3\",\"status\":\"measured\",\"median_us\":-5},"
      "{\"policy\":\"a=4\",\"status\":\"measured\",\"median_us\":1e-300,\"spread_us\":1},"
      "{\"policy\":\"a=5\",\"status\":\"measured\",\"median_us\":7,\"spread_us\":1e308},"
      "{\"policy\":\"a=6\",\"status\":\"measured\",\"median_us\":8,\"spread_us\":0.5}]}]}";
  json_error_t je;
  json_t *j = json_loads(run, 0, &je);
  assert_non_null(j);
  char *html = render(j);
  static const char *const bad[] = {"=\"nan\"", "=\"-nan\"", "=\"inf\"",      "=\"-inf\"",
                                    ">nan",     ">inf",      "nan \xC2\xB5s", "inf \xC2\xB5s",
                                    "nan ms",   "inf ms",    "inf\xC3\x97"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (strstr(html, bad[i]))
      fail_msg("the page shows '%s'", bad[i]);
  char *svg = nth_block(html, "<svg class=\"chart candidates\"", "</svg>", 0);
  assert_non_null(svg);
  assert_int_equal(count(svg, "class=\"pt "), 3); /* 1e-300, 7 and 8 */
  free(svg);
  free(html);
  json_decref(j);
}

/* ---- parameters and the heat map ----------------------------------------- */

static void policies_parse_into_parameters(void **state) {
  (void)state;
  rpt_policy p;
  assert_int_equal(rpt_policy_parse("kernel=avx2;mc=64;;split=n", &p), 0);
  assert_int_equal(p.count, 3);
  assert_string_equal(rpt_policy_get(&p, "mc"), "64");
  assert_string_equal(rpt_policy_get(&p, "split"), "n");
  assert_null(rpt_policy_get(&p, "nc"));
  rpt_policy_free(&p);
  assert_int_equal(rpt_policy_parse("fast", &p), 0); /* no '=': one parameter */
  assert_int_equal(p.count, 1);
  assert_string_equal(rpt_policy_get(&p, "policy"), "fast");
  rpt_policy_free(&p);
  assert_int_equal(rpt_policy_parse("a=1;x;b=", &p), 0); /* positional and empty */
  assert_string_equal(rpt_policy_get(&p, "#2"), "x");
  assert_string_equal(rpt_policy_get(&p, "b"), "");
  rpt_policy_free(&p);
  assert_int_equal(rpt_policy_parse(NULL, &p), 0);
  assert_int_equal(p.count, 0);
}

/* The GPU plugins wrote ',' between parameters before issue 42 (and ';'
 * since): the report reads the stored old forms of each as parameters. */
static void policies_of_the_gpu_plugins_old_and_new_forms_parse(void **state) {
  static const struct {
    const char *policy, *name, *value;
    size_t count;
  } c[] = {
      /* opencl_gemm (xgemm), old and new */
      {"GEMMK=0,MWG=64,NWG=64,KWG=16,MDIMC=8", "MWG", "64", 5},
      {"GEMMK=0;MWG=64;NWG=64;KWG=16;MDIMC=8", "KWG", "16", 5},
      /* cuda_gemm (cgemm) */
      {"BM=128,BN=64,BK=32,WM=64,WN=32,STAGES=3,VEC=4", "STAGES", "3", 7},
      {"BM=128;BN=64;BK=32;WM=64;WN=32;STAGES=3;VEC=4", "VEC", "4", 7},
      /* cublaslt */
      {"algo=6,tile=20,stages=8,splitk=1,reduction=0,swizzle=0,custom=0,inner=0,cluster=0",
       "splitk", "1", 9},
      {"algo=6;tile=20;stages=8;splitk=1;reduction=0;swizzle=0;custom=0;inner=0;cluster=0", "tile",
       "20", 9},
      /* clblast: its "xgemm:" prefix stays on the first name */
      {"xgemm:GEMMK=0,KREG=1,KWG=32", "KREG", "1", 3},
      {"xgemm:GEMMK=0;KREG=1;KWG=32", "xgemm:GEMMK", "0", 3},
      /* commas that are not separators: one parameter */
      {"shape=1,2", "shape", "1,2", 1},
      {"a=1;b=2,3", "b", "2,3", 2},
  };
  (void)state;
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    rpt_policy p;
    assert_int_equal(rpt_policy_parse(c[i].policy, &p), 0);
    assert_int_equal(p.count, c[i].count);
    assert_non_null(rpt_policy_get(&p, c[i].name));
    assert_string_equal(rpt_policy_get(&p, c[i].name), c[i].value);
    rpt_policy_free(&p);
  }
}

static void heat_map_has_a_cell_per_pair_of_values(void **state) {
  (void)state;
  /* a in {1, 2, 10} matters a lot, b in {x, y} a little, c never varies;
   * (a=10, b=y) was not measured; one candidate has no median; the slow
   * default is the only c=9 and must not make c look influential */
  static const struct {
    const char *policy;
    double median;
  } in[] = {{"a=1;b=x;c=0", 10},  {"a=1;b=y;c=0", 11},   {"a=2;b=x;c=0", 20}, {"a=2;b=y;c=0", 21},
            {"a=10;b=x;c=0", 40}, {"a=10;b=y;c=0", NAN}, {"a=1;b=x;c=9", 100}};
  rpt_cand c[7];
  memset(c, 0, sizeof c);
  for (size_t i = 0; i < 7; i++) {
    c[i].policy = in[i].policy;
    c[i].median = in[i].median;
    c[i].spread = 0.1;
    c[i].status = isfinite(in[i].median) ? "measured" : "rejected";
    c[i].is_winner = i == 0;
    c[i].is_default = i == 6;
    assert_int_equal(rpt_policy_parse(c[i].policy, &c[i].params), 0);
  }
  rpt_effect *e;
  size_t n = rpt_effects(c, 7, &e);
  assert_int_equal(n, 2); /* c takes one value: no effect to show */
  assert_string_equal(e[0].name, "a");
  assert_string_equal(e[1].name, "b");
  assert_int_equal(e[0].nvalues, 3);
  assert_string_equal(e[0].values[2], "10"); /* numeric order, not text order */
  assert_float_equal(e[0].influence, 4.0, 1e-9);
  assert_float_equal(e[1].influence, 1.1, 1e-9);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  rpt_chart_heatmap(f, &e[0], &e[1], c, 7, 10, 7);
  fclose(f);
  assert_int_equal(count(buf, "<rect class=\"cell"), 6);
  assert_int_equal(count(buf, "class=\"cell empty\""), 1);
  assert_int_equal(count(buf, "class=\"cell win\""), 1);
  assert_non_null(strstr(buf, ">4.00<"));
  assert_non_null(strstr(buf, "id=\"hm7\""));
  free(buf);
  buf = NULL;
  f = open_memstream(&buf, &len);
  rpt_chart_candidates(f, c, 7, 15, 1);
  fclose(f);
  assert_int_equal(count(buf, "class=\"pt "), 6); /* the default is on the curve */
  assert_int_equal(count(buf, "class=\"defline\""), 1);
  free(buf);
  rpt_effects_free(e, n);
  for (size_t i = 0; i < 7; i++)
    rpt_policy_free(&c[i].params);
}

/* ---- a recorded space ------------------------------------------------------ */

/* A space file (calibrate --record, search-record) reads as a run of one
 * result: a point per measured configuration, the fastest the winner, the
 * rejected ones listed with their reason; a broken one is named by line. */
static void recorded_space_reads_as_a_run(void **state) {
  (void)state;
  char path[] = "/tmp/calhost-report-space-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  static const char text[] = "calhost-search-space 1\n"
                             "space tiny\n"
                             "meta plugin demo\n"
                             "meta threads 2\n"
                             "param tile ordered 8 16 32\n"
                             "param unroll categorical no yes\n"
                             "config 8 no 30 1 0 0.1 tile=8;unroll=no\n"
                             "config 16 no 20 1 0 0.1 tile=16;unroll=no\n"
                             "config 32 yes 10 1 0 0.1 tile=32;unroll=yes\n"
                             "config 32 no - 0 0 0.1 tile=32;unroll=no wrong_output\n";
  write_bytes(path, text, sizeof text - 1);
  char err[512] = "";
  json_t *run = report_load(path, err, sizeof err);
  if (!run)
    fprintf(stderr, "%s\n", err);
  assert_non_null(run);
  const json_t *r = json_array_get(json_object_get(run, "results"), 0);
  assert_string_equal(json_string_value(json_object_get(r, "plugin")), "demo");
  assert_string_equal(json_string_value(json_object_get(r, "workload")), "tiny");
  assert_string_equal(json_string_value(json_object_get(r, "winner")), "tile=32;unroll=yes");
  char *html = render(run);
  char *svg = nth_block(html, "<svg class=\"chart candidates\"", "</svg>", 0);
  assert_non_null(svg);
  assert_int_equal(count(svg, "class=\"pt "), 3);
  assert_int_equal(count(svg, "class=\"pt winner\""), 1);
  assert_non_null(strstr(html, "wrong_output"));
  /* 4 of the space's 3 x 2 = 6 configurations were recorded; no exit status */
  assert_non_null(strstr(html, "of 6 in the space (4 planned)"));
  assert_null(strstr(html, "exit status"));
  free(svg);
  free(html);
  json_decref(run);
  /* the meta lines name the workload and the rigor (the space's own name
   * adds the plugin and threads) */
  static const char named[] = "calhost-search-space 1\n"
                              "space demo-w1-t2\n"
                              "meta workload w1\n"
                              "meta rigor quick\n"
                              "param tile ordered 8 16\n"
                              "config 8 30 1 0 0.1 tile=8\n";
  write_bytes(path, named, sizeof named - 1);
  run = report_load(path, err, sizeof err);
  assert_non_null(run);
  r = json_array_get(json_object_get(run, "results"), 0);
  assert_string_equal(json_string_value(json_object_get(r, "workload")), "w1");
  assert_string_equal(json_string_value(json_object_get(run, "rigor")), "quick (recorded)");
  json_decref(run);
  write_bytes(path, "calhost-search-space 1\nspace x\nbogus line\n", 42);
  assert_null(report_load(path, err, sizeof err));
  char want[128];
  snprintf(want, sizeof want, "%s:3:", path);
  assert_non_null(strstr(err, want));
  unlink(path);
}

/* ---- bad input ----------------------------------------------------------- */

static void broken_run_files_are_refused_by_name(void **state) {
  (void)state;
  char path[] = "/tmp/calhost-report-bad-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  char err[512];
  write_bytes(path, "{\n\"results\": [\n{\"plugin\": }\n", 29);
  assert_null(report_load(path, err, sizeof err));
  char want[128];
  snprintf(want, sizeof want, "%s:3:", path); /* file and line of the syntax error */
  assert_non_null(strstr(err, want));
  write_bytes(path, "[1, 2]", 6);
  assert_null(report_load(path, err, sizeof err));
  assert_non_null(strstr(err, "not the JSON report"));
  assert_non_null(strstr(err, path));
  unlink(path);
  assert_null(report_load(path, err, sizeof err));
  assert_non_null(strstr(err, path));
  assert_int_equal(report_html_file(g_data, "/dev/null/x.html", err, sizeof err), -1);
  assert_non_null(strstr(err, "/dev/null/x.html"));
}

static void run_without_candidates_still_renders(void **state) {
  (void)state;
  json_t *run = load_recorded();
  json_t *res = json_object_get(run, "results");
  for (size_t i = 0; i < json_array_size(res); i++)
    json_object_del(json_array_get(res, i), "candidates");
  char *html = render(run);
  assert_non_null(strstr(html, "no per-candidate data"));
  /* the winner and the default still make a chart with their two points */
  char *svg = nth_block(html, "<svg class=\"chart candidates\"", "</svg>", 0);
  assert_int_equal(count(svg, "class=\"pt "), 2);
  free(svg);
  free(html);
  json_decref(run);
}

/* ---- the sweep's candidates in the child's record ------------------------ */

static void candidates_always_fit_in_a_record_frame(void **state) {
  (void)state;
  /* 20000 candidates with 1 KiB policies (20 MiB of text) must not make
   * the result frame too large: the texts, then candidates, are dropped */
  sweep_result r;
  memset(&r, 0, sizeof r);
  r.ok = 1;
  r.winner_policy = "p=0";
  size_t n = 20000;
  char *policy = malloc(1024);
  memset(policy, 'p', 1023);
  policy[1023] = '\0';
  r.candidates = calloc(n, sizeof *r.candidates);
  for (size_t i = 0; i < n; i++) {
    r.candidates[i].index = (uint32_t)i;
    r.candidates[i].policy = policy;
    r.candidates[i].reason = "clearly slower";
    r.candidates[i].status = CALHOST_CANDIDATE_PRUNED;
    r.candidates[i].figures.median_us = (double)i;
    r.candidates[i].figures.samples = 3;
  }
  r.candidate_entries = n;
  isolate_proto_buf b = {0};
  isolate_proto_begin(&b, CALHOST_REC_RESULT);
  sweep_record_put_result(&b, &r);
  assert_int_equal(isolate_proto_finish(&b), 0); /* under CALHOST_PROTO_MAX_FRAME */
  isolate_proto_reader rd = {0};
  isolate_proto_msg m;
  isolate_proto_cursor c;
  isolate_proto_reader_feed(&rd, b.data, b.len);
  assert_int_equal(isolate_proto_reader_next(&rd, &m), 1);
  isolate_proto_cursor_init(&c, &m);
  sweep_result out;
  assert_int_equal(sweep_record_get_result(&c, &out), 0);
  assert_true(out.candidate_entries > 1000 && out.candidate_entries <= n);
  assert_non_null(out.candidates[0].policy); /* the first keep their text */
  assert_string_equal(out.candidates[0].reason, "clearly slower");
  assert_null(out.candidates[out.candidate_entries - 1].policy);
  assert_int_equal(out.candidates[out.candidate_entries - 1].status, CALHOST_CANDIDATE_PRUNED);
  assert_float_equal(out.candidates[7].figures.median_us, 7.0, 0);
  sweep_result_free(&out);
  isolate_proto_reader_free(&rd);
  isolate_proto_buf_free(&b);
  free(r.candidates);
  free(policy);
}

/* Item 24: the effects and the heat map find a candidate's value by
 * bisection over the sorted distinct values (they were found by a linear
 * scan per candidate: 40,000 candidates took 15 s). Every value is still
 * found, distinct texts that are the same number ("1", "1.0", "01") stay
 * distinct values, and text order holds when a value is not a number. */
static void effects_find_every_value_among_many(void **state) {
  (void)state;
  enum { N = 3000 };
  static rpt_cand c[N];
  static char policies[N][48];
  memset(c, 0, sizeof c);
  for (size_t i = 0; i < N; i++) {
    /* a: N distinct numbers in a shuffled order (with "1.0" and "01" beside "1");
     * b: words */
    size_t v = (i * 7919) % N;
    if (v == 1000)
      snprintf(policies[i], sizeof policies[i], "a=1.0;b=w%zu", i % 7);
    else if (v == 1001)
      snprintf(policies[i], sizeof policies[i], "a=01;b=w%zu", i % 7);
    else
      snprintf(policies[i], sizeof policies[i], "a=%zu;b=w%zu", v, i % 7);
    c[i].policy = policies[i];
    c[i].median = 10 + (double)v;
    c[i].status = "measured";
    assert_int_equal(rpt_policy_parse(c[i].policy, &c[i].params), 0);
  }
  rpt_effect *e;
  size_t n = rpt_effects(c, N, &e);
  assert_int_equal(n, 2);
  const rpt_effect *a = !strcmp(e[0].name, "a") ? &e[0] : &e[1],
                   *b = !strcmp(e[0].name, "a") ? &e[1] : &e[0];
  assert_int_equal(a->nvalues, N);
  assert_true(a->numeric);
  assert_int_equal(b->nvalues, 7);
  assert_false(b->numeric);
  for (size_t i = 1; i < a->nvalues; i++) /* numeric order, ties by text */
    assert_true(strtod(a->values[i - 1], NULL) <= strtod(a->values[i], NULL));
  for (size_t i = 1; i < b->nvalues; i++)
    assert_true(strcmp(b->values[i - 1], b->values[i]) < 0);
  size_t total = 0;
  for (size_t i = 0; i < N; i++) {
    const char *v = rpt_policy_get(&c[i].params, "a");
    size_t k = rpt_effect_value(a, v);
    assert_true(k != (size_t)-1);
    assert_string_equal(a->values[k], v);
    assert_true(rpt_effect_value(b, rpt_policy_get(&c[i].params, "b")) != (size_t)-1);
  }
  for (size_t k = 0; k < a->nvalues; k++)
    total += a->count[k];
  assert_int_equal(total, N);
  assert_true(rpt_effect_value(a, "1e9") == (size_t)-1);
  assert_true(rpt_effect_value(b, "zz") == (size_t)-1);
  rpt_effects_free(e, n);
  for (size_t i = 0; i < N; i++)
    rpt_policy_free(&c[i].params);
}

/* Item 24: a recorded space's value words are found by bisection (the
 * reader scanned every value per configuration, and checked duplicates in
 * pairs: a 300,000-value parameter took minutes): words in any order are
 * found, a duplicate is still refused naming the first, and so is a word
 * that is not a value. */
static void a_space_with_many_values_reads_by_bisection(void **state) {
  (void)state;
  char path[] = "/tmp/calhost-report-space-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  enum { V = 2000 };
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fprintf(f, "calhost-search-space 1\nspace many\nparam p categorical");
  for (size_t i = 0; i < V; i++)
    fprintf(f, " v%zu", (i * 7919) % V); /* not in text order */
  fprintf(f, "\n");
  for (size_t i = 0; i < V; i += 7)
    fprintf(f, "config v%zu %zu 0 0 0.1 p=%zu\n", i, 10 + i, i);
  fclose(f);
  write_bytes(path, buf, len);
  char err[512] = "";
  json_t *run = report_load(path, err, sizeof err);
  if (!run)
    fail_msg("%s", err);
  const json_t *r = json_array_get(json_object_get(run, "results"), 0);
  assert_int_equal(json_array_size(json_object_get(r, "candidates")), (V + 6) / 7);
  assert_string_equal(json_string_value(json_object_get(r, "winner")), "p=0");
  json_decref(run);
  static const char dup[] = "calhost-search-space 1\nspace d\nparam p ordered 1 2 3 2\n";
  write_bytes(path, dup, sizeof dup - 1);
  assert_null(report_load(path, err, sizeof err));
  assert_non_null(strstr(err, ":3: parameter 'p': duplicate value '2'"));
  static const char unknown[] = "calhost-search-space 1\nspace d\nparam p ordered 1 2 3\n"
                                "config 4 1 0 0 0.1 p=4\n";
  write_bytes(path, unknown, sizeof unknown - 1);
  assert_null(report_load(path, err, sizeof err));
  assert_non_null(strstr(err, ":4: '4' is not a value of parameter 'p'"));
  free(buf);
  unlink(path);
}

/* Item 25: calibrate --record writes the backend's default (measured
 * before the search) into the recording, so a page made from it shows the
 * default and the speedup instead of "the backend has no default". */
static void a_recording_names_the_default_and_the_page_shows_it(void **state) {
  (void)state;
  char path[] = "/tmp/calhost-report-rec-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  static const char *const tiles[] = {"8", "16"};
  search_param param = {.name = "tile", .values = tiles, .value_count = 2, .ordered = 1};
  sweep_search_info info = {.params = &param,
                            .param_count = 1,
                            .space_size = 2,
                            .strategy = CALHOST_SEARCH_EXHAUSTIVE,
                            .default_policy = "tile=4",
                            .default_median_us = 40};
  sweep_recording rec;
  sweep_recording_init(&rec, path, "rec", NULL, 0);
  sweep_recording_start(&rec, &info);
  for (uint32_t i = 0; i < 2; i++) {
    uint32_t config[1] = {i};
    sweep_evaluation ev = {.evaluation = i + 1,
                           .index = i,
                           .config = config,
                           .policy = i ? "tile=16" : "tile=8",
                           .median_us = i ? 20 : 30,
                           .spread_us = 1,
                           .samples = 3};
    sweep_recording_add(&rec, &ev);
  }
  assert_int_equal(sweep_recording_finish(&rec), 0);
  char err[512];
  json_t *run = report_load(path, err, sizeof err);
  if (!run)
    fail_msg("%s", err);
  char *html = render(run);
  assert_non_null(strstr(html, "backend default</dt><dd><code>tile=4"));
  assert_non_null(strstr(html, "2.00\xC3\x97"));
  assert_null(strstr(html, "the backend has no default"));
  free(html);
  json_decref(run);
  unlink(path);
}

/* Item 25: the page shows what the run knows and leaves out what it does
 * not: "of N in the space" is a described space's size (not the plugin's
 * list); a recorded space shows no placeholders (calhost unknown, load
 * average ? / ? / ?, "CPUs: targets ; thread counts") and no "the backend
 * has no default" when it simply does not know, and shows the default and
 * the speedup when the recording names them. */
static void the_page_shows_what_is_known_and_leaves_out_the_rest(void **state) {
  (void)state;
  json_error_t je;
  json_t *run =
      json_loads("{\"calhost_version\":\"1\",\"rigor\":\"quick\",\"environment\":{},\"results\":[{"
                 "\"plugin\":\"ocl\",\"workload\":\"w\",\"status\":\"stored\",\"winner\":\"a=1\","
                 "\"measurements\":{\"median_latency_us\":5},\"search\":{\"space_size\":260},"
                 "\"counts\":{\"candidates\":10,\"planned\":8,\"tried\":8,\"pruned\":0,"
                 "\"rejected\":0}}]}",
                 0, &je);
  assert_non_null(run);
  char *html = render(run);
  assert_non_null(strstr(html, "of 260 in the space (8 planned)"));
  free(html);
  json_decref(run);

  char path[] = "/tmp/calhost-report-space-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  static const char bare[] = "calhost-search-space 1\nspace s\nmeta plugin demo\n"
                             "param tile ordered 8 16\n"
                             "config 8 30 1 0 0.1 tile=8\nconfig 16 20 1 0 0.1 tile=16\n";
  write_bytes(path, bare, sizeof bare - 1);
  char err[512];
  run = report_load(path, err, sizeof err);
  assert_non_null(run);
  html = render(run);
  static const char *const placeholders[] = {"the backend has no default",
                                             "unknown</",
                                             "? / ?",
                                             "targets ;",
                                             "; thread counts <",
                                             "load average",
                                             "exit status",
                                             "(from ?",
                                             "<td>store</td>"};
  for (size_t i = 0; i < sizeof placeholders / sizeof *placeholders; i++)
    if (strstr(html, placeholders[i]))
      fail_msg("the page of a bare recording shows '%s'", placeholders[i]);
  assert_null(strstr(html, "speedup vs backend default"));
  free(html);
  json_decref(run);

  static const char with_default[] = "calhost-search-space 1\nspace s\nmeta plugin demo\n"
                                     "meta default tile=4\nmeta default_median 40\n"
                                     "param tile ordered 8 16\n"
                                     "config 8 30 1 0 0.1 tile=8\nconfig 16 20 1 0 0.1 tile=16\n";
  write_bytes(path, with_default, sizeof with_default - 1);
  run = report_load(path, err, sizeof err);
  assert_non_null(run);
  const json_t *r = json_array_get(json_object_get(run, "results"), 0);
  assert_string_equal(json_string_value(json_object_get(r, "default_policy")), "tile=4");
  html = render(run);
  assert_non_null(strstr(html, "2.00\xC3\x97")); /* 40 / 20 */
  assert_non_null(strstr(html, "backend default</dt><dd><code>tile=4"));
  assert_null(strstr(html, "the backend has no default"));
  free(html);
  json_decref(run);
  unlink(path);
}

int main(void) {
  const char *src = getenv("CALHOST_SOURCE_DIR");
  snprintf(g_data, sizeof g_data, "%s/tests/report/data/run-quick.json", src ? src : ".");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(recorded_run_draws_a_chart_and_a_point_per_candidate),
      cmocka_unit_test(recorded_run_has_heat_maps_where_parameters_vary),
      cmocka_unit_test(page_is_self_contained),
      cmocka_unit_test(hostile_strings_are_escaped),
      cmocka_unit_test(absurd_numbers_are_not_drawn),
      cmocka_unit_test(policies_parse_into_parameters),
      cmocka_unit_test(policies_of_the_gpu_plugins_old_and_new_forms_parse),
      cmocka_unit_test(heat_map_has_a_cell_per_pair_of_values),
      cmocka_unit_test(recorded_space_reads_as_a_run),
      cmocka_unit_test(broken_run_files_are_refused_by_name),
      cmocka_unit_test(run_without_candidates_still_renders),
      cmocka_unit_test(candidates_always_fit_in_a_record_frame),
      cmocka_unit_test(effects_find_every_value_among_many),
      cmocka_unit_test(a_space_with_many_values_reads_by_bisection),
      cmocka_unit_test(the_page_shows_what_is_known_and_leaves_out_the_rest),
      cmocka_unit_test(a_recording_names_the_default_and_the_page_shows_it),
  };
  return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
