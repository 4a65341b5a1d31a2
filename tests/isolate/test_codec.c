/*
 * test_codec.c: the child protocol's one codec (host/isolate/codec.h):
 * every record kind of the probe, the device listing, a plugin check and a
 * plugin's sweeps comes back through the frame reader as it was sent; a
 * record cut short anywhere in its payload, a record of another type and a
 * type no child sends are refused, leaking nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "isolate/codec.h"

/* Finishes b's frame and reads it back through a stream reader: the
 * message (its payload borrowed from r). */
static isolate_proto_msg framed(isolate_proto_buf *b, isolate_proto_reader *r) {
  isolate_proto_msg m;
  assert_int_equal(isolate_proto_finish(b), 0);
  assert_int_equal(isolate_proto_reader_feed(r, b->data, b->len), 0);
  assert_int_equal(isolate_proto_reader_next(r, &m), 1);
  assert_int_equal(isolate_proto_reader_pending(r), 0);
  return m;
}

static void probe_records_round_trip(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader r = {0};
  uint32_t chosen, lo, hi;
  isolate_rec_put_probe_abi(&b, 2, 1, 3);
  isolate_proto_msg m = framed(&b, &r);
  assert_int_equal(m.type, CALHOST_REC_PROBE_ABI);
  assert_int_equal(isolate_rec_get_probe_abi(&m, &chosen, &lo, &hi), 0);
  assert_int_equal(chosen, 2);
  assert_int_equal(lo, 1);
  assert_int_equal(hi, 3);

  const char *s, *impl, *desc;
  isolate_rec_put_probe_reason(&b, "no entry point");
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_get_probe_reason(&m, &s), 0);
  assert_string_equal(s, "no entry point");

  const char *const ops[] = {"MatMul", "Gemm", "Conv", NULL};
  char **got;
  size_t n;
  isolate_rec_put_probe_identity(&b, "cpu_gemm", "1.2", "a CPU GEMM", ops);
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_get_probe_identity(&m, &s, &impl, &desc, &got, &n), 0);
  assert_string_equal(s, "cpu_gemm");
  assert_string_equal(impl, "1.2");
  assert_string_equal(desc, "a CPU GEMM");
  assert_int_equal(n, 3);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(got[i], ops[i]);
    free(got[i]);
  }
  free(got);

  isolate_rec_put_empty(&b, CALHOST_REC_PROBE_DONE);
  m = framed(&b, &r);
  assert_int_equal(m.type, CALHOST_REC_PROBE_DONE);
  assert_int_equal(m.length, 0);
  isolate_proto_reader_free(&r);
  isolate_proto_buf_free(&b);
}

static void device_records_round_trip(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader r = {0};
  calhost_property details[] = {{"platform", "PoCL"}, {"vendor", "x"}};
  isolate_rec_device d = {4, 2, "pocl:0", "cpu-x", "hw", details, 2}, got;
  isolate_rec_put_dev_device(&b, &d);
  isolate_proto_msg m = framed(&b, &r);
  assert_int_equal(m.type, CALHOST_REC_DEV_DEVICE);
  assert_int_equal(isolate_rec_get_dev_device(&m, &got), 0);
  assert_int_equal(got.index, 4);
  assert_int_equal(got.kind, 2);
  assert_string_equal(got.identity, "pocl:0");
  assert_string_equal(got.name, "cpu-x");
  assert_string_equal(got.hardware, "hw");
  assert_int_equal(got.detail_count, 2);
  assert_string_equal(got.details[1].name, "vendor");
  assert_string_equal(got.details[1].value, "x");
  isolate_rec_device_free(&got);
  assert_null(got.identity);

  const char *s;
  isolate_rec_put_dev_failed(&b, "create failed");
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_get_dev_failed(&m, &s), 0);
  assert_string_equal(s, "create failed");
  isolate_rec_put_empty(&b, CALHOST_REC_DEV_CREATED);
  m = framed(&b, &r);
  assert_int_equal(m.type, CALHOST_REC_DEV_CREATED);
  isolate_proto_reader_free(&r);
  isolate_proto_buf_free(&b);
}

