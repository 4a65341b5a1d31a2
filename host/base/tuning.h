/*
 * tuning.h: the tuner's vocabulary that the configuration and the command
 * line hold: the rigor levels and the search strategies (the enums and
 * their words). What a level means for a measurement is the engine's
 * (sweep/rigor.h, whose sweep_rigor is base_rigor) and what a strategy does
 * is the search's (search/search.h, whose search_strategy is
 * base_strategy). Here, below the configuration, so that what reads a
 * configuration (the deployment runtime) links neither. Part of the base
 * layer: depends on nothing but libc.
 */
#ifndef CALHOST_BASE_TUNING_H
#define CALHOST_BASE_TUNING_H

typedef enum base_rigor {
  CALHOST_RIGOR_QUICK = 0,
  CALHOST_RIGOR_MEASURE = 1, /* the default */
  CALHOST_RIGOR_EXHAUSTIVE = 2,
} base_rigor;

/* "quick", "measure", "exhaustive" (static strings; "?" when out of range). */
const char *base_rigor_name(base_rigor rigor);

/* Parses a rigor word ("quick", "measure", "exhaustive"; the one parser of
 * them); returns 0 and sets *out, or -1 for an unknown word (*out unchanged). */
int base_rigor_parse(const char *word, base_rigor *out);

/* The search strategies (append-only numbering). */
typedef enum base_strategy {
  CALHOST_SEARCH_DEFAULT = 0, /* choose by budget: search_default_strategy */
  CALHOST_SEARCH_EXHAUSTIVE =
      1,                     /* every valid configuration: the plausible order, then code order */
  CALHOST_SEARCH_RANDOM = 2, /* uniform sampling without replacement (the baseline) */
  CALHOST_SEARCH_LOCAL = 3,  /* hill climbing over neighbours with restarts (iterated) */
  CALHOST_SEARCH_ANNEALING = 4, /* simulated annealing over neighbours */
  CALHOST_SEARCH_GENETIC = 5,   /* steady (mu+lambda) genetic algorithm */
  CALHOST_SEARCH_MODEL = 6,     /* regression forests (cost, feasibility): Thompson + local steps */
  CALHOST_SEARCH_BAYES = 7,     /* Gaussian process, rotating acquisition functions */
} base_strategy;
#define CALHOST_SEARCH_STRATEGY_COUNT 8

/* The word of a strategy ("default", "exhaustive", "random", "local",
 * "annealing", "genetic", "model", "bayes"); "?" for an unknown value. */
const char *base_strategy_name(base_strategy s);

/* Parses a strategy word; returns 0 and sets *out, or -1. */
int base_strategy_parse(const char *word, base_strategy *out);

#endif /* CALHOST_BASE_TUNING_H */
