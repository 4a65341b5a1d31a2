/*
 * test_store_format.c: the version-1 format against the project's vectors
 * (tests/store/vectors/store-v1, found through $CALHOST_SOURCE_DIR): verdicts,
 * profile counts, byte-exact canonical rewrites (by export and by commit,
 * serial and parallel loader), every row of host/store/README.md's table of
 * differences from the reference reader, line numbers of diagnostics,
 * resynchronisation, and std::quoted escaping round trips.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "util.h"
#include "vector_check.h"

static char vec_dir[PATH_MAX];

static int setup(void **state) {
  (void)state;
  const char *src = getenv("CALHOST_SOURCE_DIR");
  if (!src)
    return -1;
  snprintf(vec_dir, sizeof vec_dir, "%s/tests/store/vectors/store-v1", src);
  return 0;
}

/* The vector check itself is shared with the Windows test (vector_check.h). */
typedef vc_diags diags;
#define on_diag vc_on_diag

static void print_failed_vector(void *user, const char *name, const char *why) {
  (void)user;
  print_message("vector %s: %s\n", name, why);
}

/* Every line of expected.tsv; every failing vector is listed. */
static void every_format_vector_gives_its_expected_result(void **state) {
  (void)state;
  int failed = 0;
  char *tmp = tu_mkdtemp();
  int files = vc_check_all(vec_dir, tmp, print_failed_vector, NULL, &failed);
  tu_rmtree(tmp);
  free(tmp);
  assert_int_equal(failed, 0);
  assert_true(files >= 40);
}

static unsigned first_line_of(const char *vector, calstore_status *st) {
  char path[PATH_MAX + 300];
  snprintf(path, sizeof path, "%s/%s", vec_dir, vector);
  diags d = {0};
  *st = calstore_read_file(path, NULL, NULL, on_diag, &d, NULL);
  return d.first_line;
}

