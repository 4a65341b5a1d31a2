/*
 * values.c: the value parsers shared by calhost.ini and the command line
 * (see values.h): one scanner for decimal digits, one for list items, and
 * the limits of each kind of value.
 */
#define _GNU_SOURCE
#include "base/str.h"
#include "values.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/tuning.h"

#define THREADS_EXPECTED "expected 1 to 4096 or 'max'"
#define THREAD_LIST_EXPECTED                                                                       \
  "expected thread counts from 1 to 4096 or 'max', comma-separated, e.g. 1,2,max"
#define SHAPE_EXPECTED                                                                             \
  "expected 1 to 8 positive decimal integers, comma-separated, e.g. 256,256,256"
#define DURATION_EXPECTED                                                                          \
  "a decimal number of seconds with an optional unit s, m or h, e.g. 20, 20s, 1.5m, 1h; at most "  \
  "10000000 s"

static int is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* Trims blanks from [*b, *e). */
static void trim(const char **b, const char **e) {
  while (*b < *e && is_blank(**b))
    (*b)++;
  while (*e > *b && is_blank((*e)[-1]))
    (*e)--;
}

/* The whole value text as [*b, *e): -1 when it starts or ends with a
 * blank. A value has none around it (the config reader strips them from a
 * line's value; on the command line ' 0.5' is a mistake, refused like any
 * other malformed number); blanks are ignored only around a list's items. */
static int whole(const char *text, const char **b, const char **e) {
  *b = text ? text : "";
  *e = *b + strlen(*b);
  return *b < *e && (is_blank(**b) || is_blank((*e)[-1])) ? -1 : 0;
}

/* The span [b, e) as a quoted string for messages (at most 40 bytes). */
static const char *shown(const char *b, const char *e, char buf[48]) {
  size_t n = (size_t)(e - b);
  if (n > 40)
    n = 40;
  memcpy(buf, b, n);
  buf[n] = '\0';
  return buf;
}

/* Decimal digits spanning exactly [b, e) into *out; -1 when not all digits
 * or on overflow. */
static int digits(const char *b, const char *e, unsigned long long *out) {
  unsigned long long x = 0;
  if (b == e)
    return -1;
  for (; b < e; b++) {
    unsigned d;
    if (!is_digit(*b))
      return -1;
    d = (unsigned)(*b - '0');
    if (x > (~0ULL - d) / 10)
      return -1;
    x = x * 10 + d;
  }
  *out = x;
  return 0;
}

int config_value_bool(const char *text, int *out, char *why, size_t why_capacity) {
  static const char *yes[] = {"true", "yes", "on", "1"};
  static const char *no[] = {"false", "no", "off", "0"};
  const char *b, *e;
  char word[8];
  if (whole(text, &b, &e) == 0 && (size_t)(e - b) < sizeof word) {
    memcpy(word, b, (size_t)(e - b));
    word[e - b] = '\0';
    for (size_t i = 0; i < 4; i++) {
      if (!strcasecmp(word, yes[i])) {
        *out = 1;
        return 0;
      }
      if (!strcasecmp(word, no[i])) {
        *out = 0;
        return 0;
      }
    }
  }
  return base_str_fail(why, why_capacity, "expected true/false, yes/no, on/off or 1/0");
}

int config_value_uint(const char *text, unsigned long long min, unsigned long long max,
                      unsigned long long *out, char *why, size_t why_capacity) {
  const char *b, *e;
  unsigned long long x = 0;
  if (whole(text, &b, &e) != 0 || digits(b, e, &x) != 0 || x < min || x > max)
    return base_str_fail(why, why_capacity, "expected a decimal integer from %llu to %llu", min,
                         max);
  *out = x;
  return 0;
}

int config_value_repetitions(const char *text, uint32_t *out, char *why, size_t why_capacity) {
  unsigned long long x = 0;
  if (config_value_uint(text, 0, CALHOST_MAX_REPETITIONS, &x, NULL, 0) != 0)
    return base_str_fail(why, why_capacity,
                         "expected a decimal integer from 0 (the rigor's default) to %u",
                         CALHOST_MAX_REPETITIONS);
  *out = (uint32_t)x;
  return 0;
}

