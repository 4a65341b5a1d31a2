/*
 * checks.c: the conformance checks of `calhost plugin check` (checker.h):
 * the set-up a check needs (services, negotiation, an instance, a device)
 * and the checks themselves, each run in its own child by check.c, and the
 * two that read the file without running it (the ELF reader is elf_exports.c).
 */
#define _GNU_SOURCE
#include "checker.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "elf_exports.h"
#include "isolate/codec.h"
#include "runtime/binding.h"
#include "sweep/measure.h"
#include "sweep/records.h"

static const char digest[] =
    "sha256:4c1f0d6b0b5d3c2a9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d";

/* The check's failure in c->msg, followed by " (plugin says: SAID)" when
 * the plugin said something (said NULL or ""). Returns -1. */
static int vfail_said(checker *c, const char *said, const char *fmt, va_list ap) {
  vsnprintf(c->msg, sizeof c->msg, fmt, ap);
  size_t n = strlen(c->msg);
  if (said && *said && n + 4 < sizeof c->msg)
    snprintf(c->msg + n, sizeof c->msg - n, " (plugin says: %s)", said);
  return -1;
}

/* As vfail_said, with the message the plugin already gave (e.g. the detail
 * of runtime_binding_build_key). */
static int fail_said(checker *c, const char *said, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_said(checker *c, const char *said, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail_said(c, said, fmt, ap);
  va_end(ap);
  return -1;
}

/* Appends the plugin's set_error message (if any) to c->msg. */
static int fail(checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(checker *c, const char *fmt, ...) {
  va_list ap;
  const char *e = loader_services_take_error(&c->rec.services_ctx);
  va_start(ap, fmt);
  vfail_said(c, e, fmt, ap);
  va_end(ap);
  return -1;
}

/* The plugin's first sample workload (ABI 2 sample_workloads, smallest
 * first) of operator op (NULL: any), or NULL. */
static const calhost_workload *declared_sample(const checker *c, const char *op) {
  /* data, not an entry: the copy is zero past the plugin's struct_size,
   * and negotiation checked the list */
  if (c->abi < 2 || !c->vt.sample_workloads)
    return NULL;
  for (size_t i = 0; i < 64 && c->vt.sample_workloads[i]; i++)
    if (!op || !strcmp(c->vt.sample_workloads[i]->operator_name, op))
      return c->vt.sample_workloads[i];
  return NULL;
}

/* Picks the workload: the options' shape; else the plugin's declared
 * sample workload (of the options' operator, if given); else a guess for
 * the plugin's first operator (or the options'). */
static void choose_workload(checker *c) {
  const char *op = c->o->operator_name ? c->o->operator_name : c->vt.operators[0];
  const calhost_workload *sample =
      c->o->shape && c->o->shape_rank ? NULL : declared_sample(c, c->o->operator_name);
  size_t rank = 0;
  if (sample) {
    op = sample->operator_name;
    rank = sample->shape_rank < 16 ? sample->shape_rank : 16;
    if (rank)
      memcpy(c->shape, sample->shape, rank * sizeof *c->shape);
  } else if (c->o->shape && c->o->shape_rank) {
    rank = c->o->shape_rank < 16 ? c->o->shape_rank : 16;
    memcpy(c->shape, c->o->shape, rank * sizeof *c->shape);
  } else if (!strcmp(op, "MatMul") || !strcmp(op, "Gemm")) {
    c->shape[0] = c->shape[1] = c->shape[2] = 32;
    rank = 3;
  } else if (!strcmp(op, "Transpose")) {
    c->shape[0] = c->shape[1] = 64;
    rank = 2;
  } else if (!strcmp(op, "Conv")) {
    c->shape[0] = 1; /* N, C, H, W */
    c->shape[1] = 8;
    c->shape[2] = c->shape[3] = 16;
    rank = 4;
  } else {
    c->shape[0] = 4096;
    rank = 1;
  }
  c->w.header = (calhost_struct_header){CALHOST_STRUCT_WORKLOAD, 1, sizeof c->w};
  c->w.name = "plugin-check";
  c->w.operator_name = op;
  c->w.dtype = c->o->dtype ? c->o->dtype : sample && sample->dtype ? sample->dtype : "float32";
  c->w.shape = c->shape;
  c->w.shape_rank = rank;
  c->w.model_digest = digest;
  if (sample) { /* its structure too (static data of the plugin) */
    c->w.name = sample->name;
    c->w.properties = sample->properties;
    c->w.property_count = sample->property_count;
  }
  c->t.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof c->t};
  c->t.processor = "calhost-plugin-check generic processor";
  c->t.thread_count = c->o->thread_count ? c->o->thread_count : 1;
  if (c->t.thread_count > sizeof c->cpus / sizeof c->cpus[0])
    c->t.thread_count = sizeof c->cpus / sizeof c->cpus[0];
  for (uint32_t i = 0; i < c->t.thread_count; i++)
    c->cpus[i] = (int)i;
  c->t.cpus = c->cpus;
  c->t.cpu_count = c->t.thread_count;
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

/* The plugin's log messages go to the parent as records (shown there). */
static void child_log(void *user, const char *backend, calhost_log_level level,
                      const char *message) {
  checker *c = user;
  isolate_proto_buf b = {0};
  (void)backend;
  isolate_rec_put_check_log(&b, level, message);
  isolate_proto_send(c->fd, &b);
  isolate_proto_buf_free(&b);
}

/* Opens the module and negotiates: a CALHOST_NEGOTIATE_* result (a module
 * that cannot be opened is CALHOST_NEGOTIATE_FAILED), the reason in err. */
static int open_and_negotiate(checker *c, char *err, size_t cap) {
  char why[768]; /* leaves room for the prefix in err */
  c->m = loader_module_open(c->path, why, sizeof why);
  if (!c->m) {
    snprintf(err, cap, "cannot load: %s", why);
    return CALHOST_NEGOTIATE_FAILED;
  }
  int rc = loader_negotiate(c->m, CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION, &c->svc, &c->vt,
                            &c->abi, &c->pmin, &c->pmax, err, cap);
  if (c->vt.backend_name)
    c->rec.services_ctx.backend = c->vt.backend_name;
  return rc;
}

/* create() with the options' settings (--setting). */
static calhost_status create_instance(checker *c, calhost_plugin_instance **inst) {
  return c->vt.create(&c->svc, c->o->settings, c->o->setting_count, inst);
}

/* "with no settings" or "with the settings K=V, ..." into buf. */
static const char *settings_text(const checker *c, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "%s",
                              c->o->setting_count ? "with the settings " : "with no settings");
  for (size_t i = 0; i < c->o->setting_count && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", i ? ", " : "", c->o->settings[i].name,
                          c->o->settings[i].value);
  return buf;
}

/* The negotiated plugin as the loader's record, for the host's code that
 * calls a plugin through one (the device listing, the binding's key
 * builder): its vtable, ABI and backend, and the services context the
 * plugin reports its errors to. */
static loader_plugin *record(checker *c) {
  c->rec.loaded = 1;
  c->rec.vtable = c->vt;
  c->rec.abi_version = c->abi;
  c->rec.backend = (char *)c->vt.backend_name;
  return &c->rec;
}

/* The instance's devices through the host's one listing (runtime/devices.h:
 * identities non-empty, printable, unique indices), into *out. */
static int list_devices(checker *c, runtime_device_list *out, char *why, size_t cap) {
  return runtime_devices_list(record(c), c->inst, out, why, cap);
}

/* The checks' device: the first listed device that the devices setting
 * selects (runtime_devices_find: an index or an identity), device 0 without
 * one. -1 with why when an item names no device (calibrate fails the
 * plugin then). */
static int select_device(checker *c, char *why, size_t cap) {
  size_t first = c->devices.count;
  c->device = 0;
  for (size_t k = 0; k < c->o->device_count; k++) {
    char m[800];
    const runtime_device *d = runtime_devices_find(&c->devices, c->o->devices[k], m, sizeof m);
    if (!d) {
      snprintf(why, cap, "--setting devices: %s", m);
      return -1;
    }
    if ((size_t)(d - c->devices.items) < first)
      first = (size_t)(d - c->devices.items);
  }
  if (first < c->devices.count)
    c->device = first;
  return 0;
}

/* check_setup (checker.h). */
int check_setup(checker *c, int level) {
  char err[1024];
  c->hooks.user = c;
  c->hooks.log = child_log;
  c->hooks.min_log_level = CALHOST_LOG_DEBUG; /* the parent filters */
  loader_services_init(&c->svc, &c->rec.services_ctx, &c->hooks, NULL);
  if (level < 1)
    return 0;
  if (open_and_negotiate(c, err, sizeof err) != CALHOST_NEGOTIATE_OK)
    return fail(c, "%s", err);
  choose_workload(c);
  if (level < 2)
    return 0;
  char said[512];
  calhost_status st = create_instance(c, &c->inst);
  if (st != CALHOST_OK || !c->inst)
    return fail(c, "create() %s returned %s", settings_text(c, said, sizeof said),
                calhost_status_name(st));
  c->device_backend = CALHOST_VTABLE_CALLABLE(&c->vt, c->abi, device_count) &&
                      CALHOST_VTABLE_CALLABLE(&c->vt, c->abi, list_device);
  if (c->device_backend) {
    if (list_devices(c, &c->devices, err, sizeof err) != 0)
      return fail(c, "listing the devices: %s", err);
    /* a device backend with no device here (no OpenCL platform): the checks
     * that run it are skipped, saying why, rather than failed */
    if (!c->devices.count) {
      snprintf(c->msg, sizeof c->msg, "%s has no device on this machine",
               c->vt.backend_name ? c->vt.backend_name : "the plugin");
      return SETUP_NO_DEVICE;
    }
    if (select_device(c, err, sizeof err) != 0)
      return fail(c, "%s", err);
    const runtime_device *d = &c->devices.items[c->device];
    c->t.device_identity = d->identity; /* a device target, as plugin.h describes it */
    c->t.device_index = d->index;
    c->t.processor = d->identity;
  }
  return 0;
}

/* The target in words: "device 0 'NAME'" or "t=N" (for the messages). */
static const char *target_text(const checker *c, char *buf, size_t cap) {
  if (c->t.device_identity)
    snprintf(buf, cap, "device %u '%.80s'", c->t.device_index, c->devices.items[c->device].name);
  else
    snprintf(buf, cap, "t=%u", c->t.thread_count);
  return buf;
}

/* ---- checks ---- */

static int ck_negotiation(checker *c) {
  char err[1024];
  if (open_and_negotiate(c, err, sizeof err) == CALHOST_NEGOTIATE_FAILED)
    return fail(c, "%s", err); /* identity and entries have their own checks */
  snprintf(c->msg, sizeof c->msg, "plugin supports ABI %u..%u, host %u..%u", c->pmin, c->pmax,
           CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION);
  return 0;
}

static int ck_identity(checker *c) {
  char err[1024];
  int rc = open_and_negotiate(c, err, sizeof err);
  if (rc == CALHOST_NEGOTIATE_BAD_IDENTITY)
    return fail(c, "%s", err);
  if (rc == CALHOST_NEGOTIATE_FAILED)
    return fail(c, "not run: %s", err);
  if (!c->vt.description || !c->vt.description[0])
    return fail(c, "the description is empty");
  snprintf(c->msg, sizeof c->msg, "backend '%s' version '%s', first operator '%s'",
           c->vt.backend_name, c->vt.implementation_version, c->vt.operators[0]);
  c->backend = c->vt.backend_name;
  return 0;
}

static int ck_required(checker *c) {
  char err[1024];
  int rc = open_and_negotiate(c, err, sizeof err);
  if (rc != CALHOST_NEGOTIATE_OK)
    return fail(c, "%s%s", rc == CALHOST_NEGOTIATE_MISSING_ENTRY ? "" : "not run: ", err);
  snprintf(c->msg, sizeof c->msg, "optional: default_policy %s, check %s",
           CALHOST_VTABLE_CALLABLE(&c->vt, c->abi, default_policy) ? "present" : "absent",
           CALHOST_VTABLE_CALLABLE(&c->vt, c->abi, check) ? "present" : "absent");
  return 0;
}

/* Whether the binding's answer d is build_key's own failure (not a key). */
static int build_failed(runtime_binding_key_defect d) {
  return d == RUNTIME_BINDING_KEY_UNSUPPORTED || d == RUNTIME_BINDING_KEY_BUILD_FAILED;
}

/* build_key of the checker's workload and target on inst into *k (the
 * plugin's, valid until its next call; usable or not: key_complete judges
 * it) through the binding's one key builder (twice: with its build-twice
 * check), the binding's answer in *d, the plugin's status in *st and its
 * words in said. When build_key itself failed, fails the check with
 * "build_key(WORKLOAD) returned STATUS" and `after`, and returns -1. */
static int build_as(checker *c, calhost_plugin_instance *inst, int twice, calhost_built_key *k,
                    runtime_binding_key_defect *d, calhost_status *st, char *said, size_t cap,
                    const char *after) {
  *d = runtime_binding_build_key(record(c), inst, &c->w, &c->t, twice, k, st, said, cap);
  if (build_failed(*d))
    return fail_said(c, said, "build_key(%s) returned %s%s", workload_text(c),
                     calhost_status_name(*st), after);
  return 0;
}

/* build_as once, with the hint a failure on the default workload needs. */
static int build(checker *c, calhost_plugin_instance *inst, calhost_built_key *k) {
  char said[1024];
  calhost_status st;
  runtime_binding_key_defect d;
  return build_as(c, inst, 0, k, &d, &st, said, sizeof said,
                  " (choose a workload with --operator/--shape)");
}

/* A device backend's devices (ABI 2 device_count and list_device): listed
 * twice alike (index, identity and name: the identity is part of every
 * key), each identity and name printable (the host's one listing rule), a
 * key built for each as calibrate would; the other checks run on device 0
 * (or the first device `--setting devices=...` selects).
 * A backend without the entries passes with CPU targets. */
static int ck_devices(checker *c) {
  char why[1024];
  if (!c->device_backend) {
    snprintf(c->msg, sizeof c->msg, "not a device backend (optional, ABI 2): CPU targets");
    return 0;
  }
  runtime_device_list again;
  if (list_devices(c, &again, why, sizeof why) != 0)
    return fail(c, "the second listing failed: %s", why);
  int rc = 0;
  if (again.count != c->devices.count)
    rc = fail(c, "device_count gave %zu devices, then %zu", c->devices.count, again.count);
  for (size_t i = 0; !rc && i < again.count; i++) {
    const runtime_device *a = &c->devices.items[i], *b = &again.items[i];
    if (a->index != b->index || strcmp(a->identity, b->identity) || strcmp(a->name, b->name))
      rc = fail(c,
                "device %zu changed between two listings: index %u identity '%.120s' name "
                "'%.60s', then index %u identity '%.120s' name '%.60s' (the identity is part of "
                "every key: it must be stable)",
                i, a->index, a->identity, a->name, b->index, b->identity, b->name);
  }
  runtime_device_list_free(&again);
  if (rc)
    return -1;
  calhost_target saved = c->t;
  size_t n = (size_t)snprintf(c->msg, sizeof c->msg,
                              "%zu device%s listed twice alike, a key for each:", c->devices.count,
                              c->devices.count == 1 ? "" : "s");
  for (size_t i = 0; i < c->devices.count; i++) {
    const runtime_device *d = &c->devices.items[i];
    calhost_built_key k;
    c->t.device_identity = d->identity;
    c->t.device_index = d->index;
    c->t.processor = d->identity;
    if (build(c, c->inst, &k) != 0) {
      char text[sizeof c->msg];
      memcpy(text, c->msg, sizeof text);
      c->t = saved;
      return fail(c, "device %u '%.80s': %.1800s", d->index, d->name, text);
    }
    if (n < sizeof c->msg)
      n += (size_t)snprintf(c->msg + n, sizeof c->msg - n, "%s %u '%.60s'", i ? "," : "", d->index,
                            d->name);
  }
  c->t = saved;
  if (n < sizeof c->msg)
    snprintf(c->msg + n, sizeof c->msg - n, "; the checks ran on device %u", c->t.device_index);
  return 0;
}

/* Builds the key again on inst and compares it with *a (the host's one
 * rule, base_key_differs); fails with the difference. */
static int same_again(checker *c, calhost_plugin_instance *inst, const sweep_record_key *a,
                      const char *what) {
  calhost_built_key key;
  char diff[480] = "";
  calhost_status st;
  runtime_binding_key_defect d;
  if (build_as(c, inst, 0, &key, &d, &st, diff, sizeof diff, " the second time"))
    return -1;
  if (base_key_differs(a, &key, diff, sizeof diff))
    return fail(c, "%s gave different keys for the same workload and target: %s", what, diff);
  return 0;
}

/* Two calls on one instance (the binding's build-twice check, as calibrate
 * makes it), then a second instance, each giving the same key. */
static int ck_key_deterministic(checker *c) {
  calhost_built_key k;
  calhost_status st;
  char why[480];
  runtime_binding_key_defect d;
  if (build_as(c, c->inst, 1, &k, &d, &st, why, sizeof why,
               " (choose a workload with --operator/--shape)"))
    return -1;
  if (d == RUNTIME_BINDING_KEY_NOT_DETERMINISTIC && st != CALHOST_OK)
    return fail(c, "build_key(%s) returned %s the second time", workload_text(c),
                calhost_status_name(st)); /* the plugin's message is still in its slot */
  if (d == RUNTIME_BINDING_KEY_NOT_DETERMINISTIC)
    return fail(c, "two calls gave different keys for the same workload and target: %s", why);
  if (d == RUNTIME_BINDING_KEY_NO_MEMORY)
    return fail(c, "out of memory");
  sweep_record_key a; /* the key to compare the other instance's with */
  if (base_key_copy(&k, &a) != 0)
    return fail(c, "out of memory");
  /* an unusable key (key_complete says what it lacks) is not compared by
   * the binding: compare it here */
  int rc = d == RUNTIME_BINDING_KEY_USABLE ? 0 : same_again(c, c->inst, &a, "two calls");
  calhost_plugin_instance *other = NULL;
  if (!rc && create_instance(c, &other) != CALHOST_OK)
    rc = fail(c, "a second create() failed");
  if (!rc) {
    rc = same_again(c, other, &a, "two instances");
    c->vt.destroy(other);
  }
  base_key_free(&a);
  if (rc)
    return -1;
  snprintf(c->msg, sizeof c->msg, "%s", workload_text(c));
  return 0;
}

static int ck_key_complete(checker *c) {
  calhost_built_key k;
  calhost_status st;
  char said[1024];
  runtime_binding_key_defect defect;
  if (build_as(c, c->inst, 0, &k, &defect, &st, said, sizeof said, ""))
    return -1;
  /* the binding's rule of a usable key, each defect in its own words; what
   * a run does not require (one line, unique names) is checked here */
  size_t empty = 0;
  if (defect == RUNTIME_BINDING_KEY_EMPTY_PROPERTY)
    runtime_binding_key_defect_of(&k, &empty); /* which property */
  if (defect == RUNTIME_BINDING_KEY_NO_MODEL_DIGEST)
    return fail(c, "the exact key has an empty model digest");
  if (defect == RUNTIME_BINDING_KEY_NO_PROCESSOR)
    return fail(c, "the exact key has an empty processor");
  if (defect == RUNTIME_BINDING_KEY_NO_THREADS)
    return fail(c, "the exact key has thread count 0");
  if (!base_str_one_line(k.model_digest) || !base_str_one_line(k.processor))
    return fail(c, "the exact key contains a line break or control character");
  if (defect == RUNTIME_BINDING_KEY_NO_STRUCTURE)
    return fail(c, "the portable key has no structural property");
  for (size_t i = 0; i < k.structure_count; i++) {
    const calhost_property *p = &k.structure[i];
    if (defect == RUNTIME_BINDING_KEY_EMPTY_PROPERTY && i == empty)
      return fail(c, "structural property %zu has an empty name or a NULL value", i);
    if (!base_str_one_line(p->name) || !base_str_one_line(p->value))
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

/* "candidate N", or "the default policy" for index < 0, in buf. */
static const char *which(long index, char *buf, size_t cap) {
  if (index < 0)
    snprintf(buf, cap, "the default policy");
  else
    snprintf(buf, cap, "candidate %ld", index);
  return buf;
}

/* Serializes candidate index (or the default when index < 0) into a malloc'd
 * string; NULL with c->msg on failure. */
static char *policy_of(checker *c, calhost_session *s, long index, size_t *len) {
  size_t cap = 256, n = 0;
  char w[48];
  const char *fn = index < 0 ? "default_policy" : "serialize_candidate";
  which(index, w, sizeof w);
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
        return fail(c, "%s: *length does not match the NUL-terminated string", w), NULL;
      }
      *len = n;
      return buf;
    }
    free(buf);
    if (st != CALHOST_BUFFER_TOO_SMALL)
      return fail(c, "%s: %s returned %s", w, fn, calhost_status_name(st)), NULL;
    if (n <= cap)
      return fail(c,
                  "%s: %s returned CALHOST_BUFFER_TOO_SMALL for a %zu-byte buffer but asks for "
                  "%zu bytes (it must ask for more than it was given: the length + 1 for the "
                  "NUL)",
                  w, fn, cap, n),
             NULL;
    if (n > CALHOST_POLICY_MAX_LENGTH + 1)
      return fail(c,
                  "%s: %s returned CALHOST_BUFFER_TOO_SMALL asking for %zu bytes, more than the "
                  "largest policy (%u bytes and the NUL)",
                  w, fn, n, CALHOST_POLICY_MAX_LENGTH),
             NULL;
    cap = n;
  }
  return fail(c, "%s: %s keeps asking for a bigger buffer", w, fn), NULL;
}

