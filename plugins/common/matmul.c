/*
 * matmul.c: error reporting, policy-text preconditions, the MatMul workload
 * parser, the common build_key/open_session steps, session inputs,
 * reference and check shared by the MatMul backends (see matmul.h).
 */
#include "matmul.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const matmul_operators[] = {"MatMul", NULL};

void matmul_set_error(const calhost_host_services *host, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  if (!host || !host->set_error)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  host->set_error(host->context, msg);
}

int matmul_fail(char *err, size_t cap, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int matmul_cancelled(const calhost_host_services *host) {
  return host && host->is_cancelled && host->is_cancelled(host->context);
}

int matmul_policy_text(const char *p, size_t len, size_t max, char *err, size_t cap) {
  if (!p || len == 0)
    return matmul_fail(err, cap, "empty policy");
  if (len > max)
    return matmul_fail(err, cap, "policy longer than %zu bytes", max);
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)p[i] <= ' ' || (unsigned char)p[i] >= 0x7f)
      return matmul_fail(err, cap, "invalid byte 0x%02x at offset %zu", (unsigned char)p[i], i);
  return 0;
}

size_t matmul_a_index(const matmul_shape *s, size_t p) {
  return s->batch > 1 ? p * s->batch_a / s->batch : 0;
}

size_t matmul_b_index(const matmul_shape *s, size_t p) {
  return s->batch_b > 1 ? p % s->batch_b : 0;
}

size_t matmul_bias_count(const matmul_shape *s) {
  switch (s->bias) {
  case MATMUL_BIAS_SCALAR:
    return 1;
  case MATMUL_BIAS_N:
    return s->n;
  case MATMUL_BIAS_M:
    return s->m;
  case MATMUL_BIAS_MN:
    return s->m * s->n;
  default:
    return 0;
  }
}

float matmul_bias_at(const matmul_shape *s, const float *bias, size_t i, size_t j) {
  switch (s->bias) {
  case MATMUL_BIAS_SCALAR:
    return bias[0];
  case MATMUL_BIAS_N:
    return bias[j];
  case MATMUL_BIAS_M:
    return bias[i];
  case MATMUL_BIAS_MN:
    return bias[i * s->n + j];
  default:
    return 0.0f;
  }
}

size_t matmul_a_size(const matmul_shape *s) {
  return s->batch_a * s->m * s->k;
}
size_t matmul_b_size(const matmul_shape *s) {
  return s->batch_b * s->k * s->n;
}
size_t matmul_c_size(const matmul_shape *s) {
  return s->batch * s->m * s->n;
}

/* The structure's properties: name, MATMUL_CAN_ bit (0: every backend). */
enum {
  P_ACCUMULATE,
  P_ALPHA,
  P_BATCH,
  P_BATCH_A,
  P_BATCH_B,
  P_BETA,
  P_BIAS,
  P_TRANS_A,
  P_TRANS_B,
  P_COUNT
};
static const struct {
  const char *name;
  unsigned cap;
} structure_props[P_COUNT] = {
    {"accumulate", 0},
    {"alpha", MATMUL_CAN_ALPHA},
    {"batch", MATMUL_CAN_BATCH},
    {"batch_a", MATMUL_CAN_BATCH},
    {"batch_b", MATMUL_CAN_BATCH},
    {"beta", MATMUL_CAN_BIAS},
    {"bias", MATMUL_CAN_BIAS},
    {"trans_a", MATMUL_CAN_TRANS_A},
    {"trans_b", MATMUL_CAN_TRANS_B},
};
static const char *const bias_words[] = {"none", "scalar", "n", "m", "mn"};

/* A finite decimal (strtod's syntax, the whole text) representable as a
 * float, into *out. 0 or -1. */
