/*
 * test_base_output.c: the base layer's one JSON writer and terminal-text
 * escaper (host/base): every string, whatever its bytes, becomes valid
 * UTF-8 JSON by the documented rule, object members are written key then
 * value with commas between them, and terminal text keeps no control
 * character; "PATH:LINE" omits line 0; an array grows by doubling and
 * refuses an overflowing size without losing what it holds; the owned
 * string helpers copy, format without a length limit, write a failure into
 * a caller's buffer (or nowhere) and apply the allow / deny list rule.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/json.h"
#include "base/str.h"
#include "base/text.h"

static char *json_of(const char *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  base_json_string(f, s);
  fclose(f);
  return buf;
}

/* Object members: "KEY":VALUE by the value writers' rules, a comma before
 * every member but the first. */
static void json_members_write_key_then_value_with_commas(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fputc('{', f);
  base_json_member_string(f, 1, "s", "a\"b");
  base_json_member_string(f, 0, "ns", NULL);
  base_json_member_number(f, 0, "x", 0.5);
  base_json_member_number(f, 0, "nan", NAN);
  base_json_member_bool(f, 0, "t", 1);
  base_json_member_bool(f, 0, "f", 0);
  base_json_member_uint(f, 0, "u", 18446744073709551615ull);
  base_json_member_int(f, 0, "i", -3);
  base_json_member_null(f, 0, "z");
  char *words[] = {"a", "b\n"};
  base_json_member_strings(f, 0, "w", words, 2);
  base_json_member_strings(f, 0, "e", NULL, 0);
  fputc('}', f);
  fclose(f);
  assert_string_equal(buf, "{\"s\":\"a\\\"b\",\"ns\":null,\"x\":0.5,\"nan\":null,\"t\":true,"
                           "\"f\":false,\"u\":18446744073709551615,\"i\":-3,\"z\":null,"
                           "\"w\":[\"a\",\"b\\n\"],\"e\":[]}");
  free(buf);
}

static char *text_of(const char *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  base_text_put(f, s);
  fclose(f);
  return buf;
}

static void json_rule(void **state) {
  (void)state;
  static const struct {
    const char *in, *want;
  } cases[] = {
      {"plain", "\"plain\""},
      {"q\"b\\", "\"q\\\"b\\\\\""},
      {"\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\""},
      {"\033]0;x\007", "\"\\u001b]0;x\\u0007\""},
      {"\x7f", "\"\\u007f\""},
      {"caf\xe9", "\"caf\\u00e9\""},                            /* a Latin-1 byte */
      {"\xc3\xa9", "\"\xc3\xa9\""},                             /* valid UTF-8 kept */
      {"\xc2\x9b", "\"\\u009b\""},                              /* C1 control (CSI) */
      {"\xc0\xaf", "\"\\u00c0\\u00af\""},                       /* overlong */
      {"\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\""},            /* surrogate */
      {"\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\""}, /* past U+10FFFF */
      {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""},             /* U+1F600 kept */
      {"\xe2\x82", "\"\\u00e2\\u0082\""},                       /* truncated */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *got = json_of(cases[i].in);
    assert_string_equal(got, cases[i].want);
    free(got);
  }
  char *got = json_of(NULL);
  assert_string_equal(got, "null");
  free(got);
}

/* Random byte strings: the JSON is strict UTF-8 with no raw control, and
 * the text form has no control byte at all. */
static void random_bytes(void **state) {
  (void)state;
  srand(12345);
  for (int round = 0; round < 2000; round++) {
    unsigned char in[33];
    size_t n = (size_t)(rand() % 32);
    for (size_t i = 0; i < n; i++)
      in[i] = (unsigned char)(1 + rand() % 255);
    in[n] = 0;
    char *j = json_of((const char *)in), *t = text_of((const char *)in);
    for (const unsigned char *p = (const unsigned char *)j; *p;) {
      uint32_t cp;
      size_t len = base_utf8_decode(p, &cp);
      assert_true(len > 0);
      assert_true(cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f));
      p += len;
    }
    for (const unsigned char *p = (const unsigned char *)t; *p;) {
      uint32_t cp;
      size_t len = base_utf8_decode(p, &cp);
      assert_true(len > 0);
      assert_true(cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f));
      p += len;
    }
    free(j);
    free(t);
  }
}

static void text_rule(void **state) {
  (void)state;
  char *got = text_of("a\033]0;x\007\n\xe9\xc2\x9b\xc3\xa9");
  assert_string_equal(got, "a\\x1b]0;x\\x07\\n\\xe9\\u009b\xc3\xa9");
  free(got);
  char buf[8];
  assert_string_equal(base_text_escape(buf, sizeof buf, "ab\033cd"), "ab\\x1bc");
  assert_string_equal(base_text_escape(buf, 6, "ab\033cd"), "ab");
  /* one line per printf: only the final newline is kept */
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  base_text_printf(f, "v=%s\n", "x\ny");
  fclose(f);
  assert_string_equal(out, "v=x\\ny\n");
  free(out);
}

/* The filter stream escapes what passes through it, keeps newlines, and a
 * UTF-8 sequence cut between two writes stays whole. */
