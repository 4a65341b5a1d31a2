/*
 * internal.h: helpers shared by the processor part's files (cpulist.c owns
 * them; processor.c uses them). Not for other parts.
 */
#ifndef CALHOST_PROCESSOR_INTERNAL_H
#define CALHOST_PROCESSOR_INTERNAL_H

#include <stddef.h>

/* Appends the printf-formatted text to buf at *len (buf may be NULL or
 * full), advancing *len by the text's whole length as snprintf counts it:
 * the caller learns the length it needed. */
void processor_append(char *buf, size_t capacity, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* CALHOST_PROCESSOR_INTERNAL_H */
