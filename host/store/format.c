/*
 * format.c: the reader of the version-1 text format: one pass, in place,
 * linear; every problem reported with its 1-based line, resynchronising at
 * the next `profile` line; files over 8 MB parsed in pieces by threads.
 * What it accepts and why (where it differs from the reference reader) is
 * README.md's "Reading files written by hand"; the writer is write.c, the
 * number grammars are number.c.
 *
 *   onnx_light_calibration_profiles 1      (header; comments and blank lines may precede it)
 *   profile exact|portable calibrated|override
 *   backend "B"
 *   operator "O"
 *   implementation "V"
 *   model_digest "D"                       (exact)
 *   processor "P"                          (exact)
 *   thread_count N                         (exact, N >= 1)
 *   structure "NAME" "VALUE"               (portable, one or more, names unique)
 *   measurement "NAME" VALUE "UNIT"        (zero or more, kept in file order)
 *   policy "TEXT"
 *   end
 *
 * Fields may come in any order between `profile` and `end`; each field other
 * than structure and measurement appears at most once. Values are
 * std::quoted strings (an unquoted word is read as it is, as std::quoted
 * does); tokens are separated by blanks (space, tab, CR, VT, FF: a CRLF file
 * reads like an LF one); lines whose first non-blank character is '#' and
 * blank lines are ignored anywhere. Key fields, measurement names and the
 * policy are non-empty; values finite; no NUL byte; no duplicate identity;
 * nothing after a field's value. In a portable record an empty model_digest
 * or processor and a thread_count of 0 mean "absent" (as the reference reads
 * them) and are dropped.
 *
 * A record keeps its own text as its canonical text (zero-copy, in the
 * loaded buffer) only when that text is exactly what the writer renders for
 * it; otherwise the writer renders it once. The parser decides this on the
 * fly (ps->canon, cleared by any deviation: a blank other than one space
 * between tokens, a leading or trailing blank, a CR, a comment or blank line
 * inside the record, an unquoted value or a needless escape, a number not
 * spelled as the writer spells it, fields out of the canonical order, a
 * dropped field, structure lines not sorted); builds with assertions check
 * every decision against the writer (cs_text_is_canonical).
 */
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* memmem */
#endif
#include <assert.h>
#include <math.h>
#if !defined(_WIN32)
#include <pthread.h>
#include <unistd.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

typedef enum state {
  ST_OUTSIDE,
  ST_SKIP,   /* after an error: until the next `profile` line */
  ST_RECORD, /* between `profile` and `end` */
} state;

/* The fields of a record; the ones before F_STRUCTURE appear at most once. */
typedef enum field {
  F_BACKEND,
  F_OPERATOR,
  F_IMPL,
  F_DIGEST,
  F_PROC,
  F_THREADS,
  F_POLICY,
  F_STRUCTURE,
  F_MEASUREMENT,
  F_END,
  F_UNKNOWN,
} field;

#define F_SINGLE F_STRUCTURE /* fields below this one appear at most once */

static const char *const field_name[] = {
    "backend",      "operator", "implementation", "model_digest", "processor",
    "thread_count", "policy",   "structure",      "measurement",  "end",
};
static const unsigned char field_len[] = {7, 8, 14, 12, 9, 12, 6, 9, 11, 3};
/* Each field's place in the canonical order (structure replaces the exact
 * fields in a portable record). */
static const unsigned char field_rank[] = {
    [F_BACKEND] = 0, [F_OPERATOR] = 1,  [F_IMPL] = 2,        [F_DIGEST] = 3, [F_PROC] = 4,
    [F_THREADS] = 5, [F_STRUCTURE] = 5, [F_MEASUREMENT] = 6, [F_POLICY] = 7, [F_END] = 8,
};

