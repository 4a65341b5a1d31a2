/*
 * rel_plugin.c: test-only plugins for the reliability suite's sweep checks
 * (sweep_plugins.sh), beyond the misbehaviours of tests/plugins: one small
 * correct ReduceSum-like backend (policies "p=1".."p=4") that each -DREL_*
 * macro breaks in exactly one way. Built as lib/calhost/reliability-plugins/
 * rel_<variant>.so by tests/reliability/CMakeLists.txt; never installed.
 *
 *   REL_FLOOD          run() writes 256 KiB to stdout on every call
 *   REL_FLOOD_FOREVER  run() writes to stdout without end
 *   REL_FLOOD_CREATE   create() writes 1 MiB to stdout (in whatever process
 *                      loads the plugin, the host's included)
 *   REL_EXIT0          run() calls exit(0): a "success" status mid-sweep
 *   REL_NEWLINE        the policy holds a line break (the store format
 *                      cannot carry it), and the validator accepts it
 *   REL_NUL            the policy's length covers an embedded NUL
 *   REL_LENGTH_LIE     serialize_candidate says OK with a length larger
 *                      than the buffer it was given
 *   REL_QUOTES         a valid policy full of quotes and backslashes (must be
 *                      stored and read back byte for byte)
 *   REL_MAX_POLICY     valid policies of exactly CALHOST_POLICY_MAX_LENGTH
 *                      bytes (the largest allowed: must be stored)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calhost/plugin.h"

#ifndef BACKEND
#define BACKEND "rel_plugin"
#endif

struct calhost_plugin_instance {
  const calhost_host_services *host;
  calhost_property structure[1];
};
struct calhost_session {
  int p;
  double out;
};

__attribute__((unused)) static void flood(size_t bytes) {
  static char chunk[65536];
  memset(chunk, 'F', sizeof chunk);
  chunk[sizeof chunk - 1] = '\n';
  while (bytes > 0) {
    size_t n = bytes < sizeof chunk ? bytes : sizeof chunk;
    if (write(STDOUT_FILENO, chunk, n) < 0)
      return;
    bytes -= n;
  }
}

static calhost_status create(const calhost_host_services *host, const calhost_property *settings,
                             size_t setting_count, calhost_plugin_instance **out) {
  (void)settings;
  (void)setting_count;
#ifdef REL_FLOOD_CREATE
  flood(1u << 20);
#endif
  *out = calloc(1, sizeof **out);
  if (!*out)
    return CALHOST_NO_MEMORY;
  (*out)->host = host;
  return CALHOST_OK;
}

static void destroy(calhost_plugin_instance *inst) { free(inst); }

static calhost_status build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                const calhost_target *t, calhost_built_key *out) {
  inst->structure[0] = (calhost_property){"operator", w->operator_name};
  out->model_digest = w->model_digest;
  out->processor = t->processor;
  out->thread_count = t->thread_count ? t->thread_count : 1;
  out->structure = inst->structure;
  out->structure_count = 1;
  return CALHOST_OK;
}

/* Accepts "p=N..." (N in 1..4) of any length: the point of the variants is
 * to see what the host and the store do with what the plugin accepts. */
static calhost_status validate_policy(calhost_plugin_instance *inst, const char *policy,
                                      size_t length, char *err, size_t cap) {
  (void)inst;
  if (length >= 3 && length <= CALHOST_POLICY_MAX_LENGTH && policy[0] == 'p' && policy[1] == '=' &&
      policy[2] >= '1' && policy[2] <= '4')
    return CALHOST_OK;
  snprintf(err, cap, "not a rel_plugin policy");
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

static void close_session(calhost_session *s) { free(s); }

static calhost_status candidate_count(calhost_session *s, uint32_t *count) {
  (void)s;
  *count = 4;
  return CALHOST_OK;
}

static calhost_status serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                          size_t capacity, size_t *length) {
  (void)s;
  if (index >= 4)
    return CALHOST_INVALID_ARGUMENT;
  char digit = (char)('1' + index);
#if defined(REL_NEWLINE)
  char text[] = {'p', '=', digit, '\n', 'e', 'n', 'd', 0};
  return calhost_copy_out(text, buf, capacity, length);
#elif defined(REL_NUL)
  if (capacity < 6) {
    *length = 6;
    return CALHOST_BUFFER_TOO_SMALL;
  }
  memcpy(buf, (char[]){'p', '=', digit, 0, 'x', 0}, 6);
  *length = 5; /* covers the NUL */
  return CALHOST_OK;
#elif defined(REL_LENGTH_LIE)
  char text[] = {'p', '=', digit, 0};
  calhost_status st = calhost_copy_out(text, buf, capacity, length);
  if (st == CALHOST_OK)
    *length = capacity + 1000; /* a lie: longer than the buffer */
  return st;
#elif defined(REL_QUOTES)
  char text[64];
  snprintf(text, sizeof text, "p=%c \"quoted\" \\back\\slash\\ \"\" end\\", digit);
  return calhost_copy_out(text, buf, capacity, length);
#elif defined(REL_MAX_POLICY)
  if (capacity < CALHOST_POLICY_MAX_LENGTH + 1) {
    *length = CALHOST_POLICY_MAX_LENGTH + 1;
    return CALHOST_BUFFER_TOO_SMALL;
  }
  memset(buf, 'm', CALHOST_POLICY_MAX_LENGTH);
  buf[0] = 'p';
  buf[1] = '=';
  buf[2] = digit;
  buf[CALHOST_POLICY_MAX_LENGTH] = '\0';
  *length = CALHOST_POLICY_MAX_LENGTH;
  return CALHOST_OK;
#else
  char text[] = {'p', '=', digit, 0};
  return calhost_copy_out(text, buf, capacity, length);
#endif
}

static calhost_status prepare(calhost_session *s, const char *policy, size_t length) {
  s->p = length >= 3 ? policy[2] - '0' : 0;
  return CALHOST_OK;
}

static calhost_status run(calhost_session *s, uint32_t iterations, calhost_run_result *result) {
  (void)result;
#if defined(REL_FLOOD)
  flood(256u << 10);
#elif defined(REL_FLOOD_FOREVER)
  for (;;)
    flood(1u << 20);
#elif defined(REL_EXIT0)
  exit(0);
#endif
  for (uint32_t i = 0; i < iterations; i++)
    s->out = 1.5 * s->p;
  return CALHOST_OK;
}

static calhost_status check(calhost_session *s, char *err, size_t cap) {
  if (s->out == 1.5 * s->p)
    return CALHOST_OK;
  snprintf(err, cap, "wrong output");
  return CALHOST_CHECK_FAILED;
}

static const char *const operators[] = {"ReduceSum", NULL};

static const calhost_plugin_vtable vtable = {
    .struct_size = sizeof(calhost_plugin_vtable),
    .abi_version = CALHOST_ABI_VERSION,
    .backend_name = BACKEND,
    .implementation_version = "1",
    .operators = operators,
    .description = "reliability test plugin " BACKEND,
    .create = create,
    .destroy = destroy,
    .build_key = build_key,
    .validate_policy = validate_policy,
    .open_session = open_session,
    .close_session = close_session,
    .candidate_count = candidate_count,
    .serialize_candidate = serialize_candidate,
    .prepare = prepare,
    .run = run,
    .check = check,
};

CALHOST_PLUGIN_EXPORT calhost_status calhost_plugin_negotiate(
    const calhost_negotiate_request *request, calhost_negotiate_reply *reply) {
  return calhost_negotiate_default(request, reply, &vtable);
}
