/*
 * internal.h: libcalstore's internal interfaces, shared by the store's .c
 * files and never installed. Owns the in-memory representation:
 *
 *  - cs_prof: one immutable, reference-counted profile record (a single
 *    allocation holding the public view and every string it points to).
 *    Sets and lookup results hold references, so a lookup result stays valid
 *    after the store changes without deep-copying anything.
 *  - cs_set: a snapshot: records in file order, a hash index by identity
 *    (kind, source, key) for O(1) exact hits, and an index by
 *    (backend, operator) for the rejection report.
 *  - the reader (format.c), the canonical writer (write.c), the format's
 *    numbers (number.c), the commit path (store.c) and the platform layer
 *    (platform.h).
 */
#ifndef CALHOST_STORE_INTERNAL_H
#define CALHOST_STORE_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "calhost/calstore.h"

#if defined(__GNUC__) && !defined(_WIN32)
#define CS_HIDDEN __attribute__((visibility("hidden")))
#else
#define CS_HIDDEN
#endif

#if defined(__GNUC__)
#define CS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CS_PRINTF(a, b)
#endif

/* ---- errors ------------------------------------------------------------ */

/* Fills err (may be NULL) with status, line, path (may be NULL) and a
 * printf-formatted message; returns status. */
CS_HIDDEN calstore_status cs_fail(calstore_error *err, calstore_status status, unsigned line,
                                  const char *path, const char *fmt, ...) CS_PRINTF(5, 6);

/* ---- memory ------------------------------------------------------------ */

/* The store's one way to grow an array (libcalstore links no host part;
 * calhost's own rule is base_array_grow): makes room for need elements of
 * size bytes in items, *cap allocated. Returns items unchanged when
 * need <= *cap; otherwise reallocates to *cap (first when *cap is 0)
 * doubled until it holds need, updates *cap and returns the new pointer,
 * which the caller stores in place of items. NULL on OOM or size overflow;
 * items and *cap are then unchanged and still the caller's. */
CS_HIDDEN void *cs_grow(void *items, size_t need, size_t *cap, size_t size, size_t first);

/* Fault-injection builds (CALHOST_FAULT_INJECTION): every allocation of the
 * store's .c files (each includes this header after the C library's) goes
 * through fault.c, so a test can make the N-th one fail (the rule "alloc:N"
 * of CALSTORE_FAULT, platform.h) and walk each allocation's error path in
 * turn, as SQLite's out-of-memory tests do. A call, not a test at each call
 * site: the store's own branches stay the ones a coverage build counts.
 * Other builds call the C library directly. */
#if defined(CALHOST_FAULT_INJECTION) && !defined(CS_FAULT_ALLOCATOR)
#include <stdlib.h>
#include <string.h>
CS_HIDDEN void *cs_fault_malloc(size_t n);
CS_HIDDEN void *cs_fault_calloc(size_t n, size_t size);
CS_HIDDEN void *cs_fault_realloc(void *p, size_t n);
CS_HIDDEN char *cs_fault_strdup(const char *s);
/* fault.c: the allocations counted since the last reset; restarts the count. */
CS_HIDDEN size_t cs_fault_alloc_reset(void);
#undef strdup
#define malloc(n) cs_fault_malloc(n)
#define calloc(n, size) cs_fault_calloc(n, size)
#define realloc(p, n) cs_fault_realloc(p, n)
#define strdup(s) cs_fault_strdup(s)
#endif

/* ---- records ----------------------------------------------------------- */

/* A loaded file's bytes, shared by the records whose canonical text lies in
 * it (reference counted; freed with the last such record). */
typedef struct cs_blob {
  int refs; /* atomic builtins only */
  char *data;
} cs_blob;

/* Wraps a malloc'ed buffer (refs = 1); NULL on OOM (data is then freed). */
CS_HIDDEN cs_blob *cs_blob_new(char *data);
CS_HIDDEN void cs_blob_unref(cs_blob *b);

typedef struct cs_prof {
  calstore_profile v; /* the public view; every pointer points into this block */
  uint64_t id_hash;   /* hash of (kind, source, key) */
  uint64_t bo_hash;   /* hash of (backend, operator) */
  int refs;           /* reference count, atomic builtins only */
  const char *text;   /* the record's canonical text (profile ... end\n): in the block, */
  size_t text_len;    /* or in blob when the file held it in canonical form */
  cs_blob *blob;
} cs_prof;

/* Checks a key: complete, not mixed, no line break in any field, sorted
 * structure names unique. Writes a message into msg. Returns OK or
 * CALSTORE_INVALID_ARGUMENT. */
CS_HIDDEN calstore_status cs_check_key(const calstore_key *key, char *msg, size_t cap);
/* Checks measurements (name non-empty, finite value, unit not NULL, no line
 * break) and a policy (non-empty, no line break, no NUL within length). */
CS_HIDDEN calstore_status cs_check_measurements(const calstore_measurement *m, size_t n, char *msg,
                                                size_t cap);
