/*
 * search_bench.c: search-bench, the figures of the search strategies
 * (host/search/README.md). Replays every space (spaces/NAME.space: the
 * recorded ones and the generated gen-*.space, or --spaces DIR) with every
 * strategy over many seeds (31), without running a kernel, and prints per
 * strategy and space one line:
 *
 *   strategy=NAME space=NAME size=N order=plausible|none curated=0|1 seeds=N
 *   quick_evals=N measure_evals=N frac_at_quick=F frac_at_measure=F
 *   frac_at_25=F frac_at_50=F frac_at_100=F frac_at_200=F frac_at_2pct=F
 *   frac_at_5pct=F frac_at_10pct=F frac_at_20pct=F [frac_at_budget=F]
 *   seeds_90_at_quick=N seeds_99_at_measure=N
 *   [seeds_90_at_budget=N mean_at_budget=F+-SE] mean_at_quick=F+-SE
 *   mean_at_measure=F+-SE evals_to_95pct=N evals_to_99pct=N
 *
 * frac_at_B: best recorded median / the median of the best configuration
 * found with a budget of B evaluations, at the median seed. The budgets
 * count evaluations, rejected configurations included (as in a sweep,
 * where a rejected candidate costs its check and counts against the
 * budget); quick and measure are what a sweep spends at those rigor
 * levels on the space (search_sweep_rigor_plan: quick: 2%, 8 to 32;
 * measure: 10%, 32 to 256, except a plugin's curated list, `meta curated
 * 1`, of at most 4096, which measure runs whole: the exhaustive strategy
 * is then measure's, run and marked default=1 even with --strategy, and
 * frac_at_10pct keeps the search's own figure); 25..200 are fixed counts (left out when not
 * below the size); Xpct are shares of the space (rounded up); --budget N
 * adds frac_at_budget. Budgets over --max-evals (1000) are left out,
 * except quick's and measure's (a curated list's measure: its size).
 * seeds_90_at_quick, seeds_99_at_measure: how many of the seeds reached
 * the goals (0.90 at quick, 0.99 at measure): the median alone hides an
 * outcome that is bimodal by seed (with --budget, seeds_90_at_budget and
 * mean_at_budget too: on a space where the seeds split between a plateau
 * and the optimum, the median at a budget is a coin toss and the count
 * says more). mean_at_quick, mean_at_measure: the
 * mean fraction over the seeds and its standard error: two strategies
 * whose means are within about two standard errors are level, whatever
 * their medians.
 * evals_to_Ypct: evaluations until a configuration within Y% of the
 * optimum (median / found >= Y/100) was found, at the median seed, at most
 * --max-evals (that + 1: not reached). `default=1` marks the strategy the
 * default picks at measure's budget, `quick=1` the one quick picks. Then a
 * numbered-view line per space (quick's strategy on one ordered parameter, the
 * recorded order: what describing the parameters is worth; spaces of at
 * most 4096) and a summary of the goals. --reader times the reader on a
 * 194 481-configuration space in order and reversed. --step-cost prints
 * the default's processor time per evaluation at measure's budget. --rigor-only runs
 * quick's and measure's budgets (and --budget) alone, without the
 * evals_to trace (nan): the quick way to compare versions of a strategy;
 * --no-trace leaves out only the trace. --first-seed N (1) replays seeds
 * N..N+seeds-1: another sample of seeds, the noise of a median.
 * --transfer measures the warm start (search_space.warm) between devices
 * of one kernel (transfer_bench): one `transfer target=... donor=...` line
 * per pair, the default at quick's budget and at 8 evaluations cold, warm
 * from the donor's --warm N (1) fastest and misled by the N slowest
 * configurations of the target, and
 * cold again over other seeds (1001..): the noise of a median of seeds;
 * then the mean at quick over the seeds with its standard error, cold,
 * warm and misled.
 *
 * --live (instead of the replay) runs the live plugins (cpu_gemm, and
 * opencl_gemm when built; or --plugin PATH, repeatable) through the host's
 * loader and measurement engine: per plugin and shape, an exhaustive, a
 * quick and a measure sweep (sweep_run at each rigor level, whose
 * candidates the search chooses as calibrate does), and for a plugin that
 * describes its space (ABI 2) a quick and a measure sweep over its numbered
 * candidates too (the ABI 1 view, space=numbered: the baseline measured in
 * the same run), one line each:
 *
 *   live plugin=NAME shape=MxNxK threads=1 candidates=N space=numbered|parameters
 *   space_size=N rigor=R strategy=S evaluated=N repeats=N seconds=F
 *   time_vs_exhaustive=F winner_vs_exhaustive=F
 *
 * Each quick and measure sweep runs --repeat N times (5; seeds 1..N,
 * interleaved with the other sweeps so that a burst of load hits them
 * alike): seconds and winner_vs_exhaustive are their medians. The
 * exhaustive sweep, the reference, runs once.
 *
 * The exhaustive sweep runs only when the space has at most
 * --max-exhaustive (2000) valid configurations (a described OpenCL space
 * of 10 000 points takes hours on PoCL): otherwise a line says it was
 * skipped and the ratios are nan.
 * time_vs_exhaustive: this sweep's wall time / the exhaustive sweep's, in
 * the same run; winner_vs_exhaustive: the quality of this sweep's choice,
 * judged in the exhaustive sweep (the same samples for both): the
 * exhaustive winner's median / the median the exhaustive sweep measured for
 * this sweep's winner (1: it chose the same or an equally fast candidate).
 *
 *   search-bench [--replay] [--spaces DIR] [--seeds N] [--strategy NAME]
 *                [--space NAME] [--budget N] [--max-evals N] [--no-start]
 *                [--no-numbered] [--rigor-only] [--no-trace]
 *   search-bench --transfer [--spaces DIR] [--seeds N] [--space NAME] [--warm N]
 *   search-bench --step-cost [--spaces DIR] [--space NAME] [--strategy NAME]
 *   search-bench --reader
 *   search-bench --live [--plugin PATH]... [--shape MxNxK]... [--threads N]
 *                [--max-exhaustive N] [--repeat N]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search/search.h"
#include "search/spacefile.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median seed's value (the lower middle for an even count). */
static double median_of(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_d);
  return v[(n - 1) / 2];
}

