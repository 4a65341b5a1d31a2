/*
 * config.c: reads calhost.ini with inih into a typed, validated
 * calhost_config (see config.h), remembering where each value came from.
 *
 * inih drives the parse through ini_parse_stream with our own line reader.
 * The reader counts lines (Debian's libinih is built without line numbers
 * in the handler), sees every section header (inih does not report empty
 * sections, and we must catch repeated ones), strips leading whitespace (so
 * that indented keys are never taken for inih's multi-line continuations)
 * and refuses lines longer than inih's line buffer instead of letting inih
 * split them. The first error wins and is reported as "FILE:LINE: message".
 */
#define _GNU_SOURCE
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../processor/processor.h" /* calhost_cpulist_parse */
#include "values.h"

/* ---- origins -------------------------------------------------------- */

typedef struct origin_entry {
  char *key; /* "section.key" or "workload.NAME.key" */
  unsigned line;
} origin_entry;

typedef struct origin_table {
  origin_entry *items;
  size_t count, capacity;
} origin_table;

static void origins_free(origin_table *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->count; i++)
    free(t->items[i].key);
  free(t->items);
  free(t);
}

static int origins_add(origin_table *t, const char *key, unsigned line) {
  char *copy;
  if (t->count == t->capacity) {
    size_t cap = t->capacity ? t->capacity * 2 : 32;
    origin_entry *n = realloc(t->items, cap * sizeof *n);
    if (!n)
      return -1;
    t->items = n;
    t->capacity = cap;
  }
  copy = strdup(key);
  if (!copy)
    return -1;
  t->items[t->count].key = copy;
  t->items[t->count].line = line;
  t->count++;
  return 0;
}

calhost_config_origin calhost_config_origin_of(const calhost_config *cfg, const char *dotted_key) {
  calhost_config_origin o = {NULL, 0};
  const origin_table *t;
  if (!cfg || !dotted_key || !cfg->origins)
    return o;
  t = cfg->origins;
  for (size_t i = 0; i < t->count; i++)
    if (!strcmp(t->items[i].key, dotted_key)) {
      o.file = cfg->source_path;
      o.line = t->items[i].line;
      return o;
    }
  return o;
}

/* ---- small helpers ---------------------------------------------------- */

static char **strv_push(char ***v, size_t *n, const char *s) {
  char **nv = realloc(*v, (*n + 1) * sizeof **v);
  if (!nv)
    return NULL;
  *v = nv;
  nv[*n] = strdup(s);
  if (!nv[*n])
    return NULL;
  (*n)++;
  return nv;
}

static void strv_free(char ***v, size_t *n) {
  for (size_t i = 0; i < *n; i++)
    free((*v)[i]);
  free(*v);
  *v = NULL;
  *n = 0;
}

static void props_free(calhost_property **p, size_t *n) {
  for (size_t i = 0; i < *n; i++) {
    free((char *)(*p)[i].name);
    free((char *)(*p)[i].value);
  }
  free(*p);
  *p = NULL;
  *n = 0;
}

static int props_push(calhost_property **p, size_t *n, const char *name, const char *value) {
  calhost_property *np = realloc(*p, (*n + 1) * sizeof **p);
  char *a, *b;
  if (!np)
    return -1;
  *p = np;
  a = strdup(name);
  b = strdup(value);
  if (!a || !b) {
    free(a);
    free(b);
    return -1;
  }
  np[*n].name = a;
  np[*n].value = b;
  (*n)++;
  return 0;
}

static int is_name_char(int c) {
  return isalnum(c) || c == '_' || c == '.' || c == '-';
}

/* A name: [A-Za-z0-9_.-]+ */
static int valid_name(const char *s) {
  if (!s || !*s)
    return 0;
  for (; *s; s++)
    if (!is_name_char((unsigned char)*s))
      return 0;
  return 1;
}

const char *calhost_rigor_name(calhost_rigor rigor) {
  switch (rigor) {
  case CALHOST_RIGOR_QUICK:
    return "quick";
  case CALHOST_RIGOR_MEASURE:
    return "measure";
  case CALHOST_RIGOR_EXHAUSTIVE:
    return "exhaustive";
  }
  return "?";
}

