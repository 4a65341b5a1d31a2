/*
 * cmd_store.c: the store commands of calhost: check, list, export, import,
 * lookup, override set|clear, invalidate (see README.md and commands.h).
 *
 * Each command parses its own flags (`--flag VALUE` or `--flag=VALUE`;
 * `--json` is accepted after the command too); an unknown flag, a missing
 * value or a bad number is a usage error naming the flag (exit 2). `lookup`
 * and `override` with `--workload` are handed to cmd_calibrate_lookup.c.
 * Exit status: 0 success, 1 "no" (check failed, nothing selected, no such
 * override), 2 usage or operational error.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config/values.h"
#include "json.h"

#define MAX_STRUCTURE 64

/* The flags shared by the store commands. */
typedef struct store_args {
  const char *backend, *operator_name, *implementation, *model_digest, *processor, *policy;
  uint32_t threads;
  int have_threads;
  calstore_property structure[MAX_STRUCTURE];
  size_t structure_count;
  int force_portable, portable, json, workload;
  const char *positional[256];
  size_t npositional;
} store_args;

enum {
  F_BACKEND = 1 << 0,
  F_OPERATOR = 1 << 1,
  F_IMPL = 1 << 2,
  F_DIGEST = 1 << 3,
  F_PROC = 1 << 4,
  F_THREADS = 1 << 5,
  F_STRUCT = 1 << 6,
  F_FORCE = 1 << 7,
  F_PORTABLE = 1 << 8,
  F_POLICY = 1 << 9,
  F_WORKLOAD = 1 << 10,
  F_KEY = F_BACKEND | F_OPERATOR | F_IMPL | F_DIGEST | F_PROC | F_THREADS | F_STRUCT,
};

static const struct flag {
  const char *name;
  int bit;
  int takes_value;
} flags[] = {
    {"--backend", F_BACKEND, 1},     {"--operator", F_OPERATOR, 1},
    {"--implementation", F_IMPL, 1}, {"--model-digest", F_DIGEST, 1},
    {"--processor", F_PROC, 1},      {"--threads", F_THREADS, 1},
    {"--structure", F_STRUCT, 1},    {"--force-portable", F_FORCE, 0},
    {"--portable", F_PORTABLE, 0},   {"--policy", F_POLICY, 1},
    {"--workload", F_WORKLOAD, 1},
};

/* Parses argv[1..] for the flags in `allowed` plus --json; up to
 * max_positional plain arguments. Returns 0 or a usage error's exit code. */
