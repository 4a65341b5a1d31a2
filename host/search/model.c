/*
 * model.c: the model-based strategy: a small regression forest (bagged CART
 * trees on random feature subsets) fitted to the log of the costs measured
 * so far. Each step draws one tree at random and evaluates the unseen
 * configuration it predicts fastest (Thompson sampling: where the trees
 * disagree, the draw explores). The initial design is the first few
 * configurations of the plugin's plausible order, then random ones.
 * Features: an ordered parameter is its position scaled to [0, 1]; a
 * categorical one is one-hot. Rejected configurations count as twice the
 * worst cost seen. Early on (the first 2% of the space) every third step
 * is local instead: the unseen neighbour of the best so far that the drawn
 * tree predicts fastest, so a small budget (`quick`) climbs from the best
 * start while the forest has little data; later steps trust the forest
 * alone (local steps throughout cost up to 3.4 points at 10% on the
 * cpu_gemm spaces). (A bagged ridge model of main effects and a confidence
 * bound instead of the draw were tried and were no better on the recorded
 * spaces: README.md.)
 */
#include "internal.h"

#include "base/array.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TREES 16
#define MAX_DEPTH 14
#define POOL_RANDOM 1500
#define PLAUSIBLE 4 /* the initial design begins with this many plausible ones */
/* While less than 1/LOCAL_SHARE_DIV of the space has been evaluated, every
 * LOCAL_EVERY-th step is a local one: the neighbour of the best so far that
 * the drawn tree predicts fastest. */
#define LOCAL_EVERY 3
#define LOCAL_SHARE_DIV 50

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
  size_t nf;    /* features */
  size_t *base; /* first feature of each parameter */
  float *x;     /* rows of nf features, one per training point */
  double *y;
  size_t n, cap;
  size_t *idx; /* scratch */
  forest f;
  uint32_t *cfg;
} model;

static void features(const model *m, const uint32_t *cfg, float *out) {
  const search_ctx *c = m->c;
  memset(out, 0, m->nf * sizeof *out);
  for (size_t p = 0; p < c->np; p++) {
    const search_param *par = &c->space->params[p];
    if (par->ordered || par->value_count > 16)
      out[m->base[p]] = par->value_count > 1 ? (float)cfg[p] / (float)(par->value_count - 1) : 0;
    else
      out[m->base[p] + cfg[p]] = 1;
  }
}

static int add_node(forest *f, node nd) {
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
    sum += m->y[idx[i]];
  double mean = sum / (double)n;
  node leaf = {.feature = -1, .value = (float)mean, .left = -1, .right = -1};
  if (n < 3 || depth >= MAX_DEPTH)
    return add_node(&m->f, leaf);
  /* best split over a random third of the features */
  double best_gain = 1e-12, sse_all = 0;
  for (size_t i = 0; i < n; i++)
    sse_all += (m->y[idx[i]] - mean) * (m->y[idx[i]] - mean);
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
        double y = m->y[idx[i]];
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
    return add_node(&m->f, leaf);
  size_t l = 0;
  for (size_t i = 0; i < n; i++)
    if (m->x[idx[i] * m->nf + (size_t)best_f] <= best_t) {
      size_t t = idx[l];
      idx[l++] = idx[i];
      idx[i] = t;
    }
  int self = add_node(&m->f, (node){.feature = best_f, .threshold = best_t, .value = (float)mean});
  if (self < 0)
    return -1;
  int left = grow(m, idx, l, depth + 1);
  int right = left < 0 ? -1 : grow(m, idx + l, n - l, depth + 1);
  if (right < 0)
    return -1;
  m->f.nodes[self].left = left;
  m->f.nodes[self].right = right;
  return self;
}

static int fit(model *m) {
  m->f.count = 0;
  for (int t = 0; t < TREES; t++) {
    for (size_t i = 0; i < m->n; i++) /* bootstrap */
      m->idx[i] = (size_t)search_rng_below(&m->c->rng, m->n);
    if ((m->f.roots[t] = grow(m, m->idx, m->n, 0)) < 0)
      return -1;
  }
  return 0;
}

/* The prediction of tree t for features x. */
static double tree_value(const model *m, int t, const float *x) {
  int k = m->f.roots[t];
  while (m->f.nodes[k].feature >= 0)
    k = x[m->f.nodes[k].feature] <= m->f.nodes[k].threshold ? m->f.nodes[k].left
                                                            : m->f.nodes[k].right;
  return m->f.nodes[k].value;
}