static void filter_stream(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  FILE *f = base_text_filter_open(mem);
  assert_non_null(f);
  setvbuf(f, NULL, _IONBF, 0);
  fputs("ok \033]0;x\007\n\xc3", f);
  fputs("\xa9 \xe9\n", f);
  fclose(f);
  fclose(mem);
  assert_string_equal(buf, "ok \\x1b]0;x\\x07\n\xc3\xa9 \\xe9\n");
  free(buf);
}

static void where_omits_line_zero(void **state) {
  (void)state;
  char buf[64];
  assert_string_equal(base_text_where(buf, sizeof buf, "/tmp/s.txt", 0), "/tmp/s.txt");
  assert_string_equal(base_text_where(buf, sizeof buf, "/tmp/s.txt", 12), "/tmp/s.txt:12");
  assert_string_equal(base_text_where(buf, sizeof buf, NULL, 3), "-:3");
}

static void array_grows_by_doubling_and_keeps_contents(void **state) {
  (void)state;
  int *v = NULL;
  size_t n = 0, cap = 0;
  for (int i = 0; i < 100; i++) {
    int *g = base_array_grow(v, n, &cap, sizeof *v, 4);
    assert_non_null(g);
    v = g;
    v[n++] = i;
    assert_true(cap >= n);
  }
  assert_int_equal(cap, 128); /* 4, 8, ..., 128 */
  for (int i = 0; i < 100; i++)
    assert_int_equal(v[i], i);
  /* no growth while there is room */
  size_t before = cap;
  assert_ptr_equal(base_array_grow(v, 50, &cap, sizeof *v, 4), v);
  assert_int_equal(cap, before);
  /* an element size whose doubled capacity overflows: NULL, nothing lost */
  assert_null(base_array_grow(v, cap, &cap, SIZE_MAX / 100, 4));
  assert_int_equal(cap, before);
  assert_int_equal(v[99], 99);
  free(v);
}

static void str_helpers_copy_format_fail_and_judge_lists(void **state) {
  (void)state;
  assert_null(base_str_dup(NULL));
  char *d = base_str_dup("abc");
  assert_string_equal(d, "abc");
  free(d);
  /* no fixed buffer: a long formatted string comes back whole */
  char big[3000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  char *f = base_str_format("%s:%d", big, 42);
  assert_int_equal(strlen(f), sizeof big - 1 + 3);
  assert_string_equal(f + sizeof big - 1, ":42");
  free(f);
  char err[8];
  assert_int_equal(base_str_fail(err, sizeof err, "bad %s", "value"), -1);
  assert_string_equal(err, "bad val"); /* cut, NUL-terminated */
  assert_int_equal(base_str_fail(NULL, 0, "ignored %d", 1), -1);
  err[0] = 'z';
  assert_int_equal(base_str_fail(err, 0, "ignored"), -1);
  assert_int_equal(err[0], 'z');
  char *allow[] = {"a", "b"}, *deny[] = {"b"};
  assert_true(base_str_listed(allow, 2, "b"));
  assert_false(base_str_listed(allow, 2, "c"));
  assert_false(base_str_listed(allow, 2, NULL));
  assert_true(base_str_allowed(allow, 2, NULL, 0, "a"));
  assert_false(base_str_allowed(allow, 2, deny, 1, "b")); /* deny wins */
  assert_false(base_str_allowed(allow, 2, NULL, 0, "c"));
  assert_true(base_str_allowed(NULL, 0, deny, 1, "c")); /* empty allow list */
  assert_false(base_str_allowed(NULL, 0, deny, 1, "b"));
}

/* base_text_figure: significant digits whatever the magnitude (issue 22
 * item 17: %f of 1e300 printed 301 digits), "-" for what is unknown */
static void figures_have_significant_digits(void **state) {
  (void)state;
  char b[32];
  assert_string_equal(base_text_figure(b, sizeof b, 314.9333, 4), "314.9");
  assert_string_equal(base_text_figure(b, sizeof b, 1e300, 4), "1e+300");
  assert_string_equal(base_text_figure(b, sizeof b, 1e-300, 3), "1e-300");
  assert_string_equal(base_text_figure(b, sizeof b, -1.5e-7, 3), "-1.5e-07");
  assert_string_equal(base_text_figure(b, sizeof b, 2.7123, 3), "2.71");
  assert_string_equal(base_text_figure(b, sizeof b, NAN, 4), "-");
  assert_string_equal(base_text_figure(b, sizeof b, INFINITY, 4), "-");
  assert_string_equal(base_text_figure(b, sizeof b, -DBL_MAX, 17), "-1.7976931348623157e+308");
  assert_true(strlen(base_text_figure(b, sizeof b, -DBL_MAX, 99)) < sizeof b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(json_rule),
      cmocka_unit_test(json_members_write_key_then_value_with_commas),
      cmocka_unit_test(random_bytes),
      cmocka_unit_test(text_rule),
      cmocka_unit_test(filter_stream),
      cmocka_unit_test(where_omits_line_zero),
      cmocka_unit_test(figures_have_significant_digits),
      cmocka_unit_test(array_grows_by_doubling_and_keeps_contents),
      cmocka_unit_test(str_helpers_copy_format_fail_and_judge_lists),
  };
  return cmocka_run_group_tests_name("base_output", tests, NULL, NULL);
}
