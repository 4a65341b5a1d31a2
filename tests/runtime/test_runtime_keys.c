/*
 * test_runtime_keys.c: the deployment runtime (calhost/runtime.h, linked as
 * the shared libcalhost_runtime) computes exactly the keys `calhost
 * calibrate` stored, for every shipped plugin (cpu_gemm, openblas, example),
 * with and without [plugin NAME] settings: for each case bin/calhost
 * calibrates one workload into a fresh store, then the runtime opened from
 * the same configuration builds the exact and portable keys (the OpenCL
 * backends too, where they are built), both of which
 * the store holds as calibrated profiles, and selects the exact calibrated
 * profile (the portable one with force_portable). With max_isa = portable,
 * cpu_gemm's keys differ from its keys without settings on a machine with
 * AVX2 (the settings reach the plugin). And the list of the backends that
 * serve a workload (calhost_runtime_serving_backends).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "calhost/runtime.h"
#include "harness.h"

static char g_dir[256];

typedef struct key_case {
  const char *backend;
  const char *workload; /* the [workload w] body */
  const char *settings; /* the [plugin NAME] body, or NULL */
  const char *device;   /* the runtime's device option, or NULL */
} key_case;

static const char *build_dir(void) {
  const char *b = getenv("CALHOST_BUILD_DIR");
  assert_non_null(b);
  return b;
}

static int plugin_built(const char *backend) {
  char p[1400];
  snprintf(p, sizeof p, "%s/lib/calhost/plugins/%s.so", build_dir(), backend);
  return access(p, R_OK) == 0;
}

/* Writes the configuration of a case; returns its path in cfg. The test
 * checks keys, not winners: two candidates a sweep (budget), because an
 * OpenCL candidate's first run is a PoCL compile that the time budget
 * cannot interrupt, and on a loaded 2-core machine with an empty kernel
 * cache a quick sweep's compiles took calibrate past the harness's limit. */
static void write_case(const key_case *c, size_t n, char *cfg, size_t cap) {
  char store[600];
  snprintf(cfg, cap, "%s/case-%zu.ini", g_dir, n);
  snprintf(store, sizeof store, "%s/store-%zu.txt", g_dir, n);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s\n"
          "[plugins]\ndirectories = %s/lib/calhost/plugins\nenabled = %s\n"
          "[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 2\nbudget = 2\n"
          "[workload w]\n%s\n",
          store, build_dir(), c->backend, c->workload);
  if (c->settings)
    fprintf(f, "[plugin %s]\n%s\n", c->backend, c->settings);
  fclose(f);
}

/* `calhost --config cfg --quiet calibrate`; its stderr is shown when it
 * fails. Returns the exit status. */
static int calibrate(const char *cfg) {
  harness_opts o = {.timeout_s = 600}; /* a loaded machine's compiles */
  harness_result r = {0};
  int code = harness_run(&o, &r, "--config", cfg, "--quiet", "calibrate", NULL);
  if (code != 0)
    fprintf(stderr, "calhost calibrate: exit %d:\n%s", code, r.err);
  harness_result_free(&r);
  return code;
}

/* Opens the runtime of cfg, loads the backend and builds (select: and
 * selects) the keys of workload w. */
static calhost_runtime_selection *keys_of_device(const char *cfg, const char *backend,
                                                 const char *device, int force_portable, int select,
                                                 calhost_runtime **rt) {
  char err[4096];
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = cfg;
  o.force_portable = force_portable;
  o.device = device;
  if (calhost_runtime_open(&o, rt, err, sizeof err) != CALHOST_RUNTIME_OK)
    fail_msg("open %s: %s", cfg, err);
  calhost_runtime_plugin *p = NULL;
  if (calhost_runtime_load_plugin(*rt, backend, NULL, &p, err, sizeof err) != CALHOST_RUNTIME_OK)
    fail_msg("load %s: %s", backend, err);
  assert_string_equal(calhost_runtime_plugin_backend(p), backend);
  calhost_runtime_selection *s = NULL;
  calhost_runtime_status st = select
                                  ? calhost_runtime_select(*rt, p, "w", 0, &s, err, sizeof err)
                                  : calhost_runtime_build_keys(*rt, p, "w", 0, &s, err, sizeof err);
  if (st != CALHOST_RUNTIME_OK)
    fail_msg("keys of %s: %s: %s", backend, calhost_runtime_status_name(st), err);
  return s;
}

