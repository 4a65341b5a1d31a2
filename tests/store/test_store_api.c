/*
 * test_store_api.c: the store's behaviour through its public API: keys and
 * values it refuses, the serializer/validator contract, round trips across
 * instances and processes, lookup precedence, force_portable, rejections,
 * invalidation, overrides, batches, disabled persistence, default path.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <sys/wait.h>

#include "util.h"

typedef struct fixture {
  char *dir;
  char *path;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = tu_mkdtemp();
  f->path = tu_path(f->dir, "profiles.txt");
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  tu_rmtree(f->dir);
  free(f->dir);
  free(f->path);
  free(f);
  return 0;
}

static const calstore_property S16[] = {{"shape", "m,n,4096"}, {"dtype", "float16"}};
static const calstore_property S32[] = {{"dtype", "float32"}, {"shape", "m,n,4096"}};

static calstore_lookup_options lookup_opts(const char *impl) {
  calstore_lookup_options o = {0};
  o.backend = "gpu";
  o.operator_name = "MatMul";
  o.implementation = impl;
  o.model_digest = "sha256:ab12";
  o.processor = "x86:l2=1M";
  o.thread_count = 8;
  o.structure = S16;
  o.structure_count = 2;
  return o;
}

static const char *lookup_policy(calstore *s, const calstore_lookup_options *o,
                                 calstore_level *level) {
  static char buf[256];
  calstore_lookup_result *r = NULL;
  calstore_error err = {0};
  calstore_status st = calstore_lookup(s, o, NULL, NULL, &r, &err);
  assert_non_null(r);
  *level = r->level;
  if (st != CALSTORE_OK) {
    assert_int_equal(st, CALSTORE_NOT_FOUND);
    assert_null(r->profile);
    calstore_lookup_result_free(&r);
    return NULL;
  }
  snprintf(buf, sizeof buf, "%s", r->profile->policy);
  calstore_lookup_result_free(&r);
  assert_null(r);
  return buf;
}

/* ---- refusals ------------------------------------------------------------ */

static void bad_keys_are_refused(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_key k;
  k = tu_exact(NULL, "3", "d", "p", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  k = tu_exact("gpu", "3", NULL, "p", 8); /* incomplete */
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  k = tu_exact("gpu", "3", "d", "", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  k = tu_exact("gpu", "3", "d", "p", 0);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  k = tu_exact("gpu", "3", "d", "p", 8); /* mixed: exact with structure */
  k.structure = S16;
  k.structure_count = 2;
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  k = tu_portable("gpu", "3", S16, 2); /* mixed: portable with a digest */
  k.model_digest = "d";
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  k = tu_portable("gpu", "3", S16, 2);
  k.thread_count = 4;
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  k = tu_portable("gpu", "3", NULL, 0); /* no structure */
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  calstore_property dup[] = {{"a", "1"}, {"a", "2"}};
  k = tu_portable("gpu", "3", dup, 2);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  k = tu_exact("gpu", "3", "d", "p", 8);
  k.kind = (calstore_key_kind)9;
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(tu_store(NULL, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_count(s), 0);
  assert_false(tu_exists(f->path)); /* nothing was written */
  calstore_close(&s);
  assert_null(s);
  calstore_close(&s); /* NULL-safe */
}

/* What each refusal of a key, a measurement, a policy or a queued profile
 * says (the store keeps nothing of a refused call). */
static void each_refused_part_says_what_is_wrong(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_property no_value[] = {{"m", NULL}};
  calstore_property broken[] = {{"m\nn", "1"}};
  calstore_property one[] = {{"m", "1"}};
  static const struct {
    calstore_key key;
    const char *says;
  } keys[] = {
      {{CALSTORE_KEY_EXACT, "gpu", NULL, "1", "d", "p", 1, NULL, 0}, "operator_name"},
      {{CALSTORE_KEY_EXACT, "gpu", "MatMul", "1", "d", "p", 1, NULL, 1}, "structural"},
      {{CALSTORE_KEY_PORTABLE, "gpu", "MatMul", "1", "d", NULL, 0, NULL, 0}, NULL},
  };
  calstore_error err = {0};
  tu_policy pol = {"x", 0, 0};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    calstore_status st =
        calstore_store(s, &keys[i].key, NULL, 0, tu_serialize, &pol, NULL, NULL, &err);
    if (st != CALSTORE_INVALID_ARGUMENT || (keys[i].says && !strstr(err.message, keys[i].says)))
      fail_msg("key %zu: %s (%s)", i, calstore_status_name(st), err.message);
  }
  calstore_key portable = tu_portable("gpu", "1", one, 1);
  portable.model_digest = "d"; /* a portable key carries no exact field */
  assert_int_equal(calstore_store(s, &portable, NULL, 0, tu_serialize, &pol, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  calstore_key k = tu_portable("gpu", "1", no_value, 1);
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &pol, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "no name or value"));
  k = tu_portable("gpu", "1", broken, 1);
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &pol, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "line break"));
  k = tu_exact("gpu", "1", "d", "p", 1);
  calstore_measurement m[] = {{"a\nb", 1, "us"}};
  assert_int_equal(calstore_store(s, &k, m, 1, tu_serialize, &pol, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "line break"));
  tu_policy empty = {"x", 0, 0};
  empty.text = "";
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &empty, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "the policy is empty"));
  /* a queued profile: its source must be one of the two; its length may be
   * left 0 (the policy's strlen) */
  calstore_batch *b = NULL;
  assert_int_equal(calstore_batch_begin(s, &b, NULL), CALSTORE_OK);
  calstore_profile put = {k, (calstore_source)0, NULL, 0, "x", 1};
  assert_int_equal(calstore_batch_put(b, &put, &err), CALSTORE_INVALID_ARGUMENT);
  put.source = CALSTORE_SOURCE_OVERRIDE;
  put.policy_length = 0;
  assert_int_equal(calstore_batch_put(b, &put, &err), CALSTORE_OK);
  assert_int_equal(calstore_batch_commit(&b, &err), CALSTORE_OK);
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_get(s, &k, CALSTORE_SOURCE_OVERRIDE, &r, NULL), CALSTORE_OK);
  assert_int_equal(r->profile->policy_length, 1);
  calstore_lookup_result_free(&r);
  assert_int_equal(calstore_count(s), 1);
  /* a lookup without an operator or an implementation, or with a NULL value */
  calstore_lookup_options o = {"gpu", NULL, "1", "d", "p", 1, NULL, 0, 0};
  assert_int_equal(calstore_lookup(s, &o, NULL, NULL, &r, &err), CALSTORE_INVALID_ARGUMENT);
  o.operator_name = "MatMul";
  o.implementation = NULL;
  assert_int_equal(calstore_select(s, &o, NULL, NULL, &r, &err), CALSTORE_INVALID_ARGUMENT);
  o.implementation = "1";
  o.structure = no_value;
  o.structure_count = 1;
  assert_int_equal(calstore_lookup(s, &o, NULL, NULL, &r, &err), CALSTORE_INVALID_ARGUMENT);
  assert_null(r);
  calstore_close(&s);
}

