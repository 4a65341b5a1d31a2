/*
 * surrogate.c: the model-based strategy (the default): two small regression
 * forests (bagged CART trees on random feature subsets), one fitted to the
 * log of the successful costs, one to which evaluations were rejected.
 * Each step draws one tree of each and evaluates the unseen configuration
 * the cost tree predicts fastest among those the feasibility tree expects
 * to succeed (Thompson sampling: where the trees disagree, the draw
 * explores; ties at random). Features: an ordered parameter is its
 * position scaled to [0, 1], plus the power of two dividing an integer
 * value (a "comb": block sizes fast only at powers of two); a categorical
 * one is one-hot; on a plugin's curated list, the position in the list.
 * The initial design is the first configuration of the plugin's
 * plausible order (three of a curated list), then space-filling random
 * ones (far from what was evaluated, spreading the values of each
 * parameter of at most four; on a curated list, draws favouring its
 * head); a budget of more than half a curated list walks the list on
 * every other step; the plausible order stays an arm (every other step
 * takes its next configuration, at most an eighth of a budget of at most
 * 16) only while it pays: its best is the best so far and its
 * configurations did better on average than the others. Every other step
 * is local, and every step in the last 30% of the budget: of the unseen
 * neighbours of the best and children of two of the eight best (uniform
 * crossover), the one the forest's mean and a main-effects model (ridge
 * regression on the one-hot values) predict fastest together; every
 * fourth step the main-effects model alone, fitted to a bootstrap sample,
 * takes the drawn tree's place. bayes.c's Gaussian process, with length
 * scales fitted to the evaluations (search_gp_propose, vetoed by the drawn
 * feasibility tree), takes the steps the arms leave in their place: every
 * global step, and the local ones too before the last 30% when its pool
 * holds every valid configuration and the space is not a curated list
 * (where the trees' local steps reach beyond its sample or learn from the
 * list's order); in the last 30%, once its scales are fitted, it ranks
 * the local steps' candidates too (there, not in the curated or sampled
 * cases); the trees take what it cannot propose. A warm start (search_space.warm: other
 * devices' winners) is an arm like the plausible order: its first begins
 * the initial design, its next ones are taken on every other step while
 * they pay, and the space-filling picks ignore its points. Design and
 * figures: README.md; what was tried: tests/bench/search/LOG.md.
 */
#include "internal.h"

#include "base/array.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TREES 16
#define MAX_DEPTH 14
#define POOL_RANDOM 1500
/* the initial design begins with this many of the plausible order (its
 * first, the plugin's guess; the next ones are the arm's, taken only while
 * the order pays: a product order's second configuration is its first's
 * twin, and spent one of eight evaluations on the corner), or
 * PLAUSIBLE_CURATED of a plugin's curated list (a hand-picked, ranked
 * prior: on the ten cpu_gemm lists, 61 seeds, quick rose on four,
 * 512x512x512-t2 from 38 to 60 seeds at 0.90, and the 2% budget rose to
 * the plugin's third; three on every space cost gen-large and
 * gen-feasibility-edge: README.md) */
#define PLAUSIBLE 1
#define PLAUSIBLE_CURATED 3
/* the initial design: the evaluations left / INITIAL_DIV, clamped to
 * INITIAL_MIN .. INITIAL_MAX; but the models take at most TINY_STEPS
 * steps of a budget of at most TINY_BUDGET (quick's floor, every space of
 * up to 400 configurations) on a space that is not a curated list: on a
 * budget of 8, four design points left four steps to models fitted to
 * three or four points, which went to the corners and fell below uniform
 * sampling on the convolution spaces; six on every budget cost the smooth
 * synthetic space of the tests at 18 evaluations (README.md) */
#define INITIAL_DIV 5
#define INITIAL_MIN 4
#define INITIAL_MAX 12
#define TINY_BUDGET 8
#define TINY_STEPS 2
/* a warm start takes at most the evaluations left / WARM_DIV, at least
 * WARM_MIN (and SEARCH_WARM_MAX): a donor's winners beyond its first few
 * lie where its first ones do on the donor, and each one taken is a step
 * the process does not take. With a quarter (eight at quick), a donor
 * whose winners are mediocre here (convhip, 0.72-0.86 of the W7800's
 * optimum from the A6000) kept taking steps while its points beat the
 * cold ones on average: 13 of 31 seeds at 0.95 at quick, against 18 with
 * an eighth (four), and no pair lost (README.md, "the warm start"). */
#define WARM_DIV 8
#define WARM_MIN 2
#define SPREAD_TRIES 24 /* random candidates per space-filling pick */
/* The space-filling picks (not on a plugin's curated list) also spread the
 * values of the short parameters (at most BALANCE_MAX_VALUES values): a
 * candidate's distance to its nearest evaluated configuration is reduced
 * by BALANCE_WEIGHT times the mean number of short-parameter values it
 * shares with the evaluated ones. The distance alone goes to the ends of
 * each scale, so a 3- or 4-valued parameter's middle values were rarely in
 * the initial design and the main-effects model saw few combinations of
 * them. On the eight marginal spaces over 122 seeds, quick at 0.90 rose on
 * opencl_gemm 256x32x128 (73 -> 80 seeds) and 64x64x64 (70 -> 82),
 * gen-large (81 -> 87) and gen-product-order (115 -> 120), and fell by no
 * more than the noise elsewhere (gen-comb 94 -> 91); over every parameter,
 * not only the short ones, it cost gen-large and gen-feasibility-edge six
 * seeds of 61. A curated list is a set of points the plugin chose, not a
 * product with ends to avoid: there the balance changed nothing at quick
 * and cost cpu_gemm 2048x64x512-t1 at 50 evaluations (0.996 -> 0.962,
 * below random), and the distance itself picks the list's slowest
 * variants; a curated list draws favouring its head instead (below,
 * README.md). */
#define BALANCE_MAX_VALUES 4
#define BALANCE_WEIGHT 2.0
/* On a plugin's curated list the plugin's ranking is used three ways, each
 * of which the model can outgrow: the position in the list is one more
 * feature (the trees split on it when the list's head is faster, as on
 * every cpu_gemm list, where the back quarter has nothing within 5% of the
 * optimum, and ignore it when not); the initial design's picks after the
 * first three are drawn favouring the head (list_draw) instead of
 * space-filling, whose farthest points on such a list are its slowest
 * variants (cpu_gemm's generic kernels); and a budget of more than half of
 * the list walks it (walk_pick). On the ten cpu_gemm lists over 61 seeds
 * the three together left no budget below uniform sampling (before: four
 * of 100, 512x512x512-t1 at 6 evaluations 0.931 against 0.954); the
 * feature alone or the draw alone each left one or two (README.md).
 * LIST_DRAWS: draws before a uniform unseen pick. */
