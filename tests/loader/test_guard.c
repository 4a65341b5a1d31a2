/*
 * test_guard.c: loader_guard: every call the host makes into a plugin in its
 * own process (loader_plugin_create, _build_key, _validate, _destroy) runs
 * with stdout pointed at stderr, so a plugin that prints cannot corrupt the
 * host's output; and, through the calhost binary, `lookup --json` stays
 * clean JSON with such a plugin, and `--verbose` (or CALHOST_LOG_LEVEL)
 * shows a plugin's debug and info logs on stderr. The guard is off unless
 * the program turns it on (a library never rewires its program's fds), and
 * nested and locked when on (two threads cannot leave stdout on stderr).
 * The exit guard: a plugin calling exit(0) in create, build_key,
 * validate_policy or while loading, in `override set --workload` or
 * `lookup --workload`, ends calhost with status 2 naming it, nothing
 * stored and no answer printed.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "loader/loader.h"
#include "harness.h"
#include "loader_test_util.h"

static void in_process_calls_keep_stdout_clean(void **state) {
  char dir[256], out_path[512], err_path[512], path[4096];
  (void)state;
  assert_non_null(make_tmpdir(dir, sizeof dir));
  snprintf(out_path, sizeof out_path, "%s/stdout", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr", dir);
  loader_options o;
  loader_options_init(&o);
  loader_stdout_guard_enable(1); /* as calhost's main does */
  loader_plugin *p = loader_open(&o, NULL, test_plugin(path, sizeof path, "test_stdout"));
  assert_non_null(p);
  assert_true(p->loaded);
  assert_int_equal(p->state, CALHOST_PLUGIN_LOADED);

  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(fo >= 0 && fe >= 0);
  dup2(fo, 1);
  dup2(fe, 2);
  calhost_plugin_instance *inst = NULL;
  calhost_status st = loader_plugin_create(p, NULL, 0, &inst);
  calhost_status vs = loader_plugin_validate(p, inst, "p=1", 3, NULL, 0);
  loader_plugin_destroy(p, inst);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  close(fo);
  close(fe);

  assert_int_equal(st, CALHOST_OK);
  assert_int_equal(vs, CALHOST_OK);
  char *got_out = harness_slurp(out_path, NULL), *got_err = harness_slurp(err_path, NULL);
  assert_non_null(got_out);
  assert_non_null(got_err);
  assert_string_equal(got_out, "");
  assert_non_null(strstr(got_err, "garbage from create"));
  free(got_out);
  free(got_err);
  loader_plugin_free(p);
  remove_tmpdir(dir);
}

/* Runs `calhost [flags] --config CFG lookup --workload sum --json` with the
 * plugin `plugin` in a private directory, env prepended; returns the exit
 * status and what went to stdout (stderr too when with_stderr). */
static int run_lookup(const char *env, const char *flags, const char *plugin, int with_stderr,
                      char *out, size_t cap) {
  char dir[256], cfg[512], cmd[16384], path[4096];
  if (access(harness_calhost(), X_OK) != 0)
    fail_msg("%s is not built", harness_calhost());
  assert_non_null(make_tmpdir(dir, sizeof dir));
  snprintf(cfg, sizeof cfg, "%s/c.ini", dir);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s/store.txt\n[plugins]\npaths = %s\nenabled = %s\n"
          "[workload sum]\noperator = ReduceSum\nshape = 4096\n",
          dir, test_plugin(path, sizeof path, plugin), plugin);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s --config '%s' lookup --workload sum --json", flags, cfg);
  const char *const env_list[] = {env, NULL};
  harness_opts o = {
      .cwd = dir, .plugin_path = "", .merge_output = with_stderr, .env = env[0] ? env_list : NULL};
  harness_result r = {0};
  int code = harness_run_sh(&o, &r, cmd);
  snprintf(out, cap, "%s", r.out);
  harness_result_free(&r);
  remove_tmpdir(dir);
  assert_true(code < 128); /* exited, not killed */
  return code;
}

static void lookup_json_is_clean_with_a_printing_plugin(void **state) {
  char out[65536];
  (void)state;
  int rc = run_lookup("", "", "test_stdout", 0, out, sizeof out);
  if (strstr(out, "garbage") || out[0] != '{')
    fail_msg("lookup --json printed (status %d):\n%s", rc, out);
}

