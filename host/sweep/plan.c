/*
 * plan.c: rigor levels (their words and parameters; see plan.h).
 */
#include "plan.h"

#include <string.h>

/* The rigor levels by number: each one's word and plan (plan.h). */
static const struct {
  const char *name;
  calhost_rigor_params params;
} levels[] = {
    {"quick",
     {.rigor = CALHOST_RIGOR_QUICK,
      .min_sample_seconds = 0.0005,
      .repetitions = 5,
      .warmup_samples = 1,
      .prune = 1,
      .prune_after = 3,
      .prune_margin = 0.25,
      .noise_threshold = 0.05}},
    {"measure",
     {.rigor = CALHOST_RIGOR_MEASURE,
      .min_sample_seconds = 0.002,
      .repetitions = 10,
      .warmup_samples = 1,
      .prune = 1,
      .prune_after = 3,
      .prune_margin = 0.15,
      .halving = 1,
      .noise_threshold = 0.05}},
    {"exhaustive",
     {.rigor = CALHOST_RIGOR_EXHAUSTIVE,
      .min_sample_seconds = 0.005,
      .repetitions = 20,
      .warmup_samples = 2,
      .prune = 0,
      .prune_after = 3,
      .prune_margin = 0.25,
      .noise_threshold = 0.05}},
};
#define LEVEL_COUNT (sizeof levels / sizeof *levels)

void calhost_rigor_params_init(calhost_rigor rigor, uint32_t repetitions,
                               calhost_rigor_params *out) {
  *out = levels[(unsigned)rigor < LEVEL_COUNT ? rigor : CALHOST_RIGOR_MEASURE].params;
  if (repetitions > 0)
    out->repetitions = repetitions;
  if (out->prune && out->repetitions < out->prune_after)
    out->repetitions = out->prune_after;
}

const char *calhost_rigor_name(calhost_rigor rigor) {
  return (unsigned)rigor < LEVEL_COUNT ? levels[rigor].name : "?";
}

int calhost_rigor_parse(const char *word, calhost_rigor *out) {
  for (size_t i = 0; word && i < LEVEL_COUNT; i++)
    if (!strcmp(word, levels[i].name)) {
      *out = (calhost_rigor)i;
      return 0;
    }
  return -1;
}