/* Diagnostics name the offending line. */
static void vector_errors_name_the_line(void **state) {
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

static void every_diagnostic_of_a_file_is_reported(void **state) {
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

static void malformed_records_are_refused_at_their_line(void **state) {
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
             8); /* portable without structure: at its `end` */
  expect_bad(HDR "profile portable calibrated\nbackend \"b\"\noperator \"o\"\nimplementation "
                 "\"1\"\nstructure \"a\" \"1\"\nstructure \"a\" \"2\"\npolicy \"p\"\nend\n",
             7); /* duplicate structure name: the second one's line */
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

/* An exact record's lines up to (not including) its measurement and
 * policy; a portable record's first lines. */
#define EXACT_HEAD                                                                                 \
  HDR "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation \"1\"\n"            \
      "model_digest \"d\"\nprocessor \"p\"\n"
#define PORTABLE_HEAD                                                                              \
  HDR "profile portable override\nbackend \"b\"\noperator \"o\"\nimplementation \"1\"\n"

/* Reads text expecting status (its first diagnostic at line, naming
 * `says` when not NULL). */
static void expect_read(const char *text, calstore_status status, unsigned line, const char *says) {
  diags d = {0};
  calstore_status st = calstore_read_buffer(text, strlen(text), NULL, NULL, on_diag, &d, NULL);
  if (st != status || (status != CALSTORE_OK && d.first_line != line) ||
      (says && !strstr(d.first_msg, says)))
    fail_msg("got %s line %u (%s), want %s line %u ('%s') for:\n%s", calstore_status_name(st),
             d.first_line, d.first_msg, calstore_status_name(status), line, says ? says : "", text);
}

/* Each line kind's every way of breaking the grammar is refused at its line
 * with what is wrong, and each lenient form the spec allows is read (the
 * record's fields, the counts and the decimal numbers of section 4). */
static void each_field_error_is_refused_with_its_reason(void **state) {
  (void)state;
  char text[1024];
  /* thread_count: value forms (line 8) */
  static const struct {
    const char *value, *says; /* says NULL: read */
  } counts[] = {
      {"", "missing value"},
      {"x", "is not a number"},
      {"+", "is not a number"},
      {"-3", "is negative"},
      {"-00", "at least 1"},
      {"0", "at least 1"},
      {"+8", NULL},
      {"008", NULL},
      {"99999999999x", "not a number"},
      {"99999999999", "too large"},
      {"-0x", "is negative"},
      {"8 x", "unexpected text"},
  };
  for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
    snprintf(text, sizeof text,
             EXACT_HEAD "thread_count %s\nmeasurement \"m\" 1 \"u\"\npolicy \"p\"\nend\n",
             counts[i].value);
    expect_read(text, counts[i].says ? CALSTORE_MALFORMED : CALSTORE_OK, 8, counts[i].says);
  }
  /* measurement values (line 9): [+-]? (digits (. digits*)? | . digits) ([eE] [+-]? digits)? */
  static const struct {
    const char *value;
    double want; /* NAN: refused */
  } numbers[] = {
      {"1", 1},
      {"-2.5", -2.5},
      {"+.5", 0.5},
      {"7.", 7},
      {"1e3", 1000},
      {"1E+3", 1000},
      {"25e-1", 2.5},
      {"-0", 0},
      {".", NAN},
      {"e5", NAN},
      {"1e", NAN},
      {"1e+", NAN},
      {"1.5.2", NAN},
      {"0x10", NAN},
      {"--1", NAN},
      {"1e999", NAN},
      {"+", NAN},
      {"1e5x", NAN},
      {"+1", 1},
      {"-.25", -0.25},
      {"inf", NAN},
      {"nan", NAN},
      {"0.1000000000000000055511151231257827021181583404541015625000000000000000000000000000000"
       "0000000000000000000000000000000000000000001",
       0.1},
  };
  for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++) {
    snprintf(text, sizeof text,
             EXACT_HEAD "thread_count 1\nmeasurement \"m\" %s \"u\"\npolicy \"p\"\nend\n",
             numbers[i].value);
    capture c = {0};
    calstore_status st =
        calstore_read_buffer(text, strlen(text), capture_first, &c, NULL, NULL, NULL);
    if (isnan(numbers[i].want) ? st != CALSTORE_MALFORMED
                               : st != CALSTORE_OK || c.value != numbers[i].want)
      fail_msg("measurement %s: %s, value %g", numbers[i].value, calstore_status_name(st), c.value);
  }
  /* a measurement's other parts (line 9) */
  static const struct {
    const char *line, *says;
  } measurements[] = {
      {"measurement", "measurement name"},
      {"measurement \"m\"", "missing value"},
      {"measurement \"m\" 1", "unit"},
      {"measurement \"m\" 1 \"u\" x", "unexpected text after the unit"},
      {"measurement \"m\" 1\"u\"", NULL}, /* a quote ends the number */
  };
  for (size_t i = 0; i < sizeof measurements / sizeof *measurements; i++) {
    snprintf(text, sizeof text, EXACT_HEAD "thread_count 1\n%s\npolicy \"p\"\nend\n",
             measurements[i].line);
    expect_read(text, measurements[i].says ? CALSTORE_MALFORMED : CALSTORE_OK, 9,
                measurements[i].says);
  }
  /* a portable record's lines (line 6) */
  static const struct {
    const char *line, *says;
  } portable[] = {
      {"structure", "structure name"},
      {"structure \"\" \"1\"", "structure name is empty"},
      {"structure \"a\"", "structure value"},
      {"structure \"a\" \"1\" x", "unexpected text after the value"},
      {"model_digest \"d\"", "in a portable record"},
      {"processor \"p\"", "in a portable record"},
      {"thread_count 2", "in a portable record"},
      {"thread_count 0\nstructure \"a\" \"1\"", NULL}, /* 0 and "" are absent */
      {"model_digest \"\"\nstructure \"a\" \"1\"", NULL},
  };
  for (size_t i = 0; i < sizeof portable / sizeof *portable; i++) {
    snprintf(text, sizeof text, PORTABLE_HEAD "%s\npolicy \"p\"\nend\n", portable[i].line);
    expect_read(text, portable[i].says ? CALSTORE_MALFORMED : CALSTORE_OK, 6, portable[i].says);
  }
  /* the other lines of a record */
  expect_read(EXACT_HEAD "structure \"a\" \"1\"\n", CALSTORE_MALFORMED, 8, "in an exact record");
  expect_read(EXACT_HEAD "colour \"red\"\n", CALSTORE_MALFORMED, 8, "unknown field");
  expect_read(EXACT_HEAD "processor \"q\"\n", CALSTORE_MALFORMED, 8, "line 7 has it already");
  expect_read(EXACT_HEAD "policy \"\"\n", CALSTORE_MALFORMED, 8, "policy is empty");
  expect_read(EXACT_HEAD "policy \"p\" x\n", CALSTORE_MALFORMED, 8, "unexpected text");
  expect_read(EXACT_HEAD "thread_count 1\npolicy \"p\"\nend x\n", CALSTORE_MALFORMED, 10,
              "after 'end'");
  expect_read(HDR "profile exact calibrated\nend\n", CALSTORE_MALFORMED, 3, "no 'backend' line");
  expect_read(HDR "profile exact calibrated\nbackend \"b\"\nend\n", CALSTORE_MALFORMED, 4,
              "no 'operator' line");
  expect_read(HDR "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nend\n",
              CALSTORE_MALFORMED, 5, "no 'implementation' line");
  expect_read(HDR "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation "
                  "\"1\"\nend\n",
              CALSTORE_MALFORMED, 6, "no 'model_digest' line");
  expect_read(HDR "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation "
                  "\"1\"\nmodel_digest \"d\"\nend\n",
              CALSTORE_MALFORMED, 7, "no 'processor' line");
  expect_read(EXACT_HEAD "end\n", CALSTORE_MALFORMED, 8, "no 'thread_count' line");
  expect_read(EXACT_HEAD "thread_count 1\nend\n", CALSTORE_MALFORMED, 9, "no 'policy' line");
  expect_read(HDR "profile exact override\n", CALSTORE_MALFORMED, 2, NULL); /* unfinished */
  expect_read(HDR "profile exact calibrate\n", CALSTORE_MALFORMED, 2, NULL);
  expect_read(HDR "profile portables calibrated\n", CALSTORE_MALFORMED, 2, NULL);
  expect_read(HDR "profile exact overrides\n", CALSTORE_MALFORMED, 2, NULL);
  expect_read("onnx_light_calibration_profile 1\n", CALSTORE_MALFORMED, 1, NULL);
  /* words of the right length that are not the word */
  expect_read(HDR "profile portablx calibrated\n", CALSTORE_MALFORMED, 2, NULL);
  expect_read(HDR "profile exact calibratex\n", CALSTORE_MALFORMED, 2, NULL);
  expect_read(HDR "profile exact overridx\n", CALSTORE_MALFORMED, 2, NULL);
  expect_read("onnx_light_calibration_profilez 1\n", CALSTORE_MALFORMED, 1, NULL);
  expect_read("", CALSTORE_MALFORMED, 1, NULL); /* no header: reported at line 1 */
  expect_read(HDR "profile exact calibrated\nbackend \"ab\\\n", CALSTORE_MALFORMED, 3,
              "unterminated quoted string"); /* a backslash ends the line */
  /* NUL bytes: in an unquoted value, after a backslash */
  static const char unquoted[] = HDR "profile exact calibrated\nbackend ab\0c\n";
  static const char escaped[] = HDR "profile exact calibrated\nbackend \"a\\\0\"\n";
  const char *nuls[] = {unquoted, escaped};
  size_t lens[] = {sizeof unquoted - 1, sizeof escaped - 1};
  for (int i = 0; i < 2; i++) {
    diags d = {0};
    assert_int_equal(calstore_read_buffer(nuls[i], lens[i], NULL, NULL, on_diag, &d, NULL),
                     CALSTORE_MALFORMED);
    assert_int_equal(d.first_line, 3);
    assert_non_null(strstr(d.first_msg, "NUL byte"));
  }
}

