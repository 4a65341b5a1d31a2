/*
 * test_cli_contracts.c: what the command line promises in its help and
 * README, run as the built program (bin/calhost) in a temporary folder:
 *   - a configuration that is a FIFO is refused at once by every command
 *     (exit 2, "FILE: is not a regular file (a FIFO); refusing to read
 *     it"), never waited on;
 *   - exit statuses as the help says: config show of a missing file and
 *     config check of a directory exit 2; plan names itself and exits as
 *     calibrate does when a requested plugin did not load;
 *   - plugin check honours --json (one object, base/json.h's writer) and
 *     --quiet (the failures only);
 *   - with [store] persistence_enabled = false, override set/clear, import
 *     and invalidate say that nothing was kept (a note; "persisted": false);
 *   - a usage error's synopsis keeps its line breaks (no literal "\n");
 *   - export to a file in a missing directory names the file and the
 *     directory.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_harness.h"

/* A configuration whose plugin directory holds only test_good (a copy),
 * one ReduceSum workload, quick rigor; extra is appended. */
static const char *good_config(const char *name, const char *extra) {
  char cmd[PATH_MAX * 3];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/p_good' && cp '%s/test_good.so' '%s/p_good/'", dir,
           plugins, dir);
  assert_int_equal(system(cmd), 0);
  char text[PATH_MAX * 2];
  snprintf(text, sizeof text,
           "[plugins]\ndirectories = %s/p_good\n[calibration]\nrigor = quick\nthreads = 1\n"
           "[workload w1]\noperator = ReduceSum\nshape = 4096\n%s",
           dir, extra ? extra : "");
  write_file(name, text);
  return name;
}

/* ---- 1: a FIFO as the configuration ------------------------------------- */

static void a_fifo_configuration_is_refused_by_every_command(void **state) {
  (void)state;
  assert_int_equal(mkfifo(path("fifo.ini"), 0600), 0);
  write_file("empty.txt", "onnx_light_calibration_profiles 1\n");
  static const char *const commands[][8] = {
      {"list", NULL},
      {"check", NULL},
      {"plugins", NULL},
      {"devices", NULL},
      {"calibrate", NULL},
      {"plan", NULL},
      {"verify", NULL},
      {"lookup", "--workload", "w1", NULL},
      {"override", "set", "--workload", "w1", "--policy", "p=1", NULL},
      {"invalidate", "--backend", "b", NULL},
      {"import", "empty.txt", NULL},
      {"export", "out.txt", NULL},
      {"config", "show", NULL},
      {"config", "check", NULL},
  };
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    const char *const *c = commands[i];
    run_result *r = run("--config", "fifo.ini", "--store", "s.txt", c[0], c[1], c[2], c[3], c[4],
                        c[5], c[6], NULL);
    if (r->code != 2)
      fail_msg("calhost --config fifo.ini %s %s: exit %d (want 2)\n%s", c[0], c[1] ? c[1] : "",
               r->code, r->err);
    HAS(r->err, "fifo.ini: is not a regular file (a FIFO); refusing to read it");
  }
  /* config check FILE: "unreadable", exit 2 as its help says */
  run_result *r = run("config", "check", "fifo.ini", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err,
      "calhost: config check: fifo.ini: is not a regular file (a FIFO); refusing to read it");
  r = run("help", "config", NULL);
  HAS(r->out, "2 when the file\n  is missing or unreadable");
  /* /dev/null stays the empty configuration */
  r = run("--config", "/dev/null", "--store", "s.txt", "list", NULL);
  assert_int_equal(r->code, 0);
}

/* ---- 2: exit statuses as the help says ---------------------------------- */

