/*
 * format.c: the version-1 text format: the parser (one pass, in place,
 * linear; every problem reported with its 1-based line, resynchronising at
 * the next `profile` line) and the canonical writer (std::quoted escaping,
 * %.17g numbers, LF), plus the status and reason words.
 *
 * Grammar accepted (what the reference implementation accepts, see
 * shared/vectors/store-v1): a header `onnx_light_calibration_profiles 1`
 * (comment and blank lines may precede it), then records:
 *
 *   profile exact|portable calibrated|override
 *   backend "B"
 *   operator "O"
 *   implementation "V"
 *   model_digest "D"   processor "P"   thread_count N      (exact, in this order)
 *   structure "NAME" "VALUE"  (one or more)                 (portable)
 *   measurement "NAME" VALUE "UNIT"  (zero or more)
 *   policy "TEXT"
 *   end
 *
 * Values are std::quoted strings (an unquoted word is read as it is, like
 * std::quoted does; the writer always quotes).
 * Fields must come in this order; tokens are separated by blanks (space,
 * tab, CR, VT, FF: a CRLF file reads like an LF one);
 * lines whose first non-blank character is '#' and blank lines are ignored
 * anywhere. Key fields, measurement names and the policy are non-empty;
 * thread_count >= 1; values finite; no duplicate identity; no duplicate
 * structure name; nothing after a field's value.
 */
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* memmem */
#endif
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

const char *calstore_status_name(calstore_status status) {
  switch (status) {
  case CALSTORE_OK:
    return "ok";
  case CALSTORE_NOT_FOUND:
    return "not_found";
  case CALSTORE_DISABLED:
    return "disabled";
  case CALSTORE_UNREADABLE:
    return "unreadable";
  case CALSTORE_MALFORMED:
    return "malformed";
  case CALSTORE_UNSUPPORTED_VERSION:
    return "unsupported_version";
  case CALSTORE_POLICY_REJECTED:
    return "policy_rejected";
  case CALSTORE_WRITE_FAILED:
    return "write_failed";
  case CALSTORE_INVALID_ARGUMENT:
    return "invalid_argument";
  case CALSTORE_NO_MEMORY:
    return "no_memory";
  case CALSTORE_LOCK_FAILED:
    return "lock_failed";
  }
  return "unknown";
}

const char *calstore_reject_reason_name(calstore_reject_reason reason) {
  switch (reason) {
  case CALSTORE_REJECT_OUTDATED_IMPLEMENTATION:
    return "outdated_implementation";
  case CALSTORE_REJECT_DIFFERENT_MODEL:
    return "different_model";
  case CALSTORE_REJECT_DIFFERENT_PROCESSOR:
    return "different_processor";
  case CALSTORE_REJECT_DIFFERENT_THREAD_COUNT:
    return "different_thread_count";
  case CALSTORE_REJECT_DIFFERENT_STRUCTURE:
    return "different_structure";
  case CALSTORE_REJECT_POLICY_REJECTED:
    return "policy_rejected";
  case CALSTORE_REJECT_FORCE_PORTABLE:
    return "force_portable";
  }
  return "unknown";
}

/* ---- buffer ---------------------------------------------------------------- */

