/*
 * proto.h: the one framed, serialized record stream an isolated child
 * (isolate.h: the probe, each `plugin check` check, a plugin's sweeps)
 * sends to its parent over a dedicated pipe. Each user numbers its own
 * record types.
 *
 * A frame is a 12-byte header — magic "CHSW", record type, payload length,
 * each a little-endian u32 — and a payload of typed fields: 'u' + u64,
 * 'd' + f64 (IEEE bits as u64), 's' + u32 length + bytes + NUL, 'n' (a NULL
 * string). Both ends run on the same machine from the same binary, but the
 * encoding is explicit anyway so a truncated or corrupt stream is always
 * detected rather than misread. Frames are limited to CALHOST_PROTO_MAX_FRAME.
 * Internal to the host.
 */
#ifndef CALHOST_ISOLATE_PROTO_H
#define CALHOST_ISOLATE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h" /* calhost_property */

#define CALHOST_PROTO_MAGIC 0x57534843u /* "CHSW" little-endian */
#define CALHOST_PROTO_HEADER 12u
#define CALHOST_PROTO_MAX_FRAME (4u * 1024u * 1024u)

/* ---- Writing ------------------------------------------------------------ */

/* A frame being built. Zero-initialise, then begin/put/finish; reuse after
 * begin; free with isolate_proto_buf_free. A failed allocation sets failed
 * and makes finish fail. */
typedef struct isolate_proto_buf {
  unsigned char *data;
  size_t len, cap;
  int failed;
} isolate_proto_buf;

/* Starts a frame of record type `type` (drops what b held). */
void isolate_proto_begin(isolate_proto_buf *b, uint32_t type);
/* Appends a field. put_str(NULL) writes a NULL string. */
void isolate_proto_put_u64(isolate_proto_buf *b, uint64_t v);
void isolate_proto_put_f64(isolate_proto_buf *b, double v);
void isolate_proto_put_str(isolate_proto_buf *b, const char *s);
/* Writes the header's length. Returns 0, or -1 when an allocation failed or
 * the frame is larger than CALHOST_PROTO_MAX_FRAME. */
int isolate_proto_finish(isolate_proto_buf *b);
/* Writes the finished frame to fd completely (retrying on EINTR and short
 * writes). Returns 0, or -1 (errno set; EPIPE when the reader is gone). */
int isolate_proto_write(int fd, const isolate_proto_buf *b);
/* Finishes b's frame and writes it to fd (isolate_proto_finish, then
 * isolate_proto_write): how a child sends a record. Returns 0, or -1 when
 * the frame could not be finished or written; a child whose parent is gone
 * has nobody to tell, so callers may ignore it. */
int isolate_proto_send(int fd, isolate_proto_buf *b);
/* Frees the buffer and zeroes *b. */
void isolate_proto_buf_free(isolate_proto_buf *b);

/* ---- Reading ------------------------------------------------------------ */

/* One received frame: type and payload (borrowed from the reader, valid
 * until the next feed or next call). */
typedef struct isolate_proto_msg {
  uint32_t type;
  const unsigned char *payload;
  size_t length;
} isolate_proto_msg;

/* A sequential reader of a message's fields. Any mismatch (wrong kind, past
 * the end, bad string) sets failed; later gets return 0 / NULL. */
typedef struct isolate_proto_cursor {
  const unsigned char *p;
  size_t left;
  int failed;
} isolate_proto_cursor;

void isolate_proto_cursor_init(isolate_proto_cursor *c, const isolate_proto_msg *m);
uint64_t isolate_proto_get_u64(isolate_proto_cursor *c);
double isolate_proto_get_f64(isolate_proto_cursor *c);
/* A NUL-terminated string inside the message (borrowed), or NULL for a NULL
 * string or on failure (check c->failed to tell them apart). */
const char *isolate_proto_get_str(isolate_proto_cursor *c);
/* Copy of the next string (malloc'd, caller frees); NULL for NULL/failure. */
char *isolate_proto_dup_str(isolate_proto_cursor *c);

/* A property list on the wire: its count (u64), then name and value of each
 * (a NULL name or value is sent as ""). */
void isolate_proto_put_props(isolate_proto_buf *b, const calhost_property *p, size_t n);
/* Reads a property list of at most max entries into *out (malloc'd names,
 * values and array; free with isolate_props_free) and *n. Returns 0, or -1
 * with c->failed set (a bad or missing field, more than max entries, out of
 * memory) and *out NULL, *n 0. */
int isolate_proto_get_props(isolate_proto_cursor *c, size_t max, calhost_property **out, size_t *n);
/* Frees a property list whose names and values are malloc'd (as
 * isolate_proto_get_props returns them); p may be NULL. */
void isolate_props_free(calhost_property *p, size_t n);

/* An incremental frame reader for a byte stream. Zero-initialise; free with
 * isolate_proto_reader_free. */
typedef struct isolate_proto_reader {
  unsigned char *buf;
  size_t len, cap, pos;
  int corrupt; /* a bad header was seen: the stream is unusable */
  char error[128];
} isolate_proto_reader;

/* Appends received bytes. Returns 0, or -1 on allocation failure. */
int isolate_proto_reader_feed(isolate_proto_reader *r, const void *data, size_t n);
/* Extracts the next complete frame into *msg: returns 1 (a frame), 0 (need
 * more bytes) or -1 (corrupt stream: bad magic or oversized length; error
 * says which). */
int isolate_proto_reader_next(isolate_proto_reader *r, isolate_proto_msg *msg);
/* Bytes of an incomplete frame still buffered: nonzero at end of stream
 * means the stream was truncated. */
size_t isolate_proto_reader_pending(const isolate_proto_reader *r);
void isolate_proto_reader_free(isolate_proto_reader *r);

#endif /* CALHOST_ISOLATE_PROTO_H */
