/*
 * key.c: a plugin's built key copied and compared (see key.h).
 */
#include "key.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "str.h"

void base_key_free(base_key *k) {
  if (!k)
    return;
  free(k->model_digest);
  free(k->processor);
  for (size_t i = 0; k->structure && i < k->structure_count; i++) {
    free((char *)k->structure[i].name);
    free((char *)k->structure[i].value);
  }
  free(k->structure);
  memset(k, 0, sizeof *k);
}

int base_key_copy(const calhost_built_key *k, base_key *out) {
  memset(out, 0, sizeof *out);
  out->model_digest = base_str_dup(k->model_digest);
  out->processor = base_str_dup(k->processor);
  out->thread_count = k->thread_count;
  out->structure = calloc(k->structure_count ? k->structure_count : 1, sizeof *out->structure);
  if (!out->model_digest || !out->processor || !out->structure)
    goto bad;
  for (size_t i = 0; i < k->structure_count; i++) {
    out->structure[i].name = base_str_dup(k->structure[i].name);
    out->structure[i].value = base_str_dup(k->structure[i].value);
    out->structure_count = i + 1;
    if (!out->structure[i].name || !out->structure[i].value)
      goto bad;
  }
  return 0;
bad:
  base_key_free(out);
  return -1;
}

/* Whether x and y differ; then "WHAT 'x', then 'y'" (from a little before
 * the first difference) in why. */
static int text_differs(const char *what, const char *x, const char *y, char *why, size_t cap) {
  y = y ? y : "";
  if (!strcmp(x, y))
    return 0;
  size_t i = 0; /* show both from a little before the first difference */
  while (x[i] && x[i] == y[i])
    i++;
  size_t from = i > 24 ? i - 24 : 0;
  snprintf(why, cap, "%s '%s%.180s', then '%s%.180s'", what, from ? "..." : "", x + from,
           from ? "..." : "", y + from);
  return 1;
}

int base_key_differs(const base_key *a, const calhost_built_key *b, char *why, size_t cap) {
  if (text_differs("model_digest", a->model_digest, b->model_digest, why, cap) ||
      text_differs("processor", a->processor, b->processor, why, cap))
    return 1;
  if (a->thread_count != b->thread_count)
    return snprintf(why, cap, "thread_count %u, then %u", a->thread_count, b->thread_count), 1;
  if (a->structure_count != b->structure_count)
    return snprintf(why, cap, "%zu structure properties, then %zu", a->structure_count,
                    b->structure_count),
           1;
  for (size_t i = 0; i < a->structure_count; i++) {
    const calhost_property *p = NULL;
    for (size_t j = 0; j < b->structure_count && !p; j++)
      if (b->structure[j].name && !strcmp(b->structure[j].name, a->structure[i].name))
        p = &b->structure[j];
    if (!p || strcmp(a->structure[i].value, p->value ? p->value : ""))
      return snprintf(why, cap, "structure %.100s='%.150s', then %s'%.150s'", a->structure[i].name,
                      a->structure[i].value, p ? "" : "no such property ",
                      p && p->value ? p->value : ""),
             1;
  }
  return 0;
}
