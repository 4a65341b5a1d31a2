/*
 * test_store_concurrency.c: many writers at once: eight threads sharing one
 * handle, eight threads with their own handles, eight processes, while
 * readers look up; every profile of every writer must end up merged in the
 * file and in memory. Conditional puts ("put if absent") decided by the
 * commit against what another process wrote after this one's snapshot.
 * A handle's known file version is never mistaken for another writer's.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <sys/wait.h>

#include "util.h"

#define WRITERS 8
/* profiles per writer: 20, 5 under valgrind (every commit rewrites the
 * file; eight writers at once crawl under memcheck on a loaded machine) */
static int g_per_writer = 20;
#define PER_WRITER g_per_writer

typedef struct job {
  calstore *shared; /* NULL: open an own handle on path */
  const char *path;
  int id;
  int failures;
} job;

static int write_some(calstore *s, int id) {
  int failures = 0;
  char digest[64], proc[32];
  for (int i = 0; i < PER_WRITER; i++) {
    snprintf(digest, sizeof digest, "writer-%d-model-%d", id, i);
    snprintf(proc, sizeof proc, "cpu%d", id);
    calstore_key k = tu_exact("gpu", "3", digest, proc, (uint32_t)(i % 4 + 1));
    if (i % 5 == 4) { /* some in batches */
      calstore_batch *b = NULL;
      tu_policy p = {"batched", 0, 0};
      if (calstore_batch_begin(s, &b, NULL) != CALSTORE_OK ||
          calstore_batch_store(b, &k, NULL, 0, tu_serialize, &p, NULL, NULL, NULL) != CALSTORE_OK ||
          calstore_batch_commit(&b, NULL) != CALSTORE_OK)
        failures++;
      calstore_batch_abort(&b);
    } else if (tu_store(s, &k, "single", i) != CALSTORE_OK) {
      failures++;
    }
  }
  return failures;
}

static void *writer(void *arg) {
  job *j = arg;
  calstore *s = j->shared ? j->shared : tu_open(j->path, NULL);
  j->failures = s ? write_some(s, j->id) : PER_WRITER;
  if (!j->shared)
    calstore_close(&s);
  return NULL;
}

static int stop_readers; /* atomic builtins only */

static void *reader(void *arg) {
  calstore *s = arg;
  calstore_lookup_options o = {0};
  o.backend = "gpu";
  o.operator_name = "MatMul";
  o.implementation = "3";
  o.model_digest = "writer-0-model-0";
  o.processor = "cpu0";
  o.thread_count = 1;
  while (!__atomic_load_n(&stop_readers, __ATOMIC_ACQUIRE)) {
    calstore_lookup_result *r = NULL;
    calstore_lookup(s, &o, NULL, NULL, &r, NULL);
    calstore_lookup_result_free(&r);
    (void)calstore_count(s);
  }
  return NULL;
}

static void check_all(const char *path, calstore *mem) {
  calstore *s = tu_open(path, NULL);
  assert_int_equal(calstore_count(s), WRITERS * PER_WRITER);
  if (mem)
    assert_int_equal(calstore_count(mem), WRITERS * PER_WRITER);
  calstore_close(&s);
}

static void threads_sharing_a_handle_lose_no_write(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *path = tu_path(dir, "profiles.txt");
  calstore *s = tu_open(path, NULL);
  pthread_t t[WRITERS], rd[2];
  job jobs[WRITERS];
  __atomic_store_n(&stop_readers, 0, __ATOMIC_RELEASE);
  for (int i = 0; i < 2; i++)
    pthread_create(&rd[i], NULL, reader, s);
  for (int i = 0; i < WRITERS; i++) {
    jobs[i] = (job){s, path, i, 0};
    pthread_create(&t[i], NULL, writer, &jobs[i]);
  }
  for (int i = 0; i < WRITERS; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(jobs[i].failures, 0);
  }
  __atomic_store_n(&stop_readers, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < 2; i++)
    pthread_join(rd[i], NULL);
  check_all(path, s);
  calstore_close(&s);
  tu_rmtree(dir);
  free(dir);
  free(path);
}

static void threads_with_their_own_handles_lose_no_write(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *path = tu_path(dir, "profiles.txt");
  pthread_t t[WRITERS];
  job jobs[WRITERS];
  for (int i = 0; i < WRITERS; i++) {
    jobs[i] = (job){NULL, path, i, 0};
    pthread_create(&t[i], NULL, writer, &jobs[i]);
  }
  for (int i = 0; i < WRITERS; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(jobs[i].failures, 0);
  }
  check_all(path, NULL);
  tu_rmtree(dir);
  free(dir);
  free(path);
}

