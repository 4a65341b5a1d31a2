/*
 * diag.c: store-file diagnostics collected and printed (see diag.h).
 */
#include "diag.h"

#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/json.h"
#include "base/text.h"

void diag_collect(void *user, calstore_status status, unsigned line, const char *msg) {
  diag_list *d = user;
  void *ni = base_array_grow(d->items, d->n, &d->cap, sizeof *d->items, 8);
  if (!ni)
    return;
  d->items = ni;
  d->items[d->n].status = status;
  d->items[d->n].line = line;
  d->items[d->n].message = strdup(msg ? msg : "");
  d->n++;
}

void diag_free(diag_list *d) {
  for (size_t i = 0; i < d->n; i++)
    free(d->items[i].message);
  free(d->items);
  memset(d, 0, sizeof *d);
}

void diag_print(FILE *out, const char *path, const diag_list *d) {
  for (size_t i = 0; i < d->n; i++)
    base_text_diag(out, NULL, path, d->items[i].line, "%s",
                   d->items[i].message ? d->items[i].message : "");
}

void diag_print_json(FILE *out, const diag_list *d) {
  fputc('[', out);
  for (size_t i = 0; i < d->n; i++) {
    fprintf(out, "%s{\"line\":%u,\"status\":", i ? "," : "", d->items[i].line);
    base_json_string(out, calstore_status_name(d->items[i].status));
    fputs(",\"message\":", out);
    base_json_string(out, d->items[i].message);
    fputc('}', out);
  }
  fputc(']', out);
}
