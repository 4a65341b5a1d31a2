/*
 * strategies.c: the search strategies that need no model (see search.h and
 * README.md): exhaustive, random sampling, iterated local search (hill
 * climbing with restarts), simulated annealing and a steady-state genetic
 * algorithm. Each proposes configurations and lets the engine (engine.c)
 * decide: search_try evaluates a valid, unseen configuration within the
 * budget and returns cached outcomes for seen ones without charging.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int search_exhaustive(search_ctx *c) {
  uint32_t *cfg = malloc(c->np * sizeof *cfg);
  if (!cfg)
    return -1;
  for (size_t i = 0; i < c->space->start_count; i++)
    if (search_plausible(c, i, cfg) && search_try(c, cfg, NULL) == SEARCH_STOPPED) {
      free(cfg);
      return 0;
    }
  uint64_t n = c->valid_listed ? c->valid_count : c->total;
  for (uint64_t i = 0; i < n; i++) {
    search_decode(c, c->valid_listed ? c->valid_list[i] : i, cfg);
    if (search_try(c, cfg, NULL) == SEARCH_STOPPED)
      break;
  }
  free(cfg);
  return 0;
}

int search_random(search_ctx *c) {
  uint32_t *cfg = malloc(c->np * sizeof *cfg);
  if (!cfg)
    return -1;
  while (!search_done(c) && search_random_unseen(c, cfg))
    if (search_try(c, cfg, NULL) == SEARCH_STOPPED)
      break;
  free(cfg);
  return 0;
}

static void shuffle(search_ctx *c, uint64_t *v, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)search_rng_below(&c->rng, i);
    uint64_t t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
  }
}

/* A new place to continue from: usually a kick (a few random neighbour
 * steps) away from the best configuration found, sometimes a random one;
 * always unseen when one can be found. Evaluates it; returns the engine's
 * answer (SEARCH_STOPPED, SEARCH_NEW) or SEARCH_INVALID when the space has
 * nothing left. */
static int restart(search_ctx *c, uint32_t *cur, double *cur_cost) {
  uint32_t *t = malloc(c->np * sizeof *t);
  if (!t)
    return SEARCH_STOPPED;
  int placed = 0;
  if (c->found && search_rng_unit(&c->rng) < 0.75) {
    for (int attempt = 0; attempt < 8 && !placed; attempt++) {
      search_decode(c, c->best_code, t);
      int steps = 2 + (int)search_rng_below(&c->rng, 2);
      for (int s = 0; s < steps; s++)
        if (!search_random_neighbour(c, t, t))
          break;
      placed = !search_lookup(c, search_encode(c, t));
    }
  }
  if (!placed && !search_random_unseen(c, t)) {
    free(t);
    return SEARCH_INVALID;
  }
  memcpy(cur, t, c->np * sizeof *t);
  free(t);
  return search_try(c, cur, cur_cost);
}

int search_local(search_ctx *c) {
  uint32_t *cur = malloc(c->np * sizeof *cur), *cand = malloc(c->np * sizeof *cand);
  uint64_t *nb = NULL;
  size_t nn = 0, ncap = 0;
  int rc = 0;
  double cur_cost = INFINITY;
  if (!cur || !cand) {
    rc = -1;
    goto out;
  }
  int r;
  if (search_start(c, cur))
    r = search_try(c, cur, &cur_cost);
  else
    r = restart(c, cur, &cur_cost);
  while (r != SEARCH_STOPPED && r != SEARCH_INVALID && !search_done(c)) {
    /* first improvement over the neighbours, in random order */
    nn = 0;
    if (search_neighbours(c, cur, &nb, &nn, &ncap) != 0) {
      rc = -1;
      goto out;
    }
    shuffle(c, nb, nn);
    int moved = 0;
    for (size_t i = 0; i < nn && !moved; i++) {
      double cost;
      const search_eval *ev = search_lookup(c, nb[i]);
      if (ev) {
        cost = ev->cost;
      } else {
        search_decode(c, nb[i], cand);
        int q = search_try(c, cand, &cost);
        if (q == SEARCH_STOPPED)
          goto out;
        if (q != SEARCH_NEW)
          continue;
      }
      if (cost < cur_cost) {
        search_decode(c, nb[i], cur);
        cur_cost = cost;
        moved = 1;
      }
    }
    if (!moved) /* a local optimum: kick or restart */
      r = restart(c, cur, &cur_cost);
  }
out:
  free(nb);
  free(cur);
  free(cand);
  return rc;
}