/* The mean of the n seeds' values and its standard error (the medians of
 * these spaces jump between the modes of a bimodal outcome; two
 * strategies whose means are within about two standard errors are
 * level). */
static void mean_and_se(const double *v, int n, double *mean, double *se) {
  double sum = 0, sq = 0;
  for (int i = 0; i < n; i++)
    sum += v[i];
  *mean = n ? sum / n : NAN;
  for (int i = 0; i < n; i++)
    sq += (v[i] - *mean) * (v[i] - *mean);
  *se = n > 1 ? sqrt(sq / (n - 1) / n) : 0;
}

#ifdef CALHOST_SEARCH_BENCH_LIVE
#include <libgen.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "loader/loader.h"
#include "processor/processor.h"
#include "sweep/measure.h"
#include "sweep/rigor.h"

/* One plugin's live sweeps: per shape, exhaustive then quick and measure. */
static int live_plugin(const char *path, const long long (*shapes)[3], size_t nshapes,
                       unsigned threads, uint64_t max_exhaustive, unsigned repeats) {
  loader_options lo;
  loader_options_init(&lo);
  loader_plugin *p = loader_open(&lo, NULL, path);
  if (!p || !p->loaded) {
    fprintf(stderr, "search-bench: %s: %s\n", path, p && p->reason ? p->reason : "not loaded");
    loader_plugin_free(p);
    return 1;
  }
  const calhost_plugin_vtable *vt = &p->vtable;
  calhost_plugin_instance *inst = NULL;
  if (vt->create(&p->services, NULL, 0, &inst) != CALHOST_OK || !inst) {
    fprintf(stderr, "search-bench: %s: create failed\n", p->backend);
    loader_plugin_free(p);
    return 1;
  }
  int cpus[256];
  for (int i = 0; i < 256; i++)
    cpus[i] = i;
  processor_pin_thread(cpus, threads, NULL, 0);
  int failed = 0;
  for (size_t si = 0; si < nshapes; si++) {
    int64_t dims[3] = {shapes[si][0], shapes[si][1], shapes[si][2]};
    char name[96];
    snprintf(name, sizeof name, "%lldx%lldx%lld", shapes[si][0], shapes[si][1], shapes[si][2]);
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
    t.processor = "search-bench";
    t.thread_count = threads;
    t.cpus = cpus;
    t.cpu_count = threads;
    t.features = "";
    /* quick and measure first: their space size decides whether the
     * exhaustive sweep is affordable (--max-exhaustive); then, for a plugin
     * that describes its space, quick and measure again over its numbered
     * candidates (negotiated ABI 1's view): the baseline of the same run.
     * Every sweep but the exhaustive one runs `repeats` times (seeds 1..),
     * interleaved, and is reported by its medians. */
    enum { RUNS = 5 };
    static const sweep_rigor order[RUNS] = {CALHOST_RIGOR_QUICK, CALHOST_RIGOR_MEASURE,
                                            CALHOST_RIGOR_EXHAUSTIVE, CALHOST_RIGOR_QUICK,
                                            CALHOST_RIGOR_MEASURE};
    sweep_result *res = calloc(RUNS * (size_t)repeats, sizeof *res);
    double *took = calloc(RUNS * (size_t)repeats, sizeof *took);
    int ran[RUNS] = {0}, skipped = 0;
    if (!res || !took) {
      free(res);
      free(took);
      failed = 1;
      break;
    }
    for (unsigned rep = 0; rep < repeats && !failed; rep++)
      for (int ri = 0; ri < RUNS; ri++) {
        sweep_result *r = &res[ri * repeats + rep];
        if (ri == 2 && (rep > 0 || skipped))
          continue; /* the reference runs once */
        if (ri == 2 && (res[0].space_size == 0 || res[0].space_size > max_exhaustive)) {
          printf("live plugin=%s shape=%s threads=%u space=%llu exhaustive=skipped "
                 "(more than --max-exhaustive %llu configurations)\n",
                 p->backend, name, threads, (unsigned long long)res[0].space_size,
                 (unsigned long long)max_exhaustive);
          skipped = 1;
          continue;
        }
        if (ri >= 3 && res[0].numbered)
          break; /* numbered already: no second view */
        sweep_request req = {.vtable = vt,
                             .abi_version = ri >= 3 ? 1u : p->abi_version,
                             .instance = inst,
                             .workload = &w,
                             .target = &t,
                             .seed = rep + 1};
        sweep_rigor_params_init(order[ri], 0, &req.params);
        double t0 = sweep_now();
        sweep_run(&req, r);
        took[ri * repeats + rep] = sweep_now() - t0;
        ran[ri] = (int)rep + 1;
        if (!r->ok) {
          fprintf(stderr, "search-bench: %s %s %s: %s\n", p->backend, name,
                  base_rigor_name(order[ri]), r->error);
          failed = 1;
          break;
        }
      }
    const sweep_result *ex = ran[2] && res[2 * repeats].ok ? &res[2 * repeats] : NULL;
    for (int ri = 0; ri < RUNS && !failed; ri++) {
      unsigned n = (unsigned)ran[ri];
      if (!n)
        continue;
      double quality[64], seconds[64];
      for (unsigned rep = 0; rep < n; rep++) {
        const sweep_result *r = &res[ri * repeats + rep];
        /* this sweep's winner as the exhaustive sweep measured it */
        double chosen = NAN;
        for (size_t c = 0; ex && c < ex->candidate_entries; c++)
          if (ex->candidates[c].policy && r->winner_policy &&
              strcmp(ex->candidates[c].policy, r->winner_policy) == 0)
            chosen = ex->candidates[c].figures.median_us;
        quality[rep] = ex ? ex->figures.median_us / chosen : NAN;
        seconds[rep] = took[ri * repeats + rep];
      }
      const sweep_result *r = &res[ri * repeats];
      double secs = median_of(seconds, n);
      printf("live plugin=%s shape=%s threads=%u candidates=%u space=%s space_size=%llu rigor=%s "
             "strategy=%s evaluated=%u repeats=%u seconds=%.2f time_vs_exhaustive=%.3f "
             "winner_vs_exhaustive=%.3f\n",
             p->backend, name, threads, r->candidate_count, r->numbered ? "numbered" : "parameters",
             (unsigned long long)r->space_size, base_rigor_name(order[ri]),
             base_strategy_name((search_strategy)r->strategy), r->evaluated, n, secs,
             ex ? secs / took[2 * repeats] : NAN, ex ? median_of(quality, n) : NAN);
      fflush(stdout);
    }
    for (size_t i = 0; i < RUNS * (size_t)repeats; i++)
      sweep_result_free(&res[i]);
    free(res);
    free(took);
  }
  vt->destroy(inst);
  loader_plugin_free(p);
  return failed;
}