/* The end of the decimal number at b in [b, e): digits [. digits] | . digits
 * (b itself when there is none). */
static const char *scan_decimal(const char *b, const char *e) {
  const char *p = b;
  while (p < e && is_digit(*p))
    p++;
  if (p < e && *p == '.') {
    const char *frac = ++p;
    while (p < e && is_digit(*p))
      p++;
    if (p == frac && p - 1 == b)
      p = b; /* a lone '.' */
  }
  return p;
}

int config_value_fraction(const char *text, double max, double *out, char *why,
                          size_t why_capacity) {
  const char *b, *e, *num_end;
  char num[64];
  double x;
  int blank = whole(text, &b, &e) != 0;
  num_end = scan_decimal(b, e);
  int percent = num_end < e && *num_end == '%' && num_end + 1 == e;
  if (blank || num_end == b || (num_end != e && !percent) || (size_t)(num_end - b) >= sizeof num)
    return base_str_fail(why, why_capacity,
                         "expected a fraction such as 0.25 or a percentage such as 25%% (decimal "
                         "digits, no sign or exponent), 0 to %g (%g%%)",
                         max, max * 100.0);
  memcpy(num, b, (size_t)(num_end - b));
  num[num_end - b] = '\0';
  errno = 0;
  x = strtod(num, NULL); /* only digits and one '.': strtod reads it all */
  if (percent)
    x /= 100.0;
  if (errno || !(x <= max))
    return base_str_fail(why, why_capacity, "%.*s is %g%%: expected 0 to %g (%g%%)%s", (int)(e - b),
                         b, x * 100.0, max, max * 100.0,
                         percent ? "" : "; a bare number is a fraction (0.25 is 25%)");
  *out = x;
  return 0;
}

int config_value_duration(const char *text, int allow_zero, double *seconds, char *why,
                          size_t why_capacity) {
  const char *b, *e, *p, *num_end;
  char num[64];
  double x, mult = 1;
  int blank = whole(text, &b, &e) != 0;
  p = num_end = scan_decimal(b, e);
  if (blank || num_end == b || (size_t)(num_end - b) >= sizeof num)
    goto bad;
  while (p < e && is_blank(*p))
    p++;
  if (p < e) {
    switch (*p) {
    case 's':
    case 'S':
      break;
    case 'm':
    case 'M':
      mult = 60;
      break;
    case 'h':
    case 'H':
      mult = 3600;
      break;
    default:
      goto bad;
    }
    if (++p != e)
      goto bad;
  }
  memcpy(num, b, (size_t)(num_end - b));
  num[num_end - b] = '\0';
  errno = 0;
  x = strtod(num, NULL) * mult; /* only digits and one '.': strtod reads it all */
  if (errno || x > CALHOST_MAX_SECONDS)
    goto bad;
  if (x == 0 && !allow_zero)
    return base_str_fail(why, why_capacity, "expected a positive duration: %s", DURATION_EXPECTED);
  *seconds = x;
  return 0;
bad:
  return base_str_fail(why, why_capacity, "expected %s%s",
                       allow_zero ? "" : "a positive duration: ", DURATION_EXPECTED);
}

/* One thread count in [b, e) (already trimmed). */
static int thread_item(const char *b, const char *e, uint32_t *out) {
  unsigned long long x;
  if (e - b == 3 && !strncasecmp(b, "max", 3)) {
    *out = 0;
    return 0;
  }
  if (digits(b, e, &x) != 0 || x < 1 || x > CALHOST_MAX_THREADS)
    return -1;
  *out = (uint32_t)x;
  return 0;
}

int config_value_thread_count(const char *text, uint32_t *out, char *why, size_t why_capacity) {
  const char *b, *e;
  char buf[48];
  if (whole(text, &b, &e) != 0 || thread_item(b, e, out) != 0)
    return base_str_fail(why, why_capacity, "'%s' is not a thread count (" THREADS_EXPECTED ")",
                         shown(b, e, buf));
  return 0;
}

