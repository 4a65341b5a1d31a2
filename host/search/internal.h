/*
 * internal.h: what the search engine (engine.c) shares with the strategies
 * (strategies.c, surrogate.c): the search context, its PRNG, the evaluation
 * cache and budget, and the moves on configurations. Internal to host/search.
 */
#ifndef CALHOST_SEARCH_INTERNAL_H
#define CALHOST_SEARCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "search.h"

#if defined(__GNUC__) && !defined(_WIN32)
#define SEARCH_HIDDEN __attribute__((visibility("hidden")))
#else
#define SEARCH_HIDDEN
#endif

/* xoshiro256** seeded through splitmix64: our own PRNG, so a seed gives the
 * same search on every platform and libc. */
typedef struct search_rng {
  uint64_t s[4];
} search_rng;

SEARCH_HIDDEN void search_rng_seed(search_rng *r, uint64_t seed);
SEARCH_HIDDEN uint64_t search_rng_next(search_rng *r);
/* Uniform in [0, n) (n > 0), without modulo bias. */
SEARCH_HIDDEN uint64_t search_rng_below(search_rng *r, uint64_t n);
/* Uniform in [0, 1). */
SEARCH_HIDDEN double search_rng_unit(search_rng *r);

/* One evaluated configuration. */
typedef struct search_eval {
  uint64_t code;
  int rejected;
  double cost; /* INFINITY when rejected */
} search_eval;

typedef struct search_ctx {
  const search_space *space;
  const search_options *opt;
  size_t np;       /* parameter count */
  uint64_t total;  /* product of value counts */
  uint64_t *radix; /* np place values of the mixed-radix code */
  search_rng rng;
  /* the cache: evaluated codes -> index into evals (open addressing) */
  search_eval *evals;
  size_t eval_count, eval_cap;
  uint64_t *slots; /* code + 1, 0: empty */
  uint32_t *slot_eval;
  size_t slot_cap;
  /* the valid configurations, enumerated when total is small enough */
  uint64_t *valid_list;
  size_t valid_count;
  int valid_listed;
  size_t unseen_valid; /* valid_count - evaluated valid ones, when listed */
  /* best so far */
  double best_cost;
  uint64_t best_code;
  int found;
  uint32_t rejected;
  double clock0;
  int stopped;
  search_stop stop;
  uint32_t *scratch; /* np positions */
} search_ctx;

/* Result of search_try. */
enum {
  SEARCH_STOPPED = -1, /* the budget is spent or the caller stopped: return now */
  SEARCH_SEEN = 0,     /* already evaluated: *cost is the cached cost, nothing charged */
  SEARCH_NEW = 1,      /* evaluated now: *cost is its cost (INFINITY when rejected) */
  SEARCH_INVALID = 2,  /* not valid: not evaluated */
};

SEARCH_HIDDEN uint64_t search_encode(const search_ctx *c, const uint32_t *config);
SEARCH_HIDDEN void search_decode(const search_ctx *c, uint64_t code, uint32_t *config);
/* qsort's and bsearch's order of codes (uint64_t), ascending. */
SEARCH_HIDDEN int search_cmp_code(const void *a, const void *b);
SEARCH_HIDDEN int search_is_valid(search_ctx *c, const uint32_t *config);
/* The cached evaluation of a code, or NULL. */
SEARCH_HIDDEN const search_eval *search_lookup(const search_ctx *c, uint64_t code);
/* Evaluates config unless seen, invalid or out of budget (see the enum).
 * *cost may be NULL. */
SEARCH_HIDDEN int search_try(search_ctx *c, const uint32_t *config, double *cost);
/* Nonzero when no budget is left or the caller stopped (checks the clock). */
/* The search's clock now: the options' injected clock, else CLOCK_MONOTONIC. */
SEARCH_HIDDEN double search_now(const search_ctx *c);
/* The number of times 2 divides the value word w (an integer), capped at
 * cap: the "comb" feature, so a block size that is fast only at powers of
 * two is one split (or one kernel length) away. -1 when w is not a
 * positive integer. */
SEARCH_HIDDEN int search_two_adic(const char *w, int cap);
/* Nonzero when the comb feature tells par's values apart beyond their
 * position: more than two values, all positive integers, whose valuations
 * are not simply 0 1 2 ... (not 1 2 4 8 ...). *top (may be NULL) receives
 * the largest valuation seen (capped at cap). */
