/*
 * search_bench.c: search-bench, the figures of the search strategies
 * (host/search/README.md). Replays every recorded space (spaces/NAME.space, or
 * --spaces DIR) with every strategy over many seeds, without running a
 * kernel, and prints per strategy and space one line:
 *
 *   strategy=NAME space=NAME seeds=N frac_at_2pct=F frac_at_5pct=F
 *   frac_at_10pct=F frac_at_20pct=F evals_to_95pct=N evals_to_99pct=N
 *
 * frac_at_Xpct: best recorded median / the median of the best configuration
 * found with a budget of X% of the space's configurations (rounded up), at
 * the median seed; evals_to_Ypct: evaluations until a configuration within
 * Y% of the optimum (median / found >= Y/100) was found, at the median seed.
 * `default=1` marks the strategy the default picks for a 10% budget,
 * `quick=1` the one the quick rigor picks. Then a summary of the goals.
 *
 *   search-bench [--replay] [--spaces DIR] [--seeds N] [--strategy NAME]
 *                [--space NAME] [--no-start]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "search/spacefile.h"

static const double pcts[] = {2, 5, 10, 20};
#define NPCT 4

typedef struct trace {
  double optimum;
  uint32_t at95, at99;
} trace;

static void observe(void *user, const uint32_t *cfg, const calhost_search_outcome *o,
                    uint32_t evaluation, double best) {
  trace *t = user;
  (void)cfg, (void)o;
  if (!t->at95 && t->optimum / best >= 0.95)
    t->at95 = evaluation;
  if (!t->at99 && t->optimum / best >= 0.99)
    t->at99 = evaluation;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median seed's value (the lower middle for an even count). */
