/*
 * record.c: profile records (cs_prof): checking keys, measurements and
 * policies against what the version-1 format can carry, building the
 * single-allocation immutable record, reference counting, and the identity
 * hash (FNV-1a) and equality used by the indexes.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

calstore_status cs_fail(calstore_error *err, calstore_status status, unsigned line,
                        const char *path, const char *fmt, ...) {
  if (!err)
    return status;
  err->status = status;
  err->line = line;
  snprintf(err->path, sizeof err->path, "%s", path ? path : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return status;
}

int cs_has_line_break(const char *s, size_t n) {
  /* only LF ends a line of the format: a CR inside a quoted value is
   * carried as it is (both readers load it), so the writer accepts it */
  return memchr(s, '\n', n) != NULL;
}

/* Checks one required string field. */
static calstore_status check_field(const char *name, const char *v, char *msg, size_t cap) {
  if (!v || !v[0]) {
    snprintf(msg, cap, "key field %s is missing or empty", name);
    return CALSTORE_INVALID_ARGUMENT;
  }
  if (cs_has_line_break(v, strlen(v))) {
    snprintf(msg, cap, "key field %s contains a line break, which the store format cannot carry",
             name);
    return CALSTORE_INVALID_ARGUMENT;
  }
  return CALSTORE_OK;
}

int cs_sort_properties(calstore_property *p, size_t n) {
  for (size_t i = 1; i < n; i++) {
    calstore_property t = p[i];
    size_t j = i;
    while (j > 0 && strcmp(p[j - 1].name, t.name) > 0) {
      p[j] = p[j - 1];
      j--;
    }
    p[j] = t;
  }
  for (size_t i = 1; i < n; i++)
    if (!strcmp(p[i - 1].name, p[i].name))
      return 1;
  return 0;
}

calstore_status cs_check_key(const calstore_key *key, char *msg, size_t cap) {
  calstore_status st;
  if (!key) {
    snprintf(msg, cap, "key is NULL");
    return CALSTORE_INVALID_ARGUMENT;
  }
  if ((st = check_field("backend", key->backend, msg, cap)) ||
      (st = check_field("operator_name", key->operator_name, msg, cap)) ||
      (st = check_field("implementation", key->implementation, msg, cap)))
    return st;
  if (key->kind == CALSTORE_KEY_EXACT) {
    if (key->structure_count || key->structure) {
      snprintf(msg, cap, "an exact key must not carry structural properties");
      return CALSTORE_INVALID_ARGUMENT;
    }
    if ((st = check_field("model_digest", key->model_digest, msg, cap)) ||
        (st = check_field("processor", key->processor, msg, cap)))
      return st;
    if (key->thread_count < 1) {
      snprintf(msg, cap, "an exact key needs thread_count >= 1");
      return CALSTORE_INVALID_ARGUMENT;
    }
    return CALSTORE_OK;
  }
  if (key->kind != CALSTORE_KEY_PORTABLE) {
    snprintf(msg, cap, "key kind %d is neither exact nor portable", (int)key->kind);
    return CALSTORE_INVALID_ARGUMENT;
  }
  if (key->model_digest || key->processor || key->thread_count) {
    snprintf(msg, cap,
             "a portable key must not carry model_digest, processor or thread_count (mixed key)");
    return CALSTORE_INVALID_ARGUMENT;
  }
  if (!key->structure_count || !key->structure) {
    snprintf(msg, cap, "a portable key needs at least one structural property");
    return CALSTORE_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < key->structure_count; i++) {
    const calstore_property *p = &key->structure[i];
    if (!p->name || !p->name[0] || !p->value) {
      snprintf(msg, cap, "structural property %lu has no name or value", (unsigned long)i);
      return CALSTORE_INVALID_ARGUMENT;
    }
    if (cs_has_line_break(p->name, strlen(p->name)) ||
        cs_has_line_break(p->value, strlen(p->value))) {
      snprintf(msg, cap,
               "structural property '%s' contains a line break, which the store format cannot "
               "carry",
               p->name);
      return CALSTORE_INVALID_ARGUMENT;
    }
    for (size_t j = 0; j < i; j++)
      if (!strcmp(key->structure[j].name, p->name)) {
        snprintf(msg, cap, "structural property '%s' appears twice", p->name);
        return CALSTORE_INVALID_ARGUMENT;
      }
  }
  return CALSTORE_OK;
}

