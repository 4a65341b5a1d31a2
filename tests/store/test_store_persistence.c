/*
 * test_store_persistence.c: the store on disk: malformed files and unknown
 * versions reported with their line and never replacing the snapshot nor
 * destroyed by a writer, stray and planted temp files, file modes,
 * unreadable and unwritable paths, merging with other writers.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util.h"

typedef struct fixture {
  char *dir;
  char *path;
  char *tmp;
  char *lock;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = tu_mkdtemp();
  f->path = tu_path(f->dir, "profiles.txt");
  f->tmp = tu_path(f->dir, "profiles.txt.tmp");
  f->lock = tu_path(f->dir, "profiles.txt.lock");
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  tu_rmtree(f->dir);
  free(f->dir);
  free(f->path);
  free(f->tmp);
  free(f->lock);
  free(f);
  return 0;
}

#define HDR "onnx_light_calibration_profiles 1\n"
#define GOOD                                                                                       \
  HDR "profile exact calibrated\nbackend \"gpu\"\noperator \"MatMul\"\nimplementation "            \
      "\"3\"\nmodel_digest \"d\"\nprocessor \"p\"\nthread_count 8\npolicy \"on disk\"\nend\n"
#define BAD_LINE5                                                                                  \
  HDR "profile exact calibrated\nbackend \"gpu\"\noperator \"MatMul\"\nimplementation 3\n"

static void test_malformed_file_reported_and_kept(void **state) {
  fixture *f = *state;
  tu_write(f->path, BAD_LINE5);
  calstore_options o;
  calstore_options_init(&o);
  o.path = f->path;
  calstore *s = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_MALFORMED);
  assert_non_null(s); /* usable handle, empty */
  assert_int_equal(err.line, 5);
  assert_string_equal(err.path, f->path);
  assert_int_equal(calstore_count(s), 0);
  /* a writer refuses to replace it: the bad file is kept byte for byte */
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  tu_policy p = {"new", 0, 0};
  memset(&err, 0, sizeof err);
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err),
                   CALSTORE_MALFORMED);
  assert_int_equal(err.line, 5);
  assert_non_null(strstr(err.message, "refusing to overwrite"));
  char *now = tu_read(f->path, NULL);
  assert_string_equal(now, BAD_LINE5);
  free(now);
  assert_int_equal(calstore_count(s), 0);
  assert_false(tu_exists(f->tmp));
  /* the same for an unknown version */
  const char *v2 = "onnx_light_calibration_profiles 2\nfuture stuff\n";
  tu_write(f->path, v2);
  assert_int_equal(calstore_invalidate(s, "gpu", NULL, NULL, &err), CALSTORE_UNSUPPORTED_VERSION);
  assert_int_equal(err.line, 1);
  now = tu_read(f->path, NULL);
  assert_string_equal(now, v2);
  free(now);
  calstore_close(&s);
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_UNSUPPORTED_VERSION);
  calstore_close(&s);
}

static void test_reload_failure_keeps_snapshot(void **state) {
  fixture *f = *state;
  tu_write(f->path, GOOD);
  calstore *s = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(s), 1);
  calstore_error err = {0};
  tu_write(f->path, BAD_LINE5);
  assert_int_equal(calstore_reload(s, &err), CALSTORE_MALFORMED);
  assert_int_equal(err.line, 5);
  assert_int_equal(calstore_count(s), 1);
  tu_write(f->path, "onnx_light_calibration_profiles 7\n");
  assert_int_equal(calstore_reload(s, &err), CALSTORE_UNSUPPORTED_VERSION);
  assert_int_equal(calstore_count(s), 1);
  /* lookups still answer from the kept snapshot */
  calstore_lookup_options o = {0};
  o.backend = "gpu";
  o.operator_name = "MatMul";
  o.implementation = "3";
  o.model_digest = "d";
  o.processor = "p";
  o.thread_count = 8;
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_lookup(s, &o, NULL, NULL, &r, NULL), CALSTORE_OK);
  assert_string_equal(r->profile->policy, "on disk");
  calstore_lookup_result_free(&r);
  /* a removed file reloads as empty */
  unlink(f->path);
  assert_int_equal(calstore_reload(s, &err), CALSTORE_OK);
  assert_int_equal(calstore_count(s), 0);
  calstore_close(&s);
}

static void test_stray_tmp_never_replaces_store(void **state) {
  fixture *f = *state;
  tu_write(f->path, GOOD);
  /* an interrupted writer left a complete-looking temp with other content */
  const char *stray = HDR "profile exact calibrated\nbackend \"stray\"\noperator \"X\"\n"
                          "implementation \"1\"\nmodel_digest \"d\"\nprocessor \"p\"\n"
                          "thread_count 1\npolicy \"stray\"\nend\n";
  tu_write(f->tmp, stray);
  calstore *s = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(s), 1); /* readers ignore it */
  calstore_key k = tu_exact("gpu", "3", "second", "p", 8);
  assert_int_equal(tu_store(s, &k, "second", 1), CALSTORE_OK);
  assert_false(tu_exists(f->tmp));
  calstore_close(&s);
  s = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(s), 2);
  char *text = tu_read(f->path, NULL);
  assert_null(strstr(text, "stray"));
  assert_non_null(strstr(text, "on disk"));
  free(text);
  calstore_close(&s);
}

