/*
 * test_protocol.c: the framed record stream between a sweep child and its
 * parent: round trip of every field kind, frames split at every byte,
 * truncated and corrupt streams, cursor mismatches, every record type
 * through its one encoder and decoder, and the protocol version of HELLO.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "isolate/proto.h"
#include "sweep/records.h"

static void build(isolate_proto_buf *b, uint32_t type, const char *text) {
  isolate_proto_begin(b, type);
  isolate_proto_put_u64(b, 42);
  isolate_proto_put_f64(b, 2.5);
  isolate_proto_put_str(b, text);
  isolate_proto_put_str(b, NULL);
  isolate_proto_put_u64(b, UINT64_MAX);
  assert_int_equal(isolate_proto_finish(b), 0);
}

static void check_msg(const isolate_proto_msg *m, uint32_t type, const char *text) {
  isolate_proto_cursor c;
  assert_int_equal(m->type, type);
  isolate_proto_cursor_init(&c, m);
  assert_int_equal(isolate_proto_get_u64(&c), 42);
  assert_float_equal(isolate_proto_get_f64(&c), 2.5, 0);
  assert_string_equal(isolate_proto_get_str(&c), text);
  assert_null(isolate_proto_get_str(&c));
  assert_false(c.failed);
  assert_true(isolate_proto_get_u64(&c) == UINT64_MAX);
  assert_false(c.failed);
  assert_int_equal(c.left, 0);
}

static void round_trip_of_every_field_kind(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader r = {0};
  isolate_proto_msg m;
  build(&b, 7, "block=64;unroll=2");
  assert_int_equal(isolate_proto_reader_feed(&r, b.data, b.len), 0);
  assert_int_equal(isolate_proto_reader_next(&r, &m), 1);
  check_msg(&m, 7, "block=64;unroll=2");
  assert_int_equal(isolate_proto_reader_next(&r, &m), 0);
  assert_int_equal(isolate_proto_reader_pending(&r), 0);
  isolate_proto_reader_free(&r);
  isolate_proto_buf_free(&b);
}

static void frames_split_at_every_byte_are_reassembled(void **state) {
  (void)state;
  isolate_proto_buf a = {0}, b = {0};
  build(&a, 1, "first");
  build(&b, 2, "second, a little longer");
  unsigned char all[512];
  memcpy(all, a.data, a.len);
  memcpy(all + a.len, b.data, b.len);
  size_t total = a.len + b.len;
  for (size_t split = 0; split <= total; split++) {
    isolate_proto_reader r = {0};
    isolate_proto_msg m;
    int got = 0;
    isolate_proto_reader_feed(&r, all, split);
    while (isolate_proto_reader_next(&r, &m) == 1) {
      got++;
      check_msg(&m, (uint32_t)got, got == 1 ? "first" : "second, a little longer");
    }
    isolate_proto_reader_feed(&r, all + split, total - split);
    while (isolate_proto_reader_next(&r, &m) == 1) {
      got++;
      check_msg(&m, (uint32_t)got, got == 1 ? "first" : "second, a little longer");
    }
    assert_int_equal(got, 2);
    isolate_proto_reader_free(&r);
  }
  isolate_proto_buf_free(&a);
  isolate_proto_buf_free(&b);
}

static void truncated_stream_is_detected(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader r = {0};
  isolate_proto_msg m;
  build(&b, 3, "cut short");
  isolate_proto_reader_feed(&r, b.data, b.len - 5);
  assert_int_equal(isolate_proto_reader_next(&r, &m), 0);
  assert_true(isolate_proto_reader_pending(&r) > 0); /* EOF now means truncated */
  isolate_proto_reader_free(&r);
  isolate_proto_buf_free(&b);
}

