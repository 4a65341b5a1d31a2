/*
 * test_proto_props.c: property lists on the child-to-parent wire
 * (isolate_proto_put_props / _get_props / isolate_props_free): a list comes
 * back as it was sent (a NULL name or value as ""), a list longer than the
 * reader's limit or cut short fails the cursor and leaks nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "isolate/proto.h"

/* Frames a list followed by a marker and returns the message's cursor over
 * buf (the caller frees buf). */
static isolate_proto_cursor framed(isolate_proto_buf *b, const calhost_property *p, size_t n,
                                   size_t cut) {
  isolate_proto_begin(b, 7);
  isolate_proto_put_props(b, p, n);
  isolate_proto_put_u64(b, 99);
  assert_int_equal(isolate_proto_finish(b), 0);
  isolate_proto_msg m = {.type = 7,
                         .payload = b->data + CALHOST_PROTO_HEADER,
                         .length = b->len - CALHOST_PROTO_HEADER - cut};
  isolate_proto_cursor c;
  isolate_proto_cursor_init(&c, &m);
  return c;
}

static void props_come_back_as_sent(void **state) {
  (void)state;
  const calhost_property sent[] = {{"platform", "PoCL"}, {"vendor", NULL}, {NULL, "x"}};
  isolate_proto_buf b = {0};
  isolate_proto_cursor c = framed(&b, sent, 3, 0);
  calhost_property *got;
  size_t n;
  assert_int_equal(isolate_proto_get_props(&c, 8, &got, &n), 0);
  assert_int_equal(n, 3);
  assert_string_equal(got[0].name, "platform");
  assert_string_equal(got[0].value, "PoCL");
  assert_string_equal(got[1].name, "vendor");
  assert_string_equal(got[1].value, "");
  assert_string_equal(got[2].name, "");
  assert_string_equal(got[2].value, "x");
  assert_int_equal(isolate_proto_get_u64(&c), 99); /* the next field follows */
  assert_false(c.failed);
  isolate_props_free(got, n);
  isolate_proto_buf_free(&b);
}

static void an_empty_list_reads_as_none(void **state) {
  (void)state;
  isolate_proto_buf b = {0};
  isolate_proto_cursor c = framed(&b, NULL, 5, 0); /* no array: nothing sent */
  calhost_property *got;
  size_t n = 1;
  assert_int_equal(isolate_proto_get_props(&c, 8, &got, &n), 0);
  assert_null(got);
  assert_int_equal(n, 0);
  assert_int_equal(isolate_proto_get_u64(&c), 99);
  isolate_proto_buf_free(&b);
}

static void a_list_over_the_limit_fails_the_cursor(void **state) {
  (void)state;
  const calhost_property sent[] = {{"a", "1"}, {"b", "2"}, {"c", "3"}};
  isolate_proto_buf b = {0};
  isolate_proto_cursor c = framed(&b, sent, 3, 0);
  calhost_property *got;
  size_t n;
  assert_int_equal(isolate_proto_get_props(&c, 2, &got, &n), -1);
  assert_true(c.failed);
  assert_null(got);
  assert_int_equal(n, 0);
  isolate_proto_buf_free(&b);
}

static void a_list_cut_short_fails_and_frees_what_it_read(void **state) {
  (void)state;
  const calhost_property sent[] = {{"first", "one"}, {"second", "two"}};
  isolate_proto_buf b = {0};
  /* cut the marker (9 bytes) and the last value ('s' + u32 + "two" + NUL) */
  isolate_proto_cursor c = framed(&b, sent, 2, 9 + 9);
  calhost_property *got;
  size_t n;
  assert_int_equal(isolate_proto_get_props(&c, 8, &got, &n), -1);
  assert_true(c.failed);
  assert_null(got);
  assert_int_equal(n, 0);
  isolate_proto_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(props_come_back_as_sent),
      cmocka_unit_test(an_empty_list_reads_as_none),
      cmocka_unit_test(a_list_over_the_limit_fails_the_cursor),
      cmocka_unit_test(a_list_cut_short_fails_and_frees_what_it_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
