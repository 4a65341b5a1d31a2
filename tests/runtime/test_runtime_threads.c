/*
 * test_runtime_threads.c: the deployment runtime inside a multi-threaded
 * program, an inference server (runtime.h, "Processes and threads"),
 * linked as the shared libcalhost_runtime. While threads dlopen and dlclose
 * a library in a loop (as Python imports and GPU runtimes do) and threads
 * select with runtime handles of their own, other threads open runtimes and
 * load the plugin over and over: every load and every selection succeeds,
 * the runtime never forks (a pthread_atfork counter stays at 0: fork in a
 * threaded process can hang or die in ld.so), and nothing rewires fd 1 (a
 * watcher thread compares it all along; two handles making plugin calls at
 * once once left the whole process's stdout on stderr). Bounded rounds
 * (CALHOST_TEST_THREAD_ROUNDS scales them; the helgrind entry runs fewer).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "calhost/runtime.h"
#include "harness.h"

static char g_dir[256], g_cfg[600], g_dl_library[1400];
static int g_rounds = 1;

static atomic_int g_forks;    /* fork() calls seen since the threads started */
static atomic_int g_stop;     /* the workers are done: loopers and the watcher stop */
static atomic_int g_failures; /* loads or selections that failed */
static atomic_int g_fd_changes;
static atomic_long g_loads, g_selects, g_dl_cycles;
static pthread_mutex_t g_first_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_first_failure[2048];
static struct stat g_stdout;

static void count_fork(void) {
  atomic_fetch_add(&g_forks, 1);
}

static const char *build_dir(void) {
  const char *b = getenv("CALHOST_BUILD_DIR");
  assert_non_null(b);
  return b;
}

static void failed(const char *what, calhost_runtime_status st, const char *err) {
  atomic_fetch_add(&g_failures, 1);
  pthread_mutex_lock(&g_first_lock);
  if (!g_first_failure[0])
    snprintf(g_first_failure, sizeof g_first_failure, "%s: %s: %s", what,
             calhost_runtime_status_name(st), err);
  pthread_mutex_unlock(&g_first_lock);
}

/* One selection of workload sum on runtime rt with plugin p: the stored
 * portable override p=2, checked by the plugin's validator. */
static void select_once(calhost_runtime *rt, calhost_runtime_plugin *p) {
  char err[2048] = "";
  calhost_runtime_selection *sel = NULL;
  calhost_runtime_status st = calhost_runtime_select(rt, p, "sum", 1, &sel, err, sizeof err);
  if (st != CALHOST_RUNTIME_OK)
    failed("select", st, err);
  else if (!sel->result || !sel->result->profile ||
           strcmp(sel->result->profile->policy, "p=2") != 0)
    failed("select", st, "the stored override p=2 was not selected");
  else
    atomic_fetch_add(&g_selects, 1);
  calhost_runtime_selection_free(&sel);
}

/* Opens a runtime on the test's configuration and loads test_good (by
 * name, or as the plugin serving workload sum). */
static calhost_runtime *open_and_load(int by_workload, calhost_runtime_plugin **p) {
  char err[2048] = "";
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = g_cfg;
  calhost_runtime *rt = NULL;
  calhost_runtime_status st = calhost_runtime_open(&o, &rt, err, sizeof err);
  if (st != CALHOST_RUNTIME_OK) {
    failed("open", st, err);
    return NULL;
  }
  st = calhost_runtime_load_plugin(rt, by_workload ? NULL : "test_good", by_workload ? "sum" : NULL,
                                   p, err, sizeof err);
  if (st != CALHOST_RUNTIME_OK) {
    failed("load_plugin", st, err);
    calhost_runtime_close(&rt);
    return NULL;
  }
  atomic_fetch_add(&g_loads, 1);
  return rt;
}

/* A thread that loads and unloads a library until the workers are done. */
static void *dl_looper(void *arg) {
  (void)arg;
  for (long i = 0; !atomic_load(&g_stop) && i < 100000; i++) {
    void *h = dlopen(g_dl_library, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      failed("dlopen", CALHOST_RUNTIME_OK, dlerror());
      break;
    }
    dlclose(h);
    atomic_fetch_add(&g_dl_cycles, 1);
  }
  return NULL;
}