static int parse_real(const char *text, float *out) {
  char *end = NULL;
  double v;
  if (!text[0] || text[0] == ' ')
    return -1;
  v = strtod(text, &end);
  if (!end || *end || !isfinite(v) || fabs(v) > 3.0e38)
    return -1;
  *out = (float)v;
  return 0;
}

/* A decimal integer in [lo, hi] without sign or leading zero, into *out. */
static int parse_count(const char *text, size_t lo, size_t hi, size_t *out) {
  size_t v = 0, len = strlen(text);
  if (len == 0 || len > 9 || (len > 1 && text[0] == '0'))
    return -1;
  for (size_t i = 0; i < len; i++) {
    if (text[i] < '0' || text[i] > '9')
      return -1;
    v = v * 10 + (size_t)(text[i] - '0');
  }
  if (v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

/* The property names that caps runs, for a decline's message. */
static void runs_list(unsigned caps, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "accumulate");
  for (int i = 1; i < P_COUNT && n < cap; i++)
    if (caps & structure_props[i].cap)
      n += (size_t)snprintf(buf + n, cap - n, ", %s", structure_props[i].name);
}

/* The operator, dtype and {M, N, K} of w: CALHOST_OK with *s the default
 * structure of that shape (batch_a, batch_b 0: batch unless given), or the
 * failure after host->set_error. */
static calhost_status parse_head(const calhost_host_services *host, const char *backend,
                                 const calhost_workload *w, matmul_shape *s) {
  const matmul_shape dflt = MATMUL_SHAPE(0, 0, 0, 0);
  if (!w || !w->operator_name || strcmp(w->operator_name, "MatMul") != 0) {
    matmul_set_error(host, "%s serves operator MatMul only", backend);
    return CALHOST_UNSUPPORTED;
  }
  if (!w->dtype || strcmp(w->dtype, "float32") != 0) {
    matmul_set_error(host, "%s serves dtype float32 only (got %s)", backend,
                     w->dtype ? w->dtype : "none");
    return CALHOST_UNSUPPORTED;
  }
  if (!w->shape || w->shape_rank != 3) {
    matmul_set_error(host, "%s: MatMul needs a shape of rank 3 {M, N, K}", backend);
    return CALHOST_INVALID_ARGUMENT;
  }
  for (int i = 0; i < 3; i++)
    if (w->shape[i] < 1 || w->shape[i] > MATMUL_DIM_MAX) {
      matmul_set_error(host, "%s: shape dimension %d = %lld out of range [1, %d]", backend, i,
                       (long long)w->shape[i], MATMUL_DIM_MAX);
      return CALHOST_UNSUPPORTED;
    }
  *s = dflt;
  s->m = (size_t)w->shape[0];
  s->n = (size_t)w->shape[1];
  s->k = (size_t)w->shape[2];
  s->batch_a = s->batch_b = 0; /* = batch unless given */
  return CALHOST_OK;
}

/* The value v of property f into *s; *is_default says whether it is the
 * property's default. CALHOST_OK, or CALHOST_INVALID_ARGUMENT after
 * host->set_error. */
static calhost_status parse_value(const calhost_host_services *host, const char *backend, int f,
                                  const char *v, matmul_shape *s, int *is_default) {
  const char *name = structure_props[f].name;
  *is_default = 0;
  switch (f) {
  case P_ACCUMULATE:
  case P_TRANS_A:
  case P_TRANS_B: {
    int *dst = f == P_ACCUMULATE ? &s->accumulate : f == P_TRANS_A ? &s->trans_a : &s->trans_b;
    int bad = strcmp(v, "0") != 0 && strcmp(v, "1") != 0;
    *dst = v[0] == '1';
    *is_default = !*dst;
    if (bad) {
      matmul_set_error(host, "%s: %s must be 0 or 1 (got '%s')", backend, name, v);
      return CALHOST_INVALID_ARGUMENT;
    }
    return CALHOST_OK;
  }
  case P_ALPHA:
  case P_BETA:
    if (parse_real(v, f == P_ALPHA ? &s->alpha : &s->beta) != 0) {
      matmul_set_error(host, "%s: %s must be a finite decimal number (got '%s')", backend, name, v);
      return CALHOST_INVALID_ARGUMENT;
    }
    *is_default = (f == P_ALPHA ? s->alpha : s->beta) == 1.0f;
    return CALHOST_OK;
  case P_BATCH:
  case P_BATCH_A:
  case P_BATCH_B: {
    size_t *dst = f == P_BATCH ? &s->batch : f == P_BATCH_A ? &s->batch_a : &s->batch_b;
    if (parse_count(v, 1, MATMUL_DIM_MAX, dst) != 0) {
      matmul_set_error(host, "%s: %s must be an integer in [1, %d] (got '%s')", backend, name,
                       MATMUL_DIM_MAX, v);
      return CALHOST_INVALID_ARGUMENT;
    }
    *is_default = f == P_BATCH && *dst == 1; /* batch_a/batch_b: compared with batch later */
    return CALHOST_OK;
  }
  default: { /* P_BIAS */
    int form = -1;
    for (int b = MATMUL_BIAS_SCALAR; b <= MATMUL_BIAS_MN; b++)
      if (strcmp(v, bias_words[b]) == 0)
        form = b;
    if (form < 0) {
      matmul_set_error(host, "%s: bias must be scalar, n, m or mn (got '%s')", backend, v);
      return CALHOST_INVALID_ARGUMENT;
    }
    s->bias = (matmul_bias)form;
    return CALHOST_OK;
  }
  }
}

/* Declines property `name` that caps does not run: CALHOST_UNSUPPORTED
 * after host->set_error, naming what the backend runs. */
static calhost_status decline(const calhost_host_services *host, const char *backend, unsigned caps,
                              const char *name) {
  char runs[160];
  runs_list(caps, runs, sizeof runs);
  matmul_set_error(host, "%s does not run MatMul property '%s' (it runs: %s)", backend, name, runs);
  return CALHOST_UNSUPPORTED;
}

/* Workload property p into *s: known, given once (seen), a valid value,
 * and run by caps unless it is its default. *beta_given set for beta. */
static calhost_status parse_property(const calhost_host_services *host, const char *backend,
                                     unsigned caps, const calhost_property *p, int *seen,
                                     int *beta_given, matmul_shape *s) {
  calhost_status st;
  int f, is_default;
  if (!p->name || !p->value) {
    matmul_set_error(host, "%s: workload property without name or value", backend);
    return CALHOST_INVALID_ARGUMENT;
  }
  for (f = 0; f < P_COUNT; f++)
    if (strcmp(p->name, structure_props[f].name) == 0)
      break;
  if (f == P_COUNT) {
    matmul_set_error(host,
                     "%s: unknown MatMul property '%s' (known: accumulate, alpha, batch, "
                     "batch_a, batch_b, beta, bias, trans_a, trans_b)",
                     backend, p->name);
    return CALHOST_UNSUPPORTED;
  }
  if (seen[f]++) {
    matmul_set_error(host, "%s: MatMul property '%s' given twice", backend, p->name);
    return CALHOST_INVALID_ARGUMENT;
  }
  if ((st = parse_value(host, backend, f, p->value, s, &is_default)) != CALHOST_OK)
    return st;
  *beta_given |= f == P_BETA;
  if (!is_default && f != P_BATCH_A && f != P_BATCH_B && !(caps & structure_props[f].cap) &&
      structure_props[f].cap)
    return decline(host, backend, caps, p->name);
  return CALHOST_OK;
}

/* After the properties: beta only with a bias, batch_a and batch_b (batch
 * unless given) within batch and run by caps, every matrix within the size
 * limits. */
static calhost_status check_structure(const calhost_host_services *host, const char *backend,
                                      unsigned caps, int beta_given, matmul_shape *s) {
  uint64_t a_size, b_size, c_size;
  if (beta_given && s->bias == MATMUL_BIAS_NONE) {
    matmul_set_error(host, "%s: beta without bias (beta is the factor of the bias C)", backend);
    return CALHOST_INVALID_ARGUMENT;
  }
  if (!s->batch_a)
    s->batch_a = s->batch;
  if (!s->batch_b)
    s->batch_b = s->batch;
  if (s->batch_a > s->batch || s->batch_b > s->batch) {
    matmul_set_error(host, "%s: batch_a=%zu and batch_b=%zu must not exceed batch=%zu", backend,
                     s->batch_a, s->batch_b, s->batch);
    return CALHOST_INVALID_ARGUMENT;
  }
  if ((s->batch_a != s->batch || s->batch_b != s->batch) && !(caps & MATMUL_CAN_BATCH))
    return decline(host, backend, caps, s->batch_a != s->batch ? "batch_a" : "batch_b");
  a_size = (uint64_t)s->batch_a * s->m * s->k;
  b_size = (uint64_t)s->batch_b * s->k * s->n;
  c_size = (uint64_t)s->batch * s->m * s->n;
  if (a_size > MATMUL_MATRIX_MAX || b_size > MATMUL_MATRIX_MAX || c_size > MATMUL_MATRIX_MAX ||
      c_size * s->k > MATMUL_WORK_MAX) {
    if (s->batch > 1)
      matmul_set_error(host, "%s: %zu products of %zux%zux%zu too large to calibrate", backend,
                       s->batch, s->m, s->n, s->k);
    else
      matmul_set_error(host, "%s: shape %zux%zux%zu too large to calibrate", backend, s->m, s->n,
                       s->k);
    return CALHOST_UNSUPPORTED;
  }
  return CALHOST_OK;
}

calhost_status matmul_parse_workload(const calhost_host_services *host, const char *backend,
                                     unsigned caps, const calhost_workload *w, matmul_shape *s) {
  int seen[P_COUNT] = {0}, beta_given = 0;
  calhost_status st = parse_head(host, backend, w, s);
  for (size_t i = 0; st == CALHOST_OK && i < w->property_count; i++)
    st = parse_property(host, backend, caps, &w->properties[i], seen, &beta_given, s);
  return st == CALHOST_OK ? check_structure(host, backend, caps, beta_given, s) : st;
}

/* Deterministic values in [-1, 1): a 64-bit LCG, 24 high bits. */
static void fill_random(float *x, size_t count, uint64_t seed) {
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (size_t i = 0; i < count; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(s >> 40) / (double)(1ull << 23) - 1.0);
  }
}

