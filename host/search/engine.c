/*
 * engine.c: the search engine's public entry (see search.h): the options and
 * their documented defaults, the rigor plans, counting a space's valid
 * configurations, and search_run, which sets up one search's context
 * (context.c), lists the valid configurations of a small space and
 * dispatches to the strategy.
 */
#include "internal.h"

#include "base/array.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Spaces with at most this many configurations in all have their valid ones
 * listed once (sampling without replacement is then exact). */
#define SEARCH_LIST_LIMIT ((uint64_t)1 << 20)

void search_options_init(search_options *o) {
  memset(o, 0, sizeof *o);
  o->strategy = CALHOST_SEARCH_DEFAULT;
  o->seed = 1;
}

/* The strategies by number: the function that runs each (none for the
 * default, which is resolved to another first; their words: base/tuning.c). */
static const struct {
  int (*run)(search_ctx *c);
} strategies[CALHOST_SEARCH_STRATEGY_COUNT] = {
    [CALHOST_SEARCH_DEFAULT] = {NULL},
    [CALHOST_SEARCH_EXHAUSTIVE] = {search_exhaustive},
    [CALHOST_SEARCH_RANDOM] = {search_random},
    [CALHOST_SEARCH_LOCAL] = {search_local},
    [CALHOST_SEARCH_ANNEALING] = {search_annealing},
    [CALHOST_SEARCH_GENETIC] = {search_genetic},
    [CALHOST_SEARCH_MODEL] = {search_model},
    [CALHOST_SEARCH_BAYES] = {search_bayes},
};

search_strategy search_default_strategy(uint64_t budget, uint64_t space_size) {
  if (space_size && (budget == 0 || budget >= space_size))
    return CALHOST_SEARCH_EXHAUSTIVE;
  if (budget == 0)
    return CALHOST_SEARCH_EXHAUSTIVE; /* no budget: everything */
  return CALHOST_SEARCH_MODEL;
}

void search_rigor_plan(search_rigor rigor, uint64_t space_size, search_strategy *strategy,
                       uint32_t *evaluations) {
  uint64_t n;
  switch (rigor) {
  case CALHOST_SEARCH_RIGOR_QUICK:
    n = (space_size * 2 + 99) / 100;
    n = n < 8 ? 8 : n > 32 ? 32 : n;
    break;
  case CALHOST_SEARCH_RIGOR_MEASURE:
    n = (space_size * 10 + 99) / 100;
    n = n < 32 ? 32 : n > 256 ? 256 : n;
    break;
  default:
    n = space_size;
    break;
  }
  if (space_size && n > space_size)
    n = space_size;
  if (n > UINT32_MAX)
    n = UINT32_MAX;
  *evaluations = (uint32_t)n;
  *strategy = search_default_strategy(n, space_size);
}

void search_sweep_rigor_plan(search_rigor rigor, uint64_t space_size, int curated,
                             search_strategy *strategy, uint32_t *evaluations) {
  search_rigor_plan(rigor, space_size, strategy, evaluations);
  if (curated && space_size && rigor == CALHOST_SEARCH_RIGOR_MEASURE &&
      space_size <= CALHOST_SEARCH_CURATED_WHOLE_MAX) {
    *strategy = CALHOST_SEARCH_EXHAUSTIVE;
    *evaluations = (uint32_t)space_size;
  }
}

/* The product of the value counts, or 0 when it exceeds 2^64 - 1. */
static uint64_t space_total(const search_space *s) {
  uint64_t t = 1;
  for (size_t i = 0; i < s->param_count; i++) {
    uint64_t n = s->params[i].value_count;
    if (n == 0 || t > UINT64_MAX / n)
      return 0;
    t *= n;
  }
  return t;
}

uint64_t search_count_valid(const search_space *space, uint64_t limit) {
  uint64_t total = space_total(space);
  if (!total || total > limit || !space->param_count)
    return 0;
  uint32_t *cfg = calloc(space->param_count, sizeof *cfg);
  if (!cfg)
    return 0;
  uint64_t count = 0;
  for (uint64_t code = 0; code < total; code++) {
    uint64_t rest = code;
    for (size_t i = space->param_count; i-- > 0;) {
      cfg[i] = (uint32_t)(rest % space->params[i].value_count);
      rest /= space->params[i].value_count;
    }
    if (!space->valid || space->valid(space->user, cfg))
      count++;
  }
  free(cfg);
  return count;
}

static void ctx_free(search_ctx *c) {
  free(c->radix);
  free(c->evals);
  free(c->slots);
  free(c->slot_eval);
  free(c->valid_list);
  free(c->scratch);
}

/* Lists the caller's valid configurations (space->listed) in code order,
 * as the enumeration would: out-of-range, invalid and repeated ones are
 * dropped. */
static int list_given(search_ctx *c) {
  const search_space *sp = c->space;
  c->valid_list = malloc(sp->listed_count * sizeof *c->valid_list);
  if (!c->valid_list)
    return -1;
  for (size_t i = 0; i < sp->listed_count; i++) {
    const uint32_t *cfg = sp->listed + i * c->np;
    if (search_is_valid(c, cfg))
      c->valid_list[c->valid_count++] = search_encode(c, cfg);
  }
  qsort(c->valid_list, c->valid_count, sizeof *c->valid_list, search_cmp_code);
  size_t n = 0;
  for (size_t i = 0; i < c->valid_count; i++)
    if (n == 0 || c->valid_list[i] != c->valid_list[n - 1])
      c->valid_list[n++] = c->valid_list[i];
  c->valid_count = n;
  c->valid_listed = 1;
  c->unseen_valid = n;
  return 0;
}

