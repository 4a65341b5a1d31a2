/*
 * record.c: search-record, the recorder of complete cpu_gemm search spaces
 * (tests/bench/search/spaces/NAME.space). For each shape and thread count it
 * loads the plugin through the host's loader (host/loader), opens one
 * session, turns every candidate's policy "kernel=K;mc=..;nc=..;kc=..;
 * split=S" into parameter values, and measures each candidate with the
 * host's measurement engine (sweep_run, host/sweep/measure.c) at
 * `measure` rigor: correctness check, sizing, warm-up, median and MAD.
 *
 * The engine measures the candidates a session offers; to get one result per
 * candidate it is handed a one-candidate view of the open session (a vtable
 * whose candidate 0 is the candidate being recorded, whose open/close reuse
 * the one real session and which has no default policy), so the engine's
 * code runs unchanged and the plugin's reference is computed once per shape.
 *
 *   search-record [--plugin PATH] [--out DIR] [--only NAME] [--reps N]
 *                 [--threads N]
 *
 * --threads N records the N-thread spaces instead of the 1-thread ones
 * (record those on a quiet machine with N free CPUs: on a shared 2-vCPU
 * machine the 2-thread timings measured the neighbours' load, not the
 * kernels).
 *
 * Each space is written as NAME.space.part, line by line, and renamed to
 * NAME.space when complete; an existing NAME.space is skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/files.h"
#include "loader/loader.h"
#include "processor/processor.h"
#include "search/spacefile.h"
#include "sweep/measure.h"
#include "sweep/rigor.h"

/* ---- the one-candidate view of a session ----------------------------------- */

static struct {
  const calhost_plugin_vtable *vt; /* the plugin's */
  calhost_session *session;        /* the real, open session */
  uint32_t index;                  /* the candidate shown as candidate 0 */
  double prepare_seconds;          /* the first prepare of this candidate */
  int prepared;
} view;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static calhost_status view_open(calhost_plugin_instance *i, const calhost_workload *w,
                                const calhost_target *t, calhost_session **out) {
  (void)i, (void)w, (void)t;
  *out = view.session;
  return CALHOST_OK;
}

static void view_close(calhost_session *s) {
  (void)s; /* the real session stays open for the next candidate */
}

static calhost_status view_count(calhost_session *s, uint32_t *count) {
  (void)s;
  *count = 1;
  return CALHOST_OK;
}

static calhost_status view_serialize(calhost_session *s, uint32_t index, char *buf, size_t cap,
                                     size_t *len) {
  if (index != 0)
    return CALHOST_INVALID_ARGUMENT;
  return view.vt->serialize_candidate(s, view.index, buf, cap, len);
}

static calhost_status view_prepare(calhost_session *s, const char *policy, size_t len) {
  double t0 = now_s();
  calhost_status st = view.vt->prepare(s, policy, len);
  if (!view.prepared) {
    view.prepare_seconds = now_s() - t0;
    view.prepared = 1;
  }
  return st;
}

/* ---- policies as parameters ---------------------------------------------- */

enum { P_KERNEL, P_MC, P_NC, P_KC, P_SPLIT, P_COUNT };
static const char *const field[P_COUNT] = {"kernel", "mc", "nc", "kc", "split"};
static const int numeric[P_COUNT] = {0, 1, 1, 1, 0};

typedef struct words {
  char **w;
  size_t n;
} words;

/* Splits a cpu_gemm policy into its five values (into vals, copies). */
static int parse_policy(const char *policy, char vals[P_COUNT][64]) {
  int seen = 0;
  const char *p = policy;
  while (*p) {
    const char *end = strchr(p, ';');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', n);
    if (!eq)
      return -1;
    for (int f = 0; f < P_COUNT; f++)
      if ((size_t)(eq - p) == strlen(field[f]) && memcmp(p, field[f], (size_t)(eq - p)) == 0) {
        size_t vl = n - (size_t)(eq - p) - 1;
        if (vl >= 64)
          return -1;
        memcpy(vals[f], eq + 1, vl);
        vals[f][vl] = '\0';
        seen |= 1 << f;
      }
    p += n + (end ? 1 : 0);
  }
  return seen == (1 << P_COUNT) - 1 ? 0 : -1;
}