#define LIST_DRAWS 64
/* the plausible order's arm: only on budgets of at most ARM_MAX_BUDGET
 * evaluations (too few for the forests to learn much: quick's 8 on a
 * curated list), at most the budget / ARM_DIV (at least one)
 * configurations beyond the initial design's. On larger budgets it cost
 * more than it gained in an 11-seed trial (opencl_gemm 256x32x128 at 32:
 * 0.586 with it, 0.944 without; bimodal there: README.md). */
#define ARM_DIV 8
#define ARM_MAX_BUDGET 16
/* Every LOCAL_EVERY-th step is a local one, and every step once
 * EXPLOIT_FROM of the budget is spent: of the unseen neighbours of the best
 * so far and RECOMBINE children of two of the RECOMBINE_OF best, the one
 * the forest's mean predicts fastest. (Every third step and the drawn
 * tree's prediction, the earlier choice: quick reached 0.90 on 15 of 19
 * spaces, measure 0.99 on 14; README.md.) */
#define LOCAL_EVERY 2
#define EXPLOIT_FROM 0.7
#define RECOMBINE 32
#define RECOMBINE_OF 8
/* The switch check: from SWITCH_FROM of the budget on, every fourth step
 * (the second of each four) evaluates the best (or, when that flip is
 * seen, the next of the RECOMBINE_OF best) with one two-valued parameter
 * flipped, where none of the RECOMBINE_OF best configurations has the
 * other value (the search has given that value up), at most a
 * SWITCH_DIV-th of the budget in all (switch_pick). */
#define SWITCH_FROM 0.5
#define SWITCH_DIV 4
/* The main-effects model (ridge regression on one-hot values): it scores
 * every local step beside the forest's mean (their sum), and every
 * RIDGE_EVERY-th step (1 modulo it, never a local one) alone, in place of
 * the drawn tree; spaces of more than RIDGE_MAX_D values in all go
 * without. RIDGE_LAMBDA: the ridge, in log-cost units per evaluation (0.3
 * did better than 1 and 3 on the 61-seed trial: README.md). */
#define RIDGE_EVERY 4
#define RIDGE_LAMBDA 0.3
#define RIDGE_MAX_D 128

typedef struct node {
  int feature; /* -1: leaf */
  float threshold;
  float value;
  int left, right;
} node;

typedef struct forest {
  node *nodes;
  size_t count, cap;
  int roots[TREES];
} forest;

typedef struct model {
  search_ctx *c;
  size_t nf;      /* features */
  size_t *base;   /* first feature of each parameter */
  int *valuation; /* per parameter: 1 when it also has the power-of-two feature */
  float *x;       /* rows of nf features, one per evaluation */
  double *y;      /* log cost (successful rows) */
  double *yf;     /* 1 rejected, 0 not */
  size_t *ok;     /* the successful rows */
  size_t n, nok, cap;
  size_t *idx;          /* scratch */
  const double *target; /* what the tree being grown fits */
  forest *cur;          /* the forest being grown */
  forest f;             /* cost: log of the median, successful rows only */
  forest g;             /* feasibility: the share of rejected ones */
  int have_g;           /* g is fitted (there are both outcomes) */
  int gtree;            /* the feasibility tree drawn for the process's step */
  uint32_t *cfg;
  uint32_t *cand, *tmp; /* scratch configurations */
  uint32_t *top;        /* scratch: RECOMBINE_OF configurations (switch_pick) */
  float *xf, *xe;       /* scratch feature rows */
  uint64_t *pool;       /* the step's candidates (codes) */
  size_t pool_n, pool_cap;
  /* the main-effects model (ridge): one column per parameter value */
  size_t d;      /* columns; 0 when the space has more than RIDGE_MAX_D */
  size_t *oh;    /* first column of each parameter */
  double *w;     /* the fitted effects (d) */
  double *ata;   /* scratch: the d x d normal matrix, then its Cholesky factor */
  double *rhs;   /* scratch: d */
  double w_mean; /* the mean log cost the effects are centred on */
  /* a curated list's order (the last feature): the list's codes, sorted,
   * with their positions scaled to [0, 1]; list_n 0 off a curated list */
  uint64_t *list_code;
  float *list_pos;
  size_t list_n;
  /* the warm start (search_space.warm): the next position, the arm's
   * evaluations left */
  size_t warm_next, warm_left;
} model;

/* cfg's position in the curated list scaled to [0, 1] (0 the plugin's
 * first); 1, the end, for a configuration the list does not have (a
 * described space may have more valid ones than the list, never more than
 * it has entries). */
static float list_position(const model *m, const uint32_t *cfg) {
  uint64_t code = search_encode(m->c, cfg);
  size_t lo = 0, hi = m->list_n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->list_code[mid] < code)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < m->list_n && m->list_code[lo] == code ? m->list_pos[lo] : 1.0f;
}

static void features(const model *m, const uint32_t *cfg, float *out) {
  const search_ctx *c = m->c;
  memset(out, 0, m->nf * sizeof *out);
  if (m->list_n)
    out[m->nf - 1] = list_position(m, cfg);
  for (size_t p = 0; p < c->np; p++) {
    const search_param *par = &c->space->params[p];
    if (par->ordered || par->value_count > 16) {
      out[m->base[p]] = par->value_count > 1 ? (float)cfg[p] / (float)(par->value_count - 1) : 0;
      if (m->valuation[p])
        out[m->base[p] + 1] = (float)search_two_adic(par->values[cfg[p]], 10);
    } else {
      out[m->base[p] + cfg[p]] = 1;
    }
  }
}

static int add_node(forest *f, node nd) {
  /* f: the model's forest being grown */
  node *p = base_array_grow(f->nodes, f->count, &f->cap, sizeof *p, 1024);
  if (!p)
    return -1;
  f->nodes = p;
  f->nodes[f->count] = nd;
  return (int)f->count++;
}

/* Builds a tree over idx[0..n) (indices into the training rows); returns
 * its node or -1 when out of memory. */