/* A thread with a runtime handle of its own, selecting in a loop. */
static void *selector(void *arg) {
  int n = *(const int *)arg;
  calhost_runtime_plugin *p = NULL;
  calhost_runtime *rt = open_and_load(0, &p);
  for (int i = 0; rt && i < n; i++)
    select_once(rt, p);
  calhost_runtime_close(&rt);
  return NULL;
}

/* A thread opening a runtime and loading the plugin again and again (by
 * the workload: the discovery a server's first request makes). */
static void *loader(void *arg) {
  int n = *(const int *)arg;
  for (int i = 0; i < n; i++) {
    calhost_runtime_plugin *p = NULL;
    calhost_runtime *rt = open_and_load(i % 2 == 0, &p);
    if (rt)
      select_once(rt, p);
    calhost_runtime_close(&rt);
  }
  return NULL;
}

/* Compares fd 1 with what it was until the workers are done. */
static void *watcher(void *arg) {
  (void)arg;
  while (!atomic_load(&g_stop)) {
    struct stat st;
    if (fstat(1, &st) != 0 || st.st_dev != g_stdout.st_dev || st.st_ino != g_stdout.st_ino)
      atomic_fetch_add(&g_fd_changes, 1);
    sched_yield();
  }
  return NULL;
}

typedef struct crew {
  int dl, selectors, loaders;
  int selects, loads; /* per thread */
} crew;

/* Runs a crew of threads to the end; the counters say what happened. */
static void run_crew(const crew *c) {
  pthread_t t[32];
  size_t n = 0, workers_end;
  atomic_store(&g_stop, 0);
  atomic_store(&g_forks, 0);
  atomic_store(&g_failures, 0);
  atomic_store(&g_fd_changes, 0);
  atomic_store(&g_loads, 0);
  atomic_store(&g_selects, 0);
  atomic_store(&g_dl_cycles, 0);
  g_first_failure[0] = '\0';
  /* stderr to a file of its own for the crew, so that fd 1 pointed at
   * stderr is a change the watcher sees (under ctest both are one pipe) */
  char err_path[700];
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", g_dir);
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(saved_out >= 0 && saved_err >= 0 && fe >= 0);
  dup2(fe, 2);
  close(fe);
  assert_int_equal(fstat(1, &g_stdout), 0);
  for (int i = 0; i < c->selectors; i++)
    assert_int_equal(pthread_create(&t[n++], NULL, selector, (void *)&c->selects), 0);
  for (int i = 0; i < c->loaders; i++)
    assert_int_equal(pthread_create(&t[n++], NULL, loader, (void *)&c->loads), 0);
  workers_end = n;
  for (int i = 0; i < c->dl; i++)
    assert_int_equal(pthread_create(&t[n++], NULL, dl_looper, NULL), 0);
  assert_int_equal(pthread_create(&t[n++], NULL, watcher, NULL), 0);
  for (size_t i = 0; i < workers_end; i++)
    pthread_join(t[i], NULL);
  atomic_store(&g_stop, 1);
  for (size_t i = workers_end; i < n; i++)
    pthread_join(t[i], NULL);
  struct stat st;
  if (fstat(1, &st) != 0 || st.st_dev != g_stdout.st_dev || st.st_ino != g_stdout.st_ino)
    atomic_fetch_add(&g_fd_changes, 1);
  /* stdout and stderr as they were (whatever the crew left), then what the
   * crew said on stderr */
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  FILE *f = fopen(err_path, "r");
  char line[1024];
  while (f && fgets(line, sizeof line, f))
    fputs(line, stderr);
  if (f)
    fclose(f);
}

static void report(const char *name) {
  print_message("%s: %ld loads, %ld selections, %ld dlopen/dlclose cycles, %d forks, %d fd 1 "
                "changes, %d failures%s%s\n",
                name, atomic_load(&g_loads), atomic_load(&g_selects), atomic_load(&g_dl_cycles),
                atomic_load(&g_forks), atomic_load(&g_fd_changes), atomic_load(&g_failures),
                g_first_failure[0] ? "; first: " : "", g_first_failure);
}

/* Two threads, each with its own handle, making plugin calls at once: fd 1
 * is never rewired (it once was around every call, without a lock). */