/* ref = alpha*op(A)*op(B) + beta*bias and mag = |alpha| |op(A)|*|op(B)| +
 * |beta*bias| for each product (m x n each), in double: the trusted triple
 * loop, reading the operands through the structure's layout. */
static void reference(const matmul_data *d) {
  const matmul_shape *s = &d->shape;
  const size_t m = s->m, n = s->n, k = s->k;
  const double alpha = s->alpha, beta = s->beta;
  for (size_t q = 0; q < s->batch; q++) {
    const float *a = d->a + matmul_a_index(s, q) * m * k;
    const float *b = d->b + matmul_b_index(s, q) * k * n;
    for (size_t i = 0; i < m; i++) {
      double *r = d->ref + (q * m + i) * n, *g = d->mag + (q * m + i) * n;
      for (size_t j = 0; j < n; j++)
        r[j] = g[j] = 0.0;
      for (size_t p = 0; p < k; p++) {
        double av = s->trans_a ? a[p * m + i] : a[i * k + p], aa = fabs(av);
        for (size_t j = 0; j < n; j++) {
          double bv = s->trans_b ? b[j * k + p] : b[p * n + j];
          r[j] += av * bv;
          g[j] += aa * fabs(bv);
        }
      }
      for (size_t j = 0; j < n; j++) {
        double bias = d->bias ? beta * matmul_bias_at(s, d->bias, i, j) : 0.0;
        r[j] = alpha * r[j] + bias;
        g[j] = fabs(alpha) * g[j] + fabs(bias);
      }
    }
  }
}

