/*
 * fuzz_store_parse.c: libFuzzer target for libcalstore's version-1 reader
 * and canonical writer.
 *
 * Each input is a candidate store file. Properties checked beyond "no crash,
 * no leak, no undefined behaviour":
 *  - calstore_read_buffer returns one of its documented verdicts and, for a
 *    valid file, visits exactly *profile_count profiles whose every field is
 *    readable (exact keys have processor/digest/threads, portable keys a
 *    sorted structure; policy non-empty; measurements finite);
 *  - loading the same bytes from a file through calstore_open gives the same
 *    verdict and count;
 *  - every rewrite is canonical: the export of anything that loads is
 *    byte for byte what an independent writer here (std::quoted, %u,
 *    %.17g, one space, LF, fields in the canonical order) makes of the
 *    profiles the input loaded to; exporting the export gives the same
 *    bytes (a fixed point), and the export loads to the same profiles;
 *  - a commit that keeps the loaded records (one more profile stored)
 *    writes the canonical text of every record the store then holds.
 * Seeds: tests/store/vectors/store-v1/ (copied at run time by run.sh) and
 * the committed corpus.
 */
#include <math.h>
#include <string.h>

#include "calhost/calstore.h"
#include "fuzz_common.h"

static volatile size_t sink;

static void touch(const char *s) {
  if (s)
    sink += strlen(s);
}

/* ---- the independent canonical writer (the oracle) ---------------------- */

typedef struct text {
  char *data;
  size_t len, cap;
} text;

static void add(text *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 1024;
    while (t->len + n + 1 > cap)
      cap *= 2;
    t->data = realloc(t->data, cap);
    FUZZ_CHECK(t->data != NULL, "out of memory in the oracle");
    t->cap = cap;
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
}

static void add_str(text *t, const char *s) {
  add(t, s, strlen(s));
}

static void add_quoted(text *t, const char *s, size_t n) {
  add(t, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"' || s[i] == '\\')
      add(t, "\\", 1);
    add(t, s + i, 1);
  }
  add(t, "\"", 1);
}

static void add_field(text *t, const char *name, const char *value) {
  add_str(t, name);
  add(t, " ", 1);
  add_quoted(t, value, strlen(value));
  add(t, "\n", 1);
}

static void oracle_record(text *t, const calstore_profile *p) {
  char num[64];
  add_str(t, p->key.kind == CALSTORE_KEY_EXACT ? "profile exact " : "profile portable ");
  add_str(t, p->source == CALSTORE_SOURCE_OVERRIDE ? "override\n" : "calibrated\n");
  add_field(t, "backend", p->key.backend);
  add_field(t, "operator", p->key.operator_name);
  add_field(t, "implementation", p->key.implementation);
  if (p->key.kind == CALSTORE_KEY_EXACT) {
    add_field(t, "model_digest", p->key.model_digest);
    add_field(t, "processor", p->key.processor);
    snprintf(num, sizeof num, "thread_count %u\n", (unsigned)p->key.thread_count);
    add_str(t, num);
  } else {
    for (size_t i = 0; i < p->key.structure_count; i++) {
      add_str(t, "structure ");
      add_quoted(t, p->key.structure[i].name, strlen(p->key.structure[i].name));
      add(t, " ", 1);
      add_quoted(t, p->key.structure[i].value, strlen(p->key.structure[i].value));
      add(t, "\n", 1);
    }
  }
  for (size_t i = 0; i < p->measurement_count; i++) {
    add_str(t, "measurement ");
    add_quoted(t, p->measurements[i].name, strlen(p->measurements[i].name));
    snprintf(num, sizeof num, " %.17g ", p->measurements[i].value);
    add_str(t, num);
    add_quoted(t, p->measurements[i].unit, strlen(p->measurements[i].unit));
    add(t, "\n", 1);
  }
  add_str(t, "policy ");
  add_quoted(t, p->policy, p->policy_length);
  add_str(t, "\nend\n");
}