/* ---- the parser ------------------------------------------------------- */

typedef enum section_kind {
  SEC_NONE = 0,
  SEC_STORE,
  SEC_PLUGINS,
  SEC_CALIBRATION,
  SEC_LOOKUP,
  SEC_WORKLOAD,
  SEC_PLUGIN,
  SEC_BAD, /* an erroneous header: its keys are skipped */
} section_kind;

typedef struct seen_entry {
  char *name;
  unsigned line;
} seen_entry;

typedef struct parser {
  calhost_config *cfg;
  origin_table *origins;
  const char *file; /* display name, for messages */
  char *base_dir;   /* relative paths resolve against it */
  /* the reader */
  const char *text;
  size_t length, pos;
  unsigned line;
  /* the current section */
  section_kind kind;
  char section[300]; /* "[workload sq]" for messages */
  char prefix[280];  /* "calibration" or "workload.sq": origin keys */
  unsigned section_line;
  size_t index; /* workload / plugin section index */
  seen_entry *sections;
  size_t section_count;
  seen_entry *keys; /* keys of the current section */
  size_t key_count;
  /* the first error */
  unsigned err_line;   /* the line it names */
  unsigned err_detect; /* the line being read when it was found */
  int has_error;
  int out_of_memory;
  char err[900];
} parser;

static int perr(parser *p, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int perr(parser *p, unsigned line, const char *fmt, ...) {
  va_list ap;
  if (p->has_error)
    return 0;
  p->has_error = 1;
  p->err_line = line;
  p->err_detect = p->line;
  va_start(ap, fmt);
  vsnprintf(p->err, sizeof p->err, fmt, ap);
  va_end(ap);
  return 0; /* inih: this line failed */
}

static int oom(parser *p) {
  p->out_of_memory = 1;
  return perr(p, p->line, "out of memory");
}

static void seen_free(seen_entry **v, size_t *n) {
  for (size_t i = 0; i < *n; i++)
    free((*v)[i].name);
  free(*v);
  *v = NULL;
  *n = 0;
}

static int seen_push(seen_entry **v, size_t *n, const char *name, unsigned line) {
  seen_entry *nv = realloc(*v, (*n + 1) * sizeof **v);
  if (!nv)
    return -1;
  *v = nv;
  nv[*n].name = strdup(name);
  if (!nv[*n].name)
    return -1;
  nv[*n].line = line;
  (*n)++;
  return 0;
}

static const seen_entry *seen_find(const seen_entry *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(v[i].name, name))
      return &v[i];
  return NULL;
}

/* Resolves a path value: "~/" against $HOME, a relative path against the
 * config file's directory. Returns a malloc'd string or NULL. */
static char *resolve_path(const parser *p, const char *v) {
  char *out = NULL;
  if (v[0] == '~' && (v[1] == '/' || v[1] == '\0')) {
    const char *home = secure_getenv("HOME");
    if (home && *home && asprintf(&out, "%s%s", home, v + 1) < 0)
      out = NULL;
    else if (!home || !*home)
      out = strdup(v);
    return out;
  }
  if (v[0] == '/' || !p->base_dir || !strcmp(p->base_dir, "."))
    return strdup(v);
  if (asprintf(&out, "%s/%s", p->base_dir, v) < 0)
    return NULL;
  return out;
}

/* Checks the end of a section: a [workload] needs operator and shape. */
static void end_section(parser *p) {
  if (p->kind == SEC_WORKLOAD) {
    calhost_config_workload *w = &p->cfg->workloads[p->index];
    if (!w->operator_name)
      perr(p, p->section_line, "%s lacks the required key 'operator'", p->section);
    else if (!w->shape)
      perr(p, p->section_line, "%s lacks the required key 'shape'", p->section);
  }
  seen_free(&p->keys, &p->key_count);
  p->kind = SEC_NONE;
}