static int live_main(int argc, char **argv) {
  const char *plugins[16];
  size_t np = 0, ns = 0;
  long long shapes[16][3];
  unsigned threads = 1;
  uint64_t max_exhaustive = 2000;
  unsigned repeats = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--live") == 0)
      continue;
    if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
        atoi(argv[i + 1]) <= 64) {
      repeats = (unsigned)atoi(argv[++i]);
      continue;
    }
    if (strcmp(argv[i], "--max-exhaustive") == 0 && i + 1 < argc) {
      max_exhaustive = strtoull(argv[++i], NULL, 10);
      continue;
    }
    if (strcmp(argv[i], "--plugin") == 0 && i + 1 < argc && np < 16)
      plugins[np++] = argv[++i];
    else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc && ns < 16 &&
             sscanf(argv[i + 1], "%lldx%lldx%lld", &shapes[ns][0], &shapes[ns][1],
                    &shapes[ns][2]) == 3 &&
             shapes[ns][0] > 0 && shapes[ns][1] > 0 && shapes[ns][2] > 0)
      ns++, i++;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
             atoi(argv[i + 1]) <= 256)
      threads = (unsigned)atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: search-bench --live [--plugin PATH]... [--shape MxNxK]... "
                      "[--threads N] [--max-exhaustive N] [--repeat N]\n");
      return 2;
    }
  }
  static char guess[2][PATH_MAX + 64];
  if (!np) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
      fprintf(stderr, "search-bench: give --plugin PATH\n");
      return 2;
    }
    exe[n] = '\0';
    const char *dir = dirname(exe);
    static const char *const names[2] = {"cpu_gemm", "opencl_gemm"};
    for (int k = 0; k < 2; k++) {
      snprintf(guess[k], sizeof guess[k], "%s/../lib/calhost/plugins/%s.so", dir, names[k]);
      if (k == 0 || access(guess[k], R_OK) == 0)
        plugins[np++] = guess[k];
    }
  }
  if (!ns) {
    static const long long def[2][3] = {{256, 256, 256}, {512, 512, 512}};
    memcpy(shapes, def, sizeof def);
    ns = 2;
  }
  int failed = 0;
  for (size_t i = 0; i < np; i++)
    failed |= live_plugin(plugins[i], (const long long(*)[3])shapes, ns, threads, max_exhaustive,
                          repeats);
  return failed;
}
#endif

/* ---- replay ------------------------------------------------------------- */

/* The budgets of a replay line, in evaluations (rejected configurations
 * included, as in a sweep: a rejected candidate costs its check): quick's
 * and measure's for the space's size (search_rigor_plan), fixed counts,
 * shares of the space, and --budget N. */
enum { B_QUICK, B_MEASURE, B_25, B_50, B_100, B_200, B_2PCT, B_5PCT, B_10PCT, B_20PCT, B_USER, NB };
static const char *const budget_names[NB] = {"quick", "measure", "25",    "50",    "100",   "200",
                                             "2pct",  "5pct",    "10pct", "20pct", "budget"};

typedef struct trace {
  double optimum;
  uint32_t at95, at99;
} trace;

