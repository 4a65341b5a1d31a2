/*
 * test_store_nomem.c: every allocation of the store fails in turn (this
 * program compiles the store with CALHOST_FAULT_INJECTION; the rule
 * "alloc:N" of CALSTORE_FAULT fails the N-th allocation, internal.h), as
 * SQLite's out-of-memory tests do. For each public operation the walk makes
 * allocation 1, 2, ... fail until the operation makes fewer allocations than
 * the one to fail. Each failure is an explicit status (CALSTORE_NO_MEMORY,
 * or the write failure a write reports) whose message says memory, never a
 * crash, and changes nothing: the file, the handle's snapshot and a fresh
 * reader's view are what they were, no temporary file is left, and the next
 * operation without a fault succeeds. The one exception is the documented
 * one: a commit whose directory sync fails after the rename is applied.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util.h"

/* fault.c (compiled into this program): the allocations counted since the
 * last reset; restarts the count. */
size_t cs_fault_alloc_reset(void);

/* The seeded store: three backends, both sources, both key kinds. */
#define SEEDED 6

typedef struct fixture {
  char *dir, *path;
  char *seed, *seed_plus; /* the seeded file's text; with one more profile */
  const char *expect;     /* the file an operation that failed leaves (seed) */
  int committed;          /* the operation's commit succeeded before a later step failed */
  calstore *s;            /* a handle opened on the seeded file */
} fixture;

static const calstore_property structure[] = {{"m", "64"}, {"n", "128"}, {"dtype", "f32"}};

static void seed_store(calstore *s) {
  calstore_key k1 = tu_exact("gpu", "3", "model-a", "proc", 8);
  calstore_key k2 = tu_exact("gpu", "2", "model-a", "proc", 8);
  calstore_key k3 = tu_exact("gpu", "3", "model-b", "proc", 4);
  calstore_key k4 = tu_portable("gpu", "3", structure, 3);
  calstore_key k5 = tu_exact("cpu", "1", "model-a", "proc", 8);
  assert_int_equal(tu_store(s, &k1, "tile=8;unroll=2", 1.5), CALSTORE_OK);
  assert_int_equal(tu_store(s, &k2, "tile=4", 2.5), CALSTORE_OK);
  assert_int_equal(tu_store(s, &k3, "tile=16", 3.5), CALSTORE_OK);
  assert_int_equal(tu_store(s, &k4, "tile=32", 4.5), CALSTORE_OK);
  assert_int_equal(tu_override(s, &k1, "tile=64"), CALSTORE_OK);
  assert_int_equal(tu_store(s, &k5, "threads=8", 0.5), CALSTORE_OK);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = tu_mkdtemp();
  f->path = tu_path(f->dir, "profiles.txt");
  unsetenv("CALSTORE_FAULT");
  calstore *s = tu_open(f->path, NULL);
  seed_store(s);
  calstore_close(&s);
  f->seed = harness_slurp(f->path, NULL);
  s = tu_open(f->path, NULL);
  calstore_key k = tu_exact("cpu", "2", "model-z", "proc", 2);
  assert_int_equal(tu_store(s, &k, "threads=2", 1), CALSTORE_OK);
  calstore_close(&s);
  f->seed_plus = harness_slurp(f->path, NULL);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  unsetenv("CALSTORE_FAULT");
  calstore_close(&f->s);
  tu_rmtree(f->dir);
  free(f->dir);
  free(f->path);
  free(f->seed);
  free(f->seed_plus);
  free(f);
  return 0;
}

/* Nothing in the folder but the store, its lock and what `keep` names. */
static void assert_no_temporary_file(const fixture *f, const char *keep) {
  DIR *d = opendir(f->dir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "profiles.txt") ||
        !strcmp(e->d_name, "profiles.txt.lock") || (keep && !strcmp(e->d_name, keep)))
      continue;
    fail_msg("left behind: %s", e->d_name);
  }
  closedir(d);
}

/* One operation on the fixture, run with an allocation failing. Returns its
 * status; *changes is the number of profiles it adds on success. */
typedef calstore_status (*op_fn)(fixture *f, calstore_error *err, int *changes);

/* Walks op's allocations: for n = 1, 2, ... restores the seeded file, opens
 * a handle, makes the n-th allocation of op fail and checks the outcome;
 * stops when op made fewer than n allocations (it then succeeded). Returns
 * the number of failures walked (at least 1: each op allocates). */
