/*
 * test_store_misuse.c: every public function of calstore.h called with a
 * NULL where a value is needed, a count without its array, a NULL inside
 * an array or a too small struct_size (issue 22 item 29): each row of the
 * table runs in a child process, so that a crash names its row, and must
 * return what the header promises for misuse (CALSTORE_INVALID_ARGUMENT,
 * or the documented neutral value of a function without a status: NULL, 0,
 * "unknown", nothing done), never crash and never write the store.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../common/misuse.h"
#include <signal.h>
#include <sys/wait.h>

#include "util.h"

static char *g_dir, *g_path;
static calstore *g_store; /* a store holding one exact profile */

static const char *ser(void *user, size_t *length, char *err, size_t cap) {
  (void)user;
  (void)err;
  (void)cap;
  *length = 3;
  return "p=1";
}

static int visit(void *user, const calstore_profile *p) {
  (void)user;
  (void)p;
  return 0;
}

#define INVALID CALSTORE_INVALID_ARGUMENT

static calstore_key good_key(void) {
  return tu_exact("gpu", "3", "d", "p", 8);
}

static const calstore_property g_prop = {"m", "1"};

/* Each case returns 0 when the misuse was answered as promised, else the
 * line of the failed expectation. */
static int c_names(void) {
  EXPECT(calstore_status_name((calstore_status)-1) != NULL);
  EXPECT(calstore_status_name((calstore_status)999) != NULL);
  EXPECT(!strcmp(calstore_reject_reason_name((calstore_reject_reason)999), "unknown"));
  EXPECT(!strcmp(calstore_level_name((calstore_level)999), "unknown"));
  EXPECT(calstore_version(NULL) != NULL);
  calstore_options_init(NULL);
  return 0;
}

static int c_default_path(void) {
  char buf[8];
  EXPECT(calstore_default_path(NULL, 4096) == INVALID);
  EXPECT(calstore_default_path(buf, 0) == INVALID);
  EXPECT(calstore_default_path(buf, sizeof buf) == INVALID); /* too small */
  return 0;
}

static int c_open(void) {
  calstore_options o;
  calstore_options_init(&o);
  o.path = g_path;
  calstore_error err = {0};
  EXPECT(calstore_open(&o, NULL, &err) == INVALID);
  calstore *s = (calstore *)1;
  o.struct_size = 0;
  EXPECT(calstore_open(&o, &s, &err) == INVALID);
  EXPECT(s == NULL);
  o.struct_size = 1;
  EXPECT(calstore_open(&o, &s, NULL) == INVALID);
  calstore_options_init(&o);
  o.path = "";
  EXPECT(calstore_open(&o, &s, &err) == INVALID);
  calstore_close(&s);
  calstore_close(NULL);
  s = NULL;
  calstore_close(&s);
  EXPECT(calstore_path(NULL) == NULL);
  EXPECT(calstore_reload(NULL, &err) == INVALID);
  EXPECT(calstore_count(NULL) == 0);
  return 0;
}