static void observe(void *user, const uint32_t *cfg, const search_outcome *o, uint32_t evaluation,
                    double best) {
  trace *t = user;
  (void)cfg, (void)o;
  if (!t->at95 && t->optimum / best >= 0.95)
    t->at95 = evaluation;
  if (!t->at99 && t->optimum / best >= 0.99)
    t->at99 = evaluation;
}

/* One replay of sp: strategy strat, seed, a budget of `budget` evaluations,
 * the warm start warm (warm_count configurations; NULL: none); the fraction
 * of the optimum found (0: none). With t (target 99%), the trace of
 * evaluations to 95/99%. -1 on error. */
static double replay_once_warm(const search_space_file *sp, search_strategy strat, uint64_t seed,
                               uint32_t budget, int use_start, trace *t, const uint32_t *warm,
                               size_t warm_count) {
  search_space_replay rp;
  search_space ss;
  search_options o;
  search_result res;
  if (search_space_replay_init(sp, use_start, &rp, &ss) != 0)
    return -1;
  ss.warm = warm;
  ss.warm_count = warm_count;
  search_options_init(&o);
  o.strategy = strat;
  o.seed = seed;
  o.max_evaluations = budget;
  o.clock = search_space_replay_clock;
  o.clock_user = &rp;
  if (t) {
    o.has_target = 1;
    o.target_cost = t->optimum / 0.99;
    o.observe = observe;
    o.observe_user = t;
  }
  if (search_run(&ss, &o, &res) != 0) {
    fprintf(stderr, "search-bench: %s: %s\n", sp->name, res.error);
    search_space_replay_free(&rp);
    return -1;
  }
  double f = res.found ? search_space_best(sp) / res.best_cost : 0;
  search_result_free(&res);
  search_space_replay_free(&rp);
  return f;
}

static double replay_once(const search_space_file *sp, search_strategy strat, uint64_t seed,
                          uint32_t budget, int use_start, trace *t) {
  return replay_once_warm(sp, strat, seed, budget, use_start, t, NULL, 0);
}

/* The fraction of the optimum strat reaches on sp at each budget of
 * budgets (0: not run, NAN), at the median of `seeds` seeds from first_seed on (v: scratch of
 * seeds doubles), and how many seeds reached 0.90 and 0.99 at each. 0, or
 * -1 on error; mean and se: the mean over the seeds and its standard error
 * (a median of a bimodal outcome is a coin toss; two strategies are level
 * when their means are within the noise). */
static int replay_fractions(const search_space_file *sp, search_strategy strat, int seeds,
                            uint64_t first_seed, int use_start, const uint32_t budgets[NB],
                            double *v, double frac[NB], int seeds90[NB], int seeds99[NB],
                            double mean[NB], double se[NB]) {
  for (int bi = 0; bi < NB; bi++) {
    frac[bi] = mean[bi] = se[bi] = NAN;
    if (!budgets[bi])
      continue;
    for (int seed = 0; seed < seeds; seed++)
      if ((v[seed] = replay_once(sp, strat, first_seed + (uint64_t)seed, budgets[bi], use_start,
                                 NULL)) < 0)
        return -1;
    frac[bi] = median_of(v, (size_t)seeds);
    /* how many seeds reached 0.90 and 0.99 (the median hides a bimodal
     * outcome) */
    seeds90[bi] = seeds99[bi] = 0;
    for (int seed = 0; seed < seeds; seed++)
      seeds90[bi] += v[seed] >= 0.90, seeds99[bi] += v[seed] >= 0.99;
    mean_and_se(v, seeds, &mean[bi], &se[bi]);
  }
  return 0;
}

/* The numbered view of a recording: one ordered parameter "index" whose
 * value i is the i-th recorded configuration (the recording order: the
 * plugin's order for search-record's spaces), as an ABI 1 plugin's
 * numbered candidates would show the same space to the search. */
static int numbered_view(const search_space_file *sp, search_space_file *out) {
  search_param param;
  char **words = NULL, err[256];
  uint32_t n = (uint32_t)sp->entry_count;
  if (search_space_init(out, sp->name) != 0 || search_numbered(n, &param, &words) != 0)
    return -1;
  int rc = search_space_add_param(out, "index", 1, (const char *const *)words, n, err, sizeof err);
  search_numbered_free(words, n);
  for (uint32_t i = 0; rc == 0 && i < n; i++) {
    search_space_entry e = sp->entries[i];
    e.config = &i;
    rc = search_space_add_entry(out, &e, err, sizeof err);
  }
  if (rc != 0)
    fprintf(stderr, "search-bench: %s: %s\n", sp->name, err);
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Prints "frac_at_NAME=F" for every budget that ran. */
static void print_fracs(const uint32_t budgets[NB], const double frac[NB]) {
  for (int bi = 0; bi < NB; bi++)
    if (budgets[bi])
      printf(" frac_at_%s=%.3f", budget_names[bi], frac[bi]);
}

#define NAMED_SPACES_MAX 4096 /* spaces with more entries get no numbered view */

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --reader: the reader's time on a space of 21^4 = 194 481 configurations
 * (four ordered parameters of 21 values) written in code order and in
 * reverse, in the same run: the ratio shows the reader is linear whatever
 * the order. */
static int reader_bench(void) {
  enum { V = 21 };
  double took[2];
  for (int rev = 0; rev < 2; rev++) {
    char path[] = "/tmp/search-bench-reader-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
      fprintf(stderr, "search-bench: cannot write a temporary file\n");
      return 1;
    }
    fprintf(f, "calhost-search-space 1\nspace reader\n");
    for (int p = 0; p < 4; p++) {
      fprintf(f, "param p%d ordered", p);
      for (int v = 0; v < V; v++)
        fprintf(f, " %d", v);
      fputc('\n', f);
    }
    long n = (long)V * V * V * V;
    for (long k = 0; k < n; k++) {
      long i = rev ? n - 1 - k : k;
      fprintf(f, "config %ld %ld %ld %ld %ld 0 0 0.01 -\n", i / (V * V * V), i / (V * V) % V,
              i / V % V, i % V, 100 + i % 977);
    }
    fclose(f);
    search_space_file sp;
    char err[512];
    double t0 = wall_now();
    int rc = search_space_load(path, &sp, err, sizeof err);
    took[rev] = wall_now() - t0;
    remove(path);
    if (rc != 0) {
      fprintf(stderr, "search-bench: %s\n", err);
      search_space_free(&sp);
      return 1;
    }
    search_space_free(&sp);
  }
  printf("reader entries=%d in_order_seconds=%.3f reversed_seconds=%.3f "
         "reversed_vs_in_order=%.2f\n",
         V * V * V * V, took[0], took[1], took[1] / took[0]);
  return 0;
}

