/*
 * bayes.c: the Bayesian-optimisation strategy ("bayes"): a Gaussian process
 * over the valid configurations with a portfolio of acquisition functions,
 * after Kernel Tuner's bayes_opt (Willemsen et al. 2021; our own code).
 *
 * Features: each parameter's position scaled to [0, 1] (ordered; a
 * categorical one is one-hot, scaled so that two values are at distance
 * 1), plus, for an ordered parameter of integers that are not a plain
 * doubling, the power of two dividing the value scaled to [0, 1] (the
 * "comb" of block sizes fast only at powers of two; surrogate.c's feature).
 * Kernel: Matern 5/2 with a length scale per parameter's feature (one for
 * a categorical parameter's one-hot block), unit signal variance, targets
 * the log of the successful costs, standardised. The length scales start
 * at LENGTH and, from FIT_MIN observations on, are fitted to them (the
 * maximum of the log marginal likelihood plus a log-normal prior around
 * LENGTH, by FIT_STEPS steps of Adam) whenever the observations grew by a
 * quarter, up to FIT_MAX: the process learns which parameters matter and
 * how sharply (a comb's power-of-two feature, a parameter that does not
 * matter). A
 * rejected evaluation enters the process as a pseudo-observation at the
 * slowest success so far, so the process steers away from where things
 * fail without a second model. The initial design is the first
 * configurations of the plausible order (as the model's), then a
 * Latin-hypercube sample over the valid configurations: each design point
 * takes, per feature, a stratum of [0, 1] of its own (a random permutation
 * per feature) and evaluates the valid, unseen configuration nearest to the
 * strata's random point (so the sample respects the space's constraints).
 *
 * Each step scores every configuration of a candidate pool (the valid
 * list, or a random sample of at most POOL_MAX valid configurations) and
 * evaluates the best by the acquisition function whose turn it is: expected
 * improvement, probability of improvement, lower confidence bound, in
 * rotation; a function whose picks do clearly worse than the others'
 * (discounted, more than REQUIRED_GAIN, WORSE_ROUNDS rounds) is dropped
 * (Kernel Tuner's "multi-advanced"). Their exploration shrinks with the
 * pool's mean posterior deviation relative to what it was after the
 * initial design ("contextual variance").
 *
 * The cost of a step: the Cholesky factor L of the observations' kernel
 * matrix grows by one row per observation, and every pool candidate keeps
 * v = L^-1 k(X, x) and |v|^2, extended by one element per observation; so
 * a step is O(pool x n) (mean: v . L^-1 y; variance 1 - |v|^2) instead of
 * O(pool x n^2). Beyond GP_MAX observations (a budget larger than the
 * memory bound allows) the model strategy continues, learning from the
 * cache. Design and figures: README.md.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the most configurations the process scores (a random sample of larger
 * valid lists) and the most doubles the per-candidate vectors hold */
#define POOL_MAX 16384
#define V_MAX ((size_t)4 << 20)
#define GP_MAX 1024
/* the length scales' start and their prior's centre over [0, 1] features
 * (as one fixed scale, 0.25, 0.5 and Kernel Tuner's 1.5 did worse on the
 * real GPU spaces: tests/bench/search/LOG.md) and the jitter */
#define LENGTH 1.0
#define JITTER 1e-6
/* the length scales' fit: from FIT_MIN observations, again whenever they
 * grew by FIT_GROW, up to FIT_MAX (the O(n^3) step's bound); FIT_STEPS
 * steps of Adam of rate FIT_RATE on the log scales, each within
 * [FIT_LO, FIT_HI], under a normal prior of deviation FIT_PRIOR_SD
 * around log LENGTH. Fitted from 4 observations, the scales chased the
 * first few points (convhip-W7800 at quick 0.653 against 0.909 from 16);
 * a prior of 0.5 was level with 1 (tests/bench/search/LOG.md). */
#define FIT_MIN 16
#define FIT_GROW 1.25
#define FIT_MAX 100
#define FIT_STEPS 30
#define FIT_RATE 0.1
#define FIT_PRIOR_SD 1.0
#define FIT_LO 0.05
#define FIT_HI 20.0
/* the initial design: the evaluations left / INITIAL_DIV, clamped */
#define INITIAL_DIV 5
#define INITIAL_MIN 4
#define INITIAL_MAX 20
#define PLAUSIBLE 2
#define PLAUSIBLE_CURATED 3
/* the portfolio (Kernel Tuner's multi-advanced) */
#define AF_COUNT 3
#define DISCOUNT 0.95
#define REQUIRED_GAIN 0.1
#define WORSE_ROUNDS 5

#define SQRT1_2 0.70710678118654752440
#define SQRT_2PI 2.50662827463100050242

enum { AF_EI = 0, AF_PI = 1, AF_LCB = 2 };