static void verbose_shows_plugin_logs(void **state) {
  char out[65536];
  (void)state;
  run_lookup("", "", "test_good", 1, out, sizeof out);
  assert_null(strstr(out, "message from create"));
  run_lookup("", "--verbose", "test_good", 1, out, sizeof out);
  assert_non_null(strstr(out, "[test_good] debug: debug message from create"));
  assert_non_null(strstr(out, "[test_good] info: info message from create"));
  run_lookup("CALHOST_LOG_LEVEL=info", "", "test_good", 1, out, sizeof out);
  assert_non_null(strstr(out, "[test_good] info: info message from create"));
  assert_null(strstr(out, "debug message from create"));
}

/* ---- the stdout guard is the program's to turn on, nested and locked ---- */

static int same_file(int fd, const struct stat *want) {
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

/* Off (a library's default): a plugin call leaves fd 1 alone. */
static void guard_is_off_unless_turned_on(void **state) {
  struct stat out;
  (void)state;
  assert_int_equal(fstat(1, &out), 0);
  int t = loader_stdout_guard_begin();
  assert_int_equal(t, 0);
  assert_true(same_file(1, &out));
  loader_stdout_guard_end(t);
  assert_true(same_file(1, &out));
}

/* Points stderr at a file of its own (under ctest stdout and stderr are
 * one pipe, and the guard's redirection would not show); returns the saved
 * stderr for stderr_back. */
static int stderr_apart(void) {
  char path[] = "/tmp/calhost-guard-stderr-XXXXXX";
  fflush(stderr);
  int saved = dup(2), fd = mkstemp(path);
  assert_true(saved >= 0 && fd >= 0);
  unlink(path);
  dup2(fd, 2);
  close(fd);
  return saved;
}

static void stderr_back(int saved) {
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
}

/* Nested: the innermost end keeps the redirection, the outermost restores. */
static void guard_nests(void **state) {
  struct stat out, err;
  (void)state;
  int saved_err = stderr_apart();
  assert_int_equal(fstat(1, &out), 0);
  assert_int_equal(fstat(2, &err), 0);
  loader_stdout_guard_enable(1);
  int a = loader_stdout_guard_begin();
  int b = loader_stdout_guard_begin();
  assert_true(a && b);
  assert_true(same_file(1, &err));
  loader_stdout_guard_end(b);
  assert_true(same_file(1, &err));
  loader_stdout_guard_end(a);
  assert_true(same_file(1, &out));
  loader_stdout_guard_enable(0);
  stderr_back(saved_err);
}

/* Two threads entering and leaving the guard at once (the unlocked guard's
 * dup/dup2 pairs interleave and leave fd 1 on stderr for good). */
static void *guard_loop(void *arg) {
  for (int i = 0; i < 2000; i++) {
    int t = loader_stdout_guard_begin();
    if (i % 64 == 0)
      sched_yield();
    loader_stdout_guard_end(t);
  }
  (void)arg;
  return NULL;
}

static void guard_survives_two_threads(void **state) {
  struct stat out;
  (void)state;
  int saved_err = stderr_apart();
  assert_int_equal(fstat(1, &out), 0);
  int saved = dup(1);
  assert_true(saved >= 0);
  loader_stdout_guard_enable(1);
  for (int round = 0; round < 5; round++) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
      assert_int_equal(pthread_create(&t[i], NULL, guard_loop, NULL), 0);
    for (int i = 0; i < 2; i++)
      pthread_join(t[i], NULL);
    if (!same_file(1, &out)) {
      dup2(saved, 1); /* cmocka's report goes where it should */
      stderr_back(saved_err);
      fail_msg("round %d: stdout was left pointing elsewhere", round);
    }
  }
  close(saved);
  loader_stdout_guard_enable(0);
  stderr_back(saved_err);
}

/* ---- the exit guard: a plugin's exit() in a calhost command ---- */

/* Runs `calhost --config CFG ARGS` in dir (config c.ini there, naming the
 * test_exit_in plugin, whose CALHOST_TEST_EXIT_IN is exit_in, "" for
 * none); returns the exit status, stdout and stderr in out and err. */
static int run_exit_in(const char *dir, const char *exit_in, const char *args, char *out,
                       size_t out_cap, char *err, size_t err_cap) {
  char cmd[16384], exit_env[4200];
  snprintf(cmd, sizeof cmd, "--config c.ini %s", args);
  snprintf(exit_env, sizeof exit_env, "CALHOST_TEST_EXIT_IN=%s", exit_in);
  const char *const env[] = {exit_env, NULL};
  harness_opts o = {.cwd = dir, .plugin_path = "", .env = env};
  harness_result r = {0};
  int code = harness_run_sh(&o, &r, cmd);
  assert_true(code < 128); /* exited, not killed */
  snprintf(out, out_cap, "%s", r.out);
  snprintf(err, err_cap, "%s", r.err);
  harness_result_free(&r);
  return code;
}

