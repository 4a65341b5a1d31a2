/*
 * records.h: the records a plugin's sweep child sends its parent (types and
 * payloads, built on proto.h), and the encoding of a sweep result.
 *
 *   HELLO          s backend
 *   CANDIDATE      u workload, u threads, u index, u ordinal, u total, s policy
 *                  ("starting candidate X of workload W": sent before it runs)
 *   RESULT         u workload, u threads, key, result   (a finished sweep)
 *   SKIPPED        u workload, u threads, s reason, key (already calibrated,
 *                  unsupported, budget)
 *   FAILED         u workload, u threads, s message     (a sweep that chose nothing)
 *   WORKLOAD_DONE  u workload                           (every thread count done)
 *   PLUGIN_FAILED  s message                            (create failed, ...)
 *   DONE           (nothing)                            (clean end)
 *
 * key = s model_digest, s processor, u thread_count, structure (proto.h's
 *       property list: u n, n x (s name, s value))
 * Internal to the host.
 */
#ifndef CALHOST_SWEEP_RECORDS_H
#define CALHOST_SWEEP_RECORDS_H

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

/* A key as the plugin built it, owned (strings malloc'd). */
typedef struct sweep_record_key {
  char *model_digest;
  char *processor;
  uint32_t thread_count;
  calhost_property *structure; /* names and values malloc'd */
  size_t structure_count;
} sweep_record_key;

/* Appends a key (borrowed fields) to a frame being built. */
void sweep_record_put_key(isolate_proto_buf *b, const char *model_digest, const char *processor,
                          uint32_t thread_count, const calhost_property *structure,
                          size_t structure_count);
/* Reads a key into *k (owned; free with sweep_record_key_free). Returns 0,
 * or -1 on a malformed payload (c->failed) or allocation failure. */
int sweep_record_get_key(isolate_proto_cursor *c, sweep_record_key *k);
void sweep_record_key_free(sweep_record_key *k);

/* Copies a key as the plugin built it (valid only until its next call)
 * into *out (owned; free with sweep_record_key_free). Returns 0, or -1 when
 * out of memory (*out then empty). */
int sweep_record_key_copy(const calhost_built_key *k, sweep_record_key *out);

/* Whether the key b, built again for the same workload and target, differs
 * from the copy a of an earlier build (structure properties compared by
 * name, in any order). On a difference, returns 1 with the first one in why
 * ("processor '...x', then '...y'"); else 0. A key must be a function of
 * the workload and the target (calibrate and plugin check both hold
 * plugins to it). */
int sweep_record_key_differs(const sweep_record_key *a, const calhost_built_key *b, char *why,
                             size_t cap);

/* Appends a sweep result (at most CALHOST_RECORD_MAX_REJECTIONS rejections;
 * candidates as CALHOST_RECORD_CANDIDATE_ROOM allows). */
void sweep_record_put_result(isolate_proto_buf *b, const sweep_result *r);
/* Reads a result into *r (owned; free with sweep_result_free).
 * Returns 0, or -1 on a malformed payload or allocation failure. */
int sweep_record_get_result(isolate_proto_cursor *c, sweep_result *r);

#endif /* CALHOST_SWEEP_RECORDS_H */
