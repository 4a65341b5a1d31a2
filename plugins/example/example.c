/*
 * example.c: calhost's example backend. ReduceSum of a float32 tensor (the
 * sum of all its elements, or of each row: the trailing axes given by the
 * `axes` property) with two tunable parameters: the block size (the
 * elements summed into one partial) and the unroll factor (independent
 * accumulators inside a block). It shows the whole integration: identity,
 * key-builder, policy serializer, strict validator, default policy, and
 * prepare/run/check against a double-precision reference. No persistence
 * code: the host and its store own profiles.
 *
 * Workload properties (ONNX ReduceSum's attributes, as a model's node
 * gives them): `axes` (comma-separated, negative counting from the end):
 * implemented when they are the trailing axes (each output sums one
 * contiguous segment), refused otherwise, and refused as `input` (axes
 * known only at run time); `keepdims` 0 or 1 (the output's values and
 * their order are the same: only its shape differs, which the host owns);
 * `noop_with_empty_axes` 0 or 1 (1 without axes, an identity, is refused).
 * Any other property is refused by name: the plugin guide's rule, never
 * measure one computation for another.
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
  char structure_n[32], structure_segment[32];
  calhost_property structure[3];
};

struct calhost_session {
  calhost_plugin_instance *inst;
  float *x;
  size_t n, segment, outputs; /* outputs sums of segment elements each */
  double *reference, *sum_abs;
  float *out;
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

/* The reduction's segment (the elements each output sums, contiguous) by
 * the workload's properties (see the top of the file): n for a full sum.
 * Returns 0, or the status with why (cap bytes). */
static calhost_status segment_of(const calhost_workload *w, size_t n, size_t *segment, char *why,
                                 size_t cap) {
  size_t rank = w->shape_rank;
  int reduced[16] = {0}, any_axis = 0, noop = 0;
  if (rank > 16)
    return snprintf(why, cap, "at most 16 dimensions"), CALHOST_UNSUPPORTED;
  for (size_t i = 0; i < w->property_count; i++) {
    const char *name = w->properties[i].name, *v = w->properties[i].value;
    if (!strcmp(name, "keepdims") || !strcmp(name, "noop_with_empty_axes")) {
      if (strcmp(v, "0") && strcmp(v, "1"))
        return snprintf(why, cap, "ReduceSum property %s is 0 or 1, not '%.40s'", name, v),
               CALHOST_INVALID_ARGUMENT;
      noop |= !strcmp(name, "noop_with_empty_axes") && !strcmp(v, "1");
    } else if (!strcmp(name, "axes")) {
      if (!strcmp(v, "input"))
        return snprintf(why, cap, "ReduceSum axes given as an input tensor are not implemented"),
               CALHOST_UNSUPPORTED;
      for (const char *p = v; *p;) { /* a comma-separated list of integers */
        char *end;
        long a = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || a < -(long)rank || a >= (long)rank)
          return snprintf(why, cap, "ReduceSum axes '%.40s': not axes of a rank-%zu input", v,
                          rank),
                 CALHOST_INVALID_ARGUMENT;
        size_t k = (size_t)(a < 0 ? a + (long)rank : a);
        if (reduced[k])
          return snprintf(why, cap, "ReduceSum axes '%.40s': axis %zu twice", v, k),
                 CALHOST_INVALID_ARGUMENT;
        reduced[k] = any_axis = 1;
        p = *end ? end + 1 : end;
      }
    } else {
      return snprintf(why, cap, "unknown ReduceSum property '%.60s'", name), CALHOST_UNSUPPORTED;
    }
  }
  if (!any_axis) { /* ONNX: no axes reduce them all, unless noop_with_empty_axes */
    if (noop)
      return snprintf(why, cap,
                      "ReduceSum noop_with_empty_axes=1 without axes (an identity) is "
                      "not implemented"),
             CALHOST_UNSUPPORTED;
    *segment = n;
    return CALHOST_OK;
  }
  size_t k = rank, seg = 1; /* the reduced axes must be the trailing ones */
  while (k > 0 && reduced[k - 1])
    seg *= (size_t)w->shape[--k];
  for (size_t i = 0; i < k; i++)
    if (reduced[i])
      return snprintf(why, cap,
                      "ReduceSum over axis %zu of %zu and not over the ones after it is not "
                      "implemented (only the trailing axes: each output a contiguous segment)",
                      i, rank),
             CALHOST_UNSUPPORTED;
  *segment = seg;
  return CALHOST_OK;
}

/* The element count and segment of a supported workload: 0, or the status
 * after the message (set_error). */