int matmul_data_init(matmul_data *d, const matmul_shape *s) {
  size_t as = matmul_a_size(s), bs = matmul_b_size(s), cs = matmul_c_size(s);
  size_t nb = matmul_bias_count(s);
  memset(d, 0, sizeof *d);
  d->shape = *s;
  d->a = malloc(as * sizeof(float));
  d->b = malloc(bs * sizeof(float));
  d->c = calloc(cs, sizeof(float));
  d->c0 = s->accumulate ? malloc(cs * sizeof(float)) : NULL;
  d->bias = nb ? malloc(nb * sizeof(float)) : NULL;
  if (!d->a || !d->b || !d->c || (s->accumulate && !d->c0) || (nb && !d->bias)) {
    matmul_data_free(d);
    return -1;
  }
  fill_random(d->a, as, 1);
  fill_random(d->b, bs, 2);
  if (d->c0)
    fill_random(d->c0, cs, 3);
  if (d->bias)
    fill_random(d->bias, nb, 4);
  return 0; /* the reference: on the first check (matmul_data_reference) */
}

int matmul_data_reference(matmul_data *d) {
  size_t cs = matmul_c_size(&d->shape);
  if (d->ref && d->mag)
    return 0;
  free(d->ref);
  free(d->mag);
  d->ref = malloc(cs * sizeof(double));
  d->mag = malloc(cs * sizeof(double));
  if (!d->ref || !d->mag) {
    free(d->ref);
    free(d->mag);
    d->ref = d->mag = NULL;
    return -1;
  }
  reference(d);
  return 0;
}

