/*
 * test_store_concurrency.c: many writers at once: eight threads sharing one
 * handle, eight threads with their own handles, eight processes, while
 * readers look up; every profile of every writer must end up merged in the
 * file and in memory.
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
#define PER_WRITER 20

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

static void test_threads_shared_handle(void **state) {
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

static void test_threads_own_handles(void **state) {
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

static void test_processes(void **state) {
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_shared_handle),
      cmocka_unit_test(test_threads_own_handles),
      cmocka_unit_test(test_processes),
  };
  return cmocka_run_group_tests_name("store_concurrency", tests, NULL, NULL);
}