/* A validator that refuses every policy and says nothing. */
static int refuse_silently(void *user, const char *policy, size_t length, char *err, size_t cap) {
  (void)user, (void)policy, (void)length, (void)err, (void)cap;
  return 0;
}

/* A visit that counts. */
static int count_profiles(void *user, const calstore_profile *p) {
  (void)p;
  ++*(size_t *)user;
  return 0;
}

/* The documented answers at the edges of the arguments: an exact level is
 * consulted only with model_digest, processor and thread_count >= 1 (the
 * others walk the portable levels and their rejections say "(none)"), a
 * structure of other names differs, an empty backend is refused, a store's
 * silent validator is "no reason given", a hole left by a clear is skipped by
 * inspect, and the file readers work without a diagnostic callback. */
static void edge_arguments_give_their_documented_answers(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_property a1[] = {{"a", "1"}}, b1[] = {{"b", "1"}};
  calstore_key e = tu_exact("gpu", "1", "d", "p", 4), pk = tu_portable("gpu", "1", a1, 1);
  assert_int_equal(tu_store(s, &e, "exact", 1), CALSTORE_OK);
  assert_int_equal(tu_store(s, &pk, "portable", 1), CALSTORE_OK);
  calstore_lookup_result *r = NULL;
  calstore_lookup_options no_proc = {"gpu", "MatMul", "1", "d", NULL, 4, a1, 1, 0};
  assert_int_equal(calstore_lookup(s, &no_proc, NULL, NULL, &r, NULL), CALSTORE_OK);
  assert_int_equal(r->level, CALSTORE_LEVEL_PORTABLE_CALIBRATED);
  assert_int_equal(r->rejection_count, 1); /* the exact one: processor "(none)" */
  assert_non_null(strstr(r->rejections[0].message, "(none)"));
  calstore_lookup_result_free(&r);
  calstore_lookup_options no_threads = {"gpu", "MatMul", "1", "d", "p", 0, a1, 1, 0};
  assert_int_equal(calstore_lookup(s, &no_threads, NULL, NULL, &r, NULL), CALSTORE_OK);
  assert_int_equal(r->level, CALSTORE_LEVEL_PORTABLE_CALIBRATED);
  calstore_lookup_result_free(&r);
  calstore_lookup_options other = {"gpu", "MatMul", "1", NULL, NULL, 0, b1, 1, 0};
  assert_int_equal(calstore_lookup(s, &other, NULL, NULL, &r, NULL), CALSTORE_NOT_FOUND);
  int structure = 0;
  for (size_t i = 0; i < r->rejection_count; i++)
    structure += r->rejections[i].reason == CALSTORE_REJECT_DIFFERENT_STRUCTURE;
  assert_int_equal(structure, 1);
  calstore_lookup_result_free(&r);
  calstore_error err = {0};
  assert_int_equal(calstore_invalidate(s, "", NULL, NULL, &err), CALSTORE_INVALID_ARGUMENT);
  tu_policy p = {"x", 0, 0};
  calstore_key k2 = tu_exact("gpu", "1", "d2", "p", 4);
  assert_int_equal(calstore_store(s, &k2, NULL, 0, tu_serialize, &p, refuse_silently, NULL, &err),
                   CALSTORE_POLICY_REJECTED);
  assert_non_null(strstr(err.message, "no reason given"));
  /* a hole: three profiles, one override cleared */
  assert_int_equal(tu_override(s, &k2, "o"), CALSTORE_OK);
  assert_int_equal(calstore_clear_override(s, &k2, NULL), CALSTORE_OK);
  size_t visits = 0;
  assert_int_equal(calstore_inspect(s, count_profiles, &visits), CALSTORE_OK);
  assert_int_equal(visits, 2);
  calstore_close(&s);
  /* the readers without a diagnostic callback */
  char *missing = tu_path(f->dir, "missing.txt");
  assert_int_equal(calstore_read_file(missing, NULL, NULL, NULL, NULL, NULL), CALSTORE_NOT_FOUND);
  free(missing);
  assert_int_equal(calstore_read_buffer(NULL, 0, NULL, NULL, NULL, NULL, NULL),
                   CALSTORE_MALFORMED); /* empty: no header */
  assert_int_equal(calstore_read_buffer(NULL, 1, NULL, NULL, NULL, NULL, NULL),
                   CALSTORE_INVALID_ARGUMENT);
}

/* A portable key of more than 16 properties (past the lookups' stack
 * copy): stored, found in any order, by get too, and a structure that
 * differs in one value is a rejection naming both structures. */
static void a_wide_structure_is_stored_and_found_in_any_order(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  enum { N = 24 };
  char names[N][8], values[N][24];
  calstore_property wide[N], reversed[N];
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "p%02d", i);
    snprintf(values[i], sizeof values[i], "%d-of-a-long-value", i * 3); /* past 384 bytes */
    wide[i] = (calstore_property){names[i], values[i]};
    reversed[N - 1 - i] = wide[i];
  }
  calstore_key k = tu_portable("gpu", "1", reversed, N);
  assert_int_equal(tu_store(s, &k, "wide", 1), CALSTORE_OK);
  calstore_lookup_options o = {"gpu", "MatMul", "1", NULL, NULL, 0, wide, N, 0};
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_lookup(s, &o, NULL, NULL, &r, NULL), CALSTORE_OK);
  assert_string_equal(r->profile->policy, "wide");
  assert_int_equal(r->profile->key.structure_count, N);
  assert_string_equal(r->profile->key.structure[0].name, "p00"); /* sorted by name */
  calstore_lookup_result_free(&r);
  k.structure = wide;
  assert_int_equal(calstore_get(s, &k, CALSTORE_SOURCE_CALIBRATED, &r, NULL), CALSTORE_OK);
  calstore_lookup_result_free(&r);
  /* an override of it, validated without a reason given: refused */
  assert_int_equal(tu_override(s, &k, "wide-override"), CALSTORE_OK);
  assert_int_equal(calstore_get(s, &k, CALSTORE_SOURCE_OVERRIDE, &r, NULL), CALSTORE_OK);
  assert_int_equal(r->level, CALSTORE_LEVEL_PORTABLE_OVERRIDE);
  calstore_lookup_result_free(&r);
  assert_int_equal(calstore_lookup(s, &o, refuse_silently, NULL, &r, NULL), CALSTORE_NOT_FOUND);
  assert_int_equal(r->rejection_count, 2);
  assert_non_null(strstr(r->rejections[0].message, "no reason given"));
  calstore_lookup_result_free(&r);
  assert_int_equal(calstore_clear_override(s, &k, NULL), CALSTORE_OK);
  char other[8] = "999";
  wide[N - 1].value = other;
  assert_int_equal(calstore_lookup(s, &o, NULL, NULL, &r, NULL), CALSTORE_NOT_FOUND);
  assert_int_equal(r->rejection_count, 1);
  assert_int_equal(r->rejections[0].reason, CALSTORE_REJECT_DIFFERENT_STRUCTURE);
  assert_non_null(strstr(r->rejections[0].message, "wanted"));
  calstore_lookup_result_free(&r);
  calstore_close(&s);
}