typedef struct gp {
  search_ctx *c;
  size_t nd;      /* features */
  size_t *base;   /* np: the first feature of each parameter */
  int *onehot;    /* np: categorical */
  double *comb;   /* np: 0, or 1 / the largest power-of-two exponent of the values */
  size_t pool_n;  /* candidates */
  uint64_t *pool; /* their codes */
  float *px;      /* pool_n x nd features */
  unsigned char *gone;
  size_t cap;    /* observations the process holds at most */
  size_t n;      /* observations */
  double *v;     /* pool_n x cap: L^-1 k(X, x_i) */
  double *vv;    /* pool_n: |v_i|^2 */
  double *L;     /* cap x cap, lower triangular, row-major */
  double *ox;    /* cap x nd: the observations' features */
  double *ocost; /* cap: cost, INFINITY when rejected */
  double *y, *beta, *row, *fx;
  double *ys; /* cap: scratch for the targets' median */
  /* the length scales: one per parameter's feature group */
  double *w;                                          /* nd: each feature's 1 / length^2 */
  size_t *grp;                                        /* nd: the group of each feature */
  size_t nh;                                          /* groups */
  double *th;                                         /* nh: log length scales */
  size_t fit_n;                                       /* observations at the last fit */
  double *fk, *fki, *fa, *fgr, *fm1, *fm2, *fth, *fw; /* the fit's scratch */
  uint32_t *cfg;
  /* the portfolio */
  int active[AF_COUNT];
  double disc[AF_COUNT];
  int worse[AF_COUNT];
  int turn, turns_in_round;
  double sigma0; /* the pool's mean deviation after the initial design */
  double init_mean_cost;
} gp;

/* ---- features and kernel ------------------------------------------------- */

static void features(const gp *g, const uint32_t *cfg, double *out) {
  const search_ctx *c = g->c;
  memset(out, 0, g->nd * sizeof *out);
  for (size_t p = 0; p < c->np; p++) {
    const search_param *par = &c->space->params[p];
    if (g->onehot[p]) {
      out[g->base[p] + cfg[p]] = SQRT1_2;
      continue;
    }
    out[g->base[p]] = par->value_count > 1 ? (double)cfg[p] / (par->value_count - 1) : 0;
    if (g->comb[p] > 0)
      out[g->base[p] + 1] = search_two_adic(par->values[cfg[p]], 20) * g->comb[p];
  }
}

static double matern52(double d2) {
  double r = sqrt(5.0 * d2);
  return (1 + r + r * r / 3) * exp(-r);
}

/* Squared distances weighted by w (each feature's 1 / length^2). */
static double dist2_fd(const double *w, const float *a, const double *b, size_t nd) {
  double s = 0;
  for (size_t i = 0; i < nd; i++) {
    double d = a[i] - b[i];
    s += w[i] * d * d;
  }
  return s;
}

static double dist2_dd(const double *w, const double *a, const double *b, size_t nd) {
  double s = 0;
  for (size_t i = 0; i < nd; i++) {
    double d = a[i] - b[i];
    s += w[i] * d * d;
  }
  return s;
}

/* ---- set-up -------------------------------------------------------------- */

/* The length scales' groups (one per ordered parameter's feature, one per
 * categorical parameter's one-hot block), each scale at LENGTH, and the
 * fit's scratch for min(cap, FIT_MAX) observations (none below FIT_MIN:
 * the scales then stay LENGTH). After cap is set; 0, or -1 when out of
 * memory. */
static int scales_init(gp *g) {
  const search_ctx *c = g->c;
  g->w = malloc(g->nd * sizeof *g->w);
  g->grp = malloc(g->nd * sizeof *g->grp);
  g->th = malloc(g->nd * sizeof *g->th);
  if (!g->w || !g->grp || !g->th)
    return -1;
  for (size_t p = 0; p < c->np; p++) {
    const search_param *par = &c->space->params[p];
    if (g->onehot[p]) {
      for (size_t k = 0; k < par->value_count; k++)
        g->grp[g->base[p] + k] = g->nh;
      g->nh++;
      continue;
    }
    g->grp[g->base[p]] = g->nh++;
    if (g->comb[p] > 0)
      g->grp[g->base[p] + 1] = g->nh++;
  }
  for (size_t k = 0; k < g->nd; k++)
    g->w[k] = 1.0 / (LENGTH * LENGTH);
  for (size_t h = 0; h < g->nh; h++)
    g->th[h] = log(LENGTH);
  size_t fn = g->cap < FIT_MAX ? g->cap : FIT_MAX;
  if (fn >= FIT_MIN) { /* the fit's scratch; without it, the scales stay LENGTH */
    g->fk = malloc(fn * fn * sizeof *g->fk);
    g->fki = malloc(fn * fn * sizeof *g->fki);
    g->fa = malloc(fn * sizeof *g->fa);
    g->fgr = malloc(g->nh * sizeof *g->fgr);
    g->fm1 = malloc(g->nh * sizeof *g->fm1);
    g->fm2 = malloc(g->nh * sizeof *g->fm2);
    g->fth = malloc(g->nh * sizeof *g->fth);
    g->fw = malloc(g->nd * sizeof *g->fw);
    if (!g->fk || !g->fki || !g->fa || !g->fgr || !g->fm1 || !g->fm2 || !g->fth || !g->fw)
      return -1;
  }
  return 0;
}