static size_t walk(fixture *f, const char *what, op_fn op, int writes) {
  size_t n = 1;
  for (;; n++) {
    tu_write(f->path, f->seed);
    f->s = tu_open(f->path, NULL);
    assert_non_null(f->s);
    assert_int_equal(calstore_count(f->s), SEEDED);
    f->expect = f->seed;
    f->committed = 0;
    char rule[32];
    snprintf(rule, sizeof rule, "alloc:%zu", n);
    setenv("CALSTORE_FAULT", rule, 1);
    cs_fault_alloc_reset();
    calstore_error err = {0};
    int changes = 0;
    calstore_status st = op(f, &err, &changes);
    size_t made = cs_fault_alloc_reset();
    unsetenv("CALSTORE_FAULT");
    char *now = harness_slurp(f->path, NULL);
    if (made < n) { /* no allocation failed: the operation's own result */
      if (st != CALSTORE_OK)
        fail_msg("%s without a failure: %s (%s)", what, calstore_status_name(st), err.message);
      assert_int_equal(calstore_count(f->s), SEEDED + changes);
      if (writes)
        assert_string_not_equal(now, f->seed);
    } else if (st != CALSTORE_OK) {
      /* a commit whose directory sync failed after the rename is applied */
      int applied = f->committed || strstr(err.message, "could not sync its directory") != NULL;
      if (st != CALSTORE_NO_MEMORY &&
          !(st == CALSTORE_WRITE_FAILED && strstr(err.message, "memory")))
        fail_msg("%s, allocation %zu failing: %s (%s)", what, n, calstore_status_name(st),
                 err.message);
      if (applied) {
        if (calstore_count(f->s) != (size_t)(SEEDED + changes))
          fail_msg("%s, allocation %zu failing (%s: %s): %zu profiles, want %d", what, n,
                   calstore_status_name(st), err.message, calstore_count(f->s), SEEDED + changes);
      } else {
        if (strcmp(now, f->expect))
          fail_msg("%s, allocation %zu failing (%s: %s) changed the file", what, n,
                   calstore_status_name(st), err.message);
        assert_int_equal(calstore_count(f->s), SEEDED);
      }
    } else { /* a failure the operation could do without (a shortcut skipped) */
      assert_int_equal(calstore_count(f->s), SEEDED + changes);
    }
    free(now);
    assert_no_temporary_file(f, "export.txt");
    if (writes) { /* what a fresh reader sees agrees with the handle */
      calstore *other = tu_open(f->path, NULL);
      assert_int_equal(calstore_count(other), calstore_count(f->s));
      calstore_close(&other);
    }
    /* and the handle still works */
    calstore_key k = tu_exact("gpu", "9", "after", "proc", 8);
    assert_int_equal(tu_store(f->s, &k, "after", 1), CALSTORE_OK);
    calstore_close(&f->s);
    if (made < n)
      break;
  }
  assert_true(n > 1);
  return n - 1;
}

static calstore_status op_open(fixture *f, calstore_error *err, int *changes) {
  (void)changes;
  calstore_options o;
  calstore_options_init(&o);
  o.path = f->path;
  calstore *s = NULL;
  calstore_status st = calstore_open(&o, &s, err);
  if (st == CALSTORE_OK)
    assert_int_equal(calstore_count(s), SEEDED);
  else if (s)
    assert_int_equal(calstore_count(s), 0);
  calstore_close(&s);
  return st;
}

static calstore_status op_store(fixture *f, calstore_error *err, int *changes) {
  calstore_key k = tu_exact("gpu", "3", "model-c", "proc", 8);
  calstore_measurement m[] = {{"median_latency", 1.25, "us"}, {"spread", 0.5, ""}};
  tu_policy p = {"tile=2", 0, 0};
  *changes = 1;
  return calstore_store(f->s, &k, m, 2, tu_serialize, &p, NULL, NULL, err);
}

/* A portable key of 20 properties (past the store's stack copies of a
 * structure): stored, then found by a lookup and a get. */
static calstore_status op_wide(fixture *f, calstore_error *err, int *changes) {
  enum { N = 20 };
  static char names[N][8];
  calstore_property wide[N];
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "w%02d", N - i);
    wide[i] = (calstore_property){names[i], "1"};
  }
  calstore_key k = tu_portable("cpu", "1", wide, N);
  tu_policy p = {"wide", 0, 0};
  *changes = 1; /* when applied (also after a failed directory sync) */
  calstore_status st = calstore_store(f->s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, err);
  if (st != CALSTORE_OK)
    return st;
  f->committed = 1; /* what fails from here on is a lookup */
  calstore_lookup_options o = {"cpu", "MatMul", "1", NULL, NULL, 0, wide, N, 0};
  calstore_lookup_result *r = NULL;
  if ((st = calstore_lookup(f->s, &o, NULL, NULL, &r, err)) != CALSTORE_OK)
    return st;
  assert_string_equal(r->profile->policy, "wide");
  calstore_lookup_result_free(&r);
  if ((st = calstore_get(f->s, &k, CALSTORE_SOURCE_CALIBRATED, &r, err)) != CALSTORE_OK)
    return st;
  calstore_lookup_result_free(&r);
  return CALSTORE_OK;
}