int search_annealing(search_ctx *c) {
  uint32_t *cur = malloc(c->np * sizeof *cur), *cand = malloc(c->np * sizeof *cand);
  if (!cur || !cand) {
    free(cur);
    free(cand);
    return -1;
  }
  const double t0 = 0.25, t1 = 0.002; /* temperature on log-cost ratios */
  double cur_cost = INFINITY;
  int r = search_start(c, cur) ? search_try(c, cur, &cur_cost) : SEARCH_INVALID;
  if (r == SEARCH_INVALID) {
    if (search_random_unseen(c, cur))
      r = search_try(c, cur, &cur_cost);
  }
  int free_steps = 0;
  while (r != SEARCH_STOPPED && r != SEARCH_INVALID && !search_done(c)) {
    double cost;
    if (free_steps > 40 || !search_random_neighbour(c, cur, cand)) {
      /* stuck among seen configurations: jump near the best, or anywhere */
      free_steps = 0;
      r = restart(c, cand, &cost);
      if (r == SEARCH_STOPPED || r == SEARCH_INVALID)
        break;
      memcpy(cur, cand, c->np * sizeof *cur);
      cur_cost = cost;
      continue;
    }
    r = search_try(c, cand, &cost);
    if (r == SEARCH_STOPPED)
      break;
    if (r == SEARCH_SEEN)
      free_steps++;
    else
      free_steps = 0;
    if (r != SEARCH_NEW && r != SEARCH_SEEN)
      continue;
    double temp = t0 * pow(t1 / t0, search_progress(c));
    int accept;
    if (!isfinite(cost))
      accept = 0;
    else if (!isfinite(cur_cost) || cost <= cur_cost)
      accept = 1;
    else
      accept = search_rng_unit(&c->rng) < exp(-log(cost / cur_cost) / temp);
    if (accept) {
      memcpy(cur, cand, c->np * sizeof *cur);
      cur_cost = cost;
    }
  }
  free(cur);
  free(cand);
  return 0;
}

/* ---- genetic algorithm --------------------------------------------------- */

typedef struct member {
  uint64_t code;
  double cost;
} member;

static size_t tournament(search_ctx *c, const member *pop, size_t n) {
  size_t a = (size_t)search_rng_below(&c->rng, n), b = (size_t)search_rng_below(&c->rng, n);
  return pop[a].cost <= pop[b].cost ? a : b;
}

/* Moves parameter p of cfg one step: an adjacent value (ordered) or any
 * other value (categorical). */
static void mutate_param(search_ctx *c, uint32_t *cfg, size_t p) {
  const search_param *par = &c->space->params[p];
  if (par->value_count < 2)
    return;
  if (par->ordered) {
    if (cfg[p] == 0)
      cfg[p] = 1;
    else if (cfg[p] + 1 >= par->value_count || search_rng_below(&c->rng, 2))
      cfg[p]--;
    else
      cfg[p]++;
  } else {
    uint32_t v = (uint32_t)search_rng_below(&c->rng, par->value_count - 1);
    cfg[p] = v >= cfg[p] ? v + 1 : v;
  }
}

int search_genetic(search_ctx *c) {
  size_t size = search_evals_share(c, 6, 6, 24);
  member *pop = calloc(size, sizeof *pop);
  uint32_t *a = malloc(c->np * sizeof *a), *b = malloc(c->np * sizeof *b);
  int rc = 0;
  if (!pop || !a || !b) {
    rc = -1;
    goto out;
  }
  size_t n = 0;
  int r = SEARCH_NEW;
  if (search_start(c, a)) {
    double cost;
    r = search_try(c, a, &cost);
    if (r == SEARCH_NEW)
      pop[n++] = (member){search_encode(c, a), cost};
  }
  while (n < size && r != SEARCH_STOPPED && search_random_unseen(c, a)) {
    double cost;
    r = search_try(c, a, &cost);
    if (r == SEARCH_NEW)
      pop[n++] = (member){search_encode(c, a), cost};
  }
  while (n >= 2 && r != SEARCH_STOPPED && !search_done(c)) {
    size_t pa = tournament(c, pop, n), pb = tournament(c, pop, n);
    search_decode(c, pop[pa].code, a);
    search_decode(c, pop[pb].code, b);
    if (search_rng_unit(&c->rng) < 0.8)
      for (size_t p = 0; p < c->np; p++)
        if (search_rng_below(&c->rng, 2))
          a[p] = b[p];
    int fresh = 0;
    for (int attempt = 0; attempt < 12 && !fresh; attempt++) {
      int mutated = 0;
      for (size_t p = 0; p < c->np; p++)
        if (search_rng_below(&c->rng, c->np) == 0) {
          mutate_param(c, a, p);
          mutated = 1;
        }
      if (!mutated || attempt > 0)
        mutate_param(c, a, (size_t)search_rng_below(&c->rng, c->np));
      fresh = search_repair(c, a) && !search_lookup(c, search_encode(c, a));
    }
    if (!fresh && !search_random_unseen(c, a))
      break;
    double cost;
    r = search_try(c, a, &cost);
    if (r != SEARCH_NEW)
      continue;
    /* steady state: the child replaces the worst member when better */
    size_t worst = 0;
    for (size_t i = 1; i < n; i++)
      if (pop[i].cost > pop[worst].cost)
        worst = i;
    if (cost < pop[worst].cost)
      pop[worst] = (member){search_encode(c, a), cost};
  }
out:
  free(pop);
  free(a);
  free(b);
  return rc;
}