static int grow(model *m, size_t *idx, size_t n, int depth) {
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += m->target[idx[i]];
  double mean = sum / (double)n;
  node leaf = {.feature = -1, .value = (float)mean, .left = -1, .right = -1};
  if (n < 3 || depth >= MAX_DEPTH)
    return add_node(m->cur, leaf);
  /* best split over a random third of the features */
  double best_gain = 1e-12, sse_all = 0;
  for (size_t i = 0; i < n; i++)
    sse_all += (m->target[idx[i]] - mean) * (m->target[idx[i]] - mean);
  int best_f = -1;
  float best_t = 0;
  size_t tries = m->nf / 3 + 1;
  for (size_t t = 0; t < tries; t++) {
    size_t fe = (size_t)search_rng_below(&m->c->rng, m->nf);
    /* candidate thresholds: midpoints between distinct values (few per
     * feature: positions and one-hot bits) */
    float vals[64];
    size_t nv = 0;
    for (size_t i = 0; i < n && nv < 64; i++) {
      float v = m->x[idx[i] * m->nf + fe];
      size_t k = 0;
      while (k < nv && vals[k] != v)
        k++;
      if (k == nv)
        vals[nv++] = v;
    }
    for (size_t a = 0; a < nv; a++) {
      /* split "x <= vals[a]" */
      double sl = 0, sr = 0, ql = 0, qr = 0;
      size_t nl = 0, nr = 0;
      for (size_t i = 0; i < n; i++) {
        double y = m->target[idx[i]];
        if (m->x[idx[i] * m->nf + fe] <= vals[a]) {
          sl += y, ql += y * y, nl++;
        } else {
          sr += y, qr += y * y, nr++;
        }
      }
      if (!nl || !nr)
        continue;
      double sse = (ql - sl * sl / (double)nl) + (qr - sr * sr / (double)nr);
      double gain = sse_all - sse;
      if (gain > best_gain) {
        best_gain = gain;
        best_f = (int)fe;
        best_t = vals[a];
      }
    }
  }
  if (best_f < 0)
    return add_node(m->cur, leaf);
  size_t l = 0;
  for (size_t i = 0; i < n; i++)
    if (m->x[idx[i] * m->nf + (size_t)best_f] <= best_t) {
      size_t t = idx[l];
      idx[l++] = idx[i];
      idx[i] = t;
    }
  int self = add_node(m->cur, (node){.feature = best_f, .threshold = best_t, .value = (float)mean});
  if (self < 0)
    return -1;
  int left = grow(m, idx, l, depth + 1);
  int right = left < 0 ? -1 : grow(m, idx + l, n - l, depth + 1);
  if (right < 0)
    return -1;
  m->cur->nodes[self].left = left;
  m->cur->nodes[self].right = right;
  return self;
}

/* Fits forest f to target over the rows (rows NULL: every row 0..n-1),
 * each tree on a bootstrap sample. */
static int fit(model *m, forest *f, const double *target, const size_t *rows, size_t n) {
  f->count = 0;
  m->cur = f;
  m->target = target;
  for (int t = 0; t < TREES; t++) {
    for (size_t i = 0; i < n; i++) { /* bootstrap */
      size_t k = (size_t)search_rng_below(&m->c->rng, n);
      m->idx[i] = rows ? rows[k] : k;
    }
    if ((f->roots[t] = grow(m, m->idx, n, 0)) < 0)
      return -1;
  }
  return 0;
}

/* The prediction of tree t of forest f for features x. */
static double tree_value(const forest *f, int t, const float *x) {
  int k = f->roots[t];
  while (f->nodes[k].feature >= 0)
    k = x[f->nodes[k].feature] <= f->nodes[k].threshold ? f->nodes[k].left : f->nodes[k].right;
  return f->nodes[k].value;
}

/* Rebuilds the training set from every evaluation so far and fits the
 * forests: the cost forest to the successful ones (a rejected
 * configuration says nothing about the cost of its neighbours, and scoring
 * it as slow pushed the search away from the feasibility edge where the
 * optima sit), the feasibility forest to every one when both outcomes were
 * seen. */
static int refit(model *m) {
  search_ctx *c = m->c;
  if (c->eval_count > m->cap) {
    size_t cap = c->eval_count * 2;
    float *x = realloc(m->x, cap * m->nf * sizeof *x);
    if (x)
      m->x = x;
    double *y = x ? realloc(m->y, cap * sizeof *y) : NULL;
    if (y)
      m->y = y;
    double *yf = y ? realloc(m->yf, cap * sizeof *yf) : NULL;
    if (yf)
      m->yf = yf;
    size_t *ok = yf ? realloc(m->ok, cap * sizeof *ok) : NULL;
    if (ok)
      m->ok = ok;
    size_t *idx = ok ? realloc(m->idx, cap * sizeof *idx) : NULL;
    if (!idx)
      return -1;
    m->idx = idx;
    m->cap = cap;
  }
  m->n = c->eval_count;
  m->nok = 0;
  for (size_t i = 0; i < m->n; i++) {
    search_decode(c, c->evals[i].code, m->cfg);
    features(m, m->cfg, &m->x[i * m->nf]);
    m->yf[i] = c->evals[i].rejected;
    m->y[i] = c->evals[i].rejected ? 0 : log(c->evals[i].cost);
    if (!c->evals[i].rejected)
      m->ok[m->nok++] = i;
  }
  if (m->nok && fit(m, &m->f, m->y, m->ok, m->nok) != 0)
    return -1;
  m->have_g = m->nok > 0 && m->nok < m->n;
  if (m->have_g && fit(m, &m->g, m->yf, NULL, m->n) != 0)
    return -1;
  return 0;
}

/* Appends code to the candidate pool (*n used, *cap allocated); 0, or -1
 * when out of memory (the pool is then unchanged). */
static int pool_add(uint64_t **pool, size_t *n, size_t *cap, uint64_t code) {
  uint64_t *p = base_array_grow(*pool, *n, cap, sizeof *p, 256);
  if (!p)
    return -1;
  *pool = p;
  p[(*n)++] = code;
  return 0;
}

/* An unseen configuration of a curated list into out, drawn with a
 * probability that falls linearly with its position (the lower of two
 * uniform positions: the plugin's first twice as likely as under a uniform
 * draw, its last almost never); a uniform unseen one after LIST_DRAWS
 * draws found only seen ones. 1, or 0 when none is left. */
static int list_draw(model *m, uint32_t *out) {
  search_ctx *c = m->c;
  size_t n = c->space->start_count;
  for (int t = 0; t < LIST_DRAWS && n; t++) {
    size_t a = (size_t)search_rng_below(&c->rng, n), b = (size_t)search_rng_below(&c->rng, n);
    if (search_plausible(c, a < b ? a : b, out) && !search_lookup(c, search_encode(c, out)))
      return 1;
  }
  return search_random_unseen(c, out);
}

static int in_list(search_ctx *c, const uint32_t *list, size_t count, size_t n, uint64_t code);

/* The initial design's next pick into m->cand. On a curated list, a draw
 * that favours the list's head (list_draw). Otherwise space-filling: of
 * SPREAD_TRIES random unseen ones, the farthest (L1 over the features)
 * from its nearest evaluated one, less BALANCE_WEIGHT times the mean
 * number of short parameters' values it shares with the evaluated ones
 * (the balance of values, above). The warm start's configurations are left
 * out of both: the design covers the space as it would without them (a
 * misleading donor's winner, this device's slowest, would otherwise push
 * the design away from its values, and the optimum may share some). 1,
 * or 0 when none is left. */
