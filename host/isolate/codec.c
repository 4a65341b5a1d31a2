/*
 * codec.c: the encoder and decoder of every record an isolated child sends
 * (codec.h): the probe's, the device listing's, a check's and a plugin's
 * sweeps' (the sweep result nested in RESULT aside: sweep/records.c).
 */
#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

const char *isolate_rec_name(uint32_t type) {
  switch ((enum isolate_record_type)type) {
  case CALHOST_REC_HELLO:
    return "HELLO";
  case CALHOST_REC_CANDIDATE:
    return "CANDIDATE";
  case CALHOST_REC_RESULT:
    return "RESULT";
  case CALHOST_REC_SKIPPED:
    return "SKIPPED";
  case CALHOST_REC_FAILED:
    return "FAILED";
  case CALHOST_REC_WORKLOAD_DONE:
    return "WORKLOAD_DONE";
  case CALHOST_REC_PLUGIN_FAILED:
    return "PLUGIN_FAILED";
  case CALHOST_REC_DONE:
    return "DONE";
  case CALHOST_REC_CANDIDATE_END:
    return "CANDIDATE_END";
  case CALHOST_REC_BUDGET:
    return "BUDGET";
  case CALHOST_REC_RECORDING:
    return "RECORDING";
  case CALHOST_REC_PROBE_ABI:
    return "PROBE_ABI";
  case CALHOST_REC_PROBE_REASON:
    return "PROBE_REASON";
  case CALHOST_REC_PROBE_IDENTITY:
    return "PROBE_IDENTITY";
  case CALHOST_REC_PROBE_DONE:
    return "PROBE_DONE";
  case CALHOST_REC_DEV_DEVICE:
    return "DEV_DEVICE";
  case CALHOST_REC_DEV_FAILED:
    return "DEV_FAILED";
  case CALHOST_REC_DEV_DONE:
    return "DEV_DONE";
  case CALHOST_REC_DEV_CREATED:
    return "DEV_CREATED";
  case CALHOST_REC_CHECK_LOG:
    return "CHECK_LOG";
  case CALHOST_REC_CHECK_RESULT:
    return "CHECK_RESULT";
  case CALHOST_REC_CHECK_DONE:
    return "CHECK_DONE";
  }
  return NULL;
}

void isolate_rec_put_empty(isolate_proto_buf *b, uint32_t type) {
  isolate_proto_begin(b, type);
}

int isolate_rec_open(isolate_proto_cursor *c, const isolate_proto_msg *m, uint32_t type) {
  isolate_proto_cursor_init(c, m);
  if (m->type != type) {
    c->left = 0;
    c->failed = 1;
    return -1;
  }
  return 0;
}

static int cursor_ok(const isolate_proto_cursor *c) {
  return c->failed ? -1 : 0;
}

/* ---- the probe ---------------------------------------------------------- */

void isolate_rec_put_probe_abi(isolate_proto_buf *b, uint32_t chosen, uint32_t plugin_min,
                               uint32_t plugin_max) {
  isolate_proto_begin(b, CALHOST_REC_PROBE_ABI);
  isolate_proto_put_u64(b, chosen);
  isolate_proto_put_u64(b, plugin_min);
  isolate_proto_put_u64(b, plugin_max);
}

int isolate_rec_get_probe_abi(const isolate_proto_msg *m, uint32_t *chosen, uint32_t *plugin_min,
                              uint32_t *plugin_max) {
  isolate_proto_cursor c;
  isolate_rec_open(&c, m, CALHOST_REC_PROBE_ABI);
  *chosen = (uint32_t)isolate_proto_get_u64(&c);
  *plugin_min = (uint32_t)isolate_proto_get_u64(&c);
  *plugin_max = (uint32_t)isolate_proto_get_u64(&c);
  return cursor_ok(&c);
}

void isolate_rec_put_probe_reason(isolate_proto_buf *b, const char *reason) {
  isolate_proto_begin(b, CALHOST_REC_PROBE_REASON);
  isolate_proto_put_str(b, reason);
}

