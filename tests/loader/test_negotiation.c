/*
 * test_negotiation.c: loader_negotiation: the ABI handshake (match, host
 * newer, plugin newer, no overlap in either direction), the vtable checks
 * (missing required entry named, no entry point) and the host services a
 * loaded plugin sees (set_error captured per plugin, cancellation).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "loader/loader.h"
#include "loader_test_util.h"
#include "loader/module.h"

static loader_plugin *open_with_range(const char *name, uint32_t lo, uint32_t hi, int probe) {
  loader_options o;
  char path[4096];
  loader_options_init(&o);
  o.host_abi_min = lo;
  o.host_abi_max = hi;
  o.probe = probe;
  loader_plugin *p = loader_open(&o, NULL, test_plugin(path, sizeof path, name));
  assert_non_null(p);
  return p;
}

static void match(void **state) {
  (void)state;
  for (int probe = 0; probe < 2; probe++) {
    loader_plugin *p = open_with_range("test_good", 1, 1, probe);
    assert_true(p->loaded);
    assert_null(p->reason);
    assert_int_equal(p->abi_version, 1);
    assert_string_equal(p->backend, "test_good");
    assert_string_equal(p->implementation_version, "1");
    assert_int_equal(p->operator_count, 1);
    assert_string_equal(p->operators[0], "ReduceSum");
    assert_true(CALHOST_PLUGIN_HAS(p, check));
    assert_false(CALHOST_PLUGIN_HAS(p, default_policy)); /* optional, absent */
    /* the one rule: since-version, struct size and pointer */
    assert_false(CALHOST_VTABLE_CALLABLE(&p->vtable, 0, check)); /* before its version */
    calhost_plugin_vtable short_table = p->vtable;
    short_table.struct_size = (uint32_t)offsetof(calhost_plugin_vtable, check);
    assert_false(CALHOST_VTABLE_CALLABLE(&short_table, 1, check)); /* not compiled in */
    assert_true(CALHOST_VTABLE_CALLABLE(&p->vtable, 1, check));
    assert_false(loader_vtable_callable(&p->vtable, 1, 1)); /* not an entry offset */
    assert_false(CALHOST_VTABLE_CALLABLE(NULL, 1, check));
    loader_plugin_free(p);
  }
}

static void host_newer(void **state) {
  (void)state;
  loader_plugin *p = open_with_range("test_good", 1, 3, 1);
  assert_true(p->loaded);
  assert_int_equal(p->abi_version, 1); /* the plugin's highest */
  assert_int_equal(p->plugin_abi_max, 1);
  loader_plugin_free(p);
}

static void plugin_newer(void **state) {
  (void)state;
  loader_plugin *p = open_with_range("test_abi_newer", 1, 1, 1);
  assert_true(p->loaded);
  assert_int_equal(p->abi_version, 1); /* never above the host's maximum */
  assert_int_equal(p->plugin_abi_min, 1);
  assert_int_equal(p->plugin_abi_max, 2);
  loader_plugin_free(p);
}

static void no_overlap_plugin_newer(void **state) {
  (void)state;
  for (int probe = 0; probe < 2; probe++) {
    loader_plugin *p = open_with_range("test_abi_range", 1, 1, probe);
    assert_false(p->loaded);
    assert_non_null(p->reason);
    assert_non_null(strstr(p->reason, "plugin supports ABI 3..4, host supports 1..1"));
    assert_int_equal(p->plugin_abi_min, 3);
    assert_int_equal(p->plugin_abi_max, 4);
    loader_plugin_free(p);
  }
}

static void no_overlap_host_newer(void **state) {
  (void)state;
  loader_plugin *p = open_with_range("test_good", 2, 4, 1);
  assert_false(p->loaded);
  assert_non_null(strstr(p->reason, "plugin supports ABI 1..1, host supports 2..4"));
  loader_plugin_free(p);
}

static void missing_required_named(void **state) {
  (void)state;
  loader_plugin *p = open_with_range("test_missing", 1, 1, 1);
  assert_false(p->loaded);
  assert_non_null(strstr(p->reason, "required vtable entry 'validate_policy' is missing"));
  loader_plugin_free(p);
}

