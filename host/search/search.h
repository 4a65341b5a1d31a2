/*
 * search.h: search strategies over a space of configurations, an engine-level
 * part of the host that depends on nothing above it (not the config, the CLI
 * or the store, not even the measurement engine).
 *
 * A space is a list of named parameters, each with a list of discrete values;
 * a configuration assigns one value (by position) to every parameter. The
 * caller supplies a validity test (cheap, no measurement) and an evaluate
 * callback that measures a configuration and returns its cost (a median
 * latency) or "rejected". Numbered candidates are the special case of one
 * parameter "index" with values 0..count-1 (search_numbered).
 *
 * Every strategy evaluates only valid configurations, never evaluates one
 * twice (the engine caches outcomes), stops on a budget of evaluations and/or
 * seconds (read from an injectable clock) and is deterministic for a seed
 * when the callbacks are. A sweep driver hands in a space whose evaluate
 * callback runs the measurement engine; the replay of a recorded space
 * (spacefile.h) hands in one whose evaluate callback reads the recording.
 * Internal to the host.
 */
#ifndef CALHOST_SEARCH_SEARCH_H
#define CALHOST_SEARCH_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/tuning.h"

/* The strategies (base/tuning.h: the enum and its words, which the
 * configuration holds without linking the search). */
typedef base_strategy search_strategy;

/* One parameter. `values` are the words of its values (no whitespace), in
 * order. ordered = 1: the values are a scale (numbers ascending), so the
 * neighbours of a value are the adjacent ones; 0: categorical, every other
 * value is a neighbour. */
typedef struct search_param {
  const char *name;
  const char *const *values;
  uint32_t value_count;
  int ordered;
} search_param;

/* What evaluate reports for one configuration. */
typedef struct search_outcome {
  int rejected;   /* 1: the configuration failed (check, prepare, ...): never a winner */
  double cost;    /* the median (lower is better, > 0) when not rejected */
  double seconds; /* what the evaluation cost, when the caller knows it (replay); else 0 */
} search_outcome;

/* A space. Everything is borrowed for the duration of a search. A
 * configuration is an array of param_count value positions. */
typedef struct search_space {
  const char *name; /* for messages; may be NULL */
  const search_param *params;
  size_t param_count;
  /* Nonzero when the configuration may be evaluated (NULL: all are). Called
   * often: it must be cheap and measure nothing. */
  int (*valid)(void *user, const uint32_t *config);
  /* Measures a valid configuration and fills *out (zeroed first). Returns 0,
   * or nonzero to stop the search now (cancellation, a fatal error): that
   * configuration is not counted. */
  int (*evaluate)(void *user, const uint32_t *config, search_outcome *out);
  void *user;
  /* The plugin's configurations in its order of plausibility, most
   * plausible first (numbered candidates: 0, 1, 2, ...; a recording: the
   * order it was recorded in): start_count configurations of param_count
   * positions each, flattened; NULL / 0 when there is no such order. The
   * neighbourhood strategies start from the first, the model-based one
   * begins with the first few, exhaustive follows the order (then the rest
   * in code order); random ignores it. */
  const uint32_t *starts;
  size_t start_count;
  /* Nonzero when starts is the plugin's curated candidate list (every
   * candidate hand-picked, most plausible first: a plugin's numbered list,
   * a recording's `meta curated 1`), a stronger prior than a described
   * space's generated order: the model-based strategy then begins with the
   * first three instead of two, draws the rest of its initial design
   * favouring the list's head, takes the position in the list as a
   * feature, and on a budget of more than half the list walks it on every
   * other step. */
  int starts_curated;
  /* Optionally every valid configuration, when the caller knows them (a
   * recording): listed_count configurations of param_count positions,
   * flattened, any order, no repeats, each valid. The engine then lists
   * these instead of enumerating the Cartesian product (which it does only
   * up to 2^20 configurations; above, without a list, it samples the
   * product and the size is unknown). NULL / 0: none. */
  const uint32_t *listed;
  size_t listed_count;
  /* Optionally a warm start: configurations that did well elsewhere (the
   * store's winners of the same kernel on other devices, in the order of
   * their recorded medians, fastest first), warm_count of param_count
   * positions each, flattened; NULL / 0: none. The model-based strategy
   * begins with the first valid one, then takes the next on every other
   * step while they do better on average than its own picks or hold the
   * best (at most an eighth of the budget, at least two, and
   * SEARCH_WARM_MAX in all), and
   * learns from where they land; its space-filling design ignores them. A
   * donor whose winners are bad here costs one evaluation. The other
   * strategies ignore them. */
  const uint32_t *warm;
  size_t warm_count;
} search_space;

/* The most warm-start configurations the model evaluates. */
#define SEARCH_WARM_MAX 8

/* Why a search stopped. */
typedef enum search_stop {
  CALHOST_SEARCH_STOP_EXHAUSTED = 0,   /* every valid configuration was evaluated */
  CALHOST_SEARCH_STOP_EVALUATIONS = 1, /* the evaluation budget was spent */
  CALHOST_SEARCH_STOP_SECONDS = 2,     /* the time budget was spent */
  CALHOST_SEARCH_STOP_TARGET = 3,      /* a cost at or below target_cost was found */
  CALHOST_SEARCH_STOP_CALLER = 4,      /* evaluate returned nonzero */
} search_stop;

