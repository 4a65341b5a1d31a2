/*
 * test_cli_hardening.c: the command line as an operator meets it (issue 9,
 * items 5, 6, 13, 14, 15 and 17), running bin/calhost as a child process:
 * control characters from the store, a plugin or a configuration never
 * reach the terminal raw; --json is valid UTF-8 whatever the bytes;
 * messages name "PATH:LINE" without a line 0 and say each thing once;
 * --version, help for every command, suggestions, global flags anywhere;
 * the documented exit codes; no cursor escapes for TERM=dumb or a file;
 * "not persisted" with persistence off; rejected candidates as warnings; an
 * unwritable store fails before the sweeps.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_harness.h"

/* Runs calhost on a pseudo-terminal with TERM=term; returns everything it
 * wrote there (stdout and stderr). */
static const char *run_pty(const char *term, const char *const *args) {
  static char buf[65536];
  harness_opts o = {.cwd = dir, .term = term, .pty = 1, .timeout_s = 20};
  harness_result h = {0};
  harness_run_program(calhost, &o, &h, args);
  cli_harness_copy(buf, sizeof buf, h.out, h.out_len);
  harness_result_free(&h);
  return buf;
}

/* A configuration whose plugin directory holds only test_NAME (a copy of
 * the test plugin), one ReduceSum workload (or op), quick rigor. */
/* config_for with the plugin taken from test-plugins/SUB (e.g. "checker/"). */
static const char *config_for_in(const char *sub, const char *name, const char *op,
                                 const char *extra) {
  char cmd[PATH_MAX * 3];
  snprintf(cmd, sizeof cmd,
           "rm -rf '%s/p_%s' && mkdir -p '%s/p_%s' && cp '%s/%stest_%s.so' '%s/p_%s/'", dir, name,
           dir, name, plugins, sub, name, dir, name);
  assert_int_equal(system(cmd), 0);
  static char ini[64];
  char text[PATH_MAX * 2];
  snprintf(text, sizeof text,
           "[plugins]\ndirectories = %s/p_%s\nenabled = test_%s\n[calibration]\nrigor = "
           "quick\nthreads = 1\n"
           "%s\n[workload w1]\noperator = %s\nshape = 4096\n",
           dir, name, name, extra ? extra : "", op ? op : "ReduceSum");
  snprintf(ini, sizeof ini, "%s.ini", name);
  write_file(ini, text);
  return ini;
}

static const char *config_for(const char *name, const char *op, const char *extra) {
  return config_for_in("", name, op, extra);
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* No ESC, BEL or other C0 control (but newline and tab) in s. */
static void assert_no_controls(const char *what, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
      fail_msg("%s: raw control byte 0x%02x at offset %zu in:\n%s", what, *p,
               (size_t)(p - (const unsigned char *)s), s);
}

/* Strict UTF-8 (no overlongs, surrogates or bytes past U+10FFFF). */
static int valid_utf8(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned c = *p, n, v;
    if (c < 0x80) {
      p++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf)
      n = 1, v = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
      n = 2, v = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
      n = 3, v = c & 0x07;
    else
      return 0;
    for (unsigned i = 1; i <= n; i++) {
      if ((p[i] & 0xc0) != 0x80)
        return 0;
      v = (v << 6) | (p[i] & 0x3f);
    }
    if ((n == 2 && v < 0x800) || (n == 3 && (v < 0x10000 || v > 0x10ffff)) ||
        (v >= 0xd800 && v <= 0xdfff))
      return 0;
    p += n + 1;
  }
  return 1;
}

static const char escape_policy[] = "p=1\033]0;retitled\007";

/* ---- 5: terminal escape injection -------------------------------------- */