int isolate_rec_get_probe_reason(const isolate_proto_msg *m, const char **reason) {
  isolate_proto_cursor c;
  isolate_rec_open(&c, m, CALHOST_REC_PROBE_REASON);
  *reason = isolate_proto_get_str(&c);
  return cursor_ok(&c);
}

void isolate_rec_put_probe_identity(isolate_proto_buf *b, const char *backend,
                                    const char *implementation, const char *description,
                                    const char *const *operators) {
  size_t n = 0;
  while (operators && operators[n])
    n++;
  isolate_proto_begin(b, CALHOST_REC_PROBE_IDENTITY);
  isolate_proto_put_str(b, backend);
  isolate_proto_put_str(b, implementation);
  isolate_proto_put_str(b, description);
  isolate_proto_put_u64(b, n);
  for (size_t i = 0; i < n; i++)
    isolate_proto_put_str(b, operators[i]);
}

int isolate_rec_get_probe_identity(const isolate_proto_msg *m, const char **backend,
                                   const char **implementation, const char **description,
                                   char ***operators, size_t *operator_count) {
  isolate_proto_cursor c;
  *operators = NULL;
  *operator_count = 0;
  isolate_rec_open(&c, m, CALHOST_REC_PROBE_IDENTITY);
  *backend = isolate_proto_get_str(&c);
  *implementation = isolate_proto_get_str(&c);
  *description = isolate_proto_get_str(&c);
  uint64_t n = isolate_proto_get_u64(&c);
  if (c.failed || n > CALHOST_REC_MAX_OPERATORS)
    return -1;
  char **ops = calloc(n ? (size_t)n : 1, sizeof *ops);
  size_t got = 0;
  while (ops && got < n && (ops[got] = isolate_proto_dup_str(&c)) != NULL)
    got++;
  if (!ops || got != n || c.failed) {
    for (size_t i = 0; ops && i < got; i++)
      free(ops[i]);
    free(ops);
    return -1;
  }
  *operators = ops;
  *operator_count = got;
  return 0;
}

/* ---- the device listing ------------------------------------------------- */

void isolate_rec_put_dev_failed(isolate_proto_buf *b, const char *message) {
  isolate_proto_begin(b, CALHOST_REC_DEV_FAILED);
  isolate_proto_put_str(b, message);
}

int isolate_rec_get_dev_failed(const isolate_proto_msg *m, const char **message) {
  isolate_proto_cursor c;
  isolate_rec_open(&c, m, CALHOST_REC_DEV_FAILED);
  *message = isolate_proto_get_str(&c);
  return cursor_ok(&c);
}

void isolate_rec_put_dev_device(isolate_proto_buf *b, const isolate_rec_device *d) {
  isolate_proto_begin(b, CALHOST_REC_DEV_DEVICE);
  isolate_proto_put_u64(b, d->index);
  isolate_proto_put_u64(b, d->kind);
  isolate_proto_put_str(b, d->identity);
  isolate_proto_put_str(b, d->name);
  isolate_proto_put_str(b, d->hardware);
  isolate_proto_put_props(b, d->details, d->detail_count);
}

int isolate_rec_get_dev_device(const isolate_proto_msg *m, isolate_rec_device *d) {
  isolate_proto_cursor c;
  memset(d, 0, sizeof *d);
  isolate_rec_open(&c, m, CALHOST_REC_DEV_DEVICE);
  d->index = (uint32_t)isolate_proto_get_u64(&c);
  d->kind = (uint32_t)isolate_proto_get_u64(&c);
  d->identity = isolate_proto_dup_str(&c);
  d->name = isolate_proto_dup_str(&c);
  d->hardware = isolate_proto_dup_str(&c);
  isolate_proto_get_props(&c, CALHOST_REC_MAX_DETAILS, &d->details, &d->detail_count);
  if (c.failed || !d->identity || !d->name || !d->hardware) {
    isolate_rec_device_free(d);
    return -1;
  }
  return 0;
}