static void unrepresentable_values_are_refused(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_error err = {0};
  calstore_key k = tu_exact("gpu", "3", "d", "line\nbreak", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  /* a CR is carried (issue 22 item 33: both readers load it): stored, and
   * read back from the file as it was */
  k = tu_exact("gpu\r", "3", "d", "p", 8);
  char *cr_path = tu_path(f->dir, "cr.txt");
  calstore *cr = tu_open(cr_path, NULL);
  assert_int_equal(tu_store(cr, &k, "x\ry", 1), CALSTORE_OK);
  calstore_close(&cr);
  calstore *again = tu_open(cr_path, NULL);
  calstore_lookup_result *got = NULL;
  assert_int_equal(calstore_get(again, &k, CALSTORE_SOURCE_CALIBRATED, &got, NULL), CALSTORE_OK);
  assert_string_equal(got->profile->policy, "x\ry");
  calstore_lookup_result_free(&got);
  calstore_close(&again);
  free(cr_path);
  calstore_property nl[] = {{"dtype", "a\nb"}};
  k = tu_portable("gpu", "3", nl, 1);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_INVALID_ARGUMENT);
  k = tu_exact("gpu", "3", "d", "p", 8);
  /* policies: line break, NUL inside, empty */
  tu_policy p = {"two\nlines", 0, 0};
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "line break"));
  tu_policy pn = {"a\0b", 3, 0};
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &pn, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "NUL"));
  tu_policy pe = {"", 0, 0};
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &pe, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  /* measurements: non-finite, empty name, NULL unit, line break */
  tu_policy ok = {"fine", 0, 0};
  calstore_measurement m1[] = {{"lat", NAN, "us"}};
  assert_int_equal(calstore_store(s, &k, m1, 1, tu_serialize, &ok, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "finite"));
  calstore_measurement m2[] = {{"lat", INFINITY, "us"}};
  assert_int_equal(calstore_store(s, &k, m2, 1, tu_serialize, &ok, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  calstore_measurement m3[] = {{"", 1, "us"}};
  assert_int_equal(calstore_store(s, &k, m3, 1, tu_serialize, &ok, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  calstore_measurement m4[] = {{"lat", 1, NULL}};
  assert_int_equal(calstore_store(s, &k, m4, 1, tu_serialize, &ok, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  calstore_measurement m5[] = {{"lat", 1, "u\ns"}};
  assert_int_equal(calstore_store(s, &k, m5, 1, tu_serialize, &ok, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  /* serializer failure and missing serializer */
  tu_policy none = {NULL, 0, 0};
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &none, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "test serializer has no policy"));
  assert_int_equal(calstore_store(s, &k, NULL, 0, NULL, NULL, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_count(s), 0);
  assert_false(tu_exists(f->path));
  calstore_close(&s);
}

static void store_serializes_once_and_runs_the_validator(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_error err = {0};
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  calstore_measurement m[] = {{"median_latency", 2.5, "us"}, {"gflops", 1e3, "GFLOP/s"}};
  tu_policy p = {"tile=64", 0, 0};
  tu_validator v = {NULL, 0};
  assert_int_equal(calstore_store(s, &k, m, 2, tu_serialize, &p, tu_validate, &v, &err),
                   CALSTORE_OK);
  assert_int_equal(p.calls, 1);
  assert_int_equal(v.calls, 1);
  /* a refused policy is not stored and the status carries the backend's message */
  tu_policy bad = {"tile=BAD", 0, 0};
  tu_validator refuse = {"BAD", 0};
  calstore_key k2 = tu_exact("gpu", "3", "d2", "p", 8);
  assert_int_equal(calstore_store(s, &k2, m, 2, tu_serialize, &bad, tu_validate, &refuse, &err),
                   CALSTORE_POLICY_REJECTED);
  assert_int_equal(err.status, CALSTORE_POLICY_REJECTED);
  assert_non_null(strstr(err.message, "policy contains 'BAD'"));
  assert_int_equal(bad.calls, 1);
  assert_int_equal(calstore_count(s), 1);
  /* overrides call the serializer once too */
  tu_policy o = {"user", 0, 0};
  assert_int_equal(calstore_install_override(s, &k, NULL, 0, tu_serialize, &o, NULL, NULL, &err),
                   CALSTORE_OK);
  assert_int_equal(o.calls, 1);
  assert_int_equal(calstore_count(s), 2);
  calstore_close(&s);
}

/* ---- round trips ----------------------------------------------------------- */

typedef struct collected {
  int n;
  char policies[16][64];
  double first_value;
  size_t first_nm;
  char first_unit[32];
} collected;

static int collect(void *user, const calstore_profile *p) {
  collected *c = user;
  if (c->n == 0) {
    c->first_nm = p->measurement_count;
    c->first_value = p->measurement_count ? p->measurements[0].value : 0;
    snprintf(c->first_unit, sizeof c->first_unit, "%s",
             p->measurement_count ? p->measurements[0].unit : "");
  }
  if (c->n < 16)
    snprintf(c->policies[c->n], sizeof c->policies[0], "%s", p->policy);
  c->n++;
  return 0;
}

static void profiles_round_trip_between_instances(void **state) {
  fixture *f = *state;
  calstore *a = tu_open(f->path, NULL);
  calstore_key k = tu_exact("gpu", "3", "sha256:ab12", "x86:l2=1M", 8);
  calstore_key pk = tu_portable("gpu", "3", S16, 2);
  assert_int_equal(tu_store(a, &k, "say \"hi\" C:\\x", 0.1), CALSTORE_OK);
  assert_int_equal(tu_store(a, &pk, "portable", 3.25), CALSTORE_OK);
  assert_int_equal(tu_override(a, &k, "user"), CALSTORE_OK);
  calstore_status st;
  calstore *b = tu_open(f->path, &st);
  assert_int_equal(st, CALSTORE_OK);
  assert_int_equal(calstore_count(b), 3);
  collected c = {0};
  assert_int_equal(calstore_inspect(b, collect, &c), CALSTORE_OK);
  assert_int_equal(c.n, 3);
  assert_string_equal(c.policies[0], "say \"hi\" C:\\x");
  assert_string_equal(c.policies[1], "portable");
  assert_string_equal(c.policies[2], "user");
  assert_true(c.first_value == 0.1); /* %.17g round-trips exactly */
  assert_string_equal(c.first_unit, "us");
  /* replacing keeps one profile per identity and source, in place */
  assert_int_equal(tu_store(b, &k, "newer", 1), CALSTORE_OK);
  calstore_close(&b);
  b = tu_open(f->path, &st);
  memset(&c, 0, sizeof c);
  calstore_inspect(b, collect, &c);
  assert_int_equal(c.n, 3);
  assert_string_equal(c.policies[0], "newer");
  /* a stays stale until it reloads, then sees b's change */
  memset(&c, 0, sizeof c);
  calstore_inspect(a, collect, &c);
  assert_string_equal(c.policies[0], "say \"hi\" C:\\x");
  assert_int_equal(calstore_reload(a, NULL), CALSTORE_OK);
  memset(&c, 0, sizeof c);
  calstore_inspect(a, collect, &c);
  assert_string_equal(c.policies[0], "newer");
  /* a writer merges the latest file: a's write keeps b's change */
  calstore_key k2 = tu_exact("gpu", "3", "other", "x86:l2=1M", 8);
  calstore_close(&a);
  a = tu_open(f->path, NULL);
  assert_int_equal(tu_store(b, &k2, "from b", 1), CALSTORE_OK);
  calstore_key k3 = tu_exact("gpu", "3", "third", "x86:l2=1M", 8);
  assert_int_equal(tu_store(a, &k3, "from a", 1), CALSTORE_OK);
  assert_int_equal(calstore_count(a), 5);
  calstore_close(&b);
  b = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(b), 5);
  /* inspect stops when the visitor says so */
  calstore_close(&a);
  calstore_close(&b);
}

static int stop_at_first(void *user, const calstore_profile *p) {
  (void)p;
  (*(int *)user)++;
  return 1;
}

static void profiles_round_trip_between_processes(void **state) {
  fixture *f = *state;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    calstore *s = tu_open(f->path, NULL);
    calstore_key k = tu_exact("gpu", "3", "child", "p", 4);
    int rc = tu_store(s, &k, "from the child", 42) == CALSTORE_OK ? 0 : 1;
    calstore_close(&s);
    _exit(rc);
  }
  int status;
  waitpid(pid, &status, 0);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  calstore *s = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(s), 1);
  calstore_lookup_options o = {0};
  o.backend = "gpu";
  o.operator_name = "MatMul";
  o.implementation = "3";
  o.model_digest = "child";
  o.processor = "p";
  o.thread_count = 4;
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_lookup(s, &o, NULL, NULL, &r, NULL), CALSTORE_OK);
  assert_string_equal(r->profile->policy, "from the child");
  assert_int_equal(r->profile->measurement_count, 1);
  assert_true(r->profile->measurements[0].value == 42);
  calstore_lookup_result_free(&r);
  int visits = 0;
  calstore_inspect(s, stop_at_first, &visits);
  assert_int_equal(visits, 1);
  calstore_close(&s);
}

/* ---- lookup -------------------------------------------------------------- */

static void fill_four(calstore *s) {
  calstore_key k = tu_exact("gpu", "3", "sha256:ab12", "x86:l2=1M", 8);
  calstore_key pk = tu_portable("gpu", "3", S16, 2);
  assert_int_equal(tu_store(s, &k, "exact calibrated", 1), CALSTORE_OK);
  assert_int_equal(tu_store(s, &pk, "portable calibrated", 2), CALSTORE_OK);
  assert_int_equal(tu_override(s, &pk, "portable override"), CALSTORE_OK);
  assert_int_equal(tu_override(s, &k, "exact override"), CALSTORE_OK);
}

static void lookup_follows_the_four_level_precedence(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  fill_four(s);
  calstore_lookup_options o = lookup_opts("3");
  calstore_level level;
  calstore_key k = tu_exact("gpu", "3", "sha256:ab12", "x86:l2=1M", 8);
  calstore_key pk = tu_portable("gpu", "3", S16, 2);
  assert_string_equal(lookup_policy(s, &o, &level), "exact override");
  assert_int_equal(level, CALSTORE_LEVEL_EXACT_OVERRIDE);
  assert_int_equal(calstore_clear_override(s, &k, NULL), CALSTORE_OK);
  assert_string_equal(lookup_policy(s, &o, &level), "portable override");
  assert_int_equal(level, CALSTORE_LEVEL_PORTABLE_OVERRIDE);
  assert_int_equal(calstore_clear_override(s, &pk, NULL), CALSTORE_OK);
  assert_string_equal(lookup_policy(s, &o, &level), "exact calibrated");
  assert_int_equal(level, CALSTORE_LEVEL_EXACT_CALIBRATED);
  /* force_portable skips the exact level */
  o.force_portable = 1;
  assert_string_equal(lookup_policy(s, &o, &level), "portable calibrated");
  assert_int_equal(level, CALSTORE_LEVEL_PORTABLE_CALIBRATED);
  /* clear of a missing override */
  calstore_error err = {0};
  assert_int_equal(calstore_clear_override(s, &k, &err), CALSTORE_NOT_FOUND);
  /* without structure, only exact levels */
  o.force_portable = 0;
  o.structure_count = 0;
  assert_string_equal(lookup_policy(s, &o, &level), "exact calibrated");
  o.force_portable = 1;
  assert_null(lookup_policy(s, &o, &level));
  assert_int_equal(level, CALSTORE_LEVEL_NONE);
  calstore_close(&s);
}

static void force_portable_wins_over_an_exact_override(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  fill_four(s);
  calstore_lookup_options o = lookup_opts("3");
  o.force_portable = 1;
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_lookup(s, &o, NULL, NULL, &r, NULL), CALSTORE_OK);
  assert_int_equal(r->level, CALSTORE_LEVEL_PORTABLE_OVERRIDE);
  assert_string_equal(r->profile->policy, "portable override");
  size_t fp = 0;
  for (size_t i = 0; i < r->rejection_count; i++)
    if (r->rejections[i].reason == CALSTORE_REJECT_FORCE_PORTABLE) {
      fp++;
      assert_int_equal(r->rejections[i].profile.key.kind, CALSTORE_KEY_EXACT);
    }
  assert_int_equal(fp, 2); /* both exact profiles */
  calstore_lookup_result_free(&r);
  calstore_close(&s);
}

static void validator_rejection_falls_through_to_portable(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_key k = tu_exact("gpu", "3", "sha256:ab12", "x86:l2=1M", 8);
  calstore_key pk = tu_portable("gpu", "3", S16, 2);
  assert_int_equal(tu_store(s, &k, "exact BROKEN", 1), CALSTORE_OK);
  assert_int_equal(tu_store(s, &pk, "portable fine", 2), CALSTORE_OK);
  calstore_lookup_options o = lookup_opts("3");
  tu_validator v = {"BROKEN", 0};
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_lookup(s, &o, tu_validate, &v, &r, NULL), CALSTORE_OK);
  assert_int_equal(r->level, CALSTORE_LEVEL_PORTABLE_CALIBRATED);
  assert_string_equal(r->profile->policy, "portable fine");
  assert_int_equal(r->rejection_count, 1);
  assert_int_equal(r->rejections[0].reason, CALSTORE_REJECT_POLICY_REJECTED);
  assert_string_equal(r->rejections[0].profile.policy, "exact BROKEN");
  assert_non_null(strstr(r->rejections[0].message, "policy contains 'BROKEN'"));
  assert_int_equal(v.calls, 2);
  calstore_lookup_result_free(&r);
  /* everything refused: NOT_FOUND, the result still lists the rejections */
  tu_validator all = {"e", 0};
  assert_int_equal(calstore_lookup(s, &o, tu_validate, &all, &r, NULL), CALSTORE_NOT_FOUND);
  assert_non_null(r);
  assert_int_equal(r->status, CALSTORE_NOT_FOUND);
  assert_int_equal(r->rejection_count, 2);
  calstore_lookup_result_free(&r);
  calstore_close(&s);
}