/* Checks a policy's form and that the validator accepts it. */
static int good_policy(checker *c, long index, const char *p, size_t n) {
  char err[512] = "", w[48];
  which(index, w, sizeof w);
  if (n == 0)
    return fail(c, "%s is empty", w);
  if (n > CALHOST_POLICY_MAX_LENGTH)
    return fail(c, "%s is %zu bytes, more than %u", w, n, CALHOST_POLICY_MAX_LENGTH);
  if (!base_str_one_line(p))
    return fail(c, "%s contains a line break or control character", w);
  if (c->vt.validate_policy(c->inst, p, n, err, sizeof err) != CALHOST_OK)
    return fail(c, "the validator refuses %s '%.80s': %s", w, p, err);
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
  if (!CALHOST_VTABLE_CALLABLE(&c->vt, c->abi, default_policy)) {
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

/* Serializes assignment a (np values) into a malloc'd policy; NULL with
 * c->msg on failure. */
static char *assignment_policy(checker *c, calhost_session *s, const uint32_t *a, size_t np,
                               size_t *len) {
  size_t cap = CALHOST_POLICY_MAX_LENGTH + 1;
  char *buf = malloc(cap);
  if (!buf)
    return fail(c, "out of memory"), NULL;
  calhost_status st = c->vt.serialize_assignment(s, a, np, buf, cap, len);
  if (st != CALHOST_OK || *len >= cap || buf[*len] != '\0' || strlen(buf) != *len) {
    free(buf);
    return fail(c, "serialize_assignment of a valid assignment returned %s%s",
                calhost_status_name(st), st == CALHOST_OK ? " with a wrong *length" : ""),
           NULL;
  }
  return buf;
}

/* The plugin's own validity rule on its default assignment, for every
 * sample workload it declares (not only the checked one: calibrate sweeps
 * each, and measures the speedup against the default): -1 with c->msg when
 * one refuses it. */
static int samples_refuse_default(checker *c) {
  if (c->abi < 2 || !c->vt.sample_workloads)
    return 0;
  for (size_t i = 0; i < 64 && c->vt.sample_workloads[i]; i++) {
    const calhost_workload *w = c->vt.sample_workloads[i];
    calhost_session *s = NULL;
    if (c->vt.open_session(c->inst, w, &c->t, &s) != CALHOST_OK || !s) {
      loader_services_take_error(&c->rec.services_ctx);
      continue; /* the workload's own checks say why */
    }
    calhost_parameter_space ps;
    memset(&ps, 0, sizeof ps);
    ps.header = (calhost_struct_header){CALHOST_STRUCT_PARAMETER_SPACE, 1, sizeof ps};
    char err[512] = "";
    int bad = c->vt.describe_space(s, &ps) == CALHOST_OK && ps.default_assignment &&
              sweep_space_defect(&ps, NULL, 0) == 0 &&
              c->vt.assignment_valid(s, ps.default_assignment, ps.parameter_count, err,
                                     sizeof err) != CALHOST_OK;
    c->vt.close_session(s);
    if (bad)
      return fail(c,
                  "sample workload '%s': the default assignment is not valid by the plugin's "
                  "own assignment_valid: %s",
                  w->name ? w->name : "?", err[0] ? err : "no reason given");
    loader_services_take_error(&c->rec.services_ctx);
  }
  return 0;
}

/* parameter_space's numbered candidates: each of the first 4096 that
 * policy_assignment maps to a point must map to a valid one. Their number
 * in *count, the mapped ones in *mapped (a scratch assignment of np values
 * in a). Returns 0, or -1 with c->msg. */
static int candidates_map(checker *c, calhost_session *s, uint32_t *a, size_t np, uint32_t *count,
                          uint32_t *mapped) {
  char err[512];
  if (c->vt.candidate_count(s, count) != CALHOST_OK)
    return 0;
  for (uint32_t i = 0; i < *count && i < 4096; i++) {
    size_t len;
    char *p = policy_of(c, s, i, &len);
    if (!p)
      return -1;
    if (c->vt.policy_assignment(s, p, len, a, np) == CALHOST_OK) {
      if (c->vt.assignment_valid(s, a, np, err, sizeof err) != CALHOST_OK) {
        fail(c, "candidate %u '%.80s' maps to an assignment assignment_valid refuses: %s", i, p,
             err);
        free(p);
        return -1;
      }
      (*mapped)++;
    }
    loader_services_take_error(&c->rec.services_ctx);
    free(p);
  }
  return 0;
}

/* The described parameter space (ABI 2, optional): a well-formed
 * description; out-of-range indices refused, never a crash; every valid
 * point of a deterministic sample (the whole space up to 4096 points)
 * serializes to a policy the validator accepts, and maps back to itself
 * through policy_assignment when the plugin has it; every numbered
 * candidate maps to a valid point. */
static int ck_parameter_space(checker *c) {
  if (!CALHOST_VTABLE_CALLABLE(&c->vt, c->abi, describe_space)) {
    snprintf(c->msg, sizeof c->msg, "not provided (optional, ABI 2)");
    return 0;
  }
  calhost_session *s = NULL;
  if (open_session(c, &s))
    return -1;
  calhost_parameter_space ps;
  memset(&ps, 0, sizeof ps);
  ps.header = (calhost_struct_header){CALHOST_STRUCT_PARAMETER_SPACE, 1, sizeof ps};
  calhost_status st = c->vt.describe_space(s, &ps);
  int rc = -1;
  uint32_t *a = NULL, *back = NULL;
  if (st == CALHOST_UNSUPPORTED) {
    snprintf(c->msg, sizeof c->msg, "numbered candidates only for %s", workload_text(c));
    rc = 0;
    goto out;
  }
  if (st != CALHOST_OK) {
    fail(c, "describe_space returned %s", calhost_status_name(st));
    goto out;
  }
  char err[512];
  if (sweep_space_defect(&ps, err, sizeof err) != 0) {
    fail(c, "%s", err);
    goto out;
  }
  size_t np = ps.parameter_count;
  double product = 1;
  for (size_t i = 0; i < np; i++)
    product *= ps.parameters[i].value_count;
  a = calloc(np, sizeof *a);
  back = calloc(np, sizeof *back);
  if (!a || !back) {
    fail(c, "out of memory");
    goto out;
  }
  int can_map = CALHOST_VTABLE_CALLABLE(&c->vt, c->abi, policy_assignment);
  for (size_t i = 0; i < np; i++) { /* one index out of range at a time */
    memset(a, 0, np * sizeof *a);
    a[i] = ps.parameters[i].value_count;
    if (c->vt.assignment_valid(s, a, np, err, sizeof err) == CALHOST_OK) {
      fail(c, "assignment_valid accepts index %u of parameter '%s', which has %u values", a[i],
           ps.parameters[i].name, ps.parameters[i].value_count);
      goto out;
    }
    loader_services_take_error(&c->rec.services_ctx);
  }
  if (ps.default_assignment &&
      c->vt.assignment_valid(s, ps.default_assignment, np, err, sizeof err) != CALHOST_OK) {
    fail(c, "the default assignment is not valid: %s", err);
    goto out;
  }
  /* the whole space up to 4096 points, else 4096 points spread over it */
  uint64_t total = product > 4096 ? 4096 : (uint64_t)product, valid = 0;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint64_t k = 0; k < total; k++) {
    for (size_t i = 0; i < np; i++) {
      if (product <= 4096) { /* k in mixed radix */
        uint64_t r = k;
        for (size_t j = np; j-- > i + 1;)
          r /= ps.parameters[j].value_count;
        a[i] = (uint32_t)(r % ps.parameters[i].value_count);
      } else {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[i] = (uint32_t)(x % ps.parameters[i].value_count);
      }
    }
    if (c->vt.assignment_valid(s, a, np, err, sizeof err) != CALHOST_OK) {
      loader_services_take_error(&c->rec.services_ctx);
      continue;
    }
    valid++;
    size_t len;
    char *p = assignment_policy(c, s, a, np, &len);
    if (!p)
      goto out;
    if (good_policy(c, -1, p, len)) {
      char why[512] = "";
      c->vt.validate_policy(c->inst, p, len, why, sizeof why);
      fail(c, "serialize_assignment gave '%.80s', which the validator refuses: %s", p, why);
      free(p);
      goto out;
    }
    if (can_map && (c->vt.policy_assignment(s, p, len, back, np) != CALHOST_OK ||
                    memcmp(a, back, np * sizeof *a))) {
      fail(c, "policy_assignment does not map '%.80s' back to its assignment", p);
      free(p);
      goto out;
    }
    free(p);
  }
  if (!valid) {
    fail(c, "none of the %llu points tried is valid", (unsigned long long)total);
    goto out;
  }
  uint32_t count = 0, mapped = 0;
  if (can_map && candidates_map(c, s, a, np, &count, &mapped) != 0)
    goto out;
  if (samples_refuse_default(c) != 0)
    goto out;
  snprintf(c->msg, sizeof c->msg,
           "%zu parameters, %llu of %llu %s valid, %u of %u candidates are points", np,
           (unsigned long long)valid, (unsigned long long)total,
           product > 4096 ? "sampled points" : "points", mapped, count);
  rc = 0;
out:
  free(a);
  free(back);
  c->vt.close_session(s);
  return rc;
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
  loader_services_take_error(&c->rec.services_ctx);
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
    if (!p) { /* the serializer's fault, not the validator's */
      for (size_t j = 0; j < *count; j++)
        free(out[j]);
      *count = 0;
      c->vt.close_session(s);
      char why[sizeof c->msg];
      snprintf(why, sizeof why, "%s", c->msg);
      return fail(c, "not run: no candidate policy to test it with (%.400s)", why);
    }
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
    if (accepts(c, (const char *)buf, n) && (i < 250 || !base_str_one_line((const char *)buf)))
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

static const char *take_error(void *user) {
  checker *c = user;
  return loader_services_take_error(&c->rec.services_ctx);
}

/* "the default 'P' and numbered candidates 0, 1, 2" (or "candidates 'P1',
 * 'P2'" of a described space): what the tiny sweep ran, from its result. */
static void what_ran(const sweep_result *r, char *buf, size_t cap) {
  char def[64] = "", list[400] = "";
  size_t n = 0, k = 0;
  for (size_t i = 0; i < r->candidate_entries; i++) {
    const sweep_candidate *x = &r->candidates[i];
    if (x->status == CALHOST_CANDIDATE_UNMEASURED)
      continue;
    if (x->index == CALHOST_SWEEP_DEFAULT_INDEX) {
      snprintf(def, sizeof def, "the default '%.40s'", x->policy ? x->policy : "");
      continue;
    }
    if (n < sizeof list && r->numbered)
      n += (size_t)snprintf(list + n, sizeof list - n, "%s%u", k ? ", " : "", x->index);
    else if (n < sizeof list)
      n += (size_t)snprintf(list + n, sizeof list - n, "%s'%.40s'", k ? ", " : "",
                            x->policy ? x->policy : "");
    k++;
  }
  snprintf(buf, cap, "%s%s%s%s%s%s", def, def[0] && k ? " and " : "",
           k && r->numbered ? "numbered " : "", k ? (k == 1 ? "candidate " : "candidates ") : "",
           list, !def[0] && !k ? "nothing" : "");
}

/* A small sweep through the measurement engine (measure.h), as calibrate
 * runs it on the checker's target (device 0 of a device backend): the
 * default and the first 3 candidates in the plugin's order (exhaustive), each
 * validated, prepared, run, checked against the reference and timed. Any
 * rejection is a FAIL: every candidate the plugin offers must work. The
 * message says what ran. */
static int ck_tiny_sweep(checker *c) {
  sweep_request req;
  sweep_result r;
  memset(&req, 0, sizeof req);
  sweep_rigor_params_init(CALHOST_RIGOR_QUICK, 3, &req.params);
  req.strategy = CALHOST_SEARCH_EXHAUSTIVE; /* the plugin's first 3 candidates */
  req.budget_evaluations = 3;
  req.params.prune = 0;
  req.params.halving = 0;
  req.params.warmup_samples = 0;
  req.params.repetitions = 3;
  req.vtable = &c->vt;
  req.abi_version = c->abi;
  req.instance = c->inst;
  req.workload = &c->w;
  req.target = &c->t;
  req.max_policy_length = CALHOST_POLICY_MAX_LENGTH;
  req.hooks.user = c;
  req.hooks.take_plugin_error = take_error;
  if (c->o->time_budget_seconds > 0) /* --setting time_budget=...: the plugin's budget */
    req.deadline = sweep_now() + c->o->time_budget_seconds;
  int rc = sweep_run(&req, &r);
  int failed = rc != 0 || r.rejection_count > 0;
  char on[160];
  target_text(c, on, sizeof on);
  if (r.rejection_count > 0) {
    const sweep_rejection *x = &r.rejections[0];
    char which_one[48];
    if (x->index == CALHOST_SWEEP_DEFAULT_INDEX)
      snprintf(which_one, sizeof which_one, "the default policy");
    else if (r.numbered)
      snprintf(which_one, sizeof which_one, "numbered candidate %u", x->index);
    else
      snprintf(which_one, sizeof which_one, "candidate");
    fail(c, "%s on %s: %s '%.60s' rejected: %s", workload_text(c), on, which_one,
         x->policy ? x->policy : "", x->reason ? x->reason : "?");
  } else if (rc != 0) {
    fail(c, "%s on %s: %s", workload_text(c), on, r.error);
  } else {
    char ran[600];
    what_ran(&r, ran, sizeof ran);
    snprintf(c->msg, sizeof c->msg, "%s on %s: measured %s (%s clock), winner '%.60s'%s",
             workload_text(c), on, ran, r.device_timed ? "device" : "host", r.winner_policy,
             r.unchecked ? " (no check(): unchecked)" : "");
  }
  sweep_result_free(&r);
  c->vt.destroy(c->inst);
  c->inst = NULL;
  return failed ? -1 : 0;
}

const check_entry check_list[] = {
    {"negotiation", 0, ck_negotiation},
    {"identity", 0, ck_identity},
    {"required_functions", 0, ck_required},
    {"devices", 2, ck_devices},
    {"key_deterministic", 2, ck_key_deterministic},
    {"key_complete", 2, ck_key_complete},
    {"policy_roundtrip", 2, ck_policy_roundtrip},
    {"parameter_space", 2, ck_parameter_space},
    {"default_policy", 2, ck_default_policy},
    {"validator_refuses_empty", 2, ck_refuses_empty},
    {"validator_refuses_truncated", 2, ck_refuses_truncated},
    {"validator_refuses_random", 2, ck_refuses_random},
    {"tiny_sweep", 2, ck_tiny_sweep},
};
const size_t check_list_count = sizeof check_list / sizeof check_list[0];

/* ---- checks that read the file without running it ---- */

/* Discovery's owner and mode checks on the file and every directory. */
int check_file_permissions(const char *path, char *msg, size_t cap) {
  char err[1024];
  int checked = loader_check_path(path, err, sizeof err);
  if (checked != 0) {
    snprintf(msg, cap, checked == -1 ? "discovery would refuse it: %s" : "cannot check: %s", err);
    return -1;
  }
  snprintf(msg, cap, "file and directories owned by root or you, not group/other-writable");
  return 0;
}

/* The guide: only calhost_plugin_negotiate is exported. */
int check_exported_symbols(const char *path, char *msg, size_t cap) {
  char list[512];
  int n = check_elf_extra_exports(path, list, sizeof list);
  if (n < 0) {
    snprintf(msg, cap, "not run: %s", list);
    return -1;
  }
  if (n > 0) {
    snprintf(msg, cap,
             "%d symbol%s besides %s exported (%s%s); build with -fvisibility=hidden "
             "(CALHOST_PLUGIN_EXPORT marks the entry point)",
             n, n == 1 ? "" : "s", CALHOST_PLUGIN_ENTRY_POINT, list, n > 8 ? ", ..." : "");
    return -1;
  }
  snprintf(msg, cap, "only %s", CALHOST_PLUGIN_ENTRY_POINT);
  return 0;
}
