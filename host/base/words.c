/*
 * words.c: the word of an enum value from its table (see words.h).
 */
#include "words.h"

const char *base_word(const char *const *words, size_t n, unsigned v, const char *fallback) {
  return v < n && words[v] ? words[v] : fallback;
}