static int gp_init(gp *g, search_ctx *c) {
  memset(g, 0, sizeof *g);
  g->c = c;
  g->base = malloc(c->np * sizeof *g->base);
  g->onehot = calloc(c->np, sizeof *g->onehot);
  g->comb = calloc(c->np, sizeof *g->comb);
  g->cfg = malloc(c->np * sizeof *g->cfg);
  if (!g->base || !g->onehot || !g->comb || !g->cfg)
    return -1;
  for (size_t p = 0; p < c->np; p++) {
    const search_param *par = &c->space->params[p];
    g->base[p] = g->nd;
    if (!par->ordered && par->value_count <= 16) {
      g->onehot[p] = 1;
      g->nd += par->value_count;
      continue;
    }
    int top = 0;
    if (search_comb_applies(par, 20, &top) && top > 0)
      g->comb[p] = 1.0 / top;
    g->nd += 1 + (g->comb[p] > 0);
  }
  /* the pool: the valid list, or a sample of it, or of the product */
  size_t want = c->valid_listed ? c->valid_count : POOL_MAX;
  if (want > POOL_MAX)
    want = POOL_MAX;
  g->pool = malloc((want ? want : 1) * sizeof *g->pool);
  if (!g->pool)
    return -1;
  if (c->valid_listed && c->valid_count <= POOL_MAX) {
    memcpy(g->pool, c->valid_list, c->valid_count * sizeof *g->pool);
    g->pool_n = c->valid_count;
  } else if (c->valid_listed) { /* a partial Fisher-Yates draw of the list */
    uint64_t *all = malloc(c->valid_count * sizeof *all);
    if (!all)
      return -1;
    memcpy(all, c->valid_list, c->valid_count * sizeof *all);
    for (size_t i = 0; i < want; i++) {
      size_t j = i + (size_t)search_rng_below(&c->rng, c->valid_count - i);
      uint64_t t = all[i];
      all[i] = all[j];
      all[j] = t;
      g->pool[i] = all[i];
    }
    free(all);
    g->pool_n = want;
  } else {
    for (size_t tries = 0; tries < 4 * want && g->pool_n < want; tries++) {
      if (!search_random_valid(c, g->cfg))
        break;
      uint64_t code = search_encode(c, g->cfg);
      int dup = 0; /* a product too large to list: repeats are rare */
      for (size_t i = g->pool_n; i-- > 0 && i + 64 > g->pool_n;)
        dup |= g->pool[i] == code;
      if (!dup)
        g->pool[g->pool_n++] = code;
    }
  }
  uint32_t left = search_evals_left(c);
  g->cap = left < GP_MAX ? left : GP_MAX;
  if (g->pool_n && g->cap > V_MAX / g->pool_n)
    g->cap = V_MAX / g->pool_n;
  if (g->cap < 2)
    g->cap = 2;
  g->px = malloc((g->pool_n ? g->pool_n : 1) * g->nd * sizeof *g->px);
  g->gone = calloc(g->pool_n ? g->pool_n : 1, 1);
  g->v = malloc((g->pool_n ? g->pool_n : 1) * g->cap * sizeof *g->v);
  g->vv = calloc(g->pool_n ? g->pool_n : 1, sizeof *g->vv);
  g->L = calloc(g->cap * g->cap, sizeof *g->L);
  g->ox = malloc(g->cap * g->nd * sizeof *g->ox);
  g->ocost = malloc(g->cap * sizeof *g->ocost);
  g->y = malloc(g->cap * sizeof *g->y);
  g->ys = malloc(g->cap * sizeof *g->ys);
  g->beta = malloc(g->cap * sizeof *g->beta);
  g->row = malloc(g->cap * sizeof *g->row);
  g->fx = malloc(g->nd * sizeof *g->fx);
  if (scales_init(g) != 0)
    return -1;
  if (!g->px || !g->gone || !g->v || !g->vv || !g->L || !g->ox || !g->ocost || !g->y || !g->ys ||
      !g->beta || !g->row || !g->fx)
    return -1;
  for (size_t i = 0; i < g->pool_n; i++) {
    search_decode(c, g->pool[i], g->cfg);
    features(g, g->cfg, g->fx);
    for (size_t k = 0; k < g->nd; k++)
      g->px[i * g->nd + k] = (float)g->fx[k];
    g->gone[i] = search_lookup(c, g->pool[i]) != NULL;
  }
  for (int a = 0; a < AF_COUNT; a++)
    g->active[a] = 1;
  return 0;
}

