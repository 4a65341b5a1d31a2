/*
 * policy.c: whether two policy texts are the same policy (see policy.h).
 */
#include "policy.h"

#include <string.h>

char base_policy_separator(const char *policy, size_t length) {
  if (!policy || memchr(policy, ';', length) || !memchr(policy, ',', length))
    return ';';
  for (size_t at = 0;;) {
    const char *part = policy + at;
    const char *comma = memchr(part, ',', length - at);
    size_t len = comma ? (size_t)(comma - part) : length - at;
    if (!memchr(part, '=', len))
      return ';';
    if (!comma)
      return ',';
    at += len + 1;
  }
}

int base_policy_same_n(const char *a, size_t an, const char *b, size_t bn) {
  if (!a || !b || an != bn)
    return 0;
  char sa = base_policy_separator(a, an), sb = base_policy_separator(b, bn);
  for (size_t i = 0; i < an; i++) {
    char ca = a[i] == sa ? ';' : a[i], cb = b[i] == sb ? ';' : b[i];
    if (ca != cb)
      return 0;
  }
  return 1;
}

int base_policy_same(const char *a, const char *b) {
  return a && b && base_policy_same_n(a, strlen(a), b, strlen(b));
}
