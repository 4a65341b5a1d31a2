/*
 * fault.c: the platform-neutral half of the store's fault injection
 * (CALHOST_FAULT_INJECTION builds only; see platform.h): reading the
 * CALSTORE_FAULT rules and counting the allocations ("alloc:N"). Each
 * platform file maps the error names to its own error codes and does the
 * killing.
 */
#define CS_FAULT_ALLOCATOR /* the C library's allocator itself, not internal.h's */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"

#ifdef CALHOST_FAULT_INJECTION
/* Calls match(rule, length, user) for each comma-separated rule of
 * CALSTORE_FAULT until it returns nonzero; returns that value, else 0. */
static int each_rule(int (*match)(const char *rule, size_t n, const void *user), const void *user) {
  const char *spec = getenv("CALSTORE_FAULT");
  while (spec && *spec) {
    const char *end = strchr(spec, ',');
    size_t n = end ? (size_t)(end - spec) : strlen(spec);
    int r = match(spec, n, user);
    if (r)
      return r;
    spec = end ? end + 1 : NULL;
  }
  return 0;
}

/* The error names of "STEP:NAME" (platform.h), in the order of every
 * platform layer's table of error codes. */
static const char *const error_names[CS_FAULT_ERRORS] = {"EIO",    "ENOSPC", "EFBIG", "EXDEV",
                                                         "EAGAIN", "EACCES", "EROFS", "EINTR"};

typedef struct error_query {
  const char *step;
  const char *const *names;
  size_t count;
} error_query;

/* "STEP:NAME": 1 + the index of NAME in the query's names. */
static int match_error(const char *rule, size_t n, const void *user) {
  const error_query *q = user;
  size_t sl = strlen(q->step);
  if (n <= sl + 1 || strncmp(rule, q->step, sl) != 0 || rule[sl] != ':')
    return 0;
  for (size_t i = 0; i < q->count; i++) {
    size_t en = strlen(q->names[i]);
    if (n - sl - 1 == en && !strncmp(rule + sl + 1, q->names[i], en))
      return (int)i + 1;
  }
  return 0;
}

/* "crash_after:STEP". */
static int match_crash(const char *rule, size_t n, const void *user) {
  const char *step = user;
  size_t sl = strlen(step);
  return n == 12 + sl && !strncmp(rule, "crash_after:", 12) && !strncmp(rule + 12, step, sl);
}

int cs_fault_error_index(const char *step) {
  error_query q = {step, error_names, CS_FAULT_ERRORS};
  return each_rule(match_error, &q) - 1;
}

int cs_fault_crash_after(const char *step) {
  return each_rule(match_crash, step);
}

/* The allocations counted since the last cs_fault_alloc_reset (the store's
 * threads allocate concurrently while a large file loads). */
static atomic_size_t alloc_count;

/* "alloc:N" with N the number of the allocation being made. */
static int match_alloc(const char *rule, size_t n, const void *user) {
  const size_t *number = user;
  if (n <= 6 || strncmp(rule, "alloc:", 6) != 0)
    return 0;
  size_t v = 0;
  for (size_t i = 6; i < n; i++) {
    if (rule[i] < '0' || rule[i] > '9')
      return 0;
    v = v * 10 + (size_t)(rule[i] - '0');
  }
  return v == *number;
}

/* Counts one allocation; nonzero (errno ENOMEM, as the C library's
 * allocator sets it) when CALSTORE_FAULT says it fails. */
static int alloc_fails(void) {
  size_t number = atomic_fetch_add(&alloc_count, 1) + 1;
  if (!each_rule(match_alloc, &number))
    return 0;
  errno = ENOMEM;
  return 1;
}

void *cs_fault_malloc(size_t n) {
  return alloc_fails() ? NULL : malloc(n);
}

void *cs_fault_calloc(size_t n, size_t size) {
  return alloc_fails() ? NULL : calloc(n, size);
}

void *cs_fault_realloc(void *p, size_t n) {
  return alloc_fails() ? NULL : realloc(p, n);
}

char *cs_fault_strdup(const char *s) {
  return alloc_fails() ? NULL : strdup(s);
}

size_t cs_fault_alloc_reset(void) {
  return atomic_exchange(&alloc_count, 0);
}
#else
typedef int cs_fault_unused; /* an ISO C translation unit may not be empty */
#endif