static void check_records_round_trip(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader r = {0};
  calhost_log_level level;
  const char *s, *be;
  int verdict;
  isolate_rec_put_check_log(&b, CALHOST_LOG_WARNING, "slow path");
  isolate_proto_msg m = framed(&b, &r);
  assert_int_equal(isolate_rec_get_check_log(&m, &level, &s), 0);
  assert_int_equal(level, CALHOST_LOG_WARNING);
  assert_string_equal(s, "slow path");
  const int verdicts[] = {CALHOST_REC_CHECK_FAILED, CALHOST_REC_CHECK_PASSED,
                          CALHOST_REC_CHECK_SKIPPED};
  for (size_t i = 0; i < 3; i++) {
    isolate_rec_put_check_result(&b, verdicts[i], "details", i ? "cpu_gemm" : NULL);
    m = framed(&b, &r);
    assert_int_equal(isolate_rec_get_check_result(&m, &verdict, &s, &be), 0);
    assert_int_equal(verdict, verdicts[i]);
    assert_string_equal(s, "details");
    assert_string_equal(be, i ? "cpu_gemm" : "");
  }
  /* a log without a message is refused */
  isolate_rec_put_check_log(&b, CALHOST_LOG_INFO, NULL);
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_get_check_log(&m, &level, &s), -1);
  isolate_proto_reader_free(&r);
  isolate_proto_buf_free(&b);
}

static void sweep_records_round_trip(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader r = {0};
  isolate_proto_cursor c;
  const char *s;
  char why[128];
  isolate_rec_put_hello(&b, "cpu_gemm");
  isolate_proto_msg m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_HELLO), 0);
  assert_int_equal(isolate_rec_get_hello(&c, &s, why, sizeof why), 0);
  assert_string_equal(s, "cpu_gemm");

  double deadline;
  isolate_rec_put_budget(&b, 12.25);
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_BUDGET), 0);
  assert_int_equal(isolate_rec_get_budget(&c, &deadline), 0);
  assert_true(deadline == 12.25);

  isolate_rec_item it = {5, 8}, got;
  uint32_t index, ordinal, total;
  isolate_rec_put_candidate(&b, it, 17, 2, 40, "mc=64");
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_CANDIDATE), 0);
  assert_int_equal(isolate_rec_get_candidate(&c, &got, &index, &ordinal, &total, &s), 0);
  assert_int_equal(got.workload, 5);
  assert_int_equal(got.threads, 8);
  assert_int_equal(index, 17);
  assert_int_equal(ordinal, 2);
  assert_int_equal(total, 40);
  assert_string_equal(s, "mc=64");

  isolate_rec_put_recording(&b, NULL);
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_RECORDING), 0);
  assert_int_equal(isolate_rec_get_recording(&c, &s), 0);
  assert_string_equal(s, "");

  calhost_property st[] = {{"m", "64"}, {"n", "32"}};
  calhost_built_key k = {.model_digest = "sha256:ab",
                         .processor = "x86_64",
                         .thread_count = 8,
                         .structure = st,
                         .structure_count = 2};
  base_key key;
  isolate_rec_put_skipped(&b, it, "already calibrated", &k);
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_SKIPPED), 0);
  assert_int_equal(isolate_rec_get_item(&c, &got), 0);
  assert_int_equal(got.workload, 5);
  assert_int_equal(isolate_rec_get_skipped_body(&c, &s, &key), 0);
  assert_string_equal(s, "already calibrated");
  assert_string_equal(key.model_digest, "sha256:ab");
  assert_string_equal(key.processor, "x86_64");
  assert_int_equal(key.thread_count, 8);
  assert_int_equal(key.structure_count, 2);
  assert_string_equal(key.structure[1].value, "32");
  base_key_free(&key);
  isolate_rec_put_skipped(&b, it, "unsupported", NULL); /* no key was built */
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_SKIPPED), 0);
  isolate_rec_get_item(&c, &got);
  assert_int_equal(isolate_rec_get_skipped_body(&c, &s, &key), 0);
  assert_null(key.model_digest);
  assert_int_equal(key.structure_count, 0);
  base_key_free(&key);

  size_t w;
  isolate_rec_put_failed(&b, it, "no winner");
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_FAILED), 0);
  isolate_rec_get_item(&c, &got);
  assert_int_equal(isolate_rec_get_failed_body(&c, &s), 0);
  assert_string_equal(s, "no winner");
  isolate_rec_put_workload_done(&b, 9);
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_WORKLOAD_DONE), 0);
  assert_int_equal(isolate_rec_get_workload_done(&c, &w), 0);
  assert_int_equal(w, 9);
  isolate_rec_put_plugin_failed(&b, "create() failed");
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_PLUGIN_FAILED), 0);
  assert_int_equal(isolate_rec_get_plugin_failed(&c, &s), 0);
  assert_string_equal(s, "create() failed");
  isolate_proto_reader_free(&r);
  isolate_proto_buf_free(&b);
}