/* Issue 22 item 33: the rejection list's order is calhost's documented
 * one (the reference's differs): the validator's refusals first, in the
 * walk's level order, then the other profiles of the backend and operator
 * in file order. */
static void rejections_come_in_the_documented_order(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_key other_impl = tu_exact("gpu", "2", "sha256:ab12", "x86:l2=1M", 8);
  calstore_key other_model = tu_exact("gpu", "3", "sha256:zz", "x86:l2=1M", 8);
  calstore_key exact = tu_exact("gpu", "3", "sha256:ab12", "x86:l2=1M", 8);
  calstore_key port = tu_portable("gpu", "3", S16, 2);
  /* file order: other_impl, port (refused), other_model, exact override (refused) */
  assert_int_equal(tu_store(s, &other_impl, "impl two", 1), CALSTORE_OK);
  assert_int_equal(tu_store(s, &port, "portable BAD", 1), CALSTORE_OK);
  assert_int_equal(tu_store(s, &other_model, "model zz", 1), CALSTORE_OK);
  assert_int_equal(tu_override(s, &exact, "override BAD"), CALSTORE_OK);
  calstore_lookup_options o = lookup_opts("3");
  tu_validator v = {"BAD", 0};
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_lookup(s, &o, tu_validate, &v, &r, NULL), CALSTORE_NOT_FOUND);
  static const char *const want[] = {"override BAD", "portable BAD", "impl two", "model zz"};
  assert_int_equal(r->rejection_count, 4);
  for (size_t i = 0; i < 4; i++)
    if (strcmp(r->rejections[i].profile.policy, want[i]))
      fail_msg("rejection %zu is '%s', want '%s'", i, r->rejections[i].profile.policy, want[i]);
  calstore_lookup_result_free(&r);
  calstore_close(&s);
}

