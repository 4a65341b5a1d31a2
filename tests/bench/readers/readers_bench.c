/*
 * readers_bench.c: readers-bench, how calhost's file readers scale with
 * hostile but plausible inputs (issue 22 item 24): a configuration of
 * 120,000 [workload] sections (config_load_string), a recorded space with
 * one 300,000-value parameter and a run.json of 40,000 candidates (both
 * through `calhost report`'s reader and page writer, report_load and
 * report_write_html). Each input is measured at half its size and at its
 * size: the ratio of the two times is about 2 for a linear reader and 4 for
 * a quadratic one. The baseline, measured in the same run on the same
 * bytes, is a plain pass over the file (reading it and counting its lines),
 * so the second ratio says how far from "just reading it" the reader is.
 * Prints one line per input; exits 1 when a reader fails. Run by hand:
 * build/bin/readers-bench [--scale F] (F < 1 for a quick look).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "report/report.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A growing text buffer (abort on out of memory: a benchmark). */
typedef struct text {
  char *s;
  size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0)
      abort();
    if (t->s && t->n + (size_t)k < t->cap) {
      t->n += (size_t)k;
      return;
    }
    t->cap = t->cap ? t->cap * 2 + (size_t)k : 1u << 20;
    t->s = realloc(t->s, t->cap);
    if (!t->s)
      abort();
  }
}

static void make_config(text *t, size_t sections) {
  put(t, "[store]\npath = /tmp/readers-bench-store.txt\n");
  for (size_t i = 0; i < sections; i++)
    put(t, "[workload w%zu]\noperator = MatMul\nshape = 64,64,%zu\n", i, i + 1);
}

/* One parameter of `values` values, a configuration recorded every 300. */
static void make_space(text *t, size_t values) {
  put(t, "calhost-search-space 1\nspace bench\nmeta plugin bench\nparam p ordered");
  for (size_t i = 0; i < values; i++)
    put(t, " %zu", i);
  put(t, "\n");
  for (size_t i = 0; i < values; i += 300)
    put(t, "config %zu %g 0.1 0 0.01 p=%zu\n", i, 10 + (double)(i * 7919 % 1000) / 10, i);
}

/* A calibrate --json run of one result with `n` candidates of three
 * parameters (one with n distinct values). */
static void make_run(text *t, size_t n) {
  put(t,
      "{\"calhost_version\":\"bench\",\"rigor\":\"exhaustive\",\"environment\":{},"
      "\"results\":[{\"plugin\":\"bench\",\"implementation\":\"1\",\"workload\":\"w\","
      "\"operator\":\"MatMul\",\"threads\":1,\"status\":\"stored\",\"winner\":\"mwg=0;nwg=0;"
      "kwg=0\",\"measurements\":{\"median_latency_us\":10,\"spread_us\":0.1},\"counts\":"
      "{\"candidates\":%zu,\"planned\":%zu,\"tried\":%zu,\"pruned\":0,\"rejected\":0},"
      "\"candidates\":[",
      n, n, n);
  for (size_t i = 0; i < n; i++)
    put(t,
        "%s{\"policy\":\"mwg=%zu;nwg=%zu;kwg=%zu\",\"default\":false,\"winner\":%s,\"status\":"
        "\"measured\",\"reason\":null,\"median_us\":%g,\"spread_us\":0.1,\"min_us\":9,\"cv\":"
        "0.01,\"samples\":5,\"iterations\":100,\"noisy\":false}",
        i ? "," : "", i % 97, i % 89, i, i ? "false" : "true",
        i ? 10 + (double)(i * 7919 % 1000) / 10 : 10.0);
  put(t, "]}],\"failures\":[],\"warnings\":[]}\n");
}

static char dir[] = "/tmp/readers-bench-XXXXXX";

/* The baseline: read the file and count its lines. */
static double plain_pass(const char *path) {
  double t0 = now();
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  char buf[1 << 16];
  size_t lines = 0, k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0)
    for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + k - p))); p++)
      lines++;
  fclose(f);
  volatile size_t sink = lines;
  (void)sink;
  return now() - t0;
}

static const char *write_file(const char *name, const text *t) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(t->s, 1, t->n, f) != t->n || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
  return path;
}

/* Reads the configuration: the seconds it took, -1 on failure. */
static double read_config(const text *t, double *baseline) {
  const char *path = write_file("bench.ini", t);
  *baseline = plain_pass(path);
  config_settings cfg;
  char err[1024];
  double t0 = now();
  if (config_load(path, &cfg, err, sizeof err) != 0) {
    fprintf(stderr, "readers-bench: %s\n", err);
    return -1;
  }
  double s = now() - t0;
  config_free(&cfg);
  return s;
}

/* Reads a report input and writes its page to /dev/null. */
static double read_report(const char *name, const text *t, double *baseline) {
  const char *path = write_file(name, t);
  *baseline = plain_pass(path);
  char err[1024];
  double t0 = now();
  json_t *run = report_load(path, err, sizeof err);
  FILE *out = fopen("/dev/null", "w");
  if (!run || !out || report_write_html(run, path, out, err, sizeof err) != 0) {
    fprintf(stderr, "readers-bench: %s\n", err);
    return -1;
  }
  fclose(out);
  json_decref(run);
  return now() - t0;
}

typedef struct input {
  const char *what, *unit, *file;
  size_t size;
  void (*make)(text *, size_t);
} input;

int main(int argc, char **argv) {
  double scale = 1;
  if (argc == 3 && !strcmp(argv[1], "--scale"))
    scale = strtod(argv[2], NULL);
  else if (argc != 1) {
    fprintf(stderr, "usage: readers-bench [--scale F]\n");
    return 2;
  }
  if (!(scale > 0) || !mkdtemp(dir)) {
    fprintf(stderr, "readers-bench: bad --scale or no temporary directory\n");
    return 2;
  }
  const input inputs[] = {
      {"configuration", "[workload] sections", NULL, 120000, make_config},
      {"recorded space", "values of one parameter", "bench.space", 300000, make_space},
      {"run.json", "candidates", "run.json", 40000, make_run},
  };
  int rc = 0;
  printf("%-15s %-30s %10s %9s %9s %11s %12s\n", "input", "size", "bytes", "half (s)", "full (s)",
         "full/half", "vs a pass");
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    const input *in = &inputs[i];
    size_t full = (size_t)((double)in->size * scale);
    double t[2], base[2];
    size_t bytes = 0;
    for (int k = 0; k < 2; k++) {
      text tx = {0};
      in->make(&tx, k ? full : full / 2);
      bytes = tx.n;
      t[k] = in->file ? read_report(in->file, &tx, &base[k]) : read_config(&tx, &base[k]);
      free(tx.s);
      if (t[k] < 0)
        rc = 1;
    }
    if (t[0] < 0 || t[1] < 0)
      continue;
    char size[64];
    snprintf(size, sizeof size, "%zu %s", full, in->unit);
    printf("%-15s %-30.30s %10zu %9.3f %9.3f %10.2fx %11.0fx\n", in->what, size, bytes, t[0], t[1],
           t[0] > 0 ? t[1] / t[0] : 0, base[1] > 0 ? t[1] / base[1] : 0);
  }
  printf("full/half: about 2 for a linear reader, 4 for a quadratic one; vs a pass: the full "
         "size's time over a plain read of the same file\n");
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    rc = 1;
  return rc;
}