static void processes_writing_at_once_lose_no_write(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *path = tu_path(dir, "profiles.txt");
  pid_t pids[WRITERS];
  for (int i = 0; i < WRITERS; i++) {
    pids[i] = fork();
    assert_true(pids[i] >= 0);
    if (pids[i] == 0) {
      calstore *s = tu_open(path, NULL);
      int failures = s ? write_some(s, i) : 1;
      calstore_close(&s);
      _exit(failures ? 1 : 0);
    }
  }
  for (int i = 0; i < WRITERS; i++) {
    int status = 0;
    waitpid(pids[i], &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  check_all(path, NULL);
  char *tmp = tu_path(dir, "profiles.txt.tmp");
  assert_false(tu_exists(tmp));
  free(tmp);
  tu_rmtree(dir);
  free(dir);
  free(path);
}

/* Stores one calibrated profile through a handle of its own in a child
 * process (another writer of the file); returns the child's status. */
static int store_in_child(const char *path, const calstore_key *k, const char *policy) {
  pid_t pid = fork();
  if (pid == 0) {
    calstore *s = tu_open(path, NULL);
    int rc = s && tu_store(s, k, policy, 1) == CALSTORE_OK ? 0 : 1;
    calstore_close(&s);
    _exit(rc);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* The repro of the portable rule's race: this process reads its snapshot
 * (no portable profile yet) and queues its profiles; another process stores
 * a profile with the same key before the commit. A conditional put keeps
 * the other writer's profile (the decision is the commit's, against the
 * file reloaded under the lock); an unconditional put replaces it; a
 * conditional put of a key nobody wrote is written. */
static void put_if_absent_is_decided_at_commit(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *path = tu_path(dir, "profiles.txt");
  calstore *s = tu_open(path, NULL);
  assert_non_null(s);
  calstore_property st1[] = {{"n", "4096"}, {"dtype", "float32"}};
  calstore_property st1_other_order[] = {{"dtype", "float32"}, {"n", "4096"}};
  calstore_property st2[] = {{"n", "16384"}};
  calstore_key portable = tu_portable("gemm", "3", st1, 2);
  calstore_key portable_reordered = tu_portable("gemm", "3", st1_other_order, 2);
  calstore_key fresh = tu_portable("gemm", "3", st2, 1);
  calstore_key exact = tu_exact("gemm", "3", "d", "cpu", 4);
  calstore_key replaced = tu_exact("gemm", "3", "d", "cpu", 8);

  /* the snapshot: nothing stored yet; queue the batch */
  calstore_lookup_result *got = NULL;
  assert_int_equal(calstore_get(s, &portable, CALSTORE_SOURCE_CALIBRATED, &got, NULL),
                   CALSTORE_NOT_FOUND);
  calstore_batch *b = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_batch_begin(s, &b, &err), CALSTORE_OK);
  tu_policy mine = {"mine", 0, 0};
  int stored_portable = -1, stored_exact = -1, stored_fresh = -1, stored_dup = -1;
  assert_int_equal(calstore_batch_store_if_absent(b, &portable_reordered, NULL, 0, tu_serialize,
                                                  &mine, NULL, NULL, &stored_portable, &err),
                   CALSTORE_OK);
  assert_int_equal(stored_portable, 0); /* not before the commit */
  assert_int_equal(calstore_batch_store_if_absent(b, &exact, NULL, 0, tu_serialize, &mine, NULL,
                                                  NULL, &stored_exact, &err),
                   CALSTORE_OK);
  assert_int_equal(calstore_batch_store_if_absent(b, &fresh, NULL, 0, tu_serialize, &mine, NULL,
                                                  NULL, &stored_fresh, &err),
                   CALSTORE_OK);
  assert_int_equal(
      calstore_batch_store(b, &replaced, NULL, 0, tu_serialize, &mine, NULL, NULL, &err),
      CALSTORE_OK);
  /* a second conditional put of a key queued before it in the batch */
  calstore_measurement m[] = {{"lat", 1, "us"}};
  calstore_profile dup = {fresh, CALSTORE_SOURCE_CALIBRATED, m, 1, "dup", 3};
  assert_int_equal(calstore_batch_put_if_absent(b, &dup, &stored_dup, &err), CALSTORE_OK);

  /* meanwhile another process (an import, a concurrent calibrate) */
  assert_int_equal(store_in_child(path, &portable, "fleet"), 0);
  assert_int_equal(store_in_child(path, &exact, "fleet"), 0);
  assert_int_equal(store_in_child(path, &replaced, "fleet"), 0);

  assert_int_equal(calstore_batch_commit(&b, &err), CALSTORE_OK);
  assert_int_equal(stored_portable, 0);
  assert_int_equal(stored_exact, 0);
  assert_int_equal(stored_fresh, 1);
  assert_int_equal(stored_dup, 0);

  /* in memory and in the file: the other writer's profiles were kept */
  calstore_close(&s);
  s = tu_open(path, NULL);
  assert_int_equal(calstore_count(s), 4);
  const struct {
    const calstore_key *key;
    const char *policy;
  } want[] = {{&portable, "fleet"}, {&exact, "fleet"}, {&fresh, "mine"}, {&replaced, "mine"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    assert_int_equal(calstore_get(s, want[i].key, CALSTORE_SOURCE_CALIBRATED, &got, &err),
                     CALSTORE_OK);
    assert_string_equal(got->profile->policy, want[i].policy);
    calstore_lookup_result_free(&got);
  }
  /* a failed commit reports nothing stored */
  calstore_key other = tu_exact("gemm", "3", "d2", "cpu", 1);
  assert_int_equal(calstore_batch_begin(s, &b, &err), CALSTORE_OK);
  int stored_other = -1;
  assert_int_equal(calstore_batch_store_if_absent(b, &other, NULL, 0, tu_serialize, &mine, NULL,
                                                  NULL, &stored_other, &err),
                   CALSTORE_OK);
  tu_write(path, "not a store file\n");
  assert_int_equal(calstore_batch_commit(&b, &err), CALSTORE_MALFORMED);
  assert_int_equal(stored_other, 0);
  calstore_close(&s);
  tu_rmtree(dir);
  free(dir);
  free(path);
}

/* The policy stored under key k in a fresh handle's view of path. */
static char *policy_in_file(const char *path, const calstore_key *k) {
  calstore *s = tu_open(path, NULL);
  calstore_lookup_result *got = NULL;
  char *policy = NULL;
  if (s && calstore_get(s, k, CALSTORE_SOURCE_CALIBRATED, &got, NULL) == CALSTORE_OK)
    policy = strdup(got->profile->policy);
  calstore_lookup_result_free(&got);
  calstore_close(&s);
  return policy;
}

/* A handle skips the reload of a commit when the file's identity (device,
 * inode, size, times) is the one it last wrote. ext4 hands a freed inode to
 * the next file created, and timestamps may tick only every few ms, so
 * without care another writer's version could carry that identity and be
 * overwritten with the stale snapshot. The handle holds the version it knows
 * open: no later version may reuse its inode, and no update is lost. */
static void another_writers_version_never_takes_the_known_identity(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *path = tu_path(dir, "profiles.txt");
  calstore *a = tu_open(path, NULL), *b = tu_open(path, NULL);
  assert_non_null(a);
  assert_non_null(b);
  calstore_key mine = tu_exact("gemm", "3", "a", "cpu", 1);
  calstore_key theirs = tu_exact("gemm", "3", "b", "cpu", 1);
  for (int round = 0; round < 20; round++) {
    struct stat known, now;
    assert_int_equal(tu_store(a, &mine, "aaaa", round), CALSTORE_OK);
    assert_int_equal(stat(path, &known), 0);
    /* two commits of the other handle: the first frees a's inode (were it
     * not held), the second's temporary file would be the first to get it */
    assert_int_equal(tu_store(b, &theirs, "bbbb", round), CALSTORE_OK);
    assert_int_equal(tu_store(b, &theirs, "cccc", round), CALSTORE_OK);
    assert_int_equal(stat(path, &now), 0);
    assert_true(now.st_ino != known.st_ino);
    /* a's next commit merges the other handle's last change */
    calstore_key touch = tu_exact("gemm", "3", "touch", "cpu", 1);
    assert_int_equal(tu_store(a, &touch, "t", round), CALSTORE_OK);
    char *got = policy_in_file(path, &theirs);
    assert_non_null(got);
    assert_string_equal(got, "cccc");
    free(got);
  }
  calstore_close(&a);
  calstore_close(&b);
  tu_rmtree(dir);
  free(dir);
  free(path);
}

int main(void) {
  g_per_writer = (int)tu_iterations(20, 4);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(threads_sharing_a_handle_lose_no_write),
      cmocka_unit_test(threads_with_their_own_handles_lose_no_write),
      cmocka_unit_test(processes_writing_at_once_lose_no_write),
      cmocka_unit_test(put_if_absent_is_decided_at_commit),
      cmocka_unit_test(another_writers_version_never_takes_the_known_identity),
  };
  return cmocka_run_group_tests_name("store_concurrency", tests, NULL, NULL);
}
