/*
 * test_store_format.c: the version-1 format against the project's vectors
 * (tests/store/vectors/store-v1, found through $CALHOST_SOURCE_DIR): verdicts,
 * profile counts, byte-exact canonical rewrites, line numbers of
 * diagnostics, resynchronisation, and std::quoted escaping round trips.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util.h"

static char vec_dir[PATH_MAX];

static int setup(void **state) {
  (void)state;
  const char *src = getenv("CALHOST_SOURCE_DIR");
  if (!src)
    return -1;
  snprintf(vec_dir, sizeof vec_dir, "%s/tests/store/vectors/store-v1", src);
  return 0;
}

typedef struct diags {
  int count;
  unsigned first_line;
  calstore_status first_status;
  char first_msg[512];
} diags;

static void on_diag(void *user, calstore_status st, unsigned line, const char *msg) {
  diags *d = user;
  if (!d->count++) {
    d->first_line = line;
    d->first_status = st;
    snprintf(d->first_msg, sizeof d->first_msg, "%s", msg);
  }
}

static calstore_status status_from_word(const char *w) {
  for (int s = 0; s <= CALSTORE_LOCK_FAILED; s++)
    if (!strcmp(calstore_status_name((calstore_status)s), w))
      return (calstore_status)s;
  fail_msg("unknown status word %s", w);
  return CALSTORE_OK;
}

/* Every line of expected.tsv: verdict and count by calstore_read_file and by
 * calstore_open; canonical rewrite for ok files. */
static void test_all_vectors(void **state) {
  (void)state;
  char tsv[PATH_MAX + 32];
  snprintf(tsv, sizeof tsv, "%s/expected.tsv", vec_dir);
  FILE *f = fopen(tsv, "r");
  assert_non_null(f);
  char line[1024];
  int files = 0;
  char *tmp = tu_mkdtemp();
  while (fgets(line, sizeof line, f)) {
    char name[256], word[64];
    size_t want;
    if (sscanf(line, "%255s %63s %zu", name, word, &want) != 3 || !strcmp(name, "file"))
      continue;
    files++;
    calstore_status expect = status_from_word(word);
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", vec_dir, name);
    diags d = {0};
    size_t count = 99;
    calstore_status st = calstore_read_file(path, NULL, NULL, on_diag, &d, &count);
    if (st != expect)
      fail_msg("%s: got %s, want %s (%s)", name, calstore_status_name(st), word, d.first_msg);
    if (expect == CALSTORE_OK) {
      assert_int_equal(count, want);
      assert_int_equal(d.count, 0);
    } else {
      assert_int_equal(count, 0);
      assert_true(d.count >= 1);
      assert_true(d.first_line >= 1);
      assert_int_equal(d.first_status, expect);
    }
    /* the same through a store handle */
    calstore_options o;
    calstore_options_init(&o);
    o.path = path;
    calstore *s = NULL;
    calstore_error err = {0};
    st = calstore_open(&o, &s, &err);
    assert_non_null(s);
    assert_int_equal(st, expect);
    if (expect != CALSTORE_OK) {
      assert_int_equal(calstore_count(s), 0);
      assert_true(err.line >= 1);
      assert_int_equal(err.line, d.first_line);
      assert_string_equal(err.path, path);
    } else {
      assert_int_equal(calstore_count(s), want);
      char out[PATH_MAX + 300], canon[PATH_MAX + 300];
      snprintf(out, sizeof out, "%s/%s", tmp, name);
      snprintf(canon, sizeof canon, "%s/canonical/%s", vec_dir, name);
      assert_int_equal(calstore_export(s, out, &err), CALSTORE_OK);
      size_t la = 0, lb = 0;
      char *a = tu_read(out, &la), *b = tu_read(canon, &lb);
      assert_non_null(a);
      assert_non_null(b);
      if (la != lb || memcmp(a, b, la))
        fail_msg("%s: canonical rewrite differs:\n%s\n--- want ---\n%s", name, a, b);
      /* the canonical file reads back to the same canonical text */
      calstore *s2 = NULL;
      o.path = canon;
      assert_int_equal(calstore_open(&o, &s2, &err), CALSTORE_OK);
      assert_int_equal(calstore_export(s2, out, &err), CALSTORE_OK);
      free(a);
      a = tu_read(out, &la);
      assert_true(la == lb && !memcmp(a, b, la));
      calstore_close(&s2);
      free(a);
      free(b);
    }
    calstore_close(&s);
  }
  fclose(f);
  assert_true(files >= 20);
  tu_rmtree(tmp);
  free(tmp);
}