static calstore_status op_portable_override(fixture *f, calstore_error *err, int *changes) {
  calstore_property s[] = {{"k", "1"}, {"b", "2"}};
  calstore_key k = tu_portable("cpu", "1", s, 2);
  tu_policy p = {"threads=2", 0, 0};
  tu_validator v = {NULL, 0};
  *changes = 1;
  return calstore_install_override(f->s, &k, NULL, 0, tu_serialize, &p, tu_validate, &v, err);
}

static calstore_status op_clear_override(fixture *f, calstore_error *err, int *changes) {
  calstore_key k = tu_exact("gpu", "3", "model-a", "proc", 8);
  *changes = -1;
  return calstore_clear_override(f->s, &k, err);
}

static calstore_status op_invalidate(fixture *f, calstore_error *err, int *changes) {
  size_t removed = 0;
  calstore_status st = calstore_invalidate(f->s, "gpu", "3", &removed, err);
  if (st == CALSTORE_OK)
    assert_int_equal(removed, 4);
  *changes = -4;
  return st;
}

/* A batch of every kind of change; a refused queueing ends it (aborted). */
static calstore_status op_batch(fixture *f, calstore_error *err, int *changes) {
  calstore_batch *b = NULL;
  calstore_status st = calstore_batch_begin(f->s, &b, err);
  if (st != CALSTORE_OK)
    return st;
  calstore_key k1 = tu_exact("gpu", "4", "model-a", "proc", 8);
  calstore_key k2 = tu_portable("gpu", "4", structure, 3);
  calstore_key k3 = tu_exact("gpu", "3", "model-a", "proc", 8);
  calstore_key k4 = tu_exact("gpu", "3", "model-b", "proc", 4); /* present: kept */
  calstore_measurement m[] = {{"median_latency", 7, "us"}};
  tu_policy p = {"tile=1", 0, 0};
  int stored = -1, kept = -1;
  calstore_profile put = {k2, CALSTORE_SOURCE_OVERRIDE, m, 1, "tile=5", 6};
  if ((st = calstore_batch_store(b, &k1, m, 1, tu_serialize, &p, NULL, NULL, err)) ||
      (st = calstore_batch_put(b, &put, err)) ||
      (st = calstore_batch_clear_override(b, &k3, err)) ||
      (st = calstore_batch_invalidate(b, "cpu", NULL, err)) ||
      (st = calstore_batch_store_if_absent(b, &k1, m, 1, tu_serialize, &p, NULL, NULL, &stored,
                                           err)) ||
      (st = calstore_batch_put_if_absent(
           b, &(calstore_profile){k4, CALSTORE_SOURCE_CALIBRATED, m, 1, "tile=6", 6}, &kept,
           err))) {
    calstore_batch_abort(&b);
    return st;
  }
  st = calstore_batch_commit(&b, err);
  assert_null(b);
  if (st == CALSTORE_OK) {
    assert_int_equal(stored, 0); /* the batch's own store came first */
    assert_int_equal(kept, 0);
  }
  *changes = 2 - 1 - 1;
  return st;
}

/* Lookups with a rejection report, the hot path and a get: nothing is
 * written; a result is complete or absent. */