/* A section header line (text after '[' ... up to the end of the line). */
static void begin_section(parser *p, const char *start) {
  const char *close = strchr(start, ']');
  char inner[128], word[128], name[128];
  const char *s;
  size_t len;
  end_section(p);
  p->kind = SEC_BAD;
  p->section_line = p->line;
  if (!close) {
    perr(p, p->line, "section header without a closing ']'");
    return;
  }
  for (s = close + 1; *s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'; s++)
    ;
  if (*s && *s != ';' && *s != '#') {
    perr(p, p->line, "unexpected text after the section header's ']'");
    return;
  }
  len = (size_t)(close - start);
  if (len >= sizeof inner) {
    perr(p, p->line, "section header too long (at most %zu characters)", sizeof inner - 1);
    return;
  }
  memcpy(inner, start, len);
  inner[len] = '\0';
  word[0] = name[0] = '\0';
  {
    const char *q = inner;
    size_t wl = 0, nl = 0;
    while (*q == ' ' || *q == '\t')
      q++;
    while (*q && *q != ' ' && *q != '\t')
      word[wl++] = *q++;
    word[wl] = '\0';
    while (*q == ' ' || *q == '\t')
      q++;
    while (*q)
      name[nl++] = *q++;
    while (nl && (name[nl - 1] == ' ' || name[nl - 1] == '\t'))
      nl--;
    name[nl] = '\0';
  }
  if (name[0])
    snprintf(p->section, sizeof p->section, "[%s %s]", word, name);
  else
    snprintf(p->section, sizeof p->section, "[%s]", word);

  {
    static const struct {
      const char *word;
      section_kind kind;
    } plain[] = {{"store", SEC_STORE},
                 {"plugins", SEC_PLUGINS},
                 {"calibration", SEC_CALIBRATION},
                 {"lookup", SEC_LOOKUP}};
    section_kind kind = SEC_BAD;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
      if (!strcmp(word, plain[i].word))
        kind = plain[i].kind;
    if (!strcmp(word, "workload"))
      kind = SEC_WORKLOAD;
    else if (!strcmp(word, "plugin"))
      kind = SEC_PLUGIN;
    if (kind == SEC_BAD) {
      perr(p, p->line,
           "unknown section %s (expected [store], [plugins], [calibration], [lookup], "
           "[workload NAME] or [plugin NAME])",
           p->section);
      return;
    }
    if (kind == SEC_WORKLOAD || kind == SEC_PLUGIN) {
      if (!name[0]) {
        perr(p, p->line, "[%s] needs a name: [%s NAME]", word, word);
        return;
      }
      if (!valid_name(name)) {
        perr(p, p->line, "bad %s name '%s' (use letters, digits, '_', '.', '-')", word, name);
        return;
      }
    } else if (name[0]) {
      perr(p, p->line, "[%s] takes no name (found '%s')", word, name);
      return;
    }
    {
      char canon[300];
      const seen_entry *prev;
      snprintf(canon, sizeof canon, "%s%s%s", word, name[0] ? " " : "", name);
      prev = seen_find(p->sections, p->section_count, canon);
      if (prev) {
        perr(p, p->line, "duplicate section %s (first at line %u)", p->section, prev->line);
        return;
      }
      if (seen_push(&p->sections, &p->section_count, canon, p->line) != 0) {
        oom(p);
        return;
      }
    }
    if (name[0])
      snprintf(p->prefix, sizeof p->prefix, "%s.%s", word, name);
    else
      snprintf(p->prefix, sizeof p->prefix, "%s", word);
    if (kind == SEC_WORKLOAD) {
      calhost_config *c = p->cfg;
      calhost_config_workload *nw = realloc(c->workloads, (c->workload_count + 1) * sizeof *nw);
      if (!nw) {
        oom(p);
        return;
      }
      c->workloads = nw;
      memset(&nw[c->workload_count], 0, sizeof *nw);
      nw[c->workload_count].name = strdup(name);
      nw[c->workload_count].dtype = strdup("float32");
      nw[c->workload_count].origin.file = c->source_path;
      nw[c->workload_count].origin.line = p->line;
      p->index = c->workload_count++;
      if (!nw[p->index].name || !nw[p->index].dtype) {
        oom(p);
        return;
      }
    } else if (kind == SEC_PLUGIN) {
      calhost_config *c = p->cfg;
      calhost_config_plugin_section *np =
          realloc(c->plugin_sections, (c->plugin_section_count + 1) * sizeof *np);
      if (!np) {
        oom(p);
        return;
      }
      c->plugin_sections = np;
      memset(&np[c->plugin_section_count], 0, sizeof *np);
      np[c->plugin_section_count].name = strdup(name);
      np[c->plugin_section_count].origin.file = c->source_path;
      np[c->plugin_section_count].origin.line = p->line;
      p->index = c->plugin_section_count++;
      if (!np[p->index].name) {
        oom(p);
        return;
      }
    }
    p->kind = kind;
  }
}

/* inih's line reader: one line per call, counted; see the file comment. */
static char *read_line(char *str, int num, void *stream) {
  parser *p = stream;
  const char *start, *nl, *s;
  size_t len, body;
  if (p->pos >= p->length)
    return NULL;
  start = p->text + p->pos;
  nl = memchr(start, '\n', p->length - p->pos);
  len = nl ? (size_t)(nl - start) + 1 : p->length - p->pos;
  p->pos += len;
  p->line++;
  s = start;
  if (p->line == 1 && len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3))
    s += 3;
  while (s < start + len && (*s == ' ' || *s == '\t'))
    s++;
  body = len - (size_t)(s - start);
  while (body && (s[body - 1] == '\n' || s[body - 1] == '\r'))
    body--;
  /* What inih gets: the line without its leading blanks and its line break,
   * NUL-terminated; inih's buffer wants 3 bytes to spare. */
  if (num < 4 || body > (size_t)num - 3) {
    perr(p, p->line, "line too long (at most %d characters)", num < 4 ? 0 : num - 3);
    str[0] = '\0';
    return str;
  }
  memcpy(str, s, body);
  str[body] = '\0';
  if (str[0] == '[')
    begin_section(p, str + 1);
  return str;
}