static unsigned first_line_of(const char *vector, calstore_status *st) {
  char path[PATH_MAX + 300];
  snprintf(path, sizeof path, "%s/%s", vec_dir, vector);
  diags d = {0};
  *st = calstore_read_file(path, NULL, NULL, on_diag, &d, NULL);
  return d.first_line;
}

/* Diagnostics name the offending line. */
static void test_vector_line_numbers(void **state) {
  (void)state;
  static const struct {
    const char *file;
    unsigned line;
    calstore_status st;
  } cases[] = {
      {"bad_trailing_garbage.txt", 3, CALSTORE_MALFORMED},
      {"bad_portable_with_digest.txt", 10, CALSTORE_MALFORMED},
      {"bad_exact_with_structure.txt", 11, CALSTORE_MALFORMED},
      {"bad_zero_threads.txt", 8, CALSTORE_MALFORMED},
      {"bad_nan_measurement.txt", 9, CALSTORE_MALFORMED},
      {"bad_inf_measurement.txt", 9, CALSTORE_MALFORMED},
      {"bad_empty_policy.txt", 10, CALSTORE_MALFORMED},
      {"bad_missing_policy.txt", 10, CALSTORE_MALFORMED},
      {"bad_unknown_field.txt", 11, CALSTORE_MALFORMED},
      {"bad_unknown_kind.txt", 2, CALSTORE_MALFORMED},
      {"bad_magic.txt", 1, CALSTORE_MALFORMED},
      {"bad_future_version.txt", 1, CALSTORE_UNSUPPORTED_VERSION},
      {"bad_duplicate_identity.txt", 12, CALSTORE_MALFORMED},
      {"bad_empty_file.txt", 1, CALSTORE_MALFORMED},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    calstore_status st;
    unsigned line = first_line_of(cases[i].file, &st);
    if (line != cases[i].line || st != cases[i].st)
      fail_msg("%s: line %u status %s, want line %u", cases[i].file, line, calstore_status_name(st),
               cases[i].line);
  }
}

#define HDR "onnx_light_calibration_profiles 1\n"
#define REC(backend, tc)                                                                           \
  "profile exact calibrated\nbackend \"" backend "\"\noperator \"MatMul\"\nimplementation "        \
  "\"3\"\nmodel_digest \"d\"\nprocessor \"p\"\nthread_count " tc "\npolicy \"x\"\nend\n"

/* Every problem is reported (resynchronising at the next profile), the
 * verdict is the first error's, and no profile is visited. */
static int count_visits(void *user, const calstore_profile *p) {
  (void)p;
  (*(int *)user)++;
  return 0;
}

static void test_all_diagnostics_reported(void **state) {
  (void)state;
  const char *text = HDR REC("a", "0") REC("b", "4") REC("c", "x") REC("d", "2");
  diags d = {0};
  int visits = 0;
  size_t count = 7;
  calstore_status st =
      calstore_read_buffer(text, strlen(text), count_visits, &visits, on_diag, &d, &count);
  assert_int_equal(st, CALSTORE_MALFORMED);
  assert_int_equal(d.count, 2);
  assert_int_equal(d.first_line, 8);
  assert_int_equal(visits, 0);
  assert_int_equal(count, 0);
  /* a valid one visits every profile in order */
  const char *good = HDR "# c\n\n" REC("a", "1") REC("b", "4");
  visits = 0;
  assert_int_equal(
      calstore_read_buffer(good, strlen(good), count_visits, &visits, NULL, NULL, &count),
      CALSTORE_OK);
  assert_int_equal(visits, 2);
  assert_int_equal(count, 2);
}

static void expect_bad(const char *text, unsigned line) {
  diags d = {0};
  calstore_status st = calstore_read_buffer(text, strlen(text), NULL, NULL, on_diag, &d, NULL);
  if (st != CALSTORE_MALFORMED || d.first_line != line)
    fail_msg("got %s line %u (%s), want malformed line %u for:\n%s", calstore_status_name(st),
             d.first_line, d.first_msg, line, text);
}

