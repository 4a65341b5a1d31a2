/*
 * gemm_bench.c: gemm-bench, the figures of the MatMul backends. Loads the
 * built cpu_gemm and openblas plugins through dlopen and drives their
 * vtables like the host does: for each shape and thread count it measures
 * the untuned default, finds the calibrated winner with its own two-stage
 * search (every candidate checked against the reference, then timed once;
 * the best few re-timed, median of repeats), and re-times default, winner
 * and OpenBLAS side by side (interleaved samples, median). With the host's
 * sweep engine linked it also runs `measure` and `exhaustive` sweeps to give
 * regret_pct and sweep_time_ratio. Prints key=value lines and a table.
 * --openblas-level measures only cpu_gemm's calibrated winner against
 * OpenBLAS on one thread, at 1024^3 and on a BERT-base layer's dense
 * MatMuls (batch 8 x seq 128 = 1024 rows: QKV/output 768x768, FFN
 * 768->3072 and 3072->768), and names the kernel OpenBLAS picked; its
 * samples (search and side by side) are the calling thread's CPU time, and
 * the wall-clock figure is printed next to it.
 *
 *   gemm-bench [--quick] [--no-regret | --regret-only | --openblas-level] [--plugin-dir DIR]
 *              [--fma-units N]
 */
#define _GNU_SOURCE
#include <calhost/plugin.h>

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sweep/measure.h"
#include "sweep/rigor.h"
#include "test_host.h"

/* ---- options (the host: tests/common/test_host.c) ----------------------------------------- */

static struct {
  int quick;
  int regret;
  int regret_only; /* skip the table: only regret_pct and sweep_time_ratio */
  int fma_units;
  char plugin_dir[PATH_MAX];
  int level; /* --openblas-level */
} opt = {0, 1, 0, 2, "", 0};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "gemm-bench: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "%s%s\n", test_host_error[0] ? ": " : "", test_host_error);
  va_end(ap);
  exit(1);
}

/* ---- plugins ------------------------------------------------------------- */

typedef test_host_plugin plugin;

/* Loads opt.plugin_dir/NAME.so (ABI 1): 0, or -1 (reason in test_host_error). */
static int plugin_load(const char *name, plugin *p) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s.so", opt.plugin_dir, name);
  return test_host_load(path, 1, 1, p);
}

static int cpu_list[] = {0, 1, 2, 3, 4, 5, 6, 7};

static void pin_to(unsigned threads) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (unsigned i = 0; i < threads; i++)
    CPU_SET(cpu_list[i], &set);
  (void)sched_setaffinity(0, sizeof set, &set);
}

static calhost_target make_target(unsigned threads, const char *processor) {
  calhost_target t;
  memset(&t, 0, sizeof t);
  t.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof t};
  t.processor = processor;
  t.thread_count = threads;
  t.cpus = cpu_list;
  t.cpu_count = threads;
  t.features = NULL; /* the plugin asks the processor */
  return t;
}

static calhost_workload make_workload(const int64_t *shape) {
  calhost_workload w;
  memset(&w, 0, sizeof w);
  w.header = (calhost_struct_header){CALHOST_STRUCT_WORKLOAD, 1, sizeof w};
  w.name = "bench";
  w.operator_name = "MatMul";
  w.dtype = "float32";
  w.shape = shape;
  w.shape_rank = 3;
  w.model_digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
  return w;
}

/* ---- timing -------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Prepares policy, runs it once and checks it. Returns 0 or -1 (reason in
 * test_host_error). */
static int prepare_checked(plugin *p, calhost_session *s, const char *policy) {
  char err[256];
  calhost_run_result rr = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof rr}, -1.0};
  test_host_error[0] = '\0';
  if (p->vt->prepare(s, policy, strlen(policy)) != CALHOST_OK)
    return -1;
  if (p->vt->run(s, 1, &rr) != CALHOST_OK)
    return -1;
  if (p->vt->check && p->vt->check(s, err, sizeof err) != CALHOST_OK) {
    snprintf(test_host_error, sizeof test_host_error, "check failed: %s", err);
    return -1;
  }
  return 0;
}

/* The clock of the samples: the calling thread's CPU time with
 * --openblas-level, where every contender runs on the calling thread alone
 * (one thread; OpenBLAS with threads=1 does not hand off): on a machine
 * shared with other work, the time the scheduler gives to other processes
 * then counts for neither side (their cache and memory traffic still do).
 * Wall time otherwise. */