typedef struct search_options {
  search_strategy strategy; /* CALHOST_SEARCH_DEFAULT: by budget */
  uint64_t seed;            /* the same seed gives the same search */
  uint32_t max_evaluations; /* 0: no limit */
  double max_seconds;       /* 0: no limit; measured with clock */
  /* The clock of the seconds budget (seconds, monotonic); NULL: the
   * system's monotonic clock. Replay and tests inject one. */
  double (*clock)(void *user);
  void *clock_user;
  int has_target;     /* stop as soon as a cost <= target_cost is found */
  double target_cost; /* (the benchmark's "evaluations to reach X%") */
  /* Called after every evaluation (NULL: none): the configuration (borrowed
   * for the call), its outcome, the evaluation's 1-based number and the best
   * cost so far (INFINITY while nothing succeeded). */
  void (*observe)(void *user, const uint32_t *config, const search_outcome *o, uint32_t evaluation,
                  double best_cost);
  void *observe_user;
} search_options;

/* Fills *o with the defaults: strategy DEFAULT, seed 1, no budget (the whole
 * space), the system clock, no target, no observer. */
void search_options_init(search_options *o);

typedef struct search_result {
  int found;                /* 1: best holds a configuration that was not rejected */
  uint32_t *best;           /* param_count positions (malloc'd), NULL when !found */
  double best_cost;         /* INFINITY when !found */
  uint32_t evaluations;     /* configurations evaluated (rejected ones included) */
  uint32_t rejected;        /* of which rejected */
  double seconds;           /* elapsed on the budget's clock */
  search_stop stop;         /* why it stopped */
  search_strategy strategy; /* the strategy that ran (DEFAULT resolved) */
  char error[256];          /* when search_run returned -1 */
} search_result;

/* Runs a search over space with options (NULL: defaults) and fills *out
 * (zeroed first; free with search_result_free). Returns 0 (out->found
 * says whether a non-rejected configuration was found), or -1 for an unusable
 * space (no parameter, a parameter without values, more than 2^64
 * configurations, no evaluate callback) with the reason in out->error. */
int search_run(const search_space *space, const search_options *options, search_result *out);

/* Frees what *r owns and zeroes it. NULL-safe. */
void search_result_free(search_result *r);

/* The strategy DEFAULT resolves to for a budget of `budget` evaluations in a
 * space of `space_size` valid configurations (0: unknown): exhaustive when
 * the budget covers the space, else the best strategy for that share of the
 * space on the recorded spaces (see README.md). */
search_strategy search_default_strategy(uint64_t budget, uint64_t space_size);

/* The rigor levels of a sweep, mapped onto strategies and budgets. */
typedef enum search_rigor {
  CALHOST_SEARCH_RIGOR_QUICK = 0,
  CALHOST_SEARCH_RIGOR_MEASURE = 1,
  CALHOST_SEARCH_RIGOR_EXHAUSTIVE = 2,
} search_rigor;

/* The documented mapping (README.md): quick: 2% of the space (at least 8,
 * at most 32 evaluations) with the best small-budget strategy; measure: 10%
 * (at least 32, at most 256) with the default strategy; exhaustive: every
 * configuration. space_size is the number of valid configurations (0:
 * unknown, too many to count: the minimums); the budget never exceeds it.
 * Sets *strategy and *evaluations. */
void search_rigor_plan(search_rigor rigor, uint64_t space_size, search_strategy *strategy,
                       uint32_t *evaluations);

/* The largest plugin's curated candidate list that a sweep runs whole at
 * rigor measure (search_sweep_rigor_plan). */
#define CALHOST_SEARCH_CURATED_WHOLE_MAX 4096u

/* What a sweep spends at a rigor level: search_rigor_plan, except that a
 * space that is the plugin's curated candidate list (curated nonzero: an
 * ABI 1 plugin's numbered candidates, or a described space with no more
 * valid points than the list, as cpu_gemm's) of at most
 * CALHOST_SEARCH_CURATED_WHOLE_MAX configurations is run whole at measure
 * (exhaustive, every configuration): the plugin curated it to be
 * affordable. space_size 0 (unknown) is never treated as curated. The one
 * rule shared by the sweep (host/sweep/measure.c) and search-bench. */
void search_sweep_rigor_plan(search_rigor rigor, uint64_t space_size, int curated,
                             search_strategy *strategy, uint32_t *evaluations);

/* Counts the valid configurations of a space by enumeration when it has at
 * most `limit` configurations in all; returns the count, or 0 when the
 * product is larger than limit (unknown). */
uint64_t search_count_valid(const search_space *space, uint64_t limit);

/* Numbered candidates: fills *param as the one parameter "index" with the
 * words "0".."count-1" (allocated into *words, free with
 * search_numbered_free). Returns 0, or -1 when out of memory. */
int search_numbered(uint32_t count, search_param *param, char ***words);
void search_numbered_free(char **words, uint32_t count);

#endif /* CALHOST_SEARCH_SEARCH_H */