calstore_status cs_check_measurements(const calstore_measurement *m, size_t n, char *msg,
                                      size_t cap) {
  if (n && !m) {
    snprintf(msg, cap, "measurements is NULL with a count of %lu", (unsigned long)n);
    return CALSTORE_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < n; i++) {
    if (!m[i].name || !m[i].name[0]) {
      snprintf(msg, cap, "measurement %lu has an empty name", (unsigned long)i);
      return CALSTORE_INVALID_ARGUMENT;
    }
    if (!m[i].unit) {
      snprintf(msg, cap, "measurement '%s' has a NULL unit (use \"\")", m[i].name);
      return CALSTORE_INVALID_ARGUMENT;
    }
    if (!isfinite(m[i].value)) {
      snprintf(msg, cap, "measurement '%s' is not finite", m[i].name);
      return CALSTORE_INVALID_ARGUMENT;
    }
    if (cs_has_line_break(m[i].name, strlen(m[i].name)) ||
        cs_has_line_break(m[i].unit, strlen(m[i].unit))) {
      snprintf(msg, cap, "measurement '%s' contains a line break", m[i].name);
      return CALSTORE_INVALID_ARGUMENT;
    }
  }
  return CALSTORE_OK;
}

calstore_status cs_check_policy(const char *policy, size_t length, char *msg, size_t cap) {
  if (!policy || length == 0) {
    snprintf(msg, cap, "the policy is empty");
    return CALSTORE_INVALID_ARGUMENT;
  }
  if (memchr(policy, '\0', length)) {
    snprintf(msg, cap, "the policy contains a NUL byte, which the store format cannot carry");
    return CALSTORE_INVALID_ARGUMENT;
  }
  if (cs_has_line_break(policy, length)) {
    snprintf(msg, cap, "the policy contains a line break, which the store format cannot carry");
    return CALSTORE_INVALID_ARGUMENT;
  }
  return CALSTORE_OK;
}

static uint64_t identity_from(uint64_t bo, const calstore_key *key, calstore_source source);

/* Bump allocator over the record's trailing bytes. */
typedef struct carve {
  char *p;
} carve;

static const char *carve_str(carve *c, const char *s, size_t n) {
  char *d = c->p;
  memcpy(d, s, n);
  d[n] = '\0';
  c->p += n + 1;
  return d;
}

static size_t slen(const char *s) {
  return s ? strlen(s) + 1 : 0;
}

cs_prof *cs_prof_create(const calstore_key *key, calstore_source source,
                        const calstore_measurement *m, size_t n, const char *policy,
                        size_t policy_length, const char *text, size_t text_len, cs_blob *blob) {
  cs_buf rendered = {0};
  if (!text)
    blob = NULL;
  calstore_property local[16], *sorted = local;
  if (!text) { /* render the canonical text from the inputs first */
    size_t sn = key->structure_count;
    if (sn > 16 && !(sorted = malloc(sn * sizeof *sorted)))
      return NULL;
    for (size_t i = 0; i < sn; i++)
      sorted[i] = key->structure[i];
    cs_sort_properties(sorted, sn);
    calstore_profile view = {*key, source, m, n, policy, policy_length};
    view.key.structure = sn ? sorted : NULL;
    cs_write_prof(&rendered, &view);
    if (sorted != local)
      free(sorted);
    if (rendered.oom || !rendered.data) {
      cs_buf_free(&rendered);
      return NULL;
    }
    text = rendered.data;
    text_len = rendered.len;
  }
  size_t lb = strlen(key->backend), lo = strlen(key->operator_name),
         li = strlen(key->implementation);
  size_t ld = key->model_digest ? strlen(key->model_digest) : 0,
         lp = key->processor ? strlen(key->processor) : 0;
  size_t strings = lb + lo + li + 3 + (key->model_digest ? ld + 1 : 0) +
                   (key->processor ? lp + 1 : 0) + policy_length + 1 + (blob ? 0 : text_len + 1);
  for (size_t i = 0; i < key->structure_count; i++)
    strings += slen(key->structure[i].name) + slen(key->structure[i].value);
  for (size_t i = 0; i < n; i++)
    strings += slen(m[i].name) + slen(m[i].unit);
  size_t head = sizeof(cs_prof);
  size_t total = head + n * sizeof(calstore_measurement) +
                 key->structure_count * sizeof(calstore_property) + strings;
  cs_prof *p = malloc(total);
  if (!p) {
    cs_buf_free(&rendered);
    return NULL;
  }
  memset(p, 0, sizeof *p);
  calstore_measurement *mm = (calstore_measurement *)((char *)p + head);
  calstore_property *pp = (calstore_property *)(mm + n);
  carve c = {(char *)(pp + key->structure_count)};
  p->refs = 1;
  p->v.source = source;
  p->v.key.kind = key->kind;
  p->v.key.backend = carve_str(&c, key->backend, lb);
  p->v.key.operator_name = carve_str(&c, key->operator_name, lo);
  p->v.key.implementation = carve_str(&c, key->implementation, li);
  if (key->model_digest)
    p->v.key.model_digest = carve_str(&c, key->model_digest, ld);
  if (key->processor)
    p->v.key.processor = carve_str(&c, key->processor, lp);
  p->v.key.thread_count = key->thread_count;
  for (size_t i = 0; i < key->structure_count; i++) {
    pp[i].name = carve_str(&c, key->structure[i].name, strlen(key->structure[i].name));
    pp[i].value = carve_str(&c, key->structure[i].value, strlen(key->structure[i].value));
  }
  if (key->structure_count) {
    cs_sort_properties(pp, key->structure_count);
    p->v.key.structure = pp;
    p->v.key.structure_count = key->structure_count;
  }
  for (size_t i = 0; i < n; i++) {
    mm[i].name = carve_str(&c, m[i].name, strlen(m[i].name));
    mm[i].unit = carve_str(&c, m[i].unit, strlen(m[i].unit));
    mm[i].value = m[i].value;
  }
  p->v.measurements = n ? mm : NULL;
  p->v.measurement_count = n;
  p->v.policy = carve_str(&c, policy, policy_length);
  p->v.policy_length = policy_length;
  if (blob) {
    p->text = text;
    p->blob = blob;
    __atomic_fetch_add(&blob->refs, 1, __ATOMIC_RELAXED);
  } else {
    p->text = carve_str(&c, text, text_len);
  }
  p->text_len = text_len;
  cs_buf_free(&rendered);
  p->bo_hash = cs_bo_hash(p->v.key.backend, p->v.key.operator_name);
  p->id_hash = identity_from(p->bo_hash, &p->v.key, source);
  return p;
}