void matmul_data_free(matmul_data *d) {
  if (!d)
    return;
  free(d->a);
  free(d->b);
  free(d->c);
  free(d->c0);
  free(d->bias);
  free(d->ref);
  free(d->mag);
  d->a = d->b = d->c = d->c0 = d->bias = NULL;
  d->ref = d->mag = NULL;
}

void matmul_data_reset(matmul_data *d) {
  if (d->c0)
    memcpy(d->c, d->c0, matmul_c_size(&d->shape) * sizeof(float));
}

void matmul_bias_apply(const matmul_data *d, float *c, int add) {
  const matmul_shape *s = &d->shape;
  const float beta = s->beta;
  if (!d->bias)
    return;
  for (size_t q = 0; q < s->batch; q++)
    for (size_t i = 0; i < s->m; i++) {
      float *row = c + (q * s->m + i) * s->n;
      if (s->bias == MATMUL_BIAS_N || s->bias == MATMUL_BIAS_MN) { /* a row of values */
        const float *src = d->bias + (s->bias == MATMUL_BIAS_MN ? i * s->n : 0);
        if (add)
          for (size_t j = 0; j < s->n; j++)
            row[j] += beta * src[j];
        else
          for (size_t j = 0; j < s->n; j++)
            row[j] = beta * src[j];
      } else { /* one value per row */
        const float v = beta * d->bias[s->bias == MATMUL_BIAS_M ? i : 0];
        if (add)
          for (size_t j = 0; j < s->n; j++)
            row[j] += v;
        else
          for (size_t j = 0; j < s->n; j++)
            row[j] = v;
      }
    }
}

/* "C[i][j]" of output element x, or "C[p][i][j]" in a batch. */
static void element_name(const matmul_shape *s, size_t x, char *buf, size_t cap) {
  size_t mn = s->m * s->n;
  if (s->batch > 1)
    snprintf(buf, cap, "C[%zu][%zu][%zu]", x / mn, x % mn / s->n, x % s->n);
  else
    snprintf(buf, cap, "C[%zu][%zu]", x / s->n, x % s->n);
}