static int parse_args(calhost_cli *cli, int argc, char **argv, int allowed, size_t max_positional,
                      store_args *a) {
  memset(a, 0, sizeof *a);
  a->json = cli->json;
  const char *cmd = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--json")) {
      a->json = 1;
      continue;
    }
    if (!strcmp(arg, "--")) {
      for (i++; i < argc; i++) {
        if (a->npositional >= max_positional)
          return calhost_cli_usage_error(cli, "%s: unexpected argument '%s'", cmd, argv[i]);
        a->positional[a->npositional++] = argv[i];
      }
      break;
    }
    if (arg[0] != '-' || arg[1] == '\0') {
      if (a->npositional >= max_positional)
        return calhost_cli_usage_error(cli, "%s: unexpected argument '%s'", cmd, arg);
      a->positional[a->npositional++] = arg;
      continue;
    }
    const struct flag *f = NULL;
    const char *value = NULL;
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++) {
      size_t n = strlen(flags[k].name);
      if (!strncmp(arg, flags[k].name, n) && (arg[n] == '\0' || arg[n] == '=')) {
        f = &flags[k];
        if (arg[n] == '=')
          value = arg + n + 1;
        break;
      }
    }
    if (!f || !(f->bit & allowed))
      return calhost_cli_usage_error(cli, "%s: unknown option '%s'", cmd, arg);
    if (f->takes_value && !value) {
      if (i + 1 >= argc)
        return calhost_cli_usage_error(cli, "%s: %s needs a value", cmd, f->name);
      value = argv[++i];
    } else if (!f->takes_value && value) {
      return calhost_cli_usage_error(cli, "%s: %s takes no value", cmd, f->name);
    }
    switch (f->bit) {
    case F_BACKEND:
      a->backend = value;
      break;
    case F_OPERATOR:
      a->operator_name = value;
      break;
    case F_IMPL:
      a->implementation = value;
      break;
    case F_DIGEST:
      a->model_digest = value;
      break;
    case F_PROC:
      a->processor = value;
      break;
    case F_POLICY:
      a->policy = value;
      break;
    case F_WORKLOAD:
      a->workload = 1;
      break;
    case F_FORCE:
      a->force_portable = 1;
      break;
    case F_PORTABLE:
      a->portable = 1;
      break;
    case F_THREADS: {
      /* a key's thread count: any the store format holds (config/values.h) */
      unsigned long long v;
      char why[200];
      if (calhost_value_uint(value, 1, UINT32_MAX, &v, why, sizeof why) != 0)
        return calhost_cli_usage_error(cli, "%s: --threads: '%s': %s", cmd, value, why);
      a->threads = (uint32_t)v;
      a->have_threads = 1;
      break;
    }
    case F_STRUCT: {
      const char *eq = strchr(value, '=');
      if (!eq || eq == value)
        return calhost_cli_usage_error(cli, "%s: --structure: '%s' is not NAME=VALUE", cmd, value);
      if (a->structure_count >= MAX_STRUCTURE)
        return calhost_cli_usage_error(cli, "%s: --structure: more than %d properties", cmd,
                                       MAX_STRUCTURE);
      /* split in place: argv strings are writable */
      *(char *)eq = '\0';
      a->structure[a->structure_count].name = value;
      a->structure[a->structure_count].value = eq + 1;
      a->structure_count++;
      break;
    }
    }
  }
  return 0;
}

/* Nonzero when argv mentions --workload (the workload forms). */
static int has_workload(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--workload") || !strncmp(argv[i], "--workload=", 11))
      return 1;
  return 0;
}

/* Opens the store; prints the error and returns NULL on failure. */
static calstore *open_store(calhost_cli *cli) {
  calstore *s = NULL;
  calstore_status st = calhost_cli_open_store(cli, &s);
  if (st != CALSTORE_OK) {
    calstore_close(&s);
    return NULL;
  }
  return s;
}

static void print_profile_text(FILE *out, const calstore_profile *p) {
  const calstore_key *k = &p->key;
  fprintf(out, "%s %s backend=", k->kind == CALSTORE_KEY_EXACT ? "exact" : "portable",
          p->source == CALSTORE_SOURCE_OVERRIDE ? "override" : "calibrated");
  calhost_json_string(out, k->backend);
  fputs(" operator=", out);
  calhost_json_string(out, k->operator_name);
  fputs(" implementation=", out);
  calhost_json_string(out, k->implementation);
  if (k->kind == CALSTORE_KEY_EXACT) {
    fputs(" model_digest=", out);
    calhost_json_string(out, k->model_digest);
    fputs(" processor=", out);
    calhost_json_string(out, k->processor);
    fprintf(out, " thread_count=%u", (unsigned)k->thread_count);
  }
  for (size_t i = 0; i < k->structure_count; i++) {
    fputs(" structure:", out);
    fputs(k->structure[i].name, out);
    fputc('=', out);
    calhost_json_string(out, k->structure[i].value);
  }
  for (size_t i = 0; i < p->measurement_count; i++)
    fprintf(out, " %s=%.17g%s%s", p->measurements[i].name, p->measurements[i].value,
            p->measurements[i].unit[0] ? " " : "", p->measurements[i].unit);
  fputs(" policy=", out);
  calhost_json_string(out, p->policy);
  fputc('\n', out);
}

/* ---- check ------------------------------------------------------------------ */

typedef struct diag_list {
  struct {
    calstore_status status;
    unsigned line;
    char *message;
  } * items;
  size_t n, cap;
} diag_list;

