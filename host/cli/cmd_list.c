/*
 * cmd_list.c: `calhost list [--backend B]`: every stored profile, one line
 * of text each (control characters escaped) or a JSON array of profile
 * objects (store_json.h); `list --by-processor`: which node types
 * (processor identities of exact keys) a store covers, with counts (fleet
 * calibration, config/fleet/README.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/json.h"
#include "base/text.h"
#include "commands.h"
#include "store_json.h"

static const cli_flag list_flags[] = {
    {FL_BACKEND, "--backend", NULL, "NAME", "only this backend's profiles"},
    {FL_BY_PROCESSOR, "--by-processor", NULL, NULL,
     "per processor identity (node type): counts, backends, thread counts"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

typedef struct list_ctx {
  const char *backend;
  int json;
  size_t printed;
} list_ctx;

static int list_visit(void *user, const calstore_profile *p) {
  list_ctx *c = user;
  if (c->backend && strcmp(c->backend, p->key.backend))
    return 0;
  if (c->json) {
    fputs(c->printed ? ",\n" : "\n", stdout);
    cli_json_profile(stdout, p);
  } else {
    cli_text_profile(stdout, p);
  }
  c->printed++;
  return 0;
}

/* list --by-processor: which node types (processor identities of exact
 * keys) a store covers, with counts; portable profiles hold no processor. */
typedef struct proc_group {
  char *processor;
  size_t calibrated, overrides;
  char **backends;
  size_t backend_count, backend_cap;
  uint32_t *threads;
  size_t thread_count, thread_cap;
} proc_group;

typedef struct by_proc_ctx {
  const char *backend;
  proc_group *groups;
  size_t count, cap;
  size_t portable_calibrated, portable_overrides;
  int failed;
} by_proc_ctx;

static int by_proc_visit(void *user, const calstore_profile *p) {
  by_proc_ctx *c = user;
  const calstore_key *k = &p->key;
  int calibrated = p->source == CALSTORE_SOURCE_CALIBRATED;
  if (c->backend && strcmp(c->backend, k->backend))
    return 0;
  if (k->kind != CALSTORE_KEY_EXACT) {
    calibrated ? c->portable_calibrated++ : c->portable_overrides++;
    return 0;
  }
  proc_group *g = NULL;
  for (size_t i = 0; i < c->count && !g; i++)
    if (!strcmp(c->groups[i].processor, k->processor))
      g = &c->groups[i];
  if (!g) {
    proc_group *n = base_array_grow(c->groups, c->count, &c->cap, sizeof *n, 4);
    if (!n)
      goto oom;
    c->groups = n;
    g = &n[c->count];
    memset(g, 0, sizeof *g);
    if (!(g->processor = strdup(k->processor)))
      goto oom;
    c->count++;
  }
  calibrated ? g->calibrated++ : g->overrides++;
  size_t i = 0;
  while (i < g->backend_count && strcmp(g->backends[i], k->backend))
    i++;
  if (i == g->backend_count) {
    char **n = base_array_grow(g->backends, i, &g->backend_cap, sizeof *n, 4);
    if (!n)
      goto oom;
    g->backends = n;
    if (!(n[i] = strdup(k->backend)))
      goto oom;
    g->backend_count++;
  }
  i = 0;
  while (i < g->thread_count && g->threads[i] != k->thread_count)
    i++;
  if (i == g->thread_count) {
    uint32_t *n = base_array_grow(g->threads, i, &g->thread_cap, sizeof *n, 4);
    if (!n)
      goto oom;
    g->threads = n;
    for (; i > 0 && n[i - 1] > k->thread_count; i--) /* kept ascending */
      n[i] = n[i - 1];
    n[i] = k->thread_count;
    g->thread_count++;
  }
  return 0;
oom:
  c->failed = 1;
  return 1;
}

/* Writes a group's backends through put (a JSON string or terminal text),
 * comma-separated, the first preceded by lead. */
