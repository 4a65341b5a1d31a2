/*
 * test_cli_store.c: `calhost check|list|export|import|lookup|override|
 * invalidate` run as a child process over temporary stores: output, JSON
 * shape and exit codes, usage errors naming the flag; the key form of
 * lookup with a configuration ([lookup] force_portable) and the validator of
 * the backend's plugin (the example plugin of the build tree).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_harness.h"

static char vectors[PATH_MAX];
static char store[PATH_MAX];

static const char *vec(const char *name) {
  static char p[4][PATH_MAX + 64];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", vectors, name);
  return p[k];
}

static int setup(void **state) {
  (void)state;
  const char *src = getenv("CALHOST_SOURCE_DIR");
  if (!src || cli_harness_setup("cli") != 0)
    return -1;
  snprintf(vectors, sizeof vectors, "%s/tests/store/vectors/store-v1", src);
  snprintf(store, sizeof store, "%s/store/profiles.txt", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return cli_harness_teardown();
}

static int reset(void **state) {
  (void)state;
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s/store'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void check_reports_problems_with_their_lines(void **state) {
  (void)state;
  run_result *r = run("--store", vec("ok_mixed_sources.txt"), "check", NULL);
  assert_int_equal(r->code, 0);
  assert_true(!strncmp(r->out, "ok\n", 3));
  r = run("--store", vec("bad_trailing_garbage.txt"), "check", NULL);
  assert_int_equal(r->code, 1);
  assert_true(!strncmp(r->out, "malformed\n", 10));
  HAS(r->out, "bad_trailing_garbage.txt:3:");
  r = run("--store", vec("bad_future_version.txt"), "check", NULL);
  assert_int_equal(r->code, 1);
  assert_true(!strncmp(r->out, "unsupported_version\n", 20));
  HAS(r->out, ":1:");
  r = run("--store", store, "check", NULL);
  assert_int_equal(r->code, 1);
  assert_true(!strncmp(r->out, "not_found\n", 10));
  r = run("--store", dir, "check", NULL);
  assert_int_equal(r->code, 1);
  assert_true(!strncmp(r->out, "unreadable\n", 11));
  /* --json after the command */
  r = run("--store", vec("bad_zero_threads.txt"), "check", "--json", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "\"status\":\"malformed\"");
  HAS(r->out, "\"line\":8");
}

static void import_list_and_export_round_trip(void **state) {
  (void)state;
  run_result *r =
      run("--store", store, "import", vec("ok_mixed_sources.txt"), vec("ok_escapes.txt"), NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "imported 5 profiles");
  /* a malformed input is refused whole, with its diagnostics; nothing changes */
  r = run("--store", store, "import", vec("ok_seed_example.txt"), vec("bad_nan_measurement.txt"),
          NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "bad_nan_measurement.txt:9:");
  r = run("--store", store, "list", "--json", NULL);
  assert_int_equal(r->code, 0);
  assert_int_equal(r->out[0], '[');
  HAS(r->out, "\"kind\":\"portable\",\"source\":\"override\"");
  HAS(r->out, "\"structure\":{\"dtype\":\"float16\",\"shape\":\"m,n,4096\"}");
  HAS(r->out, "\"measurements\":[{\"name\":\"median_latency\",\"value\":2.5,\"unit\":\"us\"}]");
  HAS(r->out, "\"processor\":\"cpu \\\"quoted\\\" name\"");
  HAS(r->out, "\"policy\":\"say \\\"hi\\\" C:\\\\path\\\\x\"");
  HAS(r->out, "\"thread_count\":8");
  int objects = 0;
  for (const char *p = r->out; (p = strstr(p, "{\"kind\"")); p++)
    objects++;
  assert_int_equal(objects, 5);
  r = run("--store", store, "--json", "list", "--backend", "nobody", NULL);
  assert_int_equal(r->code, 0);
  assert_string_equal(r->out, "[]\n");
  r = run("--store", store, "list", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "portable override backend=\"example_gpu\"");
  /* export writes the canonical form, in file order */
  char out[PATH_MAX + 16];
  snprintf(out, sizeof out, "%s/exported.txt", dir);
  r = run("--store", vec("ok_many_measurements.txt"), "export", out, NULL);
  assert_int_equal(r->code, 0);
  char canon[PATH_MAX + 64];
  snprintf(canon, sizeof canon, "%s/canonical/ok_many_measurements.txt", vectors);
  char cmd[3 * PATH_MAX];
  snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", out, canon);
  assert_int_equal(system(cmd), 0);
  r = run("--store", store, "export", NULL);
  assert_int_equal(r->code, 2);
}