/* Decodes m by its type with the codec (freeing what it returns): 0 or -1. */
static int decode(const isolate_proto_msg *m) {
  isolate_proto_cursor c;
  const char *s, *t, *u;
  uint32_t x, y, z;
  size_t n;
  int v, rc;
  char why[128];
  base_key key;
  isolate_rec_item it;
  if (m->type == CALHOST_REC_PROBE_ABI)
    return isolate_rec_get_probe_abi(m, &x, &y, &z);
  if (m->type == CALHOST_REC_PROBE_IDENTITY) {
    char **ops;
    rc = isolate_rec_get_probe_identity(m, &s, &t, &u, &ops, &n);
    for (size_t i = 0; i < n; i++)
      free(ops[i]);
    free(ops);
    return rc;
  }
  if (m->type == CALHOST_REC_DEV_DEVICE) {
    isolate_rec_device d;
    rc = isolate_rec_get_dev_device(m, &d);
    isolate_rec_device_free(&d);
    return rc;
  }
  if (m->type == CALHOST_REC_CHECK_RESULT)
    return isolate_rec_get_check_result(m, &v, &s, &t);
  if (isolate_rec_open(&c, m, CALHOST_REC_HELLO) == 0)
    return isolate_rec_get_hello(&c, &s, why, sizeof why);
  if (isolate_rec_open(&c, m, CALHOST_REC_CANDIDATE) == 0)
    return isolate_rec_get_candidate(&c, &it, &x, &y, &z, &s);
  if (isolate_rec_open(&c, m, CALHOST_REC_SKIPPED) == 0) {
    rc = isolate_rec_get_item(&c, &it);
    rc |= isolate_rec_get_skipped_body(&c, &s, &key);
    base_key_free(&key);
    return rc ? -1 : 0;
  }
  fail_msg("no decoder for record type %u", m->type);
  return 0;
}