static calhost_runtime_selection *keys_of(const char *cfg, const char *backend, int force_portable,
                                          int select, calhost_runtime **rt) {
  return keys_of_device(cfg, backend, NULL, force_portable, select, rt);
}

static int stored(calstore *store, const calstore_key *k) {
  calstore_lookup_result *r = NULL;
  calstore_status st = calstore_get(store, k, CALSTORE_SOURCE_CALIBRATED, &r, NULL);
  calstore_lookup_result_free(&r);
  return st == CALSTORE_OK;
}

static void check_case(const key_case *c, size_t n) {
  char cfg[600];
  write_case(c, n, cfg, sizeof cfg);
  int rc = calibrate(cfg);
  if (rc != 0)
    fail_msg("calhost calibrate (%s%s) exited %d", c->backend, c->settings ? " with settings" : "",
             rc);
  calhost_runtime *rt = NULL;
  calhost_runtime_selection *s = keys_of_device(cfg, c->backend, c->device, -1, 1, &rt);
  /* the runtime's keys are the ones calibrate stored */
  if (!stored(calhost_runtime_store(rt), &s->exact))
    fail_msg("%s: the exact key (processor %s, threads %u) is not in the store", c->backend,
             s->exact.processor, s->exact.thread_count);
  if (!stored(calhost_runtime_store(rt), &s->portable))
    fail_msg("%s: the portable key is not in the store", c->backend);
  assert_non_null(s->result);
  assert_non_null(s->result->profile);
  assert_int_equal(s->result->level, CALSTORE_LEVEL_EXACT_CALIBRATED);
  if (!strcmp(c->backend, "opencl_gemm") || !strcmp(c->backend, "clblast")) {
    /* a device backend: the key was built on the device, whose identity
     * starts the exact key's processor (clblast appends its version);
     * naming it by identity gives the same key */
    assert_non_null(s->device_identity);
    assert_int_equal(strncmp(s->exact.processor, s->device_identity, strlen(s->device_identity)),
                     0);
    char *identity = strdup(s->device_identity), *processor = strdup(s->exact.processor);
    calhost_runtime_selection_free(&s);
    calhost_runtime_close(&rt);
    s = keys_of_device(cfg, c->backend, identity, -1, 1, &rt);
    assert_string_equal(s->exact.processor, processor);
    assert_int_equal(s->result->level, CALSTORE_LEVEL_EXACT_CALIBRATED);
    free(identity);
    free(processor);
  } else {
    assert_null(s->device_identity);
  }
  calhost_runtime_selection_free(&s);
  calhost_runtime_close(&rt);
  assert_null(rt);

  s = keys_of_device(cfg, c->backend, c->device, 1, 1, &rt);
  assert_int_equal(s->force_portable, 1);
  assert_non_null(s->result->profile);
  assert_int_equal(s->result->level, CALSTORE_LEVEL_PORTABLE_CALIBRATED);
  calhost_runtime_selection_free(&s);
  calhost_runtime_close(&rt);
}

#define MATMUL "operator = MatMul\nshape = 64,64,64"
#define REDUCE "operator = ReduceSum\nshape = 4096"