static double sample_now(void) {
  struct timespec ts;
  clock_gettime(opt.level ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Iterations so that one sample lasts at least min_s. */
static uint32_t size_sample(plugin *p, calhost_session *s, double min_s) {
  uint32_t it = 1;
  calhost_run_result rr = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof rr}, -1.0};
  for (;;) {
    double t = sample_now();
    p->vt->run(s, it, &rr);
    t = sample_now() - t;
    if (t >= min_s || it >= (1u << 24))
      return it;
    it = t <= 0 ? it * 16 : (uint32_t)fmin((double)it * 16, ceil((double)it * min_s * 1.2 / t));
  }
}

/* Wall seconds per iteration of the last sample (--openblas-level's
 * samples are CPU time; this is their wall-clock figure). */
static double last_wall;

/* Seconds per iteration of one sample of `it` iterations of what is prepared. */
static double sample(plugin *p, calhost_session *s, uint32_t it) {
  calhost_run_result rr = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof rr}, -1.0};
  double w = now(), t = sample_now();
  p->vt->run(s, it, &rr);
  t = sample_now() - t;
  last_wall = (now() - w) / it;
  return t / it;
}

/* A contender re-timed side by side with others: its plugin, session and
 * policy; the median seconds per iteration land in sec. */
typedef struct contender {
  plugin *p;
  calhost_session *s;
  char policy[256];
  uint32_t it;
  double sec;
  double wall; /* the median wall seconds of the same samples */
} contender;

/* Interleaved samples: for each repeat every contender is prepared and
 * sampled in turn, so slow drifts of the machine hit them all alike. */
static void side_by_side(contender *c, size_t n, int reps, double min_s) {
  double *v = calloc((size_t)reps * n, sizeof *v), *vw = calloc((size_t)reps * n, sizeof *vw);
  if (!v || !vw)
    die("out of memory");
  for (size_t i = 0; i < n; i++) {
    if (prepare_checked(c[i].p, c[i].s, c[i].policy) != 0)
      die("%s '%s' refused", c[i].p->vt->backend_name, c[i].policy);
    c[i].it = size_sample(c[i].p, c[i].s, min_s);
  }
  for (int r = 0; r < reps; r++)
    for (size_t i = 0; i < n; i++) {
      c[i].p->vt->prepare(c[i].s, c[i].policy, strlen(c[i].policy));
      if (r == 0)
        (void)sample(c[i].p, c[i].s, c[i].it); /* warm-up after the switch */
      v[(size_t)r * n + i] = sample(c[i].p, c[i].s, c[i].it);
      vw[(size_t)r * n + i] = last_wall;
    }
  for (size_t i = 0; i < n; i++) {
    double *col = calloc((size_t)reps, sizeof *col);
    if (!col)
      die("out of memory");
    for (int r = 0; r < reps; r++)
      col[r] = v[(size_t)r * n + i];
    c[i].sec = median(col, (size_t)reps);
    for (int r = 0; r < reps; r++)
      col[r] = vw[(size_t)r * n + i];
    c[i].wall = median(col, (size_t)reps);
    free(col);
  }
  free(v);
  free(vw);
}

typedef struct scored {
  uint32_t index;
  double sec;
} scored;

static int cmp_scored(const void *a, const void *b) {
  return cmp_double(&((const scored *)a)->sec, &((const scored *)b)->sec);
}

/* The bench's own search: every candidate (every 4th with --quick) checked,
 * then scored by the best of 3 short samples; the best `keep` re-timed with
 * a median of reps. Writes
 * the winner's policy. Returns candidates tried; *rejected counts failures. */