/* Every kind with a payload, cut short at each byte: refused. */
static void truncated_records_are_refused(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader r = {0};
  const char *const ops[] = {"MatMul", NULL};
  calhost_property p[] = {{"a", "b"}};
  isolate_rec_device d = {1, 1, "id", "name", "hw", p, 1};
  calhost_built_key k = {
      .model_digest = "d", .processor = "p", .structure = p, .structure_count = 1};
  isolate_rec_item it = {1, 2};
  for (int kind = 0; kind < 7; kind++) {
    switch (kind) {
    case 0:
      isolate_rec_put_probe_abi(&b, 1, 1, 2);
      break;
    case 1:
      isolate_rec_put_probe_identity(&b, "be", "1", "desc", ops);
      break;
    case 2:
      isolate_rec_put_dev_device(&b, &d);
      break;
    case 3:
      isolate_rec_put_check_result(&b, 1, "ok", "be");
      break;
    case 4:
      isolate_rec_put_hello(&b, "be");
      break;
    case 5:
      isolate_rec_put_candidate(&b, it, 1, 2, 3, "p");
      break;
    default:
      isolate_rec_put_skipped(&b, it, "why", &k);
      break;
    }
    isolate_proto_msg whole = framed(&b, &r);
    assert_int_equal(decode(&whole), 0);
    for (size_t cut = 1; cut <= whole.length; cut++) {
      isolate_proto_msg m = whole;
      m.length -= cut;
      if (decode(&m) != -1)
        fail_msg("record type %u cut by %zu of %zu bytes was accepted", whole.type, cut,
                 whole.length);
    }
  }
  isolate_proto_reader_free(&r);
  isolate_proto_buf_free(&b);
}

/* A record read as another kind, a type no child sends, a list longer than
 * the codec's limit and a HELLO of another version are refused. */
static void foreign_records_are_refused(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_reader r = {0};
  uint32_t x, y, z;
  const char *s, *t, *u;
  isolate_rec_put_dev_failed(&b, "boom");
  isolate_proto_msg m = framed(&b, &r);
  assert_int_equal(isolate_rec_get_probe_reason(&m, &s), -1); /* same layout, other type */
  assert_int_equal(isolate_rec_get_probe_abi(&m, &x, &y, &z), -1);
  isolate_proto_cursor c;
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_PLUGIN_FAILED), -1);
  assert_true(c.failed);
  assert_null(isolate_proto_get_str(&c));

  /* every type a child sends has a distinct name; others have none */
  const char *names[64] = {0};
  size_t known = 0;
  for (uint32_t type = 0; type < 64; type++) {
    names[type] = isolate_rec_name(type);
    if (!names[type])
      continue;
    known++;
    for (uint32_t o = 0; o < type; o++)
      if (names[o])
        assert_string_not_equal(names[o], names[type]);
  }
  assert_int_equal(known, 22);
  assert_null(isolate_rec_name(0));
  assert_null(isolate_rec_name(12345));

  /* an identity listing more operators than the limit */
  isolate_proto_begin(&b, CALHOST_REC_PROBE_IDENTITY);
  isolate_proto_put_str(&b, "be");
  isolate_proto_put_str(&b, "1");
  isolate_proto_put_str(&b, "d");
  isolate_proto_put_u64(&b, CALHOST_REC_MAX_OPERATORS + 1);
  for (size_t i = 0; i <= CALHOST_REC_MAX_OPERATORS; i++)
    isolate_proto_put_str(&b, "Op");
  m = framed(&b, &r);
  char **ops = (char **)&ops;
  size_t n = 7;
  assert_int_equal(isolate_rec_get_probe_identity(&m, &s, &t, &u, &ops, &n), -1);
  assert_null(ops);
  assert_int_equal(n, 0);

  /* a HELLO of another version */
  char why[128];
  isolate_proto_begin(&b, CALHOST_REC_HELLO);
  isolate_proto_put_u64(&b, CALHOST_RECORD_PROTOCOL_VERSION + 1);
  isolate_proto_put_str(&b, "be");
  m = framed(&b, &r);
  assert_int_equal(isolate_rec_open(&c, &m, CALHOST_REC_HELLO), 0);
  assert_int_equal(isolate_rec_get_hello(&c, &s, why, sizeof why), -1);
  assert_non_null(strstr(why, "record protocol version"));
  isolate_proto_reader_free(&r);
  isolate_proto_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(probe_records_round_trip),
      cmocka_unit_test(device_records_round_trip),
      cmocka_unit_test(check_records_round_trip),
      cmocka_unit_test(sweep_records_round_trip),
      cmocka_unit_test(truncated_records_are_refused),
      cmocka_unit_test(foreign_records_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