static void escapes_and_values_read_exactly(void **state) {
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

/* ---- host/store/README.md, "Reading files written by hand" --------------- */

typedef struct loaded {
  size_t n;
  struct {
    calstore_key_kind kind;
    char backend[64], digest[80], processor[128];
    int has_digest, has_processor;
    uint32_t threads;
    size_t nstruct, nmeas;
    char struct0[32], struct1[32];
    char meas[12][32], unit[12][16];
    double value[12];
    char policy[64];
  } p[8];
} loaded;

static int load_visit(void *user, const calstore_profile *p) {
  loaded *l = user;
  if (l->n >= 8)
    return 0;
  memset(&l->p[l->n], 0, sizeof l->p[l->n]);
  l->p[l->n].kind = p->key.kind;
  snprintf(l->p[l->n].backend, sizeof l->p[l->n].backend, "%s", p->key.backend);
  if ((l->p[l->n].has_digest = p->key.model_digest != NULL))
    snprintf(l->p[l->n].digest, sizeof l->p[l->n].digest, "%s", p->key.model_digest);
  if ((l->p[l->n].has_processor = p->key.processor != NULL))
    snprintf(l->p[l->n].processor, sizeof l->p[l->n].processor, "%s", p->key.processor);
  l->p[l->n].threads = p->key.thread_count;
  l->p[l->n].nstruct = p->key.structure_count;
  if (p->key.structure_count > 1) {
    snprintf(l->p[l->n].struct0, 32, "%s", p->key.structure[0].name);
    snprintf(l->p[l->n].struct1, 32, "%s", p->key.structure[1].name);
  }
  l->p[l->n].nmeas = p->measurement_count;
  for (size_t i = 0; i < p->measurement_count && i < 12; i++) {
    snprintf(l->p[l->n].meas[i], 32, "%s", p->measurements[i].name);
    snprintf(l->p[l->n].unit[i], 16, "%s", p->measurements[i].unit);
    l->p[l->n].value[i] = p->measurements[i].value;
  }
  snprintf(l->p[l->n].policy, sizeof l->p[l->n].policy, "%s", p->policy);
  l->n++;
  return 0;
}

static void check_field_order(const loaded *l) {
  assert_int_equal(l->n, 2);
  assert_string_equal(l->p[0].backend, "example_gpu");
  assert_int_equal(l->p[0].threads, 8);
  assert_int_equal(l->p[0].nmeas, 2); /* in file order */
  assert_string_equal(l->p[0].meas[0], "median_latency");
  assert_string_equal(l->p[0].meas[1], "p90_latency");
  assert_string_equal(l->p[0].policy, "opaque backend data");
  assert_int_equal(l->p[1].nstruct, 2);
  assert_string_equal(l->p[1].struct0, "dtype"); /* sorted by name */
  assert_string_equal(l->p[1].struct1, "shape");
}

static void check_portable_empty(const loaded *l) {
  assert_int_equal(l->n, 1);
  assert_int_equal(l->p[0].kind, CALSTORE_KEY_PORTABLE);
  assert_false(l->p[0].has_digest); /* absent, not "" */
  assert_false(l->p[0].has_processor);
  assert_int_equal(l->p[0].threads, 0);
  assert_int_equal(l->p[0].nstruct, 2);
}

static void check_counts(const loaded *l) {
  assert_int_equal(l->n, 2);
  assert_int_equal(l->p[0].threads, 8);
  assert_int_equal(l->p[1].threads, 4);
}

static void check_numbers(const loaded *l) {
  static const double want[] = {2.5, 0.5, 5, 1000, 2.5, -0.0, 1e-7, 2.5, 7, 0.1};
  assert_int_equal(l->n, 1);
  assert_int_equal(l->p[0].nmeas, 10);
  for (size_t i = 0; i < 10; i++)
    if (l->p[0].value[i] != want[i] || signbit(l->p[0].value[i]) != signbit(want[i]))
      fail_msg("measurement %s: %.17g, want %.17g", l->p[0].meas[i], l->p[0].value[i], want[i]);
  assert_string_equal(l->p[0].meas[7], "h");
  assert_string_equal(l->p[0].unit[7], "us"); /* 2.5"us" */
}

static void check_one(const loaded *l) {
  assert_int_equal(l->n, 1);
  assert_string_equal(l->p[0].backend, "example_gpu");
}

static void check_blanks(const loaded *l) {
  assert_true(l->n >= 2);
  assert_string_equal(l->p[0].backend, "example_gpu");
  assert_string_equal(l->p[0].processor, "x86_64:l2=1048576");
  assert_int_equal(l->p[0].threads, 8);
  assert_true(l->p[0].nmeas >= 1 && l->p[0].value[0] == 2.5);
  assert_string_equal(l->p[0].unit[0], "us");
}

static void check_portable_minus_zero(const loaded *l) {
  assert_int_equal(l->n, 1);
  assert_int_equal(l->p[0].kind, CALSTORE_KEY_PORTABLE);
  assert_int_equal(l->p[0].threads, 0); /* -0 is zero: absent */
  assert_int_equal(l->p[0].nstruct, 2);
}

static void check_cr(const loaded *l) {
  assert_int_equal(l->n, 1);
  assert_string_equal(l->p[0].processor, "x86_64\rl2=1048576"); /* kept inside the quotes */
  assert_string_equal(l->p[0].unit[0], "u\rs");
  assert_string_equal(l->p[0].policy, "opaque\rbackend data");
}

/* Each row of the table: its vector, what calhost does with it (loaded
 * profiles checked by `check`, or the refusal's line, message and status:
 * malformed unless refused_as says unsupported_version). The
 * canonical rewrite of each loading vector is checked by
 * every_format_vector_gives_its_expected_result. */
static const struct deviation {
  const char *vector;
  void (*check)(const loaded *l); /* NULL: refused */
  unsigned line;
  const char *message;
  calstore_status refused_as; /* 0: CALSTORE_MALFORMED */
} deviations[] = {
    {"ok_tabs.txt", check_blanks, 0, NULL, 0},
    {"ok_blanks_vt.txt", check_blanks, 0, NULL, 0},
    {"ok_blanks_ff.txt", check_blanks, 0, NULL, 0},
    {"ok_blanks_cr.txt", check_blanks, 0, NULL, 0},
    {"ok_blanks_two_spaces.txt", check_blanks, 0, NULL, 0},
    {"ok_crlf.txt", check_blanks, 0, NULL, 0},
    {"ok_blanks_mixed.txt", check_blanks, 0, NULL, 0},
    {"ok_field_order.txt", check_field_order, 0, NULL, 0},
    {"bad_repeated_policy.txt", NULL, 11, "a record has one 'policy' (line 10 has it already)", 0},
    {"bad_repeated_key_field.txt", NULL, 4, "a record has one 'backend' (line 3 has it already)",
     0},
    {"ok_portable_empty_exact_fields.txt", check_portable_empty, 0, NULL, 0},
    {"bad_portable_with_threads.txt", NULL, 6, "'thread_count' in a portable record", 0},
    {"ok_header_plus_one.txt", check_one, 0, NULL, 0},
    {"bad_header_minus_one.txt", NULL, 1, "bad header", 0},
    {"ok_count_forms.txt", check_counts, 0, NULL, 0},
    {"bad_negative_threads.txt", NULL, 8, "thread_count: -1 is negative", 0},
    {"ok_number_forms.txt", check_numbers, 0, NULL, 0},
    {"bad_glued_unit.txt", NULL, 9, "'5us' is not a decimal number", 0},
    {"bad_hex_measurement.txt", NULL, 9, "'0x10' is not a decimal number", 0},
    {"bad_nul_in_value.txt", NULL, 10, "NUL byte", 0},
    {"ok_comment_before_header.txt", check_one, 0, NULL, 0},
    {"ok_vt_ff_lines.txt", check_one, 0, NULL, 0},
    /* issue 22 item 33: the differences a differential run found */
    {"bad_header_minus_u32max.txt", NULL, 1, "bad header", 0},
    {"unsupported_header_minus_zero.txt", NULL, 1, "unsupported schema version -0",
     CALSTORE_UNSUPPORTED_VERSION},
    {"unsupported_header_above_u32.txt", NULL, 1, "unsupported schema version 4294967296",
     CALSTORE_UNSUPPORTED_VERSION},
    {"ok_portable_minus_zero_threads.txt", check_portable_minus_zero, 0, NULL, 0},
    {"ok_cr_in_value.txt", check_cr, 0, NULL, 0},
    {"bad_unknown_field.txt", NULL, 11, "unknown field 'color'", 0},
    {"bad_empty_policy.txt", NULL, 10, "policy is empty", 0},
    {"bad_unterminated.txt", NULL, 10, "is not terminated by 'end'", 0},
};

static void each_reference_deviation_behaves_as_documented(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof deviations / sizeof deviations[0]; i++) {
    const struct deviation *d = &deviations[i];
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", vec_dir, d->vector);
    loaded l = {0};
    diags dg = {0};
    calstore_status st = calstore_read_file(path, load_visit, &l, on_diag, &dg, NULL);
    if (d->check) {
      if (st != CALSTORE_OK)
        fail_msg("%s: %s (%s)", d->vector, calstore_status_name(st), dg.first_msg);
      d->check(&l);
    } else {
      calstore_status want = d->refused_as ? d->refused_as : CALSTORE_MALFORMED;
      if (st != want || dg.first_line != d->line)
        fail_msg("%s: %s at line %u, want %s at line %u", d->vector, calstore_status_name(st),
                 dg.first_line, calstore_status_name(want), d->line);
      if (!strstr(dg.first_msg, d->message))
        fail_msg("%s: message '%s' lacks '%s'", d->vector, dg.first_msg, d->message);
      assert_int_equal(l.n, 0);
    }
  }
}

