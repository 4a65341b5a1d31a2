/*
 * rigor.h: what each rigor level means for the measurement of a candidate
 * (how long each sample lasts, how many repetitions, whether to prune).
 * Which candidates a sweep measures is the search part's to decide
 * (host/search: search_sweep_rigor_plan maps the rigor levels onto
 * strategies and budgets; measure.c asks it). Pure functions, testable
 * without plugins. Internal to the host.
 */
#ifndef CALHOST_SWEEP_RIGOR_H
#define CALHOST_SWEEP_RIGOR_H

#include <stddef.h>
#include <stdint.h>

#include "base/tuning.h"

/* The rigor levels (base/tuning.h: the enum and its words, which the
 * configuration and the command line share without linking the engine). */
typedef base_rigor sweep_rigor;

/* The parameters of one rigor level. */
typedef struct sweep_rigor_params {
  sweep_rigor rigor;
  double min_sample_seconds; /* each timed sample lasts at least this long */
  uint32_t repetitions;      /* samples per surviving candidate */
  uint32_t warmup_samples;   /* untimed samples after sizing */
  int prune;                 /* prune candidates clearly slower than the leader */
  uint32_t prune_after;      /* samples before a candidate may be pruned (>= 3) */
  double prune_margin;       /* "clearly slower": lower quartile > leader median x (1+margin) */
  int halving;               /* after the first round keep only the better half */
  double noise_threshold;    /* CV or relative MAD above this flags a result noisy */
} sweep_rigor_params;

/* Fills *out with the defaults of a rigor level (the candidates each level
 * measures: host/search/README.md, "Default strategy and rigor levels"):
 *   quick:      0.5 ms samples, 5 repetitions, pruning;
 *   measure:    2 ms samples, 10 repetitions, pruning and halving
 *               (racing: 3 samples each, prune, keep the better half, then the rest);
 *   exhaustive: 5 ms samples, 20 repetitions, no pruning.
 * repetitions > 0 overrides the level's repetitions (raised to prune_after
 * when pruning is on). */
void sweep_rigor_params_init(sweep_rigor rigor, uint32_t repetitions, sweep_rigor_params *out);

#endif /* CALHOST_SWEEP_RIGOR_H */