static int add_word(words *ws, const char *w) {
  for (size_t i = 0; i < ws->n; i++)
    if (strcmp(ws->w[i], w) == 0)
      return 0;
  char **n = realloc(ws->w, (ws->n + 1) * sizeof *n);
  if (!n)
    return -1;
  ws->w = n;
  ws->w[ws->n] = strdup(w);
  return ws->w[ws->n++] ? 0 : -1;
}

static int cmp_num(const void *a, const void *b) {
  long x = atol(*(char *const *)a), y = atol(*(char *const *)b);
  return (x > y) - (x < y);
}

/* ---- recording one space -------------------------------------------------- */

typedef struct shape {
  int64_t m, n, k;
} shape;

static int record_space(loader_plugin *p, const shape *sh, unsigned threads, const char *dir,
                        uint32_t reps, const char *only) {
  char name[128], path[PATH_MAX], part[PATH_MAX + 8], err[512];
  snprintf(name, sizeof name, "cpu_gemm-%lldx%lldx%lld-t%u", (long long)sh->m, (long long)sh->n,
           (long long)sh->k, threads);
  if (only && strcmp(only, name) != 0)
    return 0;
  snprintf(path, sizeof path, "%s/%s.space", dir, name);
  snprintf(part, sizeof part, "%s.part", path);
  if (access(path, F_OK) == 0) {
    fprintf(stderr, "%s: exists, skipped\n", path);
    return 0;
  }
  const calhost_plugin_vtable *vt = &p->vtable;
  int cpus[256];
  for (int i = 0; i < 256; i++)
    cpus[i] = i;
  processor_pin_thread(cpus, threads, NULL, 0);
  int64_t dims[3] = {sh->m, sh->n, sh->k};
  calhost_workload w;
  memset(&w, 0, sizeof w);
  w.header = (calhost_struct_header){CALHOST_STRUCT_WORKLOAD, 1, sizeof w};
  w.name = name;
  w.operator_name = "MatMul";
  w.dtype = "float32";
  w.shape = dims;
  w.shape_rank = 3;
  w.model_digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
  calhost_target t;
  memset(&t, 0, sizeof t);
  t.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof t};
  t.processor = "search-record";
  t.thread_count = threads;
  t.cpus = cpus;
  t.cpu_count = threads;
  t.features = "";

  calhost_plugin_instance *inst = NULL;
  if (vt->create(&p->services, NULL, 0, &inst) != CALHOST_OK || !inst) {
    fprintf(stderr, "%s: create failed\n", name);
    return -1;
  }
  calhost_session *session = NULL;
  if (vt->open_session(inst, &w, &t, &session) != CALHOST_OK || !session) {
    fprintf(stderr, "%s: open_session failed\n", name);
    vt->destroy(inst);
    return -1;
  }
  uint32_t count = 0;
  vt->candidate_count(session, &count);
  char(*vals)[P_COUNT][64] = calloc(count ? count : 1, sizeof *vals);
  words ws[P_COUNT];
  memset(ws, 0, sizeof ws);
  int rc = -1;
  FILE *f = NULL;
  search_space_file sp;
  search_space_init(&sp, name);
  for (uint32_t i = 0; i < count; i++) {
    char buf[256];
    size_t len = 0;
    if (vt->serialize_candidate(session, i, buf, sizeof buf, &len) != CALHOST_OK ||
        len >= sizeof buf) {
      fprintf(stderr, "%s: candidate %u: serialize failed\n", name, i);
      goto out;
    }
    buf[len] = '\0';
    if (parse_policy(buf, vals[i]) != 0) {
      fprintf(stderr, "%s: candidate %u: unexpected policy '%s'\n", name, i, buf);
      goto out;
    }
    for (int fi = 0; fi < P_COUNT; fi++)
      if (add_word(&ws[fi], vals[i][fi]) != 0)
        goto out;
  }
  for (int fi = 0; fi < P_COUNT; fi++) {
    if (numeric[fi])
      qsort(ws[fi].w, ws[fi].n, sizeof *ws[fi].w, cmp_num);
    if (search_space_add_param(&sp, field[fi], numeric[fi], (const char *const *)ws[fi].w,
                               (uint32_t)ws[fi].n, err, sizeof err) != 0) {
      fprintf(stderr, "%s: %s\n", name, err);
      goto out;
    }
  }
  char shape_text[96], when[32];
  time_t tnow = time(NULL);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%MZ", gmtime(&tnow));
  snprintf(shape_text, sizeof shape_text, "%lldx%lldx%lld", (long long)sh->m, (long long)sh->n,
           (long long)sh->k);
  char threads_text[16], reps_text[16];
  snprintf(threads_text, sizeof threads_text, "%u", threads);
  sweep_rigor_params params;
  sweep_rigor_params_init(CALHOST_RIGOR_MEASURE, reps, &params);
  snprintf(reps_text, sizeof reps_text, "%u", params.repetitions);
  processor_info info;
  char proc[256] = "unknown";
  if (processor_identify(cpus, threads, &info, NULL, 0) == 0)
    processor_describe(&info, proc, sizeof proc);
  search_space_add_meta(&sp, "plugin", p->backend);
  search_space_add_meta(&sp, "implementation", p->implementation_version);
  search_space_add_meta(&sp, "shape", shape_text);
  search_space_add_meta(&sp, "threads", threads_text);
  search_space_add_meta(&sp, "processor", proc);
  search_space_add_meta(&sp, "measured", "sweep_run, measure rigor (2 ms samples, median of reps)");
  /* every candidate of the plugin's curated list: complete, and what a
   * sweep runs whole at measure */
  search_space_add_meta(&sp, "complete", "1");
  search_space_add_meta(&sp, "curated", "1");
  search_space_add_meta(&sp, "repetitions", reps_text);
  search_space_add_meta(&sp, "recorded", when);
  search_space_add_meta(&sp, "units", "median and spread in microseconds, times in seconds");
  /* NAME.space.part is created exclusively, never through a planted link
   * (the output-file rule of base/files.h) */
  int fd = base_output_create(path, ".part", part, sizeof part, err, sizeof err);
  f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    fprintf(stderr, "%s\n", fd >= 0 ? strerror(errno) : err);
    if (fd >= 0)
      close(fd);
    goto out;
  }
  search_space_write_header(f, &sp);
  fflush(f);

  calhost_plugin_vtable pv = *vt;
  pv.open_session = view_open;
  pv.close_session = view_close;
  pv.candidate_count = view_count;
  pv.serialize_candidate = view_serialize;
  pv.prepare = view_prepare;
  pv.default_policy = NULL;
  view.vt = vt;
  view.session = session;
  double started = now_s();
  for (uint32_t i = 0; i < count; i++) {
    view.index = i;
    view.prepared = 0;
    view.prepare_seconds = 0;
    sweep_request req = {.vtable = &pv,
                         .abi_version = p->abi_version,
                         .instance = inst,
                         .workload = &w,
                         .target = &t,
                         .params = params,
                         .strategy = CALHOST_SEARCH_EXHAUSTIVE};
    sweep_result res;
    double t0 = now_s();
    sweep_run(&req, &res);
    double took = now_s() - t0;
    search_space_entry e;
    memset(&e, 0, sizeof e);
    uint32_t cfg[P_COUNT];
    for (int fi = 0; fi < P_COUNT; fi++)
      cfg[fi] = (uint32_t)search_space_value_index(&sp, (size_t)fi, vals[i][fi]);
    e.config = cfg;
    e.seconds = took;
    e.compile_seconds = view.prepare_seconds;
    char buf[256];
    size_t len = 0;
    if (vt->serialize_candidate(session, i, buf, sizeof buf, &len) == CALHOST_OK &&
        len < sizeof buf) {
      buf[len] = '\0';
      e.policy = buf;
    }
    if (res.ok) {
      e.median = res.figures.median_us;
      e.spread = res.figures.mad_us;
    } else {
      e.rejected = 1;
      e.reason =
          res.rejection_count && res.rejections[0].reason ? res.rejections[0].reason : res.error;
    }
    if (search_space_add_entry(&sp, &e, err, sizeof err) != 0 ||
        search_space_write_entry(f, &sp, &e) != 0) {
      fprintf(stderr, "%s: candidate %u: %s\n", name, i, err);
      sweep_result_free(&res);
      goto out;
    }
    fflush(f);
    sweep_result_free(&res);
    if ((i + 1) % 50 == 0)
      fprintf(stderr, "%s: %u/%u (%.0f s)\n", name, i + 1, count, now_s() - started);
  }
  if (fclose(f) != 0) {
    f = NULL;
    fprintf(stderr, "%s: write error\n", part);
    goto out;
  }
  f = NULL;
  if (base_output_replace(part, path, err, sizeof err) != 0) {
    fprintf(stderr, "%s (the recording is kept in %s)\n", err, part);
    goto out;
  }
  fprintf(stderr, "%s: %u candidates in %.0f s, best %.1f us\n", path, count, now_s() - started,
          search_space_best(&sp));
  rc = 0;