static void test_grammar_edges(void **state) {
  (void)state;
  expect_bad(HDR "profile exact calibrated extra\n", 2);
  expect_bad(HDR "profile exact\n", 2);
  expect_bad(HDR "backend \"x\"\n", 2);
  expect_bad(HDR "profile exact calibrated\nbackend \"x\n", 3);
  expect_bad(HDR "profile exact calibrated\nbackend \"\"\n", 3);
  expect_bad("onnx_light_calibration_profiles 1 x\n", 1);
  expect_bad("onnx_light_calibration_profiles one\n", 1);
  expect_bad(HDR "profile portable calibrated\nbackend \"b\"\noperator \"o\"\nimplementation "
                 "\"1\"\nmeasurement \"m\" 1 \"u\"\npolicy \"p\"\nend\n",
             6); /* portable without structure */
  expect_bad(HDR "profile portable calibrated\nbackend \"b\"\noperator \"o\"\nimplementation "
                 "\"1\"\nstructure \"a\" \"1\"\nstructure \"a\" \"2\"\npolicy \"p\"\nend\n",
             2); /* duplicate structure name */
  expect_bad(HDR "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation "
                 "\"1\"\nmodel_digest \"d\"\nprocessor \"p\"\nthread_count 4294967296\n",
             8);
  expect_bad(HDR "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation "
                 "\"1\"\nmodel_digest \"d\"\nprocessor \"p\"\nthread_count 1\nmeasurement \"\" 1 "
                 "\"u\"\n",
             9);
  expect_bad(HDR "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation "
                 "\"1\"\nmodel_digest \"d\"\nprocessor \"p\"\nthread_count 1\nmeasurement \"m\" "
                 "1.5x \"u\"\n",
             9);
  /* a NUL byte inside a quoted value */
  const char nul[] = HDR "profile exact calibrated\nbackend \"a\0b\"\n";
  diags d = {0};
  assert_int_equal(calstore_read_buffer(nul, sizeof nul - 1, NULL, NULL, on_diag, &d, NULL),
                   CALSTORE_MALFORMED);
  assert_int_equal(d.first_line, 3);
  /* header only: ok and empty; whitespace and structure order are lenient */
  size_t n = 9;
  assert_int_equal(calstore_read_buffer(HDR, strlen(HDR), NULL, NULL, NULL, NULL, &n), CALSTORE_OK);
  assert_int_equal(n, 0);
  const char *lenient = HDR "profile  portable\toverride\n  backend \"b\"  \noperator \"o\"\n"
                            "implementation \"1\"\nstructure \"z\" \"1\"\nstructure \"a\" \"\"\n"
                            "# inside\npolicy \"p\"\nend\n";
  assert_int_equal(calstore_read_buffer(lenient, strlen(lenient), NULL, NULL, NULL, NULL, &n),
                   CALSTORE_OK);
  assert_int_equal(n, 1);
}

typedef struct capture {
  char policy[256];
  char processor[256];
  double value;
  size_t nstruct;
  char first_struct[64];
} capture;

static int capture_first(void *user, const calstore_profile *p) {
  capture *c = user;
  snprintf(c->policy, sizeof c->policy, "%s", p->policy);
  if (p->key.processor)
    snprintf(c->processor, sizeof c->processor, "%s", p->key.processor);
  c->value = p->measurement_count ? p->measurements[0].value : 0;
  c->nstruct = p->key.structure_count;
  if (p->key.structure_count)
    snprintf(c->first_struct, sizeof c->first_struct, "%s", p->key.structure[0].name);
  return 1;
}

static void test_escapes_and_values(void **state) {
  (void)state;
  char path[PATH_MAX + 300];
  snprintf(path, sizeof path, "%s/ok_escapes.txt", vec_dir);
  capture c = {0};
  assert_int_equal(calstore_read_file(path, capture_first, &c, NULL, NULL, NULL), CALSTORE_OK);
  assert_string_equal(c.policy, "say \"hi\" C:\\path\\x");
  assert_string_equal(c.processor, "cpu \"quoted\" name");
  snprintf(path, sizeof path, "%s/ok_mixed_sources.txt", vec_dir);
  const char *lenient = HDR "profile portable calibrated\nbackend \"b\"\noperator \"o\"\n"
                            "implementation \"1\"\nstructure \"z\" \"1\"\nstructure \"a\" \"2\"\n"
                            "measurement \"m\" 1e-07 \"s\"\npolicy \"p\"\nend\n";
  memset(&c, 0, sizeof c);
  assert_int_equal(
      calstore_read_buffer(lenient, strlen(lenient), capture_first, &c, NULL, NULL, NULL),
      CALSTORE_OK);
  assert_int_equal(c.nstruct, 2);
  assert_string_equal(c.first_struct, "a"); /* sorted by name */
  assert_true(c.value == 1e-07);
  /* an unquoted word is a value (std::quoted reads it as is); written quoted */
  const char *bare = HDR "profile exact calibrated\nbackend gpu\noperator \"o\"\n"
                         "implementation 3\nmodel_digest \"d\"\nprocessor p\\x\n"
                         "thread_count 1\npolicy fast\nend\n";
  capture bc = {0};
  assert_int_equal(calstore_read_buffer(bare, strlen(bare), capture_first, &bc, NULL, NULL, NULL),
                   CALSTORE_OK);
  assert_string_equal(bc.policy, "fast");
  assert_string_equal(bc.processor, "p\\x");
}