int config_value_threads(const char *text, uint32_t **out, size_t *count, char *why,
                         size_t why_capacity) {
  const char *s = text ? text : "", *end = s + strlen(s);
  uint32_t *list = NULL;
  size_t n = 0;
  char buf[48];
  if (whole(text, &s, &end) != 0)
    return base_str_fail(why, why_capacity, "blank before or after '%s' (%s)", shown(s, end, buf),
                         THREAD_LIST_EXPECTED);
  for (;;) {
    const char *comma = memchr(s, ',', (size_t)(end - s));
    const char *b = s, *e = comma ? comma : end;
    uint32_t t, *nl;
    trim(&b, &e);
    if (b == e) {
      free(list);
      if (!comma && n == 0)
        return base_str_fail(why, why_capacity, "empty list (%s)", THREAD_LIST_EXPECTED);
      return base_str_fail(why, why_capacity, "empty item in '%s' (%s)", shown(text, end, buf),
                           THREAD_LIST_EXPECTED);
    }
    if (thread_item(b, e, &t) != 0) {
      free(list);
      return base_str_fail(why, why_capacity, "'%s' is not a thread count (%s)", shown(b, e, buf),
                           THREAD_LIST_EXPECTED);
    }
    for (size_t i = 0; i < n; i++)
      if (list[i] == t) {
        free(list);
        return base_str_fail(why, why_capacity, "'%s' is listed twice", shown(b, e, buf));
      }
    nl = realloc(list, (n + 1) * sizeof *nl);
    if (!nl) {
      free(list);
      return base_str_fail(why, why_capacity, "out of memory");
    }
    list = nl;
    list[n++] = t;
    if (!comma)
      break;
    s = comma + 1;
  }
  *out = list;
  *count = n;
  return 0;
}

int config_value_shape(const char *text, int64_t dims[CALHOST_MAX_SHAPE_RANK], size_t *rank,
                       char *why, size_t why_capacity) {
  const char *s = text ? text : "", *end = s + strlen(s);
  int64_t tmp[CALHOST_MAX_SHAPE_RANK];
  size_t n = 0;
  char buf[48];
  if (whole(text, &s, &end) != 0)
    return base_str_fail(why, why_capacity, "blank before or after '%s' (%s)", shown(s, end, buf),
                         SHAPE_EXPECTED);
  for (;;) {
    const char *comma = memchr(s, ',', (size_t)(end - s));
    const char *b = s, *e = comma ? comma : end;
    unsigned long long x;
    trim(&b, &e);
    if (n == CALHOST_MAX_SHAPE_RANK)
      return base_str_fail(why, why_capacity, "more than %d dimensions (%s)",
                           CALHOST_MAX_SHAPE_RANK, SHAPE_EXPECTED);
    if (b == e)
      return base_str_fail(why, why_capacity, "empty dimension (%s)", SHAPE_EXPECTED);
    if (digits(b, e, &x) != 0 || x == 0 || x > INT64_MAX)
      return base_str_fail(why, why_capacity, "'%s' is not a dimension (%s)", shown(b, e, buf),
                           SHAPE_EXPECTED);
    tmp[n++] = (int64_t)x;
    if (!comma)
      break;
    s = comma + 1;
  }
  memcpy(dims, tmp, n * sizeof *tmp);
  *rank = n;
  return 0;
}

#define DEVICES_EXPECTED                                                                           \
  "expected 'all' or device indices or identities (as `calhost devices` prints them), "            \
  "comma-separated, e.g. 0,1"

void config_value_strings_free(char **v, size_t count) {
  for (size_t i = 0; v && i < count; i++)
    free(v[i]);
  free(v);
}

int config_value_device_index(const char *item, uint32_t *index) {
  unsigned long long x;
  if (!item || digits(item, item + strlen(item), &x) != 0 || x > CALHOST_MAX_DEVICE_INDEX)
    return 0;
  if (index)
    *index = (uint32_t)x;
  return 1;
}