static void garbage_is_a_corrupt_stream(void **state) {
  (void)state;
  isolate_proto_reader r = {0};
  isolate_proto_msg m;
  const char junk[] = "hello from a plugin that printf()s\n";
  isolate_proto_reader_feed(&r, junk, sizeof junk - 1);
  assert_int_equal(isolate_proto_reader_next(&r, &m), -1);
  assert_true(r.corrupt);
  assert_int_equal(isolate_proto_reader_next(&r, &m), -1);
  isolate_proto_reader_free(&r);
}

static void oversized_length_is_refused(void **state) {
  (void)state;
  unsigned char h[12] = {0x43, 0x48, 0x53, 0x57, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f};
  isolate_proto_reader r = {0};
  isolate_proto_msg m;
  isolate_proto_reader_feed(&r, h, sizeof h);
  assert_int_equal(isolate_proto_reader_next(&r, &m), -1);
  isolate_proto_reader_free(&r);
}

static void cursor_mismatch_fails_softly(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader r = {0};
  isolate_proto_msg m;
  isolate_proto_cursor c;
  build(&b, 1, "x");
  isolate_proto_reader_feed(&r, b.data, b.len);
  assert_int_equal(isolate_proto_reader_next(&r, &m), 1);
  isolate_proto_cursor_init(&c, &m);
  assert_null(isolate_proto_get_str(&c)); /* a u64 is next */
  assert_true(c.failed);
  assert_int_equal(isolate_proto_get_u64(&c), 0);
  /* a string whose length points past the payload */
  m.length = 12;
  isolate_proto_cursor_init(&c, &m);
  isolate_proto_get_u64(&c);
  isolate_proto_get_f64(&c);
  assert_true(c.failed);
  isolate_proto_reader_free(&r);
  isolate_proto_buf_free(&b);
}

static void sweep_result_round_trips(void **state) {
  (void)state;
  sweep_result r;
  memset(&r, 0, sizeof r);
  r.ok = 1;
  r.winner_policy = "block=64;unroll=2";
  r.winner_index = 5;
  r.figures.median_us = 12.5;
  r.figures.mad_us = 0.25;
  r.figures.cv = 0.02;
  r.figures.samples = 10;
  r.tried = 16;
  r.pruned = 7;
  r.rejected = 2;
  r.have_default = 1;
  r.default_policy = "block=1024;unroll=1";
  r.speedup = 1.75;
  sweep_rejection rej[2] = {{3, "p=3", "wrong output: 2 != 3"}, {9, NULL, "too large"}};
  r.rejections = rej;
  r.rejection_count = 2;
  calhost_property st[2] = {{"dtype", "float32"}, {"elements", "4096"}};
  isolate_proto_buf b = {0};
  isolate_proto_begin(&b, CALHOST_REC_RESULT);
  isolate_rec_put_key(&b, "sha256:ab", "x86_64;cores=2", 2, st, 2);
  sweep_record_put_result(&b, &r);
  assert_int_equal(isolate_proto_finish(&b), 0);

  isolate_proto_reader rd = {0};
  isolate_proto_msg m;
  isolate_proto_cursor c;
  isolate_proto_reader_feed(&rd, b.data, b.len);
  assert_int_equal(isolate_proto_reader_next(&rd, &m), 1);
  isolate_proto_cursor_init(&c, &m);
  sweep_record_key k;
  sweep_result out;
  assert_int_equal(isolate_rec_get_key(&c, &k), 0);
  assert_int_equal(sweep_record_get_result(&c, &out), 0);
  assert_string_equal(k.model_digest, "sha256:ab");
  assert_int_equal(k.thread_count, 2);
  assert_int_equal(k.structure_count, 2);
  assert_string_equal(k.structure[1].value, "4096");
  assert_string_equal(out.winner_policy, "block=64;unroll=2");
  assert_string_equal(out.default_policy, "block=1024;unroll=1");
  assert_float_equal(out.figures.median_us, 12.5, 0);
  assert_float_equal(out.speedup, 1.75, 0);
  assert_int_equal(out.pruned, 7);
  assert_int_equal(out.rejection_count, 2);
  assert_string_equal(out.rejections[0].reason, "wrong output: 2 != 3");
  assert_null(out.rejections[1].policy);
  sweep_result_free(&out);
  base_key_free(&k);

  /* the same payload cut short: decoding fails softly, nothing leaks */
  for (size_t cut = 0; cut < m.length; cut += 7) {
    isolate_proto_msg part = m;
    part.length = cut;
    isolate_proto_cursor_init(&c, &part);
    if (isolate_rec_get_key(&c, &k) == 0) {
      assert_int_equal(sweep_record_get_result(&c, &out), -1);
      base_key_free(&k);
    }
  }
  isolate_proto_reader_free(&rd);
  isolate_proto_buf_free(&b);
}

