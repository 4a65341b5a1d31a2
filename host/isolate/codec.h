/*
 * codec.h: the child protocol's one codec: every record an isolated child
 * sends its parent (isolate.h) — the loader's probe, each `plugin check`
 * check, the runtime's device listing and a plugin's calibration sweeps —
 * with its type number (one numbering for all four, so a record of one
 * child's vocabulary is never read as another's), its payload layout, one
 * encoder (isolate_rec_put_*: begins the frame and writes the payload; the
 * caller sends it, isolate_proto_send) and one decoder (isolate_rec_get_*:
 * 0, or -1 when the message is of another type or its payload is malformed
 * or truncated). The framing and the field encoding are proto.h's. The one
 * exception is the nested payload of a sweep's RESULT (the sweep result, a
 * type of the measurement engine): sweep/records.c encodes it, because the
 * deployment runtime links this file and must link no engine.
 *
 *   probe   PROBE_ABI       u chosen, u plugin min, u plugin max
 *           PROBE_REASON    s why the plugin cannot be used
 *           PROBE_IDENTITY  s backend, s implementation, s description,
 *                           u n, n x s operator
 *           PROBE_DONE
 *   devices DEV_CREATED     (create() returned: a later death is the listing's)
 *           DEV_FAILED      s message
 *           DEV_DEVICE      u index, u kind, s identity, s name, s hardware,
 *                           property list
 *           DEV_DONE
 *   check   CHECK_LOG       u level, s message (the plugin logged)
 *           CHECK_RESULT    u verdict (0 failed, 1 passed, 2 skipped),
 *                           s details or reason, s backend
 *           CHECK_DONE
 *   sweep   HELLO           u version, s backend      (the first record)
 *           BUDGET          f deadline                (sweep_now's clock)
 *           CANDIDATE       item, u index, u ordinal, u total, s policy
 *           CANDIDATE_END   (the candidate announced last is over)
 *           RECORDING       s error ("" when --record's file was written)
 *           RESULT          item, key, sweep result (sweep/records.h)
 *           SKIPPED         item, s reason, key (empty when none was built)
 *           FAILED          item, s message
 *           WORKLOAD_DONE   u workload
 *           PLUGIN_FAILED   s message
 *           DONE
 *   item = u workload, u threads; key = s model_digest, s processor,
 *   u thread_count, property list (proto.h).
 *
 * HELLO's version. Every child is a fork of the process that reads its
 * records (the host binary, or the program that loaded the deployment
 * runtime): no separate scanner is exec'd, so parent and child are always
 * the same build and the version cannot differ as GStreamer's registry
 * scanner's can. What the check does guard is the stream's start: the
 * child runs plugin code, which can write to any descriptor, and a first
 * record that does not begin with this number is refused before anything
 * of it is read. It is not a compatibility mechanism; changing a layout
 * needs no version change.
 *
 * Strings a decoder returns as const char * are borrowed from the message.
 * Internal to the host.
 */
#ifndef CALHOST_ISOLATE_CODEC_H
#define CALHOST_ISOLATE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "base/key.h"
#include "calhost/plugin.h"
#include "proto.h"

/* Every record type of every child, one numbering. */
enum isolate_record_type {
  /* a plugin's sweeps (calibrate's child, sweep's engine) */
  CALHOST_REC_HELLO = 1,
  CALHOST_REC_CANDIDATE = 2,
  CALHOST_REC_RESULT = 3,
  CALHOST_REC_SKIPPED = 4,
  CALHOST_REC_FAILED = 5,
  CALHOST_REC_WORKLOAD_DONE = 6,
  CALHOST_REC_PLUGIN_FAILED = 7,
  CALHOST_REC_DONE = 8,
  CALHOST_REC_CANDIDATE_END = 9,
  CALHOST_REC_BUDGET = 10,
  CALHOST_REC_RECORDING = 11,
  /* the loader's probe */
  CALHOST_REC_PROBE_ABI = 20,
  CALHOST_REC_PROBE_REASON = 21,
  CALHOST_REC_PROBE_IDENTITY = 22,
  CALHOST_REC_PROBE_DONE = 23,
  /* the runtime's device listing */
  CALHOST_REC_DEV_DEVICE = 30,
  CALHOST_REC_DEV_FAILED = 31,
  CALHOST_REC_DEV_DONE = 32,
  CALHOST_REC_DEV_CREATED = 33,
  /* a `plugin check` check */
  CALHOST_REC_CHECK_LOG = 40,
  CALHOST_REC_CHECK_RESULT = 41,
  CALHOST_REC_CHECK_DONE = 42,
};

