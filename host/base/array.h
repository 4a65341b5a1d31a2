/*
 * array.h: the host's growth rule for a dynamic array that keeps a
 * capacity (a pointer, a count and a capacity kept by the caller): doubling,
 * used wherever the host grows such an array one element at a time. Not
 * every array of the host keeps a capacity: short lists read once (the
 * configuration's string lists, dims and properties, the race's groups and
 * lines, the runtime's serving plugins) grow by one element per realloc; the
 * search's surrogate (host/search/surrogate.c) grows its parallel training
 * arrays together to twice the evaluations; the child protocol's byte
 * buffers (isolate/proto.c) double on their own. Part of the base layer:
 * depends on nothing but libc. libcalstore, which links no host part, keeps
 * its own copy of the rule in host/store (a separate library).
 */
#ifndef CALHOST_BASE_ARRAY_H
#define CALHOST_BASE_ARRAY_H

#include <stddef.h>

/* Makes room for one more element in the array items (count used, *cap
 * allocated, each element size bytes): when count < *cap returns items
 * unchanged; otherwise reallocates to twice *cap (first when *cap is 0),
 * updates *cap and returns the new pointer, which the caller stores in place
 * of items. Returns NULL when out of memory or on size overflow; items and
 * *cap are then unchanged and still owned by the caller. */
void *base_array_grow(void *items, size_t count, size_t *cap, size_t size, size_t first);

#endif