static void collect_diag(void *user, calstore_status status, unsigned line, const char *msg) {
  diag_list *d = user;
  if (d->n == d->cap) {
    size_t ncap = d->cap ? d->cap * 2 : 8;
    void *ni = realloc(d->items, ncap * sizeof *d->items);
    if (!ni)
      return;
    d->items = ni;
    d->cap = ncap;
  }
  d->items[d->n].status = status;
  d->items[d->n].line = line;
  d->items[d->n].message = strdup(msg ? msg : "");
  d->n++;
}

static void free_diags(diag_list *d) {
  for (size_t i = 0; i < d->n; i++)
    free(d->items[i].message);
  free(d->items);
  memset(d, 0, sizeof *d);
}

static void print_diags_json(FILE *out, const diag_list *d) {
  fputc('[', out);
  for (size_t i = 0; i < d->n; i++) {
    fprintf(out, "%s{\"line\":%u,\"status\":", i ? "," : "", d->items[i].line);
    calhost_json_string(out, calstore_status_name(d->items[i].status));
    fputs(",\"message\":", out);
    calhost_json_string(out, d->items[i].message);
    fputc('}', out);
  }
  fputc(']', out);
}

/* The path the commands work on: --store, else the configured/default one. */
static int resolve_path(calhost_cli *cli, char **path) {
  if (cli->store_path) {
    *path = strdup(cli->store_path);
    return *path ? 0 : -1;
  }
  calstore *s = NULL;
  calhost_cli_open_store(cli, &s); /* prints load problems; we only need the path */
  if (!s)
    return -1;
  *path = strdup(calstore_path(s));
  calstore_close(&s);
  return *path ? 0 : -1;
}

int calhost_cmd_check(calhost_cli *cli, int argc, char **argv) {
  store_args a;
  int rc = parse_args(cli, argc, argv, 0, 0, &a);
  if (rc)
    return rc;
  char *path = NULL;
  if (resolve_path(cli, &path) != 0) {
    fprintf(stderr, "calhost: check: no store path\n");
    return 2;
  }
  diag_list d = {0};
  size_t count = 0;
  calstore_status st = calstore_read_file(path, NULL, NULL, collect_diag, &d, &count);
  if (a.json) {
    printf("{\"status\":");
    calhost_json_string(stdout, calstore_status_name(st));
    printf(",\"path\":");
    calhost_json_string(stdout, path);
    printf(",\"profiles\":%zu,\"diagnostics\":", count);
    print_diags_json(stdout, &d);
    printf("}\n");
  } else {
    printf("%s\n", calstore_status_name(st));
    for (size_t i = 0; i < d.n; i++) {
      if (d.items[i].line)
        printf("%s:%u: %s\n", path, d.items[i].line, d.items[i].message);
      else
        printf("%s: %s\n", path, d.items[i].message);
    }
    if (st == CALSTORE_OK && !cli->quiet)
      printf("%zu profiles\n", count);
  }
  free_diags(&d);
  free(path);
  return st == CALSTORE_OK ? 0 : 1;
}

/* ---- list -------------------------------------------------------------------- */

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
    calhost_json_profile(stdout, p);
  } else {
    print_profile_text(stdout, p);
  }
  c->printed++;
  return 0;
}

int calhost_cmd_list(calhost_cli *cli, int argc, char **argv) {
  store_args a;
  int rc = parse_args(cli, argc, argv, F_BACKEND, 0, &a);
  if (rc)
    return rc;
  calstore *s = open_store(cli);
  if (!s)
    return 2;
  list_ctx c = {a.backend, a.json, 0};
  if (a.json)
    fputs("[", stdout);
  calstore_inspect(s, list_visit, &c);
  if (a.json)
    fputs(c.printed ? "\n]\n" : "]\n", stdout);
  calstore_close(&s);
  return 0;
}

/* ---- export / import ------------------------------------------------------------ */

