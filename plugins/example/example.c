/*
 * example.c: calhost's example backend. ReduceSum of a float32 tensor (the
 * sum of all its elements) with two tunable parameters: the block size (the
 * elements summed into one partial) and the unroll factor (independent
 * accumulators inside a block). It shows the whole integration: identity,
 * key-builder, policy serializer, strict validator, default policy, and
 * prepare/run/check against a double-precision reference. No persistence
 * code: the host and its store own profiles.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calhost/plugin.h"

static const unsigned blocks[] = {64, 256, 1024, 4096};
static const unsigned unrolls[] = {1, 2, 4, 8};
#define NB (sizeof blocks / sizeof blocks[0])
#define NU (sizeof unrolls / sizeof unrolls[0])

struct calhost_plugin_instance {
  const calhost_host_services *host;
  char structure_n[32];
  calhost_property structure[2];
};

struct calhost_session {
  calhost_plugin_instance *inst;
  float *x;
  size_t n;
  double reference, sum_abs;
  float out;
  unsigned block, unroll;
};

static void fail(const calhost_host_services *h, const char *msg) {
  if (h)
    h->set_error(h->context, msg);
}

static calhost_status example_create(const calhost_host_services *host,
                                     const calhost_property *settings, size_t setting_count,
                                     calhost_plugin_instance **out) {
  (void)settings;
  if (setting_count) {
    fail(host, "the example backend takes no settings");
    return CALHOST_INVALID_ARGUMENT;
  }
  *out = calloc(1, sizeof **out);
  if (!*out)
    return CALHOST_NO_MEMORY;
  (*out)->host = host;
  return CALHOST_OK;
}

static void example_destroy(calhost_plugin_instance *inst) {
  free(inst);
}

/* The element count of a supported workload, or 0. */
static size_t elements(const calhost_workload *w) {
  size_t n = 1;
  if (strcmp(w->operator_name, "ReduceSum") || strcmp(w->dtype, "float32") || !w->shape_rank)
    return 0;
  for (size_t i = 0; i < w->shape_rank; i++) {
    if (w->shape[i] <= 0 || (uint64_t)w->shape[i] > ((uint64_t)1 << 31) / n)
      return 0;
    n *= (size_t)w->shape[i];
  }
  return n;
}

/* Exact key: the model and processor as given; one thread (this kernel is
 * single-threaded). Portable key: the dtype and the element count. */
static calhost_status example_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                        const calhost_target *t, calhost_built_key *out) {
  size_t n = elements(w);
  if (!n)
    return fail(inst->host, "only ReduceSum float32 is supported"), CALHOST_UNSUPPORTED;
  snprintf(inst->structure_n, sizeof inst->structure_n, "%zu", n);
  inst->structure[0] = (calhost_property){"dtype", "float32"};
  inst->structure[1] = (calhost_property){"elements", inst->structure_n};
  out->model_digest = w->model_digest;
  out->processor = t->processor; /* no copy: no length limit */
  out->thread_count = 1;
  out->structure = inst->structure;
  out->structure_count = 2;
  return CALHOST_OK;
}

/* Parses "block=B;unroll=U" strictly (known values only, nothing else). */
static int parse(const char *p, size_t len, unsigned *block, unsigned *unroll) {
  char buf[64], tail;
  int ok_b = 0, ok_u = 0;
  if (len == 0 || len >= sizeof buf || memchr(p, '\0', len))
    return -1;
  memcpy(buf, p, len);
  buf[len] = '\0';
  if (sscanf(buf, "block=%u;unroll=%u%c", block, unroll, &tail) != 2)
    return -1;
  for (size_t i = 0; i < NB; i++)
    ok_b |= blocks[i] == *block;
  for (size_t i = 0; i < NU; i++)
    ok_u |= unrolls[i] == *unroll;
  char canon[64];
  snprintf(canon, sizeof canon, "block=%u;unroll=%u", *block, *unroll);
  return ok_b && ok_u && !strcmp(canon, buf) ? 0 : -1;
}