static field field_of(const char *w, size_t n) {
  field f;
  switch (n ? w[0] : 0) { /* one comparison per line */
  case 'b':
    f = F_BACKEND;
    break;
  case 'o':
    f = F_OPERATOR;
    break;
  case 'i':
    f = F_IMPL;
    break;
  case 'm':
    f = n == field_len[F_MEASUREMENT] ? F_MEASUREMENT : F_DIGEST;
    break;
  case 'p':
    f = n == field_len[F_POLICY] ? F_POLICY : F_PROC;
    break;
  case 't':
    f = F_THREADS;
    break;
  case 's':
    f = F_STRUCTURE;
    break;
  case 'e':
    f = F_END;
    break;
  default:
    return F_UNKNOWN;
  }
  return n == field_len[f] && !memcmp(w, field_name[f], n) ? f : F_UNKNOWN;
}

typedef struct parser {
  unsigned line;
  calstore_diagnostic_fn diag;
  void *diag_user;
  calstore_error *first;
  calstore_status verdict;
  int oom;
  /* the record being read */
  state st;
  unsigned rec_line;
  unsigned seen_line[F_SINGLE]; /* line of each single field, 0 = not yet */
  calstore_key key;
  calstore_source source;
  const char *policy;
  size_t policy_len;
  calstore_measurement *m;
  size_t mn, mcap;
  calstore_property *s;
  size_t sn, scap;
  char *scratch; /* unescaped strings of the record being read */
  size_t scratch_len;
  cs_buf render;  /* the writer's text of the record, to compare with the file's */
  char *rec_text; /* where the record's text starts */
  int canon;      /* the record's text is so far what the writer renders */
  int rank;       /* field_rank of the record's last field */
  cs_blob *blob;  /* holds buf, or NULL */
  int have_header, stop;
  int collect; /* parallel pieces: records go to vec, duplicates are checked later */
  cs_prof **vec;
  size_t vn, vcap;
} parser;

static void report(parser *ps, calstore_status status, unsigned line, const char *fmt, ...)
    CS_PRINTF(4, 5);
static void report(parser *ps, calstore_status status, unsigned line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ps->verdict == CALSTORE_OK) {
    ps->verdict = status;
    if (ps->first)
      cs_fail(ps->first, status, line, NULL, "line %u: %s", line, msg);
  }
  if (ps->diag)
    ps->diag(ps->diag_user, status, line, msg);
}

/* Token separators: what isspace() accepts except the line break, as the
 * reference reads fields with operator>> (so CRLF files load too). */
static int is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static char *skip_ws(char *p, char *le) {
  while (p < le && is_ws(*p))
    p++;
  return p;
}

/* Nonzero when the token at tok follows the one ending at prev_end as the
 * writer separates them: exactly one space. */
static int one_space(const char *prev_end, const char *tok) {
  return tok == prev_end + 1 && *prev_end == ' ';
}

/* Reads a bare word; returns its end. */
static char *word_end(char *p, char *le) {
  while (p < le && !is_ws(*p))
    p++;
  return p;
}

static int at_end(char *p, char *le) {
  return skip_ws(p, le) == le;
}

/* at_end, clearing ps->canon when blanks trail the line. */
static int at_end_c(parser *ps, char *p, char *le) {
  if (p != le)
    ps->canon = 0;
  return at_end(p, le);
}

/* Bytes that end the fast scan of a quoted string. */
static const unsigned char quote_special[256] = {['"'] = 1, ['\\'] = 1, [0] = 1};

/* Reads a std::quoted string at *pp (after blanks) into the parser's scratch
 * space, unescaped and NUL-terminated. Returns the string or NULL (error
 * message in *why). */