static uint32_t search(plugin *p, calhost_session *s, double min_s, int reps, char *winner,
                       size_t cap, uint32_t *rejected) {
  uint32_t count = 0, n = 0, stride = opt.quick ? 4 : 1;
  scored *sc;
  const size_t keep = 8;
  char policy[256];
  size_t len;
  p->vt->candidate_count(s, &count);
  sc = calloc(count, sizeof *sc);
  if (!sc)
    die("out of memory");
  *rejected = 0;
  for (uint32_t i = 0; i < count; i++) {
    /* --quick: a quarter of the list, the kept position rotating from one
     * run of `stride` to the next: the list cycles through the kernels
     * (x splits) innermost, and with four of them a plain stride of 4 saw
     * only the first kernel of each blocking (avx2_4x16 on AVX2) */
    if ((i + i / stride) % stride != 0)
      continue;
    if (p->vt->serialize_candidate(s, i, policy, sizeof policy, &len) != CALHOST_OK)
      continue;
    if (prepare_checked(p, s, policy) != 0) {
      (*rejected)++;
      continue;
    }
    sc[n].index = i;
    { /* the best of 3 short samples: noise only ever slows a sample down */
      uint32_t it = size_sample(p, s, min_s / 4);
      sc[n].sec = sample(p, s, it);
      for (int r = 1; r < 3; r++)
        sc[n].sec = fmin(sc[n].sec, sample(p, s, it));
    }
    n++;
  }
  if (n == 0)
    die("%s: no candidate passed its check", p->vt->backend_name);
  qsort(sc, n, sizeof *sc, cmp_scored);
  for (size_t j = 0; j < n && j < keep; j++) {
    double v[32];
    uint32_t it;
    p->vt->serialize_candidate(s, sc[j].index, policy, sizeof policy, &len);
    p->vt->prepare(s, policy, len);
    it = size_sample(p, s, min_s);
    for (int r = 0; r < reps && r < 32; r++)
      v[r] = sample(p, s, it);
    sc[j].sec = median(v, (size_t)(reps < 32 ? reps : 32));
  }
  qsort(sc, n < keep ? n : keep, sizeof *sc, cmp_scored);
  p->vt->serialize_candidate(s, sc[0].index, winner, cap, &len);
  free(sc);
  return n + *rejected;
}

/* ---- the machine --------------------------------------------------------- */

typedef struct machine {
  char model[128];
  double mhz; /* the frequency assumed for the peak */
  double nominal_mhz, measured_mhz;
  const char *mhz_from;
  int lanes; /* float32 lanes of the widest vector unit */
  const char *isa;
  double peak_core; /* GFLOP/s per core */
} machine;

/* The core's clock measured with a chain of dependent integer adds (one
 * cycle each on every x86 core of the last decade): best of 40 trials, MHz.
 * 0 off x86. */
static double measured_mhz(void) {
#if defined(__x86_64__)
  double best = 0;
  for (int trial = 0; trial < 40; trial++) {
    uint64_t x = 0, one = 1;
    const long rounds = 1000000; /* x 8 adds: about 2.5 ms */
    double t = now();
    /* register operands: recent cores fold "add reg, imm" at rename */
    for (long i = 0; i < rounds; i++)
      __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                       "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                       : "+r"(x)
                       : "r"(one));
    t = now() - t;
    if (t > 0 && 8.0 * rounds / t / 1e6 > best)
      best = 8.0 * rounds / t / 1e6;
  }
  return best;
#else
  return 0;
#endif
}

static void read_machine(machine *m) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[4096];
  int avx512 = 0, avx2 = 0, fma = 0;
  memset(m, 0, sizeof *m);
  snprintf(m->model, sizeof m->model, "unknown");
  while (f && fgets(line, sizeof line, f)) {
    if (!strncmp(line, "model name", 10) && strchr(line, ':') && !strcmp(m->model, "unknown")) {
      snprintf(m->model, sizeof m->model, "%s", strchr(line, ':') + 2);
      m->model[strcspn(m->model, "\n")] = '\0';
    } else if (!strncmp(line, "cpu MHz", 7) && strchr(line, ':') && m->mhz == 0) {
      m->mhz = atof(strchr(line, ':') + 1);
      m->mhz_from = "/proc/cpuinfo cpu MHz";
    } else if (!strncmp(line, "flags", 5) && !avx2) {
      avx512 = strstr(line, " avx512f") != NULL;
      avx2 = strstr(line, " avx2") != NULL;
      fma = strstr(line, " fma") != NULL;
    }
  }
  if (f)
    fclose(f);
  { /* cpu_gemm's cap (gemm_isa_detect): the figures of the capped class */
    const char *cap = getenv("CALHOST_CPU_GEMM_MAX_ISA");
    if (cap && !strcmp(cap, "avx2"))
      avx512 = 0;
    else if (cap && !strcmp(cap, "portable"))
      avx512 = avx2 = 0;
  }
  f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
  if (f) {
    long khz = 0;
    if (fscanf(f, "%ld", &khz) == 1 && khz > 0) {
      m->mhz = (double)khz / 1000.0;
      m->mhz_from = "cpufreq cpuinfo_max_freq";
    }
    fclose(f);
  }
  m->nominal_mhz = m->mhz;
  m->measured_mhz = measured_mhz();
  if (m->measured_mhz > m->mhz) { /* turbo: the nominal figure understates the peak */
    m->mhz = m->measured_mhz;
    m->mhz_from = "measured with a dependent add chain";
  }
  m->lanes = avx512 ? 16 : (avx2 && fma) ? 8 : 4;
  m->isa = avx512 ? "avx512" : (avx2 && fma) ? "avx2+fma" : "sse";
  m->peak_core = (double)m->lanes * opt.fma_units * 2.0 * m->mhz / 1000.0;
  if (!(avx2 && fma) && !avx512)
    m->peak_core /= 2.0; /* no FMA: a mul and an add per lane and cycle, counted once each */
}