static void store_text_never_reaches_the_terminal_raw(void **state) {
  (void)state;
  const char *s = path("esc.txt");
  run_result *r = run("--store", s, "override", "set", "--portable", "--backend", "test_good",
                      "--operator", "ReduceSum", "--implementation", "1", "--structure",
                      "operator=ReduceSum", "--policy", escape_policy, NULL);
  assert_int_equal(r->code, 0);
  /* list, and the key form of lookup */
  r = run("--store", s, "list", NULL);
  assert_int_equal(r->code, 0);
  assert_no_controls("list", r->out);
  r = run("--store", s, "lookup", "--backend", "test_good", "--operator", "ReduceSum",
          "--implementation", "1", "--structure", "operator=ReduceSum", NULL);
  assert_int_equal(r->code, 0);
  assert_no_controls("lookup", r->out);
  HAS(r->out, "retitled");
  /* lookup --explain: the plugin refuses the policy and explain shows it */
  const char *ini = config_for("good", NULL, NULL);
  r = run("--config", ini, "--store", s, "lookup", "--workload", "w1", "--explain", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "rejected [policy_rejected]");
  HAS(r->out, "\\x1b]0;retitled\\x07");
  assert_no_controls("lookup --explain", r->out);
  /* check echoes a malformed line */
  write_file("bad.txt", "onnx_light_calibration_profiles 1\nprofile \033]0;retitled\007\n");
  r = run("--store", path("bad.txt"), "check", NULL);
  assert_int_equal(r->code, 1);
  assert_no_controls("check", r->out);
  HAS(r->out, "bad.txt:2: ");
  /* error messages: an unknown command and a malformed store at open */
  r = run("\033]0;retitled\007", NULL);
  assert_int_equal(r->code, 2);
  assert_no_controls("unknown command", r->err);
  r = run("--store", path("bad.txt"), "list", NULL);
  assert_int_equal(r->code, 2);
  assert_no_controls("open error", r->err);
  /* the place once: "FILE:2: malformed: ...", not "... malformed: FILE: line 2: ..." */
  HAS(r->err, "bad.txt:2: malformed: ");
  HASNT(r->err, "line 2:");
}

static void plugin_text_never_reaches_the_terminal_raw(void **state) {
  (void)state;
  /* a plugin's create error and wrong-output message hold ESC ] ... BEL */
  const char *ini = config_for("create", NULL, NULL);
  run_result *r = run("--config", ini, "--store", path("c.txt"), "calibrate", NULL);
  assert_int_not_equal(r->code, 0);
  assert_no_controls("calibrate (create failed) stdout", r->out);
  assert_no_controls("calibrate (create failed) stderr", r->err);
  HAS(r->out, "\\x1b]0;retitled\\x07");
  ini = config_for("wrong_output", NULL, NULL);
  r = run("--config", ini, "--store", path("w.txt"), "calibrate", NULL);
  assert_int_equal(r->code, 0);
  assert_no_controls("calibrate (wrong output) stdout", r->out);
  assert_no_controls("calibrate (wrong output) stderr", r->err);
  r = run("--config", ini, "plugins", NULL);
  assert_int_equal(r->code, 0);
  assert_no_controls("plugins", r->out);
  /* plugin check prints the plugin's create() error */
  ini = config_for("create", NULL, NULL);
  r = run("--config", ini, "plugin", "check", path("p_create/test_create.so"), NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "\\x1b]0;retitled\\x07");
  assert_no_controls("plugin check", r->out);
}

/* ---- 6: --json is valid UTF-8 JSON ---------------------------------------- */

