/*
 * test_binding_build_key.c: runtime_binding_build_key (host/runtime/binding.h),
 * the host's one way to build and judge a key, over an in-process fake
 * plugin (a loader record with its own build_key and the loader's
 * services): every answer (usable; build_key unsupported or failed, with
 * and without a message; each defect of the key; a second call that gives
 * another key or fails; structure properties in another order), what it
 * leaves in *out, *status, why and the plugin's error slot, and how many
 * times it calls the plugin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "runtime/binding.h"

/* What the fake build_key does at each call. */
typedef enum fake_mode {
  FAKE_GOOD,             /* the same complete key every call */
  FAKE_UNSUPPORTED,      /* CALHOST_UNSUPPORTED, saying why */
  FAKE_ERROR_SILENT,     /* CALHOST_ERROR without a message */
  FAKE_NO_DIGEST,        /* an exact key without a model digest */
  FAKE_NO_PROCESSOR,     /* ... without a processor */
  FAKE_NO_THREADS,       /* ... thread count 0 */
  FAKE_NO_STRUCTURE,     /* no structure property */
  FAKE_EMPTY_PROPERTY,   /* a property with a NULL value */
  FAKE_PROCESSOR_VARIES, /* the processor changes at every call */
  FAKE_FAILS_SECOND,     /* a key, then CALHOST_ERROR saying why */
  FAKE_REORDERED,        /* the same properties, in another order the second time */
} fake_mode;

struct calhost_plugin_instance {
  const calhost_host_services *host;
  fake_mode mode;
  int calls;
  char processor[32];
  calhost_property structure[2];
};

static calhost_status fake_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                     const calhost_target *t, calhost_built_key *out) {
  int call = ++inst->calls;
  if (inst->mode == FAKE_UNSUPPORTED) {
    inst->host->set_error(inst->host->context, "no such shape here");
    return CALHOST_UNSUPPORTED;
  }
  if (inst->mode == FAKE_ERROR_SILENT)
    return CALHOST_ERROR;
  if (inst->mode == FAKE_FAILS_SECOND && call == 2) {
    inst->host->set_error(inst->host->context, "tired");
    return CALHOST_ERROR;
  }
  snprintf(inst->processor, sizeof inst->processor, "%s", t->processor);
  if (inst->mode == FAKE_PROCESSOR_VARIES)
    snprintf(inst->processor, sizeof inst->processor, "cpu call %d", call);
  int swap = inst->mode == FAKE_REORDERED && call == 2;
  inst->structure[swap] = (calhost_property){"operator", w->operator_name};
  inst->structure[!swap] = (calhost_property){"size", "4096"};
  out->model_digest = inst->mode == FAKE_NO_DIGEST ? NULL : w->model_digest;
  out->processor = inst->mode == FAKE_NO_PROCESSOR ? "" : inst->processor;
  out->thread_count = inst->mode == FAKE_NO_THREADS ? 0 : t->thread_count;
  out->structure = inst->mode == FAKE_NO_STRUCTURE ? NULL : inst->structure;
  out->structure_count = inst->mode == FAKE_NO_STRUCTURE ? 0 : 2;
  if (inst->mode == FAKE_EMPTY_PROPERTY)
    inst->structure[1].value = NULL;
  return CALHOST_OK;
}

typedef struct fixture {
  loader_plugin p;
  calhost_plugin_instance inst;
  calhost_workload w;
  calhost_target t;
} fixture;

static fixture g;

static void fake_init(fake_mode mode) {
  memset(&g, 0, sizeof g);
  g.p.loaded = 1;
  g.p.backend = "fake";
  g.p.vtable.build_key = fake_build_key;
  loader_services_init(&g.p.services, &g.p.services_ctx, NULL, "fake");
  g.inst.host = &g.p.services;
  g.inst.mode = mode;
  g.w.header = (calhost_struct_header){CALHOST_STRUCT_WORKLOAD, 1, sizeof g.w};
  g.w.name = "w";
  g.w.operator_name = "ReduceSum";
  g.w.model_digest = "sha256:feed";
  g.t.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof g.t};
  g.t.processor = "test cpu";
  g.t.thread_count = 2;
}

/* Calls the binding on the fake with check_twice; why gets the detail. */
static runtime_binding_key_defect build(int check_twice, calhost_built_key *k, calhost_status *st,
                                        char *why, size_t cap) {
  memset(why, 'x', cap); /* written in full by every answer */
  why[cap - 1] = '\0';
  return runtime_binding_build_key(&g.p, &g.inst, &g.w, &g.t, check_twice, k, st, why, cap);
}

static void a_usable_key_is_built_once_or_twice_and_returned(void **state) {
  (void)state;
  calhost_built_key k;
  calhost_status st = CALHOST_ERROR;
  char why[256];
  fake_init(FAKE_GOOD);
  assert_int_equal(build(0, &k, &st, why, sizeof why), RUNTIME_BINDING_KEY_USABLE);
  assert_int_equal(g.inst.calls, 1);
  assert_int_equal(st, CALHOST_OK);
  assert_string_equal(why, "");
  assert_int_equal(k.header.struct_type, CALHOST_STRUCT_BUILT_KEY);
  assert_string_equal(k.model_digest, "sha256:feed");
  assert_string_equal(k.processor, "test cpu");
  assert_int_equal(k.thread_count, 2);
  assert_int_equal(k.structure_count, 2);
  assert_int_equal(build(1, &k, &st, why, sizeof why), RUNTIME_BINDING_KEY_USABLE);
  assert_int_equal(g.inst.calls, 3); /* checked twice */
  assert_string_equal(why, "");
  assert_string_equal(k.processor, "test cpu");
  /* status and why may be NULL */
  assert_int_equal(runtime_binding_build_key(&g.p, &g.inst, &g.w, &g.t, 1, &k, NULL, NULL, 0),
                   RUNTIME_BINDING_KEY_USABLE);
}