static int spread_unseen(model *m) {
  search_ctx *c = m->c;
  if (c->space->starts_curated)
    return list_draw(m, m->cand);
  uint32_t *out = m->cand, *tmp = m->tmp;
  float *xf = m->xf, *xe = m->xe;
  double best = -INFINITY;
  int have = 0;
  for (int t = 0; t < SPREAD_TRIES; t++) {
    if (!search_random_unseen(c, tmp))
      break;
    features(m, tmp, xf);
    double nearest = INFINITY, shared = 0;
    size_t design = 0; /* the evaluations the design spreads from */
    for (size_t i = 0; i < c->eval_count; i++) {
      if (m->warm_next &&
          in_list(c, c->space->warm, c->space->warm_count, m->warm_next, c->evals[i].code))
        continue; /* a warm start's: the design covers the space without it */
      design++;
      search_decode(c, c->evals[i].code, m->cfg);
      features(m, m->cfg, xe);
      double d = 0;
      for (size_t f = 0; f < m->nf; f++)
        d += fabs((double)xf[f] - (double)xe[f]);
      if (d < nearest)
        nearest = d;
      for (size_t p = 0; p < c->np; p++)
        shared += m->cfg[p] == tmp[p] && c->space->params[p].value_count <= BALANCE_MAX_VALUES;
    }
    double score = nearest; /* INFINITY before the first evaluation */
    if (design)
      score -= BALANCE_WEIGHT * shared / (double)design;
    if (score > best) {
      best = score;
      memcpy(out, tmp, c->np * sizeof *out);
      have = 1;
    }
  }
  return have;
}

/* Whether code is one of the first n configurations of list (count of
 * them, c's positions each). */
static int in_list(search_ctx *c, const uint32_t *list, size_t count, size_t n, uint64_t code) {
  for (size_t i = 0; i < n && i < count; i++)
    if (search_is_valid(c, list + i * c->np) && search_encode(c, list + i * c->np) == code)
      return 1;
  return 0;
}

/* Whether the first n configurations of list (the plausible order, a warm
 * start) taken so far did better on average (mean log cost, a rejected one
 * of the list's counted as twice the worst) than the other successful
 * evaluations: a useful prior does, a product order's corner or a
 * misleading donor does not. Against no measured other it does not pay:
 * the others' rejections say where things fail, not that the list is
 * fast (on gen-product-order, whose random picks fail two times in five,
 * the corner's slow successes otherwise "paid" and took a budget of 8:
 * 0.058 of the optimum against uniform sampling's 0.600). */
static int list_pays(search_ctx *c, const uint32_t *list, size_t count, size_t n) {
  double worst = 0, sum[2] = {0, 0};
  size_t k[2] = {0, 0};
  for (size_t i = 0; i < c->eval_count; i++)
    if (!c->evals[i].rejected && log(c->evals[i].cost) > worst)
      worst = log(c->evals[i].cost);
  for (size_t i = 0; i < c->eval_count; i++) {
    int member = in_list(c, list, count, n, c->evals[i].code);
    if (!member && c->evals[i].rejected)
      continue;
    sum[member] += c->evals[i].rejected ? worst + log(2.0) : log(c->evals[i].cost);
    k[member]++;
  }
  return k[1] && k[0] && sum[1] / (double)k[1] < sum[0] / (double)k[0];
}

/* Whether the best configuration so far is one of the first n of the
 * plausible order. */
static int best_is_plausible(search_ctx *c, size_t n) {
  return in_list(c, c->space->starts, c->space->start_count, n, c->best_code);
}

/* Whether the plausible order's configurations taken so far (the first n)
 * did better on average than the other evaluations (list_pays). */
static int prior_pays(search_ctx *c, size_t n) {
  return list_pays(c, c->space->starts, c->space->start_count, n);
}

/* Fits the main-effects model: one effect per parameter value (every
 * parameter one-hot, ordered ones too), ridge regression (RIDGE_LAMBDA) on
 * the log cost of a bootstrap sample of the successful evaluations,
 * centred on their mean; the sample is the model's draw (Thompson
 * sampling, as a tree of the forest). It predicts the configuration whose
 * values did best one by one, which the trees, which split on what they
 * have seen together, do not reach on few data: opencl_gemm 64x64x64's
 * three fastest of 3 744 are the best value of five parameters at once.
 * 0, or -1 when the space has too many values (d 0) or nothing
 * succeeded. */
static int ridge_fit(model *m) {
  search_ctx *c = m->c;
  size_t d = m->d;
  if (!d || !m->nok)
    return -1;
  double *a = m->ata, *b = m->w, *rhs = m->rhs;
  memset(a, 0, d * d * sizeof *a);
  memset(rhs, 0, d * sizeof *rhs);
  double mean = 0;
  for (size_t i = 0; i < m->nok; i++)
    mean += m->y[m->ok[i]];
  mean /= (double)m->nok;
  m->w_mean = mean;
  for (size_t i = 0; i < m->nok; i++) {
    size_t row = m->ok[search_rng_below(&c->rng, m->nok)];
    search_decode(c, c->evals[row].code, m->cfg);
    double y = m->y[row] - mean;
    for (size_t p = 0; p < c->np; p++) {
      size_t col = m->oh[p] + m->cfg[p];
      rhs[col] += y;
      for (size_t q = 0; q < c->np; q++)
        a[col * d + m->oh[q] + m->cfg[q]] += 1;
    }
  }
  for (size_t k = 0; k < d; k++)
    a[k * d + k] += RIDGE_LAMBDA;
  /* (A'A + lambda I) w = A'y: Cholesky, a = L L' in place (lower), the
   * matrix positive definite by the ridge */
  for (size_t j = 0; j < d; j++) {
    double s = a[j * d + j];
    for (size_t k = 0; k < j; k++)
      s -= a[j * d + k] * a[j * d + k];
    a[j * d + j] = sqrt(s > 1e-12 ? s : 1e-12);
    for (size_t i = j + 1; i < d; i++) {
      double t = a[i * d + j];
      for (size_t k = 0; k < j; k++)
        t -= a[i * d + k] * a[j * d + k];
      a[i * d + j] = t / a[j * d + j];
    }
  }
  for (size_t i = 0; i < d; i++) { /* L z = rhs */
    double t = rhs[i];
    for (size_t k = 0; k < i; k++)
      t -= a[i * d + k] * b[k];
    b[i] = t / a[i * d + i];
  }
  for (size_t i = d; i-- > 0;) { /* L' w = z */
    double t = b[i];
    for (size_t k = i + 1; k < d; k++)
      t -= a[k * d + i] * b[k];
    b[i] = t / a[i * d + i];
  }
  return 0;
}