/* Splits a list value at any of seps, trimming items; calls add for each
 * non-empty item. Returns 0 or the first nonzero add result. */
static int split_list(const char *v, const char *seps, int (*add)(parser *, const char *, void *),
                      parser *p, void *ctx) {
  char *copy = strdup(v), *save = NULL, *tok;
  int rc = 0;
  if (!copy)
    return oom(p), -1;
  for (tok = strtok_r(copy, seps, &save); tok && !rc; tok = strtok_r(NULL, seps, &save)) {
    char *e;
    while (isspace((unsigned char)*tok))
      tok++;
    e = tok + strlen(tok);
    while (e > tok && isspace((unsigned char)e[-1]))
      *--e = '\0';
    if (*tok)
      rc = add(p, tok, ctx);
  }
  free(copy);
  return rc;
}

typedef struct strv_ctx {
  char ***v;
  size_t *n;
  const char *key;
  int is_path;
  int is_backend;
} strv_ctx;

static int add_item(parser *p, const char *item, void *vctx) {
  strv_ctx *c = vctx;
  if (c->is_backend && !valid_name(item)) {
    perr(p, p->line, "%s: bad backend name '%s' in '%s'", p->section, item, c->key);
    return -1;
  }
  for (size_t i = 0; c->is_backend && i < *c->n; i++)
    if (!strcmp((*c->v)[i], item)) {
      perr(p, p->line, "%s: backend '%s' is listed twice in '%s'", p->section, item, c->key);
      return -1;
    }
  if (c->is_path) {
    char *r = resolve_path(p, item);
    int ok = r && strv_push(c->v, c->n, r);
    free(r);
    if (!ok)
      return oom(p), -1;
  } else if (!strv_push(c->v, c->n, item)) {
    return oom(p), -1;
  }
  return 0;
}

static int set_list(parser *p, const char *key, const char *value, char ***v, size_t *n,
                    const char *seps, int is_path, int is_backend) {
  strv_ctx c = {v, n, key, is_path, is_backend};
  strv_free(v, n);
  return split_list(value, seps, add_item, p, &c) == 0;
}