static char *read_quoted(parser *ps, char **pp, char *le, size_t *out_len, const char **why) {
  char *p = skip_ws(*pp, le);
  if (!one_space(*pp, p))
    ps->canon = 0;
  if (p >= le) {
    *why = "expected a quoted string";
    return NULL;
  }
  char *d0 = ps->scratch + ps->scratch_len, *dst = d0;
  if (*p != '"') { /* std::quoted reads an unquoted word as it is */
    char *we = word_end(p, le);
    size_t n = (size_t)(we - p);
    if (memchr(p, '\0', n)) {
      *why = "NUL byte in a value";
      return NULL;
    }
    memcpy(d0, p, n);
    d0[n] = '\0';
    ps->scratch_len += n + 1;
    ps->canon = 0; /* the writer quotes every value */
    *out_len = n;
    *pp = we;
    return d0;
  }
  p++;
  /* fast path: one scan to the first '"', '\\' or NUL; done if it is '"' */
  char *q = p;
  while (q < le && !quote_special[(unsigned char)*q])
    q++;
  if (q < le && *q == '"') {
    size_t n = (size_t)(q - p);
    memcpy(d0, p, n);
    d0[n] = '\0';
    ps->scratch_len += n + 1;
    *out_len = n;
    *pp = q + 1;
    return d0;
  }
  for (;;) {
    if (p >= le) {
      *why = "unterminated quoted string";
      return NULL;
    }
    char c = *p++;
    if (c == '\0') {
      *why = "NUL byte in a quoted string";
      return NULL;
    }
    if (c == '"')
      break;
    if (c == '\\') {
      if (p >= le) {
        *why = "unterminated quoted string";
        return NULL;
      }
      c = *p++;
      if (c == '\0') {
        *why = "NUL byte in a quoted string";
        return NULL;
      }
      if (c != '"' && c != '\\')
        ps->canon = 0; /* the writer escapes only '"' and '\\' */
    }
    *dst++ = c;
  }
  *dst = '\0';
  *out_len = (size_t)(dst - d0);
  ps->scratch_len += *out_len + 1;
  *pp = p;
  return d0;
}

/* cs_grow for the record being read: sets ps->oom when it fails. */
static void *parser_grow(parser *ps, void *items, size_t need, size_t *cap, size_t size) {
  void *grown = cs_grow(items, need, cap, size, 8);
  if (!grown)
    ps->oom = 1;
  return grown;
}

/* A `profile` line: [ls, le) is the line, p the end of the word `profile`;
 * line_canon: the line starts with that word and ends with a line break. */
static void start_record(parser *ps, char *ls, char *p, char *le, int line_canon) {
  char *w = skip_ws(p, le), *we = word_end(w, le);
  calstore_key_kind kind;
  memset(&ps->key, 0, sizeof ps->key);
  memset(ps->seen_line, 0, sizeof ps->seen_line);
  ps->mn = ps->sn = 0;
  ps->policy = NULL;
  ps->rec_line = ps->line;
  ps->rec_text = ls;
  ps->scratch_len = 0;
  ps->rank = 0;
  ps->canon = line_canon && one_space(p, w);
  if (we - w == 5 && !memcmp(w, "exact", 5))
    kind = CALSTORE_KEY_EXACT;
  else if (we - w == 8 && !memcmp(w, "portable", 8))
    kind = CALSTORE_KEY_PORTABLE;
  else {
    report(ps, CALSTORE_MALFORMED, ps->line, "unknown profile kind '%.*s' (exact or portable)",
           (int)(we - w), w);
    ps->st = ST_SKIP;
    return;
  }
  w = skip_ws(we, le);
  if (!one_space(we, w))
    ps->canon = 0;
  we = word_end(w, le);
  if (we - w == 10 && !memcmp(w, "calibrated", 10))
    ps->source = CALSTORE_SOURCE_CALIBRATED;
  else if (we - w == 8 && !memcmp(w, "override", 8))
    ps->source = CALSTORE_SOURCE_OVERRIDE;
  else {
    report(ps, CALSTORE_MALFORMED, ps->line,
           "unknown profile source '%.*s' (calibrated or override)", (int)(we - w), w);
    ps->st = ST_SKIP;
    return;
  }
  if (!at_end_c(ps, we, le)) {
    report(ps, CALSTORE_MALFORMED, ps->line, "unexpected text after the profile line");
    ps->st = ST_SKIP;
    return;
  }
  ps->key.kind = kind;
  ps->st = ST_RECORD;
}

