/*
 * test_discovery.c: loader_discovery: every misbehaving test plugin is
 * reported with a clear reason while the good ones load (and a crash or hang
 * during negotiation does not take the host down); listings are sorted; a
 * second plugin with the same backend is refused naming both files; the same
 * file found twice is listed once; CALHOST_PLUGIN_PATH is honoured (and can
 * be turned off); enabled/disabled filters, and by file name without loading
 * (the runtime's discovery, no probe child); a plugin printing to stdout
 * while loading cannot reach the host's stdout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "loader/loader.h"
#include "loader_test_util.h"

static loader_plugin *find_file(const loader_plugin_list *l, const char *base) {
  for (size_t i = 0; i < l->count; i++) {
    const char *slash = strrchr(l->items[i]->path, '/');
    if (slash && !strcmp(slash + 1, base))
      return l->items[i];
  }
  return NULL;
}

static void options_for_dir(loader_options *o, char **dirs) {
  loader_options_init(o);
  o->config_dirs = dirs;
  o->config_dir_count = 1;
  o->use_environment = 0;
  o->use_default_dirs = 0;
  o->probe_timeout_seconds = 3;
}

/* The test plugins of tests/plugins and what discovery must say of each. */
static const struct {
  const char *file, *reason; /* reason NULL: must load */
} expect[] = {
    {"test_good.so", NULL},
    {"test_abi_newer.so", NULL},
    {"test_crash_run.so", NULL}, /* misbehaves only when run */
    {"test_hang.so", NULL},
    {"test_stdout.so", NULL},
    {"test_refuse_all.so", NULL},
    {"test_empty_policy.so", NULL},
    {"test_exit.so", NULL},
    {"test_abort.so", NULL},
    {"test_oversized.so", NULL},
    {"test_noentry.so", "no entry point 'calhost_plugin_negotiate'"},
    {"test_abi_range.so", "plugin supports ABI 3..4, host supports 1..2"},
    {"test_missing.so", "required vtable entry 'validate_policy' is missing"},
    {"test_crash_negotiate.so", "killed by signal 11 (SIGSEGV) during negotiation"},
    {"test_hang_negotiate.so", "(killed) during negotiation"},
};

/* Copies the test plugins above into a private directory (other groups'
 * test plugins share lib/calhost/test-plugins). */
static void populate(char *tmp, size_t cap) {
  assert_non_null(make_tmpdir(tmp, cap));
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    char src[4096], dst[4096], name[128];
    snprintf(name, sizeof name, "%.*s", (int)(strlen(expect[i].file) - 3), expect[i].file);
    test_plugin(src, sizeof src, name);
    snprintf(dst, sizeof dst, "%s/%s", tmp, expect[i].file);
    if (copy_file(src, dst) != 0)
      fail_msg("cannot copy %s", src);
  }
}

static void bad_plugins_reported_good_loaded(void **state) {
  char dir[256];
  char *dirs[1] = {dir};
  loader_options o;
  loader_plugin_list list;
  (void)state;
  populate(dir, sizeof dir);
  options_for_dir(&o, dirs);
  o.services.min_log_level = CALHOST_LOG_ERROR;
  int good = loader_discover(&o, &list);
  assert_int_equal(good, 10);
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    loader_plugin *p = find_file(&list, expect[i].file);
    if (!p)
      fail_msg("%s not discovered", expect[i].file);
    if (!expect[i].reason) {
      if (!p->loaded)
        fail_msg("%s not loaded: %s", expect[i].file, p->reason);
      assert_non_null(p->backend);
      assert_non_null(loader_plugin_list_find(&list, p->backend));
    } else {
      assert_false(p->loaded);
      if (!p->reason || !strstr(p->reason, expect[i].reason))
        fail_msg("%s: reason '%s', expected '%s'", expect[i].file, p->reason, expect[i].reason);
    }
  }
  for (size_t i = 1; i < list.count; i++) /* sorted listing */
    assert_true(strcmp(list.items[i - 1]->path, list.items[i]->path) < 0);
  loader_plugin_list_free(&list);
  assert_null(list.items);
  remove_tmpdir(dir);
}