static int parse_threads(parser *p, const char *value) {
  calhost_config *c = p->cfg;
  uint32_t *list;
  size_t n;
  char why[300];
  if (calhost_value_threads(value, &list, &n, why, sizeof why) != 0)
    return !strcmp(why, "out of memory")
               ? oom(p)
               : perr(p, p->line, "bad value for 'threads' in %s: %s", p->section, why);
  free(c->thread_counts);
  c->thread_counts = list;
  c->thread_count_count = n;
  return 1;
}

static int parse_shape(parser *p, calhost_config_workload *w, const char *value) {
  int64_t dims[CALHOST_MAX_SHAPE_RANK];
  size_t rank;
  char why[300];
  if (calhost_value_shape(value, dims, &rank, why, sizeof why) != 0)
    return perr(p, p->line, "bad value for 'shape' in %s: '%s': %s", p->section, value, why);
  free(w->shape);
  w->shape = malloc(rank * sizeof *w->shape);
  if (!w->shape)
    return oom(p);
  memcpy(w->shape, dims, rank * sizeof *dims);
  w->shape_rank = rank;
  return 1;
}

static int bad_value(parser *p, const char *key, const char *value, const char *expected) {
  return perr(p, p->line, "bad value for '%s' in %s: '%s' (expected %s)", key, p->section, value,
              expected);
}

/* A value refused by a values.h parser: its explanation follows. */
static int refused(parser *p, const char *key, const char *value, const char *why) {
  return perr(p, p->line, "bad value for '%s' in %s: '%s' (%s)", key, p->section, value, why);
}

static int unknown_key(parser *p, const char *key, const char *known) {
  return perr(p, p->line, "unknown key '%s' in %s (known keys: %s)", key, p->section, known);
}

static int set_string(parser *p, char **dst, const char *value) {
  char *s = strdup(value);
  if (!s)
    return oom(p);
  free(*dst);
  *dst = s;
  return 1;
}

