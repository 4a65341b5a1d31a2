/*
 * test_safety.c: loader_safety: a plugin file or directory writable by group
 * or others, or owned by neither root nor the current user, is refused with
 * the reason (and never probed or loaded); a private copy loads; a sticky
 * directory above the plugin's own is accepted; a file that cannot be
 * checked (no file descriptors left) is not called unsafe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <sys/resource.h>

#include "loader/loader.h"
#include "loader_test_util.h"

typedef struct fixture {
  char tmp[256], file[512];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  char src[4096];
  if (!f || !make_tmpdir(f->tmp, sizeof f->tmp))
    return -1;
  snprintf(f->file, sizeof f->file, "%s/test_good.so", f->tmp);
  if (copy_file(test_plugin(src, sizeof src, "test_good"), f->file) != 0)
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  remove_tmpdir(f->tmp);
  free(f);
  return 0;
}

static loader_plugin *open_plugin(const char *path) {
  loader_options o;
  loader_options_init(&o);
  loader_plugin *p = loader_open(&o, NULL, path);
  assert_non_null(p);
  return p;
}

static void private_copy_loads(void **state) {
  fixture *f = *state;
  char err[512];
  /* The temporary directory sits in sticky /tmp: accepted above the plugin's dir. */
  assert_int_equal(loader_check_path(f->file, err, sizeof err), 0);
  loader_plugin *p = open_plugin(f->file);
  assert_true(p->loaded);
  loader_plugin_free(p);
}

static void file_writable_by_others_refused(void **state) {
  fixture *f = *state;
  assert_int_equal(chmod(f->file, 0646), 0);
  loader_plugin *p = open_plugin(f->file);
  assert_false(p->loaded);
  assert_null(p->backend); /* never probed */
  assert_non_null(strstr(p->reason, "unsafe: file"));
  assert_non_null(strstr(p->reason, "is writable by others (mode 0646)"));
  loader_plugin_free(p);
  assert_int_equal(chmod(f->file, 0664), 0);
  p = open_plugin(f->file);
  assert_non_null(strstr(p->reason, "is writable by group (mode 0664)"));
  loader_plugin_free(p);
}

static void directory_writable_refused(void **state) {
  fixture *f = *state;
  char err[512];
  assert_int_equal(chmod(f->tmp, 0777), 0);
  loader_plugin *p = open_plugin(f->file);
  assert_false(p->loaded);
  assert_non_null(strstr(p->reason, "unsafe: directory"));
  assert_non_null(strstr(p->reason, f->tmp));
  assert_non_null(strstr(p->reason, "writable by group and others"));
  loader_plugin_free(p);
  /* Sticky is not enough for the plugin's own directory. */
  assert_int_equal(chmod(f->tmp, 01777), 0);
  assert_int_equal(loader_check_path(f->file, err, sizeof err), -1);
  assert_int_equal(chmod(f->tmp, 0700), 0);
}

static void foreign_owner_refused(void **state) {
  fixture *f = *state;
  char err[512];
  if (geteuid() != 0)
    skip(); /* only root can give a file away */
  assert_int_equal(chown(f->file, 12345, 12345), 0);
  loader_plugin *p = open_plugin(f->file);
  assert_false(p->loaded);
  assert_non_null(
      strstr(p->reason, "is owned by uid 12345, neither root nor the current user (uid 0)"));
  loader_plugin_free(p);
  assert_int_equal(chown(f->file, 0, 0), 0);
  assert_int_equal(chown(f->tmp, 12345, 12345), 0);
  assert_int_equal(loader_check_path(f->file, err, sizeof err), -1);
  assert_non_null(strstr(err, "directory"));
  assert_non_null(strstr(err, "uid 12345"));
  assert_int_equal(chown(f->tmp, 0, 0), 0);
}

static void not_a_file_refused(void **state) {
  fixture *f = *state;
  char err[512];
  char sub[600];
  snprintf(sub, sizeof sub, "%s/sub.so", f->tmp);
  assert_int_equal(mkdir(sub, 0755), 0);
  assert_int_equal(loader_check_path(sub, err, sizeof err), -1);
  assert_non_null(strstr(err, "not a regular file"));
  assert_int_equal(loader_check_path("/nonexistent/x.so", err, sizeof err), -2);
  assert_non_null(strstr(err, "cannot resolve"));
}

/* Issue 9 item 13: with every file descriptor in use the check cannot open
 * "/", and the plugin is reported as not checkable (EMFILE), not "unsafe". */
static void out_of_descriptors_is_not_called_unsafe(void **state) {
  fixture *f = *state;
  int fds[256], n = 0;
  struct rlimit old, low;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
  low = old;
  low.rlim_cur = 64; /* a limit the loop below can fill */
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  while (n < (int)(sizeof fds / sizeof fds[0])) {
    int fd = dup(STDIN_FILENO);
    if (fd < 0)
      break;
    fds[n++] = fd;
  }
  loader_options o;
  loader_options_init(&o);
  loader_plugin *p = loader_open(&o, NULL, f->file);
  while (n > 0)
    close(fds[--n]);
  setrlimit(RLIMIT_NOFILE, &old);
  assert_non_null(p);
  assert_false(p->loaded);
  assert_null(strstr(p->reason, "unsafe"));
  assert_non_null(strstr(p->reason, "cannot check:"));
  assert_non_null(strstr(p->reason, strerror(EMFILE)));
  assert_int_equal(p->state, CALHOST_PLUGIN_UNLOADABLE);
  loader_plugin_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(private_copy_loads, setup, teardown),
      cmocka_unit_test_setup_teardown(file_writable_by_others_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(directory_writable_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(foreign_owner_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(not_a_file_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(out_of_descriptors_is_not_called_unsafe, setup, teardown),
  };
  return cmocka_run_group_tests_name("loader_safety", tests, NULL, NULL);
}