static void print_backends(const proc_group *g, const char *lead,
                           void (*put)(FILE *, const char *)) {
  for (size_t j = 0; j < g->backend_count; j++) {
    fputs(j ? "," : lead, stdout);
    put(stdout, g->backends[j]);
  }
}

/* Writes a group's thread counts, comma-separated, the first preceded by
 * lead. */
static void print_threads(const proc_group *g, const char *lead) {
  for (size_t j = 0; j < g->thread_count; j++) {
    fputs(j ? "," : lead, stdout);
    base_json_uint(stdout, g->threads[j]); /* a plain decimal: text too */
  }
}

static void print_by_processor(const by_proc_ctx *c, int json) {
  if (json) {
    FILE *o = stdout;
    fputc('{', o);
    base_json_key(o, 1, "processors");
    fputc('[', o);
    for (size_t i = 0; i < c->count; i++) {
      const proc_group *g = &c->groups[i];
      fputs(i ? ",\n{" : "\n{", o);
      base_json_member_string(o, 1, "processor", g->processor);
      base_json_member_uint(o, 0, "exact_calibrated", g->calibrated);
      base_json_member_uint(o, 0, "exact_overrides", g->overrides);
      base_json_key(o, 0, "backends");
      fputc('[', o);
      print_backends(g, "", base_json_string);
      fputc(']', o);
      base_json_key(o, 0, "thread_counts");
      fputc('[', o);
      print_threads(g, "");
      fputs("]}", o);
    }
    fputs(c->count ? "\n]" : "]", o);
    base_json_member_uint(o, 0, "portable_calibrated", c->portable_calibrated);
    base_json_member_uint(o, 0, "portable_overrides", c->portable_overrides);
    fputs("}\n", o);
    return;
  }
  for (size_t i = 0; i < c->count; i++) {
    const proc_group *g = &c->groups[i];
    printf("processor ");
    base_json_string(stdout, g->processor);
    printf("\n  %zu exact calibrated, %zu exact overrides; backends", g->calibrated, g->overrides);
    print_backends(g, " ", base_text_put);
    printf("; thread counts");
    print_threads(g, " ");
    printf("\n");
  }
  printf("%zu processor type%s; portable (any processor): %zu calibrated, %zu overrides\n",
         c->count, c->count == 1 ? "" : "s", c->portable_calibrated, c->portable_overrides);
}

static int list_by_processor(calstore *s, const char *backend, int json) {
  by_proc_ctx c = {0};
  c.backend = backend;
  calstore_inspect(s, by_proc_visit, &c);
  if (c.failed)
    cli_error("list: out of memory");
  else
    print_by_processor(&c, json);
  for (size_t i = 0; i < c.count; i++) {
    for (size_t j = 0; j < c.groups[i].backend_count; j++)
      free(c.groups[i].backends[j]);
    free(c.groups[i].backends);
    free(c.groups[i].threads);
    free(c.groups[i].processor);
  }
  free(c.groups);
  return c.failed ? 2 : 0;
}

static int run_list(cli_context *cli, cli_args *a) {
  calstore *s = NULL;
  if (cli_open_store(cli, &s) != CALSTORE_OK)
    return 2;
  if (cli_has(a, FL_BY_PROCESSOR)) {
    int rc = list_by_processor(s, a->value[FL_BACKEND], cli->json);
    calstore_close(&s);
    return rc;
  }
  list_ctx c = {a->value[FL_BACKEND], cli->json, 0};
  if (c.json)
    fputs("[", stdout);
  calstore_inspect(s, list_visit, &c);
  if (c.json)
    fputs(c.printed ? "\n]\n" : "]\n", stdout);
  calstore_close(&s);
  return 0;
}

const cli_command cli_cmd_list = {
    "list",   "[--backend B] [--by-processor]", "list stored profiles", NULL, list_flags, 0, 0,
    run_list,
};
