/*
 * test_services.c: loader_services: the host-services table. set_error is
 * safe from several threads at once (each message taken back is one whole
 * message, never a mix of two); take_error clears it; the default log level
 * follows CALHOST_LOG_LEVEL and the CLI's --verbose (loader_log_set_verbose).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"

enum { WRITERS = 3, LENGTH = 1000 };

typedef struct shared {
  calhost_host_services svc;
  loader_services_context ctx;
  atomic_int stop, finished;
} shared;

typedef struct writer {
  shared *s;
  char message[LENGTH + 1];
} writer;

static void *write_errors(void *arg) {
  writer *w = arg;
  for (int i = 0; i < 20000 && !atomic_load(&w->s->stop); i++)
    w->s->svc.set_error(w->s->svc.context, w->message);
  atomic_fetch_add(&w->s->finished, 1);
  return NULL;
}

static void set_error_is_thread_safe(void **state) {
  shared *s = calloc(1, sizeof *s);
  writer w[WRITERS];
  pthread_t t[WRITERS];
  size_t seen = 0, mixed = 0;
  (void)state;
  assert_non_null(s);
  loader_services_init(&s->svc, &s->ctx, NULL, "test");
  for (int i = 0; i < WRITERS; i++) {
    w[i].s = s;
    memset(w[i].message, 'a' + i, LENGTH);
    w[i].message[LENGTH] = '\0';
    assert_int_equal(pthread_create(&t[i], NULL, write_errors, &w[i]), 0);
  }
  /* Take messages while the writers write (each writes 20000), up to 500
   * of them; no time limit (on a busy machine the writers may start late),
   * and a last take after they finished always finds a message. */
  for (;;) {
    int done = atomic_load(&s->finished) == WRITERS;
    const char *m = loader_services_take_error(&s->ctx);
    if (!m) {
      if (done)
        break;
      sched_yield();
      continue;
    }
    seen++;
    size_t n = strlen(m);
    for (size_t k = 0; k < n && !mixed; k++)
      mixed += m[k] != m[0];
    if (n != LENGTH)
      mixed++;
    if (seen >= 500)
      break;
  }
  atomic_store(&s->stop, 1);
  for (int i = 0; i < WRITERS; i++)
    pthread_join(t[i], NULL);
  assert_true(seen > 0);
  assert_int_equal(mixed, 0);
  /* taken once: cleared */
  s->svc.set_error(s->svc.context, "one\nline");
  assert_string_equal(loader_services_take_error(&s->ctx), "one line");
  assert_null(loader_services_take_error(&s->ctx));
  free(s);
}

static void log_level_from_environment_and_verbose(void **state) {
  calhost_log_level l;
  (void)state;
  assert_int_equal(loader_log_level_parse("Info", &l), 0);
  assert_int_equal(l, CALHOST_LOG_INFO);
  assert_int_equal(loader_log_level_parse("loud", &l), -1);
  assert_int_equal(loader_log_level_parse("debugx", &l), -1);
  unsetenv("CALHOST_LOG_LEVEL");
  loader_log_set_verbose(0);
  assert_int_equal(loader_log_level_default(), CALHOST_LOG_WARNING);
  setenv("CALHOST_LOG_LEVEL", "debug", 1);
  assert_int_equal(loader_log_level_default(), CALHOST_LOG_DEBUG);
  setenv("CALHOST_LOG_LEVEL", "nonsense", 1);
  assert_int_equal(loader_log_level_default(), CALHOST_LOG_WARNING);
  loader_log_set_verbose(1);
  assert_int_equal(loader_log_level_default(), CALHOST_LOG_DEBUG);
  loader_options o;
  loader_options_init(&o);
  assert_int_equal(o.services.min_log_level, CALHOST_LOG_DEBUG);
  loader_log_set_verbose(0);
  unsetenv("CALHOST_LOG_LEVEL");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(set_error_is_thread_safe),
      cmocka_unit_test(log_level_from_environment_and_verbose),
  };
  return cmocka_run_group_tests_name("loader_services", tests, NULL, NULL);
}