static void runtime_keys_equal_calibrate_keys_for_every_shipped_plugin(void **state) {
  (void)state;
  static const key_case cases[] = {
      {"cpu_gemm", MATMUL, NULL, NULL},
      {"cpu_gemm", MATMUL, "max_isa = portable", NULL},
      {"openblas", MATMUL, NULL, NULL},
      {"openblas", MATMUL, "library = libopenblas.so.0", NULL},
      {"example", REDUCE, NULL, NULL}, /* the example backend takes no settings */
      /* a device backend: calibrate's device targets, the runtime's device
       * option (by index, and by default the first device) */
      {"opencl_gemm", MATMUL, "devices = 0", "0"},
      {"opencl_gemm", MATMUL, NULL, NULL},
      {"clblast", MATMUL, NULL, NULL},
  };
  const char *only_opencl = getenv("CALHOST_RUNTIME_KEYS_OPENCL");
  int opencl = only_opencl && !strcmp(only_opencl, "1");
  size_t ran = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int is_opencl =
        !strcmp(cases[i].backend, "opencl_gemm") || !strcmp(cases[i].backend, "clblast");
    if (is_opencl != opencl)
      continue;
    if (!plugin_built(cases[i].backend)) {
      /* openblas, opencl_gemm and clblast are built only where their
       * libraries are found; cpu_gemm and example always */
      assert_true(strcmp(cases[i].backend, "cpu_gemm") && strcmp(cases[i].backend, "example"));
      continue;
    }
    check_case(&cases[i], i);
    ran++;
  }
  assert_true(opencl || ran >= 3);
}

/* The [plugin cpu_gemm] settings reach the instance the runtime creates:
 * with max_isa = portable the portable key names the portable ISA. */
static void runtime_creates_the_plugin_with_its_settings(void **state) {
  (void)state;
  static const key_case plain = {"cpu_gemm", MATMUL, NULL, NULL};
  static const key_case capped = {"cpu_gemm", MATMUL, "max_isa = portable", NULL};
  char a[600], b[600];
  write_case(&plain, 100, a, sizeof a);
  write_case(&capped, 101, b, sizeof b);
  calhost_runtime *ra = NULL, *rb = NULL;
  calhost_runtime_selection *sa = keys_of(a, "cpu_gemm", -1, 0, &ra);
  calhost_runtime_selection *sb = keys_of(b, "cpu_gemm", -1, 0, &rb);
  assert_null(sa->result); /* build_keys selects nothing */
  const char *isa_a = NULL, *isa_b = NULL;
  for (size_t i = 0; i < sa->portable.structure_count; i++)
    if (!strcmp(sa->portable.structure[i].name, "isa"))
      isa_a = sa->portable.structure[i].value;
  for (size_t i = 0; i < sb->portable.structure_count; i++)
    if (!strcmp(sb->portable.structure[i].name, "isa"))
      isa_b = sb->portable.structure[i].value;
  assert_non_null(isa_a);
  assert_non_null(isa_b);
  assert_string_equal(isa_b, "portable");
  if (strcmp(isa_a, "portable") == 0)
    fprintf(stderr, "note: this processor's best ISA is portable; the keys coincide\n");
  calhost_runtime_selection_free(&sa);
  calhost_runtime_selection_free(&sb);
  calhost_runtime_close(&ra);
  calhost_runtime_close(&rb);
}