SEARCH_HIDDEN int search_comb_applies(const search_param *par, int cap, int *top);
SEARCH_HIDDEN int search_done(search_ctx *c);
/* A uniformly random valid configuration that has not been evaluated, into
 * out. Returns 1, or 0 when none is left (or none was found in many tries,
 * for a space too large to enumerate). */
SEARCH_HIDDEN int search_random_unseen(search_ctx *c, uint32_t *out);
/* A random valid configuration (seen or not) into out; 1, or 0 when none
 * was found. */
SEARCH_HIDDEN int search_random_valid(search_ctx *c, uint32_t *out);
/* The neighbours of config: for each parameter, each adjacent value
 * (ordered) or every other value (categorical); when that is invalid, the
 * nearest valid value of one other ordered parameter is tried with it (a
 * "repair", so tiles that must divide each other still move). Appends
 * codes to *out (realloc'd, *n and *cap updated); returns 0, -1 when out
 * of memory. */
SEARCH_HIDDEN int search_neighbours(search_ctx *c, const uint32_t *config, uint64_t **out,
                                    size_t *n, size_t *cap);
/* One random neighbour of config into out (1), or 0 when it has none. */
SEARCH_HIDDEN int search_random_neighbour(search_ctx *c, const uint32_t *config, uint32_t *out);
/* Makes config valid by the smallest change found (one parameter, then two
 * ordered ones moved outward); returns 1 when config is now valid. */
SEARCH_HIDDEN int search_repair(search_ctx *c, uint32_t *config);
/* The i-th configuration of the plausible order into out when there is a
 * valid one (1), else 0. */
SEARCH_HIDDEN int search_plausible(search_ctx *c, size_t i, uint32_t *out);
/* The first configuration of the plausible order (1), else 0. */
SEARCH_HIDDEN int search_start(search_ctx *c, uint32_t *out);

/* The strategies: run until search_done or the space is exhausted. Return
 * 0, or -1 when out of memory; bayes returns 1 when its process is full
 * and the model is to go on with the rest of the budget (engine.c runs
 * it, so that the model, which uses the process, and bayes do not call
 * each other). */
SEARCH_HIDDEN int search_exhaustive(search_ctx *c);
SEARCH_HIDDEN int search_random(search_ctx *c);
SEARCH_HIDDEN int search_local(search_ctx *c);
SEARCH_HIDDEN int search_annealing(search_ctx *c);
SEARCH_HIDDEN int search_genetic(search_ctx *c);
SEARCH_HIDDEN int search_model(search_ctx *c);
SEARCH_HIDDEN int search_bayes(search_ctx *c);

/* The Gaussian process of bayes.c as a component of another strategy:
 * search_gp_open builds it over the search's pool (NULL when out of
 * memory); search_gp_propose takes every evaluation made since its last
 * call into the process and writes the valid unseen configuration the
 * acquisition function whose turn it is ranks first into out (1), or
 * returns 0 (nothing succeeded yet, the process is full or the pool spent). */
typedef struct search_gp search_gp;
typedef int (*search_gp_accept)(void *arg, const uint32_t *config);
SEARCH_HIDDEN search_gp *search_gp_open(search_ctx *c);
SEARCH_HIDDEN int search_gp_propose(search_gp *h, uint32_t *out, search_gp_accept accept,
                                    void *arg);
SEARCH_HIDDEN void search_gp_close(search_gp *h);
/* Whether the process's pool holds every valid configuration (1), or a
 * sample of them (0): a list or product larger than it scores. */
SEARCH_HIDDEN int search_gp_covers(const search_gp *h);
/* Whether the process's length scales have been fitted to its
 * observations (1; from bayes.c's FIT_MIN on), or are still the fixed
 * starting scale (0). */
SEARCH_HIDDEN int search_gp_fitted(const search_gp *h);

/* The evaluation budget left (UINT32_MAX when unlimited) and the fraction of
 * the budget used so far in [0, 1] (evaluations or seconds, whichever is
 * further along; 0 without a budget). */
SEARCH_HIDDEN uint32_t search_evals_left(const search_ctx *c);
SEARCH_HIDDEN double search_progress(search_ctx *c);
/* A strategy's size from the budget: the evaluations left divided by
 * divisor, clamped to [lo, hi]. */
SEARCH_HIDDEN size_t search_evals_share(const search_ctx *c, uint32_t divisor, size_t lo,
                                        size_t hi);

#endif /* CALHOST_SEARCH_INTERNAL_H */
