/*
 * fuzz_store_parse.c: libFuzzer target for libcalstore's version-1 parser.
 *
 * Each input is a candidate store file. Properties checked beyond "no crash,
 * no leak, no undefined behaviour":
 *  - calstore_read_buffer returns one of its documented verdicts and, for a
 *    valid file, visits exactly *profile_count profiles whose every field is
 *    readable (exact keys have processor/digest/threads, portable keys a
 *    structure; policy non-empty; measurements finite);
 *  - loading the same bytes from a file through calstore_open gives the same
 *    verdict and count;
 *  - the writer only writes what the reader accepts: exporting a loaded
 *    store, re-reading the export and exporting again yields the same
 *    profiles and byte-identical canonical text (the design's promise that
 *    the store never writes a file that will not load).
 * Seeds: ../shared/vectors/store-v1/ (copied at run time by run.sh).
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

static int visit(void *user, const calstore_profile *p) {
  size_t *n = user;
  (*n)++;
  touch(p->key.backend);
  touch(p->key.operator_name);
  touch(p->key.implementation);
  FUZZ_CHECK(p->key.backend && p->key.operator_name && p->key.implementation,
             "profile %zu lacks backend/operator/implementation", *n);
  if (p->key.kind == CALSTORE_KEY_EXACT) {
    FUZZ_CHECK(p->key.processor && p->key.model_digest && p->key.thread_count >= 1,
               "exact profile %zu incomplete", *n);
    touch(p->key.processor);
    touch(p->key.model_digest);
  } else {
    FUZZ_CHECK(p->key.kind == CALSTORE_KEY_PORTABLE && p->key.structure_count >= 1,
               "portable profile %zu without structure (kind %d)", *n, (int)p->key.kind);
    for (size_t i = 0; i < p->key.structure_count; i++) {
      touch(p->key.structure[i].name);
      touch(p->key.structure[i].value);
    }
  }
  for (size_t i = 0; i < p->measurement_count; i++) {
    touch(p->measurements[i].name);
    touch(p->measurements[i].unit);
    FUZZ_CHECK(isfinite(p->measurements[i].value), "profile %zu: non-finite measurement", *n);
  }
  FUZZ_CHECK(p->policy && p->policy_length > 0 && strlen(p->policy) == p->policy_length,
             "profile %zu: empty policy or length mismatch", *n);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t visited = 0, count = 0;
  calstore_status st = calstore_read_buffer((const char *)data, size, visit, &visited, diagnostic,
                                            NULL, &count);
  FUZZ_CHECK(valid_verdict(st), "read_buffer returned %d (%s)", (int)st, calstore_status_name(st));
  if (st != CALSTORE_OK)
    FUZZ_CHECK(visited == 0, "read_buffer visited %zu profiles of a refused file", visited);
  else
    FUZZ_CHECK(visited == count, "visited %zu profiles, profile_count says %zu", visited, count);

  /* The same bytes through the store's own load path. */
  const char *in = fuzz_write_file("in.txt", data, size);
  calstore_options opts;
  calstore_options_init(&opts);
  opts.path = in;
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
  if (ost == CALSTORE_OK) {
    FUZZ_CHECK(calstore_count(store) == count || size == 0, "open loaded %zu, parser %zu",
               calstore_count(store), count);
    char out1[600], out2[600];
    snprintf(out1, sizeof out1, "%s/out1.txt", fuzz_scratch());
    snprintf(out2, sizeof out2, "%s/out2.txt", fuzz_scratch());
    calstore_status est = calstore_export(store, out1, &err);
    FUZZ_CHECK(est == CALSTORE_OK, "export of a loaded store failed: %s: %s",
               calstore_status_name(est), err.message);
    size_t n1 = 0, n2 = 0;
    char *t1 = fuzz_read_file(out1, &n1);
    FUZZ_CHECK(t1 != NULL, "cannot read the export %s", out1);
    size_t again = 0;
    calstore_status rst = calstore_read_buffer(t1, n1, NULL, NULL, NULL, NULL, &again);
    FUZZ_CHECK(rst == CALSTORE_OK && again == calstore_count(store),
               "the store wrote a file it cannot read back: %s, %zu of %zu profiles",
               calstore_status_name(rst), again, calstore_count(store));
    calstore *store2 = NULL;
    opts.path = out1;
    calstore_status st2 = calstore_open(&opts, &store2, &err);
    FUZZ_CHECK(st2 == CALSTORE_OK, "reopening the export: %s: %s", calstore_status_name(st2),
               err.message);
    est = calstore_export(store2, out2, &err);
    FUZZ_CHECK(est == CALSTORE_OK, "second export failed: %s", err.message);
    char *t2 = fuzz_read_file(out2, &n2);
    FUZZ_CHECK(t2 && n1 == n2 && memcmp(t1, t2, n1) == 0,
               "canonical form is not a fixed point (%zu vs %zu bytes)", n1, n2);
    free(t1);
    free(t2);
    calstore_close(&store2);
  }
  calstore_close(&store);
  FUZZ_CHECK(store == NULL, "calstore_close did not clear the handle");
  return 0;
}