static void two_handles_leave_stdout_alone(void **state) {
  (void)state;
  crew c = {.selectors = 2, .selects = 60 * g_rounds};
  run_crew(&c);
  report("two handles");
  assert_int_equal(atomic_load(&g_failures), 0);
  assert_int_equal(atomic_load(&g_selects), 2 * c.selects);
  assert_int_equal(atomic_load(&g_fd_changes), 0);
}

/* A busy process: libraries loaded and unloaded, selections, and loads of
 * the plugin, all at once: no fork, every load and selection succeeds. */
static void busy_process_loads_and_selects(void **state) {
  (void)state;
  crew c = {
      .dl = 2, .selectors = 2, .loaders = 2, .selects = 30 * g_rounds, .loads = 12 * g_rounds};
  run_crew(&c);
  report("busy process");
  assert_int_equal(atomic_load(&g_forks), 0);
  assert_int_equal(atomic_load(&g_failures), 0);
  assert_int_equal(atomic_load(&g_loads), c.selectors + c.loaders * c.loads);
  assert_int_equal(atomic_load(&g_fd_changes), 0);
}

/* In a directory, only the file named after the backend asked for is
 * loaded: lib/calhost/test-plugins/unloadable holds plugins that crash or
 * hang while loading, which, loaded here to learn their names, would end
 * this test; a backend not found says which file it would have loaded. */
static void loads_only_files_named_after_the_backend(void **state) {
  (void)state;
  char unloadable[1400], err[4096] = "";
  snprintf(unloadable, sizeof unloadable, "%s/lib/calhost/test-plugins/unloadable", build_dir());
  const char *dirs[1] = {unloadable};
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = g_cfg;
  o.plugin_dirs = dirs;
  o.plugin_dir_count = 1;
  calhost_runtime *rt = NULL;
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
  calhost_runtime_plugin *p = NULL;
  calhost_runtime_status st =
      calhost_runtime_load_plugin(rt, "test_good", NULL, &p, err, sizeof err);
  if (st != CALHOST_RUNTIME_OK)
    fail_msg("load_plugin test_good: %s", err);
  st = calhost_runtime_load_plugin(rt, "no_such_backend", NULL, &p, err, sizeof err);
  assert_int_equal(st, CALHOST_RUNTIME_NOT_FOUND);
  if (!strstr(err, "only no_such_backend.so is loaded"))
    fail_msg("the message does not say which file was looked for: %s", err);
  calhost_runtime_close(&rt);
}

/* Stores the portable override p=2 for workload sum with bin/calhost
 * (before any thread starts; portable, so that it is selected under
 * valgrind too, where hwloc describes the processor differently). */
static int setup(void **state) {
  (void)state;
  const char *r = getenv("CALHOST_TEST_THREAD_ROUNDS");
  if (r && atoi(r) > 0)
    g_rounds = atoi(r);
  setenv("CALHOST_PLUGIN_PATH", "", 1);
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-threads-XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  snprintf(g_cfg, sizeof g_cfg, "%s/c.ini", g_dir);
  snprintf(g_dl_library, sizeof g_dl_library,
           "%s/lib/calhost/test-plugins/checker/test_transpose.so", build_dir());
  assert_int_equal(access(g_dl_library, R_OK), 0);
  FILE *f = fopen(g_cfg, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s/store.txt\n"
          "[plugins]\npaths = %s/lib/calhost/test-plugins/test_good.so\nenabled = test_good\n"
          "[workload sum]\noperator = ReduceSum\nshape = 4096\n",
          g_dir, build_dir());
  fclose(f);
  harness_result run = {0};
  int code = harness_run(NULL, &run, "--config", g_cfg, "--quiet", "override", "set", "--workload",
                         "sum", "--portable", "--policy", "p=2", NULL);
  if (code != 0)
    fprintf(stderr, "calhost override set: exit %d:\n%s", code, run.err);
  harness_result_free(&run);
  assert_true(code == 0);
  /* from here on, every fork() of this process is counted */
  assert_int_equal(pthread_atfork(count_fork, NULL, NULL), 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", g_dir);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_handles_leave_stdout_alone),
      cmocka_unit_test(busy_process_loads_and_selects),
      cmocka_unit_test(loads_only_files_named_after_the_backend),
  };
  return cmocka_run_group_tests_name("runtime_threads", tests, setup, teardown);
}
