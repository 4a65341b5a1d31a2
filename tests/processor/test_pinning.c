/*
 * test_pinning.c: pinning the calling thread and worker threads (checked
 * with sched_getaffinity), inheritance by new threads, the environment
 * record and its warnings, and the calibration targets.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "processor/processor.h"

/* The calling thread's CPUs, as a malloc'd list. */
static int *current(size_t *n) {
  cpu_set_t set;
  int *out = malloc(CPU_SETSIZE * sizeof *out);
  assert_non_null(out);
  CPU_ZERO(&set);
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  *n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set))
      out[(*n)++] = c;
  return out;
}

static void pin_thread_sets_the_affinity(void **state) {
  int *allowed, *now;
  size_t n, m;
  char err[256];
  (void)state;
  assert_int_equal(processor_allowed_cpus(&allowed, &n, err, sizeof err), 0);
  /* the last allowed CPU alone */
  assert_int_equal(processor_pin_thread(&allowed[n - 1], 1, err, sizeof err), 0);
  now = current(&m);
  assert_int_equal(m, 1);
  assert_int_equal(now[0], allowed[n - 1]);
  free(now);
  /* back to every allowed CPU */
  assert_int_equal(processor_pin_thread(allowed, n, err, sizeof err), 0);
  now = current(&m);
  assert_int_equal(m, n);
  assert_memory_equal(now, allowed, n * sizeof *allowed);
  free(now);
  free(allowed);
}

static void pin_to_an_impossible_cpu_fails(void **state) {
  static const int bad[] = {CALHOST_CPU_LIMIT - 1};
  static const int negative[] = {-1};
  char err[256] = "";
  size_t before_n, after_n;
  int *before, *after;
  (void)state;
  before = current(&before_n);
  if (processor_pin_thread(bad, 1, err, sizeof err) == 0) {
    free(before);
    skip(); /* a machine with 4096 CPUs */
  }
  assert_non_null(strstr(err, "4095"));
  assert_int_equal(processor_pin_thread(negative, 1, err, sizeof err), -1);
  after = current(&after_n);
  assert_int_equal(before_n, after_n); /* unchanged */
  free(before);
  free(after);
}

typedef struct worker_arg {
  const int *cpus;
  size_t n;
  unsigned index;
  int got;
  size_t got_n;
  int rc;
} worker_arg;

static void *worker(void *p) {
  worker_arg *a = p;
  cpu_set_t set;
  a->rc = processor_pin_worker(a->cpus, a->n, a->index, NULL, 0);
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  a->got_n = (size_t)CPU_COUNT(&set);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set))
      a->got = c;
  return NULL;
}

static void *inherit(void *p) {
  size_t *n = p;
  free(current(n));
  return NULL;
}

static void workers_get_one_cpu_each_and_threads_inherit(void **state) {
  int *allowed;
  size_t n;
  worker_arg args[3];
  pthread_t th[3];
  (void)state;
  assert_int_equal(processor_allowed_cpus(&allowed, &n, NULL, 0), 0);
  for (unsigned i = 0; i < 3; i++) {
    args[i] = (worker_arg){allowed, n, i, -1, 0, -1};
    assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
  }
  for (unsigned i = 0; i < 3; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(args[i].rc, 0);
    assert_int_equal(args[i].got_n, 1);
    assert_int_equal(args[i].got, allowed[i % n]);
  }
  /* a thread created after pinning inherits the binding */
  assert_int_equal(processor_pin_thread(allowed, 1, NULL, 0), 0);
  {
    size_t inherited = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, inherit, &inherited), 0);
    pthread_join(t, NULL);
    assert_int_equal(inherited, 1);
  }
  assert_int_equal(processor_pin_thread(allowed, n, NULL, 0), 0);
  free(allowed);
}

static void environment_record_has_every_field(void **state) {
  processor_environment env;
  char text[256];
  (void)state;
  memset(&env, 0x5a, sizeof env);
  processor_environment_record(NULL, 0, &env);
  assert_true(env.governor[0] != '\0');
  assert_non_null(memchr(env.governor, '\0', sizeof env.governor));
  assert_true(env.online_cpus >= 1);
  assert_true(env.set_cpus >= 1);
  if (access("/proc/loadavg", R_OK) == 0)
    assert_true(env.load_average[0] >= 0.0);
  else
    assert_true(env.load_average[0] == -1.0); /* unknown, said so */
  assert_true(env.warning_count <= CALHOST_PROCESSOR_MAX_WARNINGS);
  processor_environment_format(&env, text, sizeof text);
  assert_non_null(strstr(text, "governor="));
  assert_non_null(strstr(text, ";load1="));
  assert_non_null(strstr(text, ";online="));
  printf("# environment: %s\n", text);
  for (size_t i = 0; i < env.warning_count; i++)
    printf("# warning: %s\n", env.warnings[i]);
}