static calhost_status example_validate_policy(calhost_plugin_instance *inst, const char *policy,
                                              size_t length, char *err, size_t cap) {
  unsigned b, u;
  (void)inst;
  if (parse(policy, length, &b, &u) == 0)
    return CALHOST_OK;
  if (err && cap)
    snprintf(err, cap, "expected block={64,256,1024,4096};unroll={1,2,4,8}");
  return CALHOST_INVALID_ARGUMENT;
}

static calhost_status example_open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                           const calhost_target *t, calhost_session **out) {
  size_t n = elements(w);
  (void)t;
  if (!n)
    return fail(inst->host, "only ReduceSum float32 is supported"), CALHOST_UNSUPPORTED;
  calhost_session *s = calloc(1, sizeof *s);
  if (!s || !(s->x = malloc(n * sizeof *s->x)))
    return free(s), CALHOST_NO_MEMORY;
  s->inst = inst;
  s->n = n;
  unsigned seed = 12345;
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    s->x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    s->reference += s->x[i];
    s->sum_abs += fabs(s->x[i]);
  }
  *out = s;
  return CALHOST_OK;
}

static void example_close_session(calhost_session *s) {
  if (s)
    free(s->x);
  free(s);
}

static calhost_status example_candidate_count(calhost_session *s, uint32_t *count) {
  (void)s;
  *count = NB * NU;
  return CALHOST_OK;
}

static calhost_status example_serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                                  size_t capacity, size_t *length) {
  char text[64];
  (void)s;
  if (index >= NB * NU)
    return CALHOST_INVALID_ARGUMENT;
  snprintf(text, sizeof text, "block=%u;unroll=%u", blocks[index / NU], unrolls[index % NU]);
  return calhost_copy_out(text, buf, capacity, length);
}

static calhost_status example_default_policy(calhost_session *s, char *buf, size_t cap,
                                             size_t *len) {
  (void)s;
  return calhost_copy_out("block=1024;unroll=1", buf, cap, len);
}

static calhost_status example_prepare(calhost_session *s, const char *policy, size_t length) {
  if (parse(policy, length, &s->block, &s->unroll) != 0)
    return fail(s->inst->host, "bad policy"), CALHOST_INVALID_ARGUMENT;
  return CALHOST_OK;
}

static calhost_status example_run(calhost_session *s, uint32_t iterations,
                                  calhost_run_result *result) {
  (void)result; /* the host times us */
  for (uint32_t it = 0; it < iterations; it++) {
    float total = 0.0f;
    for (size_t b = 0; b < s->n; b += s->block) {
      size_t end = b + s->block < s->n ? b + s->block : s->n, i = b;
      float acc[8] = {0};
      for (; i + s->unroll <= end; i += s->unroll)
        for (unsigned u = 0; u < s->unroll; u++)
          acc[u] += s->x[i + u];
      for (; i < end; i++)
        acc[0] += s->x[i];
      for (unsigned u = 0; u < s->unroll; u++)
        total += acc[u];
    }
    s->out = total;
    if (s->inst->host->is_cancelled(s->inst->host->context))
      return CALHOST_CANCELLED;
  }
  return CALHOST_OK;
}

static calhost_status example_check(calhost_session *s, char *err, size_t cap) {
  double diff = fabs((double)s->out - s->reference);
  if (isfinite(s->out) && diff <= 1e-5 * s->sum_abs + 1e-6)
    return CALHOST_OK;
  snprintf(err, cap, "sum %.9g differs from the reference %.9g", (double)s->out, s->reference);
  return CALHOST_CHECK_FAILED;
}

static const char *const operators[] = {"ReduceSum", NULL};

/* The vtable and the one exported symbol (CALHOST_PLUGIN_DEFINE, calhost/plugin.h). */
CALHOST_PLUGIN_DEFINE(example, 2u, "example", "1", operators,
                      "example ReduceSum float32 with tunable block size and unroll factor",
                      .default_policy = example_default_policy, .check = example_check);