static void json_is_valid_utf8_whatever_the_bytes(void **state) {
  (void)state;
  const char *s = path("latin1.txt");
  run_result *r = run("--store", s, "override", "set", "--portable", "--backend", "b", "--operator",
                      "op", "--implementation", "1", "--structure", "k=caf\xe9", "--policy",
                      "caf\xe9 \xc3\xa9 \xed\xa0\x80 \xc2\x9b", NULL);
  assert_int_equal(r->code, 0);
  r = run("--store", s, "list", "--json", NULL);
  assert_int_equal(r->code, 0);
  assert_true(valid_utf8(r->out));
  /* the rule (README "Output"): each invalid byte as \u00XX, valid UTF-8
   * kept, C1 controls escaped */
  HAS(r->out, "\"policy\":\"caf\\u00e9 \xc3\xa9 \\u00ed\\u00a0\\u0080 \\u009b\"");
  HAS(r->out, "\"k\":\"caf\\u00e9\"");
  r = run("--store", s, "--json", "lookup", "--backend", "b", "--operator", "op",
          "--implementation", "1", "--structure", "k=caf\xe9", NULL);
  assert_int_equal(r->code, 0);
  assert_true(valid_utf8(r->out));
  HAS(r->out, "caf\\u00e9 ");
  /* the text form escapes the same bytes for the terminal */
  r = run("--store", s, "list", NULL);
  assert_true(valid_utf8(r->out));
  /* a configuration value */
  write_file("latin1.ini", "[store]\npath = caf\xe9.txt\n");
  r = run("--config", "latin1.ini", "config", "show", "--json", NULL);
  assert_int_equal(r->code, 0);
  assert_true(valid_utf8(r->out));
  HAS(r->out, "caf\\u00e9.txt");
}

/* ---- 13: messages --------------------------------------------------------- */

static void messages_name_the_place_once(void **state) {
  (void)state;
  /* a directory as the store: no line number glued to the path */
  run_result *r = run("--store", dir, "calibrate", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, dir);
  char glued[128];
  snprintf(glued, sizeof glued, "%s0", dir);
  HASNT(r->err, glued);
  /* a missing import file: no ":0:" */
  r = run("--store", path("s.txt"), "import", "missing.txt", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "missing.txt");
  HASNT(r->err, ":0:");
  /* check on a malformed default store: the diagnostic once */
  char cmd[PATH_MAX];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/calhost'", dir);
  assert_int_equal(system(cmd), 0);
  write_file("calhost/profiles.txt", "onnx_light_calibration_profiles 1\nbogus line\n");
  r = run("check", NULL);
  assert_int_equal(r->code, 1);
  assert_int_equal(count(r->out, "profiles.txt:2:") + count(r->err, "profiles.txt:2:"), 1);
  /* a malformed store at open says what to do */
  r = run("list", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "profiles.txt:2:");
  HAS(r->err, "repair or remove");
  unlink(path("calhost/profiles.txt"));
  /* a plugin's create failure is reported once */
  const char *ini = config_for("create", NULL, NULL);
  r = run("--config", ini, "--store", path("c2.txt"), "calibrate", NULL);
  assert_int_equal(count(r->out, "create failed") + count(r->err, "create failed"), 1);
  HASNT(r->out, "exited with status"); /* the child's exit after it reported */
}

/* ---- 14: the command line as people expect it ----------------------------- */

static void version_help_and_suggestions(void **state) {
  (void)state;
  run_result *r = run("--version", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "calhost ");
  HAS(r->out, "ABI");
  static const char *const names[] = {"calibrate", "lookup", "override", "invalidate",
                                      "check",     "list",   "export",   "import",
                                      "plugins",   "plugin", "config"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char want[64];
    snprintf(want, sizeof want, "usage: calhost [GLOBAL FLAGS] %s", names[i]);
    r = run("help", names[i], NULL);
    assert_int_equal(r->code, 0);
    HAS(r->out, want);
    r = run(names[i], "--help", NULL);
    assert_int_equal(r->code, 0);
    HAS(r->out, want);
  }
  r = run("calibrat", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "did you mean 'calibrate'?");
  r = run("list", "--bakend", "x", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "did you mean '--backend'?");
  r = run("help", "lokup", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "did you mean 'lookup'?");
  r = run("calibrate", "--rigour", "quick", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "did you mean '--rigor'?");
}