static void test_planted_tmp_symlink_not_followed(void **state) {
  fixture *f = *state;
  char *victim = tu_path(f->dir, "victim.txt");
  tu_write(victim, "precious\n");
  assert_int_equal(symlink(victim, f->tmp), 0);
  calstore *s = tu_open(f->path, NULL);
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  char *v = tu_read(victim, NULL);
  assert_string_equal(v, "precious\n");
  free(v);
  struct stat st;
  assert_int_equal(lstat(f->path, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_false(tu_exists(f->tmp));
  /* a hard link at the temp name is not written through either */
  assert_int_equal(link(victim, f->tmp), 0);
  assert_int_equal(tu_store(s, &k, "y", 1), CALSTORE_OK);
  v = tu_read(victim, NULL);
  assert_string_equal(v, "precious\n");
  free(v);
  calstore_close(&s);
  free(victim);
}

static void test_modes(void **state) {
  fixture *f = *state;
  char *nested = tu_path(f->dir, "a/b/profiles.txt");
  calstore *s = tu_open(nested, NULL);
  assert_false(tu_exists(nested)); /* opening writes nothing */
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  mode_t old = umask(0);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  umask(old);
  struct stat st;
  char *a = tu_path(f->dir, "a"), *b = tu_path(f->dir, "a/b"),
       *lock = tu_path(b, "profiles.txt.lock");
  assert_int_equal(stat(a, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  assert_int_equal(stat(b, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  assert_int_equal(stat(nested, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(stat(lock, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  calstore_close(&s);
  free(a);
  free(b);
  free(lock);
  free(nested);
}

static void test_unreadable_and_unwritable(void **state) {
  fixture *f = *state;
  /* the store path is a directory: unreadable */
  char *d = tu_path(f->dir, "adir");
  mkdir(d, 0700);
  calstore_options o;
  calstore_options_init(&o);
  o.path = d;
  calstore *s = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_UNREADABLE);
  assert_non_null(s);
  calstore_close(&s);
  /* the parent is a regular file: the directory cannot be created */
  char *file = tu_path(f->dir, "plainfile");
  tu_write(file, "x");
  char *under = tu_path(file, "profiles.txt");
  o.path = under;
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_OK);
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  tu_policy p = {"x", 0, 0};
  memset(&err, 0, sizeof err);
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err),
                   CALSTORE_WRITE_FAILED);
  assert_non_null(strstr(err.message, "Not a directory"));
  assert_non_null(strstr(err.message, file));
  assert_int_equal(calstore_count(s), 0); /* memory unchanged */
  calstore_close(&s);
  /* the temp name is occupied by a directory: the write fails, the store stays */
  tu_write(f->path, GOOD);
  mkdir(f->tmp, 0700);
  char *inside = tu_path(f->tmp, "x");
  tu_write(inside, "x");
  s = tu_open(f->path, NULL);
  memset(&err, 0, sizeof err);
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err),
                   CALSTORE_WRITE_FAILED);
  assert_non_null(strstr(err.message, f->tmp));
  char *text = tu_read(f->path, NULL);
  assert_string_equal(text, GOOD);
  free(text);
  assert_int_equal(calstore_count(s), 1);
  calstore_close(&s);
  free(inside);
  free(d);
  free(file);
  free(under);
}

/* A writer reloads a file changed behind its back, even one of the same size. */
static void test_external_change_merged(void **state) {
  fixture *f = *state;
  calstore *a = tu_open(f->path, NULL);
  calstore_key k1 = tu_exact("gpu", "3", "d1", "p", 8);
  assert_int_equal(tu_store(a, &k1, "aaaa", 1), CALSTORE_OK);
  /* another process rewrites the file by hand (same length, new content) */
  char *text = tu_read(f->path, NULL);
  char *pos = strstr(text, "aaaa");
  memcpy(pos, "bbbb", 4);
  char *other = tu_path(f->dir, "other.txt");
  tu_write(other, text);
  rename(other, f->path);
  calstore_key k2 = tu_exact("gpu", "3", "d2", "p", 8);
  assert_int_equal(tu_store(a, &k2, "second", 1), CALSTORE_OK);
  free(text);
  text = tu_read(f->path, NULL);
  assert_non_null(strstr(text, "bbbb"));
  assert_null(strstr(text, "aaaa"));
  assert_non_null(strstr(text, "second"));
  free(text);
  free(other);
  calstore_close(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_malformed_file_reported_and_kept, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reload_failure_keeps_snapshot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stray_tmp_never_replaces_store, setup, teardown),
      cmocka_unit_test_setup_teardown(test_planted_tmp_symlink_not_followed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unreadable_and_unwritable, setup, teardown),
      cmocka_unit_test_setup_teardown(test_external_change_merged, setup, teardown),
  };
  return cmocka_run_group_tests_name("store_persistence", tests, NULL, NULL);
}
