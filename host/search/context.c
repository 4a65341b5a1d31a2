/*
 * context.c: what every strategy works with inside one search (internal.h):
 * the PRNG, configuration codes, the evaluation cache that makes "never
 * evaluate twice" hold for every strategy, the budget (evaluations, seconds
 * on an injectable clock, target) and the moves the strategies share
 * (random valid configurations, neighbours, repair, the plausible starts),
 * and the power-of-two ("comb") feature the surrogates share.
 * Below the strategies and the engine: it calls neither.
 */
#include "internal.h"

#include "base/array.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- PRNG ------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void search_rng_seed(search_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t search_rng_next(search_rng *r) {
  uint64_t *s = r->s;
  uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return out;
}

uint64_t search_rng_below(search_rng *r, uint64_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do
    x = search_rng_next(r);
  while (x >= limit);
  return x % n;
}

double search_rng_unit(search_rng *r) {
  return (double)(search_rng_next(r) >> 11) * 0x1.0p-53;
}

/* ---- codes and validity ------------------------------------------------ */

int search_cmp_code(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

uint64_t search_encode(const search_ctx *c, const uint32_t *config) {
  uint64_t code = 0;
  for (size_t i = 0; i < c->np; i++)
    code += (uint64_t)config[i] * c->radix[i];
  return code;
}

void search_decode(const search_ctx *c, uint64_t code, uint32_t *config) {
  for (size_t i = 0; i < c->np; i++) {
    config[i] = (uint32_t)(code / c->radix[i]);
    code %= c->radix[i];
  }
}

int search_is_valid(search_ctx *c, const uint32_t *config) {
  for (size_t i = 0; i < c->np; i++)
    if (config[i] >= c->space->params[i].value_count)
      return 0;
  return !c->space->valid || c->space->valid(c->space->user, config);
}

static size_t slot_of(uint64_t code, size_t cap) {
  uint64_t h = code * 0x9e3779b97f4a7c15ull;
  return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

const search_eval *search_lookup(const search_ctx *c, uint64_t code) {
  if (!c->slot_cap)
    return NULL;
  for (size_t i = slot_of(code, c->slot_cap);; i = (i + 1) & (c->slot_cap - 1)) {
    if (c->slots[i] == 0)
      return NULL;
    if (c->slots[i] == code + 1)
      return &c->evals[c->slot_eval[i]];
  }
}

static int cache_grow(search_ctx *c) {
  size_t cap = c->slot_cap ? c->slot_cap * 2 : 256;
  uint64_t *slots = calloc(cap, sizeof *slots);
  uint32_t *idx = calloc(cap, sizeof *idx);
  if (!slots || !idx) {
    free(slots);
    free(idx);
    return -1;
  }
  for (size_t e = 0; e < c->eval_count; e++) {
    size_t i = slot_of(c->evals[e].code, cap);
    while (slots[i])
      i = (i + 1) & (cap - 1);
    slots[i] = c->evals[e].code + 1;
    idx[i] = (uint32_t)e;
  }
  free(c->slots);
  free(c->slot_eval);
  c->slots = slots;
  c->slot_eval = idx;
  c->slot_cap = cap;
  return 0;
}

static int cache_add(search_ctx *c, const search_eval *ev) {
  search_eval *e = base_array_grow(c->evals, c->eval_count, &c->eval_cap, sizeof *e, 64);
  if (!e)
    return -1;
  c->evals = e;
  if ((c->eval_count + 1) * 2 > c->slot_cap && cache_grow(c) != 0)
    return -1;
  c->evals[c->eval_count] = *ev;
  size_t i = slot_of(ev->code, c->slot_cap);
  while (c->slots[i])
    i = (i + 1) & (c->slot_cap - 1);
  c->slots[i] = ev->code + 1;
  c->slot_eval[i] = (uint32_t)c->eval_count;
  c->eval_count++;
  return 0;
}

/* ---- budget ------------------------------------------------------------ */

static double system_clock(void *user) {
  (void)user;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double search_now(const search_ctx *c) {
  return c->opt->clock ? c->opt->clock(c->opt->clock_user) : system_clock(NULL);
}

int search_done(search_ctx *c) {
  if (c->stopped)
    return 1;
  const search_options *o = c->opt;
  if (o->max_evaluations && c->eval_count >= o->max_evaluations) {
    c->stopped = 1;
    c->stop = CALHOST_SEARCH_STOP_EVALUATIONS;
  } else if (o->max_seconds > 0 && search_now(c) - c->clock0 >= o->max_seconds) {
    c->stopped = 1;
    c->stop = CALHOST_SEARCH_STOP_SECONDS;
  } else if (c->valid_listed && c->unseen_valid == 0) {
    c->stopped = 1;
    c->stop = CALHOST_SEARCH_STOP_EXHAUSTED;
  }
  return c->stopped;
}

uint32_t search_evals_left(const search_ctx *c) {
  uint64_t left = UINT32_MAX;
  if (c->opt->max_evaluations)
    left = c->opt->max_evaluations > c->eval_count ? c->opt->max_evaluations - c->eval_count : 0;
  if (c->valid_listed && c->unseen_valid < left)
    left = c->unseen_valid;
  return (uint32_t)left;
}

size_t search_evals_share(const search_ctx *c, uint32_t divisor, size_t lo, size_t hi) {
  size_t n = search_evals_left(c) / divisor;
  return n < lo ? lo : n > hi ? hi : n;
}

double search_progress(search_ctx *c) {
  double p = 0;
  const search_options *o = c->opt;
  if (o->max_evaluations)
    p = (double)c->eval_count / o->max_evaluations;
  else if (c->valid_listed && c->valid_count)
    p = (double)c->eval_count / (double)c->valid_count;
  if (o->max_seconds > 0) {
    double t = (search_now(c) - c->clock0) / o->max_seconds;
    if (t > p)
      p = t;
  }
  return p < 0 ? 0 : p > 1 ? 1 : p;
}

int search_try(search_ctx *c, const uint32_t *config, double *cost) {
  if (search_done(c))
    return SEARCH_STOPPED;
  uint64_t code = search_encode(c, config);
  const search_eval *seen = search_lookup(c, code);
  if (seen) {
    if (cost)
      *cost = seen->cost;
    return SEARCH_SEEN;
  }
  if (!search_is_valid(c, config))
    return SEARCH_INVALID;
  search_outcome o;
  memset(&o, 0, sizeof o);
  if (c->space->evaluate(c->space->user, config, &o) != 0) {
    c->stopped = 1;
    c->stop = CALHOST_SEARCH_STOP_CALLER;
    return SEARCH_STOPPED;
  }
  search_eval ev = {.code = code,
                    .rejected = o.rejected != 0,
                    .cost = o.rejected || !(o.cost >= 0) ? INFINITY : o.cost};
  if (!o.rejected && !(o.cost >= 0))
    ev.rejected = 1; /* a NaN or negative cost is a broken measurement */
  if (cache_add(c, &ev) != 0) {
    c->stopped = 1;
    c->stop = CALHOST_SEARCH_STOP_CALLER;
    return SEARCH_STOPPED;
  }
  if (c->valid_listed && c->unseen_valid)
    c->unseen_valid--;
  if (ev.rejected)
    c->rejected++;
  else if (!c->found || ev.cost < c->best_cost) {
    c->found = 1;
    c->best_cost = ev.cost;
    c->best_code = code;
  }
  if (c->opt->observe) {
    search_outcome seen_o = o;
    seen_o.rejected = ev.rejected;
    c->opt->observe(c->opt->observe_user, config, &seen_o, (uint32_t)c->eval_count,
                    c->found ? c->best_cost : INFINITY);
  }
  if (c->opt->has_target && c->found && c->best_cost <= c->opt->target_cost) {
    c->stopped = 1;
    c->stop = CALHOST_SEARCH_STOP_TARGET;
  }
  if (cost)
    *cost = ev.cost;
  return SEARCH_NEW;
}

/* ---- moves -------------------------------------------------------------- */

int search_random_valid(search_ctx *c, uint32_t *out) {
  if (c->valid_listed) {
    if (!c->valid_count)
      return 0;
    search_decode(c, c->valid_list[search_rng_below(&c->rng, c->valid_count)], out);
    return 1;
  }
  for (int tries = 0; tries < 100000; tries++) {
    for (size_t i = 0; i < c->np; i++)
      out[i] = (uint32_t)search_rng_below(&c->rng, c->space->params[i].value_count);
    if (search_is_valid(c, out))
      return 1;
  }
  return 0;
}

int search_random_unseen(search_ctx *c, uint32_t *out) {
  if (c->valid_listed) {
    if (c->unseen_valid == 0)
      return 0;
    /* rejection while most are unseen; else pick the k-th unseen */
    if (c->unseen_valid * 4 >= c->valid_count) {
      for (;;) {
        uint64_t code = c->valid_list[search_rng_below(&c->rng, c->valid_count)];
        if (!search_lookup(c, code)) {
          search_decode(c, code, out);
          return 1;
        }
      }
    }
    uint64_t k = search_rng_below(&c->rng, c->unseen_valid);
    for (size_t i = 0; i < c->valid_count; i++) {
      if (search_lookup(c, c->valid_list[i]))
        continue;
      if (k-- == 0) {
        search_decode(c, c->valid_list[i], out);
        return 1;
      }
    }
    return 0;
  }
  for (int tries = 0; tries < 1000; tries++) {
    if (!search_random_valid(c, out))
      return 0;
    if (!search_lookup(c, search_encode(c, out)))
      return 1;
  }
  return 0;
}

/* Moves parameter q of cfg outward from its value, nearest positions first,
 * until cfg is valid: as it is, or (then < c->np) after moving parameter
 * `then` the same way at each position of q. 1 when found (cfg changed),
 * else cfg unchanged. */
static int nearest_valid_along(search_ctx *c, uint32_t *cfg, size_t q, size_t then) {
  uint32_t orig = cfg[q], n = c->space->params[q].value_count;
  for (uint32_t d = 1; d < n; d++) {
    for (int sign = -1; sign <= 1; sign += 2) {
      int64_t v = (int64_t)orig + sign * (int64_t)d;
      if (v < 0 || v >= (int64_t)n)
        continue;
      cfg[q] = (uint32_t)v;
      if (then < c->np ? nearest_valid_along(c, cfg, then, SIZE_MAX) : search_is_valid(c, cfg))
        return 1;
    }
  }
  cfg[q] = orig;
  return 0;
}

int search_repair(search_ctx *c, uint32_t *cfg) {
  if (search_is_valid(c, cfg))
    return 1;
  for (size_t q = 0; q < c->np; q++)
    if (c->space->params[q].ordered && nearest_valid_along(c, cfg, q, SIZE_MAX))
      return 1;
  for (size_t q = 0; q < c->np; q++) {
    if (!c->space->params[q].ordered)
      continue;
    for (size_t r = q + 1; r < c->np; r++)
      if (c->space->params[r].ordered && nearest_valid_along(c, cfg, q, r))
        return 1;
  }
  return 0;
}

static int push_code(uint64_t code, uint64_t **out, size_t *n, size_t *cap) {
  for (size_t i = 0; i < *n; i++)
    if ((*out)[i] == code)
      return 0;
  uint64_t *p = base_array_grow(*out, *n, cap, sizeof *p, 32);
  if (!p)
    return -1;
  *out = p;
  (*out)[(*n)++] = code;
  return 0;
}

/* cfg with parameter p set to v, repaired through another ordered
 * parameter when invalid; 1 with the code, else 0. */
static int moved(search_ctx *c, const uint32_t *cfg, size_t p, uint32_t v, uint64_t *code) {
  uint32_t *t = c->scratch;
  memcpy(t, cfg, c->np * sizeof *t);
  t[p] = v;
  if (search_is_valid(c, t)) {
    *code = search_encode(c, t);
    return 1;
  }
  for (size_t q = 0; q < c->np; q++) {
    if (q == p || !c->space->params[q].ordered)
      continue;
    if (nearest_valid_along(c, t, q, SIZE_MAX)) {
      *code = search_encode(c, t);
      return 1;
    }
  }
  return 0;
}

int search_neighbours(search_ctx *c, const uint32_t *cfg, uint64_t **out, size_t *n, size_t *cap) {
  uint64_t self = search_encode(c, cfg), code;
  for (size_t p = 0; p < c->np; p++) {
    const search_param *par = &c->space->params[p];
    if (par->ordered) {
      /* the nearest valid value on each side (skipping invalid ones) */
      for (int sign = -1; sign <= 1; sign += 2) {
        for (int64_t v = (int64_t)cfg[p] + sign; v >= 0 && v < (int64_t)par->value_count;
             v += sign) {
          if (moved(c, cfg, p, (uint32_t)v, &code)) {
            if (code != self && push_code(code, out, n, cap) != 0)
              return -1;
            break;
          }
        }
      }
    } else {
      for (uint32_t v = 0; v < par->value_count; v++)
        if (v != cfg[p] && moved(c, cfg, p, v, &code) && code != self &&
            push_code(code, out, n, cap) != 0)
          return -1;
    }
  }
  return 0;
}

int search_random_neighbour(search_ctx *c, const uint32_t *cfg, uint32_t *out) {
  uint64_t *codes = NULL;
  size_t n = 0, cap = 0;
  if (search_neighbours(c, cfg, &codes, &n, &cap) != 0 || n == 0) {
    free(codes);
    return 0;
  }
  search_decode(c, codes[search_rng_below(&c->rng, n)], out);
  free(codes);
  return 1;
}

int search_plausible(search_ctx *c, size_t i, uint32_t *out) {
  if (!c->space->starts || i >= c->space->start_count)
    return 0;
  memcpy(out, c->space->starts + i * c->np, c->np * sizeof *out);
  return search_is_valid(c, out);
}

int search_start(search_ctx *c, uint32_t *out) {
  return search_plausible(c, 0, out);
}

/* ---- the run ------------------------------------------------------------- */

/* ---- the power-of-two ("comb") feature -------------------------------- */

int search_two_adic(const char *w, int cap) {
  char *end;
  long v = strtol(w, &end, 10);
  if (end == w || *end || v <= 0)
    return -1;
  int k = 0;
  while (v % 2 == 0 && k < cap)
    v /= 2, k++;
  return k;
}

int search_comb_applies(const search_param *par, int cap, int *top) {
  int integers = 1, differs = 0, hi = 0;
  for (uint32_t v = 0; v < par->value_count && integers; v++) {
    int k = search_two_adic(par->values[v], cap);
    integers = k >= 0;
    differs |= (uint32_t)k != v;
    hi = k > hi ? k : hi;
  }
  if (top)
    *top = hi;
  return integers && differs && par->value_count > 2;
}