void cs_prof_ref(cs_prof *p) {
  __atomic_fetch_add(&p->refs, 1, __ATOMIC_RELAXED);
}

void cs_prof_unref(cs_prof *p) {
  if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    cs_blob_unref(p->blob);
    free(p); /* one block: view, strings and (unless in a blob) text */
  }
}

cs_blob *cs_blob_new(char *data) {
  cs_blob *b = malloc(sizeof *b);
  if (!b) {
    free(data);
    return NULL;
  }
  b->refs = 1;
  b->data = data;
  return b;
}

void cs_blob_unref(cs_blob *b) {
  if (b && __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    free(b->data);
    free(b);
  }
}

/* A word-at-a-time multiplicative hash (no cryptographic strength needed:
 * the table is in memory and probes compare the full key). */
#define H_SEED 0x9e3779b97f4a7c15ull
#define H_MUL 0xff51afd7ed558ccdull

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v;
  h *= H_MUL;
  return h ^ (h >> 32);
}

static uint64_t hash_str(uint64_t h, const char *s) {
  size_t n = s ? strlen(s) : 0;
  const char *p = s;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = mix(h, w);
  }
  uint64_t tail = 0;
  if (n)
    memcpy(&tail, p, n);
  h = mix(h, tail ^ ((uint64_t)n << 56) ^ (s ? 0 : 0xa5));
  return h;
}

uint64_t cs_bo_hash(const char *backend, const char *op) {
  return hash_str(hash_str(H_SEED, backend), op);
}

/* Identity hash, given the (backend, operator) hash. */
static uint64_t identity_from(uint64_t bo, const calstore_key *key, calstore_source source) {
  uint64_t h = mix(bo, ((uint64_t)key->kind << 8) | (uint64_t)source);
  h = hash_str(h, key->implementation);
  if (key->kind == CALSTORE_KEY_EXACT) {
    h = hash_str(h, key->model_digest);
    h = hash_str(h, key->processor);
    h = mix(h, key->thread_count);
  } else {
    for (size_t i = 0; i < key->structure_count; i++) {
      h = hash_str(h, key->structure[i].name);
      h = hash_str(h, key->structure[i].value);
    }
  }
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 31);
}

uint64_t cs_identity_hash(const calstore_key *key, calstore_source source) {
  return identity_from(cs_bo_hash(key->backend, key->operator_name), key, source);
}

static int streq(const char *a, const char *b) {
  if (!a || !b)
    return a == b;
  return !strcmp(a, b);
}

int cs_key_equal(const calstore_key *a, const calstore_key *b) {
  if (a->kind != b->kind || !streq(a->backend, b->backend) ||
      !streq(a->operator_name, b->operator_name) || !streq(a->implementation, b->implementation))
    return 0;
  if (a->kind == CALSTORE_KEY_EXACT)
    return a->thread_count == b->thread_count && streq(a->model_digest, b->model_digest) &&
           streq(a->processor, b->processor);
  if (a->structure_count != b->structure_count)
    return 0;
  for (size_t i = 0; i < a->structure_count; i++)
    if (!streq(a->structure[i].name, b->structure[i].name) ||
        !streq(a->structure[i].value, b->structure[i].value))
      return 0;
  return 1;
}
