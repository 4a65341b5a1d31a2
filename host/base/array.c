/*
 * array.c: growing a dynamic array (see array.h).
 */
#include "array.h"

#include <stdint.h>
#include <stdlib.h>

void *base_array_grow(void *items, size_t count, size_t *cap, size_t size, size_t first) {
  if (count < *cap)
    return items;
  size_t ncap = *cap ? *cap * 2 : (first ? first : 1);
  if (ncap < *cap || size == 0 || ncap > SIZE_MAX / size)
    return NULL;
  void *grown = realloc(items, ncap * size);
  if (grown)
    *cap = ncap;
  return grown;
}