static void config_exit_statuses_match_the_help(void **state) {
  (void)state;
  /* a missing --config: 2 for config show, as for every other command */
  run_result *r = run("--config", "/nonexistent/calhost.ini", "config", "show", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "/nonexistent/calhost.ini: cannot open: No such file or directory");
  r = run("--config", "/nonexistent/calhost.ini", "list", NULL);
  assert_int_equal(r->code, 2);
  /* a directory: unreadable, not invalid */
  assert_int_equal(mkdir(path("adir"), 0700), 0);
  r = run("config", "check", "adir", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "adir: is not a regular file (a directory); refusing to read it");
  r = run("--config", "adir", "config", "show", NULL);
  assert_int_equal(r->code, 2);
  /* an invalid file stays config check's "no" (1), for show too */
  write_file("bad.ini", "[calibration]\nrigour = quick\n");
  r = run("config", "check", "bad.ini", NULL);
  assert_int_equal(r->code, 1);
  r = run("--config", "bad.ini", "config", "show", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->err, "bad.ini:2: unknown key 'rigour'");
  r = run("help", "config", NULL);
  HAS(r->out, "1 when the configuration is\n  invalid, 2 when the file is missing or unreadable");
}

static void plan_names_itself_and_exits_as_calibrate(void **state) {
  (void)state;
  const char *ini = good_config("plan.ini", NULL);
  /* the only plugin asked for did not load: calibrate's 2 ("no plugin") */
  run_result *r =
      run("--config", ini, "--store", "plan-s.txt", "calibrate", "--plugin", "nonexist", NULL);
  assert_int_equal(r->code, 2);
  r = run("--config", ini, "plan", "--plugin", "nonexist", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "calhost: plan: nonexist: not found");
  HAS(r->err, "calhost: plan: no plugin to calibrate");
  HASNT(r->err, "calhost: calibrate:");
  /* one of two did not load: 1, the other's items listed */
  r = run("--config", ini, "plan", "--plugin", "nonexist", "--plugin", "test_good", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "test_good");
  HAS(r->err, "calhost: plan: nonexist: not found");
  HASNT(r->err, "calhost: calibrate:");
  /* and the help says both */
  r = run("help", "plan", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "1 when a plugin asked for did not load but another did");
  HAS(r->out, "2 on errors, and when no plugin asked for loaded");
  HAS(r->out, "or when the run has no item at all");
  /* a usage error of plan is plan's too */
  r = run("--config", ini, "plan", "--threads", "0", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "calhost: plan: bad --threads");
}

/* ---- 3: plugin check --json and --quiet --------------------------------- */

static json_t *parse(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  if (!j)
    fail_msg("not JSON (%s at line %d):\n%s", e.text, e.line, text);
  return j;
}

static const json_t *check_named(const json_t *checks, const char *name) {
  size_t i;
  json_t *c;
  json_array_foreach(checks, i, c) {
    if (!strcmp(json_string_value(json_object_get(c, "name")), name))
      return c;
  }
  fail_msg("no check '%s'", name);
  return NULL;
}

