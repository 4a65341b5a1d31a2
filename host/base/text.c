/*
 * text.c: terminal-safe text (see text.h): the UTF-8 decoder both writers
 * share, the escaper, the one "PATH:LINE" formatter and the cursor test.
 */
#define _GNU_SOURCE /* fopencookie */
#include "text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>
#include <unistd.h>

size_t base_utf8_decode(const unsigned char *p, uint32_t *cp) {
  unsigned char c = p[0];
  size_t n;
  uint32_t v, min;
  if (c == 0)
    return 0;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, v = c & 0x1f, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, v = c & 0x0f, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, v = c & 0x07, min = 0x10000;
  else
    return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80)
      return 0;
    v = (v << 6) | (p[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
    return 0;
  *cp = v;
  return n;
}

/* Calls emit(user, chunk, len) for the escaped form of s[0..len). */
typedef void (*emit_fn)(void *user, const char *chunk, size_t len);

/* keep_newline: 1 the last character when it is a newline, 2 every newline
 * and tab (the filter stream). */
static void escape(const char *s, size_t len, int keep_last_newline, emit_fn emit, void *user) {
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  char tmp[16];
  while (p < end) {
    uint32_t cp = 0;
    size_t n = *p ? base_utf8_decode(p, &cp) : 0;
    if (n && p + n > end)
      n = 0;
    if (n == 1 && cp >= 0x20 && cp != 0x7f) {
      const unsigned char *q = p;
      while (q < end && *q >= 0x20 && *q < 0x7f)
        q++;
      emit(user, (const char *)p, (size_t)(q - p));
      p = q;
      continue;
    }
    if (n > 1 && !(cp >= 0x80 && cp <= 0x9f)) {
      emit(user, (const char *)p, n);
      p += n;
      continue;
    }
    if (n > 1) { /* C1 control */
      snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)cp);
      emit(user, tmp, strlen(tmp));
      p += n;
      continue;
    }
    /* a C0 control, DEL, NUL inside a counted buffer, or an invalid byte */
    if (*p == '\n' && keep_last_newline && (p + 1 == end || keep_last_newline == 2))
      emit(user, "\n", 1);
    else if (*p == '\t' && keep_last_newline == 2)
      emit(user, "\t", 1);
    else if (*p == '\n')
      emit(user, "\\n", 2);
    else if (*p == '\r')
      emit(user, "\\r", 2);
    else if (*p == '\t')
      emit(user, "\\t", 2);
    else {
      snprintf(tmp, sizeof tmp, "\\x%02x", *p);
      emit(user, tmp, 4);
    }
    p++;
  }
}

static void emit_file(void *user, const char *chunk, size_t len) {
  fwrite(chunk, 1, len, (FILE *)user);
}

void base_text_put(FILE *out, const char *s) {
  if (!s)
    s = "(null)";
  escape(s, strlen(s), 0, emit_file, out);
}

typedef struct buf_sink {
  char *buf;
  size_t cap, len;
  int full;
} buf_sink;

static void emit_buf(void *user, const char *chunk, size_t len) {
  buf_sink *b = user;
  if (b->full)
    return;
  if (b->len + len + 1 > b->cap) {
    /* plain text may be cut anywhere; an escape or a UTF-8 sequence not */
    if (len > 1 && (chunk[0] == '\\' || (unsigned char)chunk[0] >= 0x80)) {
      b->full = 1;
      return;
    }
    len = b->cap - 1 - b->len;
    b->full = 1;
  }
  memcpy(b->buf + b->len, chunk, len);
  b->len += len;
  b->buf[b->len] = '\0';
}

const char *base_text_escape(char *buf, size_t cap, const char *s) {
  buf_sink b = {buf, cap, 0, 0};
  if (!cap)
    return buf;
  buf[0] = '\0';
  if (!s)
    s = "(null)";
  escape(s, strlen(s), 0, emit_buf, &b);
  return buf;
}

