/*
 * check.c: the conformance checker behind `calhost plugin check PATH`. Each
 * check runs in its own forked child (probe.h's calhost_run_in_child), so a
 * plugin that crashes, exits or hangs yields "FAIL name: crashed (signal 11
 * SIGSEGV)" and the remaining checks still run. Whatever the plugin writes
 * to stdout is captured and reported by the last check.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"
#include "module.h"
#include "probe.h"

typedef struct checker {
  const char *path;
  const calhost_check_options *o;
  calhost_module *m;
  calhost_plugin_vtable vt;
  uint32_t abi, pmin, pmax;
  calhost_services_hooks hooks;
  calhost_host_services svc;
  calhost_services_context sctx;
  calhost_plugin_instance *inst;
  calhost_workload w;
  calhost_target t;
  int64_t shape[16];
  char msg[2048];
} checker;

static const char digest[] =
    "sha256:4c1f0d6b0b5d3c2a9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d";
static const int target_cpus[] = {0};

void calhost_check_options_init(calhost_check_options *o) {
  memset(o, 0, sizeof *o);
  o->timeout_seconds = 30;
}

/* Appends the plugin's set_error message (if any) to c->msg. */
static int fail(checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(checker *c, const char *fmt, ...) {
  va_list ap;
  const char *e = calhost_services_take_error(&c->sctx);
  size_t n;
  va_start(ap, fmt);
  vsnprintf(c->msg, sizeof c->msg, fmt, ap);
  va_end(ap);
  n = strlen(c->msg);
  if (e && n + 4 < sizeof c->msg)
    snprintf(c->msg + n, sizeof c->msg - n, " (plugin says: %s)", e);
  return -1;
}

static int is_identity_error(const char *e) {
  return !strncmp(e, "backend name", 12) || !strncmp(e, "implementation version", 22) ||
         !strncmp(e, "the plugin lists no operators", 29) || !strncmp(e, "operator ", 9) ||
         !strncmp(e, "description", 11);
}

/* Picks the workload for the plugin's first operator (or the options'). */
static void choose_workload(checker *c) {
  const char *op = c->o->operator_name ? c->o->operator_name : c->vt.operators[0];
  size_t rank = 0;
  if (c->o->shape && c->o->shape_rank) {
    rank = c->o->shape_rank < 16 ? c->o->shape_rank : 16;
    memcpy(c->shape, c->o->shape, rank * sizeof *c->shape);
  } else if (!strcmp(op, "MatMul") || !strcmp(op, "Gemm")) {
    c->shape[0] = c->shape[1] = c->shape[2] = 32;
    rank = 3;
  } else {
    c->shape[0] = 4096;
    rank = 1;
  }
  c->w.header = (calhost_struct_header){CALHOST_STRUCT_WORKLOAD, 1, sizeof c->w};
  c->w.name = "plugin-check";
  c->w.operator_name = op;
  c->w.dtype = c->o->dtype ? c->o->dtype : "float32";
  c->w.shape = c->shape;
  c->w.shape_rank = rank;
  c->w.model_digest = digest;
  c->t.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof c->t};
  c->t.processor = "calhost-plugin-check generic processor";
  c->t.thread_count = 1;
  c->t.cpus = target_cpus;
  c->t.cpu_count = 1;
  c->t.features = "";
}

