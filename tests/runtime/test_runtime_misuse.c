/*
 * test_runtime_misuse.c: every public function of runtime.h called with a
 * NULL where a value is needed, a count without its array, a NULL inside an
 * array, a too small struct_size or an error buffer of capacity 0 (issue 22
 * item 29: calhost_runtime_open with plugin_path_count > 0 and a NULL array
 * died with SIGSEGV). Each row runs in a child process, so that a crash
 * names its row, and must answer CALHOST_RUNTIME_INVALID_ARGUMENT or the
 * documented neutral value (NULL, 0, nothing done).
 * And the error-detail convention of runtime.h: the text in the caller's
 * buffer starts with its place ("<config_text>:LINE: ", "STORE:LINE:
 * STATUS: ", "plugin 'NAME' "), is cut to fit and always NUL-terminated.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../common/misuse.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calhost/runtime.h"

#define INVALID CALHOST_RUNTIME_INVALID_ARGUMENT

static char g_dir[64];

/* Options with an empty configuration and a store in the scratch folder. */
static calhost_runtime_options options(void) {
  static char store[128];
  snprintf(store, sizeof store, "%s/profiles.txt", g_dir);
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_text = "";
  o.config_text_length = 0;
  o.store_path = store;
  return o;
}

static int c_names(void) {
  EXPECT(calhost_runtime_version(NULL) != NULL);
  EXPECT(calhost_runtime_status_name((calhost_runtime_status)999) != NULL);
  EXPECT(calhost_runtime_status_name((calhost_runtime_status)-1) != NULL);
  calhost_runtime_options_init(NULL);
  return 0;
}

static int c_open_arrays(void) {
  char err[256];
  calhost_runtime *rt = (calhost_runtime *)1;
  calhost_runtime_options o = options();
  EXPECT(calhost_runtime_open(&o, NULL, err, sizeof err) == INVALID);
  o.plugin_path_count = 2; /* a count without its array */
  EXPECT(calhost_runtime_open(&o, &rt, err, sizeof err) == INVALID);
  EXPECT(rt == NULL);
  EXPECT(strstr(err, "plugin_paths") != NULL);
  const char *holes[] = {"a.so", NULL};
  o.plugin_paths = holes;
  EXPECT(calhost_runtime_open(&o, &rt, err, sizeof err) == INVALID);
  EXPECT(strstr(err, "plugin_paths[1]") != NULL);
  o = options();
  o.plugin_dir_count = 1;
  EXPECT(calhost_runtime_open(&o, &rt, err, sizeof err) == INVALID);
  EXPECT(strstr(err, "plugin_dirs") != NULL);
  const char *dholes[] = {NULL};
  o.plugin_dirs = dholes;
  EXPECT(calhost_runtime_open(&o, &rt, err, sizeof err) == INVALID);
  o = options();
  o.config_text = NULL;
  o.config_text_length = 5; /* a length without its text */
  EXPECT(calhost_runtime_open(&o, &rt, err, sizeof err) == INVALID);
  o = options();
  o.struct_size = 0;
  EXPECT(calhost_runtime_open(&o, &rt, err, sizeof err) == INVALID);
  /* an error buffer of capacity 0 is never written */
  strcpy(err, "untouched");
  EXPECT(calhost_runtime_open(&o, &rt, err, 0) == INVALID);
  EXPECT(!strcmp(err, "untouched"));
  EXPECT(calhost_runtime_open(&o, &rt, NULL, 100) == INVALID);
  /* the same options with the arrays given open */
  o = options();
  const char *dirs[] = {g_dir};
  o.plugin_dirs = dirs;
  o.plugin_dir_count = 1;
  EXPECT(calhost_runtime_open(&o, &rt, err, sizeof err) == CALHOST_RUNTIME_OK);
  calhost_runtime_close(&rt);
  EXPECT(rt == NULL);
  return 0;
}