/* The largest result a sweep can make still fits in one frame: 256
 * rejections with policies of the maximum length and long reasons, and as
 * many candidates, again with the longest texts. The first rejections keep
 * their texts; the count and every index travel. */
static void the_largest_result_fits_in_a_frame(void **state) {
  (void)state;
  enum { N = CALHOST_RECORD_MAX_REJECTIONS };
  size_t big = CALHOST_POLICY_MAX_LENGTH;
  char *policy = malloc(big + 1), *reason = malloc(4001);
  assert_non_null(policy);
  assert_non_null(reason);
  memset(policy, 'p', big);
  policy[big] = '\0';
  memset(reason, 'r', 4000);
  reason[4000] = '\0';
  sweep_rejection *rej = calloc(N, sizeof *rej);
  sweep_candidate *cand = calloc(N, sizeof *cand);
  assert_non_null(rej);
  assert_non_null(cand);
  for (uint32_t i = 0; i < N; i++) {
    rej[i] = (sweep_rejection){i, policy, reason};
    cand[i].index = i;
    cand[i].policy = policy;
    cand[i].status = CALHOST_CANDIDATE_REJECTED;
    cand[i].reason = reason;
  }
  sweep_result r;
  memset(&r, 0, sizeof r);
  r.ok = 1;
  r.winner_policy = policy;
  r.default_policy = policy;
  r.rejections = rej;
  r.rejection_count = N;
  r.candidates = cand;
  r.candidate_entries = N;
  isolate_proto_buf b = {0};
  isolate_proto_begin(&b, CALHOST_REC_RESULT);
  isolate_rec_put_key(&b, "sha256:ab", "x86_64", 1, NULL, 0);
  sweep_record_put_result(&b, &r);
  assert_int_equal(isolate_proto_finish(&b), 0);
  assert_true(b.len <= CALHOST_PROTO_MAX_FRAME + 64);

  isolate_proto_reader rd = {0};
  isolate_proto_msg m;
  isolate_proto_cursor c;
  isolate_proto_reader_feed(&rd, b.data, b.len);
  assert_int_equal(isolate_proto_reader_next(&rd, &m), 1);
  isolate_proto_cursor_init(&c, &m);
  sweep_record_key k;
  sweep_result out;
  assert_int_equal(isolate_rec_get_key(&c, &k), 0);
  assert_int_equal(sweep_record_get_result(&c, &out), 0);
  assert_int_equal(out.rejection_count, N);
  assert_string_equal(out.rejections[0].policy, policy);
  assert_string_equal(out.rejections[0].reason, reason);
  assert_null(out.rejections[N - 1].policy);
  assert_non_null(strstr(out.rejections[N - 1].reason, "dropped"));
  assert_int_equal(out.rejections[N - 1].index, N - 1);
  assert_string_equal(out.winner_policy, policy);
  sweep_result_free(&out);
  base_key_free(&k);
  isolate_proto_reader_free(&rd);
  isolate_proto_buf_free(&b);
  free(rej);
  free(cand);
  free(policy);
  free(reason);
}

/* Every field of a result and of its candidates survives the record
 * stream: the encoder and the decoder follow one field table. */
