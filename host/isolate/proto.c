/*
 * proto.c: the framed record stream between an isolated child and its parent
 * (see proto.h): frame building, complete writes, an incremental reader and
 * a field cursor.
 */
#include "proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put_le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static unsigned char *reserve(isolate_proto_buf *b, size_t n) {
  if (b->failed)
    return NULL;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
      cap *= 2;
    unsigned char *d = realloc(b->data, cap);
    if (!d) {
      b->failed = 1;
      return NULL;
    }
    b->data = d;
    b->cap = cap;
  }
  unsigned char *p = b->data + b->len;
  b->len += n;
  return p;
}

void isolate_proto_begin(isolate_proto_buf *b, uint32_t type) {
  b->len = 0;
  b->failed = 0;
  unsigned char *p = reserve(b, CALHOST_PROTO_HEADER);
  if (!p)
    return;
  put_le32(p, CALHOST_PROTO_MAGIC);
  put_le32(p + 4, type);
  put_le32(p + 8, 0);
}

void isolate_proto_put_u64(isolate_proto_buf *b, uint64_t v) {
  unsigned char *p = reserve(b, 9);
  if (!p)
    return;
  p[0] = 'u';
  put_le64(p + 1, v);
}

void isolate_proto_put_f64(isolate_proto_buf *b, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  unsigned char *p = reserve(b, 9);
  if (!p)
    return;
  p[0] = 'd';
  put_le64(p + 1, bits);
}

void isolate_proto_put_str(isolate_proto_buf *b, const char *s) {
  if (!s) {
    unsigned char *p = reserve(b, 1);
    if (p)
      p[0] = 'n';
    return;
  }
  size_t n = strlen(s);
  if (n > CALHOST_PROTO_MAX_FRAME) {
    b->failed = 1;
    return;
  }
  unsigned char *p = reserve(b, 1 + 4 + n + 1);
  if (!p)
    return;
  p[0] = 's';
  put_le32(p + 1, (uint32_t)n);
  memcpy(p + 5, s, n + 1);
}

int isolate_proto_finish(isolate_proto_buf *b) {
  if (b->failed || b->len < CALHOST_PROTO_HEADER ||
      b->len - CALHOST_PROTO_HEADER > CALHOST_PROTO_MAX_FRAME)
    return -1;
  put_le32(b->data + 8, (uint32_t)(b->len - CALHOST_PROTO_HEADER));
  return 0;
}

