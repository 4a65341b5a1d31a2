/*
 * test_guard.c: loader_guard: every call the host makes into a plugin in its
 * own process (loader_plugin_create, _build_key, _validate, _destroy) runs
 * with stdout pointed at stderr, so a plugin that prints cannot corrupt the
 * host's output; and, through the calhost binary, `lookup --json` stays
 * clean JSON with such a plugin, and `--verbose` (or CALHOST_LOG_LEVEL)
 * shows a plugin's debug and info logs on stderr.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/wait.h>

#include "loader.h"
#include "loader_test_util.h"

/* The bytes of a file (malloc'd, NUL-terminated). */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  char *buf = calloc(1, 65536);
  assert_non_null(f);
  assert_non_null(buf);
  size_t n = fread(buf, 1, 65535, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static void in_process_calls_keep_stdout_clean(void **state) {
  char dir[256], out_path[512], err_path[512], path[4096];
  (void)state;
  assert_non_null(make_tmpdir(dir, sizeof dir));
  snprintf(out_path, sizeof out_path, "%s/stdout", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr", dir);
  loader_options o;
  loader_options_init(&o);
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
  char *got_out = slurp(out_path), *got_err = slurp(err_path);
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
  char calhost[4096], dir[256], cfg[512], cmd[16384], path[4096];
  snprintf(calhost, sizeof calhost, "%s/bin/calhost", build_dir());
  if (access(calhost, X_OK) != 0)
    fail_msg("%s is not built", calhost);
  assert_non_null(make_tmpdir(dir, sizeof dir));
  snprintf(cfg, sizeof cfg, "%s/c.ini", dir);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s/store.txt\n[plugins]\npaths = %s\nenabled = %s\n"
          "[workload sum]\noperator = ReduceSum\nshape = 4096\n",
          dir, test_plugin(path, sizeof path, plugin), plugin);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && env -u CALHOST_LOG_LEVEL CALHOST_PLUGIN_PATH= %s '%s' %s --config '%s' "
           "lookup --workload sum --json %s",
           dir, env, calhost, flags, cfg, with_stderr ? "2>&1" : "2>/dev/null");
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = '\0';
  int status = pclose(p);
  remove_tmpdir(dir);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(in_process_calls_keep_stdout_clean),
      cmocka_unit_test(lookup_json_is_clean_with_a_printing_plugin),
      cmocka_unit_test(verbose_shows_plugin_logs),
  };
  return cmocka_run_group_tests_name("loader_guard", tests, NULL, NULL);
}