int calhost_cmd_export(calhost_cli *cli, int argc, char **argv) {
  store_args a;
  int rc = parse_args(cli, argc, argv, 0, 1, &a);
  if (rc)
    return rc;
  if (a.npositional != 1)
    return calhost_cli_usage_error(cli, "export: needs the output file: export OUT");
  calstore *s = open_store(cli);
  if (!s)
    return 2;
  calstore_error err = {0};
  calstore_status st = calstore_export(s, a.positional[0], &err);
  size_t n = calstore_count(s);
  calstore_close(&s);
  if (st != CALSTORE_OK) {
    fprintf(stderr, "calhost: export: %s: %s\n", calstore_status_name(st), err.message);
    return 2;
  }
  if (a.json)
    printf("{\"status\":\"ok\",\"profiles\":%zu}\n", n);
  else if (!cli->quiet)
    printf("exported %zu profiles to %s\n", n, a.positional[0]);
  return 0;
}

typedef struct import_ctx {
  calstore_batch *batch;
  calstore_status st;
  calstore_error err;
  size_t count;
} import_ctx;

static int import_visit(void *user, const calstore_profile *p) {
  import_ctx *c = user;
  c->st = calstore_batch_put(c->batch, p, &c->err);
  if (c->st != CALSTORE_OK)
    return 1;
  c->count++;
  return 0;
}

int calhost_cmd_import(calhost_cli *cli, int argc, char **argv) {
  store_args a;
  int rc = parse_args(cli, argc, argv, 0, 256, &a);
  if (rc)
    return rc;
  if (!a.npositional)
    return calhost_cli_usage_error(cli, "import: needs at least one file: import FILE...");
  calstore *s = open_store(cli);
  if (!s)
    return 2;
  import_ctx c = {0};
  calstore_error err = {0};
  calstore_status st = calstore_batch_begin(s, &c.batch, &err);
  for (size_t i = 0; i < a.npositional && st == CALSTORE_OK; i++) {
    diag_list d = {0};
    c.st = CALSTORE_OK;
    st = calstore_read_file(a.positional[i], import_visit, &c, collect_diag, &d, NULL);
    if (st != CALSTORE_OK) {
      fprintf(stderr, "calhost: import: %s is %s; nothing was imported\n", a.positional[i],
              calstore_status_name(st));
      for (size_t j = 0; j < d.n; j++)
        fprintf(stderr, "%s:%u: %s\n", a.positional[i], d.items[j].line, d.items[j].message);
    } else if (c.st != CALSTORE_OK) {
      st = c.st;
      fprintf(stderr, "calhost: import: %s: %s; nothing was imported\n", a.positional[i],
              c.err.message);
    }
    free_diags(&d);
  }
  if (st == CALSTORE_OK) {
    st = calstore_batch_commit(&c.batch, &err);
    if (st != CALSTORE_OK)
      fprintf(stderr, "calhost: import: %s: %s\n", calstore_status_name(st), err.message);
  }
  calstore_batch_abort(&c.batch);
  calstore_close(&s);
  if (st != CALSTORE_OK)
    return 2;
  if (a.json)
    printf("{\"status\":\"ok\",\"profiles\":%zu,\"files\":%zu}\n", c.count, a.npositional);
  else if (!cli->quiet)
    printf("imported %zu profiles from %zu file%s\n", c.count, a.npositional,
           a.npositional == 1 ? "" : "s");
  return 0;
}

/* ---- lookup ------------------------------------------------------------------------ */

static int need(calhost_cli *cli, const char *cmd, const char *value, const char *flag) {
  if (!value)
    return calhost_cli_usage_error(cli, "%s: %s is required", cmd, flag);
  return 0;
}

