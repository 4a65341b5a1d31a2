/*
 * race_common.c: the race tests' shared scaffolding (race_common.h): the
 * scratch directory and its paths, running bin/calhost on the test's
 * configuration, writing it, making the test model, opening the runtime
 * and rigging the races a store records.
 */
#include "race_common.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

char race_build[1024];
const char *race_dir;
char race_cfg[512], race_store[512], race_model[512];

static const char *const *race_env;

int race_setup(const char *tag, const char *const *env) {
  const char *b = getenv("CALHOST_BUILD_DIR");
  snprintf(race_build, sizeof race_build, "%s", b ? b : ".");
  race_env = env;
  race_dir = harness_scratch(tag);
  if (!race_dir)
    return -1;
  snprintf(race_cfg, sizeof race_cfg, "%s/calhost.ini", race_dir);
  snprintf(race_store, sizeof race_store, "%s/store.txt", race_dir);
  snprintf(race_model, sizeof race_model, "%s/pair.onnx", race_dir);
  return 0;
}

int race_teardown(void **state) {
  (void)state;
  return harness_scratch_remove();
}

int race_run(char **out, char **err, const char *const *args) {
  harness_opts o = {.cwd = race_dir,
                    .xdg_cache_home = race_dir,
                    .merge_output = err == NULL,
                    .timeout_s = 600,
                    .env = race_env};
  harness_result r = {0};
  int code = harness_run_config(&o, &r, race_cfg, args);
  *out = r.out;
  r.out = NULL;
  if (err) {
    *err = r.err;
    r.err = NULL;
  }
  harness_result_free(&r);
  return code;
}

int race_write_config(const char *fmt, ...) {
  FILE *f = fopen(race_cfg, "w");
  if (!f)
    return -1;
  fprintf(f, "[store]\npath = %s\n", race_store);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  return fclose(f) == 0 ? 0 : -1;
}

int race_make_model(void) {
  const char *src = getenv("CALHOST_SOURCE_DIR");
  char cmd[2400];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/race/make_model.py' '%s'", src ? src : ".",
           race_model);
  return system(cmd) == 0 ? 0 : -1;
}

calhost_runtime *race_runtime_open(const char *device, const calhost_runtime_model **model) {
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = race_cfg;
  o.device = device;
  calhost_runtime *rt = NULL;
  char err[2048];
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
  if (model)
    assert_int_equal(calhost_runtime_add_model(rt, race_model, NULL, model, err, sizeof err),
                     CALHOST_RUNTIME_OK);
  return rt;
}

/* ---- rigging a store's races -------------------------------------------- */

typedef struct rig {
  int raced_only;
  race_rig_fn fn;
  void *user;
  calstore_batch *b;
  size_t put;
} rig;

static int rig_visit(void *user, const calstore_profile *p) {
  rig *c = user;
  runtime_race old;
  int raced = runtime_race_read(p, &old);
  if (p->key.kind != CALSTORE_KEY_EXACT || (c->raced_only && !raced))
    return 0;
  calstore_profile q = *p;
  runtime_race r = {.default_us = NAN};
  if (!c->fn(c->user, p, &old, &r, &q))
    return 0;
  /* room for all the profile's own measurements and the new race's */
  calstore_measurement *m = calloc(p->measurement_count + RUNTIME_RACE_MEASUREMENTS, sizeof *m);
  assert_non_null(m);
  size_t n = runtime_race_strip(p->measurements, p->measurement_count, m);
  runtime_race_append(&r, m, &n);
  q.measurements = m;
  q.measurement_count = n;
  assert_int_equal(calstore_batch_put(c->b, &q, NULL), CALSTORE_OK);
  free(m);
  c->put++;
  return 0;
}

size_t race_rig(const char *dest, int raced_only, race_rig_fn fn, void *user) {
  calstore_options so;
  calstore_options_init(&so);
  so.path = dest;
  calstore *s = NULL;
  assert_int_equal(calstore_open(&so, &s, NULL), CALSTORE_OK);
  rig c = {raced_only, fn, user, NULL, 0};
  assert_int_equal(calstore_batch_begin(s, &c.b, NULL), CALSTORE_OK);
  assert_int_equal(calstore_read_file(race_store, rig_visit, &c, NULL, NULL, NULL), CALSTORE_OK);
  assert_int_equal(calstore_batch_commit(&c.b, NULL), CALSTORE_OK);
  calstore_close(&s);
  return c.put;
}

typedef struct first_ctx {
  const char *first;
  uint32_t rounds;
} first_ctx;

static int first_fill(void *user, const calstore_profile *p, const runtime_race *old,
                      runtime_race *r, calstore_profile *q) {
  (void)q;
  const first_ctx *c = user;
  int won = !strcmp(p->key.backend, c->first);
  *r = (runtime_race){.id = old->id,
                      .latency_us = won ? 10.0 : 30.0,
                      .default_us = 40.0,
                      .entrants = 2,
                      .rank = won ? 1u : 2u};
  if (c->rounds) {
    r->rounds = c->rounds;
    r->dropped = !won;
  }
  return 1;
}

size_t race_rig_first(const char *first, uint32_t rounds) {
  first_ctx c = {first, rounds};
  return race_rig(race_store, 1, first_fill, &c);
}