/* The README's table names exactly the vectors above, and its calhost
 * column says "loads" or "malformed" as they do. */
static void deviation_table_is_documented(void **state) {
  (void)state;
  const char *src = getenv("CALHOST_SOURCE_DIR");
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/host/store/README.md", src);
  char *text = harness_slurp(path, NULL);
  assert_non_null(text);
  char *sec = strstr(text, "## Reading files written by hand");
  assert_non_null(sec);
  char *sec_end = strstr(sec + 3, "\n## ");
  if (sec_end)
    *sec_end = '\0';
  size_t n = sizeof deviations / sizeof deviations[0], rows = 0;
  int *seen = calloc(n, sizeof *seen);
  for (char *line = sec; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, "| ", 2) || !strncmp(line, "| input", 7))
      continue;
    char *eol = strchr(line, '\n');
    if (eol)
      *eol = '\0';
    /* columns: input | reference | calhost | why | vector */
    char *col[6] = {0};
    int k = 0;
    for (char *c = line; (c = strchr(c, '|')) && k < 6; c++)
      col[k++] = c + 1;
    assert_true(k == 6);
    rows++;
    int loads = !strncmp(col[2], " loads", 6), refused = !strncmp(col[2], " malformed", 10);
    int unsupported = !strncmp(col[2], " unsupported_version", 20);
    if (!loads && !refused && !unsupported)
      fail_msg("README row without 'loads', 'malformed' or 'unsupported_version' in the calhost "
               "column: %s",
               line);
    int vectors = 0;
    for (char *v = col[4]; (v = strchr(v, '`')) && v < col[5]; v = strchr(v + 1, '`') + 1) {
      char name[128];
      size_t len = (size_t)(strchr(v + 1, '`') - (v + 1));
      snprintf(name, sizeof name, "%.*s", (int)len, v + 1);
      size_t j = 0;
      while (j < n && strcmp(deviations[j].vector, name))
        j++;
      if (j == n)
        fail_msg(
            "README names %s, which each_reference_deviation_behaves_as_documented does not check",
            name);
      if ((deviations[j].check != NULL) != loads ||
          (!loads && (deviations[j].refused_as == CALSTORE_UNSUPPORTED_VERSION) != unsupported))
        fail_msg("README says %s for %s",
                 loads     ? "loads"
                 : refused ? "malformed"
                           : "unsupported",
                 name);
      seen[j] = 1;
      vectors++;
    }
    if (!vectors)
      fail_msg("README row without a vector: %s", line);
    if (eol)
      *eol = '\n';
  }
  for (size_t j = 0; j < n; j++)
    if (!seen[j])
      fail_msg("%s is checked but not in the README's table", deviations[j].vector);
  assert_true(rows >= 10);
  free(seen);
  free(text);
}