static void every_result_and_candidate_field_round_trips(void **state) {
  (void)state;
  sweep_result r;
  memset(&r, 0, sizeof r);
  r.ok = 1;
  snprintf(r.error, sizeof r.error, "none");
  r.winner_policy = "w";
  r.winner_index = 1;
  r.figures.median_us = 2.5;
  r.figures.mad_us = 3.5;
  r.figures.cv = 4.5;
  r.figures.min_us = 5.5;
  r.figures.samples = 6;
  r.figures.iterations = 7;
  r.figures.noisy = 1;
  r.unchecked = 1;
  r.device_timed = 1;
  r.candidate_count = 8;
  r.planned = 9;
  r.tried = 10;
  r.pruned = 11;
  r.rejected = 12;
  r.have_default = 1;
  r.default_policy = "d";
  r.default_median_us = 13.5;
  r.speedup = 14.5;
  r.budget_exhausted = 1;
  r.budget_after = 15;
  r.cancelled = 1;
  r.strategy = 6;
  r.numbered = 1;
  r.space_size = (uint64_t)1 << 40;
  r.budget_evaluations = 16;
  r.budget_seconds = 17.5;
  r.evaluated = 18;
  r.search_stop = 3;
  r.search_seconds = 19.5;
  sweep_candidate cand = {
      20, "p", CALHOST_CANDIDATE_PRUNED, "slower", {21.5, 22.5, 23.5, 24.5, 25, 26, 1}};
  r.candidates = &cand;
  r.candidate_entries = 1;
  isolate_proto_buf b = {0};
  isolate_proto_begin(&b, CALHOST_REC_RESULT);
  sweep_record_put_result(&b, &r);
  assert_int_equal(isolate_proto_finish(&b), 0);
  isolate_proto_reader rd = {0};
  isolate_proto_msg m;
  isolate_proto_cursor c;
  isolate_proto_reader_feed(&rd, b.data, b.len);
  assert_int_equal(isolate_proto_reader_next(&rd, &m), 1);
  isolate_proto_cursor_init(&c, &m);
  sweep_result o;
  assert_int_equal(sweep_record_get_result(&c, &o), 0);
  assert_int_equal(o.ok, 1);
  assert_string_equal(o.error, "none");
  assert_string_equal(o.winner_policy, "w");
  assert_int_equal(o.winner_index, 1);
  assert_float_equal(o.figures.median_us, 2.5, 0);
  assert_float_equal(o.figures.mad_us, 3.5, 0);
  assert_float_equal(o.figures.cv, 4.5, 0);
  assert_float_equal(o.figures.min_us, 5.5, 0);
  assert_int_equal(o.figures.samples, 6);
  assert_int_equal(o.figures.iterations, 7);
  assert_true(o.figures.noisy && o.unchecked && o.device_timed && o.have_default);
  assert_true(o.budget_exhausted && o.cancelled && o.numbered);
  assert_int_equal(o.candidate_count, 8);
  assert_int_equal(o.planned, 9);
  assert_int_equal(o.tried, 10);
  assert_int_equal(o.pruned, 11);
  assert_int_equal(o.rejected, 12);
  assert_string_equal(o.default_policy, "d");
  assert_float_equal(o.default_median_us, 13.5, 0);
  assert_float_equal(o.speedup, 14.5, 0);
  assert_int_equal(o.budget_after, 15);
  assert_int_equal(o.strategy, 6);
  assert_true(o.space_size == (uint64_t)1 << 40);
  assert_int_equal(o.budget_evaluations, 16);
  assert_float_equal(o.budget_seconds, 17.5, 0);
  assert_int_equal(o.evaluated, 18);
  assert_int_equal(o.search_stop, 3);
  assert_float_equal(o.search_seconds, 19.5, 0);
  assert_int_equal(o.candidate_entries, 1);
  const sweep_candidate *x = &o.candidates[0];
  assert_int_equal(x->index, 20);
  assert_string_equal(x->policy, "p");
  assert_int_equal(x->status, CALHOST_CANDIDATE_PRUNED);
  assert_string_equal(x->reason, "slower");
  assert_float_equal(x->figures.median_us, 21.5, 0);
  assert_float_equal(x->figures.mad_us, 22.5, 0);
  assert_float_equal(x->figures.min_us, 23.5, 0);
  assert_float_equal(x->figures.cv, 24.5, 0);
  assert_int_equal(x->figures.samples, 25);
  assert_int_equal(x->figures.iterations, 26);
  assert_int_equal(x->figures.noisy, 1);
  sweep_result_free(&o);
  isolate_proto_reader_free(&rd);
  isolate_proto_buf_free(&b);
}