static int c_handles(void) {
  char err[256];
  calhost_runtime_close(NULL);
  calhost_runtime *rt = NULL;
  calhost_runtime_close(&rt);
  EXPECT(calhost_runtime_store(NULL) == NULL);
  EXPECT(calhost_runtime_force_portable(NULL) == 0);
  EXPECT(calhost_runtime_plugin_backend(NULL) == NULL);
  EXPECT(calhost_runtime_plugin_implementation(NULL) == NULL);
  EXPECT(calhost_runtime_validate_policy(NULL, "p=1", 3, err, sizeof err) == 0);
  EXPECT(calhost_runtime_validate_policy(NULL, NULL, 0, NULL, 0) == 0);
  calhost_runtime_selection *s = NULL;
  calhost_runtime_selection_free(NULL);
  calhost_runtime_selection_free(&s);
  calhost_runtime_plugin *p = NULL;
  EXPECT(calhost_runtime_load_plugin(NULL, "b", NULL, &p, err, sizeof err) == INVALID);
  calhost_runtime_options o = options();
  EXPECT(calhost_runtime_open(&o, &rt, err, sizeof err) == CALHOST_RUNTIME_OK);
  EXPECT(calhost_runtime_load_plugin(rt, "b", NULL, NULL, err, sizeof err) == INVALID);
  EXPECT(calhost_runtime_load_plugin(rt, NULL, NULL, &p, err, sizeof err) == INVALID);
  EXPECT(calhost_runtime_build_keys(NULL, p, "w", 1, &s, err, sizeof err) == INVALID);
  EXPECT(calhost_runtime_build_keys(rt, NULL, "w", 1, &s, err, sizeof err) == INVALID);
  EXPECT(calhost_runtime_select(rt, NULL, "w", 1, &s, err, sizeof err) == INVALID);
  EXPECT(calhost_runtime_select(NULL, NULL, NULL, 0, NULL, NULL, 0) == INVALID);
  EXPECT(s == NULL);
  static const char *const stale[1] = {"stale"};
  const char *const *names = stale; /* reset to NULL on misuse */
  size_t n = 7;
  EXPECT(calhost_runtime_serving_backends(NULL, "w", &names, &n, err, sizeof err) == INVALID);
  EXPECT(names == NULL && n == 0);
  EXPECT(calhost_runtime_serving_backends(rt, NULL, &names, &n, err, sizeof err) == INVALID);
  EXPECT(calhost_runtime_serving_backends(rt, "w", NULL, &n, err, sizeof err) == INVALID);
  EXPECT(calhost_runtime_serving_backends(rt, "w", &names, NULL, NULL, 0) == INVALID);
  EXPECT(calhost_runtime_serving_backends(rt, "w", &names, &n, err, sizeof err) ==
         CALHOST_RUNTIME_NOT_FOUND); /* the empty configuration has no workload */
  /* since 0.5: the choice of a backend */
  calhost_runtime_choice *ch = (calhost_runtime_choice *)&n; /* reset to NULL on misuse */
  EXPECT(calhost_runtime_choose(NULL, "w", 0, &ch, err, sizeof err) == INVALID);
  EXPECT(ch == NULL);
  EXPECT(calhost_runtime_choose(rt, NULL, 0, &ch, NULL, 0) == INVALID);
  EXPECT(calhost_runtime_choose(rt, "w", 0, NULL, err, sizeof err) == INVALID);
  EXPECT(calhost_runtime_choose(rt, "w", 0, &ch, err, sizeof err) == CALHOST_RUNTIME_NOT_FOUND);
  calhost_runtime_choice_free(NULL);
  calhost_runtime_choice_free(&ch);
  calhost_runtime_model_choice *mc = NULL;
  EXPECT(calhost_runtime_choose_model(rt, NULL, 0, &mc, err, sizeof err) == INVALID);
  EXPECT(calhost_runtime_choose_model(NULL, NULL, 0, NULL, NULL, 0) == INVALID);
  EXPECT(mc == NULL);
  calhost_runtime_model_choice_free(NULL);
  calhost_runtime_model_choice_free(&mc);
  calhost_runtime_close(&rt);
  return 0;
}

static const misuse_row rows[] = {
    {"version, status_name, options_init", c_names},
    {"calhost_runtime_open: arrays, counts, struct_size, err capacity", c_open_arrays},
    {"close, store, force_portable, plugins, validate, load, build_keys, select, "
     "serving_backends, choose, choose_model",
     c_handles},
};

static void every_public_function_refuses_misuse(void **state) {
  (void)state;
  assert_int_equal(misuse_run_rows(rows, sizeof rows / sizeof rows[0]), 0);
}

static void every_error_detail_starts_with_its_place(void **state) {
  (void)state;
  char err[512], store[128], want[256];
  calhost_runtime *rt = NULL;
  /* the configuration: "<config_text>:LINE: reason" */
  calhost_runtime_options o = options();
  o.config_text = "[store]\nno_such_key = 1\n";
  o.config_text_length = strlen(o.config_text);
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_CONFIG);
  assert_null(rt);
  assert_memory_equal(err, "<config_text>:2: ", strlen("<config_text>:2: "));
  /* the store: calstore_error's path, line, status name and message */
  snprintf(store, sizeof store, "%s/bad.txt", g_dir);
  FILE *f = fopen(store, "w");
  assert_non_null(f);
  fputs("onnx_light_calibration_profiles 1\nprofile exact nonsense\n", f);
  fclose(f);
  o = options();
  o.store_path = store;
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_STORE);
  snprintf(want, sizeof want, "%s:2: malformed: ", store);
  assert_memory_equal(err, want, strlen(want));
  /* a plugin: named first */
  o = options();
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
  calhost_runtime_plugin *p = NULL;
  assert_int_equal(calhost_runtime_load_plugin(rt, "no_such_backend", NULL, &p, err, sizeof err),
                   CALHOST_RUNTIME_NOT_FOUND);
  assert_memory_equal(err, "plugin 'no_such_backend' ", strlen("plugin 'no_such_backend' "));
  /* cut to fit, NUL-terminated */
  memset(err, 'x', sizeof err);
  assert_int_equal(calhost_runtime_load_plugin(rt, "no_such_backend", NULL, &p, err, 8),
                   CALHOST_RUNTIME_NOT_FOUND);
  assert_int_equal(strlen(err), 7);
  assert_int_equal(err[8], 'x');
  calhost_runtime_close(&rt);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-rtmisuse-XXXXXX");
  if (!mkdtemp(g_dir))
    return -1;
  setenv("XDG_CACHE_HOME", g_dir, 1);
  unsetenv("CALHOST_PLUGIN_PATH");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_public_function_refuses_misuse),
      cmocka_unit_test(every_error_detail_starts_with_its_place),
  };
  return cmocka_run_group_tests_name("runtime_misuse", tests, setup, teardown);
}
