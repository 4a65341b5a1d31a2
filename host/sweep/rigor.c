/*
 * rigor.c: rigor levels' parameters (see rigor.h; their words: base/tuning.c).
 */
#include "rigor.h"

#include <string.h>

/* The rigor levels by number: what each one's plan sets (rigor.h); every
 * level samples at least 3 times before pruning and flags a CV above 0.05
 * noisy. */
static const struct {
  double min_sample_seconds, prune_margin;
  uint32_t repetitions, warmup_samples;
  int prune, halving;
} levels[] = {
    /* sample seconds, prune margin, repetitions, warmup, prune, halving */
    [CALHOST_RIGOR_QUICK] = {0.0005, 0.25, 5, 1, 1, 0},
    [CALHOST_RIGOR_MEASURE] = {0.002, 0.15, 10, 1, 1, 1},
    [CALHOST_RIGOR_EXHAUSTIVE] = {0.005, 0.25, 20, 2, 0, 0},
};
#define LEVEL_COUNT (sizeof levels / sizeof *levels)

void sweep_rigor_params_init(sweep_rigor rigor, uint32_t repetitions, sweep_rigor_params *out) {
  unsigned l = (unsigned)rigor < LEVEL_COUNT ? (unsigned)rigor : CALHOST_RIGOR_MEASURE;
  memset(out, 0, sizeof *out);
  out->rigor = (sweep_rigor)l;
  out->noise_threshold = 0.05;
  out->prune_after = 3;
  out->min_sample_seconds = levels[l].min_sample_seconds;
  out->prune_margin = levels[l].prune_margin;
  out->repetitions = levels[l].repetitions;
  out->warmup_samples = levels[l].warmup_samples;
  out->prune = levels[l].prune;
  out->halving = levels[l].halving;
  if (repetitions > 0)
    out->repetitions = repetitions;
  if (out->prune && out->repetitions < out->prune_after)
    out->repetitions = out->prune_after;
}