/* The name of a record type ("PROBE_ABI"), NULL for a number no child
 * sends. */
const char *isolate_rec_name(uint32_t type);

/* Begins a record that has no payload (every *_DONE, DEV_CREATED,
 * CANDIDATE_END). */
void isolate_rec_put_empty(isolate_proto_buf *b, uint32_t type);

/* Initialises c over m when m is of type `type` and returns 0; else -1
 * (c then reads nothing: c->failed is set). Every decoder starts here. */
int isolate_rec_open(isolate_proto_cursor *c, const isolate_proto_msg *m, uint32_t type);

/* ---- the probe ---------------------------------------------------------- */

/* At most this many operators travel in a PROBE_IDENTITY. */
#define CALHOST_REC_MAX_OPERATORS 256

void isolate_rec_put_probe_abi(isolate_proto_buf *b, uint32_t chosen, uint32_t plugin_min,
                               uint32_t plugin_max);
int isolate_rec_get_probe_abi(const isolate_proto_msg *m, uint32_t *chosen, uint32_t *plugin_min,
                              uint32_t *plugin_max);
void isolate_rec_put_probe_reason(isolate_proto_buf *b, const char *reason);
int isolate_rec_get_probe_reason(const isolate_proto_msg *m, const char **reason);
/* operators: NULL-terminated. */
void isolate_rec_put_probe_identity(isolate_proto_buf *b, const char *backend,
                                    const char *implementation, const char *description,
                                    const char *const *operators);
/* The identity's strings (borrowed) and its operators (malloc'd array of
 * malloc'd strings, *operator_count entries; free each and the array). On
 * -1 nothing is left allocated (*operators NULL, *operator_count 0). A
 * list of more than CALHOST_REC_MAX_OPERATORS is refused. */
int isolate_rec_get_probe_identity(const isolate_proto_msg *m, const char **backend,
                                   const char **implementation, const char **description,
                                   char ***operators, size_t *operator_count);

/* ---- the device listing ------------------------------------------------- */

/* At most this many details travel with a device. */
#define CALHOST_REC_MAX_DETAILS 1024

/* A device as it travels (strings borrowed when encoding; malloc'd when
 * decoded: free with isolate_rec_device_free). */
typedef struct isolate_rec_device {
  uint32_t index, kind;
  char *identity, *name, *hardware;
  calhost_property *details;
  size_t detail_count;
} isolate_rec_device;

void isolate_rec_put_dev_failed(isolate_proto_buf *b, const char *message);
int isolate_rec_get_dev_failed(const isolate_proto_msg *m, const char **message);
void isolate_rec_put_dev_device(isolate_proto_buf *b, const isolate_rec_device *d);
/* Fills *d (owned); on -1 (a missing string too) *d is empty. */
int isolate_rec_get_dev_device(const isolate_proto_msg *m, isolate_rec_device *d);
void isolate_rec_device_free(isolate_rec_device *d);

/* ---- a plugin check ----------------------------------------------------- */

/* CHECK_RESULT's verdicts. */
enum { CALHOST_REC_CHECK_FAILED = 0, CALHOST_REC_CHECK_PASSED = 1, CALHOST_REC_CHECK_SKIPPED = 2 };

