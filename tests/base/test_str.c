/*
 * test_str.c: the host's character rules of accepted text (host/base/str.h):
 * printable one-line text (base_str_control_at, base_str_one_line), a word
 * (base_str_is_word) and a backend name (base_str_is_name), the one
 * definition every part uses (loader negotiation, configuration, plugin
 * check, devices, the measurement engine, space files).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "base/str.h"

static void one_line_text_refuses_every_control_character_and_del(void **state) {
  (void)state;
  assert_true(base_str_one_line(""));
  assert_true(base_str_one_line("kernel=avx512 tile=64; caf\xc3\xa9"));
  assert_false(base_str_one_line(NULL));
  char s[4] = "a?b";
  for (int c = 1; c < 0x20; c++) {
    s[1] = (char)c;
    assert_false(base_str_one_line(s));
  }
  s[1] = 0x7f;
  assert_false(base_str_one_line(s));
  s[1] = (char)0x80; /* not a control character of this rule */
  assert_true(base_str_one_line(s));
  /* the index within a length, a NUL included */
  assert_int_equal(base_str_control_at("abc", 3), 3);
  assert_int_equal(base_str_control_at("ab\0c", 4), 2);
  assert_int_equal(base_str_control_at("ab\nc", 2), 2); /* past n: not looked at */
  assert_int_equal(base_str_control_at("a\tb", 3), 1);
}

static void a_word_has_no_blank(void **state) {
  (void)state;
  assert_true(base_str_is_word("64"));
  assert_true(base_str_is_word("n-major,\xc3\xa9"));
  assert_false(base_str_is_word(""));
  assert_false(base_str_is_word(NULL));
  assert_false(base_str_is_word("a b"));
  assert_false(base_str_is_word("a\x7f"));
  assert_false(base_str_is_word("a\n"));
}

static void a_backend_name_is_ascii_letters_digits_and_three_marks(void **state) {
  (void)state;
  assert_true(base_str_is_name("cpu_gemm-1.2", 0));
  assert_false(base_str_is_name("", 0));
  assert_false(base_str_is_name(NULL, 0));
  assert_false(base_str_is_name("cpu gemm", 0));
  assert_false(base_str_is_name("caf\xc3\xa9", 0)); /* ASCII only, whatever the locale */
  assert_false(base_str_is_name("a/b", 0));
  assert_false(base_str_is_name("a;b", 0));
  char name[66];
  memset(name, 'a', 65);
  name[65] = '\0';
  assert_true(base_str_is_name(name, 0));
  assert_false(base_str_is_name(name, 64)); /* 65 bytes */
  name[64] = '\0';
  assert_true(base_str_is_name(name, 64)); /* 64 bytes */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_line_text_refuses_every_control_character_and_del),
      cmocka_unit_test(a_word_has_no_blank),
      cmocka_unit_test(a_backend_name_is_ascii_letters_digits_and_three_marks),
  };
  return cmocka_run_group_tests_name("base_str", tests, NULL, NULL);
}
