/*
 * records.c: encoding and decoding of keys and sweep results in the
 * child-to-parent record stream (see records.h).
 */
#include "records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void calhost_record_put_key(calhost_proto_buf *b, const char *model_digest, const char *processor,
                            uint32_t thread_count, const calhost_property *structure,
                            size_t structure_count) {
  calhost_proto_put_str(b, model_digest);
  calhost_proto_put_str(b, processor);
  calhost_proto_put_u64(b, thread_count);
  calhost_proto_put_u64(b, structure ? structure_count : 0);
  for (size_t i = 0; structure && i < structure_count; i++) {
    calhost_proto_put_str(b, structure[i].name ? structure[i].name : "");
    calhost_proto_put_str(b, structure[i].value ? structure[i].value : "");
  }
}

void calhost_record_key_free(calhost_record_key *k) {
  if (!k)
    return;
  free(k->model_digest);
  free(k->processor);
  for (size_t i = 0; i < k->structure_count; i++) {
    free((char *)k->structure[i].name);
    free((char *)k->structure[i].value);
  }
  free(k->structure);
  memset(k, 0, sizeof *k);
}

int calhost_record_get_key(calhost_proto_cursor *c, calhost_record_key *k) {
  memset(k, 0, sizeof *k);
  k->model_digest = calhost_proto_dup_str(c);
  k->processor = calhost_proto_dup_str(c);
  k->thread_count = (uint32_t)calhost_proto_get_u64(c);
  uint64_t n = calhost_proto_get_u64(c);
  if (c->failed || n > 4096)
    goto bad;
  if (n) {
    k->structure = calloc((size_t)n, sizeof *k->structure);
    if (!k->structure)
      goto bad;
    for (size_t i = 0; i < n; i++) {
      k->structure[i].name = calhost_proto_dup_str(c);
      k->structure[i].value = calhost_proto_dup_str(c);
      k->structure_count = i + 1;
      if (c->failed || !k->structure[i].name || !k->structure[i].value)
        goto bad;
    }
  }
  return 0;
bad:
  c->failed = 1;
  calhost_record_key_free(k);
  return -1;
}

void calhost_record_put_result(calhost_proto_buf *b, const calhost_sweep_result *r) {
  calhost_proto_put_u64(b, (uint64_t)r->ok);
  calhost_proto_put_str(b, r->error);
  calhost_proto_put_str(b, r->winner_policy);
  calhost_proto_put_u64(b, r->winner_index);
  calhost_proto_put_f64(b, r->median_us);
  calhost_proto_put_f64(b, r->mad_us);
  calhost_proto_put_f64(b, r->cv);
  calhost_proto_put_f64(b, r->min_us);
  calhost_proto_put_u64(b, r->samples);
  calhost_proto_put_u64(b, r->iterations);
  calhost_proto_put_u64(b, (uint64_t)r->noisy);
  calhost_proto_put_u64(b, (uint64_t)r->unchecked);
  calhost_proto_put_u64(b, (uint64_t)r->device_timed);
  calhost_proto_put_u64(b, r->candidate_count);
  calhost_proto_put_u64(b, r->planned);
  calhost_proto_put_u64(b, r->tried);
  calhost_proto_put_u64(b, r->pruned);
  calhost_proto_put_u64(b, r->rejected);
  calhost_proto_put_u64(b, (uint64_t)r->have_default);
  calhost_proto_put_str(b, r->default_policy);
  calhost_proto_put_f64(b, r->default_median_us);
  calhost_proto_put_f64(b, r->speedup);
  calhost_proto_put_u64(b, (uint64_t)r->budget_exhausted);
  calhost_proto_put_u64(b, r->budget_after);
  calhost_proto_put_u64(b, (uint64_t)r->cancelled);
  calhost_proto_put_u64(b, r->strategy);
  calhost_proto_put_u64(b, (uint64_t)r->numbered);
  calhost_proto_put_u64(b, r->space_size);
  calhost_proto_put_u64(b, r->budget_evaluations);
  calhost_proto_put_f64(b, r->budget_seconds);
  calhost_proto_put_u64(b, r->evaluated);
  calhost_proto_put_u64(b, r->search_stop);
  calhost_proto_put_f64(b, r->search_seconds);
  size_t n = r->rejection_count < CALHOST_RECORD_MAX_REJECTIONS ? r->rejection_count
                                                                : CALHOST_RECORD_MAX_REJECTIONS;
  calhost_proto_put_u64(b, n);
  for (size_t i = 0; i < n; i++) {
    calhost_proto_put_u64(b, r->rejections[i].index);
    calhost_proto_put_str(b, r->rejections[i].policy);
    calhost_proto_put_str(b, r->rejections[i].reason);
  }
  /* The candidates: as many as fit in the room left, texts while they fit. */
  const size_t fixed = 112; /* 9 numeric fields and 2 string headers, rounded up */
  size_t room = b->len < CALHOST_RECORD_CANDIDATE_ROOM ? CALHOST_RECORD_CANDIDATE_ROOM - b->len : 0;
  size_t nc = r->candidate_entries < room / fixed ? r->candidate_entries : room / fixed;
  room -= nc * fixed;
  calhost_proto_put_u64(b, nc);
  for (size_t i = 0; i < nc; i++) {
    const calhost_sweep_candidate *c = &r->candidates[i];
    size_t text = (c->policy ? strlen(c->policy) : 0) + (c->reason ? strlen(c->reason) : 0);
    int keep = text <= room;
    room -= keep ? text : 0;
    calhost_proto_put_u64(b, c->index);
    calhost_proto_put_u64(b, (uint64_t)c->status);
    calhost_proto_put_str(b, keep ? c->policy : NULL);
    calhost_proto_put_str(b, keep ? c->reason : NULL);
    calhost_proto_put_f64(b, c->median_us);
    calhost_proto_put_f64(b, c->mad_us);
    calhost_proto_put_f64(b, c->min_us);
    calhost_proto_put_f64(b, c->cv);
    calhost_proto_put_u64(b, c->samples);
    calhost_proto_put_u64(b, c->iterations);
    calhost_proto_put_u64(b, (uint64_t)c->noisy);
  }
}