static void gp_free(gp *g) {
  free(g->base);
  free(g->onehot);
  free(g->comb);
  free(g->cfg);
  free(g->pool);
  free(g->px);
  free(g->gone);
  free(g->v);
  free(g->vv);
  free(g->L);
  free(g->ox);
  free(g->ocost);
  free(g->y);
  free(g->ys);
  free(g->beta);
  free(g->row);
  free(g->fx);
  free(g->w);
  free(g->grp);
  free(g->th);
  free(g->fk);
  free(g->fki);
  free(g->fa);
  free(g->fgr);
  free(g->fm1);
  free(g->fm2);
  free(g->fth);
  free(g->fw);
}

/* ---- the process --------------------------------------------------------- */

/* The pool index of code, or pool_n. The pool is in the valid list's order
 * (codes ascending) when it is the whole list: a binary search; else a
 * scan. */
static size_t pool_find(const gp *g, uint64_t code) {
  const search_ctx *c = g->c;
  if (c->valid_listed && c->valid_count <= POOL_MAX) {
    size_t lo = 0, hi = g->pool_n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (g->pool[mid] < code)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < g->pool_n && g->pool[lo] == code)
      return lo;
    return g->pool_n;
  }
  for (size_t i = 0; i < g->pool_n; i++)
    if (g->pool[i] == code)
      return i;
  return g->pool_n;
}

/* Adds an evaluated configuration (cost INFINITY: rejected) to the process:
 * L grows by a row, every candidate's v by one element. Returns 0, or 1
 * when the process is full. */
static int observe(gp *g, const uint32_t *cfg, double cost) {
  if (g->n >= g->cap)
    return 1;
  size_t n = g->n, nd = g->nd;
  uint64_t code = search_encode(g->c, cfg);
  size_t at = pool_find(g, code);
  double *x = g->ox + n * nd;
  features(g, cfg, x);
  double *l = g->L + n * g->cap, ll;
  if (at < g->pool_n && !g->gone[at]) { /* its v is kept */
    memcpy(l, g->v + at * g->cap, n * sizeof *l);
    ll = 1 + JITTER - g->vv[at];
    g->gone[at] = 1;
  } else { /* L l = k(X, x) by forward substitution */
    ll = 1 + JITTER;
    for (size_t j = 0; j < n; j++) {
      double s = matern52(dist2_dd(g->w, g->ox + j * nd, x, nd));
      for (size_t k = 0; k < j; k++)
        s -= g->L[j * g->cap + k] * l[k];
      l[j] = s / g->L[j * g->cap + j];
      ll -= l[j] * l[j];
    }
  }
  ll = sqrt(ll > JITTER ? ll : JITTER);
  l[n] = ll;
  for (size_t i = 0; i < g->pool_n; i++) {
    if (g->gone[i])
      continue;
    double *vi = g->v + i * g->cap;
    double s = matern52(dist2_fd(g->w, g->px + i * nd, x, nd));
    for (size_t k = 0; k < n; k++)
      s -= vi[k] * l[k];
    vi[n] = s / ll;
    g->vv[i] += vi[n] * vi[n];
  }
  g->ocost[n] = cost;
  g->n++;
  return 0;
}

/* ---- the length scales' fit --------------------------------------------- */

/* In-place Cholesky factor of the n x n matrix a (row-major, lower
 * triangle; the upper one zeroed). 0, or -1 when a is not positive
 * definite. */
static int cholesky(double *a, size_t n) {
  for (size_t j = 0; j < n; j++) {
    double d = a[j * n + j];
    for (size_t k = 0; k < j; k++)
      d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0))
      return -1;
    d = sqrt(d);
    a[j * n + j] = d;
    for (size_t i = j + 1; i < n; i++) {
      double s = a[i * n + j];
      for (size_t k = 0; k < j; k++)
        s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
    for (size_t k = j + 1; k < n; k++)
      a[j * n + k] = 0;
  }
  return 0;
}

/* Rebuilds L and every candidate's v and |v|^2 under the current weights. */
static void rebuild(gp *g) {
  size_t n = g->n, nd = g->nd, cap = g->cap;
  for (size_t i = 0; i < n; i++) {
    double *l = g->L + i * cap, ll = 1 + JITTER;
    for (size_t j = 0; j < i; j++) {
      double s = matern52(dist2_dd(g->w, g->ox + j * nd, g->ox + i * nd, nd));
      for (size_t k = 0; k < j; k++)
        s -= g->L[j * cap + k] * l[k];
      l[j] = s / g->L[j * cap + j];
      ll -= l[j] * l[j];
    }
    l[i] = sqrt(ll > JITTER ? ll : JITTER);
  }
  for (size_t i = 0; i < g->pool_n; i++) {
    if (g->gone[i])
      continue;
    double *vi = g->v + i * cap, vv = 0;
    for (size_t k = 0; k < nd; k++)
      g->fx[k] = g->px[i * nd + k];
    for (size_t j = 0; j < n; j++) {
      double s = matern52(dist2_dd(g->w, g->ox + j * nd, g->fx, nd));
      for (size_t k = 0; k < j; k++)
        s -= g->L[j * cap + k] * vi[k];
      vi[j] = s / g->L[j * cap + j];
      vv += vi[j] * vi[j];
    }
    g->vv[i] = vv;
  }
}