static calhost_status reduction(calhost_plugin_instance *inst, const calhost_workload *w, size_t *n,
                                size_t *segment) {
  char why[200];
  *n = elements(w);
  if (!*n)
    return fail(inst->host, "only ReduceSum float32 is supported"), CALHOST_UNSUPPORTED;
  calhost_status st = segment_of(w, *n, segment, why, sizeof why);
  if (st != CALHOST_OK)
    fail(inst->host, why);
  return st;
}

/* Exact key: the model and processor as given; one thread (this kernel is
 * single-threaded). Portable key: the dtype and the element count, and the
 * segment each output sums when it is not the whole tensor (a row
 * reduction is another computation than a full sum). */
static calhost_status example_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                        const calhost_target *t, calhost_built_key *out) {
  size_t n, segment;
  calhost_status st = reduction(inst, w, &n, &segment);
  if (st != CALHOST_OK)
    return st;
  snprintf(inst->structure_n, sizeof inst->structure_n, "%zu", n);
  snprintf(inst->structure_segment, sizeof inst->structure_segment, "%zu", segment);
  inst->structure[0] = (calhost_property){"dtype", "float32"};
  inst->structure[1] = (calhost_property){"elements", inst->structure_n};
  inst->structure[2] = (calhost_property){"segment", inst->structure_segment};
  out->model_digest = w->model_digest;
  out->processor = t->processor; /* no copy: no length limit */
  out->thread_count = 1;
  out->structure = inst->structure;
  out->structure_count = segment < n ? 3 : 2;
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

static void example_close_session(calhost_session *s) {
  if (s) {
    free(s->x);
    free(s->out);
    free(s->reference);
    free(s->sum_abs);
  }
  free(s);
}

static calhost_status example_open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                           const calhost_target *t, calhost_session **out) {
  size_t n, segment;
  (void)t;
  calhost_status st = reduction(inst, w, &n, &segment);
  if (st != CALHOST_OK)
    return st;
  calhost_session *s = calloc(1, sizeof *s);
  if (!s)
    return CALHOST_NO_MEMORY;
  s->inst = inst;
  s->n = n;
  s->segment = segment;
  s->outputs = n / segment;
  s->x = malloc(n * sizeof *s->x);
  s->out = calloc(s->outputs, sizeof *s->out);
  s->reference = calloc(s->outputs, sizeof *s->reference);
  s->sum_abs = calloc(s->outputs, sizeof *s->sum_abs);
  if (!s->x || !s->out || !s->reference || !s->sum_abs) {
    example_close_session(s);
    return CALHOST_NO_MEMORY;
  }
  unsigned seed = 12345;
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    s->x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    s->reference[i / segment] += s->x[i];
    s->sum_abs[i / segment] += fabs(s->x[i]);
  }
  *out = s;
  return CALHOST_OK;
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
    for (size_t o = 0; o < s->outputs; o++) { /* each output: its segment, in blocks */
      const float *x = s->x + o * s->segment;
      float total = 0.0f;
      for (size_t b = 0; b < s->segment; b += s->block) {
        size_t end = b + s->block < s->segment ? b + s->block : s->segment, i = b;
        float acc[8] = {0};
        for (; i + s->unroll <= end; i += s->unroll)
          for (unsigned u = 0; u < s->unroll; u++)
            acc[u] += x[i + u];
        for (; i < end; i++)
          acc[0] += x[i];
        for (unsigned u = 0; u < s->unroll; u++)
          total += acc[u];
      }
      s->out[o] = total;
    }
    if (s->inst->host->is_cancelled(s->inst->host->context))
      return CALHOST_CANCELLED;
  }
  return CALHOST_OK;
}

static calhost_status example_check(calhost_session *s, char *err, size_t cap) {
  for (size_t o = 0; o < s->outputs; o++) {
    double diff = fabs((double)s->out[o] - s->reference[o]);
    if (!isfinite(s->out[o]) || diff > 1e-5 * s->sum_abs[o] + 1e-6) {
      snprintf(err, cap, "sum %zu: %.9g differs from the reference %.9g", o, (double)s->out[o],
               s->reference[o]);
      return CALHOST_CHECK_FAILED;
    }
  }
  return CALHOST_OK;
}

static const char *const operators[] = {"ReduceSum", NULL};

/* The vtable and the one exported symbol (CALHOST_PLUGIN_DEFINE, calhost/plugin.h). */
CALHOST_PLUGIN_DEFINE(example, 2u, "example", "1", operators,
                      "example ReduceSum float32 with tunable block size and unroll factor",
                      .default_policy = example_default_policy, .check = example_check);