/* Rebuilds the training set from every evaluation so far. */
static int load_training(model *m) {
  search_ctx *c = m->c;
  if (c->eval_count > m->cap) {
    size_t cap = c->eval_count * 2;
    float *x = realloc(m->x, cap * m->nf * sizeof *x);
    if (x)
      m->x = x;
    double *y = x ? realloc(m->y, cap * sizeof *y) : NULL;
    if (y)
      m->y = y;
    size_t *idx = y ? realloc(m->idx, cap * sizeof *idx) : NULL;
    if (!idx)
      return -1;
    m->idx = idx;
    m->cap = cap;
  }
  double worst = 0;
  int any = 0;
  for (size_t i = 0; i < c->eval_count; i++)
    if (!c->evals[i].rejected && (!any || log(c->evals[i].cost) > worst)) {
      worst = log(c->evals[i].cost);
      any = 1;
    }
  m->n = c->eval_count;
  for (size_t i = 0; i < m->n; i++) {
    search_decode(c, c->evals[i].code, m->cfg);
    features(m, m->cfg, &m->x[i * m->nf]);
    m->y[i] = c->evals[i].rejected ? worst + log(2.0) : log(c->evals[i].cost);
  }
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

int search_model(search_ctx *c) {
  model m;
  memset(&m, 0, sizeof m);
  m.c = c;
  m.base = malloc(c->np * sizeof *m.base);
  m.cfg = malloc(c->np * sizeof *m.cfg);
  uint32_t *cand = malloc(c->np * sizeof *cand);
  float *xf = NULL;
  uint64_t *pool = NULL;
  size_t pool_n = 0, pool_cap = 0;
  int rc = 0;
  if (!m.base || !m.cfg || !cand) {
    rc = -1;
    goto out;
  }
  for (size_t p = 0; p < c->np; p++) {
    const search_param *par = &c->space->params[p];
    m.base[p] = m.nf;
    m.nf += par->ordered || par->value_count > 16 ? 1 : par->value_count;
  }
  xf = malloc(m.nf * sizeof *xf);
  if (!xf) {
    rc = -1;
    goto out;
  }
  /* initial design: the start and a few random configurations */
  size_t initial = search_evals_share(c, 8, 3, 10);
  int r = SEARCH_NEW;
  for (size_t i = 0; i < PLAUSIBLE && r != SEARCH_STOPPED && c->eval_count < initial; i++)
    if (search_plausible(c, i, cand))
      r = search_try(c, cand, NULL);
  while (r != SEARCH_STOPPED && c->eval_count < initial && search_random_unseen(c, cand))
    r = search_try(c, cand, NULL);
  size_t fitted_at = 0;
  unsigned steps = 0;
  while (r != SEARCH_STOPPED && !search_done(c)) {
    if (c->eval_count < 2) {
      if (!search_random_unseen(c, cand))
        break;
      r = search_try(c, cand, NULL);
      continue;
    }
    /* refit after every evaluation while the set is small, then as it
     * grows by a twentieth */
    if (fitted_at == 0 || c->eval_count <= 100 || c->eval_count >= fitted_at + fitted_at / 20) {
      if (load_training(&m) != 0 || fit(&m) != 0) {
        rc = -1;
        goto out;
      }
      fitted_at = c->eval_count;
    }
    /* the pool: on an early local step (LOCAL_EVERY) the unseen neighbours
     * of the best; else every unseen valid configuration when listed and
     * not too many, else random ones plus the neighbours of the best */
    pool_n = 0;
    steps++;
    uint64_t space = c->valid_listed ? c->valid_count : c->total;
    int local =
        c->found && steps % LOCAL_EVERY == 0 && (uint64_t)c->eval_count * LOCAL_SHARE_DIV < space;
    if (local) {
      search_decode(c, c->best_code, m.cfg);
      if (search_neighbours(c, m.cfg, &pool, &pool_n, &pool_cap) != 0) {
        rc = -1;
        goto out;
      }
      size_t unseen = 0;
      for (size_t i = 0; i < pool_n; i++)
        unseen += !search_lookup(c, pool[i]);
      if (!unseen)
        pool_n = 0;
    }
    if (pool_n) {
      /* the local step's pool is ready */
    } else if (c->valid_listed && c->valid_count <= 4 * POOL_RANDOM) {
      for (size_t i = 0; i < c->valid_count; i++)
        if (!search_lookup(c, c->valid_list[i])) {
          if (pool_add(&pool, &pool_n, &pool_cap, c->valid_list[i]) != 0) {
            rc = -1;
            goto out;
          }
        }
    } else {
      if (c->found) {
        search_decode(c, c->best_code, m.cfg);
        if (search_neighbours(c, m.cfg, &pool, &pool_n, &pool_cap) != 0) {
          rc = -1;
          goto out;
        }
      }
      for (int i = 0; i < POOL_RANDOM && search_random_unseen(c, cand); i++)
        if (pool_add(&pool, &pool_n, &pool_cap, search_encode(c, cand)) != 0) {
          rc = -1;
          goto out;
        }
    }
    /* Thompson sampling: the lowest prediction of one tree drawn at random
     * (the trees' disagreement is the model's uncertainty) */
    int tree = (int)search_rng_below(&c->rng, TREES);
    double best_score = INFINITY;
    uint64_t best_code = 0;
    int have = 0;
    for (size_t i = 0; i < pool_n; i++) {
      if (search_lookup(c, pool[i]))
        continue;
      search_decode(c, pool[i], cand);
      features(&m, cand, xf);
      double score = tree_value(&m, tree, xf);
      if (score < best_score) {
        best_score = score;
        best_code = pool[i];
        have = 1;
      }
    }
    if (!have)
      break;
    search_decode(c, best_code, cand);
    r = search_try(c, cand, NULL);
  }
out:
  free(m.f.nodes);
  free(m.x);
  free(m.y);
  free(m.idx);
  free(m.base);
  free(m.cfg);
  free(cand);
  free(xf);
  free(pool);
  return rc;
}