static int handle_key(parser *p, const char *name, const char *value) {
  calhost_config *c = p->cfg;
  char why[300];
  switch (p->kind) {
  case SEC_STORE:
    if (!strcmp(name, "path")) {
      char *r;
      if (!*value)
        return bad_value(p, name, value, "a file path");
      r = resolve_path(p, value);
      if (!r)
        return oom(p);
      free(c->store_path);
      c->store_path = r;
      return 1;
    }
    if (!strcmp(name, "persistence_enabled"))
      return calhost_value_bool(value, &c->persistence_enabled, why, sizeof why) == 0
                 ? 1
                 : refused(p, name, value, why);
    return unknown_key(p, name, "path, persistence_enabled");
  case SEC_PLUGINS:
    if (!strcmp(name, "directories"))
      return set_list(p, name, value, &c->plugin_dirs, &c->plugin_dir_count, ":,", 1, 0);
    if (!strcmp(name, "paths"))
      return set_list(p, name, value, &c->plugin_paths, &c->plugin_path_count, ":,", 1, 0);
    if (!strcmp(name, "enabled"))
      return set_list(p, name, value, &c->enabled_backends, &c->enabled_count, ",", 0, 1);
    if (!strcmp(name, "disabled"))
      return set_list(p, name, value, &c->disabled_backends, &c->disabled_count, ",", 0, 1);
    return unknown_key(p, name, "directories, paths, enabled, disabled");
  case SEC_CALIBRATION:
    if (!strcmp(name, "cpus")) {
      int *cpus = NULL, all = 0;
      size_t n = 0;
      if (calhost_cpulist_parse(value, &cpus, &n, &all, why, sizeof why) != 0)
        return perr(p, p->line, "bad value for 'cpus' in %s: %s", p->section, why);
      free(c->cpus);
      c->cpus = cpus;
      c->cpu_count = n;
      c->cpus_all = all;
      return 1;
    }
    if (!strcmp(name, "threads"))
      return parse_threads(p, value);
    if (!strcmp(name, "rigor")) {
      if (!strcmp(value, "quick"))
        c->rigor = CALHOST_RIGOR_QUICK;
      else if (!strcmp(value, "measure"))
        c->rigor = CALHOST_RIGOR_MEASURE;
      else if (!strcmp(value, "exhaustive"))
        c->rigor = CALHOST_RIGOR_EXHAUSTIVE;
      else
        return bad_value(p, name, value, "quick, measure or exhaustive");
      return 1;
    }
    if (!strcmp(name, "time_budget"))
      return calhost_value_duration(value, 1, &c->time_budget_seconds, why, sizeof why) == 0
                 ? 1
                 : refused(p, name, value, why);
    if (!strcmp(name, "plugin_timeout"))
      return calhost_value_duration(value, 0, &c->plugin_timeout_seconds, why, sizeof why) == 0
                 ? 1
                 : refused(p, name, value, why);
    if (!strcmp(name, "repetitions"))
      return calhost_value_repetitions(value, &c->repetitions, why, sizeof why) == 0
                 ? 1
                 : refused(p, name, value, why);
    return unknown_key(p, name, "cpus, threads, rigor, time_budget, repetitions, plugin_timeout");
  case SEC_LOOKUP:
    if (!strcmp(name, "force_portable"))
      return calhost_value_bool(value, &c->force_portable, why, sizeof why) == 0
                 ? 1
                 : refused(p, name, value, why);
    return unknown_key(p, name, "force_portable");
  case SEC_WORKLOAD: {
    calhost_config_workload *w = &c->workloads[p->index];
    if (!strcmp(name, "operator"))
      return valid_name(value) ? set_string(p, &w->operator_name, value)
                               : bad_value(p, name, value, "an operator name such as MatMul");
    if (!strcmp(name, "dtype"))
      return valid_name(value) ? set_string(p, &w->dtype, value)
                               : bad_value(p, name, value, "a type name such as float32");
    if (!strcmp(name, "shape"))
      return parse_shape(p, w, value);
    if (!strcmp(name, "model")) {
      char *r;
      if (!*value)
        return bad_value(p, name, value, "a file path");
      r = resolve_path(p, value);
      if (!r)
        return oom(p);
      free(w->model_file);
      w->model_file = r;
      w->model_origin.file = c->source_path;
      w->model_origin.line = p->line;
      return 1;
    }
    if (!valid_name(name))
      return perr(p, p->line, "bad property name '%s' in %s (use letters, digits, '_', '.', '-')",
                  name, p->section);
    if (!strcmp(name, "model_digest") || !strcmp(name, "name"))
      return perr(p, p->line, "'%s' is reserved and cannot be set in %s", name, p->section);
    if (!*value || strpbrk(value, ";\"\\"))
      return perr(p, p->line,
                  "bad value for property '%s' in %s: '%s' (non-empty, without ';', '\"' or "
                  "'\\')",
                  name, p->section, value);
    for (const char *q = value; *q; q++)
      if ((unsigned char)*q < 0x20 || (unsigned char)*q == 0x7f)
        return perr(p, p->line, "bad value for property '%s' in %s: control character", name,
                    p->section);
    return props_push(&w->properties, &w->property_count, name, value) == 0 ? 1 : oom(p);
  }
  case SEC_PLUGIN: {
    calhost_config_plugin_section *s = &c->plugin_sections[p->index];
    if (!valid_name(name))
      return perr(p, p->line, "bad setting name '%s' in %s (use letters, digits, '_', '.', '-')",
                  name, p->section);
    return props_push(&s->settings, &s->setting_count, name, value) == 0 ? 1 : oom(p);
  }
  case SEC_NONE:
    return perr(p, p->line,
                "key '%s' outside any section (put it under [store], [plugins], "
                "[calibration], [lookup], [workload NAME] or [plugin NAME])",
                name);
  case SEC_BAD:
    return 1; /* the header's error was already reported */
  }
  return 1;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
  parser *p = user;
  const seen_entry *prev;
  char okey[600];
  (void)section; /* we track sections ourselves, in read_line */
  if (p->kind == SEC_BAD)
    return 1;
  if (p->kind != SEC_NONE) {
    prev = seen_find(p->keys, p->key_count, name);
    if (prev)
      return perr(p, p->line, "duplicate key '%s' in %s (first at line %u)", name, p->section,
                  prev->line);
    if (seen_push(&p->keys, &p->key_count, name, p->line) != 0)
      return oom(p);
  }
  if (!handle_key(p, name, value))
    return 0;
  snprintf(okey, sizeof okey, "%s.%s", p->prefix, name);
  if (origins_add(p->origins, okey, p->line) != 0)
    return oom(p);
  return 1;
}