static double median_of(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_d);
  return v[(n - 1) / 2];
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  const char *dir = CALHOST_SEARCH_SPACES_DIR, *only_space = NULL;
  int seeds = 51, use_start = 1, only_strategy = -1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--replay") == 0)
      continue;
    if (strcmp(argv[i], "--spaces") == 0 && i + 1 < argc)
      dir = argv[++i];
    else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
      seeds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--space") == 0 && i + 1 < argc)
      only_space = argv[++i];
    else if (strcmp(argv[i], "--no-start") == 0)
      use_start = 0;
    else if (strcmp(argv[i], "--strategy") == 0 && i + 1 < argc) {
      calhost_search_strategy s;
      if (calhost_search_strategy_parse(argv[++i], &s) != 0) {
        fprintf(stderr, "search-bench: unknown strategy '%s'\n", argv[i]);
        return 2;
      }
      only_strategy = (int)s;
    } else {
      fprintf(stderr, "usage: search-bench [--replay] [--spaces DIR] [--seeds N] "
                      "[--strategy NAME] [--space NAME] [--no-start]\n");
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

  double *v = malloc((size_t)seeds * sizeof *v);
  double goal_default = INFINITY, goal_quick = INFINITY;
  double worst_margin_vs_random[CALHOST_SEARCH_STRATEGY_COUNT];
  for (int s = 0; s < CALHOST_SEARCH_STRATEGY_COUNT; s++)
    worst_margin_vs_random[s] = INFINITY;
  int failed = 0;
  for (size_t fi = 0; fi < nfiles; fi++) {
    calhost_space sp;
    char err[512];
    if (calhost_space_load(files[fi], &sp, err, sizeof err) != 0) {
      fprintf(stderr, "search-bench: %s\n", err);
      calhost_space_free(&sp);
      failed = 1;
      continue;
    }
    if (only_space && strcmp(sp.name, only_space) != 0) {
      calhost_space_free(&sp);
      continue;
    }
    uint64_t size = sp.entry_count;
    double optimum = calhost_space_best(&sp);
    calhost_search_strategy def, quick;
    uint32_t def_budget, quick_budget;
    calhost_search_rigor_plan(CALHOST_SEARCH_RIGOR_MEASURE, size, &def, &def_budget);
    calhost_search_rigor_plan(CALHOST_SEARCH_RIGOR_QUICK, size, &quick, &quick_budget);
    def = calhost_search_default_strategy((size * 10 + 99) / 100, size);
    double random_frac[NPCT] = {0};
    for (int st = CALHOST_SEARCH_RANDOM; st < CALHOST_SEARCH_STRATEGY_COUNT + 1; st++) {
      /* random first (the baseline), exhaustive last */
      calhost_search_strategy strat = st == CALHOST_SEARCH_STRATEGY_COUNT
                                          ? CALHOST_SEARCH_EXHAUSTIVE
                                          : (calhost_search_strategy)st;
      if (only_strategy >= 0 && (int)strat != only_strategy && strat != CALHOST_SEARCH_RANDOM)
        continue;
      double frac[NPCT], e95, e99;
      for (int pi = 0; pi < NPCT; pi++) {
        uint32_t budget = (uint32_t)ceil(pcts[pi] / 100.0 * (double)size);
        for (int seed = 0; seed < seeds; seed++) {
          calhost_space_replay rp;
          calhost_search_space ss;
          calhost_search_options o;
          calhost_search_result res;
          if (calhost_space_replay_init(&sp, use_start, &rp, &ss) != 0)
            return 1;
          calhost_search_options_init(&o);
          o.strategy = strat;
          o.seed = (uint64_t)seed + 1;
          o.max_evaluations = budget;
          o.clock = calhost_space_replay_clock;
          o.clock_user = &rp;
          if (calhost_search_run(&ss, &o, &res) != 0) {
            fprintf(stderr, "search-bench: %s: %s\n", sp.name, res.error);
            return 1;
          }
          v[seed] = res.found ? optimum / res.best_cost : 0;
          calhost_search_result_free(&res);
          calhost_space_replay_free(&rp);
        }
        frac[pi] = median_of(v, (size_t)seeds);
      }
      double *v99 = malloc((size_t)seeds * sizeof *v99);
      for (int seed = 0; seed < seeds; seed++) {
        calhost_space_replay rp;
        calhost_search_space ss;
        calhost_search_options o;
        calhost_search_result res;
        trace t = {.optimum = optimum};
        if (!v99 || calhost_space_replay_init(&sp, use_start, &rp, &ss) != 0)
          return 1;
        calhost_search_options_init(&o);
        o.strategy = strat;
        o.seed = (uint64_t)seed + 1;
        o.max_evaluations = (uint32_t)size;
        o.has_target = 1;
        o.target_cost = optimum / 0.99;
        o.observe = observe;
        o.observe_user = &t;
        calhost_search_run(&ss, &o, &res);
        v[seed] = t.at95 ? t.at95 : (double)size + 1;
        v99[seed] = t.at99 ? t.at99 : (double)size + 1;
        calhost_search_result_free(&res);
        calhost_space_replay_free(&rp);
      }
      e95 = median_of(v, (size_t)seeds);
      e99 = median_of(v99, (size_t)seeds);
      free(v99);
      printf("strategy=%s space=%s seeds=%d frac_at_2pct=%.3f frac_at_5pct=%.3f "
             "frac_at_10pct=%.3f frac_at_20pct=%.3f evals_to_95pct=%.0f evals_to_99pct=%.0f%s%s\n",
             calhost_search_strategy_name(strat), sp.name, seeds, frac[0], frac[1], frac[2],
             frac[3], e95, e99, strat == def ? " default=1" : "", strat == quick ? " quick=1" : "");
      fflush(stdout);
      if (strat == CALHOST_SEARCH_RANDOM)
        memcpy(random_frac, frac, sizeof frac);
      else
        for (int pi = 0; pi < NPCT; pi++)
          if (frac[pi] - random_frac[pi] < worst_margin_vs_random[strat])
            worst_margin_vs_random[strat] = frac[pi] - random_frac[pi];
      if (strat == def && frac[2] < goal_default)
        goal_default = frac[2];
      if (strat == quick && frac[0] < goal_quick)
        goal_quick = frac[0];
    }
    calhost_space_free(&sp);
  }
  printf("summary: default_frac_at_10pct_min=%.3f (goal >= 0.97) quick_frac_at_2pct_min=%.3f "
         "(goal >= 0.90)\n",
         goal_default, goal_quick);
  for (int s = CALHOST_SEARCH_LOCAL; s < CALHOST_SEARCH_STRATEGY_COUNT; s++)
    if (isfinite(worst_margin_vs_random[s]))
      printf("summary: strategy=%s min_frac_minus_random=%+.3f (over spaces and budgets)\n",
             calhost_search_strategy_name((calhost_search_strategy)s), worst_margin_vs_random[s]);
  for (size_t i = 0; i < nfiles; i++)
    free(files[i]);
  free(files);
  free(v);
  return failed;
}