/* ---- the run ------------------------------------------------------------- */

typedef struct result {
  int64_t shape[3];
  unsigned threads;
  unsigned used_threads;
  double gf_default, gf_isa_default, gf_winner, gf_openblas, gf_openblas_1t, gf_openblas_best;
  char winner[160];
  char openblas_best[32];
  uint32_t tried, rejected;
  double gain, gain_isa;
  double pct_wall; /* winner vs OpenBLAS on the samples' wall-clock medians */
} result;

static double gflops(const int64_t *s, double sec) {
  return 2.0 * (double)s[0] * (double)s[1] * (double)s[2] / sec / 1e9;
}

/* The best-ISA kernel with the default's blocking: the default a backend
 * with run-time ISA dispatch but no tuning would ship. */
static const char *isa_default_policy(const machine *m) {
  if (m->lanes == 16)
    return "kernel=avx512_8x32;mc=64;nc=512;kc=128;split=n";
  if (m->lanes == 8)
    return "kernel=avx2_8x8;mc=64;nc=512;kc=128;split=n";
  return "kernel=gen_4x8;mc=64;nc=512;kc=128;split=n";
}

static void bench_one(plugin *cg, plugin *ob, const machine *m, const int64_t *shape,
                      unsigned threads, result *r) {
  calhost_workload w = make_workload(shape);
  calhost_target t = make_target(threads, m->model);
  calhost_built_key key;
  calhost_session *s = NULL, *so = NULL;
  double min_s = opt.quick ? 0.004 : 0.01;
  /* --openblas-level: 21 repeats whatever the mode, as a product of these
   * shapes is one iteration of about 30 ms and 5 left the ratio +-1-2% */
  int reps = opt.level ? 21 : opt.quick ? 5 : 9;
  contender c[6];
  size_t n = 0, len;
  memset(r, 0, sizeof *r);
  memcpy(r->shape, shape, sizeof r->shape);
  r->threads = threads;
  pin_to(threads);
  if (cg->vt->build_key(cg->inst, &w, &t, &key) != CALHOST_OK)
    die("build_key");
  r->used_threads = key.thread_count;
  if (cg->vt->open_session(cg->inst, &w, &t, &s) != CALHOST_OK)
    die("open_session");
  r->tried = search(cg, s, min_s, reps, r->winner, sizeof r->winner, &r->rejected);
  memset(c, 0, sizeof c);
  c[n].p = cg;
  c[n].s = s;
  cg->vt->default_policy(s, c[n].policy, sizeof c[n].policy, &len);
  n++;
  c[n].p = cg;
  c[n].s = s;
  snprintf(c[n].policy, sizeof c[n].policy, "%s", isa_default_policy(m));
  n++;
  c[n].p = cg;
  c[n].s = s;
  snprintf(c[n].policy, sizeof c[n].policy, "%s", r->winner);
  n++;
  if (ob->vt) {
    if (ob->vt->open_session(ob->inst, &w, &t, &so) != CALHOST_OK)
      die("openblas open_session");
    c[n].p = ob;
    c[n].s = so;
    ob->vt->default_policy(so, c[n].policy, sizeof c[n].policy, &len); /* threads=T */
    n++;
    if (threads > 1) {
      c[n].p = ob;
      c[n].s = so;
      snprintf(c[n].policy, sizeof c[n].policy, "threads=1");
      n++;
    }
  }
  side_by_side(c, n, reps, min_s);
  r->gf_default = gflops(shape, c[0].sec);
  r->gf_isa_default = gflops(shape, c[1].sec);
  r->gf_winner = gflops(shape, c[2].sec);
  r->gain = c[0].sec / c[2].sec;
  r->gain_isa = c[1].sec / c[2].sec;
  if (ob->vt) {
    r->gf_openblas = gflops(shape, c[3].sec);
    r->pct_wall = 100.0 * c[3].wall / c[2].wall;
    r->gf_openblas_1t = threads > 1 ? gflops(shape, c[4].sec) : r->gf_openblas;
    r->gf_openblas_best = fmax(r->gf_openblas, r->gf_openblas_1t);
    snprintf(r->openblas_best, sizeof r->openblas_best, "threads=%u",
             r->gf_openblas >= r->gf_openblas_1t ? threads : 1);
    ob->vt->close_session(so);
  }
  cg->vt->close_session(s);
}