static const calstore_rejection *find_rejection(const calstore_lookup_result *r,
                                                const char *policy) {
  for (size_t i = 0; i < r->rejection_count; i++)
    if (!strcmp(r->rejections[i].profile.policy, policy))
      return &r->rejections[i];
  return NULL;
}

static void each_rejected_level_gives_its_reason(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_key k;
  k = tu_exact("gpu", "2", "sha256:ab12", "x86:l2=1M", 8);
  assert_int_equal(tu_store(s, &k, "old impl", 1), CALSTORE_OK);
  k = tu_exact("gpu", "3", "other-model", "x86:l2=1M", 8);
  assert_int_equal(tu_store(s, &k, "model", 1), CALSTORE_OK);
  k = tu_exact("gpu", "3", "sha256:ab12", "arm", 8);
  assert_int_equal(tu_store(s, &k, "processor", 1), CALSTORE_OK);
  k = tu_exact("gpu", "3", "sha256:ab12", "x86:l2=1M", 4);
  assert_int_equal(tu_store(s, &k, "threads", 1), CALSTORE_OK);
  calstore_key pk = tu_portable("gpu", "3", S32, 2);
  assert_int_equal(tu_store(s, &pk, "structure", 1), CALSTORE_OK);
  /* the implementation is checked first, before the model */
  k = tu_exact("gpu", "1", "other-model", "arm", 2);
  assert_int_equal(tu_store(s, &k, "old and different", 1), CALSTORE_OK);
  /* other backends and operators are not reported */
  k = tu_exact("cpu", "3", "sha256:ab12", "x86:l2=1M", 8);
  assert_int_equal(tu_store(s, &k, "other backend", 1), CALSTORE_OK);
  k = tu_exact("gpu", "3", "sha256:ab12", "x86:l2=1M", 8);
  k.operator_name = "Conv";
  assert_int_equal(tu_store(s, &k, "other operator", 1), CALSTORE_OK);
  calstore_lookup_options o = lookup_opts("3");
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_lookup(s, &o, NULL, NULL, &r, NULL), CALSTORE_NOT_FOUND);
  assert_int_equal(r->rejection_count, 6);
  const struct {
    const char *policy;
    calstore_reject_reason reason;
    const char *msg;
  } want[] = {
      {"old impl", CALSTORE_REJECT_OUTDATED_IMPLEMENTATION, "implementation 2, wanted 3"},
      {"model", CALSTORE_REJECT_DIFFERENT_MODEL, "other-model"},
      {"processor", CALSTORE_REJECT_DIFFERENT_PROCESSOR, "arm"},
      {"threads", CALSTORE_REJECT_DIFFERENT_THREAD_COUNT, "thread_count 4, wanted 8"},
      {"structure", CALSTORE_REJECT_DIFFERENT_STRUCTURE, "float32"},
      {"old and different", CALSTORE_REJECT_OUTDATED_IMPLEMENTATION, "implementation 1"},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const calstore_rejection *j = find_rejection(r, want[i].policy);
    assert_non_null(j);
    assert_int_equal(j->reason, want[i].reason);
    assert_non_null(strstr(j->message, want[i].msg));
  }
  assert_null(find_rejection(r, "other backend"));
  assert_null(find_rejection(r, "other operator"));
  /* the result owns its data: it survives changes to and closing of the store */
  size_t removed = 0;
  assert_int_equal(calstore_invalidate(s, "gpu", NULL, &removed, NULL), CALSTORE_OK);
  assert_int_equal(removed, 7);
  calstore_close(&s);
  assert_string_equal(find_rejection(r, "model")->profile.key.model_digest, "other-model");
  assert_string_equal(find_rejection(r, "structure")->profile.key.structure[0].value, "float32");
  calstore_lookup_result_free(&r);
}

static void select_fast_path_agrees_with_the_full_lookup(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  fill_four(s);
  calstore_key k = tu_exact("gpu", "2", "sha256:ab12", "x86:l2=1M", 8);
  assert_int_equal(tu_store(s, &k, "old", 1), CALSTORE_OK);
  calstore_lookup_options o = lookup_opts("3");
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_select(s, &o, NULL, NULL, &r, NULL), CALSTORE_OK);
  assert_string_equal(r->profile->policy, "exact override");
  assert_int_equal(r->rejection_count, 0);
  calstore_lookup_result_free(&r);
  calstore_lookup_options bad = o;
  bad.backend = NULL;
  assert_int_equal(calstore_lookup(s, &bad, NULL, NULL, &r, NULL), CALSTORE_INVALID_ARGUMENT);
  assert_null(r);
  calstore_property dup[] = {{"a", "1"}, {"a", "2"}};
  bad = o;
  bad.structure = dup;
  bad.structure_count = 2;
  assert_int_equal(calstore_lookup(s, &bad, NULL, NULL, &r, NULL), CALSTORE_INVALID_ARGUMENT);
  calstore_close(&s);
}