/* ---- visiting ---------------------------------------------------------------- */

typedef struct visit_state {
  size_t n;
  text canon; /* the oracle's text of every profile visited, header first */
} visit_state;

static int visit(void *user, const calstore_profile *p) {
  visit_state *v = user;
  size_t *n = &v->n;
  (*n)++;
  touch(p->key.backend);
  touch(p->key.operator_name);
  touch(p->key.implementation);
  FUZZ_CHECK(p->key.backend && p->key.operator_name && p->key.implementation,
             "profile %zu lacks backend/operator/implementation", *n);
  if (p->key.kind == CALSTORE_KEY_EXACT) {
    FUZZ_CHECK(p->key.processor && p->key.model_digest && p->key.thread_count >= 1 &&
                   p->key.structure_count == 0,
               "exact profile %zu incomplete or mixed", *n);
    touch(p->key.processor);
    touch(p->key.model_digest);
  } else {
    FUZZ_CHECK(p->key.kind == CALSTORE_KEY_PORTABLE && p->key.structure_count >= 1 &&
                   !p->key.model_digest && !p->key.processor && p->key.thread_count == 0,
               "portable profile %zu without structure or mixed (kind %d)", *n, (int)p->key.kind);
    for (size_t i = 0; i < p->key.structure_count; i++) {
      touch(p->key.structure[i].name);
      touch(p->key.structure[i].value);
      FUZZ_CHECK(i == 0 || strcmp(p->key.structure[i - 1].name, p->key.structure[i].name) < 0,
                 "profile %zu: structure not sorted or repeated", *n);
    }
  }
  for (size_t i = 0; i < p->measurement_count; i++) {
    touch(p->measurements[i].name);
    touch(p->measurements[i].unit);
    FUZZ_CHECK(isfinite(p->measurements[i].value), "profile %zu: non-finite measurement", *n);
  }
  FUZZ_CHECK(p->policy && p->policy_length > 0 && strlen(p->policy) == p->policy_length,
             "profile %zu: empty policy or length mismatch", *n);
  oracle_record(&v->canon, p);
  return 0;
}

static void diagnostic(void *user, calstore_status status, unsigned line, const char *message) {
  (void)user;
  (void)status;
  (void)line;
  touch(message);
}

static int valid_verdict(calstore_status st) {
  return st == CALSTORE_OK || st == CALSTORE_MALFORMED || st == CALSTORE_UNSUPPORTED_VERSION;
}

static void visit_begin(visit_state *v) {
  v->n = 0;
  v->canon.len = 0;
  add_str(&v->canon, "onnx_light_calibration_profiles 1\n");
}

static void expect_text(const char *what, const char *path, const text *want) {
  size_t n = 0;
  char *got = fuzz_read_file(path, &n);
  FUZZ_CHECK(got != NULL, "cannot read %s", path);
  size_t at = 0;
  while (at < n && at < want->len && got[at] == want->data[at])
    at++;
  FUZZ_CHECK(n == want->len && at == n,
             "%s is not the canonical text of the loaded profiles: first difference at byte "
             "%zu of %zu (canonical: %zu bytes)",
             what, at, n, want->len);
  free(got);
}