/* The kernel of a space: its name up to the first '-' (convolution-RTX_Titan:
 * convolution). */
static size_t kernel_len(const char *name) {
  const char *dash = strchr(name, '-');
  return dash ? (size_t)(dash - name) : strlen(name);
}

/* The donor's n fastest (slow 0) or n slowest (slow 1) successful entries
 * as configurations of target (matched by parameter name and value word;
 * an entry with a value the target lacks is left out), fastest first,
 * into out (n * target's params); returns how many. */
static size_t donor_configs(const search_space_file *target, const search_space_file *donor,
                            size_t n, int slow, uint32_t *out) {
  size_t ok = 0, *order = malloc(donor->entry_count * sizeof *order);
  if (!order)
    return 0;
  for (size_t i = 0; i < donor->entry_count; i++)
    if (!donor->entries[i].rejected)
      order[ok++] = i;
  /* selection of the n fastest / slowest (n is small) */
  size_t got = 0;
  for (size_t k = 0; k < ok && got < n; k++) {
    size_t best = k;
    for (size_t i = k + 1; i < ok; i++) {
      double a = donor->entries[order[i]].median, b = donor->entries[order[best]].median;
      if (slow ? a > b : a < b)
        best = i;
    }
    size_t t = order[k];
    order[k] = order[best];
    order[best] = t;
    const search_space_entry *e = &donor->entries[order[k]];
    uint32_t *cfg = out + got * target->param_count;
    int mapped = 1;
    for (size_t p = 0; p < target->param_count && mapped; p++) {
      mapped = 0;
      for (size_t q = 0; q < donor->param_count; q++)
        if (strcmp(donor->params[q].name, target->params[p].name) == 0) {
          int64_t v = search_space_value_index(target, p, donor->params[q].values[e->config[q]]);
          if (v >= 0) {
            cfg[p] = (uint32_t)v;
            mapped = 1;
          }
        }
    }
    got += mapped;
  }
  free(order);
  return got;
}

/* --transfer: the warm start between devices of one kernel. For every
 * space and every other space of the same kernel (name up to the first
 * '-') and the same parameters, the default strategy at quick's budget
 * and at 8 evaluations, median of the seeds: cold (no warm start), warm
 * (the donor's `nwarm` fastest configurations: what the store holds of
 * another device) and misled (a deliberately misleading donor: the
 * `nwarm` configurations that are the slowest here, as if another device's
 * winners were this device's worst), and the donor's best configuration
 * here. */
