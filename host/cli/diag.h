/*
 * diag.h: the diagnostics calstore_read_file reports while reading a store
 * file, collected for `check` and `import`, printed as "PATH:LINE: message"
 * lines (line 0, a file-level problem, prints "PATH: message") or as a JSON
 * array.
 */
#ifndef CALHOST_CLI_DIAG_H
#define CALHOST_CLI_DIAG_H

#include <stdio.h>

#include "calhost/calstore.h"

typedef struct diag_list {
  struct {
    calstore_status status;
    unsigned line;
    char *message;
  } * items;
  size_t n, cap;
} diag_list;

/* A calstore diagnostic callback (user: diag_list) that appends a copy. */
void diag_collect(void *user, calstore_status status, unsigned line, const char *msg);

/* Frees the copies; the list is empty after. */
void diag_free(diag_list *d);

/* "PATH[:LINE]: message" per diagnostic on out, escaped. */
void diag_print(FILE *out, const char *path, const diag_list *d);

/* [{"line", "status", "message"}...] on out. */
void diag_print_json(FILE *out, const diag_list *d);

#endif /* CALHOST_CLI_DIAG_H */