/* Builds and indexes the record that ends at rec_end (after its `end` line). */
static void finish_record(parser *ps, cs_set *set, char *rec_end) {
  if (ps->sn) {
    cs_sort_properties(ps->s, ps->sn); /* names are unique (checked per line) */
    ps->key.structure = ps->s;
    ps->key.structure_count = ps->sn;
  }
  size_t text_len = (size_t)(rec_end - ps->rec_text);
  int canon = ps->canon;
#ifndef NDEBUG
  /* The writer is the definition of canonical; the parser's test is checked
   * against it wherever assertions are on (Debug and sanitizer builds). */
  calstore_profile view = {.key = ps->key,
                           .source = ps->source,
                           .measurements = ps->m,
                           .measurement_count = ps->mn,
                           .policy = ps->policy,
                           .policy_length = ps->policy_len};
  assert(canon == cs_text_is_canonical(&view, ps->rec_text, text_len, &ps->render) ||
         ps->render.oom);
#endif
  cs_prof *p = cs_prof_create(&ps->key, ps->source, ps->m, ps->mn, ps->policy, ps->policy_len,
                              canon ? ps->rec_text : NULL, canon ? text_len : 0, ps->blob);
  if (!p) {
    ps->oom = 1;
    return;
  }
  if (ps->collect) {
    cs_prof **vec = parser_grow(ps, ps->vec, ps->vn + 1, &ps->vcap, sizeof *vec);
    if (!vec) {
      cs_prof_unref(p);
      return;
    }
    ps->vec = vec;
    ps->vec[ps->vn++] = p;
    return;
  }
  if (cs_set_find(set, &p->v.key, p->v.source, p->id_hash) >= 0) {
    report(ps, CALSTORE_MALFORMED, ps->rec_line,
           "duplicate profile: the same identity and source appear earlier in the file");
    cs_prof_unref(p);
    return;
  }
  if (cs_set_append(set, p) != 0)
    ps->oom = 1;
}

/* The `end` line: checks that the record is complete, then builds it. */
static void end_record(parser *ps, cs_set *set, char *rec_end) {
  const char *missing = NULL;
  if (!ps->key.backend)
    missing = "backend";
  else if (!ps->key.operator_name)
    missing = "operator";
  else if (!ps->key.implementation)
    missing = "implementation";
  else if (ps->key.kind == CALSTORE_KEY_EXACT && !ps->key.model_digest)
    missing = "model_digest";
  else if (ps->key.kind == CALSTORE_KEY_EXACT && !ps->key.processor)
    missing = "processor";
  else if (ps->key.kind == CALSTORE_KEY_EXACT && !ps->key.thread_count)
    missing = "thread_count";
  else if (ps->key.kind == CALSTORE_KEY_PORTABLE && !ps->sn)
    missing = "structure";
  else if (!ps->policy)
    missing = "policy";
  ps->st = ST_OUTSIDE;
  if (missing) {
    report(ps, CALSTORE_MALFORMED, ps->line, "the %s record started at line %u has no '%s' line",
           ps->key.kind == CALSTORE_KEY_EXACT ? "exact" : "portable", ps->rec_line, missing);
    return;
  }
  finish_record(ps, set, rec_end);
}

/* The end of a measurement's number: a blank or a quote (a quoted unit may
 * follow the number without a blank: no number contains a quote). */
static char *number_end(char *p, char *le) {
  while (p < le && !is_ws(*p) && *p != '"')
    p++;
  return p;
}

/* A record line that breaks the grammar: reported, the rest of the record
 * skipped, and the function (void, with ps in scope) returns. */
#define LINE_FAIL(...)                                                                             \
  do {                                                                                             \
    report(ps, CALSTORE_MALFORMED, ps->line, __VA_ARGS__);                                         \
    ps->st = ST_SKIP;                                                                              \
    return;                                                                                        \
  } while (0)