/* Frames one record built by an encoder and reads it back as a message
 * (the reader owns the bytes until freed). */
static void reframe(isolate_proto_buf *b, isolate_proto_reader *rd, isolate_proto_msg *m,
                    isolate_proto_cursor *c) {
  assert_int_equal(isolate_proto_finish(b), 0);
  assert_int_equal(isolate_proto_reader_feed(rd, b->data, b->len), 0);
  assert_int_equal(isolate_proto_reader_next(rd, m), 1);
  isolate_proto_cursor_init(c, m);
}

/* Every sweep record type has one encoder and one decoder (isolate/codec.h, the result records.h)
 * that agree, and nothing of a payload is left unread. */
static void every_record_type_round_trips_through_its_codec(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader rd = {0};
  isolate_proto_msg m;
  isolate_proto_cursor c;
  isolate_rec_item it = {3, 8}, got;
  char why[200];
  const char *s;

  isolate_rec_put_hello(&b, "cpu_gemm");
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_HELLO);
  assert_int_equal(isolate_rec_get_hello(&c, &s, why, sizeof why), 0);
  assert_string_equal(s, "cpu_gemm");
  assert_int_equal(c.left, 0);

  isolate_rec_put_budget(&b, 123.5);
  reframe(&b, &rd, &m, &c);
  double deadline;
  assert_int_equal(m.type, CALHOST_REC_BUDGET);
  assert_int_equal(isolate_rec_get_budget(&c, &deadline), 0);
  assert_float_equal(deadline, 123.5, 0);

  uint32_t index, ordinal, total;
  isolate_rec_put_candidate(&b, it, 17, 2, 32, "mc=64");
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_CANDIDATE);
  assert_int_equal(isolate_rec_get_candidate(&c, &got, &index, &ordinal, &total, &s), 0);
  assert_true(got.workload == 3 && got.threads == 8 && index == 17 && ordinal == 2 && total == 32);
  assert_string_equal(s, "mc=64");
  assert_int_equal(c.left, 0);

  isolate_rec_put_empty(&b, CALHOST_REC_CANDIDATE_END);
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_CANDIDATE_END);
  assert_int_equal(c.left, 0);

  isolate_rec_put_recording(&b, "disk full");
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_RECORDING);
  assert_int_equal(isolate_rec_get_recording(&c, &s), 0);
  assert_string_equal(s, "disk full");

  calhost_built_key k = {0};
  k.model_digest = "sha256:ab";
  k.processor = "x86_64";
  k.thread_count = 2;
  sweep_record_key key;
  isolate_rec_put_skipped(&b, it, "already calibrated", &k);
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_SKIPPED);
  assert_int_equal(isolate_rec_get_item(&c, &got), 0);
  assert_true(got.workload == 3 && got.threads == 8);
  assert_int_equal(isolate_rec_get_skipped_body(&c, &s, &key), 0);
  assert_string_equal(s, "already calibrated");
  assert_string_equal(key.processor, "x86_64");
  assert_int_equal(key.thread_count, 2);
  assert_int_equal(c.left, 0);

  sweep_result res, back;
  memset(&res, 0, sizeof res);
  res.ok = 1;
  res.winner_policy = "mc=64";
  sweep_record_put_result_record(&b, it, &key, &res);
  base_key_free(&key);
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_RESULT);
  assert_int_equal(isolate_rec_get_item(&c, &got), 0);
  assert_int_equal(sweep_record_get_result_body(&c, &key, &back), 0);
  assert_string_equal(key.model_digest, "sha256:ab");
  assert_string_equal(back.winner_policy, "mc=64");
  assert_int_equal(c.left, 0);
  base_key_free(&key);
  sweep_result_free(&back);

  isolate_rec_put_failed(&b, it, "build_key failed");
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_FAILED);
  assert_int_equal(isolate_rec_get_item(&c, &got), 0);
  assert_int_equal(isolate_rec_get_failed_body(&c, &s), 0);
  assert_string_equal(s, "build_key failed");

  size_t w;
  isolate_rec_put_workload_done(&b, 5);
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_WORKLOAD_DONE);
  assert_int_equal(isolate_rec_get_workload_done(&c, &w), 0);
  assert_int_equal(w, 5);

  isolate_rec_put_plugin_failed(&b, "create failed");
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_PLUGIN_FAILED);
  assert_int_equal(isolate_rec_get_plugin_failed(&c, &s), 0);
  assert_string_equal(s, "create failed");

  isolate_rec_put_empty(&b, CALHOST_REC_DONE);
  reframe(&b, &rd, &m, &c);
  assert_int_equal(m.type, CALHOST_REC_DONE);
  assert_int_equal(c.left, 0);

  /* a truncated payload is refused by its decoder */
  isolate_proto_begin(&b, CALHOST_REC_WORKLOAD_DONE);
  reframe(&b, &rd, &m, &c);
  assert_int_equal(isolate_rec_get_workload_done(&c, &w), -1);
  isolate_proto_reader_free(&rd);
  isolate_proto_buf_free(&b);
}