/* The fitted main-effects model's log cost for cfg. */
static double ridge_value(const model *m, const uint32_t *cfg) {
  double s = m->w_mean;
  for (size_t p = 0; p < m->c->np; p++)
    s += m->w[m->oh[p] + cfg[p]];
  return s;
}

/* The codes of the k cheapest successful evaluations, cheapest first,
 * into out (k at most RECOMBINE_OF); returns how many there are. */
static size_t top_codes(search_ctx *c, size_t k, uint64_t *out) {
  size_t n = 0;
  double cost[RECOMBINE_OF];
  for (size_t i = 0; i < c->eval_count; i++) {
    if (c->evals[i].rejected)
      continue;
    double v = c->evals[i].cost;
    size_t j = n < k ? n++ : k;
    if (j == k && v >= cost[k - 1])
      continue;
    if (j == k)
      j = k - 1;
    while (j > 0 && cost[j - 1] > v) {
      cost[j] = cost[j - 1];
      out[j] = out[j - 1];
      j--;
    }
    cost[j] = v;
    out[j] = c->evals[i].code;
  }
  return n;
}

/* Appends to the pool RECOMBINE children of two of the RECOMBINE_OF best
 * successful evaluations (uniform crossover: each parameter from either
 * parent), the valid ones: on a plateau of equally fast configurations
 * whose parameters trade against each other (tile x vector x unroll), a
 * child of two of them is often another, which single moves do not reach.
 * 0, or -1 when out of memory. */
static int recombine(model *m) {
  search_ctx *c = m->c;
  uint32_t *cand = m->cand, *tmp = m->tmp;
  uint64_t best[RECOMBINE_OF];
  size_t nb = top_codes(c, RECOMBINE_OF, best);
  for (int ch = 0; nb >= 2 && ch < RECOMBINE; ch++) {
    size_t a = (size_t)search_rng_below(&c->rng, nb);
    size_t b = (size_t)search_rng_below(&c->rng, nb - 1);
    b += b >= a;
    search_decode(c, best[a], cand);
    search_decode(c, best[b], tmp);
    for (size_t p = 0; p < c->np; p++)
      if (search_rng_below(&c->rng, 2))
        cand[p] = tmp[p];
    if (search_is_valid(c, cand) &&
        pool_add(&m->pool, &m->pool_n, &m->pool_cap, search_encode(c, cand)) != 0)
      return -1;
  }
  return 0;
}

/* Appends to the pool the best's second neighbours along each ordered
 * parameter: on each side, the second valid value from the best's (m->cfg),
 * the others unchanged. A comb (a block size fast at 32, 64 and 96 but not
 * at 48 or 112; a tile fast at 2 and 4 but not at 3) puts the next fast
 * value two steps away, and a neighbour one step away lands between its
 * teeth: on the TITAN RTX convolution, from block_size_x 32 (0.90 of the
 * optimum) the 48 is slower still and the 64 is the optimum. The
 * candidates are ranked like the others, so a scale that is smooth
 * (no comb) costs nothing but a few predictions. 0, or -1 when out of
 * memory. */
static int second_neighbours(model *m) {
  search_ctx *c = m->c;
  for (size_t p = 0; p < c->np; p++) {
    const search_param *par = &c->space->params[p];
    if (!par->ordered)
      continue;
    for (int sign = -1; sign <= 1; sign += 2) {
      int found = 0;
      memcpy(m->cand, m->cfg, c->np * sizeof *m->cand);
      for (int64_t v = (int64_t)m->cfg[p] + sign; v >= 0 && v < (int64_t)par->value_count;
           v += sign) {
        m->cand[p] = (uint32_t)v;
        if (!search_is_valid(c, m->cand) || ++found < 2)
          continue;
        if (pool_add(&m->pool, &m->pool_n, &m->pool_cap, search_encode(c, m->cand)) != 0)
          return -1;
        break;
      }
    }
  }
  return 0;
}

/* The switch check (SWITCH_*): into m->cand, one of the RECOMBINE_OF
 * best configurations (the best first, then the next when its flip is
 * seen or invalid) with the next two-valued parameter (in turn from
 * *turn) flipped whose other value none of them has, when that flip is
 * valid and unseen; on the second of every four steps from SWITCH_FROM of
 * the budget on, while *left. A switch acts with the other parameters:
 * on convhip-A6000, use_shmem=0 is fast only with read_only=0,
 * tile_size_y 4 and block_size_y at most 2, and a seed whose initial
 * design drew it only elsewhere ranks it last for the rest of the budget
 * and climbs use_shmem=1's plateau (0.778 of the optimum); the best with
 * use_shmem flipped, once its other values are good, is the way off.
 * When the best is the plateau's own optimum (read_only=1, so its flip is
 * slow), a runner-up with read_only=0 is. 186 seeds at 50 evaluations:
 * 68 at 0.90 without the check, 102 with the best's flip alone, 120 with
 * the runners-up's (tests/bench/search/LOG.md). 1 when it chose one,
 * else 0. */
static int switch_pick(model *m, unsigned steps, unsigned *turn, size_t *left) {
  search_ctx *c = m->c;
  if (!*left || !c->found || (steps & 3) != 2 || search_progress(c) < SWITCH_FROM)
    return 0;
  uint64_t top[RECOMBINE_OF];
  size_t nt = top_codes(c, RECOMBINE_OF, top);
  search_decode(c, c->best_code, m->cfg);
  /* m->top: the best configurations, decoded once; m->tmp[p]: 1 when
   * one of them has another value of p than the best (not given up) */
  memset(m->tmp, 0, c->np * sizeof *m->tmp);
  for (size_t i = 0; i < nt; i++) {
    uint32_t *t = m->top + i * c->np;
    search_decode(c, top[i], t);
    for (size_t p = 0; p < c->np; p++)
      m->tmp[p] |= t[p] != m->cfg[p];
  }
  for (size_t k = 0; k < c->np; k++) {
    size_t p = (*turn + k) % c->np;
    if (c->space->params[p].value_count != 2 || m->tmp[p])
      continue;
    for (size_t i = 0; i < nt; i++) { /* top[0] is the best */
      memcpy(m->cand, m->top + i * c->np, c->np * sizeof *m->cand);
      m->cand[p] ^= 1;
      if (search_is_valid(c, m->cand) && !search_lookup(c, search_encode(c, m->cand))) {
        *turn = (unsigned)(p + 1);
        (*left)--;
        return 1;
      }
    }
  }
  return 0;
}