/* A commit rewrites every record it keeps; those of a hand-edited file come
 * out canonical (the file's own text is reused only when it is canonical). */
static void commit_rewrites_kept_records_canonically(void **state) {
  (void)state;
  static const char *files[] = {"ok_tabs.txt", "ok_blanks_cr.txt", "ok_blanks_mixed.txt",
                                "ok_field_order.txt", "ok_number_forms.txt"};
  char *dir = tu_mkdtemp(), *store = tu_path(dir, "profiles.txt");
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char in[PATH_MAX + 300], canon[PATH_MAX + 300];
    snprintf(in, sizeof in, "%s/%s", vec_dir, files[i]);
    snprintf(canon, sizeof canon, "%s/canonical/%s", vec_dir, files[i]);
    char *text = harness_slurp(in, NULL), *want = harness_slurp(canon, NULL);
    size_t text_len = 0;
    free(text);
    text = harness_slurp(in, &text_len);
    FILE *f = fopen(store, "wb");
    fwrite(text, 1, text_len, f);
    fclose(f);
    calstore *s = tu_open(store, NULL);
    assert_non_null(s);
    calstore_key k = tu_exact("zz_new", "1", "d", "p", 2);
    assert_int_equal(tu_store(s, &k, "new", 1.5), CALSTORE_OK);
    char *got = harness_slurp(store, NULL);
    const char *added = "profile exact calibrated\nbackend \"zz_new\"\noperator \"MatMul\"\n"
                        "implementation \"1\"\nmodel_digest \"d\"\nprocessor \"p\"\n"
                        "thread_count 2\nmeasurement \"median_latency\" 1.5 \"us\"\n"
                        "policy \"new\"\nend\n";
    size_t wl = strlen(want);
    if (strncmp(got, want, wl) || strcmp(got + wl, added))
      fail_msg("%s: the commit wrote\n%s\n--- want ---\n%s%s", files[i], got, want, added);
    calstore_close(&s);
    free(got);
    free(text);
    free(want);
  }
  tu_rmtree(dir);
  free(dir);
  free(store);
}

