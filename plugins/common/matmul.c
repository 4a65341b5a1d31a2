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

int matmul_parse_params(const char *p, size_t len, size_t max, const matmul_param *params,
                        int count, uint32_t *out, char *err, size_t cap) {
  size_t pos = 0;
  if (matmul_policy_text(p, len, max, err, cap) != 0)
    return -1;
  for (int k = 0; k < count; k++) {
    const matmul_param *par = &params[k];
    size_t nl = strlen(par->name), vl = 0;
    uint32_t i;
    if (k > 0) {
      if (pos >= len || p[pos] != ',')
        return matmul_fail(err, cap, "expected ',' before %s at offset %zu", par->name, pos);
      pos++;
    }
    if (len - pos < nl + 1 || memcmp(p + pos, par->name, nl) != 0 || p[pos + nl] != '=')
      return matmul_fail(err, cap, "expected %s= at offset %zu", par->name, pos);
    pos += nl + 1;
    while (pos + vl < len && p[pos + vl] != ',')
      vl++;
    for (i = 0; i < par->count; i++)
      if (strlen(par->texts[i]) == vl && memcmp(p + pos, par->texts[i], vl) == 0)
        break;
    if (i == par->count)
      return matmul_fail(err, cap, "%s: '%.*s' is not one of the allowed values", par->name,
                         (int)(vl > 16 ? 16 : vl), p + pos);
    out[k] = par->values[i];
    pos += vl;
  }
  if (pos != len)
    return matmul_fail(err, cap, "trailing text at offset %zu", pos);
  return 0;
}

calhost_status matmul_parse_workload(const calhost_host_services *host, const char *backend,
                                     const calhost_workload *w, matmul_shape *s) {
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
  s->m = (size_t)w->shape[0];
  s->n = (size_t)w->shape[1];
  s->k = (size_t)w->shape[2];
  s->accumulate = 0;
  if ((uint64_t)s->m * s->k > MATMUL_MATRIX_MAX || (uint64_t)s->k * s->n > MATMUL_MATRIX_MAX ||
      (uint64_t)s->m * s->n > MATMUL_MATRIX_MAX || (uint64_t)s->m * s->n * s->k > MATMUL_WORK_MAX) {
    matmul_set_error(host, "%s: shape %zux%zux%zu too large to calibrate", backend, s->m, s->n,
                     s->k);
    return CALHOST_UNSUPPORTED;
  }
  for (size_t i = 0; i < w->property_count; i++) {
    const calhost_property *p = &w->properties[i];
    if (!p->name || !p->value) {
      matmul_set_error(host, "%s: workload property without name or value", backend);
      return CALHOST_INVALID_ARGUMENT;
    }
    if (strcmp(p->name, "accumulate") == 0) {
      if (strcmp(p->value, "0") == 0)
        s->accumulate = 0;
      else if (strcmp(p->value, "1") == 0)
        s->accumulate = 1;
      else {
        matmul_set_error(host, "%s: accumulate must be 0 or 1 (got '%s')", backend, p->value);
        return CALHOST_INVALID_ARGUMENT;
      }
    } else {
      matmul_set_error(host, "%s: unknown MatMul property '%s' (known: accumulate)", backend,
                       p->name);
      return CALHOST_UNSUPPORTED;
    }
  }
  return CALHOST_OK;
}

/* Deterministic values in [-1, 1): a 64-bit LCG, 24 high bits. */
static void fill_random(float *x, size_t count, uint64_t seed) {
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (size_t i = 0; i < count; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(s >> 40) / (double)(1ull << 23) - 1.0);
  }
}

/* ref = A*B and mag = |A|*|B| (m x n), in double: the trusted triple loop. */
static void reference(const float *a, const float *b, size_t m, size_t n, size_t k, double *ref,
                      double *mag) {
  for (size_t i = 0; i < m; i++) {
    double *r = ref + i * n, *g = mag + i * n;
    for (size_t j = 0; j < n; j++)
      r[j] = g[j] = 0.0;
    for (size_t p = 0; p < k; p++) {
      double av = a[i * k + p], aa = fabs(av);
      const float *brow = b + p * n;
      for (size_t j = 0; j < n; j++) {
        r[j] += av * (double)brow[j];
        g[j] += aa * fabs((double)brow[j]);
      }
    }
  }
}

