/*
 * test_config_file_kinds.c: config_load reads a regular file only (and
 * /dev/null, the empty configuration): a FIFO (which would block an open
 * or a read until a writer came), a directory and another character device
 * are refused at once with "FILE: is not a regular file (KIND); refusing
 * to read it", the store's words for the same case;
 * config_load_file tells such an unreadable file (CONFIG_LOAD_UNREADABLE)
 * from an invalid configuration (-1).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/config.h"

static char tmpdir[64];

/* tmpdir/name (one of four buffers: two may be used at once). */
static const char *path_of(const char *name) {
  static char p[4][PATH_MAX];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
  return p[k];
}

/* config_load_file(path) in a child that is killed after 10 s (a load
 * that blocks fails the test instead of hanging it). Returns the load's
 * result (0, -1 or CONFIG_LOAD_UNREADABLE) and its message in err. */
static int load_in_child(const char *path, char *err, size_t cap) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    config_settings cfg;
    char msg[1024] = "";
    close(fds[0]);
    alarm(10);
    int rc = config_load_file(path, &cfg, msg, sizeof msg);
    if (rc == 0)
      config_free(&cfg);
    if (write(fds[1], msg, strlen(msg) + 1) < 0)
      _exit(100);
    _exit(rc == 0 ? 0 : rc == -1 ? 1 : rc == CONFIG_LOAD_UNREADABLE ? 2 : 3);
  }
  close(fds[1]);
  ssize_t n = read(fds[0], err, cap - 1);
  err[n > 0 ? n : 0] = '\0';
  close(fds[0]);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status))
    fail_msg("config_load_file(%s) did not return (signal %d): it blocked", path, WTERMSIG(status));
  assert_true(WIFEXITED(status));
  switch (WEXITSTATUS(status)) {
  case 0:
    return 0;
  case 1:
    return -1;
  case 2:
    return CONFIG_LOAD_UNREADABLE;
  default:
    fail_msg("config_load_file(%s) returned an unexpected value", path);
  }
  return 99;
}

static void a_fifo_is_refused_without_blocking(void **state) {
  char err[1024], want[PATH_MAX + 128];
  (void)state;
  const char *fifo = path_of("fifo.ini");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(load_in_child(fifo, err, sizeof err), CONFIG_LOAD_UNREADABLE);
  snprintf(want, sizeof want, "%s: is not a regular file (a FIFO); refusing to read it", fifo);
  assert_string_equal(err, want);
  /* config_load: the same refusal, -1 */
  config_settings cfg;
  assert_int_equal(config_load(fifo, &cfg, err, sizeof err), -1);
  assert_string_equal(err, want);
}

static void other_kinds_are_refused_too(void **state) {
  char err[1024], want[PATH_MAX + 128];
  (void)state;
  assert_int_equal(load_in_child(tmpdir, err, sizeof err), CONFIG_LOAD_UNREADABLE);
  snprintf(want, sizeof want, "%s: is not a regular file (a directory); refusing to read it",
           tmpdir);
  assert_string_equal(err, want);
  assert_int_equal(load_in_child("/dev/zero", err, sizeof err), CONFIG_LOAD_UNREADABLE);
  assert_string_equal(err,
                      "/dev/zero: is not a regular file (a character device); refusing to read it");
  assert_int_equal(load_in_child(path_of("missing.ini"), err, sizeof err), CONFIG_LOAD_UNREADABLE);
  assert_non_null(strstr(err, "missing.ini: cannot open: No such file or directory"));
}

static void regular_files_load_as_before(void **state) {
  char err[1024];
  (void)state;
  const char *good = path_of("good.ini");
  FILE *f = fopen(good, "w");
  assert_non_null(f);
  fputs("[calibration]\nrigor = quick\n", f);
  fclose(f);
  assert_int_equal(load_in_child(good, err, sizeof err), 0);
  /* invalid content is -1, not "unreadable" */
  const char *bad = path_of("bad.ini");
  f = fopen(bad, "w");
  assert_non_null(f);
  fputs("[calibration]\nrigour = quick\n", f);
  fclose(f);
  assert_int_equal(load_in_child(bad, err, sizeof err), -1);
  assert_non_null(strstr(err, "bad.ini:2: unknown key 'rigour'"));
  /* /dev/null is the empty configuration (`--config /dev/null`) */
  assert_int_equal(load_in_child("/dev/null", err, sizeof err), 0);
  /* a symbolic link to a regular file is read through */
  assert_int_equal(symlink(good, path_of("link.ini")), 0);
  assert_int_equal(load_in_child(path_of("link.ini"), err, sizeof err), 0);
}

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/calhost-config-kinds-XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
  char cmd[PATH_MAX + 16];
  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_fifo_is_refused_without_blocking),
      cmocka_unit_test(other_kinds_are_refused_too),
      cmocka_unit_test(regular_files_load_as_before),
  };
  return cmocka_run_group_tests_name("config_file_kinds", tests, setup, teardown);
}