/* ---- invalidation ---------------------------------------------------------- */

static void invalidate_removes_the_named_profiles(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_key k;
  for (int impl = 1; impl <= 3; impl++) {
    char v[8];
    snprintf(v, sizeof v, "%d", impl);
    k = tu_exact("gpu", v, "d", "p", 8);
    assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
    assert_int_equal(tu_override(s, &k, "o"), CALSTORE_OK);
    k = tu_exact("cpu", v, "d", "p", 8);
    assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  }
  size_t removed = 99;
  assert_int_equal(calstore_invalidate(s, "gpu", "2", &removed, NULL), CALSTORE_OK);
  assert_int_equal(removed, 2); /* both sources */
  assert_int_equal(calstore_count(s), 7);
  assert_int_equal(calstore_invalidate(s, "gpu", NULL, &removed, NULL), CALSTORE_OK);
  assert_int_equal(removed, 4);
  assert_int_equal(calstore_invalidate(s, "gpu", NULL, &removed, NULL), CALSTORE_OK);
  assert_int_equal(removed, 0);
  assert_int_equal(calstore_invalidate(s, NULL, NULL, &removed, NULL), CALSTORE_INVALID_ARGUMENT);
  calstore_close(&s);
  s = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(s), 3); /* persisted */
  calstore_close(&s);
}

/* ---- batches ----------------------------------------------------------------- */

static void a_batch_commits_all_or_nothing(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_batch *b = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_batch_begin(s, &b, &err), CALSTORE_OK);
  char digest[32];
  for (int i = 0; i < 100; i++) {
    snprintf(digest, sizeof digest, "model-%d", i);
    calstore_key k = tu_exact("gpu", "3", digest, "p", 8);
    tu_policy p = {"batched", 0, 0};
    calstore_measurement m[] = {{"lat", i, "us"}};
    assert_int_equal(calstore_batch_store(b, &k, m, 1, tu_serialize, &p, NULL, NULL, &err),
                     CALSTORE_OK);
    assert_int_equal(p.calls, 1);
  }
  /* a bad entry is refused at once; the rest is unaffected */
  calstore_key bad = tu_exact("gpu", "3", "d", NULL, 8);
  tu_policy p = {"x", 0, 0};
  assert_int_equal(calstore_batch_store(b, &bad, NULL, 0, tu_serialize, &p, NULL, NULL, &err),
                   CALSTORE_INVALID_ARGUMENT);
  calstore_key ok = tu_exact("gpu", "3", "model-0", "p", 8);
  assert_int_equal(
      calstore_batch_install_override(b, &ok, NULL, 0, tu_serialize, &p, NULL, NULL, &err),
      CALSTORE_OK);
  assert_int_equal(calstore_batch_size(b), 101);
  assert_int_equal(calstore_count(s), 0); /* nothing before commit */
  assert_false(tu_exists(f->path));
  assert_int_equal(calstore_batch_commit(&b, &err), CALSTORE_OK);
  assert_null(b);
  assert_int_equal(calstore_count(s), 101);
  /* a second batch: clear, invalidate an implementation, put */
  assert_int_equal(calstore_batch_begin(s, &b, &err), CALSTORE_OK);
  assert_int_equal(calstore_batch_clear_override(b, &ok, &err), CALSTORE_OK);
  assert_int_equal(calstore_batch_invalidate(b, "gpu", "3", &err), CALSTORE_OK);
  calstore_measurement m[] = {{"lat", 1, "us"}};
  calstore_key nk = tu_exact("gpu", "4", "m", "p", 8);
  calstore_profile prof = {nk, CALSTORE_SOURCE_CALIBRATED, m, 1, "imported", 8};
  assert_int_equal(calstore_batch_put(b, &prof, &err), CALSTORE_OK);
  prof.policy = "bad\npolicy";
  prof.policy_length = 10;
  assert_int_equal(calstore_batch_put(b, &prof, &err), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_batch_commit(&b, &err), CALSTORE_OK);
  calstore_close(&s);
  s = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(s), 1);
  /* abort drops everything */
  assert_int_equal(calstore_batch_begin(s, &b, &err), CALSTORE_OK);
  assert_int_equal(calstore_batch_invalidate(b, "gpu", NULL, &err), CALSTORE_OK);
  calstore_batch_abort(&b);
  assert_null(b);
  calstore_batch_abort(&b);
  assert_int_equal(calstore_count(s), 1);
  calstore_close(&s);
}

/* ---- disabled persistence ---------------------------------------------------- */

static void disabled_persistence_keeps_profiles_in_memory_only(void **state) {
  fixture *f = *state;
  char *sub = tu_path(f->dir, "never/created");
  char *path = tu_path(sub, "profiles.txt");
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  o.persistence_enabled = 0;
  calstore *s = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_OK);
  fill_four(s);
  calstore_lookup_options lo = lookup_opts("3");
  calstore_level level;
  assert_string_equal(lookup_policy(s, &lo, &level), "exact override");
  calstore_key k = tu_exact("gpu", "3", "sha256:ab12", "x86:l2=1M", 8);
  assert_int_equal(calstore_clear_override(s, &k, &err), CALSTORE_OK);
  assert_string_equal(lookup_policy(s, &lo, &level), "portable override");
  size_t removed;
  assert_int_equal(calstore_invalidate(s, "gpu", "3", &removed, &err), CALSTORE_OK);
  assert_int_equal(removed, 3);
  calstore_batch *b;
  assert_int_equal(calstore_batch_begin(s, &b, &err), CALSTORE_OK);
  assert_int_equal(calstore_batch_invalidate(b, "gpu", NULL, &err), CALSTORE_OK);
  assert_int_equal(calstore_batch_commit(&b, &err), CALSTORE_OK);
  assert_int_equal(calstore_reload(s, &err), CALSTORE_DISABLED);
  assert_int_equal(tu_store(s, &k, "again", 1), CALSTORE_OK);
  assert_int_equal(calstore_count(s), 1);
  assert_string_equal(calstore_path(s), path);
  char *parent = tu_path(f->dir, "never");
  assert_false(tu_exists(parent)); /* not even the directory */
  /* explicit export still works */
  char *out = tu_path(f->dir, "export.txt");
  assert_int_equal(calstore_export(s, out, &err), CALSTORE_OK);
  size_t n = 0;
  assert_int_equal(calstore_read_file(out, NULL, NULL, NULL, NULL, &n), CALSTORE_OK);
  assert_int_equal(n, 1);
  calstore_close(&s);
  assert_false(tu_exists(parent));
  /* a disabled store does not read an existing file either */
  tu_write(out, "garbage\n");
  o.path = out;
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_OK);
  assert_int_equal(calstore_count(s), 0);
  calstore_close(&s);
  free(out);
  free(parent);
  free(sub);
  free(path);
}