/* The gradient of the log posterior of the log length scales th (weights
 * w) given the standardised targets g->y, into gr; 0, or -1 when the
 * kernel matrix is not positive definite. With K's Cholesky factor,
 * alpha = K^-1 y and K^-1: d/dth_h = 1/2 sum_ij (alpha_i alpha_j -
 * K^-1_ij) dK_ij/dth_h, and for Matern 5/2 (s = sqrt(5) r) dk/dth_k =
 * 5/3 (1 + s) e^-s w_k d_k^2 summed over the group's features. */
static int fit_gradient(gp *g, const double *th, const double *w, double *gr) {
  size_t n = g->n, nd = g->nd;
  double *K = g->fk, *Li = g->fki, *a = g->fa;
  for (size_t i = 0; i < n; i++) {
    K[i * n + i] = 1 + JITTER;
    for (size_t j = 0; j < i; j++)
      K[i * n + j] = K[j * n + i] = matern52(dist2_dd(w, g->ox + i * nd, g->ox + j * nd, nd));
  }
  if (cholesky(K, n) != 0)
    return -1;
  for (size_t i = 0; i < n; i++) { /* alpha: L z = y, then L^T alpha = z */
    double s = g->y[i];
    for (size_t k = 0; k < i; k++)
      s -= K[i * n + k] * a[k];
    a[i] = s / K[i * n + i];
  }
  for (size_t i = n; i-- > 0;) {
    double s = a[i];
    for (size_t k = i + 1; k < n; k++)
      s -= K[k * n + i] * a[k];
    a[i] = s / K[i * n + i];
  }
  memset(Li, 0, n * n * sizeof *Li); /* L^-1, lower triangular */
  for (size_t j = 0; j < n; j++) {
    Li[j * n + j] = 1 / K[j * n + j];
    for (size_t i = j + 1; i < n; i++) {
      double s = 0;
      for (size_t k = j; k < i; k++)
        s -= K[i * n + k] * Li[k * n + j];
      Li[i * n + j] = s / K[i * n + i];
    }
  }
  for (size_t h = 0; h < g->nh; h++)
    gr[h] = -(th[h] - log(LENGTH)) / (FIT_PRIOR_SD * FIT_PRIOR_SD);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++) {
      double kinv = 0; /* K^-1_ij = sum_k Li_ki Li_kj over k >= i */
      for (size_t k = i; k < n; k++)
        kinv += Li[k * n + i] * Li[k * n + j];
      double sv = sqrt(5.0 * dist2_dd(w, g->ox + i * nd, g->ox + j * nd, nd));
      double f = (a[i] * a[j] - kinv) * (5.0 / 3.0) * (1 + sv) * exp(-sv);
      for (size_t k = 0; k < nd; k++) {
        double d = g->ox[i * nd + k] - g->ox[j * nd + k];
        gr[g->grp[k]] += f * w[k] * d * d;
      }
    }
  return 0;
}

/* Fits the log length scales to the standardised targets g->y when it is
 * time (FIT_MIN, FIT_GROW, FIT_MAX) and rebuilds the process under them. */