void isolate_rec_device_free(isolate_rec_device *d) {
  free(d->identity);
  free(d->name);
  free(d->hardware);
  isolate_props_free(d->details, d->detail_count);
  memset(d, 0, sizeof *d);
}

/* ---- a plugin check ----------------------------------------------------- */

void isolate_rec_put_check_log(isolate_proto_buf *b, calhost_log_level level, const char *message) {
  isolate_proto_begin(b, CALHOST_REC_CHECK_LOG);
  isolate_proto_put_u64(b, (uint64_t)level);
  isolate_proto_put_str(b, message);
}

int isolate_rec_get_check_log(const isolate_proto_msg *m, calhost_log_level *level,
                              const char **message) {
  isolate_proto_cursor c;
  isolate_rec_open(&c, m, CALHOST_REC_CHECK_LOG);
  *level = (calhost_log_level)isolate_proto_get_u64(&c);
  *message = isolate_proto_get_str(&c);
  return c.failed || !*message ? -1 : 0;
}

void isolate_rec_put_check_result(isolate_proto_buf *b, int verdict, const char *details,
                                  const char *backend) {
  isolate_proto_begin(b, CALHOST_REC_CHECK_RESULT);
  isolate_proto_put_u64(b, (uint64_t)verdict);
  isolate_proto_put_str(b, details);
  isolate_proto_put_str(b, backend ? backend : "");
}

int isolate_rec_get_check_result(const isolate_proto_msg *m, int *verdict, const char **details,
                                 const char **backend) {
  isolate_proto_cursor c;
  isolate_rec_open(&c, m, CALHOST_REC_CHECK_RESULT);
  uint64_t v = isolate_proto_get_u64(&c);
  *verdict = v == CALHOST_REC_CHECK_SKIPPED ? CALHOST_REC_CHECK_SKIPPED : v != 0;
  const char *d = isolate_proto_get_str(&c);
  const char *be = isolate_proto_get_str(&c);
  *details = d ? d : "";
  *backend = be ? be : "";
  return cursor_ok(&c);
}

/* ---- a plugin's sweeps -------------------------------------------------- */

void isolate_rec_put_key(isolate_proto_buf *b, const char *model_digest, const char *processor,
                         uint32_t thread_count, const calhost_property *structure,
                         size_t structure_count) {
  isolate_proto_put_str(b, model_digest);
  isolate_proto_put_str(b, processor);
  isolate_proto_put_u64(b, thread_count);
  isolate_proto_put_props(b, structure, structure_count);
}

int isolate_rec_get_key(isolate_proto_cursor *c, base_key *k) {
  memset(k, 0, sizeof *k);
  k->model_digest = isolate_proto_dup_str(c);
  k->processor = isolate_proto_dup_str(c);
  k->thread_count = (uint32_t)isolate_proto_get_u64(c);
  if (isolate_proto_get_props(c, CALHOST_RECORD_MAX_STRUCTURE, &k->structure,
                              &k->structure_count) != 0) {
    base_key_free(k);
    return -1;
  }
  return 0;
}

void isolate_rec_put_hello(isolate_proto_buf *b, const char *backend) {
  isolate_proto_begin(b, CALHOST_REC_HELLO);
  isolate_proto_put_u64(b, CALHOST_RECORD_PROTOCOL_VERSION);
  isolate_proto_put_str(b, backend);
}

int isolate_rec_get_hello(isolate_proto_cursor *c, const char **backend, char *why, size_t cap) {
  uint64_t version = isolate_proto_get_u64(c);
  *backend = isolate_proto_get_str(c);
  if (c->failed)
    return base_str_fail(why, cap, "malformed HELLO record");
  if (version != CALHOST_RECORD_PROTOCOL_VERSION)
    return base_str_fail(why, cap, "record protocol version %llu, this calhost speaks %u",
                         (unsigned long long)version, CALHOST_RECORD_PROTOCOL_VERSION);
  return 0;
}

void isolate_rec_put_budget(isolate_proto_buf *b, double deadline) {
  isolate_proto_begin(b, CALHOST_REC_BUDGET);
  isolate_proto_put_f64(b, deadline);
}