/* ---- load / defaults / free ----------------------------------------------- */

int calhost_config_defaults(calhost_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->persistence_enabled = 1;
  cfg->cpus_all = 1;
  cfg->thread_counts = malloc(2 * sizeof *cfg->thread_counts);
  cfg->origins = calloc(1, sizeof(origin_table));
  if (!cfg->thread_counts || !cfg->origins) {
    calhost_config_free(cfg);
    return -1;
  }
  cfg->thread_counts[0] = 1;
  cfg->thread_counts[1] = 0; /* max */
  cfg->thread_count_count = 2;
  cfg->rigor = CALHOST_RIGOR_MEASURE;
  cfg->time_budget_seconds = 60;
  cfg->repetitions = 0;
  cfg->plugin_timeout_seconds = 120;
  cfg->force_portable = 0;
  return 0;
}

void calhost_config_free(calhost_config *cfg) {
  if (!cfg)
    return;
  free(cfg->source_path);
  free(cfg->store_path);
  strv_free(&cfg->plugin_dirs, &cfg->plugin_dir_count);
  strv_free(&cfg->plugin_paths, &cfg->plugin_path_count);
  strv_free(&cfg->enabled_backends, &cfg->enabled_count);
  strv_free(&cfg->disabled_backends, &cfg->disabled_count);
  free(cfg->cpus);
  free(cfg->thread_counts);
  for (size_t i = 0; i < cfg->workload_count; i++) {
    calhost_config_workload *w = &cfg->workloads[i];
    free(w->name);
    free(w->operator_name);
    free(w->dtype);
    free(w->shape);
    free(w->model_file);
    free(w->model_digest);
    props_free(&w->properties, &w->property_count);
  }
  free(cfg->workloads);
  for (size_t i = 0; i < cfg->plugin_section_count; i++) {
    free(cfg->plugin_sections[i].name);
    props_free(&cfg->plugin_sections[i].settings, &cfg->plugin_sections[i].setting_count);
  }
  free(cfg->plugin_sections);
  origins_free(cfg->origins);
  memset(cfg, 0, sizeof *cfg);
}

/* Cross-key checks after the parse. */
static int finish_checks(parser *p) {
  calhost_config *c = p->cfg;
  for (size_t i = 0; i < c->enabled_count; i++)
    for (size_t j = 0; j < c->disabled_count; j++)
      if (!strcmp(c->enabled_backends[i], c->disabled_backends[j])) {
        calhost_config_origin o = calhost_config_origin_of(c, "plugins.disabled");
        perr(p, o.line, "backend '%s' is both enabled and disabled in [plugins]",
             c->disabled_backends[j]);
        return -1;
      }
  return 0;
}