static void fit_length_scales(gp *g) {
  size_t n = g->n, nd = g->nd, nh = g->nh;
  if (!g->fk || n < FIT_MIN || n > FIT_MAX || (g->fit_n && (double)n < g->fit_n * FIT_GROW))
    return;
  g->fit_n = n;
  double *th = g->fth, *w = g->fw, *gr = g->fgr, *m1 = g->fm1, *m2 = g->fm2;
  memcpy(th, g->th, nh * sizeof *th);
  memset(m1, 0, nh * sizeof *m1);
  memset(m2, 0, nh * sizeof *m2);
  for (int it = 1; it <= FIT_STEPS; it++) {
    for (size_t k = 0; k < nd; k++)
      w[k] = exp(-2 * th[g->grp[k]]);
    if (fit_gradient(g, th, w, gr) != 0)
      break;
    for (size_t h = 0; h < nh; h++) { /* Adam, ascending */
      m1[h] = 0.9 * m1[h] + 0.1 * gr[h];
      m2[h] = 0.999 * m2[h] + 0.001 * gr[h] * gr[h];
      double mh = m1[h] / (1 - pow(0.9, it)), vh = m2[h] / (1 - pow(0.999, it));
      th[h] += FIT_RATE * mh / (sqrt(vh) + 1e-8);
      th[h] = th[h] < log(FIT_LO) ? log(FIT_LO) : th[h] > log(FIT_HI) ? log(FIT_HI) : th[h];
    }
  }
  memcpy(g->th, th, nh * sizeof *th);
  for (size_t k = 0; k < nd; k++)
    g->w[k] = exp(-2 * g->th[g->grp[k]]);
  rebuild(g);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The targets (log costs, a rejection at the slowest success, each at most
 * CLIP above the median), standardised, and beta = L^-1 y. *best: the
 * smallest standardised target. The clip: one far outlier (a misleading
 * donor's winner, this device's slowest; a corner 10x slower than the
 * rest) otherwise takes the standard deviation, the other targets all
 * look alike to the process, and its posterior ranks nothing; clipped,
 * the warm start's deliberately misleading donor cost convhip-A6000
 * 0.027 at quick (mean of 31 seeds) against 0.054 (README.md). */
#define CLIP 1.0
static void targets(gp *g, double *best) {
  double worst = -INFINITY, mean = 0, sd = 0;
  size_t n = g->n;
  for (size_t i = 0; i < n; i++)
    if (isfinite(g->ocost[i]) && log(g->ocost[i]) > worst)
      worst = log(g->ocost[i]);
  for (size_t i = 0; i < n; i++)
    g->ys[i] = g->y[i] = isfinite(g->ocost[i]) ? log(g->ocost[i]) : worst;
  qsort(g->ys, n, sizeof *g->ys, cmp_double);
  double cap = n ? g->ys[n / 2] + CLIP : INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (g->y[i] > cap)
      g->y[i] = cap;
    mean += g->y[i];
  }
  mean /= n;
  for (size_t i = 0; i < n; i++)
    sd += (g->y[i] - mean) * (g->y[i] - mean);
  sd = sqrt(sd / n);
  if (!(sd > 1e-12))
    sd = 1;
  *best = INFINITY;
  for (size_t i = 0; i < n; i++) {
    g->y[i] = (g->y[i] - mean) / sd;
    if (isfinite(g->ocost[i]) && g->y[i] < *best)
      *best = g->y[i];
  }
  fit_length_scales(g);
  for (size_t j = 0; j < n; j++) {
    double s = g->y[j];
    for (size_t k = 0; k < j; k++)
      s -= g->L[j * g->cap + k] * g->beta[k];
    g->beta[j] = s / g->L[j * g->cap + j];
  }
}

static double norm_cdf(double z) {
  return 0.5 * erfc(-z * SQRT1_2);
}

static double norm_pdf(double z) {
  return exp(-0.5 * z * z) / SQRT_2PI;
}

/* The pool's mean posterior deviation over the candidates left. */
static double mean_sigma(const gp *g) {
  double s = 0;
  size_t k = 0;
  for (size_t i = 0; i < g->pool_n; i++)
    if (!g->gone[i]) {
      double var = 1 + JITTER - g->vv[i];
      s += sqrt(var > 0 ? var : 0);
      k++;
    }
  return k ? s / k : 0;
}

/* The candidate acquisition function af ranks first (pool_n: none left);
 * with accept, the first of those it accepts, when it accepts any. */
static size_t acquire_where(gp *g, int af, double explore, search_gp_accept accept, void *arg);

static size_t acquire(gp *g, int af, double explore) {
  return acquire_where(g, af, explore, NULL, NULL);
}

static size_t acquire_where(gp *g, int af, double explore, search_gp_accept accept, void *arg) {
  double best;
  targets(g, &best);
  size_t n = g->n, pick = g->pool_n, pick_ok = g->pool_n;
  double top = -INFINITY, top_ok = -INFINITY;
  double xi = af == AF_PI ? 0.1 * explore : 0.01 * explore;
  double kappa = 0.5 + 2.5 * explore;
  for (size_t i = 0; i < g->pool_n; i++) {
    if (g->gone[i])
      continue;
    const double *vi = g->v + i * g->cap;
    double mu = 0;
    for (size_t k = 0; k < n; k++)
      mu += vi[k] * g->beta[k];
    double var = 1 + JITTER - g->vv[i];
    double sigma = sqrt(var > 1e-12 ? var : 1e-12);
    double a, z = (best - mu - xi) / sigma;
    switch (af) {
    case AF_EI:
      a = (best - mu - xi) * norm_cdf(z) + sigma * norm_pdf(z);
      break;
    case AF_PI:
      a = norm_cdf(z);
      break;
    default:
      a = -(mu - kappa * sigma);
      break;
    }
    if (a > top) {
      top = a;
      pick = i;
    }
    if (accept && a > top_ok) {
      search_decode(g->c, g->pool[i], g->cfg);
      if (accept(arg, g->cfg))
        top_ok = a, pick_ok = i;
    }
  }
  return pick_ok < g->pool_n ? pick_ok : pick;
}

