/*
 * test_isolate.c: running work in a forked child: a clean child's records
 * all arrive; a crash, abort, hang, exit() or truncated stream is reported
 * with the records sent before it; stdout garbage is captured (bounded) and
 * never corrupts the records; the cancel flag kills the child.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "isolate/isolate.h"

enum { REC_NOTE = 1, REC_DONE = 99 };

static void send(int fd, uint32_t type, uint64_t n) {
  calhost_proto_buf b = {0};
  calhost_proto_begin(&b, type);
  calhost_proto_put_u64(&b, n);
  calhost_proto_put_str(&b, "note");
  calhost_proto_finish(&b);
  calhost_proto_write(fd, &b);
  calhost_proto_buf_free(&b);
}

typedef struct seen {
  unsigned notes;
  uint64_t last;
} seen;

static void on_record(void *user, const calhost_proto_msg *m) {
  seen *s = user;
  calhost_proto_cursor c;
  calhost_proto_cursor_init(&c, m);
  if (m->type == REC_NOTE) {
    s->notes++;
    s->last = calhost_proto_get_u64(&c);
  }
}

static int child_good(void *user, int fd) {
  (void)user;
  for (int i = 1; i <= 3; i++)
    send(fd, REC_NOTE, (uint64_t)i);
  send(fd, REC_DONE, 0);
  return 0;
}

static int child_segv(void *user, int fd) {
  (void)user;
  send(fd, REC_NOTE, 1);
  raise(SIGSEGV);
  return 0;
}

static int child_abort(void *user, int fd) {
  (void)user;
  send(fd, REC_NOTE, 1);
  send(fd, REC_NOTE, 2);
  abort();
}

static int child_hang(void *user, int fd) {
  (void)user;
  send(fd, REC_NOTE, 5);
  for (;;)
    pause();
  return 0;
}

static int child_exit(void *user, int fd) {
  int code = *(int *)user;
  send(fd, REC_NOTE, 1);
  _exit(code); /* like a plugin calling exit() (without atexit noise) */
}

static int child_chatty(void *user, int fd) {
  (void)user;
  for (int i = 0; i < 4000; i++)
    printf("plugin garbage line %d ...........\n", i);
  fflush(stdout);
  send(fd, REC_NOTE, 7);
  write(STDOUT_FILENO, "CHSW", 4); /* looks like our magic: still harmless */
  send(fd, REC_DONE, 0);
  return 0;
}

static int child_truncated(void *user, int fd) {
  (void)user;
  calhost_proto_buf b = {0};
  send(fd, REC_DONE, 0);
  calhost_proto_begin(&b, REC_NOTE);
  calhost_proto_put_str(&b, "never complete");
  calhost_proto_finish(&b);
  write(fd, b.data, b.len - 3);
  calhost_proto_buf_free(&b);
  return 0;
}

static calhost_isolate_options opts(double timeout) {
  calhost_isolate_options o = {.timeout_seconds = timeout, .done_type = REC_DONE};
  return o;
}

static void clean_child_delivers_every_record(void **state) {
  (void)state;
  calhost_isolate_options o = opts(10);
  calhost_child_outcome out;
  seen s = {0};
  assert_int_equal(calhost_isolate_run(&o, child_good, NULL, on_record, &s, &out), 0);
  assert_int_equal(out.end, CALHOST_CHILD_OK);
  assert_true(out.saw_done);
  assert_int_equal(s.notes, 3);
  assert_int_equal(s.last, 3);
}

static void crash_is_reported_after_earlier_records(void **state) {
  (void)state;
  calhost_isolate_options o = opts(10);
  calhost_child_outcome out;
  seen s = {0};
  assert_int_equal(calhost_isolate_run(&o, child_segv, NULL, on_record, &s, &out), -1);
  /* a plain build dies of SIGSEGV; under ASan the sanitizer reports and exits 1 */
  if (out.end == CALHOST_CHILD_SIGNALED)
    assert_int_equal(out.signal, SIGSEGV);
  else
    assert_true(out.end == CALHOST_CHILD_EXITED && out.exit_code != 0);
  assert_int_equal(s.notes, 1);
}

static void abort_is_reported(void **state) {
  (void)state;
  calhost_isolate_options o = opts(10);
  calhost_child_outcome out;
  seen s = {0};
  assert_int_equal(calhost_isolate_run(&o, child_abort, NULL, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_SIGNALED);
  assert_int_equal(out.signal, SIGABRT);
  assert_non_null(strstr(out.message, "SIGABRT"));
  assert_int_equal(s.notes, 2);
}

static void hang_is_killed_at_the_limit(void **state) {
  (void)state;
  calhost_isolate_options o = opts(0.3);
  calhost_child_outcome out;
  seen s = {0};
  assert_int_equal(calhost_isolate_run(&o, child_hang, NULL, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_TIMEOUT);
  assert_true(out.seconds >= 0.3 && out.seconds < 5);
  assert_non_null(strstr(out.message, "timed out"));
  assert_int_equal(s.last, 5);
}

static void exit_before_done_is_reported(void **state) {
  (void)state;
  calhost_isolate_options o = opts(10);
  calhost_child_outcome out;
  seen s = {0};
  int code = 0;
  assert_int_equal(calhost_isolate_run(&o, child_exit, &code, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_EXITED);
  assert_int_equal(out.exit_code, 0);
  code = 3;
  assert_int_equal(calhost_isolate_run(&o, child_exit, &code, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_EXITED);
  assert_int_equal(out.exit_code, 3);
  assert_non_null(strstr(out.message, "status 3"));
}

static void stdout_garbage_is_captured_not_parsed(void **state) {
  (void)state;
  calhost_isolate_options o = opts(10);
  calhost_child_outcome out;
  seen s = {0};
  assert_int_equal(calhost_isolate_run(&o, child_chatty, NULL, on_record, &s, &out), 0);
  assert_int_equal(s.notes, 1);
  assert_int_equal(s.last, 7);
  assert_true(out.output_total > CALHOST_CHILD_OUTPUT_MAX);
  assert_true(strlen(out.output) < CALHOST_CHILD_OUTPUT_MAX);
  assert_non_null(strstr(out.output, "plugin garbage line 0 "));
}

static void truncated_stream_is_a_protocol_failure(void **state) {
  (void)state;
  calhost_isolate_options o = opts(10);
  calhost_child_outcome out;
  seen s = {0};
  assert_int_equal(calhost_isolate_run(&o, child_truncated, NULL, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_PROTOCOL);
  assert_true(out.truncated);
  assert_int_equal(s.notes, 0);
}

static void cancel_flag_kills_the_child(void **state) {
  (void)state;
  volatile sig_atomic_t flag = 1;
  calhost_isolate_options o = opts(30);
  o.cancel_flag = &flag;
  calhost_child_outcome out;
  seen s = {0};
  assert_int_equal(calhost_isolate_run(&o, child_hang, NULL, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_CANCELLED);
  assert_true(out.seconds < 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(clean_child_delivers_every_record),
      cmocka_unit_test(crash_is_reported_after_earlier_records),
      cmocka_unit_test(abort_is_reported),
      cmocka_unit_test(hang_is_killed_at_the_limit),
      cmocka_unit_test(exit_before_done_is_reported),
      cmocka_unit_test(stdout_garbage_is_captured_not_parsed),
      cmocka_unit_test(truncated_stream_is_a_protocol_failure),
      cmocka_unit_test(cancel_flag_kills_the_child),
  };
  return cmocka_run_group_tests_name("sweep isolation", tests, NULL, NULL);
}