static void lookup_and_override_follow_the_precedence(void **state) {
  (void)state;
  run_result *r = run("--store", store, "import", vec("ok_mixed_sources.txt"), NULL);
  assert_int_equal(r->code, 0);
#define KEY                                                                                        \
  "--backend", "example_gpu", "--operator", "MatMul", "--implementation", "3", "--model-digest",   \
      "sha256:ab12", "--processor", "x86_64:l2=1048576", "--threads", "8"
  r = run("--store", store, "lookup", KEY, "--structure", "dtype=float16", "--structure",
          "shape=m,n,4096", "--json", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "{\"status\":\"ok\"");
  HAS(r->out, "\"profile\":{\"kind\":\"exact\",\"source\":\"override\"");
  HAS(r->out, "\"rejections\":[");
  /* no plugin serves example_gpu: the answer stands, unvalidated, and says so */
  HAS(r->out, "\"diagnostics\":[{\"status\":\"not_validated\",\"backend\":\"example_gpu\","
              "\"message\":\"policy not validated: plugin 'example_gpu' not found");
  HAS(r->err, "warning: policy not validated: plugin 'example_gpu' not found");
  /* force_portable: the portable override wins, exact ones are rejected */
  r = run("--store", store, "lookup", KEY, "--structure", "shape=m,n,4096", "--structure",
          "dtype=float16", "--force-portable", "--json", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"profile\":{\"kind\":\"portable\",\"source\":\"override\"");
  HAS(r->out, "\"reason\":\"force_portable\"");
  /* outdated implementation: nothing selected, exit 1, rejection listed */
  r = run("--store", store, "lookup", "--backend", "example_gpu", "--operator", "MatMul",
          "--implementation", "4", "--model-digest", "sha256:ab12", "--processor",
          "x86_64:l2=1048576", "--threads", "8", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "no profile selected");
  HAS(r->out, "outdated_implementation");
  r = run("--store", store, "--json", "lookup", "--backend", "example_gpu", "--operator", "MatMul",
          "--implementation", "4", "--threads=8", "--model-digest=m", "--processor=p", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "\"status\":\"not_found\",\"level\":\"none\",\"profile\":null");
  /* override set / clear on an exact key, then lookups see it */
  r = run("--store", store, "override", "set", "--backend", "b", "--operator", "Conv",
          "--implementation", "1", "--model-digest", "m", "--processor", "p", "--threads", "2",
          "--policy", "user \"pick\"", NULL);
  assert_int_equal(r->code, 0);
  r = run("--store", store, "lookup", "--backend", "b", "--operator", "Conv", "--implementation",
          "1", "--model-digest", "m", "--processor", "p", "--threads", "2", "--json", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"policy\":\"user \\\"pick\\\"\"");
  HAS(r->out, "\"level\":\"exact_override\"");
  r = run("--store", store, "override", "clear", "--backend", "b", "--operator", "Conv",
          "--implementation", "1", "--model-digest", "m", "--processor", "p", "--threads", "2",
          NULL);
  assert_int_equal(r->code, 0);
  r = run("--store", store, "override", "clear", "--backend", "b", "--operator", "Conv",
          "--implementation", "1", "--model-digest", "m", "--processor", "p", "--threads", "2",
          NULL);
  assert_int_equal(r->code, 1);
  /* the "no" is answered on stdout with --json, as lookup's is */
  r = run("--store", store, "--json", "override", "clear", "--backend", "b", "--operator", "Conv",
          "--implementation", "1", "--model-digest", "m", "--processor", "p", "--threads", "2",
          NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "{\"status\":\"not_found\",\"message\":\"no override with this key\"}");
  /* portable override */
  r = run("--store", store, "override", "set", "--portable", "--backend", "b", "--operator", "Conv",
          "--implementation", "1", "--structure", "dtype=int8", "--policy", "p8", NULL);
  assert_int_equal(r->code, 0);
  r = run("--store", store, "lookup", "--backend", "b", "--operator", "Conv", "--implementation",
          "1", "--structure", "dtype=int8", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "selected (portable_override)");
  /* a policy the format cannot carry is refused */
  r = run("--store", store, "override", "set", "--portable", "--backend", "b", "--operator", "Conv",
          "--implementation", "1", "--structure", "dtype=int8", "--policy", "a\nb", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "invalid_argument");
}