static void plugin_check_honours_json_and_quiet(void **state) {
  (void)state;
  char good[PATH_MAX + 32], noisy[PATH_MAX + 32];
  snprintf(good, sizeof good, "%s/test_good.so", plugins);
  snprintf(noisy, sizeof noisy, "%s/checker/test_stderr.so", plugins);
  /* --json: one object, every check with its status */
  run_result *r = run("--json", "plugin", "check", good, NULL);
  assert_int_equal(r->code, 0);
  json_t *j = parse(r->out);
  HAS(json_string_value(json_object_get(j, "plugin")), "test_good.so");
  assert_string_equal(json_string_value(json_object_get(j, "backend")), "test_good");
  assert_int_equal(json_integer_value(json_object_get(j, "failed")), 0);
  const json_t *checks = json_object_get(j, "checks");
  assert_true(json_is_array(checks));
  assert_int_equal(json_integer_value(json_object_get(j, "passed")), json_array_size(checks));
  assert_true(json_array_size(checks) >= 16);
  const json_t *c = check_named(checks, "tiny_sweep");
  assert_string_equal(json_string_value(json_object_get(c, "status")), "pass");
  assert_true(json_is_string(json_object_get(c, "message")));
  assert_true(json_is_array(json_object_get(c, "logs")));
  json_decref(j);
  /* -v: the plugin's log messages, with their level, in the check's logs */
  r = run("--json", "-v", "plugin", "check", good, NULL);
  assert_int_equal(r->code, 0);
  j = parse(r->out);
  const json_t *logs =
      json_object_get(check_named(json_object_get(j, "checks"), "key_complete"), "logs");
  assert_true(json_array_size(logs) >= 2);
  assert_string_equal(json_string_value(json_object_get(json_array_get(logs, 0), "level")),
                      "debug");
  assert_string_equal(json_string_value(json_object_get(json_array_get(logs, 0), "message")),
                      "debug message from create");
  json_decref(j);
  /* a failing plugin: status fail with the reason, exit 1 as before */
  r = run("plugin", "check", noisy, "--json", NULL);
  assert_int_equal(r->code, 1);
  j = parse(r->out);
  assert_int_equal(json_integer_value(json_object_get(j, "failed")), 1);
  c = check_named(json_object_get(j, "checks"), "quiet_stderr");
  assert_string_equal(json_string_value(json_object_get(c, "status")), "fail");
  HAS(json_string_value(json_object_get(c, "message")), "bytes to stderr");
  json_decref(j);
  /* a file that is not a plugin: no backend, still one object */
  write_file("notaplugin.so", "not an ELF file\n");
  r = run("--json", "plugin", "check", "notaplugin.so", NULL);
  assert_int_equal(r->code, 1);
  j = parse(r->out);
  assert_true(json_is_null(json_object_get(j, "backend")));
  c = check_named(json_object_get(j, "checks"), "negotiation");
  assert_string_equal(json_string_value(json_object_get(c, "status")), "fail");
  json_decref(j);
  /* --quiet: only the failures */
  r = run("--quiet", "plugin", "check", good, NULL);
  assert_int_equal(r->code, 0);
  assert_string_equal(r->out, "");
  r = run("plugin", "check", noisy, "-q", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "FAIL quiet_stderr: ");
  HASNT(r->out, "PASS");
  HASNT(r->out, "checking ");
  HASNT(r->out, "checks passed");
  /* without either: the text report as before */
  r = run("plugin", "check", noisy, NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "checking ");
  HAS(r->out, "PASS tiny_sweep");
  HAS(r->out, "16 of 17 checks passed");
}

/* ---- 4: persistence disabled says so ------------------------------------ */

#define KEY                                                                                        \
  "--backend", "b", "--operator", "o", "--implementation", "1", "--model-digest", "d",             \
      "--processor", "p", "--threads", "1"

static const char note[] = "calhost: note: persistence is disabled ([store] persistence_enabled "
                           "= false in np.ini): the change is not kept\n";

static void persistence_off_says_the_change_is_not_kept(void **state) {
  (void)state;
  write_file("np.ini", "[store]\npersistence_enabled = false\npath = np-store.txt\n");
  write_file("in.txt", "onnx_light_calibration_profiles 1\n");
  /* text: the line as before on stdout, the note on stderr */
  run_result *r = run("--config", "np.ini", "override", "set", KEY, "--policy", "x", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "override installed");
  HAS(r->err, note);
  r = run("--config", "np.ini", "invalidate", "--backend", "b", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->err, note);
  r = run("--config", "np.ini", "import", "in.txt", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "imported 0 profiles from 1 file");
  HAS(r->err, note);
  /* override clear finds nothing (nothing was read): the note says why */
  r = run("--config", "np.ini", "override", "clear", KEY, NULL);
  assert_int_equal(r->code, 1);
  HAS(r->err, note);
  /* --json: "persisted": false, no note */
  r = run("--config", "np.ini", "--json", "override", "set", KEY, "--policy", "x", NULL);
  assert_int_equal(r->code, 0);
  assert_string_equal(r->out, "{\"status\":\"ok\",\"persisted\":false}\n");
  HASNT(r->err, note); /* only the warning that backend b is not here to validate */
  HAS(r->err, "calhost: warning: policy not validated: plugin 'b' not found");
  r = run("--config", "np.ini", "--json", "invalidate", "--backend", "b", NULL);
  assert_string_equal(r->out, "{\"status\":\"ok\",\"removed\":0,\"persisted\":false}\n");
  r = run("--config", "np.ini", "--json", "import", "in.txt", NULL);
  assert_string_equal(
      r->out, "{\"status\":\"ok\",\"profiles\":0,\"kept\":0,\"files\":1,\"persisted\":false}\n");
  /* --quiet: nothing */
  r = run("--config", "np.ini", "-q", "invalidate", "--backend", "b", NULL);
  assert_int_equal(r->code, 0);
  assert_string_equal(r->err, "");
  /* the file was never written */
  assert_int_equal(access(path("np-store.txt"), F_OK), -1);
  /* persistence on: no note, "persisted": true */
  write_file("p.ini", "[store]\npath = p-store.txt\n");
  r = run("--config", "p.ini", "override", "set", KEY, "--policy", "x", NULL);
  assert_int_equal(r->code, 0);
  HASNT(r->err, note);
  r = run("--config", "p.ini", "-q", "override", "set", KEY, "--policy", "x", NULL);
  assert_int_equal(r->code, 0);
  assert_string_equal(r->err, ""); /* --quiet: not the warning either */
  r = run("--config", "p.ini", "--json", "override", "clear", KEY, NULL);
  assert_int_equal(r->code, 0);
  assert_string_equal(r->out, "{\"status\":\"ok\",\"persisted\":true}\n");
  /* export writes its file whatever persistence says: no note */
  r = run("--config", "np.ini", "export", "np-out.txt", NULL);
  assert_int_equal(r->code, 0);
  assert_string_equal(r->err, "");
}

