/*
 * my_backend.c: a complete calhost backend to start from. Operator "Add"
 * (element-wise c = a + b over float32) with one tunable parameter, the
 * chunk size the loop is split into. Replace the kernel, keep the shape:
 * identity, key-builder, serializer, strict validator, default policy,
 * prepare/run/check. See the SDK guide (share/doc/calhost/plugin-sdk.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <calhost/plugin.h>

static const unsigned chunks[] = {256, 1024, 4096, 16384};
#define NCHUNKS (sizeof chunks / sizeof chunks[0])

struct calhost_plugin_instance {
  const calhost_host_services *host;
  char count[32];
  calhost_property structure[2];
};

struct calhost_session {
  const calhost_host_services *host;
  float *a, *b, *c;
  size_t n;
  unsigned chunk;
};

static size_t elements(const calhost_workload *w) {
  size_t n = 1;
  if (strcmp(w->operator_name, "Add") || strcmp(w->dtype, "float32") || !w->shape_rank)
    return 0;
  for (size_t i = 0; i < w->shape_rank; i++) {
    if (w->shape[i] <= 0 || (uint64_t)w->shape[i] > ((uint64_t)1 << 28) / n)
      return 0;
    n *= (size_t)w->shape[i];
  }
  return n;
}

static calhost_status my_backend_create(const calhost_host_services *host,
                                        const calhost_property *settings, size_t setting_count,
                                        calhost_plugin_instance **out) {
  (void)settings;
  if (setting_count) {
    host->set_error(host->context, "my_backend takes no settings");
    return CALHOST_INVALID_ARGUMENT;
  }
  if (!(*out = calloc(1, sizeof **out)))
    return CALHOST_NO_MEMORY;
  (*out)->host = host;
  return CALHOST_OK;
}

static void my_backend_destroy(calhost_plugin_instance *inst) {
  free(inst);
}

static calhost_status my_backend_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                           const calhost_target *t, calhost_built_key *out) {
  size_t n = elements(w);
  if (!n)
    return CALHOST_UNSUPPORTED;
  snprintf(inst->count, sizeof inst->count, "%zu", n);
  inst->structure[0] = (calhost_property){"dtype", "float32"};
  inst->structure[1] = (calhost_property){"elements", inst->count};
  out->model_digest = w->model_digest;
  out->processor = t->processor;
  out->thread_count = 1; /* single-threaded kernel */
  out->structure = inst->structure;
  out->structure_count = 2;
  return CALHOST_OK;
}

/* Strict: exactly "chunk=N" with N one of ours. */
static int parse(const char *p, size_t len, unsigned *chunk) {
  char buf[32], canon[32];
  if (len == 0 || len >= sizeof buf || memchr(p, '\0', len))
    return -1;
  memcpy(buf, p, len);
  buf[len] = '\0';
  if (sscanf(buf, "chunk=%u", chunk) != 1)
    return -1;
  snprintf(canon, sizeof canon, "chunk=%u", *chunk);
  for (size_t i = 0; i < NCHUNKS; i++)
    if (chunks[i] == *chunk && !strcmp(canon, buf))
      return 0;
  return -1;
}

static calhost_status my_backend_validate_policy(calhost_plugin_instance *inst, const char *policy,
                                                 size_t length, char *err, size_t cap) {
  unsigned chunk;
  (void)inst;
  if (parse(policy, length, &chunk) == 0)
    return CALHOST_OK;
  snprintf(err, cap, "expected chunk={256,1024,4096,16384}");
  return CALHOST_INVALID_ARGUMENT;
}

static calhost_status my_backend_open_session(calhost_plugin_instance *inst,
                                              const calhost_workload *w, const calhost_target *t,
                                              calhost_session **out) {
  size_t n = elements(w);
  calhost_session *s;
  (void)t;
  if (!n)
    return CALHOST_UNSUPPORTED;
  if (!(s = calloc(1, sizeof *s)))
    return CALHOST_NO_MEMORY;
  s->host = inst->host;
  s->n = n;
  s->a = malloc(n * sizeof(float));
  s->b = malloc(n * sizeof(float));
  s->c = calloc(n, sizeof(float));
  if (!s->a || !s->b || !s->c) {
    free(s->a), free(s->b), free(s->c), free(s);
    return CALHOST_NO_MEMORY;
  }
  for (size_t i = 0; i < n; i++) {
    s->a[i] = (float)(i % 97) * 0.25f;
    s->b[i] = (float)(i % 13) - 6.0f;
  }
  *out = s;
  return CALHOST_OK;
}

static void my_backend_close_session(calhost_session *s) {
  if (s)
    free(s->a), free(s->b), free(s->c);
  free(s);
}

static calhost_status my_backend_candidate_count(calhost_session *s, uint32_t *count) {
  (void)s;
  *count = NCHUNKS;
  return CALHOST_OK;
}

static calhost_status my_backend_serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                                     size_t capacity, size_t *length) {
  char text[32];
  (void)s;
  if (index >= NCHUNKS)
    return CALHOST_INVALID_ARGUMENT;
  snprintf(text, sizeof text, "chunk=%u", chunks[index]);
  return calhost_copy_out(text, buf, capacity, length);
}

static calhost_status my_backend_default_policy(calhost_session *s, char *buf, size_t cap,
                                                size_t *len) {
  (void)s;
  return calhost_copy_out("chunk=1024", buf, cap, len);
}

static calhost_status my_backend_prepare(calhost_session *s, const char *policy, size_t length) {
  memset(s->c, 0, s->n * sizeof(float)); /* check() must see this candidate's output */
  return parse(policy, length, &s->chunk) == 0 ? CALHOST_OK : CALHOST_INVALID_ARGUMENT;
}

static calhost_status my_backend_run(calhost_session *s, uint32_t iterations,
                                     calhost_run_result *result) {
  (void)result;
  for (uint32_t it = 0; it < iterations; it++) {
    for (size_t start = 0; start < s->n; start += s->chunk) {
      size_t end = start + s->chunk < s->n ? start + s->chunk : s->n;
      for (size_t i = start; i < end; i++)
        s->c[i] = s->a[i] + s->b[i];
    }
    if (s->host->is_cancelled(s->host->context))
      return CALHOST_CANCELLED;
  }
  return CALHOST_OK;
}

static calhost_status my_backend_check(calhost_session *s, char *err, size_t cap) {
  for (size_t i = 0; i < s->n; i++)
    if (s->c[i] != s->a[i] + s->b[i]) {
      snprintf(err, cap, "element %zu is %g, expected %g", i, (double)s->c[i],
               (double)(s->a[i] + s->b[i]));
      return CALHOST_CHECK_FAILED;
    }
  return CALHOST_OK;
}

static const char *const operators[] = {"Add", NULL};

/* The vtable and the plugin's one exported symbol, calhost_plugin_negotiate.
 * CALHOST_PLUGIN_DEFINE (calhost/plugin.h) wires the required entries to the
 * my_backend_* functions above by name; the optional ones follow the
 * description. 2u: the ABI this file implements. The backend's name is the
 * third argument: rename it and the prefix together. */
CALHOST_PLUGIN_DEFINE(my_backend, 2u, "my_backend", "1", operators,
                      "template backend: float32 Add with a tunable chunk size",
                      .default_policy = my_backend_default_policy, .check = my_backend_check);