/* Writes text to DIR/name; returns the path (static, one at a time). */
static const char *write_in_dir(const char *name, const char *text) {
  static char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* The key form of lookup is configured and validated as the workload form
 * is: [lookup] force_portable skips the exact levels, the plugin serving
 * --backend (the example plugin, found in the build tree) refuses a bogus
 * policy, and without that plugin the answer says it is unvalidated. */
static void lookup_key_form_uses_the_configuration_and_the_validator(void **state) {
  (void)state;
  char lib[PATH_MAX + 64];
  snprintf(lib, sizeof lib, "%s/lib/calhost/plugins/example.so", getenv("CALHOST_BUILD_DIR"));
  if (access(lib, R_OK) != 0)
    fail_msg("%s is missing (build the example plugin)", lib);
  run_result *r =
      run("--store", store, "import",
          write_in_dir("example-store.txt",
                       "onnx_light_calibration_profiles 1\n"
                       "profile exact calibrated\nbackend \"example\"\noperator \"ReduceSum\"\n"
                       "implementation \"1\"\nmodel_digest \"sha256:cd34\"\n"
                       "processor \"x86_64:test\"\nthread_count 1\n"
                       "measurement \"median_latency\" 2.5 \"us\"\npolicy \"block=64;unroll=1\"\n"
                       "end\n"
                       "profile portable calibrated\nbackend \"example\"\n"
                       "operator \"ReduceSum\"\nimplementation \"1\"\n"
                       "structure \"dtype\" \"float32\"\nstructure \"elements\" \"4096\"\n"
                       "measurement \"median_latency\" 3.25 \"us\"\n"
                       "policy \"block=256;unroll=2\"\nend\n"),
          NULL);
  assert_int_equal(r->code, 0);
#define EXAMPLE_KEY                                                                                \
  "--backend", "example", "--operator", "ReduceSum", "--implementation", "1", "--model-digest",    \
      "sha256:cd34", "--processor", "x86_64:test", "--threads", "1", "--structure",                \
      "dtype=float32", "--structure", "elements=4096"
  char plain[PATH_MAX + 64], deploy[PATH_MAX + 64], noplugin[PATH_MAX + 64];
  snprintf(plain, sizeof plain, "%s", write_in_dir("plain.ini", "[lookup]\nforce_portable = no\n"));
  snprintf(deploy, sizeof deploy, "%s",
           write_in_dir("deploy.ini", "[lookup]\nforce_portable = true\n"));
  snprintf(noplugin, sizeof noplugin, "%s",
           write_in_dir("noplugin.ini", "[plugins]\ndisabled = example\n"));

  /* the plugin is found and validates: the exact calibrated profile */
  r = run("--config", plain, "--store", store, "--json", "lookup", EXAMPLE_KEY, NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"level\":\"exact_calibrated\"");
  HAS(r->out, "\"diagnostics\":[]");
  /* [lookup] force_portable = true skips the exact levels, as the flag does */
  r = run("--config", deploy, "--store", store, "--json", "lookup", EXAMPLE_KEY, NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"level\":\"portable_calibrated\"");
  HAS(r->out, "\"reason\":\"force_portable\"");
  r = run("--config", plain, "--store", store, "--json", "lookup", EXAMPLE_KEY, "--force-portable",
          NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"level\":\"portable_calibrated\"");

  /* a portable override the plugin refuses: the key form of override set
   * asks the plugin when it loads (refused, exit 1), and stores it
   * unvalidated, with a warning, when it does not (here: disabled) */
  r = run("--config", plain, "--store", store, "override", "set", "--backend", "example",
          "--operator", "ReduceSum", "--implementation", "1", "--portable", "--structure",
          "dtype=float32", "--structure", "elements=4096", "--policy", "kernel=bogus", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->err, "policy_rejected");
  r = run("--config", noplugin, "--store", store, "override", "set", "--backend", "example",
          "--operator", "ReduceSum", "--implementation", "1", "--portable", "--structure",
          "dtype=float32", "--structure", "elements=4096", "--policy", "kernel=bogus", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->err, "warning: policy not validated: ");
  HAS(r->out, "override installed (not validated)");
  r = run("--config", plain, "--store", store, "--json", "lookup", EXAMPLE_KEY, NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"level\":\"exact_calibrated\"");
  HAS(r->out, "\"reason\":\"policy_rejected\"");
  HAS(r->out, "\"diagnostics\":[]");
  *strstr(r->out, "\"rejections\"") = '\0'; /* the selected profile is not the bogus one */
  assert_null(strstr(r->out, "bogus"));
  r = run("--config", plain, "--store", store, "lookup", EXAMPLE_KEY, NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "selected (exact_calibrated)");
  HAS(r->out, "rejected (policy_rejected: ");
  /* with force_portable nothing the plugin accepts is left but the
   * portable calibrated profile */
  r = run("--config", deploy, "--store", store, "--json", "lookup", EXAMPLE_KEY, NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"level\":\"portable_calibrated\"");
  HAS(r->out, "\"reason\":\"policy_rejected\"");

  /* the backend's plugin is disabled: the lookup still answers (the
   * override, unchecked), says the policy was not validated, exits 0 */
  r = run("--config", noplugin, "--store", store, "--json", "lookup", EXAMPLE_KEY, NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"level\":\"portable_override\"");
  HAS(r->out, "\"diagnostics\":[{\"status\":\"not_validated\",\"backend\":\"example\","
              "\"message\":\"policy not validated: plugin 'example' not found");
  HAS(r->err, "calhost: warning: policy not validated: plugin 'example' not found");
  r = run("--config", noplugin, "--store", store, "lookup", EXAMPLE_KEY, NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "selected (portable_override)");
  HAS(r->err, "calhost: warning: policy not validated: plugin 'example' not found");
#undef EXAMPLE_KEY
}

static void invalidate_removes_a_backends_profiles(void **state) {
  (void)state;
  run_result *r = run("--store", store, "import", vec("ok_mixed_sources.txt"), NULL);
  assert_int_equal(r->code, 0);
  r = run("--store", store, "invalidate", "--backend", "example_gpu", "--implementation", "2",
          NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "removed 0 profiles");
  r = run("--store", store, "invalidate", "--backend", "example_gpu", "--json", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "\"removed\":4");
  r = run("--store", store, "check", NULL);
  assert_int_equal(r->code, 0);
  r = run("--store", store, "list", "--json", NULL);
  assert_string_equal(r->out, "[]\n");
}

static void usage_errors_exit_2_and_touch_no_store(void **state) {
  (void)state;
  run_result *r = run("--store", store, "list", "--bogus", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--bogus");
  r = run("--store", store, "lookup", "--backend", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--backend needs a value");
  r = run("--store", store, "lookup", "--backend", "b", "--operator", "o", "--implementation", "1",
          "--model-digest", "m", "--processor", "p", "--threads", "x8", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--threads");
  r = run("--store", store, "lookup", "--backend", "b", "--operator", "o", "--threads", "0", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--threads");
  r = run("--store", store, "lookup", "--backend", "b", "--operator", "o", "--model-digest", "m",
          NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--implementation");
  r = run("--store", store, "override", "set", "--backend", "b", "--operator", "o",
          "--implementation", "1", "--model-digest", "m", "--processor", "p", "--threads", "1",
          NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--policy");
  r = run("--store", store, "override", "set", "--backend", "b", "--operator", "o",
          "--implementation", "1", "--structure", "a=1", "--policy", "x", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--portable");
  r = run("--store", store, "override", "set", "--portable", "--backend", "b", "--operator", "o",
          "--implementation", "1", "--structure", "novalue", "--policy", "x", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--structure");
  r = run("--store", store, "override", "frob", NULL);
  assert_int_equal(r->code, 2);
  r = run("--store", store, "invalidate", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "--backend");
  r = run("--store", store, "import", NULL);
  assert_int_equal(r->code, 2);
  r = run("--store", store, "check", "extra", NULL);
  assert_int_equal(r->code, 2);
  /* nothing above created the store */
  assert_int_not_equal(access(store, F_OK), 0);
}

static void a_malformed_store_is_an_error(void **state) {
  (void)state;
  run_result *r = run("--store", vec("bad_unknown_field.txt"), "list", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "malformed");
  /* with --json the store commands answer on stdout too */
  const char *store_cmds[][3] = {{"list", NULL, NULL},
                                 {"invalidate", "--backend", "b"},
                                 {"export", "out.txt", NULL},
                                 {"import", "in.txt", NULL},
                                 {"calibrate", NULL, NULL},
                                 {"verify", NULL, NULL}};
  for (size_t i = 0; i < sizeof store_cmds / sizeof store_cmds[0]; i++) {
    r = run("--store", vec("bad_unknown_field.txt"), "--json", store_cmds[i][0], store_cmds[i][1],
            store_cmds[i][2], NULL);
    assert_int_equal(r->code, 2);
    HAS(r->out, "{\"status\":\"malformed\",\"message\":\"");
  }
  r = run("--store", vec("bad_unknown_field.txt"), "lookup", "--backend", "b", "--operator", "o",
          "--implementation", "1", "--structure", "a=1", "--json", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->out, "\"status\":\"malformed\"");
  /* the workload form answers in JSON too */
  char ini[PATH_MAX + 64];
  snprintf(ini, sizeof ini, "%s",
           write_in_dir("w.ini", "[workload w]\noperator = ReduceSum\nshape = 1024\n"));
  r = run("--config", ini, "--store", vec("bad_unknown_field.txt"), "--json", "lookup",
          "--workload", "w", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->out, "\"status\":\"malformed\"");
  HAS(r->out, "\"diagnostics\":[{\"path\":");
  r = run("--config", ini, "--json", "lookup", "--workload", "nosuch", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->out, "\"status\":\"invalid_argument\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(check_reports_problems_with_their_lines, reset),
      cmocka_unit_test_setup(import_list_and_export_round_trip, reset),
      cmocka_unit_test_setup(lookup_and_override_follow_the_precedence, reset),
      cmocka_unit_test_setup(lookup_key_form_uses_the_configuration_and_the_validator, reset),
      cmocka_unit_test_setup(invalidate_removes_a_backends_profiles, reset),
      cmocka_unit_test_setup(usage_errors_exit_2_and_touch_no_store, reset),
      cmocka_unit_test_setup(a_malformed_store_is_an_error, reset),
  };
  return cmocka_run_group_tests_name("cli_store", tests, setup, teardown);
}