void base_text_vprintf(FILE *out, const char *fmt, va_list ap) {
  char small[1024];
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  if (n < 0)
    return;
  char *text = small;
  if ((size_t)n >= sizeof small) {
    text = malloc((size_t)n + 1);
    if (!text) {
      escape(small, sizeof small - 1, 0, emit_file, out);
      fputc('\n', out);
      return;
    }
    vsnprintf(text, (size_t)n + 1, fmt, ap);
  }
  escape(text, (size_t)n, 1, emit_file, out);
  if (text != small)
    free(text);
}

void base_text_printf(FILE *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  base_text_vprintf(out, fmt, ap);
  va_end(ap);
}

const char *base_text_where(char *buf, size_t cap, const char *path, unsigned line) {
  if (!path || !*path)
    path = "-";
  if (line)
    snprintf(buf, cap, "%s:%u", path, line);
  else
    snprintf(buf, cap, "%s", path);
  return buf;
}

void base_text_diag(FILE *out, const char *prefix, const char *path, unsigned line, const char *fmt,
                    ...) {
  char where[4200], msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  base_text_where(where, sizeof where, path, line);
  base_text_printf(out, "%s%s: %s\n", prefix ? prefix : "", where, msg);
}

typedef struct filter {
  FILE *out;
  unsigned char pending[4]; /* the start of a UTF-8 sequence cut by a write */
  size_t npending;
} filter;

/* Length a sequence starting with byte c needs (1 when c starts none). */
static size_t utf8_need(unsigned char c) {
  if (c >= 0xc2 && c <= 0xdf)
    return 2;
  if (c >= 0xe0 && c <= 0xef)
    return 3;
  if (c >= 0xf0 && c <= 0xf4)
    return 4;
  return 1;
}

static ssize_t filter_write(void *cookie, const char *buf, size_t size) {
  filter *f = cookie;
  size_t done = 0;
  while (done < size) {
    unsigned char chunk[4096 + 4];
    size_t n = f->npending;
    memcpy(chunk, f->pending, n);
    size_t take = size - done < 4096 ? size - done : 4096;
    memcpy(chunk + n, buf + done, take);
    n += take;
    done += take;
    /* hold back a tail that may be the start of a sequence cut here */
    size_t keep = 0;
    for (size_t back = 1; back <= 3 && back <= n; back++) {
      unsigned char c = chunk[n - back];
      if ((c & 0xc0) == 0x80)
        continue;
      if (utf8_need(c) > back)
        keep = back;
      break;
    }
    f->npending = keep;
    memcpy(f->pending, chunk + n - keep, keep);
    chunk[n - keep] = '\0';
    /* NUL bytes cannot come from text output; escape stops at none */
    escape((const char *)chunk, n - keep, 2, emit_file, f->out);
  }
  return (ssize_t)size;
}

static int filter_close(void *cookie) {
  filter *f = cookie;
  if (f->npending)
    escape((const char *)f->pending, f->npending, 2, emit_file, f->out);
  fflush(f->out);
  free(f);
  return 0;
}

FILE *base_text_filter_open(FILE *out) {
  filter *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  f->out = out;
  cookie_io_functions_t io = {NULL, filter_write, NULL, filter_close};
  FILE *s = fopencookie(f, "w", io);
  if (!s)
    free(f);
  return s;
}

int base_text_cursor_ok(FILE *out) {
  const char *term = getenv("TERM");
  if (!term || !*term || !strcmp(term, "dumb"))
    return 0;
  return isatty(fileno(out));
}

const char *base_text_figure(char *buf, size_t cap, double v, int digits) {
  if (!buf || !cap)
    return "";
  if (!isfinite(v))
    snprintf(buf, cap, "-");
  else
    snprintf(buf, cap, "%.*g", digits < 1 ? 1 : digits > 17 ? 17 : digits, v);
  return buf;
}