static calstore_status op_lookup(fixture *f, calstore_error *err, int *changes) {
  (void)changes;
  calstore_lookup_options o = {"gpu", "MatMul", "3", "model-a", "proc", 8, structure, 3, 0};
  calstore_lookup_result *r = NULL;
  calstore_status st = calstore_lookup(f->s, &o, NULL, NULL, &r, err);
  if (st != CALSTORE_OK) {
    assert_null(r);
    return st;
  }
  assert_int_equal(r->level, CALSTORE_LEVEL_EXACT_OVERRIDE);
  assert_string_equal(r->profile->policy, "tile=64");
  assert_int_equal(r->rejection_count, 2); /* implementation 2, model-b's thread count */
  calstore_lookup_result_free(&r);
  /* a validator refusing the override and a forced portable walk */
  tu_validator v = {"tile=64", 0};
  o.force_portable = 1;
  if ((st = calstore_lookup(f->s, &o, tu_validate, &v, &r, err)) != CALSTORE_OK)
    return st;
  assert_int_equal(r->level, CALSTORE_LEVEL_PORTABLE_CALIBRATED);
  calstore_lookup_result_free(&r);
  o.force_portable = 0;
  if ((st = calstore_select(f->s, &o, tu_validate, &v, &r, err)) != CALSTORE_OK)
    return st;
  assert_int_equal(r->level, CALSTORE_LEVEL_EXACT_CALIBRATED);
  calstore_lookup_result_free(&r);
  /* the validator's refusal recorded in the report */
  if ((st = calstore_lookup(f->s, &o, tu_validate, &v, &r, err)) != CALSTORE_OK)
    return st;
  assert_int_equal(r->level, CALSTORE_LEVEL_EXACT_CALIBRATED);
  assert_int_equal(r->rejections[0].reason, CALSTORE_REJECT_POLICY_REJECTED);
  calstore_lookup_result_free(&r);
  calstore_key k = tu_portable("gpu", "3", structure, 3);
  if ((st = calstore_get(f->s, &k, CALSTORE_SOURCE_CALIBRATED, &r, err)) != CALSTORE_OK)
    return st;
  assert_string_equal(r->profile->policy, "tile=32");
  calstore_lookup_result_free(&r);
  return CALSTORE_OK;
}

/* A reload that finds another writer's commit (written here with the C
 * library: no allocation of the store). On failure the snapshot stays. */
static calstore_status op_reload(fixture *f, calstore_error *err, int *changes) {
  tu_write(f->path, f->seed_plus);
  f->expect = f->seed_plus;
  *changes = 1;
  return calstore_reload(f->s, err);
}

static calstore_status op_export(fixture *f, calstore_error *err, int *changes) {
  (void)changes;
  char *out = tu_path(f->dir, "export.txt");
  unlink(out);
  calstore_status st = calstore_export(f->s, out, err);
  char *text = harness_slurp(out, NULL);
  if (st == CALSTORE_OK || strstr(err->message, "could not sync its directory"))
    assert_string_equal(text, f->seed);
  else if (text)
    fail_msg("export failed (%s) and left %s", err->message, text);
  free(text);
  free(out);
  return st;
}

static int count_visits(void *user, const calstore_profile *p) {
  (void)p;
  ++*(size_t *)user;
  return 0;
}

/* The reader's diagnostics: the last message, into a calstore_error. */
static void keep_message(void *user, calstore_status status, unsigned line, const char *message) {
  calstore_error *err = user;
  err->status = status;
  err->line = line;
  snprintf(err->message, sizeof err->message, "%s", message);
}

static calstore_status op_read_buffer(fixture *f, calstore_error *err, int *changes) {
  (void)changes;
  size_t visits = 0, count = 0;
  calstore_status st = calstore_read_buffer(f->seed, strlen(f->seed), count_visits, &visits,
                                            keep_message, err, &count);
  if (st == CALSTORE_OK) {
    assert_int_equal(visits, SEEDED);
    assert_int_equal(count, SEEDED);
  }
  return st;
}

static calstore_status op_read_file(fixture *f, calstore_error *err, int *changes) {
  (void)changes;
  size_t count = 0;
  calstore_status st = calstore_read_file(f->path, NULL, NULL, keep_message, err, &count);
  if (st == CALSTORE_OK)
    assert_int_equal(count, SEEDED);
  return st;
}

static void each_allocation_of_open_and_reading_fails_cleanly(void **state) {
  fixture *f = *state;
  walk(f, "open", op_open, 0);
  walk(f, "read_buffer", op_read_buffer, 0);
  walk(f, "read_file", op_read_file, 0);
  walk(f, "reload", op_reload, 0);
  walk(f, "lookup", op_lookup, 0);
  walk(f, "export", op_export, 0);
}

static void each_allocation_of_a_commit_fails_cleanly(void **state) {
  fixture *f = *state;
  walk(f, "store", op_store, 1);
  walk(f, "install_override", op_portable_override, 1);
  walk(f, "wide structure", op_wide, 1);
  walk(f, "clear_override", op_clear_override, 1);
  walk(f, "invalidate", op_invalidate, 1);
  walk(f, "batch", op_batch, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(each_allocation_of_open_and_reading_fails_cleanly, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(each_allocation_of_a_commit_fails_cleanly, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