/* `thread_count N`; p: after the field's word, the line ends at le. */
static void threads_line(parser *ps, char *p, char *le) {
  char *n = skip_ws(p, le), *ne = word_end(n, le);
  uint32_t v = 0;
  if (n == ne)
    LINE_FAIL("thread_count: missing value");
  if (!one_space(p, n) || *n == '0' || *n == '+' || *n == '-')
    ps->canon = 0; /* the writer prints no sign and no leading zero */
  switch (cs_read_count(n, (size_t)(ne - n), &v)) {
  case CS_COUNT_OK:
    break;
  case CS_COUNT_NEGATIVE:
    LINE_FAIL("thread_count: %.*s is negative", (int)(ne - n), n);
  case CS_COUNT_TOO_LARGE:
    LINE_FAIL("thread_count: %.*s is too large", (int)(ne - n), n);
  default:
    LINE_FAIL("thread_count: '%.*s' is not a number", (int)(ne - n), n);
  }
  if (!at_end_c(ps, ne, le))
    LINE_FAIL("thread_count: unexpected text after the value");
  if (ps->key.kind == CALSTORE_KEY_PORTABLE) {
    if (v)
      LINE_FAIL("'thread_count' in a portable record");
    ps->canon = 0; /* 0: absent, dropped by the writer */
    return;
  }
  if (v < 1)
    LINE_FAIL("thread_count must be at least 1");
  ps->key.thread_count = v;
}

/* `structure "NAME" "VALUE"`. */
static void structure_line(parser *ps, char *p, char *le) {
  const char *why = NULL;
  size_t len, vlen;
  if (ps->key.kind != CALSTORE_KEY_PORTABLE)
    LINE_FAIL("'structure' in an exact record");
  char *sname = read_quoted(ps, &p, le, &len, &why), *value;
  if (!sname)
    LINE_FAIL("structure name: %s", why);
  if (!len)
    LINE_FAIL("structure name is empty");
  if (!(value = read_quoted(ps, &p, le, &vlen, &why)))
    LINE_FAIL("structure value: %s", why);
  if (!at_end_c(ps, p, le))
    LINE_FAIL("structure: unexpected text after the value");
  for (size_t i = 0; i < ps->sn; i++)
    if (!strcmp(ps->s[i].name, sname))
      LINE_FAIL("the record has structure '%s' twice", sname);
  if (ps->sn && strcmp(ps->s[ps->sn - 1].name, sname) > 0)
    ps->canon = 0; /* the writer sorts them by name */
  calstore_property *sv = parser_grow(ps, ps->s, ps->sn + 1, &ps->scap, sizeof *sv);
  if (!sv)
    return;
  ps->s = sv;
  ps->s[ps->sn++] = (calstore_property){.name = sname, .value = value};
}

/* `measurement "NAME" NUMBER "UNIT"`. */
static void measurement_line(parser *ps, char *p, char *le) {
  const char *why = NULL;
  size_t len;
  char *mname = read_quoted(ps, &p, le, &len, &why), *unit;
  if (!mname)
    LINE_FAIL("measurement name: %s", why);
  if (!len)
    LINE_FAIL("measurement name is empty");
  char *n = skip_ws(p, le), *ne = number_end(n, le);
  if (n == ne)
    LINE_FAIL("measurement '%s': missing value", mname);
  double v;
  int r = cs_read_double(n, (size_t)(ne - n), &v);
  if (r < 0) {
    ps->oom = 1;
    return;
  }
  if (!r)
    LINE_FAIL("measurement '%s': '%.*s' is not a decimal number", mname, (int)(ne - n), n);
  if (!isfinite(v))
    LINE_FAIL("measurement '%s': value %.*s is not finite", mname, (int)(ne - n), n);
  if (ps->canon) {
    char num[64];
    int nl = cs_format_double(num, sizeof num, v);
    if (!one_space(p, n) || (size_t)nl != (size_t)(ne - n) || memcmp(num, n, (size_t)nl))
      ps->canon = 0;
  }
  p = ne;
  if (!(unit = read_quoted(ps, &p, le, &len, &why)))
    LINE_FAIL("measurement '%s' unit: %s", mname, why);
  if (!at_end_c(ps, p, le))
    LINE_FAIL("measurement '%s': unexpected text after the unit", mname);
  calstore_measurement *mv = parser_grow(ps, ps->m, ps->mn + 1, &ps->mcap, sizeof *mv);
  if (!mv)
    return;
  ps->m = mv;
  ps->m[ps->mn++] = (calstore_measurement){.name = mname, .value = v, .unit = unit};
}