CS_HIDDEN calstore_status cs_check_policy(const char *policy, size_t length, char *msg, size_t cap);
/* Nonzero when s contains a line feed '\n' (a CR is carried). */
CS_HIDDEN int cs_has_line_break(const char *s, size_t n);

/* Creates a record (refs = 1) deep-copying key (structure sorted by name),
 * measurements and policy[0..policy_length), with its canonical text:
 * text[0..text_len) when the caller knows it (the parser, for a record
 * already in canonical form), referenced in blob when blob is not NULL
 * (taking a blob reference), else copied; rendered by the writer when text
 * is NULL. Inputs must already be checked. NULL on allocation failure. */
CS_HIDDEN cs_prof *cs_prof_create(const calstore_key *key, calstore_source source,
                                  const calstore_measurement *m, size_t n, const char *policy,
                                  size_t policy_length, const char *text, size_t text_len,
                                  cs_blob *blob);
CS_HIDDEN void cs_prof_ref(cs_prof *p);
CS_HIDDEN void cs_prof_unref(cs_prof *p);

/* Identity hash of (key, source); key->structure must be sorted by name. */
CS_HIDDEN uint64_t cs_identity_hash(const calstore_key *key, calstore_source source);
CS_HIDDEN uint64_t cs_bo_hash(const char *backend, const char *op);
/* Nonzero when two keys (structure sorted) are the same identity. */
CS_HIDDEN int cs_key_equal(const calstore_key *a, const calstore_key *b);
/* Sorts properties by name (insertion sort; small arrays). Returns nonzero
 * when two names are equal (after sorting). */
CS_HIDDEN int cs_sort_properties(calstore_property *p, size_t n);

/* ---- sets -------------------------------------------------------------- */

typedef struct cs_group {
  uint64_t hash;
  char *backend, *op;
  uint32_t *pos; /* positions in cs_set.items, ascending (file order); may be stale */
  size_t n, cap;
} cs_group;

typedef struct cs_set {
  cs_prof **items; /* file order; NULL = removed */
  size_t n, cap, live;
  uint64_t *tab; /* identity index: hash tag << 32 | slot (0 empty, ~0u removed, else pos + 1) */
  size_t tab_cap, tab_used;
  cs_group *groups; /* open addressing by hash; backend == NULL: empty slot */
  size_t group_cap, group_used;
  int borrowed; /* holds no references: the records belong to another set or to ops */
} cs_set;

CS_HIDDEN cs_set *cs_set_new(void);
CS_HIDDEN void cs_set_free(cs_set *set);
/* A new set sharing every record of set; NULL on OOM. borrowed: the copy
 * takes no references (cheap: no record is touched) and must not outlive
 * set's records; records put into it must be kept alive by the caller. */
CS_HIDDEN cs_set *cs_set_clone(const cs_set *set, int borrowed);
/* Position of the record with this identity, or -1. */
CS_HIDDEN long cs_set_find(const cs_set *set, const calstore_key *key, calstore_source source,
                           uint64_t hash);
/* Appends p (taking its reference) without looking for a duplicate.
 * Returns 0, -1 on OOM (the reference is then dropped). */
CS_HIDDEN int cs_set_append(cs_set *set, cs_prof *p);
/* Replaces the record with p's identity in place or appends p; takes p's
 * reference. Returns 0, -1 on OOM. */
CS_HIDDEN int cs_set_put(cs_set *set, cs_prof *p);
CS_HIDDEN void cs_set_remove_at(cs_set *set, size_t pos);
/* Removes every record of backend (and implementation when not NULL);
 * returns how many. */
CS_HIDDEN size_t cs_set_invalidate(cs_set *set, const char *backend, const char *implementation);
/* The (backend, operator) group, or NULL. */
CS_HIDDEN const cs_group *cs_set_group(const cs_set *set, const char *backend, const char *op);
/* Drops removed slots and rebuilds the indexes when worthwhile. Returns 0 or
 * -1 on OOM (set unchanged). */
CS_HIDDEN int cs_set_compact(cs_set *set);

/* ---- format ------------------------------------------------------------ */

/* Growable byte buffer. */
typedef struct cs_buf {
  char *data;
  size_t len, cap;
  int oom;
} cs_buf;
CS_HIDDEN void cs_buf_put(cs_buf *b, const char *s, size_t n);
CS_HIDDEN void cs_buf_free(cs_buf *b);

/* Parses version-1 text in buf[0..len) into set (which must be empty);
 * buf[len] must be writable, the text is left as it was. threads: nonzero
 * lets a large file be parsed by helper threads (the store's
 * CALSTORE_OPEN_NO_THREADS clears it); 0 parses in the caller. Records already in
 * canonical form reference their text in blob when blob is not NULL
 * (blob->data == buf), else copy it. Reports each problem through diag (may
 * be NULL); the first error is also written into first (may be NULL) with
 * its line. Returns OK, MALFORMED, UNSUPPORTED_VERSION or NO_MEMORY. */
CS_HIDDEN calstore_status cs_parse(char *buf, size_t len, int threads, cs_set *set, cs_blob *blob,
                                   calstore_diagnostic_fn diag, void *diag_user,
                                   calstore_error *first);