calhost_status matmul_check(const matmul_data *d, uint32_t iterations, char *err, size_t cap) {
  const double u = 1.0 / 16777216.0;
  size_t cs = matmul_c_size(&d->shape);
  double it = d->c0 ? (double)iterations : 1.0;
  double scale = 16.0 * u * sqrt((double)d->shape.k + it);
  char where[80];
  if (iterations == 0) {
    if (err && cap)
      snprintf(err, cap, "no completed run to check");
    return CALHOST_CHECK_FAILED;
  }
  /* the reference is computed once, on the first check: d's cache (its
   * inputs never change after matmul_data_init) */
  if (matmul_data_reference((matmul_data *)(uintptr_t)d) != 0) {
    if (err && cap)
      snprintf(err, cap, "out of memory for the reference");
    return CALHOST_NO_MEMORY;
  }
  for (size_t x = 0; x < cs; x++) {
    double got = d->c[x], want = it * d->ref[x], mag = it * d->mag[x];
    if (d->c0) {
      want += d->c0[x];
      mag += fabs((double)d->c0[x]);
    }
    if (!isfinite(got)) {
      element_name(&d->shape, x, where, sizeof where);
      if (err && cap)
        snprintf(err, cap, "%s is %s", where, isnan(got) ? "NaN" : "Inf");
      return CALHOST_CHECK_FAILED;
    }
    if (fabs(got - want) > scale * mag + 1e-30) {
      element_name(&d->shape, x, where, sizeof where);
      if (err && cap)
        snprintf(err, cap, "%s = %.9g, reference %.9g (tolerance %.3g)", where, got, want,
                 scale * mag);
      return CALHOST_CHECK_FAILED;
    }
  }
  return CALHOST_OK;
}

void matmul_structure_fill(matmul_structure *out, const matmul_shape *s) {
  size_t c = 0;
  snprintf(out->m, sizeof out->m, "%zu", s->m);
  snprintf(out->n, sizeof out->n, "%zu", s->n);
  snprintf(out->k, sizeof out->k, "%zu", s->k);
  out->props[c++] = (calhost_property){"dtype", "float32"};
  out->props[c++] = (calhost_property){"m", out->m};
  out->props[c++] = (calhost_property){"n", out->n};
  out->props[c++] = (calhost_property){"k", out->k};
  out->props[c++] = (calhost_property){"accumulate", s->accumulate ? "1" : "0"};
  if (s->alpha != 1.0f) {
    snprintf(out->alpha, sizeof out->alpha, "%.7g", (double)s->alpha);
    out->props[c++] = (calhost_property){"alpha", out->alpha};
  }
  if (s->batch > 1) {
    snprintf(out->batch, sizeof out->batch, "%zu", s->batch);
    out->props[c++] = (calhost_property){"batch", out->batch};
  }
  if (s->batch_a != s->batch) {
    snprintf(out->batch_a, sizeof out->batch_a, "%zu", s->batch_a);
    out->props[c++] = (calhost_property){"batch_a", out->batch_a};
  }
  if (s->batch_b != s->batch) {
    snprintf(out->batch_b, sizeof out->batch_b, "%zu", s->batch_b);
    out->props[c++] = (calhost_property){"batch_b", out->batch_b};
  }
  if (s->bias != MATMUL_BIAS_NONE && s->beta != 1.0f) {
    snprintf(out->beta, sizeof out->beta, "%.7g", (double)s->beta);
    out->props[c++] = (calhost_property){"beta", out->beta};
  }
  if (s->bias != MATMUL_BIAS_NONE)
    out->props[c++] = (calhost_property){"bias", bias_words[s->bias]};
  if (s->trans_a)
    out->props[c++] = (calhost_property){"trans_a", "1"};
  if (s->trans_b)
    out->props[c++] = (calhost_property){"trans_b", "1"};
  out->count = c;
}