int calhost_record_get_result(calhost_proto_cursor *c, calhost_sweep_result *r) {
  memset(r, 0, sizeof *r);
  r->ok = (int)calhost_proto_get_u64(c);
  const char *err = calhost_proto_get_str(c);
  if (err)
    snprintf(r->error, sizeof r->error, "%s", err);
  r->winner_policy = calhost_proto_dup_str(c);
  r->winner_index = (uint32_t)calhost_proto_get_u64(c);
  r->median_us = calhost_proto_get_f64(c);
  r->mad_us = calhost_proto_get_f64(c);
  r->cv = calhost_proto_get_f64(c);
  r->min_us = calhost_proto_get_f64(c);
  r->samples = (uint32_t)calhost_proto_get_u64(c);
  r->iterations = (uint32_t)calhost_proto_get_u64(c);
  r->noisy = (int)calhost_proto_get_u64(c);
  r->unchecked = (int)calhost_proto_get_u64(c);
  r->device_timed = (int)calhost_proto_get_u64(c);
  r->candidate_count = (uint32_t)calhost_proto_get_u64(c);
  r->planned = (uint32_t)calhost_proto_get_u64(c);
  r->tried = (uint32_t)calhost_proto_get_u64(c);
  r->pruned = (uint32_t)calhost_proto_get_u64(c);
  r->rejected = (uint32_t)calhost_proto_get_u64(c);
  r->have_default = (int)calhost_proto_get_u64(c);
  r->default_policy = calhost_proto_dup_str(c);
  r->default_median_us = calhost_proto_get_f64(c);
  r->speedup = calhost_proto_get_f64(c);
  r->budget_exhausted = (int)calhost_proto_get_u64(c);
  r->budget_after = (uint32_t)calhost_proto_get_u64(c);
  r->cancelled = (int)calhost_proto_get_u64(c);
  r->strategy = (uint32_t)calhost_proto_get_u64(c);
  r->numbered = (int)calhost_proto_get_u64(c);
  r->space_size = calhost_proto_get_u64(c);
  r->budget_evaluations = (uint32_t)calhost_proto_get_u64(c);
  r->budget_seconds = calhost_proto_get_f64(c);
  r->evaluated = (uint32_t)calhost_proto_get_u64(c);
  r->search_stop = (uint32_t)calhost_proto_get_u64(c);
  r->search_seconds = calhost_proto_get_f64(c);
  uint64_t n = calhost_proto_get_u64(c);
  if (c->failed || n > CALHOST_RECORD_MAX_REJECTIONS)
    goto bad;
  if (n) {
    r->rejections = calloc((size_t)n, sizeof *r->rejections);
    if (!r->rejections)
      goto bad;
    for (size_t i = 0; i < n; i++) {
      r->rejections[i].index = (uint32_t)calhost_proto_get_u64(c);
      r->rejections[i].policy = calhost_proto_dup_str(c);
      r->rejections[i].reason = calhost_proto_dup_str(c);
      r->rejection_count = i + 1;
    }
  }
  n = calhost_proto_get_u64(c);
  if (c->failed || n > CALHOST_PROTO_MAX_FRAME / 16)
    goto bad;
  if (n) {
    r->candidates = calloc((size_t)n, sizeof *r->candidates);
    if (!r->candidates)
      goto bad;
    for (size_t i = 0; i < n; i++) {
      calhost_sweep_candidate *x = &r->candidates[i];
      x->index = (uint32_t)calhost_proto_get_u64(c);
      uint64_t st = calhost_proto_get_u64(c);
      x->status = st <= CALHOST_CANDIDATE_UNMEASURED ? (calhost_candidate_status)st
                                                     : CALHOST_CANDIDATE_REJECTED;
      x->policy = calhost_proto_dup_str(c);
      x->reason = calhost_proto_dup_str(c);
      x->median_us = calhost_proto_get_f64(c);
      x->mad_us = calhost_proto_get_f64(c);
      x->min_us = calhost_proto_get_f64(c);
      x->cv = calhost_proto_get_f64(c);
      x->samples = (uint32_t)calhost_proto_get_u64(c);
      x->iterations = (uint32_t)calhost_proto_get_u64(c);
      x->noisy = calhost_proto_get_u64(c) != 0;
      r->candidate_entries = i + 1;
      if (c->failed)
        goto bad;
    }
  }
  if (c->failed)
    goto bad;
  return 0;
bad:
  c->failed = 1;
  calhost_sweep_result_free(r);
  return -1;
}
