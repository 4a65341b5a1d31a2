/*
 * records.h: the records a plugin's sweep child sends its parent (types and
 * payloads, built on proto.h): one encoder (sweep_record_put_TYPE: begins
 * the frame and writes its payload; the caller sends it) and one decoder
 * (sweep_record_get_TYPE) per record type, the only code that knows a
 * payload's layout. Every stream starts with HELLO, which carries
 * CALHOST_RECORD_PROTOCOL_VERSION; the parent refuses a stream of another
 * version (as GStreamer's plugin scanner does).
 *
 *   HELLO          u version, s backend                 (the first record)
 *   BUDGET         f deadline                           (when the plugin's time budget
 *                                                        ends, sweep_now's clock; after
 *                                                        create)
 *   CANDIDATE      item, u index, u ordinal, u total, s policy
 *                  ("starting candidate X of workload W": sent before it runs)
 *   CANDIDATE_END  (nothing)                            (the candidate announced last is
 *                                                        over: a crash from here on is
 *                                                        not its)
 *   RECORDING      s error                              (--record's outcome, "" when the
 *                                                        file was written; before the
 *                                                        sweep's RESULT)
 *   RESULT         item, key, result                    (a finished sweep)
 *   SKIPPED        item, s reason, key                  (already calibrated,
 *                                                        unsupported, budget; an empty
 *                                                        key when none was built)
 *   FAILED         item, s message                      (a sweep that chose nothing)
 *   WORKLOAD_DONE  u workload                           (every thread count done)
 *   PLUGIN_FAILED  s message                            (create failed, ...)
 *   DONE           (nothing)                            (clean end)
 *
 * item = u workload (the configuration's index), u threads (the target's)
 * key = s model_digest, s processor, u thread_count, structure (proto.h's
 *       property list: u n, n x (s name, s value))
 * Strings a decoder returns as const char * are borrowed from the message.
 * Internal to the host.
 */
#ifndef CALHOST_SWEEP_RECORDS_H
#define CALHOST_SWEEP_RECORDS_H

#include "base/key.h"
#include "measure.h"
#include "proto.h"

enum sweep_record_type {
  CALHOST_REC_HELLO = 1,
  CALHOST_REC_CANDIDATE = 2,
  CALHOST_REC_RESULT = 3,
  CALHOST_REC_SKIPPED = 4,
  CALHOST_REC_FAILED = 5,
  CALHOST_REC_WORKLOAD_DONE = 6,
  CALHOST_REC_PLUGIN_FAILED = 7,
  CALHOST_REC_DONE = 8,
  CALHOST_REC_CANDIDATE_END = 9, /* the candidate announced last is over */
  CALHOST_REC_BUDGET = 10,       /* f64: when the plugin's time budget ends */
  CALHOST_REC_RECORDING = 11,    /* str: --record's outcome ("" written, else the error),
                                    sent before the sweep's result */
};

/* At most this many rejections travel with a result (the count is exact).
 * Their policies and reasons travel while they take at most
 * CALHOST_RECORD_REJECTION_ROOM bytes; past it a policy is dropped (NULL)
 * and a reason longer than CALHOST_RECORD_SHORT_REASON bytes is replaced
 * by a note that it was dropped. */
#define CALHOST_RECORD_MAX_REJECTIONS 256
#define CALHOST_RECORD_REJECTION_ROOM (1024u * 1024u)
#define CALHOST_RECORD_SHORT_REASON 256u

/* The candidates of a result (sweep_candidate) travel after its
 * rejections while the frame stays under this many bytes; past it, their
 * policies and reasons are dropped (NULL), then the candidates themselves,
 * so a result always fits in a frame. */
#define CALHOST_RECORD_CANDIDATE_ROOM (3u * 1024u * 1024u)

/* At most this many structure properties travel in a key. */
#define CALHOST_RECORD_MAX_STRUCTURE 4096

/* A key as the plugin built it, owned (base/key.h: copied, compared and
 * freed there). */
typedef base_key sweep_record_key;