void *matmul_instance_new(const calhost_host_services *host, const char *backend, size_t size) {
  matmul_instance *inst = calloc(1, size < sizeof *inst ? sizeof *inst : size);
  if (inst) {
    inst->host = host;
    inst->backend = backend;
  }
  return inst;
}

void matmul_instance_free(calhost_plugin_instance *inst) {
  free(inst);
}

/* The common head of build_key and open_session: the arguments present,
 * then the workload. */
static calhost_status parse_request(const matmul_instance *mi, const calhost_workload *w,
                                    const calhost_target *t, const void *out, matmul_shape *s) {
  if (!mi || !w || !t || !out)
    return CALHOST_INVALID_ARGUMENT;
  return matmul_parse_workload(mi->host, mi->backend, mi->caps, w, s);
}

calhost_status matmul_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                const calhost_target *t, calhost_built_key *out, matmul_shape *s) {
  matmul_instance *mi = (matmul_instance *)(void *)inst;
  calhost_status st = parse_request(mi, w, t, out, s);
  if (st != CALHOST_OK)
    return st;
  matmul_structure_fill(&mi->shape, s);
  out->model_digest = w->model_digest;
  out->processor = t->processor;
  out->thread_count = t->thread_count;
  out->structure = mi->shape.props;
  out->structure_count = mi->shape.count;
  return CALHOST_OK;
}

calhost_status matmul_key(calhost_plugin_instance *inst, const calhost_workload *w,
                          const calhost_target *t, calhost_built_key *out) {
  const matmul_instance *mi = (const matmul_instance *)(void *)inst;
  matmul_shape s;
  calhost_status st = matmul_build_key(inst, w, t, out, &s);
  if (st == CALHOST_OK && mi->thread_cap)
    out->thread_count = !t->thread_count                   ? 1
                        : t->thread_count > mi->thread_cap ? mi->thread_cap
                                                           : t->thread_count;
  return st;
}

void *matmul_session_alloc(calhost_plugin_instance *inst, const calhost_workload *w,
                           const calhost_target *t, calhost_session **out, size_t size,
                           matmul_shape *s, calhost_status *status) {
  const matmul_instance *mi = (const matmul_instance *)(void *)inst;
  matmul_session *ms;
  *status = parse_request(mi, w, t, out, s);
  if (out)
    *out = NULL;
  if (*status != CALHOST_OK)
    return NULL;
  ms = calloc(1, size < sizeof *ms ? sizeof *ms : size);
  if (!ms) {
    *status = CALHOST_NO_MEMORY;
    return NULL;
  }
  ms->host = mi->host;
  return ms;
}

/* The matmul_session a backend's session starts with. */
static matmul_session *base(calhost_session *s) {
  return (matmul_session *)(void *)s;
}

void matmul_session_close(calhost_session *s) {
  if (!s)
    return;
  matmul_data_free(&base(s)->data);
  free(s);
}

calhost_status matmul_candidate_count(calhost_session *s, uint32_t *count) {
  if (!s || !count)
    return CALHOST_INVALID_ARGUMENT;
  *count = base(s)->candidates;
  return CALHOST_OK;
}

calhost_status matmul_session_check(calhost_session *s, char *err, size_t cap) {
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  return matmul_check(&base(s)->data, base(s)->last_iterations, err, cap);
}

calhost_status matmul_run(calhost_session *s, uint32_t iterations, matmul_product_fn *product) {
  matmul_session *ms = base(s);
  ms->last_iterations = 0;
  matmul_data_reset(&ms->data);
  for (uint32_t it = 0; it < iterations; it++) {
    calhost_status st = product(s);
    if (st != CALHOST_OK)
      return st;
    if (iterations > 1 && matmul_cancelled(ms->host))
      return CALHOST_CANCELLED;
  }
  ms->last_iterations = iterations;
  return CALHOST_OK;
}
