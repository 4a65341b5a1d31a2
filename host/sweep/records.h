/*
 * records.h: the sweep result on the child protocol. Every record of a
 * plugin's sweeps, its type and its layout are the protocol codec's
 * (isolate/codec.h); the one payload that is the measurement engine's own
 * type, the sweep result nested in a RESULT record (after its item and
 * key), is encoded and decoded here, so that the codec, which the
 * deployment runtime links, needs no engine. Internal to the host.
 */
#ifndef CALHOST_SWEEP_RECORDS_H
#define CALHOST_SWEEP_RECORDS_H

#include "base/key.h"
#include "isolate/codec.h"
#include "measure.h"

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

/* A key as the plugin built it, owned (base/key.h: copied, compared and
 * freed there). */
typedef base_key sweep_record_key;

/* Appends a sweep result (at most CALHOST_RECORD_MAX_REJECTIONS rejections;
 * candidates as CALHOST_RECORD_CANDIDATE_ROOM allows). */
void sweep_record_put_result(isolate_proto_buf *b, const sweep_result *r);
/* Reads a result into *r (owned; free with sweep_result_free).
 * Returns 0, or -1 on a malformed payload or allocation failure. */
int sweep_record_get_result(isolate_proto_cursor *c, sweep_result *r);

/* RESULT: the codec's item and key, then the sweep result. */
void sweep_record_put_result_record(isolate_proto_buf *b, isolate_rec_item it,
                                    const sweep_record_key *k, const sweep_result *r);
/* The rest of a RESULT after its item (isolate_rec_get_item): the key and
 * the result, both owned on 0; -1 on a malformed payload. */
int sweep_record_get_result_body(isolate_proto_cursor *c, sweep_record_key *k, sweep_result *r);

#endif /* CALHOST_SWEEP_RECORDS_H */