/* Kernel Tuner's multi-advanced bookkeeping after af's pick cost cost
 * (INFINITY: rejected, counted at the median success): a discounted sum
 * per function; after each round, one that did REQUIRED_GAIN worse than
 * the mean of the others WORSE_ROUNDS times is dropped. */
static void portfolio(gp *g, int af, double cost) {
  const search_ctx *c = g->c;
  if (!isfinite(cost)) {
    /* the median of the successes */
    double lo = c->best_cost, hi = 0;
    for (size_t i = 0; i < g->n; i++)
      if (isfinite(g->ocost[i]) && g->ocost[i] > hi)
        hi = g->ocost[i];
    cost = sqrt(lo * (hi > lo ? hi : lo));
  }
  g->disc[af] = g->disc[af] * DISCOUNT + cost;
  int active = 0;
  for (int a = 0; a < AF_COUNT; a++)
    active += g->active[a];
  if (++g->turns_in_round < active)
    return;
  g->turns_in_round = 0;
  double mean = 0;
  for (int a = 0; a < AF_COUNT; a++)
    if (g->active[a])
      mean += g->disc[a] / active;
  int worst = -1;
  for (int a = 0; a < AF_COUNT; a++)
    if (g->active[a] && g->disc[a] > mean * (1 + REQUIRED_GAIN) && ++g->worse[a] >= WORSE_ROUNDS &&
        (worst < 0 || g->disc[a] > g->disc[worst]))
      worst = a;
  if (worst >= 0 && active > 1) {
    g->active[worst] = 0;
    memset(g->worse, 0, sizeof g->worse);
  }
}

static int next_af(gp *g) {
  for (int k = 0; k < AF_COUNT; k++) {
    int a = (g->turn + k) % AF_COUNT;
    if (g->active[a]) {
      g->turn = a + 1;
      return a;
    }
  }
  return AF_EI;
}

/* The exploration of this step (contextual variance): the pool's mean
 * posterior deviation relative to what it was when the first proposal
 * was made (sigma0, set then, with init_mean_cost: the geometric mean of
 * the successful costs observed so far, the design's), over the gain on
 * that mean so far. */
static double exploration(gp *g) {
  double sigma = mean_sigma(g);
  if (!(g->sigma0 > 0)) {
    g->sigma0 = sigma > 0 ? sigma : 1;
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++)
      if (isfinite(g->ocost[i]))
        sum += log(g->ocost[i]), k++;
    g->init_mean_cost = k ? exp(sum / k) : INFINITY;
  }
  double gain = isfinite(g->init_mean_cost) ? g->init_mean_cost / g->c->best_cost : 1;
  return sigma / g->sigma0 / (gain > 1 ? gain : 1);
}

/* ---- the initial design --------------------------------------------------- */

/* The unseen pool candidate nearest to x (pool_n: none), under the
 * current weights (the initial design's: every scale still LENGTH). */
static size_t nearest(const gp *g, const double *x) {
  size_t pick = g->pool_n;
  double d = INFINITY;
  for (size_t i = 0; i < g->pool_n; i++)
    if (!g->gone[i]) {
      double e = dist2_fd(g->w, g->px + i * g->nd, x, g->nd);
      if (e < d)
        d = e, pick = i;
    }
  return pick;
}

/* Evaluates cfg (search_try) and, when it was evaluated now, adds it to
 * the process (preallocated: nothing to fail). Returns the engine's
 * answer; *cost as search_try's. */
static int try_and_observe(gp *g, const uint32_t *cfg, double *cost) {
  int r = search_try(g->c, cfg, cost);
  if (r == SEARCH_NEW)
    observe(g, cfg, *cost);
  return r;
}

/* The plausible order's first, then a Latin-hypercube sample matched to
 * valid configurations. Returns the engine's last answer. */