out:
  if (f)
    fclose(f);
  search_space_free(&sp);
  for (int fi = 0; fi < P_COUNT; fi++) {
    for (size_t i = 0; i < ws[fi].n; i++)
      free(ws[fi].w[i]);
    free(ws[fi].w);
  }
  free(vals);
  vt->close_session(session);
  vt->destroy(inst);
  return rc;
}

int main(int argc, char **argv) {
  const char *plugin = NULL, *dir = NULL, *only = NULL;
  uint32_t reps = 0;
  unsigned threads = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--plugin") == 0 && i + 1 < argc)
      plugin = argv[++i];
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      dir = argv[++i];
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
      only = argv[++i];
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = (uint32_t)atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
             atoi(argv[i + 1]) <= 256)
      threads = (unsigned)atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: search-record [--plugin PATH] [--out DIR] [--only NAME] "
                      "[--reps N] [--threads N]\n");
      return 2;
    }
  }
  char exe[PATH_MAX], guess[PATH_MAX + 64];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (!plugin) {
    if (n <= 0) {
      fprintf(stderr, "search-record: give --plugin PATH\n");
      return 2;
    }
    exe[n] = '\0';
    snprintf(guess, sizeof guess, "%s/../lib/calhost/plugins/cpu_gemm.so", dirname(exe));
    plugin = guess;
  }
  if (!dir)
    dir = CALHOST_SEARCH_SPACES_DIR;
  loader_options lo;
  loader_options_init(&lo);
  loader_plugin *p = loader_open(&lo, NULL, plugin);
  if (!p || !p->loaded) {
    fprintf(stderr, "search-record: %s: %s\n", plugin, p && p->reason ? p->reason : "not loaded");
    loader_plugin_free(p);
    return 1;
  }
  /* Shapes whose candidate spaces do not collapse much (see the plugin's
   * README): square, wide, tall-skinny and short-wide products. */
  static const shape shapes[] = {
      {256, 4096, 512}, {512, 512, 512}, {2048, 64, 512}, {64, 2048, 512}, {1024, 1024, 1024}};
  int failed = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    if (record_space(p, &shapes[s], threads, dir, reps, only) != 0)
      failed = 1;
  loader_plugin_free(p);
  return failed;
}