int isolate_rec_get_budget(isolate_proto_cursor *c, double *deadline) {
  *deadline = isolate_proto_get_f64(c);
  return cursor_ok(c);
}

void isolate_rec_put_item(isolate_proto_buf *b, uint32_t type, isolate_rec_item it) {
  isolate_proto_begin(b, type);
  isolate_proto_put_u64(b, it.workload);
  isolate_proto_put_u64(b, it.threads);
}

int isolate_rec_get_item(isolate_proto_cursor *c, isolate_rec_item *it) {
  it->workload = (size_t)isolate_proto_get_u64(c);
  it->threads = (uint32_t)isolate_proto_get_u64(c);
  return cursor_ok(c);
}

void isolate_rec_put_candidate(isolate_proto_buf *b, isolate_rec_item it, uint32_t index,
                               uint32_t ordinal, uint32_t total, const char *policy) {
  isolate_rec_put_item(b, CALHOST_REC_CANDIDATE, it);
  isolate_proto_put_u64(b, index);
  isolate_proto_put_u64(b, ordinal);
  isolate_proto_put_u64(b, total);
  isolate_proto_put_str(b, policy);
}

int isolate_rec_get_candidate(isolate_proto_cursor *c, isolate_rec_item *it, uint32_t *index,
                              uint32_t *ordinal, uint32_t *total, const char **policy) {
  isolate_rec_get_item(c, it);
  *index = (uint32_t)isolate_proto_get_u64(c);
  *ordinal = (uint32_t)isolate_proto_get_u64(c);
  *total = (uint32_t)isolate_proto_get_u64(c);
  *policy = isolate_proto_get_str(c);
  return cursor_ok(c);
}

void isolate_rec_put_recording(isolate_proto_buf *b, const char *error) {
  isolate_proto_begin(b, CALHOST_REC_RECORDING);
  isolate_proto_put_str(b, error ? error : "");
}

int isolate_rec_get_recording(isolate_proto_cursor *c, const char **error) {
  *error = isolate_proto_get_str(c);
  return cursor_ok(c);
}

void isolate_rec_put_skipped(isolate_proto_buf *b, isolate_rec_item it, const char *reason,
                             const calhost_built_key *k) {
  isolate_rec_put_item(b, CALHOST_REC_SKIPPED, it);
  isolate_proto_put_str(b, reason);
  if (k)
    isolate_rec_put_key(b, k->model_digest, k->processor, k->thread_count, k->structure,
                        k->structure_count);
  else
    isolate_rec_put_key(b, NULL, NULL, 0, NULL, 0);
}

int isolate_rec_get_skipped_body(isolate_proto_cursor *c, const char **reason, base_key *k) {
  *reason = isolate_proto_get_str(c);
  return isolate_rec_get_key(c, k) != 0 || c->failed ? -1 : 0;
}

void isolate_rec_put_failed(isolate_proto_buf *b, isolate_rec_item it, const char *message) {
  isolate_rec_put_item(b, CALHOST_REC_FAILED, it);
  isolate_proto_put_str(b, message);
}

int isolate_rec_get_failed_body(isolate_proto_cursor *c, const char **message) {
  *message = isolate_proto_get_str(c);
  return cursor_ok(c);
}

void isolate_rec_put_workload_done(isolate_proto_buf *b, size_t workload) {
  isolate_proto_begin(b, CALHOST_REC_WORKLOAD_DONE);
  isolate_proto_put_u64(b, workload);
}

int isolate_rec_get_workload_done(isolate_proto_cursor *c, size_t *workload) {
  *workload = (size_t)isolate_proto_get_u64(c);
  return cursor_ok(c);
}

void isolate_rec_put_plugin_failed(isolate_proto_buf *b, const char *message) {
  isolate_proto_begin(b, CALHOST_REC_PLUGIN_FAILED);
  isolate_proto_put_str(b, message);
}

int isolate_rec_get_plugin_failed(isolate_proto_cursor *c, const char **message) {
  *message = isolate_proto_get_str(c);
  return cursor_ok(c);
}