static void global_flags_anywhere(void **state) {
  (void)state;
  const char *s = path("g.txt");
  run_result *r = run("override", "set", "--backend", "b", "--operator", "o", "--implementation",
                      "1", "--model-digest", "m", "--processor", "p", "--threads", "1", "--policy",
                      "x", "--store", s, "--quiet", NULL);
  assert_int_equal(r->code, 0);
  assert_string_equal(r->out, "");
  r = run("list", "--store", s, "--json", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"policy\":\"x\"");
  r = run("--json", "--store", s, "check", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"profiles\":1");
  write_file("show.ini", "[calibration]\nrigor = measure\n");
  r = run("config", "show", "--config", "show.ini", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "rigor = measure");
  r = run("plugins", "--config", "show.ini", "-v", "--json", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "{\"plugins\":[");
}

/* ---- 15: exit codes --------------------------------------------------------- */

static void exit_codes_as_documented(void **state) {
  (void)state;
  run_result *r = run("config", "check", "missing.ini", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "missing.ini");
  /* every sweep unsupported: nothing calibrated */
  const char *ini = config_for("unsupported", NULL, NULL);
  r = run("--config", ini, "--store", path("u.txt"), "calibrate", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "nothing was calibrated");
  /* no workload for the chosen plugin */
  ini = config_for("good", "MatMul", NULL);
  r = run("--config", ini, "--store", path("m.txt"), "calibrate", "--plugin", "test_good", NULL);
  assert_int_equal(r->code, 1);
  r = run("--config", ini, "--store", path("m.txt"), "--json", "calibrate", "--plugin", "test_good",
          NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "\"exit_status\":1");
  /* the validator says no */
  ini = config_for("good", NULL, NULL);
  r = run("--config", ini, "--store", path("o.txt"), "override", "set", "--workload", "w1",
          "--policy", "bogus", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->err, "policy_rejected");
  /* issue 22 item 27: one layer says what refused it ("the plugin refused
   * the policy: the backend's validator rejected the policy: ...") */
  HAS(r->err, "calhost: override set: the backend's validator rejected the policy: not a test "
              "policy (policy_rejected)\n");
  HASNT(r->err, "refused the policy");
  r = run("--config", ini, "--store", path("o.txt"), "override", "set", "--workload", "w1",
          "--policy", "p=2", NULL);
  assert_int_equal(r->code, 0);
}

/* ---- 17: calibrate output ----------------------------------------------------- */

static void no_cursor_escapes_for_dumb_terminals_or_files(void **state) {
  (void)state;
  const char *ini = config_for("good", NULL, NULL);
  const char *args[] = {"--config", ini, "--store", "t.txt", "calibrate", "--force", NULL};
  const char *out = run_pty("xterm", args);
  HAS(out, "\033[K"); /* a real terminal gets the bar: the probe can fail */
  out = run_pty("dumb", args);
  HASNT(out, "\033[");
  HAS(out, "[1/1]"); /* plain progress lines instead */
  run_result *r = run("--config", ini, "--store", "t.txt", "calibrate", "--force", NULL);
  assert_int_equal(r->code, 0);
  HASNT(r->err, "\033[");
}

static void persistence_off_says_not_persisted(void **state) {
  (void)state;
  const char *ini = config_for("good", NULL, "[store]\npersistence_enabled = false\n");
  run_result *r = run("--config", ini, "calibrate", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "not persisted");
  HASNT(r->out, " stored");
  /* --json keeps the status word and says the file was not written */
  r = run("--config", ini, "calibrate", "--json", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"persisted\":false");
  HASNT(r->out, "\"persisted\":true");
  r = run("--config", config_for("good", NULL, NULL), "--store", path("p.txt"), "calibrate",
          "--json", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"persisted\":true");
}