/* regret: the measure sweep's winner vs the exhaustive sweep's, re-timed
 * side by side; sweep_time_ratio: measure's wall time over exhaustive's. */
static void regret_one(plugin *cg, const machine *m, const int64_t *shape, double *regret_pct,
                       double *time_ratio) {
  calhost_workload w = make_workload(shape);
  calhost_target t = make_target(1, m->model);
  sweep_request req;
  sweep_result rm, rx;
  double t_m, t_x;
  calhost_session *s = NULL;
  contender c[2];
  pin_to(1);
  memset(&req, 0, sizeof req);
  req.vtable = cg->vt;
  req.abi_version = 1;
  req.instance = cg->inst;
  req.workload = &w;
  req.target = &t;
  sweep_rigor_params_init(CALHOST_RIGOR_MEASURE, 0, &req.params);
  t_m = now();
  if (sweep_run(&req, &rm) != 0)
    die("measure sweep failed: %s", rm.error);
  t_m = now() - t_m;
  sweep_rigor_params_init(CALHOST_RIGOR_EXHAUSTIVE, 0, &req.params);
  t_x = now();
  if (sweep_run(&req, &rx) != 0)
    die("exhaustive sweep failed: %s", rx.error);
  t_x = now() - t_x;
  if (cg->vt->open_session(cg->inst, &w, &t, &s) != CALHOST_OK)
    die("open_session");
  memset(c, 0, sizeof c);
  c[0].p = c[1].p = cg;
  c[0].s = c[1].s = s;
  snprintf(c[0].policy, sizeof c[0].policy, "%s", rm.winner_policy);
  snprintf(c[1].policy, sizeof c[1].policy, "%s", rx.winner_policy);
  if (strcmp(rm.winner_policy, rx.winner_policy) == 0) {
    *regret_pct = 0.0; /* the same candidate: no regret by definition */
  } else {
    side_by_side(c, 2, opt.quick ? 9 : 21, 0.01);
    *regret_pct = (c[0].sec / c[1].sec - 1.0) * 100.0;
  }
  *time_ratio = t_m / t_x;
  printf("regret shape=%lldx%lldx%lld threads=1 measure_winner=%s exhaustive_winner=%s "
         "measure_sweep_s=%.2f exhaustive_sweep_s=%.2f measure_tried=%u measure_pruned=%u "
         "regret_pct=%.2f sweep_time_ratio=%.3f\n",
         (long long)shape[0], (long long)shape[1], (long long)shape[2], rm.winner_policy,
         rx.winner_policy, t_m, t_x, rm.tried, rm.pruned, *regret_pct, *time_ratio);
  fflush(stdout);
  cg->vt->close_session(s);
  sweep_result_free(&rm);
  sweep_result_free(&rx);
}

/* openblas_single_below: the smallest square size from which OpenBLAS on
 * two threads beats one thread at every larger size measured. */