/* backend, operator, implementation, model_digest, processor, policy: one
 * quoted string. */
static void string_line(parser *ps, field f, char *p, char *le) {
  const char *why = NULL, *name = field_name[f];
  size_t len;
  int portable = ps->key.kind == CALSTORE_KEY_PORTABLE;
  char *v = read_quoted(ps, &p, le, &len, &why);
  if (!v)
    LINE_FAIL("%s: %s", name, why);
  if (!at_end_c(ps, p, le))
    LINE_FAIL("%s: unexpected text after the value", name);
  if (f == F_DIGEST || f == F_PROC) {
    if (portable && len)
      LINE_FAIL("'%s' in a portable record", name);
    if (portable) {
      ps->canon = 0; /* empty: absent, dropped by the writer */
      return;
    }
  }
  if (!len)
    LINE_FAIL("%s is empty", name);
  if (f == F_POLICY) {
    ps->policy = v;
    ps->policy_len = len;
    return;
  }
  const char **key_string[] = {
      [F_BACKEND] = &ps->key.backend,     [F_OPERATOR] = &ps->key.operator_name,
      [F_IMPL] = &ps->key.implementation, [F_DIGEST] = &ps->key.model_digest,
      [F_PROC] = &ps->key.processor,
  };
  *key_string[f] = v;
}

/* One line inside a record; word [w, we) is its first token; the line
 * ends at le, the next one starts at next. */
static void record_line(parser *ps, cs_set *set, char *w, char *we, char *le, char *next) {
  field f = field_of(w, (size_t)(we - w));
  if (f == F_UNKNOWN)
    LINE_FAIL("unknown field '%.*s'", (int)(we - w), w);
  if (f < F_SINGLE) {
    if (ps->seen_line[f])
      LINE_FAIL("a record has one '%s' (line %u has it already)", field_name[f], ps->seen_line[f]);
    ps->seen_line[f] = ps->line;
  }
  if (field_rank[f] < ps->rank)
    ps->canon = 0; /* out of the canonical order */
  ps->rank = field_rank[f];
  switch (f) {
  case F_END:
    if (!at_end_c(ps, we, le))
      LINE_FAIL("unexpected text after 'end'");
    end_record(ps, set, next);
    return;
  case F_THREADS:
    threads_line(ps, we, le);
    return;
  case F_STRUCTURE:
    structure_line(ps, we, le);
    return;
  case F_MEASUREMENT:
    measurement_line(ps, we, le);
    return;
  default:
    string_line(ps, f, we, le);
    return;
  }
}
#undef LINE_FAIL

/* The header line: [w, we) is its first word. Returns 0, or -1 when parsing
 * stops (reported). */
static int read_header(parser *ps, char *w, char *we, char *le) {
  size_t ml = sizeof(CALSTORE_FORMAT_MAGIC) - 1;
  if ((size_t)(we - w) != ml || memcmp(w, CALSTORE_FORMAT_MAGIC, ml)) {
    report(ps, CALSTORE_MALFORMED, ps->line, "not a profile store: the first line must be '%s %d'",
           CALSTORE_FORMAT_MAGIC, CALSTORE_FORMAT_VERSION);
    return -1;
  }
  char *v = skip_ws(we, le), *ve = word_end(v, le);
  uint32_t version = 0;
  cs_count_result r = cs_read_count(v, (size_t)(ve - v), &version);
  if ((r != CS_COUNT_OK && r != CS_COUNT_TOO_LARGE) || !at_end(ve, le)) {
    report(ps, CALSTORE_MALFORMED, ps->line, "bad header: expected '%s %d'", CALSTORE_FORMAT_MAGIC,
           CALSTORE_FORMAT_VERSION);
    return -1;
  }
  if (r != CS_COUNT_OK || version != CALSTORE_FORMAT_VERSION) {
    report(ps, CALSTORE_UNSUPPORTED_VERSION, ps->line,
           "unsupported schema version %.*s (this store reads version %d)", (int)(ve - v), v,
           CALSTORE_FORMAT_VERSION);
    return -1;
  }
  return 0;
}

