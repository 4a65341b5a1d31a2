/*
 * records.c: the sweep result's payload on the child protocol (records.h):
 * the one part of a record's layout that is the measurement engine's, not
 * the codec's (isolate/codec.c owns every other record and field).
 */
#include "records.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plain fields of a result and of a candidate, in record order: one
 * description that both the encoder and the decoder follow. */
typedef enum field_kind {
  FK_INT,  /* int, as u64 */
  FK_BOOL, /* int read back as 0 or 1 */
  FK_U32,  /* uint32_t, as u64 */
  FK_U64,
  FK_F64,
  FK_STR /* char * (malloc'd when decoded) */
} field_kind;

typedef struct field {
  field_kind kind;
  size_t offset;
} field;

#define RESULT(kind, member)                                                                       \
  { kind, offsetof(sweep_result, member) }
static const field result_fields[] = {
    RESULT(FK_STR, winner_policy),
    RESULT(FK_U32, winner_index),
    RESULT(FK_F64, figures.median_us),
    RESULT(FK_F64, figures.mad_us),
    RESULT(FK_F64, figures.cv),
    RESULT(FK_F64, figures.min_us),
    RESULT(FK_U32, figures.samples),
    RESULT(FK_U32, figures.iterations),
    RESULT(FK_INT, figures.noisy),
    RESULT(FK_INT, unchecked),
    RESULT(FK_INT, device_timed),
    RESULT(FK_U32, candidate_count),
    RESULT(FK_U32, planned),
    RESULT(FK_U32, tried),
    RESULT(FK_U32, pruned),
    RESULT(FK_U32, rejected),
    RESULT(FK_INT, have_default),
    RESULT(FK_STR, default_policy),
    RESULT(FK_F64, default_median_us),
    RESULT(FK_F64, speedup),
    RESULT(FK_INT, budget_exhausted),
    RESULT(FK_U32, budget_after),
    RESULT(FK_INT, cancelled),
    RESULT(FK_U32, strategy),
    RESULT(FK_INT, numbered),
    RESULT(FK_U64, space_size),
    RESULT(FK_U32, budget_evaluations),
    RESULT(FK_F64, budget_seconds),
    RESULT(FK_U32, evaluated),
    RESULT(FK_U32, search_stop),
    RESULT(FK_F64, search_seconds),
    RESULT(FK_STR, warning),
};

/* after index, status, policy and reason */
#define CANDIDATE(kind, member)                                                                    \
  { kind, offsetof(sweep_candidate, member) }
static const field candidate_fields[] = {
    CANDIDATE(FK_F64, figures.median_us), CANDIDATE(FK_F64, figures.mad_us),
    CANDIDATE(FK_F64, figures.min_us),    CANDIDATE(FK_F64, figures.cv),
    CANDIDATE(FK_U32, figures.samples),   CANDIDATE(FK_U32, figures.iterations),
    CANDIDATE(FK_BOOL, figures.noisy),
};
#define FIELD_COUNT(t) (sizeof t / sizeof *t)

static void put_fields(isolate_proto_buf *b, const void *obj, const field *f, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const char *p = (const char *)obj + f[i].offset;
    switch (f[i].kind) {
    case FK_INT:
    case FK_BOOL:
      isolate_proto_put_u64(b, (uint64_t)(*(const int *)p));
      break;
    case FK_U32:
      isolate_proto_put_u64(b, *(const uint32_t *)p);
      break;
    case FK_U64:
      isolate_proto_put_u64(b, *(const uint64_t *)p);
      break;
    case FK_F64:
      isolate_proto_put_f64(b, *(const double *)p);
      break;
    case FK_STR:
      isolate_proto_put_str(b, *(char *const *)p);
      break;
    }
  }
}

static void get_fields(isolate_proto_cursor *c, void *obj, const field *f, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char *p = (char *)obj + f[i].offset;
    switch (f[i].kind) {
    case FK_INT:
      *(int *)p = (int)isolate_proto_get_u64(c);
      break;
    case FK_BOOL:
      *(int *)p = isolate_proto_get_u64(c) != 0;
      break;
    case FK_U32:
      *(uint32_t *)p = (uint32_t)isolate_proto_get_u64(c);
      break;
    case FK_U64:
      *(uint64_t *)p = isolate_proto_get_u64(c);
      break;
    case FK_F64:
      *(double *)p = isolate_proto_get_f64(c);
      break;
    case FK_STR:
      *(char **)p = isolate_proto_dup_str(c);
      break;
    }
  }
}