static void environment_warnings(void **state) {
  processor_environment env;
  (void)state;
  memset(&env, 0, sizeof env);
  strcpy(env.governor, "performance");
  env.load_average[0] = 0.2;
  env.set_cpus = 2;
  env.online_cpus = 2;
  processor_environment_assess(&env);
  assert_int_equal(env.warning_count, 0);

  strcpy(env.governor, "powersave");
  processor_environment_assess(&env);
  assert_int_equal(env.warning_count, 1);
  assert_non_null(strstr(env.warnings[0], "powersave"));

  env.load_average[0] = 1.5; /* > 0.5 x 2 CPUs */
  processor_environment_assess(&env);
  assert_int_equal(env.warning_count, 2);
  assert_non_null(strstr(env.warnings[1], "load average 1.50"));

  strcpy(env.governor, "unknown"); /* no cpufreq (VMs): no warning */
  env.load_average[0] = -1;        /* unknown: no warning */
  processor_environment_assess(&env);
  assert_int_equal(env.warning_count, 0);
}

static void targets_resolve_max_and_drop_duplicates(void **state) {
  processor_target_list list;
  static const uint32_t threads[] = {1, 0, 1};
  char err[256];
  (void)state;
  if (processor_targets(NULL, 0, 1, threads, 3, &list, err, sizeof err) != 0)
    fail_msg("%s", err);
  assert_true(list.cpu_count >= 1);
  assert_int_equal(list.processor.pus, list.cpu_count);
  assert_int_equal(list.items[0].thread_count, 1);
  if (list.processor.pus > 1) {
    assert_int_equal(list.count, 2);
    assert_int_equal(list.items[1].thread_count, list.processor.pus);
  } else {
    assert_int_equal(list.count, 1); /* max == 1 */
  }
  assert_ptr_equal(list.items[0].cpus, list.cpus);
  assert_true(list.processor.description[0] != '\0');
  processor_target_list_free(&list);
  processor_target_list_free(&list);
  processor_target_list_free(NULL);
}

static void targets_refuse_unavailable_cpus_and_too_many_threads(void **state) {
  processor_target_list list;
  static const int far[] = {CALHOST_CPU_LIMIT - 1};
  uint32_t threads[1];
  int *allowed;
  size_t n;
  char err[512];
  (void)state;
  assert_int_equal(processor_allowed_cpus(&allowed, &n, NULL, 0), 0);
  threads[0] = 1;
  assert_int_equal(processor_targets(far, 1, 0, threads, 1, &list, err, sizeof err),
                   PROCESSOR_TARGETS_CPU_UNAVAILABLE);
  assert_non_null(strstr(err, "not available"));
  assert_null(list.cpus);
  threads[0] = (uint32_t)n + 1;
  assert_int_equal(processor_targets(NULL, 0, 1, threads, 1, &list, err, sizeof err), -1);
  assert_non_null(strstr(err, "exceeds"));
  /* one configured CPU: max is 1 */
  threads[0] = 0;
  assert_int_equal(processor_targets(&allowed[0], 1, 0, threads, 1, &list, err, sizeof err), 0);
  assert_int_equal(list.count, 1);
  assert_int_equal(list.items[0].thread_count, 1);
  assert_int_equal(list.cpu_count, 1);
  assert_int_equal(list.cpus[0], allowed[0]);
  processor_target_list_free(&list);
  free(allowed);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pin_thread_sets_the_affinity),
      cmocka_unit_test(pin_to_an_impossible_cpu_fails),
      cmocka_unit_test(workers_get_one_cpu_each_and_threads_inherit),
      cmocka_unit_test(environment_record_has_every_field),
      cmocka_unit_test(environment_warnings),
      cmocka_unit_test(targets_resolve_max_and_drop_duplicates),
      cmocka_unit_test(targets_refuse_unavailable_cpus_and_too_many_threads),
  };
  return cmocka_run_group_tests_name("processor_pinning", tests, NULL, NULL);
}