/* Orders (code, position) pairs by code, then position. */
static int cmp_code_position(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  if (x[0] != y[0])
    return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Lays out the features of c's space (and the main-effects model's
 * columns) and allocates the model's arrays into *m (zeroed first). 0, or
 * -1 when out of memory (model_free then frees what was allocated). */
static int model_init(model *m, search_ctx *c) {
  memset(m, 0, sizeof *m);
  m->c = c;
  m->base = malloc(c->np * sizeof *m->base);
  m->valuation = calloc(c->np, sizeof *m->valuation);
  m->cfg = malloc(c->np * sizeof *m->cfg);
  m->cand = malloc(c->np * sizeof *m->cand);
  m->tmp = malloc(c->np * sizeof *m->tmp);
  m->top = malloc(RECOMBINE_OF * c->np * sizeof *m->top);
  if (!m->base || !m->valuation || !m->cfg || !m->cand || !m->tmp || !m->top)
    return -1;
  for (size_t p = 0; p < c->np; p++) {
    const search_param *par = &c->space->params[p];
    m->base[p] = m->nf;
    if (par->ordered || par->value_count > 16) {
      /* the power-of-two feature when the values are integers that it
       * tells apart from their position (not 1 2 4 8 ...) */
      m->valuation[p] = search_comb_applies(par, 10, NULL);
      m->nf += 1 + (size_t)m->valuation[p];
    } else {
      m->nf += par->value_count;
    }
  }
  /* the main-effects model's columns; none (d 0) for a space with too
   * many values (a numbered list: one effect per candidate says nothing) */
  for (size_t p = 0; p < c->np; p++)
    m->d += c->space->params[p].value_count;
  if (m->d > RIDGE_MAX_D)
    m->d = 0;
  if (m->d) {
    m->oh = malloc(c->np * sizeof *m->oh);
    m->w = malloc(m->d * sizeof *m->w);
    m->rhs = malloc(m->d * sizeof *m->rhs);
    m->ata = malloc(m->d * m->d * sizeof *m->ata);
    if (!m->oh || !m->w || !m->rhs || !m->ata)
      return -1;
    for (size_t p = 0, col = 0; p < c->np; p++) {
      m->oh[p] = col;
      col += c->space->params[p].value_count;
    }
  }
  /* a curated list's order as the last feature: its codes sorted, each
   * with its position (the first occurrence where the list repeats one) */
  if (c->space->starts_curated && c->space->start_count > 1) {
    size_t n = c->space->start_count;
    uint64_t *pairs = malloc(n * 2 * sizeof *pairs);
    m->list_code = malloc(n * sizeof *m->list_code);
    m->list_pos = malloc(n * sizeof *m->list_pos);
    if (!pairs || !m->list_code || !m->list_pos) {
      free(pairs);
      return -1;
    }
    /* an invalid entry is never evaluated (one with a value out of range
     * has no code): left out */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      const uint32_t *cfg = c->space->starts + i * c->np;
      if (search_is_valid(c, cfg)) {
        pairs[2 * k] = search_encode(c, cfg);
        pairs[2 * k++ + 1] = i;
      }
    }
    qsort(pairs, k, 2 * sizeof *pairs, cmp_code_position);
    for (size_t i = 0; i < k; i++) {
      m->list_code[i] = pairs[2 * i];
      m->list_pos[i] = (float)pairs[2 * i + 1] / (float)(n - 1);
    }
    free(pairs);
    m->list_n = k;
    m->nf += k > 0;
  }
  m->xf = malloc(m->nf * sizeof *m->xf);
  m->xe = malloc(m->nf * sizeof *m->xe);
  return m->xf && m->xe ? 0 : -1;
}

static void model_free(model *m) {
  free(m->f.nodes);
  free(m->g.nodes);
  free(m->x);
  free(m->y);
  free(m->yf);
  free(m->ok);
  free(m->idx);
  free(m->base);
  free(m->valuation);
  free(m->cfg);
  free(m->oh);
  free(m->w);
  free(m->rhs);
  free(m->ata);
  free(m->cand);
  free(m->tmp);
  free(m->top);
  free(m->xf);
  free(m->xe);
  free(m->pool);
  free(m->list_code);
  free(m->list_pos);
}

/* How many of the plausible order the initial design begins with. */
static size_t plausible_first(const search_ctx *c) {
  return c->space->starts_curated ? PLAUSIBLE_CURATED : PLAUSIBLE;
}

/* The warm start (search_space.warm): its next valid unseen
 * configuration from position *next on into m->cand (*next then past it);
 * 0 when there is none. */
static int next_warm(model *m, size_t *next) {
  search_ctx *c = m->c;
  const search_space *sp = m->c->space;
  while (*next < sp->warm_count) {
    memcpy(m->cand, sp->warm + (*next)++ * c->np, c->np * sizeof *m->cand);
    if (search_is_valid(c, m->cand) && !search_lookup(c, search_encode(c, m->cand)))
      return 1;
  }
  return 0;
}

/* The warm start as an arm: the initial design begins with its first
 * configuration; after that, on every other step, its next one while its
 * configurations did better on average than the others (list_pays) or
 * hold the best so far, at most *left (an eighth of the budget, at least
 * WARM_MIN and at most SEARCH_WARM_MAX, in all). A donor whose winners are bad here loses the
 * test after its first and costs one evaluation; a good one's winners
 * are all taken early, and the local steps climb from the best of them.
 * *next: the next position; 1 when it chose one into m->cand. */
static int warm_pick(model *m, unsigned steps, size_t *next, size_t *left) {
  search_ctx *c = m->c;
  const search_space *sp = c->space;
  if (!*left || (steps & 1) != 0 ||
      (*next > 0 && !(c->found && in_list(c, sp->warm, sp->warm_count, *next, c->best_code)) &&
       !list_pays(c, sp->warm, sp->warm_count, *next)))
    return 0;
  if (!next_warm(m, next))
    return 0;
  (*left)--;
  return 1;
}

/* The initial design: the first PLAUSIBLE configurations of the plugin's
 * order (its guess, which may mean nothing: a product order;
 * PLAUSIBLE_CURATED of a curated list), then
 * space-filling random ones, so that the forest sees the whole space from
 * the start; a fifth of the budget in all (INITIAL_*). Returns the last
 * search_try's result (SEARCH_NEW when it evaluated nothing). */