/* Issue 22 item 33: a commit that changes nothing (a clear of an absent
 * override, an invalidate matching nothing, a conditional put that keeps
 * the stored profile) writes nothing: an oddly spaced file keeps its bytes;
 * the first commit that changes something rewrites it canonically. */
static void a_noop_commit_leaves_the_file_untouched(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *store = tu_path(dir, "profiles.txt");
  char in[PATH_MAX + 300];
  snprintf(in, sizeof in, "%s/ok_tabs.txt", vec_dir);
  size_t len = 0;
  char *text = harness_slurp(in, &len);
  FILE *f = fopen(store, "wb");
  fwrite(text, 1, len, f);
  fclose(f);
  calstore *s = tu_open(store, NULL);
  calstore_key absent = tu_exact("nobody", "1", "d", "p", 2);
  assert_int_equal(calstore_clear_override(s, &absent, NULL), CALSTORE_NOT_FOUND);
  size_t removed = 9;
  assert_int_equal(calstore_invalidate(s, "nobody", NULL, &removed, NULL), CALSTORE_OK);
  assert_int_equal(removed, 0);
  size_t now_len = 0;
  char *now = harness_slurp(store, &now_len);
  assert_int_equal(now_len, len);
  assert_memory_equal(now, text, len);
  free(now);
  /* a change rewrites it */
  assert_int_equal(tu_store(s, &absent, "new", 1), CALSTORE_OK);
  now = harness_slurp(store, &now_len);
  assert_true(now_len != len || memcmp(now, text, len));
  free(now);
  calstore_close(&s);
  free(text);
  tu_rmtree(dir);
  free(dir);
  free(store);
}