void cs_buf_put(cs_buf *b, const char *s, size_t n) {
  if (b->oom)
    return;
  if (b->len + n + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap : 4096;
    while (b->len + n + 1 > ncap)
      ncap *= 2;
    char *nd = realloc(b->data, ncap);
    if (!nd) {
      b->oom = 1;
      return;
    }
    b->data = nd;
    b->cap = ncap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
}

void cs_buf_free(cs_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

/* ---- writer ---------------------------------------------------------------- */

static void put_lit(cs_buf *b, const char *s) {
  cs_buf_put(b, s, strlen(s));
}

/* std::quoted: a backslash before every '"' and '\\'. */
static void put_quoted(cs_buf *b, const char *s, size_t n) {
  cs_buf_put(b, "\"", 1);
  size_t start = 0;
  for (;;) {
    size_t run = strcspn(s + start, "\"\\");
    if (start + run >= n) {
      cs_buf_put(b, s + start, n - start);
      break;
    }
    cs_buf_put(b, s + start, run);
    cs_buf_put(b, "\\", 1);
    cs_buf_put(b, s + start + run, 1);
    start += run + 1;
  }
  cs_buf_put(b, "\"", 1);
}

static void put_field(cs_buf *b, const char *name, const char *value) {
  put_lit(b, name);
  cs_buf_put(b, " ", 1);
  put_quoted(b, value, strlen(value));
  cs_buf_put(b, "\n", 1);
}

static const uint64_t pow10_u64[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};

#if defined(__SIZEOF_INT128__)
/* round(m * 10^k / 2^s) with ties to even, exactly (m < 2^53, k <= 21,
 * 1 <= s <= 120). */
static uint64_t scaled_round(uint64_t m, int k, int s) {
  unsigned __int128 x = (unsigned __int128)m;
  for (int i = 0; i < k; i += 19) {
    int step = k - i < 19 ? k - i : 19;
    x *= pow10_u64[step];
  }
  unsigned __int128 q = x >> s, r = x - (q << s), half = (unsigned __int128)1 << (s - 1);
  if (r > half || (r == half && (q & 1)))
    q++;
  return (uint64_t)q;
}
#endif

int cs_parse_decimal(const char *s, size_t n, double *out) {
#if defined(__SIZEOF_INT128__)
  /* [-]digits[.digits] only: no exponent, no sign other than '-' */
  size_t i = 0;
  int neg = 0;
  if (i < n && s[i] == '-') {
    neg = 1;
    i++;
  }
  uint64_t d = 0;
  int digits = 0, frac = 0, dot = 0;
  for (; i < n; i++) {
    char c = s[i];
    if (c == '.' && !dot) {
      dot = 1;
      continue;
    }
    if (c < '0' || c > '9')
      return 0;
    if (digits == 0 && c == '0') { /* leading zeros do not count */
      if (dot)
        frac++;
      continue;
    }
    if (++digits > 19)
      return 0;
    d = d * 10 + (uint64_t)(c - '0');
    if (dot)
      frac++;
  }
  if (i != n || (dot && n == (size_t)neg + 1) || n == (size_t)neg)
    return 0;
  if (d == 0) {
    *out = neg ? -0.0 : 0.0;
    return 1;
  }
  double v;
  if (frac == 0) {
    v = (double)d; /* one rounding to nearest, ties to even */
  } else {
    if (frac > 21)
      return 0;
    /* v = d / 10^frac, correctly rounded: enough quotient bits plus sticky */
    unsigned __int128 den = 1;
    for (int k = 0; k < frac; k += 19)
      den *= pow10_u64[frac - k < 19 ? frac - k : 19];
    int lz = 0;
    for (uint64_t t = d; !(t & (1ull << 63)); t <<= 1)
      lz++;
    int sh = 63 + lz; /* d << sh has its top bit at 126 */
    unsigned __int128 num = (unsigned __int128)d << sh;
    unsigned __int128 q = num / den, r = num - q * den;
    int bits = 0;
    for (unsigned __int128 t = q; t; t >>= 1)
      bits++;
    if (bits < 56)
      return 0;
    int drop = bits - 53;
    uint64_t mant = (uint64_t)(q >> drop);
    unsigned __int128 rest = q & (((unsigned __int128)1 << drop) - 1);
    unsigned __int128 half = (unsigned __int128)1 << (drop - 1);
    if (rest > half || (rest == half && (r != 0 || (mant & 1))))
      mant++;
    if (mant == (1ull << 53)) {
      mant >>= 1;
      drop++;
    }
    v = ldexp((double)mant, drop - sh);
  }
  *out = neg ? -v : v;
  return 1;
#else
  (void)s;
  (void)n;
  (void)out;
  return 0;
#endif
}

/* Formats v exactly like printf("%.17g"): an exact 128-bit fast path for
 * the usual magnitudes (1e-5 <= |v| < 2^52) and integers, snprintf
 * otherwise. Returns the length. */
int cs_format_double(char *out, size_t cap, double v) {
  if (v != 0.0 && fabs(v) < 1e17 && v == (double)(long long)v && cap >= 20) {
    long long iv = (long long)v;
    unsigned long long u = iv < 0 ? (unsigned long long)-iv : (unsigned long long)iv;
    char tmp[24];
    int n = 0, k = 0;
    do
      tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (iv < 0)
      out[k++] = '-';
    while (n)
      out[k++] = tmp[--n];
    out[k] = '\0';
    return k;
  }
#if defined(__SIZEOF_INT128__)
  double a = fabs(v);
  if (cap >= 32 && a >= 1e-5 && a < 4503599627370496.0) {
    int e2;
    double fr = frexp(a, &e2); /* a = fr * 2^e2, fr in [0.5, 1) */
    uint64_t m = (uint64_t)ldexp(fr, 53);
    int s = 53 - e2; /* a = m / 2^s, s >= 1 here */
    /* floor(log10(a)) within one: the loop below corrects it */
    int x = (int)floor((double)(e2 - 1) * 0.30102999566398120);
    uint64_t q = 0;
    for (int tries = 0; tries < 4; tries++) {
      int k = 16 - x;
      if (k < 0 || k > 21 || s > 120)
        goto slow;
      q = scaled_round(m, k, s);
      if (q >= pow10_u64[17])
        x++;
      else if (q < pow10_u64[16])
        x--;
      else
        break;
    }
    if (q < pow10_u64[16] || q >= pow10_u64[17])
      goto slow;
    char dig[17];
    for (int i = 16; i >= 0; i--) {
      dig[i] = (char)('0' + q % 10);
      q /= 10;
    }
    int nd = 17;
    while (nd > 1 && dig[nd - 1] == '0')
      nd--;
    char *o = out;
    if (v < 0)
      *o++ = '-';
    if (x >= -4 && x < 17) { /* fixed notation */
      if (x < 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = -1; i > x; i--)
          *o++ = '0';
        memcpy(o, dig, (size_t)nd);
        o += nd;
      } else {
        int intd = x + 1;
        for (int i = 0; i < intd; i++)
          *o++ = i < nd ? dig[i] : '0';
        if (nd > intd) {
          *o++ = '.';
          memcpy(o, dig + intd, (size_t)(nd - intd));
          o += nd - intd;
        }
      }
      *o = '\0';
      return (int)(o - out);
    }
  }
slow:
#endif
  return snprintf(out, cap, "%.17g", v);
}

void cs_write_header(cs_buf *b) {
  put_lit(b, CALSTORE_FORMAT_MAGIC " 1\n");
}

void cs_write_prof(cs_buf *b, const calstore_profile *p) {
  char num[64];
  put_lit(b, p->key.kind == CALSTORE_KEY_EXACT ? "profile exact " : "profile portable ");
  put_lit(b, p->source == CALSTORE_SOURCE_OVERRIDE ? "override\n" : "calibrated\n");
  put_field(b, "backend", p->key.backend);
  put_field(b, "operator", p->key.operator_name);
  put_field(b, "implementation", p->key.implementation);
  if (p->key.kind == CALSTORE_KEY_EXACT) {
    put_field(b, "model_digest", p->key.model_digest);
    put_field(b, "processor", p->key.processor);
    int n = snprintf(num, sizeof num, "thread_count %u\n", (unsigned)p->key.thread_count);
    cs_buf_put(b, num, (size_t)n);
  } else {
    for (size_t i = 0; i < p->key.structure_count; i++) {
      put_lit(b, "structure ");
      put_quoted(b, p->key.structure[i].name, strlen(p->key.structure[i].name));
      cs_buf_put(b, " ", 1);
      put_quoted(b, p->key.structure[i].value, strlen(p->key.structure[i].value));
      cs_buf_put(b, "\n", 1);
    }
  }
  for (size_t i = 0; i < p->measurement_count; i++) {
    const calstore_measurement *m = &p->measurements[i];
    put_lit(b, "measurement ");
    put_quoted(b, m->name, strlen(m->name));
    cs_buf_put(b, " ", 1);
    int n = cs_format_double(num, sizeof num, m->value);
    cs_buf_put(b, num, (size_t)n);
    cs_buf_put(b, " ", 1);
    put_quoted(b, m->unit, strlen(m->unit));
    cs_buf_put(b, "\n", 1);
  }
  put_lit(b, "policy ");
  put_quoted(b, p->policy, p->policy_length);
  put_lit(b, "\nend\n");
}

void cs_write_set(cs_buf *b, const cs_set *set) {
  size_t want = sizeof(CALSTORE_FORMAT_MAGIC) + 4;
  for (size_t i = 0; i < set->n; i++)
    if (set->items[i])
      want += set->items[i]->text_len;
  if (b->cap < b->len + want + 1) {
    char *nd = realloc(b->data, b->len + want + 1);
    if (!nd) {
      b->oom = 1;
      return;
    }
    b->data = nd;
    b->cap = b->len + want + 1;
  }
  cs_write_header(b);
  for (size_t i = 0; i < set->n; i++)
    if (set->items[i])
      cs_buf_put(b, set->items[i]->text, set->items[i]->text_len);
}

/* ---- parser ---------------------------------------------------------------- */

typedef enum state {
  ST_OUTSIDE,
  ST_SKIP, /* after an error: until the next `profile` line */
  ST_BACKEND,
  ST_OPERATOR,
  ST_IMPL,
  ST_DIGEST,
  ST_PROC,
  ST_THREADS,
  ST_STRUCT1, /* portable: the first structure line */
  ST_BODY,    /* structure (portable, before measurements), measurement, policy */
  ST_END,
} state;

static const char *const expected_word[] = {
    [ST_BACKEND] = "backend",     [ST_OPERATOR] = "operator", [ST_IMPL] = "implementation",
    [ST_DIGEST] = "model_digest", [ST_PROC] = "processor",    [ST_THREADS] = "thread_count",
    [ST_STRUCT1] = "structure",   [ST_END] = "end",
};

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
  calstore_key key;
  calstore_source source;
  int have_measurements;
  const char *policy;
  size_t policy_len;
  calstore_measurement *m;
  size_t mn, mcap;
  calstore_property *s;
  size_t sn, scap;
  char *scratch; /* unescaped strings of the record being read */
  size_t scratch_len;
  int canon;      /* the record's text is already canonical */
  char *rec_text; /* where the record's text starts */
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

/* Reads a bare word; returns its end. */
static char *word_end(char *p, char *le) {
  while (p < le && !is_ws(*p))
    p++;
  return p;
}

/* Bytes that end the fast scan of a quoted string. */
static const unsigned char quote_special[256] = {['"'] = 1, ['\\'] = 1, [0] = 1};

/* Reads a std::quoted string at *pp into the parser's scratch space,
 * unescaped and NUL-terminated. Returns the string or NULL (error message
 * in *why). Clears ps->canon when the text is not in canonical form. */
static char *read_quoted(parser *ps, char **pp, char *le, size_t *out_len, const char **why) {
  char *p = skip_ws(*pp, le);
  if (p != *pp + 1 || **pp != ' ')
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
    ps->canon = 0;
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
        ps->canon = 0;
    }
    *dst++ = c;
  }
  *dst = '\0';
  *out_len = (size_t)(dst - d0);
  ps->scratch_len += *out_len + 1;
  *pp = p;
  return d0;
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

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 8;
  void *n = realloc(*arr, ncap * elem);
  if (!n)
    return -1;
  *arr = n;
  *cap = ncap;
  return 0;
}

