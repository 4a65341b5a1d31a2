/*
 * test_harness.c: the tests' harness (harness.h) itself: the environment a
 * command gets by default and through each option, what is captured (exit
 * status, signal, stdout, stderr, merged, on a pty), the time limit, the
 * file-size limit, a started child, and the one slurp. The commands are
 * /bin/sh scripts, so the test needs no calhost.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Runs the shell script with o; returns its stdout (static copy). */
static const char *sh_out(const harness_opts *o, const char *script, int *code) {
  static char out[8192];
  harness_result r = {0};
  const char *const argv[] = {"-c", script, NULL};
  int rc = harness_run_program("/bin/sh", o, &r, argv);
  if (code)
    *code = rc;
  snprintf(out, sizeof out, "%s", r.out);
  harness_result_free(&r);
  return out;
}

static void defaults_control_home_xdg_term_and_the_plugin_path(void **state) {
  (void)state;
  char want[PATH_MAX * 4];
  const char *dir = harness_scratch_dir();
  setenv("CALHOST_PLUGIN_PATH", "/leaked", 1);
  setenv("CALHOST_LOG_LEVEL", "debug", 1);
  setenv("TERM", "xterm", 1);
  harness_opts o = {.cwd = dir};
  const char *out = sh_out(&o,
                           "echo \"$PWD|$HOME|$XDG_CONFIG_HOME|$XDG_CACHE_HOME|$TERM|"
                           "${CALHOST_PLUGIN_PATH-unset}|${CALHOST_LOG_LEVEL-unset}|$CALHOST\"; "
                           "test -t 0 || cat",
                           NULL);
  snprintf(want, sizeof want, "%s|%s|%s|%s|dumb|unset|unset|%s/bin/calhost\n", dir, dir, dir, dir,
           harness_build_dir());
  assert_string_equal(out, want);
  unsetenv("CALHOST_PLUGIN_PATH");
  unsetenv("CALHOST_LOG_LEVEL");
}

static void options_set_each_variable_and_env_sets_and_unsets(void **state) {
  (void)state;
  setenv("CALHOST_LOG_LEVEL", "info", 1);
  setenv("HARNESS_GONE", "x", 1);
  const char *const env[] = {"HARNESS_NEW=1", "HARNESS_GONE", "HOME=", NULL};
  harness_opts o = {.cwd = "/",
                    .home = "/h",
                    .xdg_config_home = "/c",
                    .xdg_cache_home = "/k",
                    .term = "vt100",
                    .plugin_path = "/p",
                    .keep_log_level = 1,
                    .env = env};
  const char *out =
      sh_out(&o,
             "echo \"$PWD|${HOME-unset}|$XDG_CONFIG_HOME|$XDG_CACHE_HOME|$TERM|"
             "$CALHOST_PLUGIN_PATH|$CALHOST_LOG_LEVEL|$HARNESS_NEW|${HARNESS_GONE-unset}\"",
             NULL);
  assert_string_equal(out, "/||/c|/k|vt100|/p|info|1|unset\n"); /* HOME= sets it empty */
  unsetenv("CALHOST_LOG_LEVEL");
  unsetenv("HARNESS_GONE");
}

static void output_status_and_signals_are_captured(void **state) {
  (void)state;
  harness_result r = {0};
  const char *const both[] = {"-c", "printf out; printf err >&2; exit 3", NULL};
  assert_int_equal(harness_run_program("/bin/sh", NULL, &r, both), 3);
  assert_string_equal(r.out, "out");
  assert_int_equal(r.out_len, 3);
  assert_string_equal(r.err, "err");
  assert_int_equal(r.signal, 0);
  harness_opts merged = {.merge_output = 1};
  const char *const order[] = {"-c", "echo a; echo b >&2; echo c", NULL};
  assert_int_equal(harness_run_program("/bin/sh", &merged, &r, order), 0);
  assert_string_equal(r.out, "a\nb\nc\n");
  assert_string_equal(r.err, "");
  const char *const killed[] = {"-c", "kill -TERM $$", NULL};
  assert_int_equal(harness_run_program("/bin/sh", NULL, &r, killed), 128 + SIGTERM);
  assert_int_equal(r.signal, SIGTERM);
  assert_true(r.pid > 0);
  harness_result_free(&r);
}

static void the_time_limit_stops_a_blocked_command(void **state) {
  (void)state;
  harness_opts o = {.timeout_s = 1};
  harness_result r = {0};
  const char *const argv[] = {"-c", "exec sleep 30", NULL};
  assert_int_equal(harness_run_program("/bin/sh", &o, &r, argv), 128 + SIGALRM);
  assert_int_equal(r.signal, SIGALRM);
  harness_result_free(&r);
}

