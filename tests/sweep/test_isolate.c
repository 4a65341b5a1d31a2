/*
 * test_isolate.c: running work in a forked child (host/isolate): a clean
 * child's records all arrive; the host's interrupt handlers (SIGINT,
 * SIGTERM, SIGHUP) are reset in the child; a crash, abort, hang, exit() or truncated
 * stream is reported with the records sent before it; a crash is a signal
 * even when the parent has a SIGSEGV handler (crash signals are reset);
 * stdout garbage (buffered output included) is captured (bounded) and never
 * corrupts the records, stderr too when asked; the record pipe does not
 * leak into programs the child runs (close-on-exec); the cancel flag kills
 * the child; one signal-name table.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "isolate/isolate.h"

enum { REC_NOTE = 1, REC_DONE = 99 };

static void send(int fd, uint32_t type, uint64_t n) {
  isolate_proto_buf b = {0};
  isolate_proto_begin(&b, type);
  isolate_proto_put_u64(&b, n);
  isolate_proto_put_str(&b, "note");
  isolate_proto_finish(&b);
  isolate_proto_write(fd, &b);
  isolate_proto_buf_free(&b);
}

typedef struct seen {
  unsigned notes;
  uint64_t last, sum;
} seen;

static void on_record(void *user, const isolate_proto_msg *m) {
  seen *s = user;
  isolate_proto_cursor c;
  isolate_proto_cursor_init(&c, m);
  if (m->type == REC_NOTE) {
    s->notes++;
    s->last = isolate_proto_get_u64(&c);
    s->sum += s->last;
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
  isolate_proto_buf b = {0};
  send(fd, REC_DONE, 0);
  isolate_proto_begin(&b, REC_NOTE);
  isolate_proto_put_str(&b, "never complete");
  isolate_proto_finish(&b);
  write(fd, b.data, b.len - 3);
  isolate_proto_buf_free(&b);
  return 0;
}

static isolate_options opts(double timeout) {
  isolate_options o = {.timeout_seconds = timeout, .done_type = REC_DONE};
  return o;
}

static void clean_child_delivers_every_record(void **state) {
  (void)state;
  isolate_options o = opts(10);
  isolate_child_outcome out;
  seen s = {0};
  assert_int_equal(isolate_run(&o, child_good, NULL, on_record, &s, &out), 0);
  assert_int_equal(out.end, CALHOST_CHILD_OK);
  assert_true(out.saw_done);
  assert_int_equal(s.notes, 3);
  assert_int_equal(s.last, 3);
}

static void crash_is_reported_after_earlier_records(void **state) {
  (void)state;
  isolate_options o = opts(10);
  isolate_child_outcome out;
  seen s = {0};
  assert_int_equal(isolate_run(&o, child_segv, NULL, on_record, &s, &out), -1);
  /* crash signals are reset in the child: a signal even under ASan */
  assert_int_equal(out.end, CALHOST_CHILD_SIGNALED);
  assert_int_equal(out.signal, SIGSEGV);
  assert_string_equal(out.message, "killed by signal 11 (SIGSEGV)");
  assert_int_equal(s.notes, 1);
}

static void exit_7(int sig) {
  (void)sig;
  _exit(7);
}

/* A handler the host (or a sanitizer) installed does not turn a plugin's
 * crash into an exit status. */
static void parent_crash_handler_is_reset_in_the_child(void **state) {
  (void)state;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = exit_7;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
  isolate_options o = opts(10);
  isolate_child_outcome out;
  seen s = {0};
  int rc = isolate_run(&o, child_segv, NULL, on_record, &s, &out);
  sigaction(SIGSEGV, &old, NULL);
  assert_int_equal(rc, -1);
  assert_int_equal(out.end, CALHOST_CHILD_SIGNALED);
  assert_int_equal(out.signal, SIGSEGV);
}

static void note_signal(int sig) {
  (void)sig;
}

/* Sends one note per interrupt signal: 1 when its disposition is SIG_DFL. */
static int child_reports_dispositions(void *user, int fd) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  (void)user;
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction cur;
    sigaction(sigs[i], NULL, &cur);
    send(fd, REC_NOTE, cur.sa_handler == SIG_DFL ? 1 : 0);
  }
  send(fd, REC_DONE, 0);
  return 0;
}

/* The host catches SIGINT, SIGTERM and SIGHUP to commit finished work; a
 * plugin child must not inherit those handlers (a closed terminal ends it). */
static void host_interrupt_handlers_are_reset_in_the_child(void **state) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction sa, old[3];
  (void)state;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < 3; i++)
    assert_int_equal(sigaction(sigs[i], &sa, &old[i]), 0);
  isolate_options o = opts(10);
  isolate_child_outcome out;
  seen s = {0};
  int rc = isolate_run(&o, child_reports_dispositions, NULL, on_record, &s, &out);
  for (size_t i = 0; i < 3; i++)
    sigaction(sigs[i], &old[i], NULL);
  assert_int_equal(rc, 0);
  assert_int_equal(s.notes, 3);
  assert_int_equal(s.sum, 3); /* every one SIG_DFL */
}