/* Errors name what failed; misuse is an error, not a crash. */
static void runtime_reports_errors(void **state) {
  (void)state;
  char err[4096] = "", cfg[600];
  calhost_runtime *rt = NULL;
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = "/nonexistent/calhost.ini";
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_CONFIG);
  assert_null(rt);
  assert_non_null(strstr(err, "/nonexistent/calhost.ini"));
  o.struct_size = 8;
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err),
                   CALHOST_RUNTIME_INVALID_ARGUMENT);
  static const key_case c = {"example", REDUCE, NULL, NULL};
  write_case(&c, 200, cfg, sizeof cfg);
  calhost_runtime_options_init(&o);
  o.config_path = cfg;
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
  calhost_runtime_plugin *p = NULL;
  assert_int_equal(calhost_runtime_load_plugin(rt, "no_such_backend", NULL, &p, err, sizeof err),
                   CALHOST_RUNTIME_NOT_FOUND);
  assert_non_null(strstr(err, "no_such_backend"));
  assert_int_equal(calhost_runtime_load_plugin(rt, NULL, "nope", &p, err, sizeof err),
                   CALHOST_RUNTIME_NOT_FOUND);
  assert_int_equal(calhost_runtime_load_plugin(rt, NULL, "w", &p, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  calhost_runtime_plugin *again = NULL;
  assert_int_equal(calhost_runtime_load_plugin(rt, "example", NULL, &again, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_ptr_equal(p, again);
  calhost_runtime_selection *s = NULL;
  assert_int_equal(calhost_runtime_select(rt, p, "nope", 0, &s, err, sizeof err),
                   CALHOST_RUNTIME_NOT_FOUND);
  assert_null(s);
  /* nothing calibrated: OK, no profile */
  assert_int_equal(calhost_runtime_select(rt, p, "w", 0, &s, err, sizeof err), CALHOST_RUNTIME_OK);
  assert_null(s->result->profile);
  assert_int_equal(s->status, CALSTORE_NOT_FOUND);
  calhost_runtime_selection_free(&s);
  /* the plugin's validator, for overrides */
  assert_int_equal(calhost_runtime_validate_policy(p, "not a policy", 12, err, sizeof err), 0);
  assert_int_equal(calhost_runtime_select(NULL, p, "w", 0, &s, err, sizeof err),
                   CALHOST_RUNTIME_INVALID_ARGUMENT);
  calhost_runtime_close(&rt);
  calhost_runtime_close(&rt); /* NULL-safe */
  /* a device for a backend without devices, a device a backend lacks */
  o.device = "0";
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
  assert_int_equal(calhost_runtime_load_plugin(rt, "example", NULL, &p, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_int_equal(calhost_runtime_build_keys(rt, p, "w", 0, &s, err, sizeof err),
                   CALHOST_RUNTIME_TARGET);
  assert_non_null(strstr(err, "drives no devices"));
  calhost_runtime_close(&rt);
  if (plugin_built("opencl_gemm")) {
    static const key_case g = {"opencl_gemm", MATMUL, NULL, NULL};
    write_case(&g, 201, cfg, sizeof cfg);
    o.device = "4096";
    assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
    assert_int_equal(calhost_runtime_load_plugin(rt, "opencl_gemm", NULL, &p, err, sizeof err),
                     CALHOST_RUNTIME_OK);
    assert_int_equal(calhost_runtime_build_keys(rt, p, "w", 0, &s, err, sizeof err),
                     CALHOST_RUNTIME_TARGET);
    assert_non_null(strstr(err, "no device 4096"));
    calhost_runtime_close(&rt);
  }
  assert_string_equal(calhost_runtime_status_name(CALHOST_RUNTIME_OK), "ok");
  uint32_t number = 0;
  assert_non_null(strstr(calhost_runtime_version(&number), "."));
  assert_int_equal(number, CALHOST_RUNTIME_VERSION_NUMBER);
  assert_string_equal(calhost_runtime_status_name((calhost_runtime_status)99), "unknown");
}

/* calhost_runtime_serving_backends (since 0.4): every enabled plugin that
 * serves a workload's operator, in the order load_plugin tries them (the
 * first is the one it loads), from the runtime's own discovery or from the
 * one that loaded a plugin for a workload; disabled plugins and plugins of
 * another operator are not listed. */
static void runtime_lists_every_backend_serving_a_workload(void **state) {
  (void)state;
  char cfg[600], err[4096];
  snprintf(cfg, sizeof cfg, "%s/serving.ini", g_dir);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s/serving-store.txt\n"
          "[plugins]\ndirectories = %s/lib/calhost/test-plugins\n"
          "enabled = test_refuse_all, test_good\n"
          "[workload w]\n" REDUCE "\n[workload m]\n" MATMUL "\n",
          g_dir, build_dir());
  fclose(f);
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = cfg;
  for (int loaded_first = 0; loaded_first < 2; loaded_first++) {
    calhost_runtime *rt = NULL;
    assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
    calhost_runtime_plugin *p = NULL;
    if (loaded_first) { /* its discovery serves */
      assert_int_equal(calhost_runtime_load_plugin(rt, NULL, "w", &p, err, sizeof err),
                       CALHOST_RUNTIME_OK);
      assert_string_equal(calhost_runtime_plugin_backend(p), "test_good");
    }
    const char *const *names = NULL;
    size_t n = 99;
    assert_int_equal(calhost_runtime_serving_backends(rt, "w", &names, &n, err, sizeof err),
                     CALHOST_RUNTIME_OK);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "test_good"); /* the file order: load_plugin's first */
    assert_string_equal(names[1], "test_refuse_all");
    /* each loads by name, the first being the plugin loaded for w */
    calhost_runtime_plugin *q = NULL;
    assert_int_equal(calhost_runtime_load_plugin(rt, names[1], NULL, &q, err, sizeof err),
                     CALHOST_RUNTIME_OK);
    assert_string_equal(calhost_runtime_plugin_backend(q), "test_refuse_all");
    assert_int_equal(calhost_runtime_load_plugin(rt, names[0], NULL, &q, err, sizeof err),
                     CALHOST_RUNTIME_OK);
    if (loaded_first)
      assert_ptr_equal(q, p);
    /* nobody enabled serves MatMul; an unknown workload is named */
    assert_int_equal(calhost_runtime_serving_backends(rt, "m", &names, &n, err, sizeof err),
                     CALHOST_RUNTIME_OK);
    assert_int_equal(n, 0);
    assert_int_equal(calhost_runtime_serving_backends(rt, "nope", &names, &n, err, sizeof err),
                     CALHOST_RUNTIME_NOT_FOUND);
    assert_null(names);
    assert_non_null(strstr(err, "'nope'"));
    calhost_runtime_close(&rt);
  }
}

/* A runtime from options set in code: the configuration as text, the
 * plugin as a file. */
static void runtime_opens_from_options_set_in_code(void **state) {
  (void)state;
  char text[2048], plugin[1400], err[4096];
  snprintf(text, sizeof text,
           "[store]\npath = %s/code-store.txt\n[lookup]\nforce_portable = true\n"
           "[workload w]\noperator = ReduceSum\nshape = 4096\n",
           g_dir);
  snprintf(plugin, sizeof plugin, "%s/lib/calhost/plugins/example.so", build_dir());
  const char *paths[] = {plugin};
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_text = text;
  o.config_text_length = strlen(text);
  o.plugin_paths = paths;
  o.plugin_path_count = 1;
  calhost_runtime *rt = NULL;
  if (calhost_runtime_open(&o, &rt, err, sizeof err) != CALHOST_RUNTIME_OK)
    fail_msg("open: %s", err);
  assert_int_equal(calhost_runtime_force_portable(rt), 1);
  calhost_runtime_plugin *p = NULL;
  if (calhost_runtime_load_plugin(rt, NULL, "w", &p, err, sizeof err) != CALHOST_RUNTIME_OK)
    fail_msg("load: %s", err);
  assert_string_equal(calhost_runtime_plugin_backend(p), "example");
  calhost_runtime_selection *s = NULL;
  assert_int_equal(calhost_runtime_select(rt, p, "w", 0, &s, err, sizeof err), CALHOST_RUNTIME_OK);
  assert_int_equal(s->force_portable, 1);
  assert_int_equal(s->portable.kind, CALSTORE_KEY_PORTABLE);
  assert_true(s->portable.structure_count >= 1);
  assert_null(s->result->profile); /* nothing calibrated in this store */
  calhost_runtime_selection_free(&s);
  calhost_runtime_close(&rt);
  /* a broken text names itself and the line */
  o.config_text = "[calibration]\nrigor = slow\n";
  o.config_text_length = strlen(o.config_text);
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_CONFIG);
  assert_non_null(strstr(err, "<config_text>:2"));
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-runtime-XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runtime_keys_equal_calibrate_keys_for_every_shipped_plugin),
      cmocka_unit_test(runtime_creates_the_plugin_with_its_settings),
      cmocka_unit_test(runtime_reports_errors),
      cmocka_unit_test(runtime_opens_from_options_set_in_code),
      cmocka_unit_test(runtime_lists_every_backend_serving_a_workload),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