int calhost_config_load_string(const char *text, size_t length, const char *name,
                               calhost_config *cfg, char *err, size_t err_capacity) {
  parser p;
  int rc;
  const char *slash;
  if (err && err_capacity)
    err[0] = '\0';
  if (!name)
    name = "<string>";
  if (calhost_config_defaults(cfg) != 0) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: out of memory", name);
    return -1;
  }
  memset(&p, 0, sizeof p);
  cfg->source_path = strdup(name);
  slash = strrchr(name, '/');
  if (slash == name)
    p.base_dir = strdup("/");
  else if (slash)
    p.base_dir = strndup(name, (size_t)(slash - name));
  else
    p.base_dir = strdup(".");
  if (!cfg->source_path || !p.base_dir) {
    free(p.base_dir);
    calhost_config_free(cfg);
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: out of memory", name);
    return -1;
  }
  p.cfg = cfg;
  p.origins = cfg->origins;
  p.file = cfg->source_path;
  p.text = text;
  p.length = length;
  {
    const char *nul = memchr(text, '\0', length);
    if (nul) {
      unsigned line = 1;
      for (const char *q = text; q < nul; q++)
        line += *q == '\n';
      p.line = line;
      perr(&p, line, "NUL byte in the file (not a text file?)");
      p.length = 0;
    }
  }
  rc = ini_parse_stream(read_line, &p, handler, &p);
  if (!p.has_error || !(rc > 0 && (unsigned)rc < p.err_detect))
    end_section(&p);
  if (rc > 0 && (!p.has_error || (unsigned)rc < p.err_detect)) {
    p.has_error = 0;
    perr(&p, (unsigned)rc, "syntax error (expected 'key = value', '[section]' or a comment)");
  } else if (rc < 0 && !p.has_error) {
    perr(&p, 0, "out of memory");
  }
  if (!p.has_error)
    finish_checks(&p);
  seen_free(&p.sections, &p.section_count);
  seen_free(&p.keys, &p.key_count);
  free(p.base_dir);
  if (p.has_error) {
    if (err && err_capacity) {
      if (p.err_line)
        snprintf(err, err_capacity, "%s:%u: %s", name, p.err_line, p.err);
      else
        snprintf(err, err_capacity, "%s: %s", name, p.err);
    }
    calhost_config_free(cfg);
    return -1;
  }
  return 0;
}

int calhost_config_load(const char *path, calhost_config *cfg, char *err, size_t err_capacity) {
  FILE *f;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int rc;
  struct stat st;
  memset(cfg, 0, sizeof *cfg);
  if (!path) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "no configuration file given");
    return -1;
  }
  f = fopen(path, "rb");
  if (!f) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: is a directory", path);
    return -1;
  }
  for (;;) {
    size_t n;
    if (len == cap) {
      char *nb;
      cap = cap ? cap * 2 : 8192;
      if (cap > (64u << 20)) {
        free(buf);
        fclose(f);
        if (err && err_capacity)
          snprintf(err, err_capacity, "%s: too large for a configuration file", path);
        return -1;
      }
      nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        if (err && err_capacity)
          snprintf(err, err_capacity, "%s: out of memory", path);
        return -1;
      }
      buf = nb;
    }
    n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0)
      break;
  }
  if (ferror(f)) {
    int e = errno;
    free(buf);
    fclose(f);
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: read error: %s", path, strerror(e));
    return -1;
  }
  fclose(f);
  rc = calhost_config_load_string(buf ? buf : "", len, path, cfg, err, err_capacity);
  free(buf);
  return rc;
}

/* ---- queries ---------------------------------------------------------- */

const calhost_config_workload *calhost_config_workload_named(const calhost_config *cfg,
                                                             const char *name) {
  if (!cfg || !name)
    return NULL;
  for (size_t i = 0; i < cfg->workload_count; i++)
    if (!strcmp(cfg->workloads[i].name, name))
      return &cfg->workloads[i];
  return NULL;
}

const calhost_config_plugin_section *calhost_config_plugin_named(const calhost_config *cfg,
                                                                 const char *name) {
  if (!cfg || !name)
    return NULL;
  for (size_t i = 0; i < cfg->plugin_section_count; i++)
    if (!strcmp(cfg->plugin_sections[i].name, name))
      return &cfg->plugin_sections[i];
  return NULL;
}

int calhost_config_backend_enabled(const calhost_config *cfg, const char *backend) {
  int enabled;
  if (!cfg || !backend)
    return 0;
  enabled = cfg->enabled_count == 0;
  for (size_t i = 0; i < cfg->enabled_count; i++)
    if (!strcmp(cfg->enabled_backends[i], backend))
      enabled = 1;
  for (size_t i = 0; i < cfg->disabled_count; i++)
    if (!strcmp(cfg->disabled_backends[i], backend))
      enabled = 0;
  return enabled;
}