static int initial_design(model *m) {
  search_ctx *c = m->c;
  int r = SEARCH_NEW;
  if (m->warm_left && next_warm(m, &m->warm_next)) { /* the warm start's first */
    m->warm_left--;
    r = search_try(c, m->cand, NULL);
  }
  size_t design = search_evals_share(c, INITIAL_DIV, INITIAL_MIN, INITIAL_MAX);
  uint32_t left = search_evals_left(c);
  if (!c->space->starts_curated && left <= TINY_BUDGET && left > TINY_STEPS + design)
    design = left - TINY_STEPS;
  size_t initial = c->eval_count + design;
  for (size_t i = 0; i < plausible_first(c) && r != SEARCH_STOPPED && c->eval_count < initial; i++)
    if (search_plausible(c, i, m->cand))
      r = search_try(c, m->cand, NULL);
  while (r != SEARCH_STOPPED && c->eval_count < initial && spread_unseen(m))
    r = search_try(c, m->cand, NULL);
  return r;
}

/* The plausible order's next valid unseen configuration from position
 * *next on into out (*next then past it); 0 when there is none. The arm
 * and the walk both take their picks so. */
static int next_unseen_plausible(search_ctx *c, size_t *next, uint32_t *out) {
  while (*next < c->space->start_count)
    if (search_plausible(c, (*next)++, out) && !search_lookup(c, search_encode(c, out)))
      return 1;
  return 0;
}

/* The plausible order as an arm (budgets of at most ARM_MAX_BUDGET): on an
 * even step, while the best so far is one of its configurations and its
 * configurations did better on average, its next unseen one into m->cand.
 * *next: the next position in the order; *left: the arm's evaluations
 * left. 1 when it chose one, else 0. */
static int arm_pick(model *m, unsigned steps, size_t *next, size_t *left) {
  search_ctx *c = m->c;
  if (!*left || !c->found || (steps & 1) != 0 || !best_is_plausible(c, *next) ||
      !prior_pays(c, *next))
    return 0;
  if (!next_unseen_plausible(c, next, m->cand))
    return 0;
  (*left)--;
  return 1;
}

/* The walk of a curated list (budgets of more than half of it): the list's
 * next unseen configuration, in the plugin's order, into m->cand; *next:
 * the next position. Every other step of the main loop takes it. 1, or 0
 * when the list is all seen. On such a budget the model's own picks find
 * what its evidence predicts, and miss an optimum that the evidence says
 * nothing about (a recording's lone fast configuration among slow
 * neighbours: cpu_gemm 1024x1024x1024-t1's, found by 8 of 31 seeds at 200
 * of its 312 evaluations, against uniform sampling's 19); the walk covers
 * the part of the list the plugin ranks first, so the search does at least
 * as well as the sweep's own order at half the budget. */
static int walk_pick(model *m, size_t *next) {
  return next_unseen_plausible(m->c, next, m->cand);
}

/* Fills m->pool with the step's candidates: on a local step the unseen
 * neighbours of the best, children of two of the best (RECOMBINE) and the
 * best's second neighbours along ordered parameters;
 * else (or when those are all seen) every unseen valid configuration when
 * listed and not too many, else random ones plus the neighbours of the
 * best. 0, or -1 when out of memory. */
static int build_pool(model *m, int local) {
  search_ctx *c = m->c;
  m->pool_n = 0;
  if (local) {
    search_decode(c, c->best_code, m->cfg);
    if (search_neighbours(c, m->cfg, &m->pool, &m->pool_n, &m->pool_cap) != 0 ||
        recombine(m) != 0 || second_neighbours(m) != 0)
      return -1;
    size_t unseen = 0;
    for (size_t i = 0; i < m->pool_n; i++)
      unseen += !search_lookup(c, m->pool[i]);
    if (unseen)
      return 0;
    m->pool_n = 0;
  }
  if (c->valid_listed && c->valid_count <= 4 * POOL_RANDOM) {
    for (size_t i = 0; i < c->valid_count; i++)
      if (!search_lookup(c, c->valid_list[i]) &&
          pool_add(&m->pool, &m->pool_n, &m->pool_cap, c->valid_list[i]) != 0)
        return -1;
    return 0;
  }
  search_decode(c, c->best_code, m->cfg);
  if (search_neighbours(c, m->cfg, &m->pool, &m->pool_n, &m->pool_cap) != 0)
    return -1;
  for (int i = 0; i < POOL_RANDOM && search_random_unseen(c, m->cand); i++)
    if (pool_add(&m->pool, &m->pool_n, &m->pool_cap, search_encode(c, m->cand)) != 0)
      return -1;
  return 0;
}

/* Chooses the pool's unseen configuration to evaluate into m->cand: the
 * lowest predicted cost among those one feasibility tree, drawn at random,
 * expects to succeed (all of them when it expects none to). The
 * prediction: on a local step the forest's mean plus, when fitted, the
 * main-effects model (exploitation: the neighbourhood is the exploration);
 * on another step one cost tree drawn at random, or on every RIDGE_EVERY-th
 * the main-effects model fitted to a bootstrap sample (Thompson sampling:
 * the draws' disagreement is the models' uncertainty). Ties are broken at
 * random (few data: many configurations share a leaf). 1 when it chose
 * one, 0 when the pool has none unseen. */
static int choose(model *m, int local, unsigned steps) {
  search_ctx *c = m->c;
  int ridge = (local || steps % RIDGE_EVERY == 1) && ridge_fit(m) == 0;
  int tree = (int)search_rng_below(&c->rng, TREES);
  int gtree = (int)search_rng_below(&c->rng, TREES);
  double best_score[2] = {INFINITY, INFINITY};
  uint64_t best_code[2] = {0, 0};
  uint32_t ties[2] = {0, 0};
  for (size_t i = 0; i < m->pool_n; i++) {
    if (search_lookup(c, m->pool[i]))
      continue;
    search_decode(c, m->pool[i], m->cand);
    features(m, m->cand, m->xf);
    double score = 0;
    if (local) {
      for (int t = 0; t < TREES; t++)
        score += tree_value(&m->f, t, m->xf) / TREES;
      if (ridge) /* the two models' sum ranks as their mean */
        score += ridge_value(m, m->cand);
    } else if (ridge) {
      score = ridge_value(m, m->cand);
    } else {
      score = tree_value(&m->f, tree, m->xf);
    }
    int feasible = !m->have_g || tree_value(&m->g, gtree, m->xf) < 0.5;
    for (int k = 0; k < 2; k++) {
      if (k == 0 && !feasible)
        continue;
      if (score < best_score[k]) {
        best_score[k] = score;
        best_code[k] = m->pool[i];
        ties[k] = 1;
      } else if (score == best_score[k] && search_rng_below(&c->rng, ++ties[k]) == 0) {
        best_code[k] = m->pool[i];
      }
    }
  }
  int k = ties[0] ? 0 : 1;
  if (!ties[k])
    return 0;
  search_decode(c, best_code[k], m->cand);
  return 1;
}