void isolate_rec_put_check_log(isolate_proto_buf *b, calhost_log_level level, const char *message);
/* -1 also for a NULL message. */
int isolate_rec_get_check_log(const isolate_proto_msg *m, calhost_log_level *level,
                              const char **message);
/* backend NULL travels as "". */
void isolate_rec_put_check_result(isolate_proto_buf *b, int verdict, const char *details,
                                  const char *backend);
/* *verdict: one of CALHOST_REC_CHECK_* (any other nonzero number reads as
 * passed); *details and *backend "" for a NULL string. */
int isolate_rec_get_check_result(const isolate_proto_msg *m, int *verdict, const char **details,
                                 const char **backend);

/* ---- a plugin's sweeps -------------------------------------------------- */

/* HELLO's version (see above). */
#define CALHOST_RECORD_PROTOCOL_VERSION 1

/* At most this many structure properties travel in a key. */
#define CALHOST_RECORD_MAX_STRUCTURE 4096

/* The sweep a record is about: the configuration's workload index and the
 * target's thread count. */
typedef struct isolate_rec_item {
  size_t workload;
  uint32_t threads;
} isolate_rec_item;

/* Appends a key (borrowed fields) to a frame being built. */
void isolate_rec_put_key(isolate_proto_buf *b, const char *model_digest, const char *processor,
                         uint32_t thread_count, const calhost_property *structure,
                         size_t structure_count);
/* Reads a key into *k (owned; free with base_key_free). Returns 0, or -1
 * on a malformed payload (c->failed) or allocation failure (*k empty). */
int isolate_rec_get_key(isolate_proto_cursor *c, base_key *k);

/* The cursor-based decoders below read a message isolate_rec_open opened
 * (the parent dispatches on the type first). */
void isolate_rec_put_hello(isolate_proto_buf *b, const char *backend);
/* -1 also for a version other than CALHOST_RECORD_PROTOCOL_VERSION, with
 * the reason in why ("record protocol version V, this calhost speaks W"). */
int isolate_rec_get_hello(isolate_proto_cursor *c, const char **backend, char *why, size_t cap);
void isolate_rec_put_budget(isolate_proto_buf *b, double deadline);
int isolate_rec_get_budget(isolate_proto_cursor *c, double *deadline);
void isolate_rec_put_candidate(isolate_proto_buf *b, isolate_rec_item it, uint32_t index,
                               uint32_t ordinal, uint32_t total, const char *policy);
int isolate_rec_get_candidate(isolate_proto_cursor *c, isolate_rec_item *it, uint32_t *index,
                              uint32_t *ordinal, uint32_t *total, const char **policy);
void isolate_rec_put_recording(isolate_proto_buf *b, const char *error);
int isolate_rec_get_recording(isolate_proto_cursor *c, const char **error);
/* Begins a RESULT, SKIPPED or FAILED record with its item. */
void isolate_rec_put_item(isolate_proto_buf *b, uint32_t type, isolate_rec_item it);
/* RESULT, SKIPPED and FAILED: the item first, so the parent knows the
 * sweep before the rest. */
int isolate_rec_get_item(isolate_proto_cursor *c, isolate_rec_item *it);
/* k NULL: an empty key (none was built). */
void isolate_rec_put_skipped(isolate_proto_buf *b, isolate_rec_item it, const char *reason,
                             const calhost_built_key *k);
int isolate_rec_get_skipped_body(isolate_proto_cursor *c, const char **reason, base_key *k);
void isolate_rec_put_failed(isolate_proto_buf *b, isolate_rec_item it, const char *message);
int isolate_rec_get_failed_body(isolate_proto_cursor *c, const char **message);
void isolate_rec_put_workload_done(isolate_proto_buf *b, size_t workload);
int isolate_rec_get_workload_done(isolate_proto_cursor *c, size_t *workload);
void isolate_rec_put_plugin_failed(isolate_proto_buf *b, const char *message);
int isolate_rec_get_plugin_failed(isolate_proto_cursor *c, const char **message);

#endif /* CALHOST_ISOLATE_CODEC_H */
