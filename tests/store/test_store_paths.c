/*
 * test_store_paths.c: what the store's platform layer (platform_posix.c)
 * meets on disk besides a plain file in a plain folder: a store path that is
 * a device or a socket, one below a regular file, a lock file that is a
 * symbolic link or a folder, a lock another writer holds past the timeout,
 * a store named relative to the current folder (through a relative link
 * too), and the default path's environment rules. Each is an explicit
 * status naming the path and what is wrong, never a hang or a write
 * somewhere else.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "util.h"

static calstore *open_with(const char *path, uint32_t timeout_ms, calstore_status *st,
                           calstore_error *err) {
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  o.lock_timeout_ms = timeout_ms;
  calstore *s = NULL;
  *st = calstore_open(&o, &s, err);
  return s;
}

static void expect_open(const char *path, calstore_status want, const char *says) {
  calstore_error err = {0};
  calstore_status st;
  calstore *s = open_with(path, 1000, &st, &err);
  if (st != want || (says && !strstr(err.message, says)))
    fail_msg("open %s: %s (%s), want %s naming '%s'", path, calstore_status_name(st), err.message,
             calstore_status_name(want), says ? says : "");
  calstore_close(&s);
}

static void a_device_or_a_socket_is_no_store_file(void **state) {
  (void)state;
  expect_open("/dev/null", CALSTORE_UNREADABLE, "a character device");
  char *dir = tu_mkdtemp(), *sock = tu_path(dir, "profiles.sock");
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  expect_open(sock, CALSTORE_UNREADABLE, "profiles.sock"); /* open(2) refuses it: ENXIO */
  close(fd);
  tu_rmtree(dir);
  free(sock);
  free(dir);
}

static void a_store_below_a_regular_file_cannot_be_written(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *file = tu_path(dir, "plain"), *path = tu_path(file, "profiles.txt");
  tu_write(file, "not a folder\n");
  calstore_error err = {0};
  calstore_status st;
  calstore *s = open_with(path, 1000, &st, &err);
  assert_int_equal(st, CALSTORE_OK); /* nothing there: an empty store */
  calstore_key k = tu_exact("gpu", "1", "d", "p", 1);
  calstore_measurement m[] = {{"median_latency", 1, "us"}};
  tu_policy p = {"x", 0, 0};
  st = calstore_store(s, &k, m, 1, tu_serialize, &p, NULL, NULL, &err);
  if (st != CALSTORE_WRITE_FAILED || !strstr(err.message, "Not a directory"))
    fail_msg("store below a file: %s (%s)", calstore_status_name(st), err.message);
  calstore_close(&s);
  char *text = harness_slurp(file, NULL);
  assert_string_equal(text, "not a folder\n");
  free(text);
  tu_rmtree(dir);
  free(path);
  free(file);
  free(dir);
}

/* Stores one profile through a fresh handle on path; returns the status. */
static calstore_status store_one(const char *path, uint32_t timeout_ms, calstore_error *err) {
  calstore_status st;
  calstore *s = open_with(path, timeout_ms, &st, err);
  if (!s)
    return st;
  calstore_key k = tu_exact("gpu", "1", "d", "p", 1);
  calstore_measurement m[] = {{"median_latency", 1, "us"}};
  tu_policy p = {"x", 0, 0};
  st = calstore_store(s, &k, m, 1, tu_serialize, &p, NULL, NULL, err);
  calstore_close(&s);
  return st;
}

static void a_lock_file_that_is_a_link_or_a_folder_is_refused(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *path = tu_path(dir, "profiles.txt");
  char *lock = tu_path(dir, "profiles.txt.lock"), *elsewhere = tu_path(dir, "elsewhere");
  assert_int_equal(symlink(elsewhere, lock), 0);
  calstore_error err = {0};
  assert_int_equal(store_one(path, 1000, &err), CALSTORE_LOCK_FAILED);
  assert_non_null(strstr(err.message, "symbolic link"));
  assert_false(tu_exists(elsewhere)); /* never followed */
  unlink(lock);
  assert_int_equal(mkdir(lock, 0700), 0);
  assert_int_equal(store_one(path, 1000, &err), CALSTORE_LOCK_FAILED);
  assert_non_null(strstr(err.message, "a directory"));
  rmdir(lock);
  assert_int_equal(store_one(path, UINT32_MAX, &err), CALSTORE_OK); /* wait for ever: free */
  tu_rmtree(dir);
  free(elsewhere);
  free(lock);
  free(path);
  free(dir);
}

static void a_lock_held_past_the_timeout_fails_the_commit(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *path = tu_path(dir, "profiles.txt");
  char *lock = tu_path(dir, "profiles.txt.lock");
  int fd = open(lock, O_RDWR | O_CREAT, 0600);
  assert_true(fd >= 0);
  assert_int_equal(flock(fd, LOCK_EX), 0); /* another writer (its own open file) */
  calstore_error err = {0};
  assert_int_equal(store_one(path, 30, &err), CALSTORE_LOCK_FAILED);
  if (!strstr(err.message, "held it for over 30 ms"))
    fail_msg("message: %s", err.message);
  assert_false(tu_exists(path));
  close(fd);
  assert_int_equal(store_one(path, 30, &err), CALSTORE_OK);
  tu_rmtree(dir);
  free(lock);
  free(path);
  free(dir);
}