static void duplicate_backend_names_both(void **state) {
  char tmp[256], a[512], b[512], ex[4096];
  char *dirs[1] = {tmp};
  char *explicit_paths[1] = {a};
  loader_options o;
  loader_plugin_list list;
  (void)state;
  assert_non_null(make_tmpdir(tmp, sizeof tmp));
  snprintf(a, sizeof a, "%s/a_example.so", tmp);
  snprintf(b, sizeof b, "%s/b_example.so", tmp);
  assert_int_equal(copy_file(example_plugin(ex, sizeof ex), a), 0);
  assert_int_equal(copy_file(ex, b), 0);
  options_for_dir(&o, dirs);
  o.explicit_paths = explicit_paths; /* a found twice: listed once */
  o.explicit_path_count = 1;
  assert_int_equal(loader_discover(&o, &list), 1);
  assert_int_equal(list.count, 2);
  assert_true(list.items[0]->loaded);
  assert_string_equal(list.items[0]->path, a);
  assert_false(list.items[1]->loaded);
  assert_non_null(strstr(list.items[1]->reason, "duplicate backend 'example'"));
  assert_non_null(strstr(list.items[1]->reason, a));
  assert_non_null(strstr(list.items[1]->reason, b));
  loader_plugin_list_free(&list);
  remove_tmpdir(tmp);
}

static void environment_path_honoured(void **state) {
  char tmp[256], a[512], ex[4096], env[1024];
  loader_options o;
  loader_plugin_list list;
  (void)state;
  assert_non_null(make_tmpdir(tmp, sizeof tmp));
  snprintf(a, sizeof a, "%s/example.so", tmp);
  assert_int_equal(copy_file(example_plugin(ex, sizeof ex), a), 0);
  snprintf(env, sizeof env, "/nonexistent-calhost-dir:%s", tmp);
  setenv("CALHOST_PLUGIN_PATH", env, 1);
  loader_options_init(&o);
  o.use_default_dirs = 0;
  o.services.min_log_level = CALHOST_LOG_ERROR; /* the missing dir is only a warning */
  assert_int_equal(loader_discover(&o, &list), 1);
  assert_int_equal(list.count, 1);
  assert_int_equal(list.items[0]->origin, CALHOST_ORIGIN_ENVIRONMENT);
  assert_string_equal(list.items[0]->backend, "example");
  loader_plugin_list_free(&list);
  /* A file named directly in the variable. */
  setenv("CALHOST_PLUGIN_PATH", a, 1);
  assert_int_equal(loader_discover(&o, &list), 1);
  loader_plugin_list_free(&list);
  /* Turned off: nothing. */
  o.use_environment = 0;
  assert_int_equal(loader_discover(&o, &list), 0);
  assert_int_equal(list.count, 0);
  loader_plugin_list_free(&list);
  unsetenv("CALHOST_PLUGIN_PATH");
  remove_tmpdir(tmp);
}

static void enabled_disabled_filters(void **state) {
  char dir[256];
  char *dirs[1] = {dir};
  char *disabled[1] = {"test_good"};
  char *enabled[2] = {"test_good", "test_stdout"};
  loader_options o;
  loader_plugin_list list;
  (void)state;
  populate(dir, sizeof dir);
  options_for_dir(&o, dirs);
  o.services.min_log_level = CALHOST_LOG_ERROR;
  o.probe_timeout_seconds = 1; /* test_hang_negotiate is in this directory too */
  o.disabled = disabled;
  o.disabled_count = 1;
  loader_discover(&o, &list);
  loader_plugin *p = find_file(&list, "test_good.so");
  assert_non_null(p);
  assert_false(p->loaded);
  assert_string_equal(p->reason, "disabled by configuration");
  assert_null(loader_plugin_list_find(&list, "test_good"));
  loader_plugin_list_free(&list);
  o.disabled_count = 0;
  o.enabled = enabled;
  o.enabled_count = 2;
  assert_int_equal(loader_discover(&o, &list), 2);
  assert_true(find_file(&list, "test_stdout.so")->loaded);
  assert_false(find_file(&list, "test_exit.so")->loaded);
  loader_plugin_list_free(&list);
  remove_tmpdir(dir);
}