void sweep_record_put_result(isolate_proto_buf *b, const sweep_result *r) {
  isolate_proto_put_u64(b, (uint64_t)r->ok);
  isolate_proto_put_str(b, r->error);
  put_fields(b, r, result_fields, FIELD_COUNT(result_fields));
  size_t n = r->rejection_count < CALHOST_RECORD_MAX_REJECTIONS ? r->rejection_count
                                                                : CALHOST_RECORD_MAX_REJECTIONS;
  isolate_proto_put_u64(b, n);
  size_t rejection_room = CALHOST_RECORD_REJECTION_ROOM;
  for (size_t i = 0; i < n; i++) {
    const sweep_rejection *x = &r->rejections[i];
    size_t policy = x->policy ? strlen(x->policy) : 0, reason = x->reason ? strlen(x->reason) : 0;
    int keep = policy + reason <= rejection_room;
    rejection_room -= keep ? policy + reason : 0;
    isolate_proto_put_u64(b, x->index);
    isolate_proto_put_str(b, keep ? x->policy : NULL);
    isolate_proto_put_str(b, keep || reason <= CALHOST_RECORD_SHORT_REASON
                                 ? x->reason
                                 : "(reason dropped: the sweep's record was full)");
  }
  /* The candidates: as many as fit in the room left, texts while they fit. */
  const size_t fixed = 112; /* 9 numeric fields and 2 string headers, rounded up */
  size_t room = b->len < CALHOST_RECORD_CANDIDATE_ROOM ? CALHOST_RECORD_CANDIDATE_ROOM - b->len : 0;
  size_t nc = r->candidate_entries < room / fixed ? r->candidate_entries : room / fixed;
  room -= nc * fixed;
  isolate_proto_put_u64(b, nc);
  for (size_t i = 0; i < nc; i++) {
    const sweep_candidate *c = &r->candidates[i];
    size_t text = (c->policy ? strlen(c->policy) : 0) + (c->reason ? strlen(c->reason) : 0);
    int keep = text <= room;
    room -= keep ? text : 0;
    isolate_proto_put_u64(b, c->index);
    isolate_proto_put_u64(b, (uint64_t)c->status);
    isolate_proto_put_str(b, keep ? c->policy : NULL);
    isolate_proto_put_str(b, keep ? c->reason : NULL);
    put_fields(b, c, candidate_fields, FIELD_COUNT(candidate_fields));
  }
}

/* Reads a list's element count (at most max) and allocates that many
 * zeroed elements of size bytes: the array (NULL for an empty list) with
 * the count in *n, or NULL with *n 0 and c->failed set on a bad count or
 * no memory. */
static void *get_list(isolate_proto_cursor *c, uint64_t max, size_t size, size_t *n) {
  *n = 0;
  uint64_t count = isolate_proto_get_u64(c);
  if (c->failed || count > max)
    return c->failed = 1, NULL;
  void *v = count ? calloc((size_t)count, size) : NULL;
  if (count && !v)
    return c->failed = 1, NULL;
  *n = (size_t)count;
  return v;
}

int sweep_record_get_result(isolate_proto_cursor *c, sweep_result *r) {
  memset(r, 0, sizeof *r);
  r->ok = (int)isolate_proto_get_u64(c);
  const char *err = isolate_proto_get_str(c);
  if (err)
    snprintf(r->error, sizeof r->error, "%s", err);
  get_fields(c, r, result_fields, FIELD_COUNT(result_fields));
  size_t n;
  r->rejections = get_list(c, CALHOST_RECORD_MAX_REJECTIONS, sizeof *r->rejections, &n);
  if (c->failed)
    goto bad;
  for (size_t i = 0; i < n; i++) {
    r->rejections[i].index = (uint32_t)isolate_proto_get_u64(c);
    r->rejections[i].policy = isolate_proto_dup_str(c);
    r->rejections[i].reason = isolate_proto_dup_str(c);
    r->rejection_count = i + 1;
  }
  r->candidates = get_list(c, CALHOST_PROTO_MAX_FRAME / 16, sizeof *r->candidates, &n);
  if (c->failed)
    goto bad;
  for (size_t i = 0; i < n; i++) {
    sweep_candidate *x = &r->candidates[i];
    x->index = (uint32_t)isolate_proto_get_u64(c);
    uint64_t st = isolate_proto_get_u64(c);
    x->status = st <= CALHOST_CANDIDATE_UNMEASURED ? (sweep_candidate_status)st
                                                   : CALHOST_CANDIDATE_REJECTED;
    x->policy = isolate_proto_dup_str(c);
    x->reason = isolate_proto_dup_str(c);
    get_fields(c, x, candidate_fields, FIELD_COUNT(candidate_fields));
    r->candidate_entries = i + 1;
    if (c->failed)
      goto bad;
  }
  if (c->failed)
    goto bad;
  return 0;
bad:
  c->failed = 1;
  sweep_result_free(r);
  return -1;
}

/* ---- the RESULT record -------------------------------------------------- */

void sweep_record_put_result_record(isolate_proto_buf *b, isolate_rec_item it,
                                    const sweep_record_key *k, const sweep_result *r) {
  isolate_rec_put_item(b, CALHOST_REC_RESULT, it);
  isolate_rec_put_key(b, k->model_digest, k->processor, k->thread_count, k->structure,
                      k->structure_count);
  sweep_record_put_result(b, r);
}

int sweep_record_get_result_body(isolate_proto_cursor *c, sweep_record_key *k, sweep_result *r) {
  int bad = isolate_rec_get_key(c, k) != 0;
  bad |= sweep_record_get_result(c, r) != 0;
  return bad || c->failed ? -1 : 0;
}