/* The store file's bytes ("" when it does not exist). */
static void store_text(const char *dir, char *buf, size_t cap) {
  char p[600];
  snprintf(p, sizeof p, "%s/store.txt", dir);
  buf[0] = '\0';
  if (access(p, F_OK) != 0)
    return;
  char *t = harness_slurp(p, NULL);
  assert_non_null(t);
  snprintf(buf, cap, "%s", t);
  free(t);
}

static void a_plugin_exit_fails_the_command(void **state) {
  char dir[256], cfg[512], plugin[4096], out[65536], err[65536], store[65536];
  (void)state;
  snprintf(plugin, sizeof plugin, "%s/lib/calhost/test-plugins/exit/test_exit_in.so", build_dir());
  if (access(plugin, F_OK) != 0)
    fail_msg("%s is not built", plugin);
  assert_non_null(make_tmpdir(dir, sizeof dir));
  snprintf(cfg, sizeof cfg, "%s/c.ini", dir);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s/store.txt\n[plugins]\npaths = %s\nenabled = test_exit_in\n"
          "[workload sum]\noperator = ReduceSum\nshape = 4096\n",
          dir, plugin);
  fclose(f);

  /* override set: the plugin exits while validating the policy, or while
   * creating the instance that would: status 2 naming it, nothing stored */
  static const char *const set_entries[] = {"create", "validate_policy", "build_key"};
  for (size_t i = 0; i < sizeof set_entries / sizeof set_entries[0]; i++) {
    int rc = run_exit_in(dir, set_entries[i], "override set --workload sum --policy p=2", out,
                         sizeof out, err, sizeof err);
    char want[128];
    snprintf(want, sizeof want, "called exit(0) in %s()", set_entries[i]);
    if (rc != LOADER_EXIT_GUARD_STATUS || !strstr(err, "plugin 'test_exit_in'") ||
        !strstr(err, want))
      fail_msg("override set, exit in %s: status %d (want %d)\nstdout: %s\nstderr: %s",
               set_entries[i], rc, LOADER_EXIT_GUARD_STATUS, out, err);
    store_text(dir, store, sizeof store);
    if (strstr(store, "p=2"))
      fail_msg("override set, exit in %s: the policy was stored:\n%s", set_entries[i], store);
  }
  /* the same plugin not exiting: stored (the plugin itself works) */
  assert_int_equal(run_exit_in(dir, "", "override set --workload sum --policy p=2", out, sizeof out,
                               err, sizeof err),
                   0);
  store_text(dir, store, sizeof store);
  assert_non_null(strstr(store, "p=2"));

  /* lookup: the plugin exits while loading, creating, building the key or
   * validating the stored policy: status 2 naming it, no answer printed */
  static const char *const lookup_entries[] = {"negotiate", "create", "build_key",
                                               "validate_policy"};
  for (size_t i = 0; i < sizeof lookup_entries / sizeof lookup_entries[0]; i++) {
    int rc = run_exit_in(dir, lookup_entries[i], "lookup --workload sum --json", out, sizeof out,
                         err, sizeof err);
    char want[128];
    if (!strcmp(lookup_entries[i], "negotiate"))
      snprintf(want, sizeof want, "called exit(0) while loading");
    else
      snprintf(want, sizeof want, "called exit(0) in %s()", lookup_entries[i]);
    if (rc != LOADER_EXIT_GUARD_STATUS || out[0] || !strstr(err, "test_exit_in") ||
        !strstr(err, want))
      fail_msg("lookup, exit in %s: status %d (want %d)\nstdout: %s\nstderr: %s", lookup_entries[i],
               rc, LOADER_EXIT_GUARD_STATUS, out, err);
  }
  assert_int_equal(
      run_exit_in(dir, "", "lookup --workload sum --json", out, sizeof out, err, sizeof err), 0);
  assert_non_null(strstr(out, "p=2"));
  remove_tmpdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(guard_is_off_unless_turned_on),
      cmocka_unit_test(guard_nests),
      cmocka_unit_test(guard_survives_two_threads),
      cmocka_unit_test(a_plugin_exit_fails_the_command),
      cmocka_unit_test(in_process_calls_keep_stdout_clean),
      cmocka_unit_test(lookup_json_is_clean_with_a_printing_plugin),
      cmocka_unit_test(verbose_shows_plugin_logs),
  };
  return cmocka_run_group_tests_name("loader_guard", tests, NULL, NULL);
}