int matmul_data_init(matmul_data *d, const matmul_shape *s) {
  size_t mk = s->m * s->k, kn = s->k * s->n, mn = s->m * s->n;
  memset(d, 0, sizeof *d);
  d->shape = *s;
  d->a = malloc(mk * sizeof(float));
  d->b = malloc(kn * sizeof(float));
  d->c = calloc(mn, sizeof(float));
  d->c0 = s->accumulate ? malloc(mn * sizeof(float)) : NULL;
  d->ref = malloc(mn * sizeof(double));
  d->mag = malloc(mn * sizeof(double));
  if (!d->a || !d->b || !d->c || (s->accumulate && !d->c0) || !d->ref || !d->mag) {
    matmul_data_free(d);
    return -1;
  }
  fill_random(d->a, mk, 1);
  fill_random(d->b, kn, 2);
  if (d->c0)
    fill_random(d->c0, mn, 3);
  reference(d->a, d->b, s->m, s->n, s->k, d->ref, d->mag);
  return 0;
}

void matmul_data_free(matmul_data *d) {
  if (!d)
    return;
  free(d->a);
  free(d->b);
  free(d->c);
  free(d->c0);
  free(d->ref);
  free(d->mag);
  d->a = d->b = d->c = d->c0 = NULL;
  d->ref = d->mag = NULL;
}

void matmul_data_reset(matmul_data *d) {
  if (d->c0)
    memcpy(d->c, d->c0, d->shape.m * d->shape.n * sizeof(float));
}

calhost_status matmul_check(const matmul_data *d, uint32_t iterations, char *err, size_t cap) {
  const double u = 1.0 / 16777216.0;
  size_t mn = d->shape.m * d->shape.n, n = d->shape.n;
  double it = d->c0 ? (double)iterations : 1.0;
  double scale = 16.0 * u * sqrt((double)d->shape.k + it);
  if (iterations == 0) {
    if (err && cap)
      snprintf(err, cap, "no completed run to check");
    return CALHOST_CHECK_FAILED;
  }
  for (size_t x = 0; x < mn; x++) {
    double got = d->c[x], want = it * d->ref[x], mag = it * d->mag[x];
    if (d->c0) {
      want += d->c0[x];
      mag += fabs((double)d->c0[x]);
    }
    if (!isfinite(got)) {
      if (err && cap)
        snprintf(err, cap, "C[%zu][%zu] is %s", x / n, x % n, isnan(got) ? "NaN" : "Inf");
      return CALHOST_CHECK_FAILED;
    }
    if (fabs(got - want) > scale * mag + 1e-30) {
      if (err && cap)
        snprintf(err, cap, "C[%zu][%zu] = %.9g, reference %.9g (tolerance %.3g)", x / n, x % n, got,
                 want, scale * mag);
      return CALHOST_CHECK_FAILED;
    }
  }
  return CALHOST_OK;
}

void matmul_structure_fill(matmul_structure *out, const matmul_shape *s) {
  snprintf(out->m, sizeof out->m, "%zu", s->m);
  snprintf(out->n, sizeof out->n, "%zu", s->n);
  snprintf(out->k, sizeof out->k, "%zu", s->k);
  out->props[0] = (calhost_property){"dtype", "float32"};
  out->props[1] = (calhost_property){"m", out->m};
  out->props[2] = (calhost_property){"n", out->n};
  out->props[3] = (calhost_property){"k", out->k};
  out->props[4] = (calhost_property){"accumulate", s->accumulate ? "1" : "0"};
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
  return matmul_parse_workload(mi->host, mi->backend, w, s);
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
  out->structure_count = MATMUL_STRUCTURE_COUNT;
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