int config_value_devices(const char *text, char ***out, size_t *count, int *all, char *why,
                         size_t why_capacity) {
  const char *s = text ? text : "", *end = s + strlen(s);
  char **list = NULL;
  size_t n = 0;
  char buf[48];
  if (whole(text, &s, &end) != 0)
    return base_str_fail(why, why_capacity, "blank before or after '%s' (%s)", shown(s, end, buf),
                         DEVICES_EXPECTED);
  {
    const char *b = s, *e = end;
    if (e - b == 3 && !strncasecmp(b, "all", 3)) {
      *out = NULL;
      *count = 0;
      *all = 1;
      return 0;
    }
  }
  for (;;) {
    const char *comma = memchr(s, ',', (size_t)(end - s));
    const char *b = s, *e = comma ? comma : end;
    char *item, **nl;
    trim(&b, &e);
    if (b == e) {
      config_value_strings_free(list, n);
      if (!comma && n == 0)
        return base_str_fail(why, why_capacity, "empty list (%s)", DEVICES_EXPECTED);
      return base_str_fail(why, why_capacity, "empty item in '%s' (%s)",
                           shown(text ? text : "", end, buf), DEVICES_EXPECTED);
    }
    if (base_str_control_at(b, (size_t)(e - b)) < (size_t)(e - b)) {
      config_value_strings_free(list, n);
      return base_str_fail(why, why_capacity, "control character in a device (%s)",
                           DEVICES_EXPECTED);
    }
    if (is_digit(*b)) {
      unsigned long long x;
      int numeric = 1;
      for (const char *q = b; q < e; q++)
        numeric &= is_digit(*q);
      if (numeric && (digits(b, e, &x) != 0 || x > CALHOST_MAX_DEVICE_INDEX)) {
        config_value_strings_free(list, n);
        return base_str_fail(why, why_capacity, "'%s' is not a device index (0 to %u)",
                             shown(b, e, buf), CALHOST_MAX_DEVICE_INDEX);
      }
    }
    item = strndup(b, (size_t)(e - b));
    nl = item ? realloc(list, (n + 1) * sizeof *nl) : NULL;
    if (!nl) {
      free(item);
      config_value_strings_free(list, n);
      return base_str_fail(why, why_capacity, "out of memory");
    }
    list = nl;
    if (base_str_listed(list, n, item)) {
      free(item);
      config_value_strings_free(list, n);
      return base_str_fail(why, why_capacity, "'%s' is listed twice", shown(b, e, buf));
    }
    list[n++] = item;
    if (!comma)
      break;
    s = comma + 1;
  }
  *out = list;
  *count = n;
  *all = 0;
  return 0;
}

int config_value_strategy(const char *text, int *out, char *why, size_t why_capacity) {
  const char *b, *e;
  char word[24], buf[48];
  base_strategy st;
  if (whole(text, &b, &e) == 0 && (size_t)(e - b) < sizeof word) {
    memcpy(word, b, (size_t)(e - b));
    word[e - b] = '\0';
    if (base_strategy_parse(word, &st) == 0) {
      *out = (int)st;
      return 0;
    }
  }
  return base_str_fail(
      why, why_capacity,
      "'%s' is not a search strategy (expected default, exhaustive, random, local, "
      "annealing, genetic, model or bayes)",
      shown(b, e, buf));
}

int config_value_search_budget(const char *text, uint32_t *evaluations, double *seconds, char *why,
                               size_t why_capacity) {
  const char *b, *e;
  unsigned long long n;
  char buf[48];
  if (whole(text, &b, &e) != 0)
    goto bad;
  if (digits(b, e, &n) == 0) {
    if (n > CALHOST_MAX_EVALUATIONS)
      goto bad;
    *evaluations = (uint32_t)n;
    *seconds = 0;
    return 0;
  }
  if (b < e && strchr("sSmMhH", e[-1]) && e - 1 > b) {
    double t;
    if (config_value_duration(text, 0, &t, NULL, 0) == 0) {
      *evaluations = 0;
      *seconds = t;
      return 0;
    }
  }
bad:
  return base_str_fail(
      why, why_capacity,
      "'%s' is not a search budget (expected a number of evaluations from 0 to %u, or a "
      "positive duration with its unit s, m or h, e.g. 200, 30s, 1.5m)",
      shown(b, e, buf), CALHOST_MAX_EVALUATIONS);
}