/* ---- default path ------------------------------------------------------------ */

static void default_path_follows_xdg_cache_home(void **state) {
  (void)state;
  char buf[512];
  const char *old_xdg = getenv("XDG_CACHE_HOME"), *old_home = getenv("HOME");
  char *sx = old_xdg ? strdup(old_xdg) : NULL, *sh = old_home ? strdup(old_home) : NULL;
  setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  assert_int_equal(calstore_default_path(buf, sizeof buf), CALSTORE_OK);
  assert_string_equal(buf, "/xdg/cache/calhost/profiles.txt");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  assert_int_equal(calstore_default_path(buf, sizeof buf), CALSTORE_OK);
  assert_string_equal(buf, "/home/u/.cache/calhost/profiles.txt");
  /* the XDG rule: a relative XDG_CACHE_HOME is ignored */
  setenv("XDG_CACHE_HOME", "relative/cache", 1);
  assert_int_equal(calstore_default_path(buf, sizeof buf), CALSTORE_OK);
  assert_string_equal(buf, "/home/u/.cache/calhost/profiles.txt");
  setenv("XDG_CACHE_HOME", "", 1);
  assert_int_equal(calstore_default_path(buf, sizeof buf), CALSTORE_OK);
  assert_string_equal(buf, "/home/u/.cache/calhost/profiles.txt");
  unsetenv("XDG_CACHE_HOME");
  assert_int_equal(calstore_default_path(buf, 8), CALSTORE_INVALID_ARGUMENT);
  unsetenv("HOME");
  assert_int_equal(calstore_default_path(buf, sizeof buf), CALSTORE_INVALID_ARGUMENT);
  /* calstore_options_init and calstore_open use it */
  char *dir = tu_mkdtemp();
  setenv("XDG_CACHE_HOME", dir, 1);
  calstore_options o;
  calstore_options_init(&o);
  assert_null(o.path);
  assert_int_equal(o.persistence_enabled, 1);
  assert_int_equal(o.struct_size, sizeof o);
  calstore *s = NULL;
  assert_int_equal(calstore_open(&o, &s, NULL), CALSTORE_OK);
  char want[600];
  snprintf(want, sizeof want, "%s/calhost/profiles.txt", dir);
  assert_string_equal(calstore_path(s), want);
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  assert_true(tu_exists(want));
  calstore_close(&s);
  tu_rmtree(dir);
  free(dir);
  if (sx)
    setenv("XDG_CACHE_HOME", sx, 1);
  else
    unsetenv("XDG_CACHE_HOME");
  if (sh)
    setenv("HOME", sh, 1);
  free(sx);
  free(sh);
}

static void misuse_never_aborts(void **state) {
  (void)state;
  calstore_error err = {0};
  assert_int_equal(calstore_open(NULL, NULL, &err), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_reload(NULL, &err), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_inspect(NULL, NULL, NULL), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_count(NULL), 0);
  assert_null(calstore_path(NULL));
  assert_int_equal(calstore_clear_override(NULL, NULL, &err), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_export(NULL, "x", &err), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_batch_begin(NULL, NULL, &err), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_batch_commit(NULL, &err), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_batch_size(NULL), 0);
  assert_int_equal(calstore_read_buffer(NULL, 3, NULL, NULL, NULL, NULL, NULL),
                   CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_read_file(NULL, NULL, NULL, NULL, NULL, NULL),
                   CALSTORE_INVALID_ARGUMENT);
  calstore_lookup_result_free(NULL);
  calstore_options o = {0}; /* not initialised */
  calstore *s = NULL;
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_INVALID_ARGUMENT);
  assert_null(s);
}

/* calstore_get: one identity (structure in any order), both sources, the
 * level it would have in a lookup; NOT_FOUND and bad keys. */
static void get_finds_one_profile_by_key_and_source(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_property st[] = {{"n", "64"}, {"dtype", "f32"}};
  calstore_property st_rev[] = {{"dtype", "f32"}, {"n", "64"}};
  calstore_key pk = tu_portable("gpu", "3", st, 2), pk_rev = tu_portable("gpu", "3", st_rev, 2);
  calstore_key ek = tu_exact("gpu", "3", "d", "p", 8);
  assert_int_equal(tu_store(s, &pk, "portable", 1), CALSTORE_OK);
  assert_int_equal(tu_store(s, &ek, "exact", 2), CALSTORE_OK);
  assert_int_equal(tu_override(s, &ek, "mine"), CALSTORE_OK);
  calstore_lookup_result *r = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_get(s, &pk_rev, CALSTORE_SOURCE_CALIBRATED, &r, &err), CALSTORE_OK);
  assert_string_equal(r->profile->policy, "portable");
  assert_int_equal(r->level, CALSTORE_LEVEL_PORTABLE_CALIBRATED);
  assert_int_equal(r->rejection_count, 0);
  calstore_lookup_result_free(&r);
  assert_int_equal(calstore_get(s, &ek, CALSTORE_SOURCE_OVERRIDE, &r, &err), CALSTORE_OK);
  assert_string_equal(r->profile->policy, "mine");
  assert_int_equal(r->level, CALSTORE_LEVEL_EXACT_OVERRIDE);
  /* the result outlives changes to the store */
  assert_int_equal(calstore_clear_override(s, &ek, &err), CALSTORE_OK);
  assert_string_equal(r->profile->policy, "mine");
  calstore_lookup_result_free(&r);
  assert_int_equal(calstore_get(s, &ek, CALSTORE_SOURCE_OVERRIDE, &r, &err), CALSTORE_NOT_FOUND);
  assert_null(r);
  assert_int_equal(calstore_get(s, &pk, CALSTORE_SOURCE_OVERRIDE, &r, &err), CALSTORE_NOT_FOUND);
  calstore_key other = tu_exact("gpu", "3", "d", "p", 4);
  assert_int_equal(calstore_get(s, &other, CALSTORE_SOURCE_CALIBRATED, &r, &err),
                   CALSTORE_NOT_FOUND);
  calstore_key bad = tu_exact("gpu", "3", NULL, "p", 8);
  assert_int_equal(calstore_get(s, &bad, CALSTORE_SOURCE_CALIBRATED, &r, &err),
                   CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_get(s, &ek, (calstore_source)9, &r, &err), CALSTORE_INVALID_ARGUMENT);
  assert_int_equal(calstore_get(NULL, &ek, CALSTORE_SOURCE_CALIBRATED, &r, &err),
                   CALSTORE_INVALID_ARGUMENT);
  calstore_close(&s);
}