int isolate_proto_write(int fd, const isolate_proto_buf *b) {
  size_t off = 0;
  while (off < b->len) {
    ssize_t w = write(fd, b->data + off, b->len - off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    off += (size_t)w;
  }
  return 0;
}

int isolate_proto_send(int fd, isolate_proto_buf *b) {
  if (isolate_proto_finish(b) != 0)
    return -1;
  return isolate_proto_write(fd, b);
}

void isolate_proto_buf_free(isolate_proto_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

void isolate_proto_cursor_init(isolate_proto_cursor *c, const isolate_proto_msg *m) {
  c->p = m->payload;
  c->left = m->length;
  c->failed = 0;
}

static int take(isolate_proto_cursor *c, char kind) {
  if (c->failed || c->left < 1 || c->p[0] != (unsigned char)kind)
    return c->failed = 1, 0;
  c->p++;
  c->left--;
  return 1;
}

/* An 8-byte little-endian field of this kind: 1 with its bits in *v, or 0
 * (the cursor failed). */
static int take_le64(isolate_proto_cursor *c, char kind, uint64_t *v) {
  if (!take(c, kind))
    return 0;
  if (c->left < 8)
    return c->failed = 1, 0;
  *v = get_le64(c->p);
  c->p += 8;
  c->left -= 8;
  return 1;
}

uint64_t isolate_proto_get_u64(isolate_proto_cursor *c) {
  uint64_t v;
  return take_le64(c, 'u', &v) ? v : 0;
}

double isolate_proto_get_f64(isolate_proto_cursor *c) {
  uint64_t bits;
  double v = 0;
  if (take_le64(c, 'd', &bits))
    memcpy(&v, &bits, sizeof v);
  return v;
}

const char *isolate_proto_get_str(isolate_proto_cursor *c) {
  if (!c->failed && c->left >= 1 && c->p[0] == 'n') {
    c->p++;
    c->left--;
    return NULL;
  }
  if (!take(c, 's'))
    return NULL;
  if (c->left < 4)
    return c->failed = 1, NULL;
  uint32_t n = get_le32(c->p);
  if ((size_t)n + 1 > c->left - 4 || c->p[4 + n] != '\0' || memchr(c->p + 4, '\0', n))
    return c->failed = 1, NULL;
  const char *s = (const char *)c->p + 4;
  c->p += 4 + (size_t)n + 1;
  c->left -= 4 + (size_t)n + 1;
  return s;
}

char *isolate_proto_dup_str(isolate_proto_cursor *c) {
  const char *s = isolate_proto_get_str(c);
  return s ? strdup(s) : NULL;
}

void isolate_proto_put_props(isolate_proto_buf *b, const calhost_property *p, size_t n) {
  isolate_proto_put_u64(b, p ? n : 0);
  for (size_t i = 0; p && i < n; i++) {
    isolate_proto_put_str(b, p[i].name ? p[i].name : "");
    isolate_proto_put_str(b, p[i].value ? p[i].value : "");
  }
}

int isolate_proto_get_props(isolate_proto_cursor *c, size_t max, calhost_property **out,
                            size_t *n) {
  *out = NULL;
  *n = 0;
  uint64_t count = isolate_proto_get_u64(c);
  if (c->failed || count > max)
    return c->failed = 1, -1;
  calhost_property *p = count ? calloc((size_t)count, sizeof *p) : NULL;
  size_t got = 0;
  int ok = !count || p;
  for (; ok && got < count; got++) {
    p[got].name = isolate_proto_dup_str(c);
    p[got].value = isolate_proto_dup_str(c);
    ok = !c->failed && p[got].name && p[got].value;
  }
  if (!ok) {
    isolate_props_free(p, got);
    return c->failed = 1, -1;
  }
  *out = p;
  *n = got;
  return 0;
}

void isolate_props_free(calhost_property *p, size_t n) {
  for (size_t i = 0; p && i < n; i++) {
    free((char *)p[i].name);
    free((char *)p[i].value);
  }
  free(p);
}

int isolate_proto_reader_feed(isolate_proto_reader *r, const void *data, size_t n) {
  if (r->pos > 0 && r->pos == r->len) {
    r->pos = r->len = 0;
  } else if (r->pos > 0 && r->len + n > r->cap) {
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
  }
  if (r->len + n > r->cap) {
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->len + n)
      cap *= 2;
    unsigned char *b = realloc(r->buf, cap);
    if (!b)
      return -1;
    r->buf = b;
    r->cap = cap;
  }
  if (n)
    memcpy(r->buf + r->len, data, n);
  r->len += n;
  return 0;
}

int isolate_proto_reader_next(isolate_proto_reader *r, isolate_proto_msg *msg) {
  if (r->corrupt)
    return -1;
  size_t avail = r->len - r->pos;
  if (avail < CALHOST_PROTO_HEADER)
    return 0;
  const unsigned char *h = r->buf + r->pos;
  if (get_le32(h) != CALHOST_PROTO_MAGIC) {
    r->corrupt = 1;
    strcpy(r->error, "bad frame magic");
    return -1;
  }
  uint32_t length = get_le32(h + 8);
  if (length > CALHOST_PROTO_MAX_FRAME) {
    r->corrupt = 1;
    strcpy(r->error, "oversized frame");
    return -1;
  }
  if (avail < CALHOST_PROTO_HEADER + (size_t)length)
    return 0;
  msg->type = get_le32(h + 4);
  msg->payload = h + CALHOST_PROTO_HEADER;
  msg->length = length;
  r->pos += CALHOST_PROTO_HEADER + (size_t)length;
  return 1;
}

size_t isolate_proto_reader_pending(const isolate_proto_reader *r) {
  return r->len - r->pos;
}

void isolate_proto_reader_free(isolate_proto_reader *r) {
  free(r->buf);
  memset(r, 0, sizeof *r);
}