/* filter_by_file_name with probe == 0 (the runtime's discovery): a
 * directory's file named after a backend the filters refuse is listed as
 * disabled and never loaded (the directory holds test_crash_negotiate.so and
 * test_hang_negotiate.so: loading either here would crash or hang this
 * test); an explicit file is loaded whatever its name, and filtered by its
 * real backend. */
static void file_names_filter_without_loading(void **state) {
  char dir[256], other[256], renamed[600], src[4096];
  char *dirs[1] = {dir};
  char *explicit_paths[1] = {renamed};
  char *enabled[2] = {"test_good", "test_refuse_all"};
  loader_options o;
  loader_plugin_list list;
  (void)state;
  populate(dir, sizeof dir);
  assert_non_null(make_tmpdir(other, sizeof other));
  snprintf(renamed, sizeof renamed, "%s/renamed.so", other);
  assert_int_equal(copy_file(test_plugin(src, sizeof src, "test_refuse_all"), renamed), 0);
  options_for_dir(&o, dirs);
  o.services.min_log_level = CALHOST_LOG_ERROR;
  o.probe = 0;
  o.filter_by_file_name = 1;
  o.enabled = enabled;
  o.enabled_count = 2;
  o.explicit_paths = explicit_paths;
  o.explicit_path_count = 1;
  assert_int_equal(loader_discover(&o, &list), 2);
  loader_plugin *p = find_file(&list, "renamed.so");
  assert_non_null(p);
  assert_true(p->loaded);
  assert_string_equal(p->backend, "test_refuse_all");
  assert_true(find_file(&list, "test_good.so")->loaded);
  /* allowed by its name, loaded, then refused as the second test_refuse_all */
  assert_int_equal(find_file(&list, "test_refuse_all.so")->state, CALHOST_PLUGIN_DUPLICATE);
  static const char *const skipped[] = {"test_crash_negotiate.so", "test_hang_negotiate.so",
                                        "test_stdout.so", "test_noentry.so"};
  for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++) {
    p = find_file(&list, skipped[i]);
    assert_non_null(p);
    assert_int_equal(p->state, CALHOST_PLUGIN_DISABLED);
    assert_false(p->loaded);
    assert_null(p->backend);
    assert_non_null(strstr(p->reason, "by its file name"));
  }
  loader_plugin_list_free(&list);
  /* the option off (the CLI's discovery, probing): every file is looked at */
  o.filter_by_file_name = 0;
  o.probe = 1;
  o.probe_timeout_seconds = 1;
  assert_int_equal(loader_discover(&o, &list), 2);
  p = find_file(&list, "test_crash_negotiate.so");
  assert_int_equal(p->state, CALHOST_PLUGIN_UNLOADABLE);
  loader_plugin_list_free(&list);
  remove_tmpdir(other);
  remove_tmpdir(dir);
}

static void stdout_protected_while_loading(void **state) {
  char path[4096];
  loader_options o;
  FILE *capture = tmpfile();
  struct stat st;
  int saved;
  (void)state;
  assert_non_null(capture);
  fflush(stdout);
  saved = dup(STDOUT_FILENO);
  dup2(fileno(capture), STDOUT_FILENO);
  loader_options_init(&o);
  o.probe = 0;                   /* in-process negotiation, where the plugin prints */
  loader_stdout_guard_enable(1); /* as calhost's main does (off in a library) */
  loader_plugin *p = loader_open(&o, NULL, test_plugin(path, sizeof path, "test_stdout"));
  loader_stdout_guard_enable(0);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  assert_true(p->loaded);
  assert_int_equal(fstat(fileno(capture), &st), 0);
  assert_int_equal(st.st_size, 0);
  loader_plugin_free(p);
  fclose(capture);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_plugins_reported_good_loaded),
      cmocka_unit_test(duplicate_backend_names_both),
      cmocka_unit_test(environment_path_honoured),
      cmocka_unit_test(enabled_disabled_filters),
      cmocka_unit_test(file_names_filter_without_loading),
      cmocka_unit_test(stdout_protected_while_loading),
  };
  return cmocka_run_group_tests_name("loader_discovery", tests, NULL, NULL);
}