static void the_file_size_limit_is_a_shells_ulimit(void **state) {
  (void)state;
  char script[PATH_MAX + 64];
  snprintf(script, sizeof script, "exec head -c 100000 /dev/zero > '%s/big'",
           harness_scratch_dir());
  harness_opts o = {.fsize_limit = 4096};
  harness_result r = {0};
  const char *const argv[] = {"-c", script, NULL};
  harness_run_program("/bin/sh", &o, &r, argv);
  assert_int_equal(r.signal, SIGXFSZ);
  harness_result_free(&r);
}

static void a_pty_run_is_a_terminal(void **state) {
  (void)state;
  harness_opts o = {.pty = 1, .term = "xterm"};
  const char *out = sh_out(&o, "test -t 1 && echo tty $TERM", NULL);
  assert_non_null(strstr(out, "tty xterm"));
}

static void a_started_child_is_watched_signalled_and_waited_for(void **state) {
  (void)state;
  harness_child c;
  harness_result r = {0};
  const char *const argv[] = {"-c", "echo started >&2; exec sleep 30", NULL};
  harness_start("/bin/sh", NULL, argv, &c);
  int seen = 0;
  for (int i = 0; i < 3000 && !seen; i++) { /* up to 30 s on a loaded machine */
    char *err = harness_child_stderr(&c);
    seen = strstr(err, "started") != NULL;
    free(err);
    if (!seen)
      usleep(10000);
  }
  assert_true(seen);
  kill(c.pid, SIGINT);
  assert_int_equal(harness_wait(&c, &r), 128 + SIGINT);
  assert_string_equal(r.err, "started\n");
  harness_result_free(&r);
}

static void slurp_reads_whole_files_and_says_when_it_cannot(void **state) {
  (void)state;
  char path[PATH_MAX];
  size_t len = 99;
  snprintf(path, sizeof path, "%s/bytes", harness_scratch_dir());
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  for (int i = 0; i < 20000; i++) /* more than one read, a NUL inside */
    fputc(i == 5 ? '\0' : 'a' + i % 26, f);
  fclose(f);
  char *s = harness_slurp(path, &len);
  assert_non_null(s);
  assert_int_equal(len, 20000);
  assert_int_equal(s[5], '\0');
  assert_int_equal(s[19999], 'a' + 19999 % 26);
  assert_int_equal(s[20000], '\0');
  free(s);
  snprintf(path, sizeof path, "%s/absent", harness_scratch_dir());
  errno = 0;
  assert_null(harness_slurp(path, NULL));
  assert_int_equal(errno, ENOENT);
  s = harness_slurp_or_empty(path, &len);
  assert_string_equal(s, "");
  assert_int_equal(len, 0);
  free(s);
  assert_int_equal(harness_write(path, "written\n"), 0);
  s = harness_slurp(path, NULL);
  assert_string_equal(s, "written\n");
  free(s);
}

/* harness_run_config runs calhost --config FILE with the arguments: the
 * configuration's store path is the one config show reports. */
static void run_config_passes_the_configuration_first(void **state) {
  (void)state;
  char cfg[PATH_MAX], text[2 * PATH_MAX];
  snprintf(cfg, sizeof cfg, "%s/run-config.ini", harness_scratch_dir());
  snprintf(text, sizeof text, "[store]\npath = %s/run-config-store.txt\n", harness_scratch_dir());
  assert_int_equal(harness_write(cfg, text), 0);
  harness_result r = {0};
  const char *const args[] = {"config", "show", NULL};
  assert_int_equal(harness_run_config(NULL, &r, cfg, args), 0);
  assert_non_null(strstr(r.out, "run-config-store.txt"));
  harness_result_free(&r);
}

static int setup(void **state) {
  (void)state;
  return harness_scratch("harness") ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return harness_scratch_remove();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_control_home_xdg_term_and_the_plugin_path),
      cmocka_unit_test(options_set_each_variable_and_env_sets_and_unsets),
      cmocka_unit_test(output_status_and_signals_are_captured),
      cmocka_unit_test(the_time_limit_stops_a_blocked_command),
      cmocka_unit_test(the_file_size_limit_is_a_shells_ulimit),
      cmocka_unit_test(a_pty_run_is_a_terminal),
      cmocka_unit_test(a_started_child_is_watched_signalled_and_waited_for),
      cmocka_unit_test(slurp_reads_whole_files_and_says_when_it_cannot),
      cmocka_unit_test(run_config_passes_the_configuration_first),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
