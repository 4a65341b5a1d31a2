/*
 * speed_plugin.c: a test-only backend for `calhost verify` whose speed is
 * set by its policy, deterministically: "work=N" (N in 1..64) runs N units
 * of the same fixed loop per iteration, so work=64 is about 64 times slower
 * than work=1 on any machine, however busy. "work=N;wrong" passes the
 * validator but computes a wrong output (the correctness check refuses
 * it). Operator "Spin"; candidates work=1,2,4,8; default work=2. The exact
 * key's model digest is the workload's name, so a test can tell the keys in
 * the store apart. Built twice (test_speed, test_speed2; BACKEND macro).
 * CALHOST_TEST_CREATE_LOG=FILE: create appends the creating process's id
 * (a test checks that instances are created in calhost's children only).
 * The setting fail_create (any value) makes create() fail with a message.
 * SEPARATED (test_speed_sep): every policy has a second parameter,
 * "work=N;unit=1", and the validator also reads "work=N,unit=1", as the
 * GPU backends read the ',' they wrote before issue 42.
 * CALHOST_TEST_PREPARE_LOG=FILE: prepare appends the policy it runs, one
 * a line (a test counts the policies measured).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calhost/plugin.h"

#ifndef BACKEND
#define BACKEND "test_speed"
#endif
#ifdef SEPARATED
#define SECOND ";unit=1" /* what serialize and default write */
#else
#define SECOND ""
#endif
#ifndef UNIT
#define UNIT 2000u /* loop steps per unit of work (tests/race builds a slower one) */
#endif

struct calhost_plugin_instance {
  calhost_property structure[1];
};
struct calhost_session {
  unsigned work;
  int wrong;
  double out;
};

static calhost_status create(const calhost_host_services *host, const calhost_property *settings,
                             size_t setting_count, calhost_plugin_instance **out) {
  for (size_t i = 0; i < setting_count; i++)
    if (!strcmp(settings[i].name, "fail_create")) { /* a plugin that dies in create() */
      host->set_error(host->context, "fail_create is set: no instance");
      return CALHOST_ERROR;
    }
  const char *log = getenv("CALHOST_TEST_CREATE_LOG");
  FILE *lf = log && *log ? fopen(log, "a") : NULL;
  if (lf) {
    fprintf(lf, "%ld\n", (long)getpid());
    fclose(lf);
  }
  *out = calloc(1, sizeof **out);
  return *out ? CALHOST_OK : CALHOST_NO_MEMORY;
}

static void destroy(calhost_plugin_instance *inst) {
  free(inst);
}

static calhost_status build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                const calhost_target *t, calhost_built_key *out) {
  inst->structure[0] = (calhost_property){"operator", w->operator_name};
  out->model_digest = w->name;
  out->processor = t->processor;
  out->thread_count = 1;
  out->structure = inst->structure;
  out->structure_count = 1;
  return CALHOST_OK;
}

/* Parses "work=N" or "work=N;wrong" strictly. */
static int parse(const char *p, size_t n, unsigned *work, int *wrong) {
  char buf[32], tail = 0;
  if (n == 0 || n >= sizeof buf)
    return -1;
  memcpy(buf, p, n);
  buf[n] = '\0';
  *wrong = 0;
  if (n > 6 && !strcmp(buf + n - 6, ";wrong")) {
    *wrong = 1;
    buf[n - 6] = '\0';
  }
#ifdef SEPARATED
  size_t m = strlen(buf);
  if (m <= 7 || (strcmp(buf + m - 7, ";unit=1") && strcmp(buf + m - 7, ",unit=1")))
    return -1;
  buf[m - 7] = '\0';
#endif
  if (sscanf(buf, "work=%u%c", work, &tail) != 1 || *work < 1 || *work > 64)
    return -1;
  char canon[32];
  snprintf(canon, sizeof canon, "work=%u", *work);
  return strcmp(canon, buf) ? -1 : 0;
}

static calhost_status validate_policy(calhost_plugin_instance *inst, const char *policy,
                                      size_t length, char *err, size_t cap) {
  unsigned w;
  int wrong;
  (void)inst;
  if (parse(policy, length, &w, &wrong) == 0)
    return CALHOST_OK;
  snprintf(err, cap, "expected work=1..64");
  return CALHOST_INVALID_ARGUMENT;
}

static calhost_status open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                   const calhost_target *t, calhost_session **out) {
  (void)inst;
  (void)w;
  (void)t;
  *out = calloc(1, sizeof **out);
  return *out ? CALHOST_OK : CALHOST_NO_MEMORY;
}

static void close_session(calhost_session *s) {
  free(s);
}

static calhost_status candidate_count(calhost_session *s, uint32_t *count) {
  (void)s;
  *count = 4;
  return CALHOST_OK;
}

static calhost_status serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                          size_t capacity, size_t *length) {
  char text[32];
  (void)s;
  if (index >= 4)
    return CALHOST_INVALID_ARGUMENT;
  snprintf(text, sizeof text, "work=%u" SECOND, 1u << index);
  return calhost_copy_out(text, buf, capacity, length);
}

static calhost_status default_policy(calhost_session *s, char *buf, size_t capacity,
                                     size_t *length) {
  (void)s;
  return calhost_copy_out("work=2" SECOND, buf, capacity, length);
}

static calhost_status prepare(calhost_session *s, const char *policy, size_t length) {
  const char *log = getenv("CALHOST_TEST_PREPARE_LOG");
  FILE *lf = log && *log ? fopen(log, "a") : NULL;
  if (lf) {
    fprintf(lf, "%.*s\n", (int)length, policy);
    fclose(lf);
  }
  return parse(policy, length, &s->work, &s->wrong) == 0 ? CALHOST_OK : CALHOST_INVALID_ARGUMENT;
}

static calhost_status run(calhost_session *s, uint32_t iterations, calhost_run_result *result) {
  (void)result;
  for (uint32_t it = 0; it < iterations; it++) {
    volatile double acc = 0;
    for (unsigned i = 0; i < s->work * UNIT; i++)
      acc = acc + 1.0;
    s->out = acc + (s->wrong ? 1.0 : 0.0);
  }
  return CALHOST_OK;
}

static calhost_status check(calhost_session *s, char *err, size_t cap) {
  if (s->out == (double)(s->work * UNIT))
    return CALHOST_OK;
  snprintf(err, cap, "sum %.0f, expected %u", s->out, s->work * UNIT);
  return CALHOST_CHECK_FAILED;
}

static const char *const operators[] = {"Spin", NULL};

static const calhost_plugin_vtable vtable = {
    .struct_size = sizeof(calhost_plugin_vtable),
    .abi_version = CALHOST_ABI_VERSION,
    .backend_name = BACKEND,
    .implementation_version = "1",
    .operators = operators,
    .description = "verify test plugin " BACKEND ": policy work=N runs N units",
    .create = create,
    .destroy = destroy,
    .build_key = build_key,
    .validate_policy = validate_policy,
    .open_session = open_session,
    .close_session = close_session,
    .candidate_count = candidate_count,
    .serialize_candidate = serialize_candidate,
    .default_policy = default_policy,
    .prepare = prepare,
    .run = run,
    .check = check,
};

CALHOST_PLUGIN_EXPORT calhost_status
calhost_plugin_negotiate(const calhost_negotiate_request *request, calhost_negotiate_reply *reply);
CALHOST_PLUGIN_EXPORT calhost_status
calhost_plugin_negotiate(const calhost_negotiate_request *request, calhost_negotiate_reply *reply) {
  return calhost_negotiate_default(request, reply, &vtable);
}
