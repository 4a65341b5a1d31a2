/*
 * str.c: owned copies, owned formatted strings, failure messages in a
 * caller's buffer, and the character rules of accepted text (see str.h).
 */
#include "str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *base_str_dup(const char *s) {
  if (!s)
    return NULL;
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (copy)
    memcpy(copy, s, n);
  return copy;
}

char *base_str_vformat(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, again);
  va_end(again);
  if (n < 0)
    return NULL;
  char *s = malloc((size_t)n + 1);
  if (s)
    vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

char *base_str_format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = base_str_vformat(fmt, ap);
  va_end(ap);
  return s;
}

int base_str_vfail(char *err, size_t cap, const char *fmt, va_list ap) {
  if (err && cap)
    vsnprintf(err, cap, fmt, ap);
  return -1;
}

int base_str_fail(char *err, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  base_str_vfail(err, cap, fmt, ap);
  va_end(ap);
  return -1;
}

int base_str_listed(char *const *list, size_t n, const char *s) {
  for (size_t i = 0; s && i < n; i++)
    if (!strcmp(list[i], s))
      return 1;
  return 0;
}

int base_str_allowed(char *const *allow, size_t allow_count, char *const *deny, size_t deny_count,
                     const char *s) {
  return (allow_count == 0 || base_str_listed(allow, allow_count, s)) &&
         !base_str_listed(deny, deny_count, s);
}

size_t base_str_control_at(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
      return i;
  return n;
}

int base_str_one_line(const char *s) {
  if (!s)
    return 0;
  size_t n = strlen(s);
  return base_str_control_at(s, n) == n;
}

int base_str_is_word(const char *s) {
  if (!s || !*s)
    return 0;
  for (; *s; s++)
    if ((unsigned char)*s <= ' ' || (unsigned char)*s == 0x7f)
      return 0;
  return 1;
}

uint64_t base_str_fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

int base_str_is_name(const char *s, size_t max) {
  if (!s || !*s)
    return 0;
  for (size_t n = 0; s[n]; n++)
    if ((max && n >= max) ||
        !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
          (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '.' || s[n] == '-'))
      return 0;
  return 1;
}