/* Appends the canonical header / one record (rendered from its fields) to b
 * (write.c, the only record serializer). */
CS_HIDDEN void cs_write_header(cs_buf *b);
CS_HIDDEN void cs_write_prof(cs_buf *b, const calstore_profile *p);
/* Nonzero when text[0..len) is exactly what cs_write_prof renders for p
 * (p's strings NUL-terminated, structure sorted); renders into scratch
 * (reused: its length is reset; freed by the caller). Zero on OOM. */
CS_HIDDEN int cs_text_is_canonical(const calstore_profile *p, const char *text, size_t len,
                                   cs_buf *scratch);
/* Serializes a whole set (cs_set_chunks joined into b). */
CS_HIDDEN void cs_write_set(cs_buf *b, const cs_set *set);

/* Numbers (number.c). A count: [+]digits up to UINT32_MAX; "-0" (any
 * number of zeros) is 0, any other sign '-' CS_COUNT_NEGATIVE. */
typedef enum cs_count_result {
  CS_COUNT_OK,
  CS_COUNT_SYNTAX,
  CS_COUNT_NEGATIVE,
  CS_COUNT_TOO_LARGE
} cs_count_result;
CS_HIDDEN cs_count_result cs_read_count(const char *s, size_t n, uint32_t *out);
/* A measurement value: s[0..n) must be a plain decimal
 * [+-](digits[.digits]|.digits)[(e|E)[+-]digits] (no hexadecimal, inf or
 * nan); converted correctly rounded. Returns 1, 0 when the text is not such
 * a number (out untouched), -1 on OOM. The result may be infinite (1e999). */
CS_HIDDEN int cs_read_double(const char *s, size_t n, double *out);
/* strtod of s[0..n) for plain decimals ([-]digits[.digits], at most 19
 * significant digits, at most 21 after the point), correctly rounded with
 * 128-bit arithmetic. Returns 0 (out untouched) when the text is outside
 * that form: call strtod then. */
CS_HIDDEN int cs_parse_decimal(const char *s, size_t n, double *out);
/* printf("%.17g") of v into out (cap >= 32), fast; returns the length. */
CS_HIDDEN int cs_format_double(char *out, size_t cap, double v);
/* printf("%llu") of v into out (room for 21 bytes); returns the length. */
CS_HIDDEN int cs_format_uint(char *out, uint64_t v);

/* A piece of a file to write. */
typedef struct cs_chunk {
  const char *data;
  size_t len;
} cs_chunk;
/* The same serialization as pieces pointing into the records (valid while
 * the set holds them): header first. Returns a malloc'ed array of *n
 * chunks, NULL on OOM. */
CS_HIDDEN cs_chunk *cs_set_chunks(const cs_set *set, size_t *n);

/* ---- store internals shared by store.c, batch.c, lookup.c -------------- */

/* CS_OP_REWRITE changes no profile: the commit rewrites the file (the
 * latest one, reloaded under the lock) canonically, as an export onto the
 * store itself asks. */
typedef enum cs_op_kind { CS_OP_PUT = 1, CS_OP_CLEAR, CS_OP_INVALIDATE, CS_OP_REWRITE } cs_op_kind;

typedef struct cs_op {
  cs_op_kind kind;
  cs_prof *prof;        /* PUT: the new record; CLEAR: a record carrying the key */
  int if_absent;        /* PUT: only when no record has this identity at commit */
  int *stored;          /* PUT if_absent: receives affected after the commit (may be NULL) */
  char *backend;        /* INVALIDATE */
  char *implementation; /* INVALIDATE, may be NULL */
  size_t affected;      /* after commit: records removed / replaced / written */
} cs_op;

CS_HIDDEN void cs_op_release(cs_op *op);
/* Builds a PUT op: checks key, measurements, calls serializer once and the
 * validator. */
CS_HIDDEN calstore_status cs_make_put(const calstore_key *key, calstore_source source,
                                      const calstore_measurement *m, size_t n,
                                      calstore_serializer_fn serializer, void *serializer_user,
                                      calstore_validator_fn validator, void *validator_user,
                                      cs_op *op, calstore_error *err);
CS_HIDDEN calstore_status cs_make_clear(const calstore_key *key, cs_op *op, calstore_error *err);
CS_HIDDEN calstore_status cs_make_invalidate(const char *backend, const char *implementation,
                                             cs_op *op, calstore_error *err);
/* Applies ops in one commit (lock, reload if changed, merge, write, swap).
 * All or nothing. Each op's affected says what it did; all are 0 when the
 * change did not take effect (any failure but a failed directory sync after
 * the rename). */
CS_HIDDEN calstore_status cs_commit(calstore *store, cs_op *ops, size_t n, calstore_error *err);

/* Read access to the live snapshot for lookup.c: returns it read-locked. */
CS_HIDDEN const cs_set *cs_store_read_begin(calstore *store);
CS_HIDDEN void cs_store_read_end(calstore *store);

#endif /* CALHOST_STORE_INTERNAL_H */
