/*
 * plan.c: rigor levels (their words and parameters; see plan.h).
 */
#include "plan.h"

#include <string.h>

/* The rigor levels by number: each one's word and what its plan sets
 * (plan.h); every level samples at least 3 times before pruning and flags
 * a CV above 0.05 noisy. */
static const struct {
  const char *name;
  double min_sample_seconds, prune_margin;
  uint32_t repetitions, warmup_samples;
  int prune, halving;
} levels[] = {
    /* name, sample seconds, prune margin, repetitions, warmup, prune, halving */
    {"quick", 0.0005, 0.25, 5, 1, 1, 0},
    {"measure", 0.002, 0.15, 10, 1, 1, 1},
    {"exhaustive", 0.005, 0.25, 20, 2, 0, 0},
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

const char *sweep_rigor_name(sweep_rigor rigor) {
  return (unsigned)rigor < LEVEL_COUNT ? levels[rigor].name : "?";
}

int sweep_rigor_parse(const char *word, sweep_rigor *out) {
  for (size_t i = 0; word && i < LEVEL_COUNT; i++)
    if (!strcmp(word, levels[i].name)) {
      *out = (sweep_rigor)i;
      return 0;
    }
  return -1;
}