static int transfer_bench(char **files, size_t nfiles, int seeds, uint32_t nwarm,
                          const char *only_space) {
  double *v = malloc((size_t)seeds * sizeof *v);
  if (!v)
    return 1;
  printf("# transfer: warm = the donor's %u fastest configurations, misled = the %u slowest here; "
         "fraction of the target's optimum at the median of %d seeds\n",
         nwarm, nwarm, seeds);
  for (size_t ti = 0; ti < nfiles; ti++) {
    search_space_file t;
    char err[512];
    if (search_space_load(files[ti], &t, err, sizeof err) != 0) {
      fprintf(stderr, "search-bench: %s\n", err);
      search_space_free(&t);
      free(v);
      return 1;
    }
    if (only_space && strcmp(t.name, only_space) != 0) {
      search_space_free(&t);
      continue;
    }
    for (size_t di = 0; di < nfiles; di++) {
      const char *base = strrchr(files[di], '/');
      base = base ? base + 1 : files[di];
      size_t kl = kernel_len(t.name);
      if (di == ti || strncmp(base, t.name, kl) != 0 || base[kl] != '-')
        continue;
      search_space_file d;
      if (search_space_load(files[di], &d, err, sizeof err) != 0 ||
          d.param_count != t.param_count) {
        search_space_free(&d);
        continue;
      }
      uint32_t *good = calloc((size_t)nwarm * t.param_count + 1, sizeof *good);
      uint32_t *bad = calloc((size_t)nwarm * t.param_count + 1, sizeof *bad);
      size_t ng = good ? donor_configs(&t, &d, nwarm, 0, good) : 0;
      /* the misleading donor: configurations that were another device's
       * winners but are the slowest here (the target's own slowest) */
      size_t nb = bad ? donor_configs(&t, &t, nwarm, 1, bad) : 0;
      search_strategy qs;
      uint32_t quick;
      search_sweep_rigor_plan(CALHOST_SEARCH_RIGOR_QUICK, t.entry_count, t.curated, &qs, &quick);
      double donor_best = 0;
      for (size_t i = 0; i < ng; i++) {
        const search_space_entry *e = search_space_find(&t, good + i * t.param_count);
        if (e && !e->rejected && search_space_best(&t) / e->median > donor_best)
          donor_best = search_space_best(&t) / e->median;
      }
      const uint32_t budgets[2] = {quick, 8};
      /* mode 0 cold, 1 warm, 2 misled, 3 cold on other seeds (1001..): the
       * noise of the median between two sets of seeds */
      double frac[4][2], mean[4][2], se[4][2];
      int s95 = 0;
      for (int mode = 0; mode < 4; mode++)
        for (int b = 0; b < 2; b++) {
          const uint32_t *w = mode == 1 ? good : mode == 2 ? bad : NULL;
          size_t nw = mode == 1 ? ng : mode == 2 ? nb : 0;
          uint64_t seed0 = mode == 3 ? 1001 : 1;
          for (int seed = 0; seed < seeds; seed++)
            if ((v[seed] = replay_once_warm(&t, qs, seed0 + (uint64_t)seed, budgets[b], 1, NULL, w,
                                            nw)) < 0) {
              free(good), free(bad), free(v);
              search_space_free(&d), search_space_free(&t);
              return 1;
            }
          if (mode == 1 && b == 0)
            for (int seed = 0; seed < seeds; seed++)
              s95 += v[seed] >= 0.95;
          mean_and_se(v, seeds, &mean[mode][b], &se[mode][b]);
          frac[mode][b] = median_of(v, (size_t)seeds);
        }
      printf("transfer target=%s donor=%s warm=%zu seeds=%d donor_best_here=%.3f quick_evals=%u "
             "cold_quick=%.3f warm_quick=%.3f misled_quick=%.3f cold_8=%.3f warm_8=%.3f "
             "misled_8=%.3f seeds_95_warm_quick=%d cold_other_seeds_quick=%.3f "
             "cold_other_seeds_8=%.3f mean_quick cold=%.3f+-%.3f warm=%.3f+-%.3f "
             "misled=%.3f+-%.3f\n",
             t.name, d.name, ng, seeds, donor_best, quick, frac[0][0], frac[1][0], frac[2][0],
             frac[0][1], frac[1][1], frac[2][1], s95, frac[3][0], frac[3][1], mean[0][0], se[0][0],
             mean[1][0], se[1][0], mean[2][0], se[2][0]);
      fflush(stdout);
      free(good);
      free(bad);
      search_space_free(&d);
    }
    search_space_free(&t);
  }
  free(v);
  return 0;
}

/* --step-cost: the default's (--strategy: that one's) processor time per
 * evaluation on each space
 * at measure's budget (256 on the large spaces), one seed, the replay's
 * own cost (reading the recording) included: what the search adds to a
 * sweep per candidate, to set beside a GPU kernel's compile (0.2-1.5 s in
 * the real spaces' COMPILE_S column). */
static int step_cost_bench(char **files, size_t nfiles, const char *only_space, int strategy) {
  for (size_t fi = 0; fi < nfiles; fi++) {
    search_space_file sp;
    char err[512];
    if (search_space_load(files[fi], &sp, err, sizeof err) != 0) {
      fprintf(stderr, "search-bench: %s\n", err);
      search_space_free(&sp);
      return 1;
    }
    if (only_space && strcmp(sp.name, only_space) != 0) {
      search_space_free(&sp);
      continue;
    }
    search_strategy st;
    uint32_t measure;
    search_rigor_plan(CALHOST_SEARCH_RIGOR_MEASURE, sp.entry_count, &st, &measure);
    clock_t t0 = clock();
    search_strategy run = strategy >= 0 ? (search_strategy)strategy : CALHOST_SEARCH_MODEL;
    double f = replay_once(&sp, run, 1, measure, 1, NULL);
    double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf(
        "step_cost strategy=%s space=%s size=%zu evaluations=%u cpu_seconds=%.3f ms_per_step=%.2f "
        "frac=%.3f\n",
        base_strategy_name(run), sp.name, sp.entry_count, measure, cpu, 1000 * cpu / measure, f);
    fflush(stdout);
    search_space_free(&sp);
  }
  return 0;
}