/* CRLF line ends read like LF ones (the reference reads with operator>>);
 * the rewrite is canonical LF. */
static void test_crlf(void **state) {
  (void)state;
  char path[PATH_MAX + 300], canon[PATH_MAX + 300];
  snprintf(path, sizeof path, "%s/ok_mixed_sources.txt", vec_dir);
  snprintf(canon, sizeof canon, "%s/canonical/ok_mixed_sources.txt", vec_dir);
  size_t len = 0;
  char *text = tu_read(path, &len);
  char *crlf = malloc(2 * len + 1);
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\n')
      crlf[n++] = '\r';
    crlf[n++] = text[i];
  }
  char *dir = tu_mkdtemp(), *in = tu_path(dir, "crlf.txt"), *out = tu_path(dir, "out.txt");
  FILE *f = fopen(in, "wb");
  fwrite(crlf, 1, n, f);
  fclose(f);
  calstore *s = tu_open(in, NULL);
  assert_int_equal(calstore_count(s), 4);
  assert_int_equal(calstore_export(s, out, NULL), CALSTORE_OK);
  char *a = tu_read(out, NULL), *b = tu_read(canon, NULL);
  assert_string_equal(a, b);
  calstore_close(&s);
  free(a);
  free(b);
  free(text);
  free(crlf);
  tu_rmtree(dir);
  free(dir);
  free(in);
  free(out);
}

/* A file that does not exist / cannot be read. */
static void test_missing_and_unreadable(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *p = tu_path(dir, "absent.txt");
  diags d = {0};
  assert_int_equal(calstore_read_file(p, NULL, NULL, on_diag, &d, NULL), CALSTORE_NOT_FOUND);
  /* a directory is not a readable store */
  assert_int_equal(calstore_read_file(dir, NULL, NULL, NULL, NULL, NULL), CALSTORE_UNREADABLE);
  free(p);
  tu_rmtree(dir);
  free(dir);
}

static void test_status_and_reason_words(void **state) {
  (void)state;
  assert_string_equal(calstore_status_name(CALSTORE_OK), "ok");
  assert_string_equal(calstore_status_name(CALSTORE_UNSUPPORTED_VERSION), "unsupported_version");
  assert_string_equal(calstore_status_name(CALSTORE_LOCK_FAILED), "lock_failed");
  assert_string_equal(calstore_status_name((calstore_status)77), "unknown");
  assert_string_equal(calstore_reject_reason_name(CALSTORE_REJECT_OUTDATED_IMPLEMENTATION),
                      "outdated_implementation");
  assert_string_equal(calstore_reject_reason_name(CALSTORE_REJECT_FORCE_PORTABLE),
                      "force_portable");
}

/* ---- large files (the parallel loader) ------------------------------------ */

#define BIG_RECORDS 40000 /* about 13 MB: several pieces */

/* Appends record i (11 or 12 lines) in canonical form. */
static size_t big_record(char *out, int i, int comment) {
  if (i % 7 == 3)
    return (size_t)sprintf(out,
                           "profile portable calibrated\nbackend \"backend_%d\"\noperator "
                           "\"Op%d\"\nimplementation \"2\"\n%sstructure \"dtype\" \"f16\"\n"
                           "structure \"shape\" \"m,n,%d\"\nmeasurement \"median_latency\" "
                           "%.17g \"us\"\npolicy \"tile=%d \\\"q\\\"\"\nend\n",
                           i % 12, i % 8, comment ? "# piece comment\n" : "", i, 1.0 + i / 7.0, i);
  return (size_t)sprintf(out,
                         "profile exact %s\nbackend \"backend_%d\"\noperator \"Op%d\"\n"
                         "implementation \"1\"\nmodel_digest \"sha256:%08x%08x\"\n%sprocessor "
                         "\"x86_64:Xeon:l2=%d\"\nthread_count %d\nmeasurement \"median_latency\" "
                         "%.17g \"us\"\nmeasurement \"samples\" %d \"count\"\npolicy "
                         "\"algorithm=blocked;n=%d\"\nend\n",
                         i % 20 == 0 ? "override" : "calibrated", i % 12, i % 8, (unsigned)i,
                         (unsigned)(i * 2654435761u), comment ? "# piece comment\n" : "",
                         1 << (i % 5), 1 + i % 32, 3.25 + i * 0.001, 5 + i % 100, i);
}

