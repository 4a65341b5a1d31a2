/*
 * cpulist.c: CPU lists ("0-3,6", "all"): parsing, canonical formatting and
 * the set of CPUs this process may run on. No hwloc here, so the
 * configuration can validate CPU lists without touching the machine.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/str.h"
#include "internal.h"
#include "processor.h"

void processor_append(char *buf, size_t capacity, size_t *len, const char *fmt, ...) {
  va_list ap;
  int k;
  va_start(ap, fmt);
  if (buf && *len < capacity)
    k = vsnprintf(buf + *len, capacity - *len, fmt, ap);
  else
    k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k > 0)
    *len += (size_t)k;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Reads a decimal CPU index at *p (no sign), advancing *p; -1 if none or
 * too large. */
static long read_index(const char **p) {
  const char *s = *p;
  long v = 0;
  if (!isdigit((unsigned char)*s))
    return -1;
  while (isdigit((unsigned char)*s)) {
    v = v * 10 + (*s - '0');
    if (v >= CALHOST_CPU_LIMIT)
      v = CALHOST_CPU_LIMIT; /* keep reading; reported by the caller */
    s++;
  }
  *p = s;
  return v;
}

int processor_cpulist_parse(const char *text, int **cpus, size_t *count, int *all, char *err,
                            size_t err_capacity) {
  unsigned char *seen = NULL;
  const char *p = text;
  size_t n = 0;
  int *out = NULL;
  *cpus = NULL;
  *count = 0;
  *all = 0;
  if (!text)
    return base_str_fail(err, err_capacity, "empty CPU list");
  while (isspace((unsigned char)*p))
    p++;
  {
    size_t len = strlen(p);
    while (len && isspace((unsigned char)p[len - 1]))
      len--;
    if (len == 3 && !strncasecmp(p, "all", 3)) {
      *all = 1;
      return 0;
    }
    if (len == 0)
      return base_str_fail(err, err_capacity, "empty CPU list (use 'all' or e.g. '0-3,6')");
  }
  seen = calloc(CALHOST_CPU_LIMIT, 1);
  if (!seen)
    return base_str_fail(err, err_capacity, "out of memory");
  for (;;) {
    long lo, hi;
    while (*p == ' ' || *p == '\t')
      p++;
    lo = read_index(&p);
    if (lo < 0) {
      free(seen);
      return base_str_fail(err, err_capacity, "bad CPU list '%s': expected a CPU number at '%s'",
                           text, *p ? p : "end");
    }
    hi = lo;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '-') {
      p++;
      while (*p == ' ' || *p == '\t')
        p++;
      hi = read_index(&p);
      if (hi < 0) {
        free(seen);
        return base_str_fail(err, err_capacity,
                             "bad CPU list '%s': expected a CPU number after '-'", text);
      }
    }
    if (lo >= CALHOST_CPU_LIMIT || hi >= CALHOST_CPU_LIMIT) {
      free(seen);
      return base_str_fail(err, err_capacity, "bad CPU list '%s': CPU numbers must be below %d",
                           text, CALHOST_CPU_LIMIT);
    }
    if (hi < lo) {
      free(seen);
      return base_str_fail(err, err_capacity, "bad CPU list '%s': reversed range %ld-%ld", text, lo,
                           hi);
    }
    for (long c = lo; c <= hi; c++) {
      if (seen[c]) {
        free(seen);
        return base_str_fail(err, err_capacity, "bad CPU list '%s': CPU %ld is listed twice", text,
                             c);
      }
      seen[c] = 1;
      n++;
    }
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == '\0')
      break;
    free(seen);
    return base_str_fail(err, err_capacity, "bad CPU list '%s': unexpected '%c'", text, *p);
  }
  out = malloc(n * sizeof *out);
  if (!out) {
    free(seen);
    return base_str_fail(err, err_capacity, "out of memory");
  }
  n = 0;
  for (int c = 0; c < CALHOST_CPU_LIMIT; c++)
    if (seen[c])
      out[n++] = c;
  free(seen);
  *cpus = out;
  *count = n;
  return 0;
}

size_t processor_cpulist_format(const int *cpus, size_t count, char *buf, size_t capacity) {
  size_t len = 0;
  int *sorted;
  if (buf && capacity)
    buf[0] = '\0';
  if (count == 0) {
    processor_append(buf, capacity, &len, "all");
    return len;
  }
  sorted = malloc(count * sizeof *sorted);
  if (!sorted)
    return 0;
  memcpy(sorted, cpus, count * sizeof *sorted);
  qsort(sorted, count, sizeof *sorted, cmp_int);
  for (size_t i = 0; i < count;) {
    size_t j = i;
    while (j + 1 < count && (sorted[j + 1] == sorted[j] || sorted[j + 1] == sorted[j] + 1))
      j++;
    if (sorted[j] == sorted[i])
      processor_append(buf, capacity, &len, "%s%d", len ? "," : "", sorted[i]);
    else
      processor_append(buf, capacity, &len, "%s%d-%d", len ? "," : "", sorted[i], sorted[j]);
    i = j + 1;
  }
  free(sorted);
  return len;
}

int processor_allowed_cpus(int **cpus, size_t *count, char *err, size_t err_capacity) {
  cpu_set_t *set;
  size_t setsize = CPU_ALLOC_SIZE(CALHOST_CPU_LIMIT);
  int *out;
  size_t n;
  *cpus = NULL;
  *count = 0;
  set = CPU_ALLOC(CALHOST_CPU_LIMIT);
  if (!set)
    return base_str_fail(err, err_capacity, "out of memory");
  CPU_ZERO_S(setsize, set);
  if (sched_getaffinity(0, setsize, set) != 0) {
    int e = errno;
    CPU_FREE(set);
    return base_str_fail(err, err_capacity, "sched_getaffinity: %s", strerror(e));
  }
  n = (size_t)CPU_COUNT_S(setsize, set);
  out = malloc((n ? n : 1) * sizeof *out);
  if (!out) {
    CPU_FREE(set);
    return base_str_fail(err, err_capacity, "out of memory");
  }
  n = 0;
  for (int c = 0; c < CALHOST_CPU_LIMIT; c++)
    if (CPU_ISSET_S(c, setsize, set))
      out[n++] = c;
  CPU_FREE(set);
  *cpus = out;
  *count = n;
  return 0;
}