int calhost_cmd_lookup(calhost_cli *cli, int argc, char **argv) {
  if (has_workload(argc, argv))
    return calhost_cmd_lookup_workload(cli, argc, argv);
  store_args a;
  int rc = parse_args(cli, argc, argv, F_KEY | F_FORCE, 0, &a);
  if (rc)
    return rc;
  if ((rc = need(cli, "lookup", a.backend, "--backend")) ||
      (rc = need(cli, "lookup", a.operator_name, "--operator")) ||
      (rc = need(cli, "lookup", a.implementation, "--implementation")))
    return rc;
  if (!a.model_digest && !a.processor && !a.have_threads && !a.structure_count)
    return calhost_cli_usage_error(cli, "lookup: give the exact key (--model-digest, "
                                        "--processor, --threads) and/or --structure");
  calstore *s = NULL;
  calstore_status st = calhost_cli_open_store(cli, &s);
  if (st != CALSTORE_OK) {
    if (a.json) {
      printf("{\"status\":");
      calhost_json_string(stdout, calstore_status_name(st));
      printf(",\"profile\":null,\"rejections\":[],\"diagnostics\":[");
      if (s) {
        printf("{\"path\":");
        calhost_json_string(stdout, calstore_path(s));
        printf(",\"status\":");
        calhost_json_string(stdout, calstore_status_name(st));
        printf("}");
      }
      printf("]}\n");
    }
    calstore_close(&s);
    return 2;
  }
  calstore_lookup_options o = {0};
  o.backend = a.backend;
  o.operator_name = a.operator_name;
  o.implementation = a.implementation;
  o.model_digest = a.model_digest;
  o.processor = a.processor;
  o.thread_count = a.threads;
  o.structure = a.structure;
  o.structure_count = a.structure_count;
  o.force_portable = a.force_portable;
  calstore_lookup_result *r = NULL;
  calstore_error err = {0};
  st = calstore_lookup(s, &o, NULL, NULL, &r, &err);
  if (!r) {
    fprintf(stderr, "calhost: lookup: %s: %s\n", calstore_status_name(st), err.message);
    calstore_close(&s);
    return 2;
  }
  if (a.json) {
    printf("{\"status\":");
    calhost_json_string(stdout, calstore_status_name(r->status));
    printf(",\"level\":");
    calhost_json_string(stdout, calhost_level_name(r->level));
    printf(",\"profile\":");
    calhost_json_profile(stdout, r->profile);
    printf(",\"rejections\":[");
    for (size_t i = 0; i < r->rejection_count; i++) {
      const calstore_rejection *x = &r->rejections[i];
      printf(i ? ",{\"reason\":" : "{\"reason\":");
      calhost_json_string(stdout, calstore_reject_reason_name(x->reason));
      printf(",\"message\":");
      calhost_json_string(stdout, x->message);
      printf(",\"profile\":");
      calhost_json_profile(stdout, &x->profile);
      printf("}");
    }
    printf("],\"diagnostics\":[]}\n");
  } else {
    if (r->profile) {
      printf("selected (%s): ", calhost_level_name(r->level));
      print_profile_text(stdout, r->profile);
    } else {
      printf("no profile selected\n");
    }
    for (size_t i = 0; i < r->rejection_count; i++) {
      const calstore_rejection *x = &r->rejections[i];
      printf("rejected (%s: %s): ", calstore_reject_reason_name(x->reason), x->message);
      print_profile_text(stdout, &x->profile);
    }
  }
  int code = r->status == CALSTORE_OK ? 0 : 1;
  calstore_lookup_result_free(&r);
  calstore_close(&s);
  return code;
}

/* ---- override ------------------------------------------------------------------------ */

static const char *fixed_policy(void *user, size_t *length, char *err, size_t cap) {
  (void)err;
  (void)cap;
  *length = strlen(user);
  return user;
}

