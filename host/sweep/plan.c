/*
 * plan.c: rigor levels (their words and parameters; see plan.h).
 */
#include "plan.h"

#include <string.h>

void calhost_rigor_params_init(calhost_rigor rigor, uint32_t repetitions,
                               calhost_rigor_params *out) {
  memset(out, 0, sizeof *out);
  out->rigor = rigor;
  out->noise_threshold = 0.05;
  out->prune_after = 3;
  out->prune_margin = 0.25;
  switch (rigor) {
  case CALHOST_RIGOR_QUICK:
    out->min_sample_seconds = 0.0005;
    out->repetitions = 5;
    out->warmup_samples = 1;
    out->prune = 1;
    break;
  case CALHOST_RIGOR_EXHAUSTIVE:
    out->min_sample_seconds = 0.005;
    out->repetitions = 20;
    out->warmup_samples = 2;
    out->prune = 0;
    break;
  case CALHOST_RIGOR_MEASURE:
  default:
    out->rigor = CALHOST_RIGOR_MEASURE;
    out->min_sample_seconds = 0.002;
    out->repetitions = 10;
    out->warmup_samples = 1;
    out->prune = 1;
    out->halving = 1;
    out->prune_margin = 0.15;
    break;
  }
  if (repetitions > 0)
    out->repetitions = repetitions;
  if (out->prune && out->repetitions < out->prune_after)
    out->repetitions = out->prune_after;
}

const char *calhost_rigor_name(calhost_rigor rigor) {
  switch (rigor) {
  case CALHOST_RIGOR_QUICK:
    return "quick";
  case CALHOST_RIGOR_MEASURE:
    return "measure";
  case CALHOST_RIGOR_EXHAUSTIVE:
    return "exhaustive";
  }
  return "?";
}

int calhost_rigor_parse(const char *word, calhost_rigor *out) {
  static const calhost_rigor all[] = {CALHOST_RIGOR_QUICK, CALHOST_RIGOR_MEASURE,
                                      CALHOST_RIGOR_EXHAUSTIVE};
  for (size_t i = 0; word && i < 3; i++)
    if (!strcmp(word, calhost_rigor_name(all[i]))) {
      *out = all[i];
      return 0;
    }
  return -1;
}