/* The stream starts with HELLO and its protocol version: another version
 * (or a HELLO without one) is refused, saying both. */
static void a_stream_of_another_protocol_version_is_refused(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader rd = {0};
  isolate_proto_msg m;
  isolate_proto_cursor c;
  char why[200] = "";
  const char *s;
  isolate_proto_begin(&b, CALHOST_REC_HELLO);
  isolate_proto_put_u64(&b, CALHOST_RECORD_PROTOCOL_VERSION + 1);
  isolate_proto_put_str(&b, "cpu_gemm");
  reframe(&b, &rd, &m, &c);
  assert_int_equal(isolate_rec_get_hello(&c, &s, why, sizeof why), -1);
  char want[120];
  snprintf(want, sizeof want, "record protocol version %u, this calhost speaks %u",
           CALHOST_RECORD_PROTOCOL_VERSION + 1, CALHOST_RECORD_PROTOCOL_VERSION);
  assert_string_equal(why, want);
  /* the HELLO of before (a backend name alone) */
  isolate_proto_begin(&b, CALHOST_REC_HELLO);
  isolate_proto_put_str(&b, "cpu_gemm");
  reframe(&b, &rd, &m, &c);
  assert_int_equal(isolate_rec_get_hello(&c, &s, why, sizeof why), -1);
  assert_string_equal(why, "malformed HELLO record");
  isolate_proto_reader_free(&rd);
  isolate_proto_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip_of_every_field_kind),
      cmocka_unit_test(every_result_and_candidate_field_round_trips),
      cmocka_unit_test(frames_split_at_every_byte_are_reassembled),
      cmocka_unit_test(truncated_stream_is_detected),
      cmocka_unit_test(garbage_is_a_corrupt_stream),
      cmocka_unit_test(oversized_length_is_refused),
      cmocka_unit_test(cursor_mismatch_fails_softly),
      cmocka_unit_test(sweep_result_round_trips),
      cmocka_unit_test(the_largest_result_fits_in_a_frame),
      cmocka_unit_test(every_record_type_round_trips_through_its_codec),
      cmocka_unit_test(a_stream_of_another_protocol_version_is_refused),
  };
  return cmocka_run_group_tests_name("sweep child protocol", tests, NULL, NULL);
}