static void build_key_failures_carry_the_plugins_message(void **state) {
  (void)state;
  calhost_built_key k;
  calhost_status st = CALHOST_OK;
  char why[256];
  fake_init(FAKE_UNSUPPORTED);
  assert_int_equal(build(1, &k, &st, why, sizeof why), RUNTIME_BINDING_KEY_UNSUPPORTED);
  assert_int_equal(st, CALHOST_UNSUPPORTED);
  assert_string_equal(why, "no such shape here");
  assert_int_equal(g.inst.calls, 1);
  assert_null(loader_plugin_take_error(&g.p)); /* taken */
  fake_init(FAKE_ERROR_SILENT);
  assert_int_equal(build(1, &k, &st, why, sizeof why), RUNTIME_BINDING_KEY_BUILD_FAILED);
  assert_int_equal(st, CALHOST_ERROR);
  assert_string_equal(why, "");
  /* a message longer than why is cut, NUL-terminated */
  fake_init(FAKE_UNSUPPORTED);
  char small[8];
  assert_int_equal(build(0, &k, &st, small, sizeof small), RUNTIME_BINDING_KEY_UNSUPPORTED);
  assert_string_equal(small, "no such");
}

static void each_defect_of_a_key_is_named_and_not_built_again(void **state) {
  (void)state;
  static const struct {
    fake_mode mode;
    runtime_binding_key_defect defect;
    const char *why;
  } cases[] = {
      {FAKE_NO_DIGEST, RUNTIME_BINDING_KEY_NO_MODEL_DIGEST,
       "build_key returned an incomplete exact key"},
      {FAKE_NO_PROCESSOR, RUNTIME_BINDING_KEY_NO_PROCESSOR,
       "build_key returned an incomplete exact key"},
      {FAKE_NO_THREADS, RUNTIME_BINDING_KEY_NO_THREADS,
       "build_key returned an incomplete exact key"},
      {FAKE_NO_STRUCTURE, RUNTIME_BINDING_KEY_NO_STRUCTURE,
       "build_key returned no portable structure"},
      {FAKE_EMPTY_PROPERTY, RUNTIME_BINDING_KEY_EMPTY_PROPERTY,
       "build_key returned an empty structure property"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    calhost_built_key k;
    calhost_status st = CALHOST_ERROR;
    char why[256], usable[256];
    fake_init(cases[i].mode);
    assert_int_equal(build(1, &k, &st, why, sizeof why), cases[i].defect);
    assert_int_equal(st, CALHOST_OK);
    assert_string_equal(why, cases[i].why);
    assert_int_equal(g.inst.calls, 1); /* an unusable key is not compared */
    /* the same words as the run's rule of a usable key */
    assert_int_equal(runtime_binding_key_usable(&k, usable, sizeof usable), 0);
    assert_string_equal(why, usable);
  }
}

static void a_key_that_changes_is_not_deterministic(void **state) {
  (void)state;
  calhost_built_key k;
  calhost_status st = CALHOST_ERROR;
  char why[256];
  fake_init(FAKE_PROCESSOR_VARIES);
  assert_int_equal(build(0, &k, &st, why, sizeof why), RUNTIME_BINDING_KEY_USABLE);
  fake_init(FAKE_PROCESSOR_VARIES);
  assert_int_equal(build(1, &k, &st, why, sizeof why), RUNTIME_BINDING_KEY_NOT_DETERMINISTIC);
  assert_int_equal(g.inst.calls, 2);
  assert_int_equal(st, CALHOST_OK);
  assert_string_equal(why, "processor 'cpu call 1', then 'cpu call 2'");
  assert_string_equal(k.processor, "cpu call 2"); /* the key as last built */
}

static void a_second_call_that_fails_is_a_difference(void **state) {
  (void)state;
  calhost_built_key k;
  calhost_status st = CALHOST_OK;
  char why[256];
  fake_init(FAKE_FAILS_SECOND);
  assert_int_equal(build(1, &k, &st, why, sizeof why), RUNTIME_BINDING_KEY_NOT_DETERMINISTIC);
  assert_int_equal(st, CALHOST_ERROR); /* the second call's status */
  assert_string_equal(why, "a key, then a failure");
  /* the second call's message is left for the caller's wording */
  const char *m = loader_plugin_take_error(&g.p);
  assert_non_null(m);
  assert_string_equal(m, "tired");
}

static void structure_properties_compare_in_any_order(void **state) {
  (void)state;
  calhost_built_key k;
  calhost_status st;
  char why[256];
  fake_init(FAKE_REORDERED);
  assert_int_equal(build(1, &k, &st, why, sizeof why), RUNTIME_BINDING_KEY_USABLE);
  assert_int_equal(g.inst.calls, 2);
  assert_string_equal(k.structure[0].name, "size"); /* the second call's order */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_usable_key_is_built_once_or_twice_and_returned),
      cmocka_unit_test(build_key_failures_carry_the_plugins_message),
      cmocka_unit_test(each_defect_of_a_key_is_named_and_not_built_again),
      cmocka_unit_test(a_key_that_changes_is_not_deterministic),
      cmocka_unit_test(a_second_call_that_fails_is_a_difference),
      cmocka_unit_test(structure_properties_compare_in_any_order),
  };
  return cmocka_run_group_tests_name("runtime_binding", tests, NULL, NULL);
}