/* Appends a key (borrowed fields) to a frame being built. */
void sweep_record_put_key(isolate_proto_buf *b, const char *model_digest, const char *processor,
                          uint32_t thread_count, const calhost_property *structure,
                          size_t structure_count);
/* Reads a key into *k (owned; free with base_key_free). Returns 0,
 * or -1 on a malformed payload (c->failed) or allocation failure. */
int sweep_record_get_key(isolate_proto_cursor *c, sweep_record_key *k);

/* Appends a sweep result (at most CALHOST_RECORD_MAX_REJECTIONS rejections;
 * candidates as CALHOST_RECORD_CANDIDATE_ROOM allows). */
void sweep_record_put_result(isolate_proto_buf *b, const sweep_result *r);
/* Reads a result into *r (owned; free with sweep_result_free).
 * Returns 0, or -1 on a malformed payload or allocation failure. */
int sweep_record_get_result(isolate_proto_cursor *c, sweep_result *r);

/* The version of the record stream (HELLO's first field). Any change to a
 * payload's layout changes it. */
#define CALHOST_RECORD_PROTOCOL_VERSION 1

/* The sweep a record is about: the configuration's workload index and the
 * target's thread count. */
typedef struct sweep_record_item {
  size_t workload;
  uint32_t threads;
} sweep_record_item;

/* Decoders return 0, or -1 on a malformed payload (the cursor's failed
 * set) or allocation failure. */
void sweep_record_put_hello(isolate_proto_buf *b, const char *backend);
/* HELLO: -1 also for a version other than CALHOST_RECORD_PROTOCOL_VERSION,
 * with the reason in why ("record protocol version V, this calhost speaks
 * W"). */
int sweep_record_get_hello(isolate_proto_cursor *c, const char **backend, char *why, size_t cap);
void sweep_record_put_budget(isolate_proto_buf *b, double deadline);
int sweep_record_get_budget(isolate_proto_cursor *c, double *deadline);
/* CANDIDATE's payload after its item (decoded by sweep_record_get_item). */
void sweep_record_put_candidate(isolate_proto_buf *b, sweep_record_item it, uint32_t index,
                                uint32_t ordinal, uint32_t total, const char *policy);
int sweep_record_get_candidate(isolate_proto_cursor *c, sweep_record_item *it, uint32_t *index,
                               uint32_t *ordinal, uint32_t *total, const char **policy);
void sweep_record_put_candidate_end(isolate_proto_buf *b);
void sweep_record_put_recording(isolate_proto_buf *b, const char *error);
int sweep_record_get_recording(isolate_proto_cursor *c, const char **error);
/* RESULT, SKIPPED and FAILED: the item first (sweep_record_get_item), so
 * the parent knows the sweep before the rest (sweep_record_get_*_body). */
int sweep_record_get_item(isolate_proto_cursor *c, sweep_record_item *it);
void sweep_record_put_result_record(isolate_proto_buf *b, sweep_record_item it,
                                    const sweep_record_key *k, const sweep_result *r);
int sweep_record_get_result_body(isolate_proto_cursor *c, sweep_record_key *k, sweep_result *r);
/* k NULL: an empty key (none was built). */
void sweep_record_put_skipped(isolate_proto_buf *b, sweep_record_item it, const char *reason,
                              const calhost_built_key *k);
int sweep_record_get_skipped_body(isolate_proto_cursor *c, const char **reason,
                                  sweep_record_key *k);
void sweep_record_put_failed(isolate_proto_buf *b, sweep_record_item it, const char *message);
int sweep_record_get_failed_body(isolate_proto_cursor *c, const char **message);
void sweep_record_put_workload_done(isolate_proto_buf *b, size_t workload);
int sweep_record_get_workload_done(isolate_proto_cursor *c, size_t *workload);
void sweep_record_put_plugin_failed(isolate_proto_buf *b, const char *message);
int sweep_record_get_plugin_failed(isolate_proto_cursor *c, const char **message);
void sweep_record_put_done(isolate_proto_buf *b);

#endif /* CALHOST_SWEEP_RECORDS_H */