static void start_record(parser *ps, char *ls, char *p, char *le) {
  char *w = skip_ws(p, le), *we = word_end(w, le);
  size_t kind_len = (size_t)(we - w);
  calstore_key_kind kind;
  memset(&ps->key, 0, sizeof ps->key);
  ps->mn = ps->sn = 0;
  ps->have_measurements = 0;
  ps->policy = NULL;
  ps->rec_line = ps->line;
  ps->rec_text = ls;
  ps->scratch_len = 0;
  ps->canon = *ls == 'p';
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
  if (!at_end(we, le)) {
    report(ps, CALSTORE_MALFORMED, ps->line, "unexpected text after the profile line");
    ps->st = ST_SKIP;
    return;
  }
  if ((size_t)(le - ls) != 7 + 1 + kind_len + 1 + (size_t)(we - w))
    ps->canon = 0;
  ps->key.kind = kind;
  ps->st = ST_BACKEND;
}

/* Ends a record at `end`: builds and indexes it. */
static void finish_record(parser *ps, cs_set *set, char *rec_end) {
  if (ps->sn) {
    for (size_t i = 1; i < ps->sn && ps->canon; i++)
      if (strcmp(ps->s[i - 1].name, ps->s[i].name) >= 0)
        ps->canon = 0; /* the writer sorts them */
    if (cs_sort_properties(ps->s, ps->sn)) {
      report(ps, CALSTORE_MALFORMED, ps->rec_line, "record has the same structure name twice");
      return;
    }
    ps->key.structure = ps->s;
    ps->key.structure_count = ps->sn;
  }
  if (ps->oom)
    return;
  cs_prof *p = cs_prof_create(&ps->key, ps->source, ps->m, ps->mn, ps->policy, ps->policy_len,
                              ps->canon ? ps->rec_text : NULL,
                              ps->canon ? (size_t)(rec_end - ps->rec_text) : 0, ps->blob);
  if (!p) {
    ps->oom = 1;
    return;
  }
  if (ps->collect) {
    if (grow((void **)&ps->vec, &ps->vcap, ps->vn + 1, sizeof *ps->vec)) {
      cs_prof_unref(p);
      ps->oom = 1;
      return;
    }
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

/* One line inside a record; word [w, we) is its first token; the line
 * ends at le, the next one starts at next. */
static void record_line(parser *ps, cs_set *set, char *w, char *we, char *le, char *next) {
  size_t wl = (size_t)(we - w);
  const char *why = NULL;
  char *p = we;
  size_t len;
#define IS(lit) (wl == sizeof(lit) - 1 && !memcmp(w, lit, sizeof(lit) - 1))
#define FAIL(...)                                                                                  \
  do {                                                                                             \
    report(ps, CALSTORE_MALFORMED, ps->line, __VA_ARGS__);                                         \
    ps->st = ST_SKIP;                                                                              \
    return;                                                                                        \
  } while (0)
  if (ps->st == ST_BODY) {
    if (IS("structure") && ps->key.kind == CALSTORE_KEY_PORTABLE && !ps->have_measurements)
      goto structure;
    if (IS("measurement"))
      goto measurement;
    if (IS("policy"))
      goto policy;
    if (IS("structure"))
      FAIL(ps->key.kind == CALSTORE_KEY_EXACT ? "'structure' in an exact record"
                                              : "'structure' after a measurement");
    FAIL("unexpected '%.*s' (expected measurement or policy)", (int)wl, w);
  }
  if (ps->st == ST_END && IS("policy"))
    FAIL("a record has one policy");
  if (ps->st == ST_END && IS("measurement"))
    FAIL("'measurement' after the policy");
  if (!(wl == strlen(expected_word[ps->st]) && !memcmp(w, expected_word[ps->st], wl)))
    FAIL("expected '%s', found '%.*s'", expected_word[ps->st], (int)wl, w);
  switch (ps->st) {
  case ST_BACKEND:
  case ST_OPERATOR:
  case ST_IMPL:
  case ST_DIGEST:
  case ST_PROC: {
    char *v = read_quoted(ps, &p, le, &len, &why);
    if (!v)
      FAIL("%s: %s", expected_word[ps->st], why);
    if (!at_end_c(ps, p, le))
      FAIL("%s: unexpected text after the value", expected_word[ps->st]);
    if (!len)
      FAIL("%s is empty", expected_word[ps->st]);
    switch (ps->st) {
    case ST_BACKEND:
      ps->key.backend = v;
      ps->st = ST_OPERATOR;
      break;
    case ST_OPERATOR:
      ps->key.operator_name = v;
      ps->st = ST_IMPL;
      break;
    case ST_IMPL:
      ps->key.implementation = v;
      ps->st = ps->key.kind == CALSTORE_KEY_EXACT ? ST_DIGEST : ST_STRUCT1;
      break;
    case ST_DIGEST:
      ps->key.model_digest = v;
      ps->st = ST_PROC;
      break;
    default:
      ps->key.processor = v;
      ps->st = ST_THREADS;
      break;
    }
    return;
  }
  case ST_THREADS: {
    char *n = skip_ws(p, le), *ne = word_end(n, le);
    unsigned long long v = 0;
    if (n == ne)
      FAIL("thread_count: missing value");
    if (n != p + 1 || *n == '0')
      ps->canon = 0;
    for (char *c = n; c < ne; c++) {
      if (*c < '0' || *c > '9')
        FAIL("thread_count: '%.*s' is not a number", (int)(ne - n), n);
      v = v * 10 + (unsigned)(*c - '0');
      if (v > UINT32_MAX)
        FAIL("thread_count: %.*s is too large", (int)(ne - n), n);
    }
    if (!at_end_c(ps, ne, le))
      FAIL("thread_count: unexpected text after the value");
    if (v < 1)
      FAIL("thread_count must be at least 1");
    ps->key.thread_count = (uint32_t)v;
    ps->st = ST_BODY;
    return;
  }
  case ST_STRUCT1:
    goto structure;
  case ST_END:
    if (!at_end_c(ps, p, le))
      FAIL("end: unexpected text after 'end'");
    ps->st = ST_OUTSIDE;
    finish_record(ps, set, next);
    return;
  default:
    return;
  }
structure : {
  char *name = read_quoted(ps, &p, le, &len, &why), *value;
  if (!name)
    FAIL("structure name: %s", why);
  if (!len)
    FAIL("structure name is empty");
  size_t vlen;
  if (!(value = read_quoted(ps, &p, le, &vlen, &why)))
    FAIL("structure value: %s", why);
  if (!at_end_c(ps, p, le))
    FAIL("structure: unexpected text after the value");
  if (grow((void **)&ps->s, &ps->scap, ps->sn + 1, sizeof *ps->s)) {
    ps->oom = 1;
    return;
  }
  ps->s[ps->sn].name = name;
  ps->s[ps->sn].value = value;
  ps->sn++;
  ps->st = ST_BODY;
  return;
}
measurement : {
  char *name = read_quoted(ps, &p, le, &len, &why), *unit;
  if (!name)
    FAIL("measurement name: %s", why);
  if (!len)
    FAIL("measurement name is empty");
  char *n = skip_ws(p, le), *ne = word_end(n, le), *conv;
  if (n == ne)
    FAIL("measurement '%s': missing value", name);
  double v;
  if (cs_parse_decimal(n, (size_t)(ne - n), &v)) {
    conv = ne;
  } else {
    char saved = *ne;
    *ne = '\0';
    v = strtod(n, &conv);
    *ne = saved;
  }
  if (conv != ne)
    FAIL("measurement '%s': '%.*s' is not a number", name, (int)(ne - n), n);
  if (!isfinite(v))
    FAIL("measurement '%s': value %.*s is not finite", name, (int)(ne - n), n);
  if (ps->canon) {
    char num[64];
    int nl = cs_format_double(num, sizeof num, v);
    if (n != p + 1 || (size_t)nl != (size_t)(ne - n) || memcmp(num, n, (size_t)nl))
      ps->canon = 0;
  }
  p = ne;
  if (!(unit = read_quoted(ps, &p, le, &len, &why)))
    FAIL("measurement '%s' unit: %s", name, why);
  if (!at_end_c(ps, p, le))
    FAIL("measurement '%s': unexpected text after the unit", name);
  if (grow((void **)&ps->m, &ps->mcap, ps->mn + 1, sizeof *ps->m)) {
    ps->oom = 1;
    return;
  }
  ps->m[ps->mn].name = name;
  ps->m[ps->mn].value = v;
  ps->m[ps->mn].unit = unit;
  ps->mn++;
  ps->have_measurements = 1;
  return;
}
policy : {
  char *v = read_quoted(ps, &p, le, &len, &why);
  if (!v)
    FAIL("policy: %s", why);
  if (!at_end_c(ps, p, le))
    FAIL("policy: unexpected text after the value");
  if (!len)
    FAIL("policy is empty");
  ps->policy = v;
  ps->policy_len = len;
  ps->st = ST_END;
  return;
}
#undef IS
#undef FAIL
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
    if (w != ls || !nl)
      ps->canon = 0;
    if (w == le || *w == '#') {
      ps->canon = 0; /* only matters inside a record */
      continue;
    }
    char *we = word_end(w, le);
    if (!ps->have_header) {
      ps->have_header = 1;
      size_t ml = sizeof(CALSTORE_FORMAT_MAGIC) - 1;
      if ((size_t)(we - w) != ml || memcmp(w, CALSTORE_FORMAT_MAGIC, ml)) {
        report(ps, CALSTORE_MALFORMED, ps->line,
               "not a profile store: the first line must be '%s %d'", CALSTORE_FORMAT_MAGIC,
               CALSTORE_FORMAT_VERSION);
        ps->stop = 1;
        return;
      }
      char *v = skip_ws(we, le), *ve = word_end(v, le);
      unsigned long version = 0;
      int digits = v < ve;
      for (char *c = v; c < ve && digits; c++) {
        if (*c < '0' || *c > '9')
          digits = 0;
        else if (version < 1000000)
          version = version * 10 + (unsigned)(*c - '0');
      }
      if (!digits || !at_end(ve, le)) {
        report(ps, CALSTORE_MALFORMED, ps->line, "bad header: expected '%s %d'",
               CALSTORE_FORMAT_MAGIC, CALSTORE_FORMAT_VERSION);
        ps->stop = 1;
        return;
      }
      if (version != CALSTORE_FORMAT_VERSION) {
        report(ps, CALSTORE_UNSUPPORTED_VERSION, ps->line,
               "unsupported schema version %.*s (this store reads version %d)", (int)(ve - v), v,
               CALSTORE_FORMAT_VERSION);
        ps->stop = 1;
        return;
      }
      continue;
    }
    int is_profile = (we - w == 7 && !memcmp(w, "profile", 7));
    if (is_profile) {
      if (ps->st != ST_OUTSIDE && ps->st != ST_SKIP)
        report(ps, CALSTORE_MALFORMED, ps->line,
               "'profile' before the record started at line %u ended with 'end'", ps->rec_line);
      start_record(ps, ls, we, le);
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
  else if (ps->st != ST_OUTSIDE && ps->st != ST_SKIP)
    report(ps, CALSTORE_MALFORMED, ps->line,
           "the record started at line %u is not terminated by 'end'", ps->rec_line);
}

static void parser_free(parser *ps) {
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

cs_chunk *cs_set_chunks(const cs_set *set, size_t *n) {
  static const char header[] = CALSTORE_FORMAT_MAGIC " 1\n";
  cs_chunk *c = malloc((set->live + 1) * sizeof *c);
  if (!c)
    return NULL;
  size_t k = 0;
  c[k].data = header;
  c[k++].len = sizeof header - 1;
  for (size_t i = 0; i < set->n; i++)
    if (set->items[i]) {
      c[k].data = set->items[i]->text;
      c[k++].len = set->items[i]->text_len;
    }
  *n = k;
  return c;
}