/* Parses the lines in [cur, end): the header (unless ps->have_header) and
 * records. Stops early on a bad header (ps->stop). */
static void parse_range(parser *ps, char *cur, char *end, cs_set *set) {
  while (cur < end && !ps->oom && !ps->stop) {
    char *nl = memchr(cur, '\n', (size_t)(end - cur));
    char *ls = cur, *le = nl ? nl : end;
    cur = nl ? nl + 1 : end;
    ps->line++;
    char *w = skip_ws(ls, le);
    int line_canon = w == ls && nl; /* no leading blank, a line break at the end */
    if (!line_canon)
      ps->canon = 0;
    if (w == le || *w == '#') {
      ps->canon = 0; /* a blank or comment line (only matters inside a record) */
      continue;
    }
    char *we = word_end(w, le);
    if (!ps->have_header) {
      ps->have_header = 1;
      if (read_header(ps, w, we, le))
        ps->stop = 1;
      continue;
    }
    if (we - w == 7 && !memcmp(w, "profile", 7)) {
      if (ps->st == ST_RECORD)
        report(ps, CALSTORE_MALFORMED, ps->line,
               "'profile' before the record started at line %u ended with 'end'", ps->rec_line);
      start_record(ps, ls, we, le, line_canon);
      continue;
    }
    if (ps->st == ST_SKIP)
      continue;
    if (ps->st == ST_OUTSIDE) {
      report(ps, CALSTORE_MALFORMED, ps->line, "expected 'profile', found '%.*s'", (int)(we - w),
             w);
      ps->st = ST_SKIP;
      continue;
    }
    record_line(ps, set, w, we, le, cur);
  }
}

/* The checks at the end of the input. */
static void parse_finish(parser *ps) {
  if (ps->oom || ps->stop)
    return;
  if (!ps->have_header)
    report(ps, CALSTORE_MALFORMED, ps->line ? ps->line : 1,
           "empty file: the first line must be '%s %d'", CALSTORE_FORMAT_MAGIC,
           CALSTORE_FORMAT_VERSION);
  else if (ps->st == ST_RECORD)
    report(ps, CALSTORE_MALFORMED, ps->line,
           "the record started at line %u is not terminated by 'end'", ps->rec_line);
}

static void parser_free(parser *ps) {
  cs_buf_free(&ps->render);
  free(ps->m);
  free(ps->s);
  free(ps->scratch);
  for (size_t i = 0; i < ps->vn; i++)
    cs_prof_unref(ps->vec[i]);
  free(ps->vec);
}

#if !defined(_WIN32)
/* ---- parallel load ----------------------------------------------------------
 * A large file is cut at lines that start a record and the pieces are parsed
 * by threads into record lists, then indexed in file order (duplicates
 * checked there). Any problem at all sends the whole file through the serial
 * parser, which reports it with the exact lines and messages. */

#define CS_PARALLEL_MIN (8u << 20) /* bytes */
#define CS_PARALLEL_MAX 8          /* threads */

typedef struct piece {
  parser ps;
  char *start, *end;
  pthread_t thread;
  int started;
} piece;

static void *piece_run(void *arg) {
  piece *pc = arg;
  pc->ps.scratch = malloc((size_t)(pc->end - pc->start) + 1);
  if (!pc->ps.scratch) {
    pc->ps.oom = 1;
    return NULL;
  }
  parse_range(&pc->ps, pc->start, pc->end, NULL);
  parse_finish(&pc->ps);
  return NULL;
}