static void no_entry_point(void **state) {
  (void)state;
  loader_plugin *p = open_with_range("test_noentry", 1, 1, 0);
  assert_false(p->loaded);
  assert_non_null(strstr(p->reason, "no entry point 'calhost_plugin_negotiate'"));
  loader_plugin_free(p);
}

static void direct_negotiate(void **state) {
  char path[4096], err[512];
  calhost_host_services svc;
  loader_services_context ctx;
  calhost_plugin_vtable vt;
  uint32_t chosen, lo, hi;
  (void)state;
  loader_module *m =
      loader_module_open(test_plugin(path, sizeof path, "test_good"), err, sizeof err);
  assert_non_null(m);
  loader_services_init(&svc, &ctx, NULL, NULL);
  assert_int_equal(loader_negotiate(m, 1, 1, &svc, &vt, &chosen, &lo, &hi, err, sizeof err), 0);
  assert_int_equal(chosen, 1);
  assert_int_equal(vt.struct_size, sizeof vt);
  assert_string_equal(vt.backend_name, "test_good");
  loader_module_close(&m);
  assert_null(m);
  assert_null(loader_module_open("/nonexistent/plugin.so", err, sizeof err));
  assert_true(strlen(err) > 0); /* dlopen's own text */
}

static volatile sig_atomic_t cancel_flag;

static void services_errors_and_cancellation(void **state) {
  loader_options o;
  char path[4096];
  calhost_plugin_instance *inst = NULL;
  calhost_session *s = NULL;
  calhost_run_result r = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof r}, -1};
  calhost_built_key key = {.header = {CALHOST_STRUCT_BUILT_KEY, 1, sizeof key}};
  int64_t shape[1] = {1024};
  calhost_workload w = {{CALHOST_STRUCT_WORKLOAD, 1, sizeof w},
                        "w",
                        "MatMul",
                        "float32",
                        shape,
                        1,
                        NULL,
                        0,
                        "sha256:00"};
  calhost_target t = {{CALHOST_STRUCT_TARGET, 1, sizeof t}, "cpu", 1, NULL, 0, "", NULL, 0};
  (void)state;
  loader_options_init(&o);
  o.services.cancel_flag = &cancel_flag;
  loader_plugin *p = loader_open(&o, NULL, example_plugin(path, sizeof path));
  assert_true(p->loaded);
  assert_int_equal(p->vtable.create(&p->services, NULL, 0, &inst), CALHOST_OK);
  assert_null(loader_plugin_take_error(p));
  /* An unsupported workload: the plugin explains itself with set_error. */
  assert_int_equal(p->vtable.build_key(inst, &w, &t, &key), CALHOST_UNSUPPORTED);
  const char *e = loader_plugin_take_error(p);
  assert_non_null(e);
  assert_non_null(strstr(e, "ReduceSum"));
  assert_null(loader_plugin_take_error(p)); /* taken */
  /* Cancellation reaches the plugin through the caller's flag. */
  w.operator_name = "ReduceSum";
  assert_int_equal(p->vtable.open_session(inst, &w, &t, &s), CALHOST_OK);
  assert_int_equal(p->vtable.prepare(s, "block=64;unroll=2", 17), CALHOST_OK);
  assert_int_equal(p->vtable.run(s, 2, &r), CALHOST_OK);
  cancel_flag = 1;
  assert_int_equal(p->vtable.run(s, 2, &r), CALHOST_CANCELLED);
  cancel_flag = 0;
  /* Host allocation honours the alignment. */
  void *mem = p->services.allocate(p->services.context, 100, 64);
  assert_non_null(mem);
  assert_int_equal((uintptr_t)mem % 64, 0);
  p->services.free_memory(p->services.context, mem);
  p->vtable.close_session(s);
  p->vtable.destroy(inst);
  loader_plugin_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(match),
      cmocka_unit_test(host_newer),
      cmocka_unit_test(plugin_newer),
      cmocka_unit_test(no_overlap_plugin_newer),
      cmocka_unit_test(no_overlap_host_newer),
      cmocka_unit_test(missing_required_named),
      cmocka_unit_test(no_entry_point),
      cmocka_unit_test(direct_negotiate),
      cmocka_unit_test(services_errors_and_cancellation),
  };
  return cmocka_run_group_tests_name("loader_negotiation", tests, NULL, NULL);
}