/* CRLF line ends read like LF ones (the reference reads with operator>>);
 * the rewrite is canonical LF. */
static void crlf_line_ends_read_like_lf_and_rewrite_as_lf(void **state) {
  (void)state;
  char path[PATH_MAX + 300], canon[PATH_MAX + 300];
  snprintf(path, sizeof path, "%s/ok_mixed_sources.txt", vec_dir);
  snprintf(canon, sizeof canon, "%s/canonical/ok_mixed_sources.txt", vec_dir);
  size_t len = 0;
  char *text = harness_slurp(path, &len);
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
  char *a = harness_slurp(out, NULL), *b = harness_slurp(canon, NULL);
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
static void missing_and_unreadable_files_give_their_own_status(void **state) {
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

static void status_and_reason_names_are_stable_words(void **state) {
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

static void a_large_file_round_trips_and_noncanonical_text_is_rewritten(void **state) {
  (void)state;
  size_t len, clen;
  char *canon = big_text(0, &clen, NULL);
  char *commented = big_text(1, &len, NULL);
  /* tabs where only the separators differ (same length, records in place):
   * the parallel loader must not keep such text either */
  char *tabbed = malloc(clen + 1);
  memcpy(tabbed, canon, clen + 1);
  size_t replaced = 0;
  for (char *t = tabbed, *end = tabbed + clen; (t = memchr(t, '\n', (size_t)(end - t))); t++) {
    if (!strncmp(t, "\nthread_count ", 14) && ++replaced % 3 == 0)
      t[13] = '\t';
    if (!strncmp(t, "\nprofile portable ", 18))
      t[8] = '\t';
  }
  char *dir = tu_mkdtemp(), *in = tu_path(dir, "in.txt"), *out = tu_path(dir, "out.txt");
  for (int variant = 0; variant < 3; variant++) {
    const char *text = variant == 0 ? canon : variant == 1 ? commented : tabbed;
    FILE *f = fopen(in, "wb");
    fwrite(text, 1, variant == 1 ? len : clen, f);
    fclose(f);
    calstore *s = tu_open(in, NULL);
    assert_int_equal(calstore_count(s), BIG_RECORDS);
    calstore_error err = {0};
    assert_int_equal(calstore_export(s, out, &err), CALSTORE_OK);
    size_t olen = 0;
    char *got = harness_slurp(out, &olen);
    assert_int_equal(olen, clen);
    assert_true(!memcmp(got, canon, clen)); /* canonical, in file order */
    free(got);
    /* a commit rewrites it byte for byte plus the new profile */
    calstore_key k = tu_exact("zz", "1", "d", "p", 1);
    assert_int_equal(tu_store(s, &k, "new", 1), CALSTORE_OK);
    got = harness_slurp(in, &olen);
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
  free(tabbed);
}

static void large_file_errors_have_exact_lines(void **state) {
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
      cmocka_unit_test(every_format_vector_gives_its_expected_result),
      cmocka_unit_test(vector_errors_name_the_line),
      cmocka_unit_test(every_diagnostic_of_a_file_is_reported),
      cmocka_unit_test(malformed_records_are_refused_at_their_line),
      cmocka_unit_test(escapes_and_values_read_exactly),
      cmocka_unit_test(each_field_error_is_refused_with_its_reason),
      cmocka_unit_test(each_reference_deviation_behaves_as_documented),
      cmocka_unit_test(deviation_table_is_documented),
      cmocka_unit_test(commit_rewrites_kept_records_canonically),
      cmocka_unit_test(a_noop_commit_leaves_the_file_untouched),
      cmocka_unit_test(crlf_line_ends_read_like_lf_and_rewrite_as_lf),
      cmocka_unit_test(missing_and_unreadable_files_give_their_own_status),
      cmocka_unit_test(status_and_reason_names_are_stable_words),
      cmocka_unit_test(a_large_file_round_trips_and_noncanonical_text_is_rewritten),
      cmocka_unit_test(large_file_errors_have_exact_lines),
  };
  return cmocka_run_group_tests_name("store_format", tests, setup, NULL);
}