static void a_store_named_relative_to_the_current_folder_works(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), here[PATH_MAX];
  assert_non_null(getcwd(here, sizeof here));
  assert_int_equal(chdir(dir), 0);
  calstore_error err = {0};
  assert_int_equal(store_one("profiles.txt", 1000, &err), CALSTORE_OK);
  /* a relative link in the current folder to the store */
  assert_int_equal(symlink("profiles.txt", "link.txt"), 0);
  calstore_status st;
  calstore *s = open_with("link.txt", 1000, &st, &err);
  assert_int_equal(st, CALSTORE_OK);
  assert_string_equal(calstore_path(s), "profiles.txt");
  assert_int_equal(calstore_count(s), 1);
  calstore_close(&s);
  assert_int_equal(chdir(here), 0);
  tu_rmtree(dir);
  free(dir);
}

/* A store path that is a loop of symbolic links: the open says so, and a
 * commit through the handle fails the same way, creating nothing. */
static void a_link_loop_is_unreadable_and_never_written(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *one = tu_path(dir, "one"), *two = tu_path(dir, "two");
  assert_int_equal(symlink(two, one), 0);
  assert_int_equal(symlink(one, two), 0);
  calstore_error err = {0};
  calstore_status st;
  calstore *s = open_with(one, 1000, &st, &err);
  assert_int_equal(st, CALSTORE_UNREADABLE);
  assert_non_null(s); /* a usable handle, empty */
  assert_non_null(strstr(err.message, "symbolic links"));
  calstore_key k = tu_exact("gpu", "1", "d", "p", 1);
  tu_policy p = {"x", 0, 0};
  st = calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err);
  if (st != CALSTORE_UNREADABLE || !strstr(err.message, "symbolic links"))
    fail_msg("store through a loop: %s (%s)", calstore_status_name(st), err.message);
  calstore_close(&s);
  struct stat lst;
  assert_int_equal(lstat(one, &lst), 0);
  assert_true(S_ISLNK(lst.st_mode)); /* both links are left as they were */
  tu_rmtree(dir);
  free(two);
  free(one);
  free(dir);
}

static void the_default_path_follows_xdg_then_home(void **state) {
  (void)state;
  char *xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
  char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  char buf[256];
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  assert_int_equal(calstore_default_path(buf, sizeof buf), CALSTORE_OK);
  assert_string_equal(buf, "/x/cache/calhost/profiles.txt");
  setenv("XDG_CACHE_HOME", "relative", 1); /* invalid: ignored */
  setenv("HOME", "/h", 1);
  assert_int_equal(calstore_default_path(buf, sizeof buf), CALSTORE_OK);
  assert_string_equal(buf, "/h/.cache/calhost/profiles.txt");
  assert_int_equal(calstore_default_path(buf, 10), CALSTORE_INVALID_ARGUMENT); /* too small */
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "", 1);
  assert_int_equal(calstore_default_path(buf, sizeof buf), CALSTORE_INVALID_ARGUMENT);
  unsetenv("HOME");
  assert_int_equal(calstore_default_path(buf, sizeof buf), CALSTORE_INVALID_ARGUMENT);
  /* no options at all: the defaults, the default path included */
  char *dir = tu_mkdtemp(), want[PATH_MAX];
  setenv("HOME", dir, 1);
  calstore *d = NULL;
  calstore_error derr = {0};
  assert_int_equal(calstore_open(NULL, &d, &derr), CALSTORE_OK);
  snprintf(want, sizeof want, "%s/.cache/calhost/profiles.txt", dir);
  assert_string_equal(calstore_path(d), want);
  calstore_close(&d);
  tu_rmtree(dir);
  free(dir);
  unsetenv("HOME");
  /* and a store opened without a path then has no place to live */
  calstore_options o;
  calstore_options_init(&o);
  calstore *s = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_INVALID_ARGUMENT);
  calstore_close(&s);
  if (xdg)
    setenv("XDG_CACHE_HOME", xdg, 1);
  if (home)
    setenv("HOME", home, 1);
  free(xdg);
  free(home);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_device_or_a_socket_is_no_store_file),
      cmocka_unit_test(a_store_below_a_regular_file_cannot_be_written),
      cmocka_unit_test(a_lock_file_that_is_a_link_or_a_folder_is_refused),
      cmocka_unit_test(a_lock_held_past_the_timeout_fails_the_commit),
      cmocka_unit_test(a_store_named_relative_to_the_current_folder_works),
      cmocka_unit_test(a_link_loop_is_unreadable_and_never_written),
      cmocka_unit_test(the_default_path_follows_xdg_then_home),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