static int c_store(void) {
  calstore_key k = good_key(), bad = good_key();
  calstore_measurement m = {"median_latency", 1.0, "us"}, unnamed = {NULL, 1.0, "us"};
  calstore_error err = {0};
  EXPECT(calstore_store(NULL, &k, NULL, 0, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_store(g_store, NULL, NULL, 0, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_store(g_store, &k, NULL, 2, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_store(g_store, &k, &unnamed, 1, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_store(g_store, &k, &m, 1, NULL, NULL, NULL, NULL, &err) == INVALID);
  bad.backend = NULL;
  EXPECT(calstore_store(g_store, &bad, &m, 1, ser, NULL, NULL, NULL, NULL) == INVALID);
  bad = good_key();
  bad.processor = NULL;
  EXPECT(calstore_store(g_store, &bad, &m, 1, ser, NULL, NULL, NULL, NULL) == INVALID);
  calstore_key port = tu_portable("gpu", "3", NULL, 0);
  port.structure_count = 2; /* a count without its array */
  EXPECT(calstore_store(g_store, &port, &m, 1, ser, NULL, NULL, NULL, &err) == INVALID);
  calstore_property holes[2] = {{"a", "1"}, {NULL, "2"}};
  port.structure = holes;
  EXPECT(calstore_store(g_store, &port, &m, 1, ser, NULL, NULL, NULL, &err) == INVALID);
  holes[1].name = "b";
  holes[1].value = NULL;
  EXPECT(calstore_store(g_store, &port, &m, 1, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_install_override(NULL, &k, NULL, 0, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_install_override(g_store, NULL, NULL, 0, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_install_override(g_store, &k, NULL, 1, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_clear_override(NULL, &k, &err) == INVALID);
  EXPECT(calstore_clear_override(g_store, NULL, &err) == INVALID);
  EXPECT(calstore_invalidate(NULL, "gpu", NULL, NULL, &err) == INVALID);
  EXPECT(calstore_invalidate(g_store, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_inspect(NULL, visit, NULL) == INVALID);
  EXPECT(calstore_inspect(g_store, NULL, NULL) == INVALID);
  EXPECT(calstore_export(NULL, "x", &err) == INVALID);
  EXPECT(calstore_export(g_store, NULL, &err) == INVALID);
  EXPECT(calstore_export(g_store, "", &err) == INVALID);
  EXPECT(calstore_count(g_store) == 1); /* nothing was written */
  return 0;
}

static int c_get_and_lookup(void) {
  calstore_key k = good_key();
  calstore_lookup_result *r = NULL;
  calstore_error err = {0};
  EXPECT(calstore_get(NULL, &k, CALSTORE_SOURCE_CALIBRATED, &r, &err) == INVALID);
  EXPECT(calstore_get(g_store, NULL, CALSTORE_SOURCE_CALIBRATED, &r, &err) == INVALID);
  EXPECT(calstore_get(g_store, &k, CALSTORE_SOURCE_CALIBRATED, NULL, &err) == INVALID);
  EXPECT(calstore_get(g_store, &k, (calstore_source)77, &r, &err) == INVALID);
  calstore_lookup_options o;
  memset(&o, 0, sizeof o);
  o.backend = "gpu";
  o.operator_name = "MatMul";
  o.implementation = "3";
  o.model_digest = "d";
  o.processor = "p";
  o.thread_count = 8;
  EXPECT(calstore_lookup(NULL, &o, NULL, NULL, &r, &err) == INVALID);
  EXPECT(calstore_lookup(g_store, NULL, NULL, NULL, &r, &err) == INVALID);
  EXPECT(calstore_lookup(g_store, &o, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_select(NULL, &o, NULL, NULL, &r, &err) == INVALID);
  EXPECT(calstore_select(g_store, NULL, NULL, NULL, &r, &err) == INVALID);
  EXPECT(calstore_select(g_store, &o, NULL, NULL, NULL, &err) == INVALID);
  calstore_lookup_options bad = o;
  bad.backend = NULL;
  EXPECT(calstore_lookup(g_store, &bad, NULL, NULL, &r, &err) == INVALID);
  bad = o;
  bad.structure_count = 3; /* a count without its array */
  EXPECT(calstore_lookup(g_store, &bad, NULL, NULL, &r, &err) == INVALID);
  EXPECT(calstore_select(g_store, &bad, NULL, NULL, &r, &err) == INVALID);
  calstore_property holes[2] = {g_prop, {NULL, NULL}};
  bad.structure = holes;
  bad.structure_count = 2;
  EXPECT(calstore_lookup(g_store, &bad, NULL, NULL, &r, &err) == INVALID);
  calstore_lookup_result_free(NULL);
  r = NULL;
  calstore_lookup_result_free(&r);
  return 0;
}

static int c_batch(void) {
  calstore_key k = good_key();
  calstore_error err = {0};
  calstore_batch *b = NULL;
  EXPECT(calstore_batch_begin(NULL, &b, &err) == INVALID);
  EXPECT(calstore_batch_begin(g_store, NULL, &err) == INVALID);
  EXPECT(calstore_batch_store(NULL, &k, NULL, 0, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_batch_install_override(NULL, &k, NULL, 0, ser, NULL, NULL, NULL, &err) ==
         INVALID);
  EXPECT(calstore_batch_put(NULL, NULL, &err) == INVALID);
  EXPECT(calstore_batch_put_if_absent(NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_batch_store_if_absent(NULL, &k, NULL, 0, ser, NULL, NULL, NULL, NULL, &err) ==
         INVALID);
  EXPECT(calstore_batch_clear_override(NULL, &k, &err) == INVALID);
  EXPECT(calstore_batch_invalidate(NULL, "gpu", NULL, &err) == INVALID);
  EXPECT(calstore_batch_size(NULL) == 0);
  EXPECT(calstore_batch_commit(NULL, &err) == INVALID);
  EXPECT(calstore_batch_commit(&b, &err) == INVALID); /* *batch NULL */
  int applied = 7;
  EXPECT(calstore_batch_commit_applied(NULL, &applied, &err) == INVALID);
  EXPECT(applied == 0);
  calstore_batch_abort(NULL);
  calstore_batch_abort(&b);
  /* a live batch refuses what a direct call refuses, and stays usable */
  EXPECT(calstore_batch_begin(g_store, &b, &err) == CALSTORE_OK);
  EXPECT(calstore_batch_store(b, NULL, NULL, 0, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_batch_store(b, &k, NULL, 3, ser, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_batch_store(b, &k, NULL, 0, NULL, NULL, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_batch_put(b, NULL, &err) == INVALID);
  calstore_profile p;
  memset(&p, 0, sizeof p);
  p.key = k;
  p.source = CALSTORE_SOURCE_CALIBRATED;
  p.policy = NULL; /* a profile without its policy */
  p.policy_length = 3;
  EXPECT(calstore_batch_put(b, &p, &err) == INVALID);
  p.policy = "p=1";
  p.measurement_count = 2; /* without its array */
  EXPECT(calstore_batch_put_if_absent(b, &p, NULL, &err) == INVALID);
  EXPECT(calstore_batch_clear_override(b, NULL, &err) == INVALID);
  EXPECT(calstore_batch_invalidate(b, NULL, NULL, &err) == INVALID);
  EXPECT(calstore_batch_size(b) == 0);
  calstore_batch_abort(&b);
  EXPECT(b == NULL);
  return 0;
}

static int c_read(void) {
  size_t n = 99;
  EXPECT(calstore_read_file(NULL, visit, NULL, NULL, NULL, &n) == INVALID);
  calstore_status st = calstore_read_file("", visit, NULL, NULL, NULL, &n);
  EXPECT(st == INVALID || st == CALSTORE_NOT_FOUND); /* no file has that name */
  EXPECT(calstore_read_buffer(NULL, 10, visit, NULL, NULL, NULL, &n) == INVALID);
  return 0;
}

static const misuse_row rows[] = {
    {"status/reason/level names, version, options_init", c_names},
    {"calstore_default_path", c_default_path},
    {"calstore_open/close/path/reload/count", c_open},
    {"calstore_store/install_override/clear/invalidate/inspect/export", c_store},
    {"calstore_get/lookup/select/lookup_result_free", c_get_and_lookup},
    {"calstore_batch_*", c_batch},
    {"calstore_read_file/read_buffer", c_read},
};

static void every_public_function_refuses_misuse(void **state) {
  (void)state;
  assert_int_equal(misuse_run_rows(rows, sizeof rows / sizeof rows[0]), 0);
  /* the store file was never written by a misuse */
  calstore *s = tu_open(g_path, NULL);
  assert_int_equal(calstore_count(s), 1);
  calstore_close(&s);
}

static int setup(void **state) {
  (void)state;
  g_dir = tu_mkdtemp();
  g_path = tu_path(g_dir, "profiles.txt");
  g_store = tu_open(g_path, NULL);
  calstore_key k = good_key();
  return tu_store(g_store, &k, "p=0", 1) == CALSTORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  calstore_close(&g_store);
  tu_rmtree(g_dir);
  free(g_dir);
  free(g_path);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_public_function_refuses_misuse),
  };
  return cmocka_run_group_tests_name("store_misuse", tests, setup, teardown);
}