static const char *workload_text(checker *c) {
  static char buf[256];
  size_t n = (size_t)snprintf(buf, sizeof buf, "%s %s ", c->w.operator_name, c->w.dtype);
  for (size_t i = 0; i < c->w.shape_rank && n < sizeof buf; i++)
    n +=
        (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", i ? "," : "", (long long)c->w.shape[i]);
  return buf;
}

/* level 1: module + negotiation; level 2: + an instance. */
static int setup(checker *c, int level) {
  char err[1024];
  c->hooks.min_log_level = CALHOST_LOG_ERROR;
  calhost_services_init(&c->svc, &c->sctx, &c->hooks, NULL);
  if (level < 1)
    return 0;
  c->m = calhost_module_open(c->path, err, sizeof err);
  if (!c->m)
    return fail(c, "cannot load: %s", err);
  if (calhost_loader_negotiate(c->m, CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION, &c->svc, &c->vt,
                               &c->abi, &c->pmin, &c->pmax, err, sizeof err) != 0)
    return fail(c, "%s", err);
  c->sctx.backend = c->vt.backend_name;
  choose_workload(c);
  if (level < 2)
    return 0;
  calhost_status st = c->vt.create(&c->svc, NULL, 0, &c->inst);
  if (st != CALHOST_OK || !c->inst)
    return fail(c, "create() with no settings returned %s", calhost_status_name(st));
  return 0;
}

/* ---- checks ---- */

static int ck_negotiation(checker *c) {
  char err[1024];
  c->m = calhost_module_open(c->path, err, sizeof err);
  if (!c->m)
    return fail(c, "cannot load: %s", err);
  if (calhost_loader_negotiate(c->m, CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION, &c->svc, &c->vt,
                               &c->abi, &c->pmin, &c->pmax, err, sizeof err) != 0 &&
      (is_identity_error(err) || strncmp(err, "required vtable entry", 21) != 0) &&
      !is_identity_error(err))
    return fail(c, "%s", err);
  snprintf(c->msg, sizeof c->msg, "plugin supports ABI %u..%u, host %u..%u", c->pmin, c->pmax,
           CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION);
  return 0;
}

static int ck_identity(checker *c) {
  char err[1024];
  c->m = calhost_module_open(c->path, err, sizeof err);
  if (!c->m)
    return fail(c, "cannot load: %s", err);
  if (calhost_loader_negotiate(c->m, CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION, &c->svc, &c->vt,
                               &c->abi, &c->pmin, &c->pmax, err, sizeof err) != 0) {
    if (is_identity_error(err))
      return fail(c, "%s", err);
    if (strncmp(err, "required vtable entry", 21) != 0)
      return fail(c, "not run: %s", err);
  }
  if (!c->vt.description || !c->vt.description[0])
    return fail(c, "the description is empty");
  snprintf(c->msg, sizeof c->msg, "backend '%s' version '%s', first operator '%s'",
           c->vt.backend_name, c->vt.implementation_version, c->vt.operators[0]);
  return 0;
}

static int ck_required(checker *c) {
  char err[1024];
  c->m = calhost_module_open(c->path, err, sizeof err);
  if (!c->m)
    return fail(c, "cannot load: %s", err);
  if (calhost_loader_negotiate(c->m, CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION, &c->svc, &c->vt,
                               &c->abi, &c->pmin, &c->pmax, err, sizeof err) != 0)
    return fail(c, "%s%s", strncmp(err, "required vtable entry", 21) ? "not run: " : "", err);
  snprintf(c->msg, sizeof c->msg, "optional: default_policy %s, check %s",
           c->vt.default_policy ? "present" : "absent", c->vt.check ? "present" : "absent");
  return 0;
}

typedef struct key_copy {
  char digest[512], processor[512], structure[4096];
  uint32_t threads;
  size_t count;
} key_copy;

static int build(checker *c, calhost_plugin_instance *inst, key_copy *k) {
  calhost_built_key key;
  memset(&key, 0, sizeof key);
  key.header = (calhost_struct_header){CALHOST_STRUCT_BUILT_KEY, 1, sizeof key};
  calhost_status st = c->vt.build_key(inst, &c->w, &c->t, &key);
  if (st != CALHOST_OK)
    return fail(c, "build_key(%s) returned %s (choose a workload with --operator/--shape)",
                workload_text(c), calhost_status_name(st));
  memset(k, 0, sizeof *k);
  snprintf(k->digest, sizeof k->digest, "%s", key.model_digest ? key.model_digest : "");
  snprintf(k->processor, sizeof k->processor, "%s", key.processor ? key.processor : "");
  k->threads = key.thread_count;
  k->count = key.structure_count;
  for (size_t i = 0, n = 0; i < key.structure_count && key.structure && n < sizeof k->structure;
       i++)
    n += (size_t)snprintf(k->structure + n, sizeof k->structure - n, "%s=%s\x1f",
                          key.structure[i].name ? key.structure[i].name : "(null)",
                          key.structure[i].value ? key.structure[i].value : "(null)");
  return 0;
}

static int ck_key_deterministic(checker *c) {
  key_copy a, b, d;
  calhost_plugin_instance *other = NULL;
  if (build(c, c->inst, &a) || build(c, c->inst, &b))
    return -1;
  if (memcmp(&a, &b, sizeof a))
    return fail(c, "two calls with the same workload and target gave different keys");
  if (c->vt.create(&c->svc, NULL, 0, &other) != CALHOST_OK)
    return fail(c, "a second create() failed");
  int rc = build(c, other, &d);
  c->vt.destroy(other);
  if (rc)
    return -1;
  if (memcmp(&a, &d, sizeof a))
    return fail(c, "two instances gave different keys for the same workload and target");
  snprintf(c->msg, sizeof c->msg, "%s", workload_text(c));
  return 0;
}

static int one_line(const char *s) {
  for (; s && *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return 0;
  return 1;
}

static int ck_key_complete(checker *c) {
  calhost_built_key k;
  memset(&k, 0, sizeof k);
  k.header = (calhost_struct_header){CALHOST_STRUCT_BUILT_KEY, 1, sizeof k};
  calhost_status st = c->vt.build_key(c->inst, &c->w, &c->t, &k);
  if (st != CALHOST_OK)
    return fail(c, "build_key(%s) returned %s", workload_text(c), calhost_status_name(st));
  if (!k.model_digest || !k.model_digest[0])
    return fail(c, "the exact key has an empty model digest");
  if (!k.processor || !k.processor[0])
    return fail(c, "the exact key has an empty processor");
  if (k.thread_count < 1)
    return fail(c, "the exact key has thread count 0");
  if (!one_line(k.model_digest) || !one_line(k.processor))
    return fail(c, "the exact key contains a line break or control character");
  if (k.structure_count < 1 || !k.structure)
    return fail(c, "the portable key has no structural property");
  for (size_t i = 0; i < k.structure_count; i++) {
    const calhost_property *p = &k.structure[i];
    if (!p->name || !p->name[0] || !p->value)
      return fail(c, "structural property %zu has an empty name or a NULL value", i);
    if (!one_line(p->name) || !one_line(p->value))
      return fail(c, "structural property '%s' contains a line break or control character",
                  p->name);
    for (size_t j = 0; j < i; j++)
      if (!strcmp(k.structure[j].name, p->name))
        return fail(c, "structural property '%s' appears twice", p->name);
  }
  snprintf(c->msg, sizeof c->msg, "%zu structural properties, %u threads", k.structure_count,
           k.thread_count);
  return 0;
}

/* Serializes candidate index (or the default when index < 0) into a malloc'd
 * string; NULL with c->msg on failure. */
static char *policy_of(checker *c, calhost_session *s, long index, size_t *len) {
  size_t cap = 256, n = 0;
  for (int attempt = 0; attempt < 3; attempt++) {
    char *buf = malloc(cap);
    calhost_status st;
    if (!buf)
      return fail(c, "out of memory"), NULL;
    n = 0;
    st = index < 0 ? c->vt.default_policy(s, buf, cap, &n)
                   : c->vt.serialize_candidate(s, (uint32_t)index, buf, cap, &n);
    if (st == CALHOST_OK) {
      if (n >= cap || buf[n] != '\0' || strlen(buf) != n) {
        free(buf);
        return fail(c, "policy %ld: *length does not match the NUL-terminated string", index), NULL;
      }
      *len = n;
      return buf;
    }
    free(buf);
    if (st != CALHOST_BUFFER_TOO_SMALL)
      return fail(c, "serializing policy %ld returned %s", index, calhost_status_name(st)), NULL;
    if (n <= cap || n > CALHOST_POLICY_MAX_LENGTH + 1)
      return fail(c, "policy %ld: CALHOST_BUFFER_TOO_SMALL asks for %zu bytes (at most %u allowed)",
                  index, n, CALHOST_POLICY_MAX_LENGTH + 1),
             NULL;
    cap = n;
  }
  return fail(c, "policy %ld: the serializer keeps asking for a bigger buffer", index), NULL;
}

/* Checks a policy's form and that the validator accepts it. */
static int good_policy(checker *c, long index, const char *p, size_t n) {
  char err[512] = "";
  if (n == 0)
    return fail(c, "policy %ld is empty", index);
  if (n > CALHOST_POLICY_MAX_LENGTH)
    return fail(c, "policy %ld is %zu bytes, more than %u", index, n, CALHOST_POLICY_MAX_LENGTH);
  if (!one_line(p))
    return fail(c, "policy %ld contains a line break or control character", index);
  if (c->vt.validate_policy(c->inst, p, n, err, sizeof err) != CALHOST_OK)
    return fail(c, "the validator refuses policy %ld '%.80s': %s", index, p, err);
  return 0;
}

static int open_session(checker *c, calhost_session **s) {
  calhost_status st = c->vt.open_session(c->inst, &c->w, &c->t, s);
  if (st != CALHOST_OK || !*s)
    return fail(c, "open_session(%s) returned %s", workload_text(c), calhost_status_name(st));
  return 0;
}

static int ck_policy_roundtrip(checker *c) {
  calhost_session *s = NULL;
  uint32_t count = 0, n;
  if (open_session(c, &s))
    return -1;
  if (c->vt.candidate_count(s, &count) != CALHOST_OK || count == 0)
    return fail(c, "candidate_count failed or returned 0");
  n = count < 4096 ? count : 4096;
  for (uint32_t i = 0; i < n; i++) {
    size_t len;
    char *p = policy_of(c, s, i, &len);
    if (!p || good_policy(c, i, p, len)) {
      free(p);
      return -1;
    }
    free(p);
  }
  c->vt.close_session(s);
  snprintf(c->msg, sizeof c->msg, "%u of %u candidates", n, count);
  return 0;
}

static int ck_default_policy(checker *c) {
  calhost_session *s = NULL;
  size_t len;
  char *p;
  if (!c->vt.default_policy) {
    snprintf(c->msg, sizeof c->msg, "not provided (optional)");
    return 0;
  }
  if (open_session(c, &s))
    return -1;
  if (!(p = policy_of(c, s, -1, &len)) || good_policy(c, -1, p, len)) {
    free(p);
    return -1;
  }
  snprintf(c->msg, sizeof c->msg, "'%.80s'", p);
  free(p);
  c->vt.close_session(s);
  return 0;
}

/* Calls the validator on an exact-size copy (no NUL after it, so a reader
 * past length is caught by ASan); returns 1 when it accepts. */
static int accepts(checker *c, const char *bytes, size_t n) {
  char err[512];
  char *copy = malloc(n ? n : 1);
  calhost_status st;
  if (!copy)
    return 0;
  memcpy(copy, bytes, n);
  st = c->vt.validate_policy(c->inst, copy, n, err, sizeof err);
  free(copy);
  calhost_services_take_error(&c->sctx);
  return st == CALHOST_OK;
}

static int ck_refuses_empty(checker *c) {
  if (accepts(c, "", 0))
    return fail(c, "the validator accepts an empty payload");
  return 0;
}

/* The first few candidates' policies, for the payload checks. */
static int sample_policies(checker *c, char **out, size_t *lens, size_t max, size_t *count) {
  calhost_session *s = NULL;
  uint32_t total = 0;
  *count = 0;
  if (open_session(c, &s))
    return -1;
  if (c->vt.candidate_count(s, &total) != CALHOST_OK)
    return fail(c, "candidate_count failed");
  for (uint32_t i = 0; i < total && *count < max; i++) {
    char *p = policy_of(c, s, i, &lens[*count]);
    if (!p)
      return -1;
    out[(*count)++] = p;
  }
  c->vt.close_session(s);
  return 0;
}

static int ck_refuses_truncated(checker *c) {
  char *pol[8];
  size_t lens[8], count, tried = 0, accepted = 0;
  if (sample_policies(c, pol, lens, 8, &count))
    return -1;
  for (size_t i = 0; i < count; i++) {
    for (size_t k = 1; k < lens[i] && k <= 512; k++, tried++)
      accepted += (size_t)accepts(c, pol[i], k);
    free(pol[i]);
  }
  if (tried && accepted * 2 > tried)
    return fail(c, "the validator accepts %zu of %zu truncated policies", accepted, tried);
  snprintf(c->msg, sizeof c->msg,
           "%zu truncations, %zu accepted (prefixes that are themselves valid)", tried, accepted);
  return 0;
}

static int ck_refuses_random(checker *c) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  unsigned char buf[300];
  char *pol[1];
  size_t lens[1], count;
  for (int i = 0; i < 500; i++) {
    size_t n = 1 + (size_t)(i % 257);
    for (size_t j = 0; j < n; j++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      buf[j] = (unsigned char)(i < 250 ? x : 0x20 + x % 95); /* bytes, then printable text */
    }
    if (accepts(c, (const char *)buf, n) && (i < 250 || !one_line((const char *)buf)))
      return fail(c, "the validator accepts random payload %d (%zu bytes)", i, n);
  }
  if (sample_policies(c, pol, lens, 1, &count))
    return -1;
  if (count) {
    char *nl = malloc(lens[0] + 2);
    int bad = 0;
    if (nl) {
      memcpy(nl, pol[0], lens[0]);
      nl[lens[0]] = '\n';
      bad = accepts(c, nl, lens[0] + 1);
      memcpy(nl + 1, pol[0], lens[0]);
      nl[0] = '\0';
      bad = bad || accepts(c, nl, lens[0] + 1);
      free(nl);
    }
    free(pol[0]);
    if (bad)
      return fail(c, "the validator accepts a policy with a line break or NUL byte added");
  }
  snprintf(c->msg, sizeof c->msg, "500 random payloads refused");
  return 0;
}

static int try_candidate(checker *c, calhost_session *s, long index, int *checked) {
  size_t len;
  char err[512] = "";
  calhost_run_result r;
  calhost_status st;
  char *p = policy_of(c, s, index, &len);
  if (!p)
    return -1;
  st = c->vt.prepare(s, p, len);
  if (st != CALHOST_OK) {
    free(p);
    return fail(c, "prepare(policy %ld) returned %s", index, calhost_status_name(st));
  }
  for (int pass = 0; pass < 2; pass++) {
    memset(&r, 0, sizeof r);
    r.header = (calhost_struct_header){CALHOST_STRUCT_RUN_RESULT, 1, sizeof r};
    r.device_seconds = -1;
    st = c->vt.run(s, pass ? 3 : 1, &r);
    if (st != CALHOST_OK) {
      free(p);
      return fail(c, "run(policy %ld) returned %s", index, calhost_status_name(st));
    }
    if (!pass && c->vt.check) {
      st = c->vt.check(s, err, sizeof err);
      if (st != CALHOST_OK) {
        fail(c, "check(policy %ld '%.60s') returned %s: %s", index, p, calhost_status_name(st),
             err);
        free(p);
        return -1;
      }
      (*checked)++;
    }
  }
  free(p);
  return 0;
}

static int ck_tiny_sweep(checker *c) {
  calhost_session *s = NULL;
  uint32_t count = 0;
  int checked = 0, ran = 0;
  if (open_session(c, &s))
    return -1;
  if (c->vt.candidate_count(s, &count) != CALHOST_OK || count == 0)
    return fail(c, "candidate_count failed or returned 0");
  if (c->vt.default_policy) {
    if (try_candidate(c, s, -1, &checked))
      return -1;
    ran++;
  }
  for (uint32_t i = 0; i < count && i < 3; i++, ran++)
    if (try_candidate(c, s, i, &checked))
      return -1;
  c->vt.close_session(s);
  c->vt.destroy(c->inst);
  c->inst = NULL;
  snprintf(c->msg, sizeof c->msg, "%s: %d policies prepared and run, %d checked%s",
           workload_text(c), ran, checked, c->vt.check ? "" : " (no check(): unchecked)");
  return 0;
}

static const struct check {
  const char *name;
  int level;
  int (*fn)(checker *c);
} checks[] = {
    {"negotiation", 0, ck_negotiation},
    {"identity", 0, ck_identity},
    {"required_functions", 0, ck_required},
    {"key_deterministic", 2, ck_key_deterministic},
    {"key_complete", 2, ck_key_complete},
    {"policy_roundtrip", 2, ck_policy_roundtrip},
    {"default_policy", 2, ck_default_policy},
    {"validator_refuses_empty", 2, ck_refuses_empty},
    {"validator_refuses_truncated", 2, ck_refuses_truncated},
    {"validator_refuses_random", 2, ck_refuses_random},
    {"tiny_sweep", 2, ck_tiny_sweep},
};

typedef struct job {
  const char *path;
  const calhost_check_options *o;
  const struct check *check;
} job;

static void check_child(void *arg, int fd) {
  job *j = arg;
  checker *c = calloc(1, sizeof *c);
  char line[sizeof c->msg + 16];
  int rc, n;
  if (!c)
    _exit(3);
  c->path = j->path;
  c->o = j->o;
  rc = setup(c, j->check->level);
  if (rc != 0)
    n = snprintf(line, sizeof line, "Fnot run: %s", c->msg);
  else {
    rc = j->check->fn(c);
    n = snprintf(line, sizeof line, "%c%s", rc == 0 ? 'P' : 'F', c->msg);
  }
  if (n > 0 && write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
    _exit(4);
}

int calhost_plugin_check(const char *path, const calhost_check_options *o, FILE *out) {
  calhost_check_options defaults;
  FILE *capture = tmpfile();
  int cfd = capture ? fileno(capture) : -1, failed = 0, passed = 0;
  struct stat st;
  /* dlopen searches the library path for a name without a slash: always
   * hand it the absolute path of the file the user named. */
  char *real = realpath(path, NULL);
  if (real)
    path = real;
  if (!o) {
    calhost_check_options_init(&defaults);
    o = &defaults;
  }
  fprintf(out, "checking %s\n", path);
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    job j = {path, o, &checks[i]};
    char buf[2200], why[512];
    int rc;
    fflush(out);
    rc = calhost_run_in_child(check_child, &j, o->timeout_seconds, cfd, buf, sizeof buf, why,
                              sizeof why);
    if (rc == 0 && buf[0] == 'P') {
      passed++;
      if (o->verbose && buf[1])
        fprintf(out, "PASS %s (%s)\n", checks[i].name, buf + 1);
      else
        fprintf(out, "PASS %s\n", checks[i].name);
    } else {
      failed++;
      if (rc == 0 && buf[0] == 'F')
        fprintf(out, "FAIL %s: %s\n", checks[i].name, buf + 1);
      else if (buf[0])
        fprintf(out, "FAIL %s: %s: %s\n", checks[i].name, why, buf + 1);
      else
        fprintf(out, "FAIL %s: %s\n", checks[i].name, why);
    }
  }
  if (cfd >= 0 && fstat(cfd, &st) == 0 && st.st_size > 0) {
    char sample[41] = "";
    ssize_t n = pread(cfd, sample, sizeof sample - 1, 0);
    for (ssize_t k = 0; k < n; k++)
      if ((unsigned char)sample[k] < 0x20 || sample[k] == 0x7f || sample[k] == '"')
        sample[k] = '.';
    if (n >= 0)
      sample[n] = '\0';
    fprintf(out,
            "FAIL quiet_stdout: the plugin wrote %lld bytes to stdout (\"%s\"); use "
            "host->log instead\n",
            (long long)st.st_size, sample);
    failed++;
  } else {
    fprintf(out, "PASS quiet_stdout\n");
    passed++;
  }
  if (capture)
    fclose(capture);
  fprintf(out, "%d of %d checks passed\n", passed, passed + failed);
  free(real);
  return failed ? 1 : 0;
}