static const char *policy_text(void *user, size_t *length, char *err, size_t cap) {
  (void)err;
  (void)cap;
  *length = strlen(user);
  return user;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  visit_state in = {0};
  visit_begin(&in);
  size_t count = 0;
  calstore_status st =
      calstore_read_buffer((const char *)data, size, visit, &in, diagnostic, NULL, &count);
  FUZZ_CHECK(valid_verdict(st), "read_buffer returned %d (%s)", (int)st, calstore_status_name(st));
  if (st != CALSTORE_OK)
    FUZZ_CHECK(in.n == 0, "read_buffer visited %zu profiles of a refused file", in.n);
  else
    FUZZ_CHECK(in.n == count, "visited %zu profiles, profile_count says %zu", in.n, count);

  /* The same bytes through the store's own load path. */
  const char *path = fuzz_write_file("in.txt", data, size);
  char in_path[600];
  snprintf(in_path, sizeof in_path, "%s", path);
  calstore_options opts;
  calstore_options_init(&opts);
  opts.path = in_path;
  calstore *store = NULL;
  calstore_error err;
  calstore_status ost = calstore_open(&opts, &store, &err);
  FUZZ_CHECK(store != NULL, "calstore_open returned no handle (%s)", calstore_status_name(ost));
  /* An empty input is "no profiles" for the parser; a zero-length file may
   * reasonably be either OK (empty store) or malformed: only compare the
   * verdict on non-empty inputs. */
  if (size > 0)
    FUZZ_CHECK(ost == st, "calstore_open says %s, read_buffer says %s: %s",
               calstore_status_name(ost), calstore_status_name(st), err.message);
  if (ost == CALSTORE_OK && st == CALSTORE_OK) {
    FUZZ_CHECK(calstore_count(store) == count, "open loaded %zu, parser %zu", calstore_count(store),
               count);
    char out1[600], out2[600];
    snprintf(out1, sizeof out1, "%s/out1.txt", fuzz_scratch());
    snprintf(out2, sizeof out2, "%s/out2.txt", fuzz_scratch());
    calstore_status est = calstore_export(store, out1, &err);
    FUZZ_CHECK(est == CALSTORE_OK, "export of a loaded store failed: %s: %s",
               calstore_status_name(est), err.message);
    /* canonical: the oracle's text of the profiles the input loaded to */
    expect_text("the export", out1, &in.canon);
    /* the export loads to the same profiles (same canonical text) */
    visit_state again = {0};
    visit_begin(&again);
    size_t n1 = 0;
    char *t1 = fuzz_read_file(out1, &n1);
    FUZZ_CHECK(t1 != NULL, "cannot read the export %s", out1);
    calstore_status rst = calstore_read_buffer(t1, n1, visit, &again, NULL, NULL, NULL);
    FUZZ_CHECK(rst == CALSTORE_OK && again.n == count,
               "the store wrote a file it cannot read back: %s, %zu of %zu profiles",
               calstore_status_name(rst), again.n, count);
    FUZZ_CHECK(again.canon.len == in.canon.len &&
                   !memcmp(again.canon.data, in.canon.data, in.canon.len),
               "the export loads to other profiles than the input");
    /* exporting the export gives the same bytes */
    calstore *store2 = NULL;
    opts.path = out1;
    calstore_status st2 = calstore_open(&opts, &store2, &err);
    FUZZ_CHECK(st2 == CALSTORE_OK, "reopening the export: %s: %s", calstore_status_name(st2),
               err.message);
    est = calstore_export(store2, out2, &err);
    FUZZ_CHECK(est == CALSTORE_OK, "second export failed: %s", err.message);
    expect_text("the export of the export", out2, &in.canon);
    calstore_close(&store2);
    free(t1);
    free(again.canon.data);

    /* A commit keeps every loaded record and rewrites the file: canonical
     * text of whatever the store holds afterwards. */
    calstore_key k = {CALSTORE_KEY_EXACT, "fuzz_commit", "op", "1", "d", "p", 1, NULL, 0};
    calstore_measurement m = {"median_latency", 1.5, "us"};
    est = calstore_store(store, &k, &m, 1, policy_text, "policy", NULL, NULL, &err);
    FUZZ_CHECK(est == CALSTORE_OK, "a commit into a loaded store failed: %s: %s",
               calstore_status_name(est), err.message);
    visit_state after = {0};
    visit_begin(&after);
    FUZZ_CHECK(calstore_inspect(store, visit, &after) == CALSTORE_OK, "inspect failed");
    expect_text("the file after a commit", in_path, &after.canon);
    free(after.canon.data);
  }
  calstore_close(&store);
  FUZZ_CHECK(store == NULL, "calstore_close did not clear the handle");
  free(in.canon.data);
  return 0;
}