/* Builds the key of override/lookup flags; returns 0 or a usage exit code. */
static int build_key(calhost_cli *cli, const char *cmd, const store_args *a, calstore_key *k) {
  int rc;
  memset(k, 0, sizeof *k);
  if ((rc = need(cli, cmd, a->backend, "--backend")) ||
      (rc = need(cli, cmd, a->operator_name, "--operator")) ||
      (rc = need(cli, cmd, a->implementation, "--implementation")))
    return rc;
  k->backend = a->backend;
  k->operator_name = a->operator_name;
  k->implementation = a->implementation;
  if (a->portable) {
    if (a->model_digest || a->processor || a->have_threads)
      return calhost_cli_usage_error(
          cli, "%s: --portable takes --structure, not --model-digest/--processor/--threads", cmd);
    if (!a->structure_count)
      return calhost_cli_usage_error(cli, "%s: --portable needs at least one --structure", cmd);
    k->kind = CALSTORE_KEY_PORTABLE;
    k->structure = a->structure;
    k->structure_count = a->structure_count;
    return 0;
  }
  if (a->structure_count)
    return calhost_cli_usage_error(cli, "%s: --structure needs --portable", cmd);
  if ((rc = need(cli, cmd, a->model_digest, "--model-digest")) ||
      (rc = need(cli, cmd, a->processor, "--processor")) ||
      (rc = need(cli, cmd, a->have_threads ? "" : NULL, "--threads")))
    return rc;
  k->kind = CALSTORE_KEY_EXACT;
  k->model_digest = a->model_digest;
  k->processor = a->processor;
  k->thread_count = a->threads;
  return 0;
}

int calhost_cmd_override(calhost_cli *cli, int argc, char **argv) {
  if (has_workload(argc, argv))
    return calhost_cmd_override_workload(cli, argc, argv);
  if (argc < 2 || (strcmp(argv[1], "set") && strcmp(argv[1], "clear")))
    return calhost_cli_usage_error(cli, "override: use 'override set' or 'override clear'");
  int set = !strcmp(argv[1], "set");
  const char *cmd = set ? "override set" : "override clear";
  store_args a;
  int rc = parse_args(cli, argc - 1, argv + 1, F_KEY | F_PORTABLE | (set ? F_POLICY : 0), 0, &a);
  if (rc)
    return rc;
  calstore_key k;
  if ((rc = build_key(cli, cmd, &a, &k)))
    return rc;
  if (set && (rc = need(cli, cmd, a.policy, "--policy")))
    return rc;
  calstore *s = open_store(cli);
  if (!s)
    return 2;
  calstore_error err = {0};
  calstore_status st;
  if (set)
    st =
        calstore_install_override(s, &k, NULL, 0, fixed_policy, (void *)a.policy, NULL, NULL, &err);
  else
    st = calstore_clear_override(s, &k, &err);
  calstore_close(&s);
  if (st == CALSTORE_NOT_FOUND) {
    fprintf(stderr, "calhost: %s: no override with this key\n", cmd);
    return 1;
  }
  if (st != CALSTORE_OK) {
    fprintf(stderr, "calhost: %s: %s: %s\n", cmd, calstore_status_name(st), err.message);
    return 2;
  }
  if (a.json)
    printf("{\"status\":\"ok\"}\n");
  else if (!cli->quiet)
    printf("%s\n", set ? "override installed" : "override cleared");
  return 0;
}

/* ---- invalidate ---------------------------------------------------------------------- */

int calhost_cmd_invalidate(calhost_cli *cli, int argc, char **argv) {
  store_args a;
  int rc = parse_args(cli, argc, argv, F_BACKEND | F_IMPL, 0, &a);
  if (rc)
    return rc;
  if ((rc = need(cli, "invalidate", a.backend, "--backend")))
    return rc;
  calstore *s = open_store(cli);
  if (!s)
    return 2;
  calstore_error err = {0};
  size_t removed = 0;
  calstore_status st = calstore_invalidate(s, a.backend, a.implementation, &removed, &err);
  calstore_close(&s);
  if (st != CALSTORE_OK) {
    fprintf(stderr, "calhost: invalidate: %s: %s\n", calstore_status_name(st), err.message);
    return 2;
  }
  if (a.json)
    printf("{\"status\":\"ok\",\"removed\":%zu}\n", removed);
  else if (!cli->quiet)
    printf("removed %zu profiles\n", removed);
  return 0;
}