static int list_valid(search_ctx *c) {
  uint32_t *cfg = malloc(c->np * sizeof *cfg);
  if (!cfg)
    return -1;
  size_t cap = 0;
  for (uint64_t code = 0; code < c->total; code++) {
    search_decode(c, code, cfg);
    if (!search_is_valid(c, cfg))
      continue;
    uint64_t *p = base_array_grow(c->valid_list, c->valid_count, &cap, sizeof *p, 256);
    if (!p) {
      free(cfg);
      return -1;
    }
    c->valid_list = p;
    c->valid_list[c->valid_count++] = code;
  }
  free(cfg);
  c->valid_listed = 1;
  c->unseen_valid = c->valid_count;
  return 0;
}

int search_run(const search_space *space, const search_options *options, search_result *out) {
  search_options defaults;
  memset(out, 0, sizeof *out);
  out->best_cost = INFINITY;
  if (!options) {
    search_options_init(&defaults);
    options = &defaults;
  }
  if (!space || !space->evaluate || !space->params || space->param_count == 0) {
    snprintf(out->error, sizeof out->error, "search space without parameters or evaluate");
    return -1;
  }
  for (size_t i = 0; i < space->param_count; i++)
    if (space->params[i].value_count == 0 || !space->params[i].values) {
      snprintf(out->error, sizeof out->error, "parameter '%s' has no values",
               space->params[i].name ? space->params[i].name : "?");
      return -1;
    }
  search_ctx c;
  memset(&c, 0, sizeof c);
  c.space = space;
  c.opt = options;
  c.np = space->param_count;
  c.total = space_total(space);
  c.best_cost = INFINITY;
  if (!c.total) {
    snprintf(out->error, sizeof out->error, "search space '%s' has more than 2^64 configurations",
             space->name ? space->name : "?");
    return -1;
  }
  c.radix = malloc(c.np * sizeof *c.radix);
  c.scratch = malloc(c.np * sizeof *c.scratch);
  if (!c.radix || !c.scratch)
    goto oom;
  for (size_t i = c.np, r = 1; i-- > 0;) {
    c.radix[i] = (uint64_t)r;
    r *= space->params[i].value_count;
  }
  search_rng_seed(&c.rng, options->seed);
  if (space->listed && space->listed_count ? list_given(&c) != 0
      : c.total <= SEARCH_LIST_LIMIT       ? list_valid(&c) != 0
                                           : 0)
    goto oom;
  c.clock0 = search_now(&c);

  search_strategy st = options->strategy;
  if (st == CALHOST_SEARCH_DEFAULT)
    st = search_default_strategy(options->max_evaluations, c.valid_listed ? c.valid_count : 0);
  if ((unsigned)st >= CALHOST_SEARCH_STRATEGY_COUNT || !strategies[st].run) {
    snprintf(out->error, sizeof out->error, "unknown strategy %d", (int)st);
    ctx_free(&c);
    return -1;
  }
  int rc = strategies[st].run(&c);
  if (rc > 0) /* the strategy hands the rest of the budget to the model */
    rc = search_model(&c);
  if (rc != 0)
    goto oom;
  if (!c.stopped) {
    c.stop = CALHOST_SEARCH_STOP_EXHAUSTED;
    search_done(&c); /* a budget that ended exactly now is reported as such */
  }
  out->strategy = st;
  out->evaluations = (uint32_t)c.eval_count;
  out->rejected = c.rejected;
  out->seconds = search_now(&c) - c.clock0;
  out->stop = c.stop;
  if (c.found) {
    out->best = malloc(c.np * sizeof *out->best);
    if (!out->best)
      goto oom;
    search_decode(&c, c.best_code, out->best);
    out->found = 1;
    out->best_cost = c.best_cost;
  }
  ctx_free(&c);
  return 0;
oom:
  ctx_free(&c);
  search_result_free(out);
  snprintf(out->error, sizeof out->error, "out of memory");
  return -1;
}

void search_result_free(search_result *r) {
  if (!r)
    return;
  free(r->best);
  memset(r, 0, sizeof *r);
  r->best_cost = INFINITY;
}

int search_numbered(uint32_t count, search_param *param, char ***words) {
  char **w = calloc(count ? count : 1, sizeof *w);
  if (!w)
    return -1;
  for (uint32_t i = 0; i < count; i++) {
    char buf[16];
    int n = snprintf(buf, sizeof buf, "%u", i);
    w[i] = malloc((size_t)n + 1);
    if (!w[i]) {
      search_numbered_free(w, i);
      return -1;
    }
    memcpy(w[i], buf, (size_t)n + 1);
  }
  param->name = "index";
  param->values = (const char *const *)w;
  param->value_count = count;
  param->ordered = 1;
  *words = w;
  return 0;
}

void search_numbered_free(char **words, uint32_t count) {
  for (uint32_t i = 0; words && i < count; i++)
    free(words[i]);
  free(words);
}