/* Returns 1 when set was filled, 0 when the serial parser must run. */
static int parse_parallel(char *buf, size_t len, cs_set *set, cs_blob *blob) {
  static const char header[] = CALSTORE_FORMAT_MAGIC " 1\n";
  size_t hl = sizeof header - 1;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (len < CS_PARALLEL_MIN || cpus < 2 || memcmp(buf, header, hl))
    return 0;
  size_t n = (size_t)cpus < CS_PARALLEL_MAX ? (size_t)cpus : CS_PARALLEL_MAX;
  if (n > len / (CS_PARALLEL_MIN / 2))
    n = len / (CS_PARALLEL_MIN / 2);
  piece pcs[CS_PARALLEL_MAX];
  memset(pcs, 0, sizeof pcs);
  char *end = buf + len, *at = buf + hl;
  size_t k = 0;
  for (; k < n && at < end; k++) {
    char *cut = end;
    if (k + 1 < n) {
      char *target = buf + hl + (len - hl) / n * (k + 1) - 1;
      if (target < at)
        target = at;
      char *found = memmem(target, (size_t)(end - target), "\nprofile ", 9);
      cut = found ? found + 1 : end;
    }
    pcs[k].start = at;
    pcs[k].end = cut;
    pcs[k].ps.st = ST_OUTSIDE;
    pcs[k].ps.have_header = 1;
    pcs[k].ps.collect = 1;
    pcs[k].ps.blob = blob;
    at = cut;
  }
  n = k;
  if (n < 2)
    return 0;
  for (size_t i = 1; i < n; i++)
    pcs[i].started = pthread_create(&pcs[i].thread, NULL, piece_run, &pcs[i]) == 0;
  piece_run(&pcs[0]);
  for (size_t i = 1; i < n; i++) {
    if (pcs[i].started)
      pthread_join(pcs[i].thread, NULL);
    else
      piece_run(&pcs[i]);
  }
  int ok = 1;
  for (size_t i = 0; i < n; i++)
    if (pcs[i].ps.oom || pcs[i].ps.verdict != CALSTORE_OK)
      ok = 0;
  cs_set *tmp = ok ? cs_set_new() : NULL;
  for (size_t i = 0; tmp && i < n; i++) {
    parser *ps = &pcs[i].ps;
    for (size_t j = 0; j < ps->vn; j++) {
      cs_prof *p = ps->vec[j];
      int dup = cs_set_find(tmp, &p->v.key, p->v.source, p->id_hash) >= 0;
      ps->vec[j] = NULL;
      if (dup)
        cs_prof_unref(p);
      if (dup || cs_set_append(tmp, p) != 0) { /* append dropped p on OOM */
        /* a duplicate (or OOM): the serial parser reports it properly */
        cs_set_free(tmp);
        tmp = NULL;
        break;
      }
    }
  }
  for (size_t i = 0; i < n; i++)
    parser_free(&pcs[i].ps);
  if (!tmp)
    return 0;
  cs_set old = *set; /* empty */
  *set = *tmp;
  *tmp = old;
  cs_set_free(tmp);
  return 1;
}
#endif

calstore_status cs_parse(char *buf, size_t len, int threads, cs_set *set, cs_blob *blob,
                         calstore_diagnostic_fn diag, void *diag_user, calstore_error *first) {
#if defined(_WIN32)
  (void)threads;
#else
  if (threads && parse_parallel(buf, len, set, blob))
    return CALSTORE_OK;
#endif
  parser ps = {0};
  ps.blob = blob;
  ps.diag = diag;
  ps.diag_user = diag_user;
  ps.first = first;
  ps.st = ST_OUTSIDE;
  ps.scratch = malloc(len + 1);
  if (!ps.scratch) {
    cs_fail(first, CALSTORE_NO_MEMORY, 0, NULL, "out of memory while parsing");
    return CALSTORE_NO_MEMORY;
  }
  parse_range(&ps, buf, buf + len, set);
  parse_finish(&ps);
  parser_free(&ps);
  if (ps.oom) {
    cs_fail(first, CALSTORE_NO_MEMORY, 0, NULL, "out of memory while parsing");
    return CALSTORE_NO_MEMORY;
  }
  return ps.verdict;
}