static void openblas_threshold(plugin *ob, const machine *m) {
  static const int64_t sizes[] = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512};
  const size_t ns = sizeof sizes / sizeof sizes[0];
  double ratio[sizeof sizes / sizeof sizes[0]];
  int64_t below = 0;
  pin_to(2);
  for (size_t i = 0; i < ns; i++) {
    int64_t shape[3] = {sizes[i], sizes[i], sizes[i]};
    calhost_workload w = make_workload(shape);
    calhost_target t = make_target(2, m->model);
    calhost_session *s = NULL;
    contender c[2];
    if (ob->vt->open_session(ob->inst, &w, &t, &s) != CALHOST_OK)
      die("openblas open_session");
    memset(c, 0, sizeof c);
    c[0].p = c[1].p = ob;
    c[0].s = c[1].s = s;
    snprintf(c[0].policy, sizeof c[0].policy, "threads=1");
    snprintf(c[1].policy, sizeof c[1].policy, "threads=2");
    side_by_side(c, 2, opt.quick ? 5 : 9, 0.005);
    ratio[i] = c[0].sec / c[1].sec; /* > 1: two threads faster */
    ob->vt->close_session(s);
  }
  for (size_t i = ns; i-- > 0;) {
    if (ratio[i] <= 1.0)
      break;
    below = sizes[i];
  }
  printf("openblas_speedup_2t_vs_1t=");
  for (size_t i = 0; i < ns; i++)
    printf("%s%lld:%.2f", i ? "," : "", (long long)sizes[i], ratio[i]);
  printf("\nopenblas_single_below=%lld (square size from which 2 threads win; 0: never)\n",
         (long long)below);
}

static int cmp_result_gain(const void *a, const void *b) {
  return cmp_double(&((const result *)a)->gain, &((const result *)b)->gain);
}

/* The core OpenBLAS chose (openblas_get_corename of the library the
 * openblas plugin loaded), or "unknown". */
static const char *openblas_core(void) {
  void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
  char *(*corename)(void) = NULL;
  const char *name = "unknown";
  if (lib) {
    *(void **)&corename = dlsym(lib, "openblas_get_corename");
    if (corename && corename())
      name = corename();
  }
  return name;
}

/* --openblas-level: one thread, 1024^3 and the BERT-base layer's shapes:
 * calibrated cpu_gemm against OpenBLAS, side by side. */
static void openblas_level(plugin *cg, plugin *ob, const machine *m) {
  static const int64_t shapes[][3] = {
      {1024, 1024, 1024}, {1024, 768, 768}, {1024, 3072, 768}, {1024, 768, 3072}};
  static const char *const names[] = {"square", "bert_qkv_out", "bert_ffn_up", "bert_ffn_down"};
  double work = 0, t_cg = 0, t_ob = 0;
  if (!ob->vt)
    die("--openblas-level needs the openblas plugin");
  printf("openblas_core=%s (openblas_get_corename; OPENBLAS_CORETYPE=%s)\n", openblas_core(),
         getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "unset");
  printf("timing=thread_cpu_time (every contender on the calling thread: other processes' "
         "share of the CPU counts for neither; pct_of_openblas_wall: the same samples' wall "
         "clock)\n");
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    result r;
    double flop = 2.0 * (double)shapes[i][0] * (double)shapes[i][1] * (double)shapes[i][2];
    bench_one(cg, ob, m, shapes[i], 1, &r);
    printf("level shape=%lldx%lldx%lld (%s) calibrated_gflops=%.1f openblas_gflops=%.1f "
           "pct_of_openblas=%.1f pct_of_openblas_wall=%.1f winner=%s\n",
           (long long)shapes[i][0], (long long)shapes[i][1], (long long)shapes[i][2], names[i],
           r.gf_winner, r.gf_openblas, 100.0 * r.gf_winner / r.gf_openblas, r.pct_wall, r.winner);
    fflush(stdout);
    if (i == 0)
      printf("pct_of_openblas=%.1f (calibrated cpu_gemm vs OpenBLAS sgemm, 1 thread, 1024^3)\n",
             100.0 * r.gf_winner / r.gf_openblas);
    else { /* the layer: its three shapes once each (QKV and output are 4 of the first) */
      double count = i == 1 ? 4.0 : 1.0;
      work += count * flop;
      t_cg += count * flop / (r.gf_winner * 1e9);
      t_ob += count * flop / (r.gf_openblas * 1e9);
    }
  }
  printf("bert_layer_pct_of_openblas=%.1f (one layer's dense MatMuls, 4 x 768x768 + 768x3072 + "
         "3072x768 at 1024 rows, %.1f GFLOP: OpenBLAS time / cpu_gemm time)\n",
         100.0 * t_ob / t_cg, work * 1e-9);
}