static int child_writes_both(void *user, int fd) {
  (void)user;
  printf("left in the buffer"); /* no flush: the runtime flushes after the child */
  fprintf(stderr, "to stderr\n");
  send(fd, REC_DONE, 0);
  return 0;
}

static void stderr_and_buffered_stdout_are_captured(void **state) {
  (void)state;
  isolate_options o = opts(10);
  o.capture_stderr = 1;
  isolate_child_outcome out;
  assert_int_equal(isolate_run(&o, child_writes_both, NULL, NULL, NULL, &out), 0);
  assert_string_equal(out.output, "left in the buffer");
  assert_string_equal(out.errors, "to stderr\n");
  assert_int_equal(out.errors_total, 10);
}

static int child_runs_a_program(void *user, int fd) {
  char cmd[128];
  (void)user;
  snprintf(cmd, sizeof cmd, "test -e /proc/self/fd/%d", fd);
  int st = system(cmd);
  send(fd, REC_NOTE, st == -1 ? 99 : (uint64_t)WEXITSTATUS(st));
  send(fd, REC_DONE, 0);
  return 0;
}

/* The pipes are close-on-exec: a program the plugin starts cannot hold the
 * record stream open (or write into it). */
static void record_pipe_is_close_on_exec(void **state) {
  (void)state;
  isolate_options o = opts(10);
  isolate_child_outcome out;
  seen s = {0};
  if (access("/proc/self/fd", F_OK) != 0)
    skip();
  assert_int_equal(isolate_run(&o, child_runs_a_program, NULL, on_record, &s, &out), 0);
  assert_int_equal(s.notes, 1);
  assert_int_equal(s.last, 1); /* `test -e` failed: the descriptor was closed at exec */
}

static void signal_names(void **state) {
  (void)state;
  assert_string_equal(isolate_signal_name(SIGSEGV), "SIGSEGV");
  assert_string_equal(isolate_signal_name(SIGXFSZ), "SIGXFSZ");
  assert_string_equal(isolate_signal_name(0), "signal");
}

static void abort_is_reported(void **state) {
  (void)state;
  isolate_options o = opts(10);
  isolate_child_outcome out;
  seen s = {0};
  assert_int_equal(isolate_run(&o, child_abort, NULL, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_SIGNALED);
  assert_int_equal(out.signal, SIGABRT);
  assert_non_null(strstr(out.message, "SIGABRT"));
  assert_int_equal(s.notes, 2);
}

static void hang_is_killed_at_the_limit(void **state) {
  (void)state;
  isolate_options o = opts(0.3);
  isolate_child_outcome out;
  seen s = {0};
  assert_int_equal(isolate_run(&o, child_hang, NULL, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_TIMEOUT);
  assert_true(out.seconds >= 0.3 && out.seconds < 5);
  assert_non_null(strstr(out.message, "timed out"));
  assert_int_equal(s.last, 5);
}

static void exit_before_done_is_reported(void **state) {
  (void)state;
  isolate_options o = opts(10);
  isolate_child_outcome out;
  seen s = {0};
  int code = 0;
  assert_int_equal(isolate_run(&o, child_exit, &code, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_EXITED);
  assert_int_equal(out.exit_code, 0);
  code = 3;
  assert_int_equal(isolate_run(&o, child_exit, &code, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_EXITED);
  assert_int_equal(out.exit_code, 3);
  assert_non_null(strstr(out.message, "status 3"));
}

static void stdout_garbage_is_captured_not_parsed(void **state) {
  (void)state;
  isolate_options o = opts(10);
  isolate_child_outcome out;
  seen s = {0};
  assert_int_equal(isolate_run(&o, child_chatty, NULL, on_record, &s, &out), 0);
  assert_int_equal(s.notes, 1);
  assert_int_equal(s.last, 7);
  assert_true(out.output_total > CALHOST_CHILD_OUTPUT_MAX);
  assert_true(strlen(out.output) < CALHOST_CHILD_OUTPUT_MAX);
  assert_non_null(strstr(out.output, "plugin garbage line 0 "));
}

static void truncated_stream_is_a_protocol_failure(void **state) {
  (void)state;
  isolate_options o = opts(10);
  isolate_child_outcome out;
  seen s = {0};
  assert_int_equal(isolate_run(&o, child_truncated, NULL, on_record, &s, &out), -1);
  assert_int_equal(out.end, CALHOST_CHILD_PROTOCOL);
  assert_true(out.truncated);
  assert_int_equal(s.notes, 0);
}

static void cancel_flag_kills_the_child(void **state) {
  (void)state;
  volatile sig_atomic_t flag = 1;
  isolate_options o = opts(30);
  o.cancel_flag = &flag;
  isolate_child_outcome out;
  seen s = {0};
  assert_int_equal(isolate_run(&o, child_hang, NULL, on_record, &s, &out), -1);
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
      cmocka_unit_test(parent_crash_handler_is_reset_in_the_child),
      cmocka_unit_test(host_interrupt_handlers_are_reset_in_the_child),
      cmocka_unit_test(stderr_and_buffered_stdout_are_captured),
      cmocka_unit_test(record_pipe_is_close_on_exec),
      cmocka_unit_test(signal_names),
  };
  return cmocka_run_group_tests_name("isolate", tests, NULL, NULL);
}