static void version_and_names_match_the_header(void **state) {
  (void)state;
  uint32_t number = 0;
  const char *v = calstore_version(&number);
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", CALSTORE_VERSION_MAJOR, CALSTORE_VERSION_MINOR,
           CALSTORE_VERSION_PATCH);
  assert_string_equal(v, want);
  assert_int_equal(number, CALSTORE_VERSION_NUMBER);
  assert_int_equal(CALSTORE_VERSION_NUMBER, CALSTORE_VERSION_MAJOR * 1000000 +
                                                CALSTORE_VERSION_MINOR * 1000 +
                                                CALSTORE_VERSION_PATCH);
  assert_non_null(calstore_version(NULL));
  assert_string_equal(calstore_level_name(CALSTORE_LEVEL_NONE), "none");
  assert_string_equal(calstore_level_name(CALSTORE_LEVEL_EXACT_OVERRIDE), "exact_override");
  assert_string_equal(calstore_level_name(CALSTORE_LEVEL_PORTABLE_OVERRIDE), "portable_override");
  assert_string_equal(calstore_level_name(CALSTORE_LEVEL_EXACT_CALIBRATED), "exact_calibrated");
  assert_string_equal(calstore_level_name(CALSTORE_LEVEL_PORTABLE_CALIBRATED),
                      "portable_calibrated");
  assert_string_equal(calstore_level_name((calstore_level)42), "unknown");
  assert_string_equal(calstore_level_name((calstore_level)-1), "unknown");
  assert_string_equal(calstore_status_name(CALSTORE_OK), "ok");
  assert_string_equal(calstore_status_name(CALSTORE_LOCK_FAILED), "lock_failed");
  assert_string_equal(calstore_status_name((calstore_status)11), "unknown");
  assert_string_equal(calstore_status_name((calstore_status)-1), "unknown");
  assert_string_equal(calstore_reject_reason_name(CALSTORE_REJECT_OUTDATED_IMPLEMENTATION),
                      "outdated_implementation");
  assert_string_equal(calstore_reject_reason_name(CALSTORE_REJECT_FORCE_PORTABLE),
                      "force_portable");
  assert_string_equal(calstore_reject_reason_name((calstore_reject_reason)0), "unknown");
  assert_string_equal(calstore_reject_reason_name((calstore_reject_reason)8), "unknown");
}

/* struct_size: the first version's fields end with persistence_enabled; a
 * size that does not cover it is refused, an old caller's size (without
 * the appended fields) gets their defaults. */
static void a_short_options_struct_is_refused(void **state) {
  fixture *f = *state;
  calstore_options o;
  calstore_options_init(&o);
  o.path = f->path;
  calstore *s = NULL;
  size_t first = offsetof(calstore_options, persistence_enabled) + sizeof(int);
  o.struct_size = (uint32_t)(first - 1);
  assert_int_equal(calstore_open(&o, &s, NULL), CALSTORE_INVALID_ARGUMENT);
  assert_null(s);
  o.struct_size = (uint32_t)(offsetof(calstore_options, persistence_enabled));
  assert_int_equal(calstore_open(&o, &s, NULL), CALSTORE_INVALID_ARGUMENT);
  o.struct_size = (uint32_t)first;
  o.lock_timeout_ms = 0;
  o.flags = 0xffffffffu; /* not covered: ignored */
  assert_int_equal(calstore_open(&o, &s, NULL), CALSTORE_OK);
  calstore_close(&s);
  o.struct_size = sizeof o;
  o.flags = CALSTORE_OPEN_NO_THREADS;
  assert_int_equal(calstore_open(&o, &s, NULL), CALSTORE_OK);
  calstore_close(&s);
}

/* CALSTORE_OPEN_NO_THREADS: a file large enough for the parallel loader
 * loads to the same profiles in the calling thread. */
static void no_threads_loads_the_same(void **state) {
  fixture *f = *state;
  calstore *s = tu_open(f->path, NULL);
  calstore_batch *b = NULL;
  assert_int_equal(calstore_batch_begin(s, &b, NULL), CALSTORE_OK);
  char digest[64];
  static char policy[2048];
  memset(policy, 'p', sizeof policy - 1);
  int n = tu_under_valgrind() ? 200 : 5000; /* 5000 x ~2.2 KB: over the 8 MiB threshold */
  for (int i = 0; i < n; i++) {
    snprintf(digest, sizeof digest, "model-%d", i);
    calstore_key k = tu_exact("gpu", "3", digest, "p", 8);
    tu_policy p = {policy, 0, 0};
    assert_int_equal(calstore_batch_store(b, &k, NULL, 0, tu_serialize, &p, NULL, NULL, NULL),
                     CALSTORE_OK);
  }
  assert_int_equal(calstore_batch_commit(&b, NULL), CALSTORE_OK);
  calstore_close(&s);
  for (int flags = 0; flags < 2; flags++) {
    calstore_options o;
    calstore_options_init(&o);
    o.path = f->path;
    o.flags = flags ? CALSTORE_OPEN_NO_THREADS : 0;
    assert_int_equal(calstore_open(&o, &s, NULL), CALSTORE_OK);
    assert_int_equal(calstore_count(s), (size_t)n);
    calstore_key k = tu_exact("gpu", "3", "model-7", "p", 8);
    calstore_lookup_result *r = NULL;
    assert_int_equal(calstore_get(s, &k, CALSTORE_SOURCE_CALIBRATED, &r, NULL), CALSTORE_OK);
    calstore_lookup_result_free(&r);
    calstore_close(&s);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(bad_keys_are_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(unrepresentable_values_are_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(each_refused_part_says_what_is_wrong, setup, teardown),
      cmocka_unit_test_setup_teardown(a_wide_structure_is_stored_and_found_in_any_order, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(edge_arguments_give_their_documented_answers, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(store_serializes_once_and_runs_the_validator, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(profiles_round_trip_between_instances, setup, teardown),
      cmocka_unit_test_setup_teardown(profiles_round_trip_between_processes, setup, teardown),
      cmocka_unit_test_setup_teardown(lookup_follows_the_four_level_precedence, setup, teardown),
      cmocka_unit_test_setup_teardown(force_portable_wins_over_an_exact_override, setup, teardown),
      cmocka_unit_test_setup_teardown(validator_rejection_falls_through_to_portable, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(each_rejected_level_gives_its_reason, setup, teardown),
      cmocka_unit_test_setup_teardown(select_fast_path_agrees_with_the_full_lookup, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(invalidate_removes_the_named_profiles, setup, teardown),
      cmocka_unit_test_setup_teardown(a_batch_commits_all_or_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(disabled_persistence_keeps_profiles_in_memory_only, setup,
                                      teardown),
      cmocka_unit_test(default_path_follows_xdg_cache_home),
      cmocka_unit_test_setup_teardown(get_finds_one_profile_by_key_and_source, setup, teardown),
      cmocka_unit_test(version_and_names_match_the_header),
      cmocka_unit_test_setup_teardown(a_short_options_struct_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(no_threads_loads_the_same, setup, teardown),
      cmocka_unit_test(misuse_never_aborts),
      cmocka_unit_test_setup_teardown(rejections_come_in_the_documented_order, setup, teardown),
  };
  return cmocka_run_group_tests_name("store_api", tests, NULL, NULL);
}
