/*
 * test_config_cli.c: `calhost config check` and `calhost config show`, run
 * as the built program ($CALHOST_BUILD_DIR/bin/calhost): exit statuses,
 * "ok: FILE", errors with FILE:LINE, and the origins `show` prints (text
 * and --json).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[PATH_MAX];
static char calhost[PATH_MAX];
static char output[65536];

static int setup(void **state) {
  const char *build = getenv("CALHOST_BUILD_DIR");
  (void)state;
  if (!build)
    return -1;
  snprintf(calhost, sizeof calhost, "%s/bin/calhost", build);
  snprintf(tmpdir, sizeof tmpdir, "/tmp/calhost-config-cli-XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
  char cmd[PATH_MAX + 16];
  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text) {
  static char path[PATH_MAX];
  FILE *f;
  if (snprintf(path, sizeof path, "%s/%s", tmpdir, name) >= (int)sizeof path)
    fail_msg("path too long");
  f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* Runs calhost with args (a shell fragment) in tmpdir, stdout and stderr
 * into output; returns the exit status. */
static int run(const char *args) {
  char cmd[PATH_MAX * 5];
  FILE *p;
  size_t n;
  int st;
  if (strlen(args) > PATH_MAX)
    fail_msg("arguments too long");
  snprintf(cmd, sizeof cmd, "cd '%s' && HOME='%s' XDG_CONFIG_HOME='%s/xdg' '%s' %s 2>&1", tmpdir,
           tmpdir, tmpdir, calhost, args);
  p = popen(cmd, "r");
  assert_non_null(p);
  n = fread(output, 1, sizeof output - 1, p);
  output[n] = '\0';
  st = pclose(p);
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st);
}

static void check_accepts_a_good_file(void **state) {
  char want[PATH_MAX + 8];
  (void)state;
  const char *path = write_file("good.ini", "[calibration]\nrigor = quick\n");
  snprintf(want, sizeof want, "ok: %s\n", path);
  assert_int_equal(run("config check good.ini"), 0);
  assert_string_equal(output, "ok: good.ini\n");
  {
    char args[PATH_MAX + 32];
    snprintf(args, sizeof args, "--config '%s' config check", path);
    assert_int_equal(run(args), 0);
    assert_string_equal(output, want);
  }
}

static void check_refuses_a_bad_file_with_its_line(void **state) {
  (void)state;
  write_file("bad.ini", "[calibration]\nrigor = quick\n\nrigour = measure\n");
  assert_int_equal(run("config check bad.ini"), 1);
  assert_non_null(strstr(output, "bad.ini:4: unknown key 'rigour' in [calibration]"));
  assert_int_equal(run("config check --json bad.ini"), 1);
  assert_non_null(strstr(output, "\"valid\": false"));
  assert_int_equal(run("config check missing.ini"), 1);
  assert_non_null(strstr(output, "missing.ini"));
}

static void check_usage_errors(void **state) {
  (void)state;
  write_file("a.ini", "[store]\n");
  assert_int_equal(run("config check a.ini a.ini"), 2);
  assert_int_equal(run("config"), 2);
  assert_int_equal(run("config frobnicate"), 2);
  assert_int_equal(run("config show extra"), 2);
}

static void show_prints_every_key_with_its_origin(void **state) {
  (void)state;
  write_file("show.ini", "[calibration]\n\nrigor = quick\n[workload w]\noperator = MatMul\n"
                         "shape = 8,8,8\n");
  assert_int_equal(run("--config show.ini config show"), 0);
  assert_non_null(strstr(output, "[calibration]"));
  assert_non_null(strstr(output, "rigor = quick"));
  assert_non_null(strstr(output, "; show.ini:3"));
  assert_non_null(strstr(output, "time_budget = 60"));
  assert_non_null(strstr(output, "; default"));
  assert_non_null(strstr(output, "[workload w]"));
  assert_non_null(strstr(output, "model_digest = sha256:"));
  assert_non_null(strstr(output, "; computed"));

  assert_int_equal(run("--config show.ini config show --json"), 0);
  assert_non_null(strstr(output, "{\"file\": \"show.ini\", \"keys\": ["));
  assert_non_null(strstr(output, "{\"section\": \"calibration\", \"key\": \"rigor\", \"value\": "
                                 "\"quick\", \"origin\": \"show.ini:3\"}"));
  assert_non_null(strstr(output, "\"key\": \"plugin_timeout\", \"value\": \"120\", \"origin\": "
                                 "\"default\""));
  assert_int_equal(run("--json --config show.ini config show"), 0);
  assert_non_null(strstr(output, "\"origin\": \"show.ini:3\""));
}

static void show_uses_the_default_search(void **state) {
  (void)state;
  write_file("calhost.ini", "[lookup]\nforce_portable = yes\n");
  assert_int_equal(run("config show"), 0);
  assert_non_null(strstr(output, "from calhost.ini"));
  assert_non_null(strstr(output, "force_portable = true"));
  assert_int_equal(run("config check"), 0);
  assert_string_equal(output, "ok: calhost.ini\n");
  unlink(write_file("calhost.ini", ""));
}

static void shipped_configs_pass_check(void **state) {
  const char *src = getenv("CALHOST_SOURCE_DIR");
  char args[PATH_MAX * 2 + 32];
  (void)state;
  if (!src)
    skip();
  snprintf(args, sizeof args, "config check '%s/config/calhost.ini'", src);
  assert_int_equal(run(args), 0);
  snprintf(args, sizeof args, "config check '%s/config/deploy-portable.ini'", src);
  assert_int_equal(run(args), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(check_accepts_a_good_file),
      cmocka_unit_test(check_refuses_a_bad_file_with_its_line),
      cmocka_unit_test(check_usage_errors),
      cmocka_unit_test(show_prints_every_key_with_its_origin),
      cmocka_unit_test(show_uses_the_default_search),
      cmocka_unit_test(shipped_configs_pass_check),
  };
  return cmocka_run_group_tests_name("config_cli", tests, setup, teardown);
}