/* The drawn feasibility tree's verdict on config (search_gp_accept). */
static int gp_feasible(void *arg, const uint32_t *config) {
  model *m = arg;
  if (!m->have_g)
    return 1;
  features(m, config, m->xf);
  return tree_value(&m->g, m->gtree, m->xf) < 0.5;
}

/* The process's verdict on a local step (search_gp_accept): config is one
 * of the step's candidates (m->pool, sorted) and the drawn feasibility
 * tree expects it to succeed. */
static int gp_local(void *arg, const uint32_t *config) {
  model *m = arg;
  uint64_t code = search_encode(m->c, config);
  return bsearch(&code, m->pool, m->pool_n, sizeof *m->pool, search_cmp_code) &&
         gp_feasible(arg, config);
}

/* A local step in the last EXPLOIT_FROM of the budget, scored by the
 * process: of the trees' local candidates (build_pool: the unseen
 * neighbours of the best and children of two of the eight best), the one
 * its acquisition function ranks first among those the drawn feasibility
 * tree accepts (its top overall when it accepts none), into m->cand.
 * Only once the process's length scales are fitted (before, its one
 * fixed scale smooths across a comb or an edge: on a budget of 8 it took
 * the plausible order's corner), on a space its pool covers and that is
 * not a curated list (as process_step). The end of the budget stays near
 * the best, as the trees' local steps keep it, but is ranked by the
 * better model: 31 seeds, the real spaces' seeds at 0.90 at quick 186 ->
 * 195 (dedisp-W6600's median 0.977 -> 1.000, convhip-W7800's 0.909 ->
 * 0.952; on seeds 101-131 level, 178 -> 179), the nineteen's 528 -> 531
 * (tests/bench/search/LOG.md). 1 when it chose one, 0 when the trees
 * take the step, -1 when out of memory. */
static int process_local_step(model *m, search_gp *gproc) {
  search_ctx *c = m->c;
  if (!gproc || !search_gp_fitted(gproc) || !search_gp_covers(gproc) || c->space->starts_curated ||
      search_progress(c) < EXPLOIT_FROM)
    return 0;
  if (build_pool(m, 1) != 0)
    return -1;
  qsort(m->pool, m->pool_n, sizeof *m->pool, search_cmp_code);
  m->gtree = (int)search_rng_below(&c->rng, TREES);
  return search_gp_propose(gproc, m->cand, gp_local, m);
}

/* Whether the process takes this step (local: the schedule's local step,
 * every LOCAL_EVERY-th): every other step, the last EXPLOIT_FROM of the
 * budget included; the local ones too before that when its pool holds
 * every valid configuration (else the trees' local steps reach beyond its
 * sample: gen-large) and the space is not a curated list (whose order the
 * trees learn as a feature). Against the duel of the process and the
 * trees on a quarter of the steps that it replaces, 31 seeds: the real GPU
 * spaces' seeds at 0.90 at quick 168 -> 186, at 0.99 at measure 214 ->
 * 242; the nineteen's 519 -> 528 and 556 -> 568 (tests/bench/search/LOG.md). */
static int process_step(search_ctx *c, const search_gp *gproc, int local) {
  if (!local)
    return 1;
  return search_gp_covers(gproc) && !c->space->starts_curated && search_progress(c) < EXPLOIT_FROM;
}

int search_model(search_ctx *c) {
  model m;
  int rc = 0;
  search_gp *gproc = NULL;
  if (model_init(&m, c) != 0) {
    rc = -1;
    goto out;
  }
  m.warm_left = c->space->warm ? search_evals_share(c, WARM_DIV, WARM_MIN, SEARCH_WARM_MAX) : 0;
  gproc = search_gp_open(c); /* NULL (out of memory): the trees take its steps */
  int r = initial_design(&m);
  size_t next_plausible = plausible_first(c);
  size_t arm_left =
      search_evals_left(c) <= ARM_MAX_BUDGET ? search_evals_share(c, ARM_DIV, 1, SIZE_MAX) : 0;
  size_t fitted_at = 0;
  unsigned steps = 0;
  /* a budget of more than half a curated list also walks the list */
  int walk = c->space->starts_curated && c->valid_listed &&
             2 * (size_t)(search_evals_left(c) + c->eval_count) > c->valid_count;
  size_t walk_next = 0;
  unsigned turn = 0;
  size_t switch_left = search_evals_share(c, SWITCH_DIV, 1, SIZE_MAX);
  unsigned switch_turn = 0;
  while (r != SEARCH_STOPPED && !search_done(c)) {
    if (walk && (turn++ & 1) == 0 && walk_pick(&m, &walk_next)) {
      r = search_try(c, m.cand, NULL);
      continue;
    }
    if (warm_pick(&m, steps, &m.warm_next, &m.warm_left)) {
      steps++;
      r = search_try(c, m.cand, NULL);
      continue;
    }
    if (arm_pick(&m, steps, &next_plausible, &arm_left)) {
      steps++;
      r = search_try(c, m.cand, NULL);
      continue;
    }
    if (!c->found) { /* nothing succeeded yet: nothing to model */
      if (!spread_unseen(&m))
        break;
      r = search_try(c, m.cand, NULL);
      continue;
    }
    /* refit after every evaluation while the set is small, then as it
     * grows by a twentieth */
    if (fitted_at == 0 || c->eval_count <= 100 || c->eval_count >= fitted_at + fitted_at / 20) {
      if (refit(&m) != 0) {
        rc = -1;
        goto out;
      }
      fitted_at = c->eval_count;
    }
    /* a local step: every LOCAL_EVERY-th, and every one in the last part
     * of the budget (EXPLOIT_FROM) */
    steps++;
    int local = steps % LOCAL_EVERY == 0 || search_progress(c) >= EXPLOIT_FROM;
    if (switch_pick(&m, steps, &switch_turn, &switch_left)) {
      r = search_try(c, m.cand, NULL);
      continue;
    }
    if (gproc && process_step(c, gproc, steps % LOCAL_EVERY == 0) &&
        (m.gtree = (int)search_rng_below(&c->rng, TREES),
         search_gp_propose(gproc, m.cand, gp_feasible, &m))) {
      r = search_try(c, m.cand, NULL);
      continue;
    }
    int taken = local ? process_local_step(&m, gproc) : 0;
    if (taken < 0) {
      rc = -1;
      goto out;
    }
    if (taken) {
      r = search_try(c, m.cand, NULL);
      continue;
    }
    if (build_pool(&m, local) != 0) {
      rc = -1;
      goto out;
    }
    if (!choose(&m, local, steps))
      break;
    r = search_try(c, m.cand, NULL);
  }
out:
  search_gp_close(gproc);
  model_free(&m);
  return rc;
}