int main(int argc, char **argv) {
#ifdef CALHOST_SEARCH_BENCH_LIVE
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--live") == 0)
      return live_main(argc, argv);
#endif
  const char *dir = CALHOST_SEARCH_SPACES_DIR, *only_space = NULL;
  int seeds = 31, use_start = 1, only_strategy = -1, numbered = 1, rigor_only = 0;
  int transfer = 0, no_trace = 0, step_cost = 0;
  uint32_t nwarm = 1;
  uint32_t user_budget = 0, max_evals = 1000;
  uint64_t first_seed = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--replay") == 0)
      continue;
    if (strcmp(argv[i], "--spaces") == 0 && i + 1 < argc)
      dir = argv[++i];
    else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
      seeds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--space") == 0 && i + 1 < argc)
      only_space = argv[++i];
    else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc && atol(argv[i + 1]) > 0)
      user_budget = (uint32_t)atol(argv[++i]);
    else if (strcmp(argv[i], "--max-evals") == 0 && i + 1 < argc && atol(argv[i + 1]) > 0)
      max_evals = (uint32_t)atol(argv[++i]);
    else if (strcmp(argv[i], "--no-start") == 0)
      use_start = 0;
    else if (strcmp(argv[i], "--no-numbered") == 0)
      numbered = 0;
    else if (strcmp(argv[i], "--rigor-only") == 0)
      rigor_only = 1;
    else if (strcmp(argv[i], "--step-cost") == 0)
      step_cost = 1;
    else if (strcmp(argv[i], "--first-seed") == 0 && i + 1 < argc)
      first_seed = (uint64_t)atoll(argv[++i]);
    else if (strcmp(argv[i], "--no-trace") == 0)
      no_trace = 1;
    else if (strcmp(argv[i], "--transfer") == 0)
      transfer = 1;
    else if (strcmp(argv[i], "--warm") == 0 && i + 1 < argc && atol(argv[i + 1]) > 0 &&
             atol(argv[i + 1]) <= 64)
      nwarm = (uint32_t)atol(argv[++i]);
    else if (strcmp(argv[i], "--reader") == 0)
      return reader_bench();
    else if (strcmp(argv[i], "--strategy") == 0 && i + 1 < argc) {
      search_strategy s;
      if (base_strategy_parse(argv[++i], &s) != 0) {
        fprintf(stderr, "search-bench: unknown strategy '%s'\n", argv[i]);
        return 2;
      }
      only_strategy = (int)s;
    } else {
      fprintf(stderr,
              "usage: search-bench [--replay] [--spaces DIR] [--seeds N] [--first-seed N] "
              "[--strategy NAME] [--space NAME] [--budget N] [--max-evals N] "
              "[--no-start] [--no-numbered] [--rigor-only] [--no-trace] | --transfer [--warm N] "
              "| --step-cost | --reader\n");
      return 2;
    }
  }
  if (seeds < 1)
    seeds = 1;
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "search-bench: %s: cannot open\n", dir);
    return 1;
  }
  char **files = NULL;
  size_t nfiles = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    if (l > 6 && strcmp(de->d_name + l - 6, ".space") == 0) {
      char **f = realloc(files, (nfiles + 1) * sizeof *f);
      if (!f)
        return 1;
      files = f;
      if (asprintf(&files[nfiles++], "%s/%s", dir, de->d_name) < 0)
        return 1;
    }
  }
  closedir(d);
  qsort(files, nfiles, sizeof *files, cmp_str);
  if (!nfiles) {
    fprintf(stderr, "search-bench: no .space files in %s\n", dir);
    return 1;
  }
  if (transfer || step_cost) {
    int rc = transfer ? transfer_bench(files, nfiles, seeds, nwarm, only_space)
                      : step_cost_bench(files, nfiles, only_space, only_strategy);
    for (size_t i = 0; i < nfiles; i++)
      free(files[i]);
    free(files);
    return rc;
  }
  printf("# budgets count evaluations, rejected configurations included (a sweep's rejected "
         "candidate costs its check); quick/measure: what a sweep spends on the space "
         "(search_sweep_rigor_plan: the rigor's share of its size; measure runs a curated "
         "list, meta curated 1, of at most 4096 whole); other budgets above --max-evals %u "
         "evaluations are not run; evals_to: %u+1 when not reached within %u\n",
         max_evals, max_evals, max_evals);

  double *v = malloc((size_t)seeds * sizeof *v);
  /* the default's worst fraction at quick's and measure's budgets, and its
   * worst margin over random over the budgets that ran */
  double goal_quick = INFINITY, goal_measure = INFINITY;
  double worst_margin_vs_random[CALHOST_SEARCH_STRATEGY_COUNT];
  for (int s = 0; s < CALHOST_SEARCH_STRATEGY_COUNT; s++)
    worst_margin_vs_random[s] = INFINITY;
  int failed = 0;
  for (size_t fi = 0; fi < nfiles && v; fi++) {
    search_space_file sp;
    char err[512];
    if (search_space_load(files[fi], &sp, err, sizeof err) != 0) {
      fprintf(stderr, "search-bench: %s\n", err);
      search_space_free(&sp);
      failed = 1;
      continue;
    }
    if (only_space && strcmp(sp.name, only_space) != 0) {
      search_space_free(&sp);
      continue;
    }
    uint64_t size = sp.entry_count;
    double optimum = search_space_best(&sp);
    search_strategy def, quick;
    uint32_t budgets[NB] = {0};
    /* what a sweep spends: a curated list (meta curated 1) is run whole
     * at measure */
    search_sweep_rigor_plan(CALHOST_SEARCH_RIGOR_QUICK, size, sp.curated, &quick,
                            &budgets[B_QUICK]);
    search_sweep_rigor_plan(CALHOST_SEARCH_RIGOR_MEASURE, size, sp.curated, &def,
                            &budgets[B_MEASURE]);
    static const uint32_t fixed[4] = {25, 50, 100, 200};
    static const double pcts[4] = {2, 5, 10, 20};
    for (int k = 0; k < 4; k++) {
      budgets[B_25 + k] = fixed[k] < size ? fixed[k] : 0;
      budgets[B_2PCT + k] = (uint32_t)ceil(pcts[k] / 100.0 * (double)size);
    }
    budgets[B_USER] = user_budget;
    for (int bi = 0; bi < NB; bi++)
      if ((budgets[bi] > max_evals && bi != B_USER && bi != B_QUICK && bi != B_MEASURE) ||
          (rigor_only && bi != B_QUICK && bi != B_MEASURE && bi != B_USER))
        budgets[bi] = 0;
    double random_frac[NB];
    for (int bi = 0; bi < NB; bi++)
      random_frac[bi] = NAN;
    uint32_t cap = size < max_evals ? (uint32_t)size : max_evals;
    for (int st = CALHOST_SEARCH_RANDOM; st < CALHOST_SEARCH_STRATEGY_COUNT + 1; st++) {
      /* random first (the baseline), exhaustive last */
      search_strategy strat =
          st == CALHOST_SEARCH_STRATEGY_COUNT ? CALHOST_SEARCH_EXHAUSTIVE : (search_strategy)st;
      /* --strategy: that one, random, and what quick and measure run (on a
       * curated list measure's is exhaustive) */
      if (only_strategy >= 0 && (int)strat != only_strategy && strat != CALHOST_SEARCH_RANDOM &&
          strat != def && strat != quick)
        continue;
      double frac[NB], mean[NB], se[NB];
      int s90[NB], s99[NB];
      if (replay_fractions(&sp, strat, seeds, first_seed, use_start, budgets, v, frac, s90, s99,
                           mean, se) != 0)
        return 1;
      double *v99 = malloc((size_t)seeds * sizeof *v99);
      for (int seed = 0; v99 && seed < seeds && !rigor_only && !no_trace; seed++) {
        trace t = {.optimum = optimum};
        if (replay_once(&sp, strat, first_seed + (uint64_t)seed, cap, use_start, &t) < 0)
          return 1;
        v[seed] = t.at95 ? t.at95 : (double)cap + 1;
        v99[seed] = t.at99 ? t.at99 : (double)cap + 1;
      }
      if (!v99)
        return 1;
      double e95 = rigor_only || no_trace ? NAN : median_of(v, (size_t)seeds);
      double e99 = rigor_only || no_trace ? NAN : median_of(v99, (size_t)seeds);
      free(v99);
      printf("strategy=%s space=%s size=%llu order=%s curated=%d seeds=%d quick_evals=%u "
             "measure_evals=%u",
             base_strategy_name(strat), sp.name, (unsigned long long)size,
             sp.order_plausible ? "plausible" : "none", sp.curated, seeds, budgets[B_QUICK],
             budgets[B_MEASURE]);
      print_fracs(budgets, frac);
      printf(" seeds_90_at_quick=%d seeds_99_at_measure=%d", s90[B_QUICK], s99[B_MEASURE]);
      if (budgets[B_USER])
        printf(" seeds_90_at_budget=%d mean_at_budget=%.3f+-%.3f", s90[B_USER], mean[B_USER],
               se[B_USER]);
      if (budgets[B_QUICK])
        printf(" mean_at_quick=%.3f+-%.3f", mean[B_QUICK], se[B_QUICK]);
      if (budgets[B_MEASURE])
        printf(" mean_at_measure=%.3f+-%.3f", mean[B_MEASURE], se[B_MEASURE]);
      printf(" evals_to_95pct=%.0f evals_to_99pct=%.0f%s%s\n", e95, e99,
             strat == def ? " default=1" : "", strat == quick ? " quick=1" : "");
      fflush(stdout);
      if (strat == CALHOST_SEARCH_RANDOM)
        memcpy(random_frac, frac, sizeof frac);
      else
        for (int bi = 0; bi < NB; bi++)
          if (!isnan(frac[bi]) && frac[bi] - random_frac[bi] < worst_margin_vs_random[strat])
            worst_margin_vs_random[strat] = frac[bi] - random_frac[bi];
      if (strat == quick && frac[B_QUICK] < goal_quick)
        goal_quick = frac[B_QUICK];
      if (strat == def && frac[B_MEASURE] < goal_measure)
        goal_measure = frac[B_MEASURE];
    }
    /* quick's strategy (the search, where measure's may be exhaustive on
     * a curated list) on the numbered view of the same space: what
     * describing the parameters is worth */
    search_space_file nv;
    double nfrac[NB], nmean[NB], nse[NB];
    int n90[NB], n99[NB];
    memset(&nv, 0, sizeof nv);
    if (numbered && only_strategy < 0 && size <= NAMED_SPACES_MAX && numbered_view(&sp, &nv) == 0 &&
        replay_fractions(&nv, quick, seeds, first_seed, use_start, budgets, v, nfrac, n90, n99,
                         nmean, nse) == 0) {
      printf("numbered strategy=%s space=%s seeds=%d", base_strategy_name(quick), sp.name, seeds);
      print_fracs(budgets, nfrac);
      printf("\n");
    }
    search_space_free(&nv);
    search_space_free(&sp);
  }
  printf("summary: default_frac_at_quick_min=%.3f (goal >= 0.90) "
         "default_frac_at_measure_min=%.3f (goal >= 0.99)\n",
         goal_quick, goal_measure);
  for (int s = CALHOST_SEARCH_LOCAL; s < CALHOST_SEARCH_STRATEGY_COUNT; s++)
    if (isfinite(worst_margin_vs_random[s]))
      printf("summary: strategy=%s min_frac_minus_random=%+.3f (over spaces and budgets)\n",
             base_strategy_name((search_strategy)s), worst_margin_vs_random[s]);
  for (size_t i = 0; i < nfiles; i++)
    free(files[i]);
  free(files);
  free(v);
  return failed;
}