/* ---- 5: usage errors keep the synopsis' line breaks --------------------- */

static void usage_errors_print_the_synopsis_lines(void **state) {
  (void)state;
  /* a flag that takes one value, given twice with two: an error, not the
   * last one silently winning; the same value twice, or a list flag, is fine */
  run_result *r = run("plan", "--shard", "0/2", "--shard", "1/2", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "calhost: plan: --shard given twice ('0/2', then '1/2'): give it once\n");
  r = run("--store", "a.txt", "--store", "b.txt", "list", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--store given twice");
  r = run("--store", "same.txt", "--store", "same.txt", "list", NULL);
  assert_int_equal(r->code, 0);
  r = run("list", "extra", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "calhost: list: unexpected argument 'extra'\n");
  HAS(r->err, "usage: calhost list [--backend B] [--by-processor]\n");
  HAS(r->err, "Try 'calhost help list'.\n");
  r = run("calibrate", "extra", NULL);
  assert_int_equal(r->code, 2);
  HASNT(r->err, "\\n");
  HAS(r->err, "calhost: calibrate: unexpected argument 'extra'\n");
  HAS(r->err, "usage: calhost calibrate [--plugin B]...");
  HAS(r->err, "\n       [--strategy NAME]");
  r = run("export", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "calhost: export: missing argument\nusage: calhost export OUT\n");
  /* an argument's control characters are still escaped */
  r = run("list", "a\nb", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "unexpected argument 'a\\nb'");
}

/* ---- 6: export into a missing directory --------------------------------- */

static void export_names_the_missing_directory(void **state) {
  (void)state;
  run_result *r = run("--store", "e.txt", "export", "nodir/a.txt", NULL);
  assert_int_equal(r->code, 2);
  assert_string_equal(
      r->err, "calhost: export: cannot write nodir/a.txt: its directory nodir does not exist\n");
  write_file("plain", "x\n");
  r = run("--store", "e.txt", "export", "plain/a.txt", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "calhost: export: cannot write plain/a.txt: plain is not a directory");
  /* an existing directory: exported as before */
  r = run("--store", "e.txt", "export", "a.txt", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "exported 0 profiles to a.txt");
}

static int setup(void **state) {
  (void)state;
  return cli_harness_setup("clic");
}

static int teardown(void **state) {
  (void)state;
  return cli_harness_teardown();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_fifo_configuration_is_refused_by_every_command),
      cmocka_unit_test(config_exit_statuses_match_the_help),
      cmocka_unit_test(plan_names_itself_and_exits_as_calibrate),
      cmocka_unit_test(plugin_check_honours_json_and_quiet),
      cmocka_unit_test(persistence_off_says_the_change_is_not_kept),
      cmocka_unit_test(usage_errors_print_the_synopsis_lines),
      cmocka_unit_test(export_names_the_missing_directory),
  };
  return cmocka_run_group_tests_name("cli_contracts", tests, setup, teardown);
}
