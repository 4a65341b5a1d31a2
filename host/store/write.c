/*
 * write.c: the canonical writer of the version-1 format, the only place
 * that knows how a record is spelled on disk (std::quoted escaping, %u
 * counts, %.17g numbers, one space between tokens, LF line ends, fields in
 * the canonical order, structure sorted by name).
 *
 * One record serializer, cs_write_prof(): it renders a record's text once,
 * when the record is created, and it decides whether a loaded record's own
 * text is canonical (cs_text_is_canonical: the parser keeps that text only
 * when rendering the record reproduces it byte for byte, so every rewrite is
 * canonical whatever blanks, line ends, spelling of numbers or field order
 * the file used). One set serializer,
 * cs_set_chunks(): the header, then each live record's text in file order;
 * cs_write_set() joins those chunks into one buffer. Also the store's one
 * grow rule (cs_grow), used by every growing array of libcalstore.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char header[] = CALSTORE_FORMAT_MAGIC " 1\n";

/* ---- buffer ---------------------------------------------------------------- */

void *cs_grow(void *items, size_t need, size_t *cap, size_t size, size_t first) {
  if (need <= *cap)
    return items;
  size_t ncap = *cap ? *cap : (first ? first : 1);
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2)
      return NULL;
    ncap *= 2;
  }
  if (size == 0 || ncap > SIZE_MAX / size)
    return NULL;
  void *grown = realloc(items, ncap * size);
  if (grown)
    *cap = ncap;
  return grown;
}

/* Makes room for n more bytes (and a terminator); sets b->oom on failure. */
static void reserve_slow(cs_buf *b, size_t n) {
  char *nd = b->len + n + 1 < b->len ? NULL : cs_grow(b->data, b->len + n + 1, &b->cap, 1, 4096);
  if (!nd) {
    b->oom = 1;
    return;
  }
  b->data = nd;
}

static inline void put(cs_buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    if (b->oom)
      return;
    reserve_slow(b, n);
    if (b->oom)
      return;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
}

void cs_buf_put(cs_buf *b, const char *s, size_t n) {
  put(b, s, n);
}

void cs_buf_free(cs_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

/* ---- the record serializer ---------------------------------------------- */

#define PUT_LIT(b, lit) put((b), (lit), sizeof(lit) - 1)

/* Nonzero when one of the eight bytes of w is a '"' or a '\\'. */
static inline int word_has_special(uint64_t w) {
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  uint64_t q = w ^ (ones * (uint64_t)'"'); /* a zero byte where w has '"' */
  uint64_t bs = w ^ (ones * (uint64_t)'\\');
  return (((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs ? 1 : 0;
}

/* std::quoted: a backslash before every '"' and '\\' of s[0..n). Copies
 * eight bytes at a time where a word holds neither. */
static void put_quoted(cs_buf *b, const char *s, size_t n) {
  if (b->len + 2 * n + 3 > b->cap) {
    if (b->oom)
      return;
    reserve_slow(b, 2 * n + 2);
    if (b->oom)
      return;
  }
  char *d = b->data + b->len;
  size_t i = 0;
  *d++ = '"';
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    if (!word_has_special(w)) {
      memcpy(d, &w, 8);
      d += 8;
      continue;
    }
    for (size_t k = i; k < i + 8; k++) {
      if (s[k] == '"' || s[k] == '\\')
        *d++ = '\\';
      *d++ = s[k];
    }
  }
  for (; i < n; i++) {
    if (s[i] == '"' || s[i] == '\\')
      *d++ = '\\';
    *d++ = s[i];
  }
  *d++ = '"';
  b->len = (size_t)(d - b->data);
}

static void put_field(cs_buf *b, const char *name, size_t name_len, const char *value) {
  put(b, name, name_len);
  put_quoted(b, value, strlen(value));
  PUT_LIT(b, "\n");
}

#define PUT_FIELD(b, lit, value) put_field((b), (lit), sizeof(lit) - 1, (value))

void cs_write_prof(cs_buf *b, const calstore_profile *p) {
  char num[64];
  if (p->key.kind == CALSTORE_KEY_EXACT)
    PUT_LIT(b, "profile exact ");
  else
    PUT_LIT(b, "profile portable ");
  if (p->source == CALSTORE_SOURCE_OVERRIDE)
    PUT_LIT(b, "override\n");
  else
    PUT_LIT(b, "calibrated\n");
  PUT_FIELD(b, "backend ", p->key.backend);
  PUT_FIELD(b, "operator ", p->key.operator_name);
  PUT_FIELD(b, "implementation ", p->key.implementation);
  if (p->key.kind == CALSTORE_KEY_EXACT) {
    PUT_FIELD(b, "model_digest ", p->key.model_digest);
    PUT_FIELD(b, "processor ", p->key.processor);
    PUT_LIT(b, "thread_count ");
    put(b, num, (size_t)cs_format_uint(num, p->key.thread_count));
    PUT_LIT(b, "\n");
  } else {
    for (size_t i = 0; i < p->key.structure_count; i++) {
      PUT_LIT(b, "structure ");
      put_quoted(b, p->key.structure[i].name, strlen(p->key.structure[i].name));
      PUT_LIT(b, " ");
      put_quoted(b, p->key.structure[i].value, strlen(p->key.structure[i].value));
      PUT_LIT(b, "\n");
    }
  }
  for (size_t i = 0; i < p->measurement_count; i++) {
    const calstore_measurement *m = &p->measurements[i];
    PUT_LIT(b, "measurement ");
    put_quoted(b, m->name, strlen(m->name));
    PUT_LIT(b, " ");
    put(b, num, (size_t)cs_format_double(num, sizeof num, m->value));
    PUT_LIT(b, " ");
    put_quoted(b, m->unit, strlen(m->unit));
    PUT_LIT(b, "\n");
  }
  PUT_LIT(b, "policy ");
  put_quoted(b, p->policy, p->policy_length);
  PUT_LIT(b, "\nend\n");
}

void cs_write_header(cs_buf *b) {
  put(b, header, sizeof header - 1);
}

int cs_text_is_canonical(const calstore_profile *p, const char *text, size_t len, cs_buf *scratch) {
  scratch->len = 0;
  cs_write_prof(scratch, p);
  return !scratch->oom && scratch->len == len && !memcmp(scratch->data, text, len);
}

/* ---- the set serializer ----------------------------------------------------- */

cs_chunk *cs_set_chunks(const cs_set *set, size_t *n) {
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

void cs_write_set(cs_buf *b, const cs_set *set) {
  size_t n;
  cs_chunk *c = cs_set_chunks(set, &n);
  if (!c) {
    b->oom = 1;
    return;
  }
  size_t want = b->len + 1;
  for (size_t i = 0; i < n; i++)
    want += c[i].len;
  if (!b->oom) { /* one allocation of the exact size when b is empty */
    char *nd = cs_grow(b->data, want, &b->cap, 1, want);
    if (nd)
      b->data = nd;
    else
      b->oom = 1;
  }
  for (size_t i = 0; i < n; i++)
    cs_buf_put(b, c[i].data, c[i].len);
  free(c);
}