static void rejected_candidates_are_warnings(void **state) {
  (void)state;
  const char *ini = config_for("wrong_output", NULL, NULL);
  run_result *r = run("--config", ini, "--store", path("wo.txt"), "calibrate", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "warnings:");
  HAS(r->out, "numbered candidate 1 p=2 rejected: wrong output"); /* item 28 */
}

/* Issue 22 item 18: a plugin reporting a device time of 0 fails its sweep
 * at once with what to fix (not "no valid candidate ... budget exhausted"
 * after the timeout). */
static void a_zero_device_time_is_refused_saying_what_to_fix(void **state) {
  (void)state;
  const char *ini = config_for_in("checker/", "zero_time", NULL, NULL);
  run_result *r = run("--config", ini, "--store", path("zt.txt"), "calibrate", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "run() reported a device time of 0 s for 1 iteration");
  HAS(r->out, "CL_QUEUE_PROFILING_ENABLE");
  HASNT(r->out, "budget exhausted");
}

/* Issue 22 item 20: a default assignment the plugin's own validity rule
 * refuses is a warning of calibrate, named once however many sweeps. */
static void an_invalid_default_is_warned_once(void **state) {
  (void)state;
  const char *ini = config_for_in("checker/", "bad_default", NULL,
                                  "[workload w2]\noperator = ReduceSum\nshape = 65536\n"
                                  "[workload w3]\noperator = ReduceSum\nshape = 70000\n");
  run_result *r = run("--config", ini, "--store", path("bd.txt"), "calibrate", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "test_bad_default: the default assignment of its described space is refused by its "
              "own assignment_valid (p=4 needs at most 4096 elements)");
  assert_int_equal(count(r->out, "refused by its own assignment_valid"), 1);
}

/* Issue 22 item 23: --rigor exhaustive with --budget runs the exhaustive
 * strategy (the first N in the plugin's order), and the text says which
 * strategy ran. */
static void exhaustive_with_a_budget_says_what_ran(void **state) {
  (void)state;
  const char *ini = config_for("good", NULL, NULL);
  run_result *r = run("--config", ini, "--store", path("ex.txt"), "calibrate", "--rigor",
                      "exhaustive", "--budget", "2", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "rigor exhaustive; search exhaustive;");
}

static void unwritable_store_fails_before_sweeping(void **state) {
  (void)state;
  const char *ini = config_for("good", NULL, NULL);
  write_file("plainfile", "x\n");
  /* a store below a regular file can never be written (even by root) */
  run_result *r = run("--config", ini, "--store", path("plainfile/s.txt"), "calibrate", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "not a directory");
  HASNT(r->err, "[1/1]"); /* no sweep ran */
  HASNT(r->out, "test_good");
}

static int setup(void **state) {
  (void)state;
  cli_harness_term = "xterm"; /* escapes are kept out even where TERM allows them */
  return cli_harness_setup("clih");
}

static int teardown(void **state) {
  (void)state;
  return cli_harness_teardown();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(store_text_never_reaches_the_terminal_raw),
      cmocka_unit_test(plugin_text_never_reaches_the_terminal_raw),
      cmocka_unit_test(json_is_valid_utf8_whatever_the_bytes),
      cmocka_unit_test(messages_name_the_place_once),
      cmocka_unit_test(version_help_and_suggestions),
      cmocka_unit_test(global_flags_anywhere),
      cmocka_unit_test(exit_codes_as_documented),
      cmocka_unit_test(no_cursor_escapes_for_dumb_terminals_or_files),
      cmocka_unit_test(persistence_off_says_not_persisted),
      cmocka_unit_test(rejected_candidates_are_warnings),
      cmocka_unit_test(a_zero_device_time_is_refused_saying_what_to_fix),
      cmocka_unit_test(an_invalid_default_is_warned_once),
      cmocka_unit_test(exhaustive_with_a_budget_says_what_ran),
      cmocka_unit_test(unwritable_store_fails_before_sweeping),
  };
  return cmocka_run_group_tests_name("cli_hardening", tests, setup, teardown);
}