/* Builds the big text; with_comments adds comment lines inside records. */
static char *big_text(int with_comments, size_t *len, unsigned *lines_before) {
  char *t = malloc((size_t)BIG_RECORDS * 512 + 64);
  size_t n = (size_t)sprintf(t, "onnx_light_calibration_profiles 1\n");
  unsigned line = 2;
  for (int i = 0; i < BIG_RECORDS; i++) {
    if (lines_before)
      lines_before[i] = line;
    size_t w = big_record(t + n, i, with_comments && i % 1000 == 1);
    for (size_t k = 0; k < w; k++)
      line += t[n + k] == '\n';
    n += w;
  }
  *len = n;
  return t;
}

static void test_large_file_round_trip(void **state) {
  (void)state;
  size_t len, clen;
  char *canon = big_text(0, &clen, NULL);
  char *commented = big_text(1, &len, NULL);
  char *dir = tu_mkdtemp(), *in = tu_path(dir, "in.txt"), *out = tu_path(dir, "out.txt");
  for (int variant = 0; variant < 2; variant++) {
    FILE *f = fopen(in, "wb");
    fwrite(variant ? commented : canon, 1, variant ? len : clen, f);
    fclose(f);
    calstore *s = tu_open(in, NULL);
    assert_int_equal(calstore_count(s), BIG_RECORDS);
    calstore_error err = {0};
    assert_int_equal(calstore_export(s, out, &err), CALSTORE_OK);
    size_t olen = 0;
    char *got = tu_read(out, &olen);
    assert_int_equal(olen, clen);
    assert_true(!memcmp(got, canon, clen)); /* canonical, in file order */
    free(got);
    /* a commit rewrites it byte for byte plus the new profile */
    calstore_key k = tu_exact("zz", "1", "d", "p", 1);
    assert_int_equal(tu_store(s, &k, "new", 1), CALSTORE_OK);
    got = tu_read(in, &olen);
    assert_true(olen > clen && !memcmp(got, canon, clen));
    free(got);
    calstore_close(&s);
  }
  tu_rmtree(dir);
  free(dir);
  free(in);
  free(out);
  free(canon);
  free(commented);
}

static void test_large_file_errors_have_exact_lines(void **state) {
  (void)state;
  size_t len;
  unsigned *starts = malloc(BIG_RECORDS * sizeof *starts);
  char *t = big_text(0, &len, starts);
  /* a duplicate far from its original: the second one's profile line */
  char *dup = malloc(len + 1024);
  memcpy(dup, t, len);
  size_t dl = len + big_record(dup + len, 5, 0);
  diags d = {0};
  size_t count = 9;
  assert_int_equal(calstore_read_buffer(dup, dl, NULL, NULL, on_diag, &d, &count),
                   CALSTORE_MALFORMED);
  assert_int_equal(d.count, 1);
  unsigned total_lines = 0;
  for (size_t i = 0; i < len; i++)
    total_lines += t[i] == '\n';
  assert_int_equal(d.first_line, total_lines + 1);
  assert_int_equal(count, 0);
  /* a broken thread_count in the middle */
  int victim = BIG_RECORDS * 2 / 3 + 1; /* an exact record */
  if (victim % 7 == 3)
    victim++;
  char *bad = malloc(len + 1);
  memcpy(bad, t, len);
  bad[len] = '\0';
  char *rec = bad;
  for (unsigned line = 1; line < starts[victim]; rec++)
    line += *rec == '\n';
  char *tc = strstr(rec, "thread_count ");
  tc[13] = 'x';
  memset(&d, 0, sizeof d);
  assert_int_equal(calstore_read_buffer(bad, len, NULL, NULL, on_diag, &d, NULL),
                   CALSTORE_MALFORMED);
  assert_int_equal(d.count, 1);
  assert_int_equal(d.first_line, starts[victim] + 6);
  /* and the valid text loads with every profile */
  assert_int_equal(calstore_read_buffer(t, len, NULL, NULL, on_diag, &d, &count), CALSTORE_OK);
  assert_int_equal(count, BIG_RECORDS);
  free(bad);
  free(dup);
  free(t);
  free(starts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_vectors),
      cmocka_unit_test(test_vector_line_numbers),
      cmocka_unit_test(test_all_diagnostics_reported),
      cmocka_unit_test(test_grammar_edges),
      cmocka_unit_test(test_escapes_and_values),
      cmocka_unit_test(test_crlf),
      cmocka_unit_test(test_missing_and_unreadable),
      cmocka_unit_test(test_status_and_reason_words),
      cmocka_unit_test(test_large_file_round_trip),
      cmocka_unit_test(test_large_file_errors_have_exact_lines),
  };
  return cmocka_run_group_tests_name("store_format", tests, setup, NULL);
}