static int initial_design(gp *g, uint32_t *perm) {
  search_ctx *c = g->c;
  size_t want = search_evals_share(c, INITIAL_DIV, INITIAL_MIN, INITIAL_MAX);
  size_t plausible = c->space->starts_curated ? PLAUSIBLE_CURATED : PLAUSIBLE;
  int r = SEARCH_NEW;
  double cost;
  size_t done = 0;
  for (size_t i = 0; i < c->space->start_count && done < plausible && r != SEARCH_STOPPED; i++)
    if (search_plausible(c, i, g->cfg)) {
      r = try_and_observe(g, g->cfg, &cost);
      done += r == SEARCH_NEW;
    }
  size_t m = want > done ? want - done : 1;
  /* one permutation of the m strata per feature */
  for (size_t k = 0; k < g->nd; k++) {
    for (size_t i = 0; i < m; i++)
      perm[k * m + i] = (uint32_t)i;
    for (size_t i = m; i > 1; i--) {
      size_t j = (size_t)search_rng_below(&c->rng, i);
      uint32_t t = perm[k * m + i - 1];
      perm[k * m + i - 1] = perm[k * m + j];
      perm[k * m + j] = t;
    }
  }
  for (size_t i = 0; i < m && r != SEARCH_STOPPED && !search_done(c); i++) {
    for (size_t k = 0; k < g->nd; k++)
      g->fx[k] = (perm[k * m + i] + search_rng_unit(&c->rng)) / m;
    size_t at = nearest(g, g->fx);
    if (at < g->pool_n)
      search_decode(c, g->pool[at], g->cfg);
    else if (!search_random_unseen(c, g->cfg))
      break;
    r = try_and_observe(g, g->cfg, &cost);
  }
  return r;
}

/* ---- the process as a component of another strategy ---------------------- */

struct search_gp {
  gp g;
  size_t synced; /* c->evals taken into the process */
  int pending;   /* the last proposal's function awaits its cost */
  int af;
  uint64_t code;
  int full;
};

search_gp *search_gp_open(search_ctx *c) {
  search_gp *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  if (gp_init(&h->g, c) != 0) {
    gp_free(&h->g);
    free(h);
    return NULL;
  }
  for (size_t i = 0; i < h->g.pool_n; i++) /* observed by the sync instead */
    h->g.gone[i] = 0;
  return h;
}

void search_gp_close(search_gp *h) {
  if (!h)
    return;
  gp_free(&h->g);
  free(h);
}

/* Takes the evaluations made since the last call into the process (and
 * the last proposal's cost into the portfolio). */
static void gp_sync(search_gp *h) {
  search_ctx *c = h->g.c;
  for (; h->synced < c->eval_count && !h->full; h->synced++) {
    const search_eval *e = &c->evals[h->synced];
    search_decode(c, e->code, h->g.cfg);
    if (observe(&h->g, h->g.cfg, e->rejected ? INFINITY : e->cost) != 0) {
      h->full = 1;
      break;
    }
    if (h->pending && e->code == h->code) {
      portfolio(&h->g, h->af, e->rejected ? INFINITY : e->cost);
      h->pending = 0;
    }
  }
}

int search_gp_covers(const search_gp *h) {
  const search_ctx *c = h->g.c;
  return c->valid_listed && h->g.pool_n == c->valid_count;
}

int search_gp_fitted(const search_gp *h) {
  return h->g.fit_n > 0;
}

int search_gp_propose(search_gp *h, uint32_t *out, search_gp_accept accept, void *arg) {
  search_ctx *c = h->g.c;
  gp *g = &h->g;
  gp_sync(h);
  if (h->full || !c->found || g->n < 2)
    return 0;
  for (;;) {
    double explore = exploration(g);
    int af = next_af(g);
    size_t at = acquire_where(g, af, explore, accept, arg);
    if (at >= g->pool_n)
      return 0;
    search_decode(c, g->pool[at], out);
    if (search_lookup(c, g->pool[at]) || !search_is_valid(c, out)) {
      g->gone[at] = 1; /* seen (outside the process) or refused */
      continue;
    }
    h->pending = 1;
    h->af = af;
    h->code = g->pool[at];
    return 1;
  }
}

int search_bayes(search_ctx *c) {
  gp g;
  uint32_t *perm = NULL;
  int rc = 0;
  if (gp_init(&g, c) != 0) {
    rc = -1;
    goto out;
  }
  perm = malloc(g.nd * (INITIAL_MAX + 1) * sizeof *perm);
  if (!perm) {
    rc = -1;
    goto out;
  }
  int r = initial_design(&g, perm);
  double cost;
  while (r != SEARCH_STOPPED && !search_done(c)) {
    if (g.n >= g.cap) { /* the process is full: the model goes on (engine.c) */
      rc = 1;
      break;
    }
    if (!c->found) { /* nothing succeeded yet: nothing to model */
      if (!search_random_unseen(c, g.cfg))
        break;
      r = try_and_observe(&g, g.cfg, &cost);
      continue;
    }
    double explore = exploration(&g);
    int af = next_af(&g);
    size_t at = acquire(&g, af, explore);
    if (at >= g.pool_n) { /* the pool is spent: random goes on */
      rc = search_random(c);
      break;
    }
    search_decode(c, g.pool[at], g.cfg);
    r = try_and_observe(&g, g.cfg, &cost);
    if (r == SEARCH_NEW)
      portfolio(&g, af, cost);
    else if (r != SEARCH_STOPPED)
      g.gone[at] = 1; /* seen or refused: never again */
  }
out:
  free(perm);
  gp_free(&g);
  return rc;
}