int main(int argc, char **argv) {
  static const int64_t shapes[][3] = {{32, 32, 32},    {48, 48, 48},    {64, 64, 64},
                                      {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024},
                                      {2048, 64, 512}, {64, 2048, 512}};
  const size_t nshapes = sizeof shapes / sizeof shapes[0];
  result res[2 * sizeof shapes / sizeof shapes[0]];
  size_t nres = 0;
  plugin cg, ob;
  machine m;
  double pct_of_openblas = -1, t0 = now();
  unsigned max_threads = (unsigned)sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;

  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      opt.quick = 1;
    else if (!strcmp(argv[i], "--no-regret"))
      opt.regret = 0;
    else if (!strcmp(argv[i], "--regret-only"))
      opt.regret_only = 1;
    else if (!strcmp(argv[i], "--openblas-level"))
      opt.level = 1;
    else if (!strcmp(argv[i], "--plugin-dir") && i + 1 < argc)
      snprintf(opt.plugin_dir, sizeof opt.plugin_dir, "%s", argv[++i]);
    else if (!strcmp(argv[i], "--fma-units") && i + 1 < argc)
      opt.fma_units = atoi(argv[++i]);
    else {
      fprintf(stderr,
              "usage: gemm-bench [--quick] [--no-regret | --regret-only | --openblas-level] "
              "[--plugin-dir DIR] [--fma-units N]\n");
      return 2;
    }
  }
  if (!opt.plugin_dir[0]) {
    const char *b = getenv("CALHOST_BUILD_DIR");
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (b)
      snprintf(opt.plugin_dir, sizeof opt.plugin_dir, "%s/lib/calhost/plugins", b);
    else if (k > 0) {
      exe[k] = '\0';
      snprintf(opt.plugin_dir, sizeof opt.plugin_dir, "%s/../lib/calhost/plugins", dirname(exe));
    }
  }
  for (unsigned i = 0; i < sizeof cpu_list / sizeof cpu_list[0]; i++)
    cpu_list[i] = (int)i;
  read_machine(&m);
  if (plugin_load("cpu_gemm", &cg) != 0)
    die("cannot load %s/cpu_gemm.so", opt.plugin_dir); /* die() appends test_host_error */
  if (plugin_load("openblas", &ob) != 0) {
    fprintf(stderr, "gemm-bench: openblas plugin not available; OpenBLAS figures skipped\n");
    memset(&ob, 0, sizeof ob);
  }

  printf("machine=%s\n", m.model);
  printf("isa=%s lanes=%d fma_units=%d (assumed) freq_mhz=%.0f (from %s) nominal_mhz=%.0f "
         "measured_mhz=%.0f\n",
         m.isa, m.lanes, opt.fma_units, m.mhz, m.mhz_from ? m.mhz_from : "nowhere", m.nominal_mhz,
         m.measured_mhz);
  {
    FILE *la = fopen("/proc/loadavg", "r");
    char buf[128] = "";
    if (la && fgets(buf, sizeof buf, la))
      printf("loadavg_at_start=%s", buf);
    if (la)
      fclose(la);
  }
  printf("peak_sp_gflops_per_core=%.1f (= %d lanes x %d FMA units x 2 flops x %.2f GHz; "
         "AVX-512 frequency licences ignored)\n",
         m.peak_core, m.lanes, opt.fma_units, m.mhz / 1000.0);
  printf("mode=%s\n", opt.quick ? "quick" : "full");
  fflush(stdout);
  if (opt.level) {
    openblas_level(&cg, &ob, &m);
    return 0;
  }

  for (unsigned threads = 1; threads <= max_threads && !opt.regret_only; threads++)
    for (size_t i = 0; i < nshapes; i++) {
      result *r = &res[nres++];
      double peak = m.peak_core * threads;
      bench_one(&cg, &ob, &m, shapes[i], threads, r);
      printf("shape=%lldx%lldx%lld threads=%u used_threads=%u default_gflops=%.1f "
             "isa_default_gflops=%.1f calibrated_gflops=%.1f openblas_gflops=%.1f "
             "default_pct_peak=%.1f calibrated_pct_peak=%.1f openblas_pct_peak=%.1f "
             "gain_vs_default=%.2f gain_vs_isa_default=%.2f candidates_tried=%u rejected=%u "
             "winner=%s openblas_best=%s\n",
             (long long)r->shape[0], (long long)r->shape[1], (long long)r->shape[2], threads,
             r->used_threads, r->gf_default, r->gf_isa_default, r->gf_winner, r->gf_openblas,
             100 * r->gf_default / peak, 100 * r->gf_winner / peak, 100 * r->gf_openblas / peak,
             r->gain, r->gain_isa, r->tried, r->rejected, r->winner,
             r->openblas_best[0] ? r->openblas_best : "n/a");
      fflush(stdout);
      if (threads == 1 && r->shape[0] == 1024 && r->shape[1] == 1024 && r->gf_openblas > 0)
        pct_of_openblas = 100.0 * r->gf_winner / r->gf_openblas;
    }

  if (nres > 0) {
    printf("\n%-16s %3s %9s %9s %9s %9s %7s %7s %6s  %s\n", "shape", "thr", "default", "isa_def",
           "calib", "openblas", "gain", "gain_isa", "%peak", "winner");
    for (size_t i = 0; i < nres; i++) {
      char sh[32];
      snprintf(sh, sizeof sh, "%lldx%lldx%lld", (long long)res[i].shape[0],
               (long long)res[i].shape[1], (long long)res[i].shape[2]);
      printf("%-16s %3u %9.1f %9.1f %9.1f %9.1f %6.2fx %6.2fx %5.1f%%  %s\n", sh, res[i].threads,
             res[i].gf_default, res[i].gf_isa_default, res[i].gf_winner, res[i].gf_openblas,
             res[i].gain, res[i].gain_isa, 100 * res[i].gf_winner / (m.peak_core * res[i].threads),
             res[i].winner);
    }
    printf("(GFLOP/s; gain = default latency / calibrated latency, re-timed side by side)\n\n");
    {
      result sorted[sizeof res / sizeof res[0]];
      double gi[sizeof res / sizeof res[0]];
      memcpy(sorted, res, nres * sizeof *res);
      qsort(sorted, nres, sizeof *sorted, cmp_result_gain);
      for (size_t i = 0; i < nres; i++)
        gi[i] = res[i].gain_isa;
      printf("gain_vs_default_median=%.2f (over %zu shape x thread configurations; min %.2f, max "
             "%.2f)\n",
             nres % 2 ? sorted[nres / 2].gain
                      : 0.5 * (sorted[nres / 2 - 1].gain + sorted[nres / 2].gain),
             nres, sorted[0].gain, sorted[nres - 1].gain);
      printf("gain_vs_isa_default_median=%.2f\n", median(gi, nres));
    }
    if (pct_of_openblas >= 0)
      printf("pct_of_openblas=%.1f (calibrated cpu_gemm vs OpenBLAS sgemm, 1 thread, 1024^3)\n",
             pct_of_openblas);
    fflush(stdout);
  }
  if (ob.vt && !opt.regret_only)
    openblas_threshold(&ob, &m);
  if (opt.regret) {
    static const int64_t rshapes[][3] = {{256, 256, 256}, {2048, 64, 512}};
    double rp[2], tr[2];
    size_t nr = opt.quick ? 1 : 2;
    for (size_t i = 0; i < nr; i++)
      regret_one(&cg, &m, rshapes[i], &rp[i], &tr[i]);
    printf(
        "regret_pct=%.2f (max over %zu shapes; measure vs exhaustive rigor winners re-timed side "
        "by side)\nsweep_time_ratio=%.3f (max over the same shapes)\n",
        nr > 1 ? fmax(rp[0], rp[1]) : rp[0], nr, nr > 1 ? fmax(tr[0], tr[1]) : tr[0]);
  }
  {
    FILE *la = fopen("/proc/loadavg", "r");
    char buf[128] = "";
    if (la && fgets(buf, sizeof buf, la))
      printf("loadavg_at_end=%s", buf);
    if (la)
      fclose(la);
  }
  printf("bench_seconds=%.1f\n", now() - t0);
  return 0;
}
