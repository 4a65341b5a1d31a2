/*
 * spacefile.c: recorded search spaces (see spacefile.h): building one in
 * memory, the version-1 text format's writer and strict reader, and replay.
 *
 *   calhost-search-space 1
 *   space NAME
 *   meta KEY VALUE...
 *   param NAME ordered|categorical VALUE...
 *   config VALUE... MEDIAN SPREAD COMPILE_S SECONDS POLICY [REASON...]
 *
 * Known meta keys: `order plausible|none`, `complete 0|1`, `cost
 * median|mean|min` (other keys are provenance). The index of the
 * configurations is a hash table, so reading is linear whatever the order.
 * MEDIAN is "-" for a rejected configuration, whose REASON (the rest of the
 * line) is then required. POLICY is "-" when unknown, else the policy with
 * '%', '-' at its start, and bytes outside '!'..'~' written as %XX.
 */
#include "spacefile.h"

#include "base/array.h"
#include "base/files.h"
#include "base/str.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPACE_MAGIC "calhost-search-space"

int search_space_init(search_space_file *s, const char *name) {
  memset(s, 0, sizeof *s);
  s->order_plausible = 1;
  s->name = strdup(name ? name : "");
  return s->name ? 0 : -1;
}

/* Sets the fields of a known meta key from its value; 0, or -1 for a value
 * the key does not take. Unknown keys are provenance (0). */
static int known_meta(search_space_file *s, const char *key, const char *value) {
  if (strcmp(key, "order") == 0) {
    if (strcmp(value, "plausible") != 0 && strcmp(value, "none") != 0)
      return -1;
    s->order_plausible = value[0] == 'p';
  } else if (strcmp(key, "complete") == 0) {
    if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
      return -1;
    s->complete = value[0] == '1';
  } else if (strcmp(key, "curated") == 0) {
    if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
      return -1;
    s->curated = value[0] == '1';
  } else if (strcmp(key, "cost") == 0) {
    if (strcmp(value, "median") != 0 && strcmp(value, "mean") != 0 && strcmp(value, "min") != 0)
      return -1;
  }
  return 0;
}

const char *search_space_meta(const search_space_file *s, const char *key) {
  size_t n = strlen(key);
  for (size_t i = 0; i < s->meta_count; i++)
    if (strncmp(s->meta[i], key, n) == 0 && (s->meta[i][n] == ' ' || s->meta[i][n] == '\0'))
      return s->meta[i][n] ? s->meta[i] + n + 1 : s->meta[i] + n;
  return NULL;
}

int search_space_add_meta(search_space_file *s, const char *key, const char *value) {
  size_t kl = strlen(key), vl = value ? strlen(value) : 0;
  if (!base_str_is_word(key) || (value && (strchr(value, '\n') || strchr(value, '\r'))))
    return -1;
  if (known_meta(s, key, value ? value : "") != 0)
    return -1;
  char **m = base_array_grow(s->meta, s->meta_count, &s->meta_cap, sizeof *m, 8);
  if (!m)
    return -1;
  s->meta = m;
  char *line = malloc(kl + vl + 2);
  if (!line)
    return -1;
  memcpy(line, key, kl);
  line[kl] = ' ';
  memcpy(line + kl + 1, value ? value : "", vl + 1);
  if (!vl)
    line[kl] = '\0';
  s->meta[s->meta_count++] = line;
  if (strcmp(key, "cost") == 0)
    s->cost_statistic = line + kl + 1;
  return 0;
}

/* qsort's view of value positions: the words of sort_values (add_param's
 * parameter, set just before the sort). */
static const char *const *sort_values;
static int cmp_value_pos(const void *a, const void *b) {
  return strcmp(sort_values[*(const uint32_t *)a], sort_values[*(const uint32_t *)b]);
}

static void free_param(search_param *p) {
  for (uint32_t i = 0; p->values && i < p->value_count; i++)
    free((char *)p->values[i]);
  free((void *)p->values);
  free((char *)p->name);
}

int search_space_add_param(search_space_file *s, const char *name, int ordered,
                           const char *const *values, uint32_t value_count, char *err, size_t cap) {
  if (s->entry_count)
    return base_str_fail(err, cap, "parameter '%s' after the first configuration", name);
  if (!base_str_is_word(name))
    return base_str_fail(err, cap, "parameter name must be a non-empty word without spaces");
  for (size_t i = 0; i < s->param_count; i++)
    if (strcmp(s->params[i].name, name) == 0)
      return base_str_fail(err, cap, "duplicate parameter '%s'", name);
  if (value_count == 0)
    return base_str_fail(err, cap, "parameter '%s' has no values", name);
  uint64_t total = 1;
  for (size_t i = 0; i < s->param_count; i++)
    total *= s->params[i].value_count;
  if (total > UINT64_MAX / value_count)
    return base_str_fail(err, cap, "parameter '%s': more than 2^64 configurations", name);
  for (uint32_t i = 0; i < value_count; i++)
    if (!base_str_is_word(values[i]))
      return base_str_fail(err, cap, "parameter '%s': value %u is not a word", name, i + 1);
  /* the values in word order: duplicates are neighbours, lookups bisect */
  uint32_t *order = malloc(value_count * sizeof *order);
  if (!order)
    return base_str_fail(err, cap, "out of memory");
  for (uint32_t i = 0; i < value_count; i++)
    order[i] = i;
  sort_values = values;
  qsort(order, value_count, sizeof *order, cmp_value_pos);
  for (uint32_t i = 1; i < value_count; i++)
    if (strcmp(values[order[i - 1]], values[order[i]]) == 0) {
      uint32_t first = order[i - 1] < order[i] ? order[i - 1] : order[i];
      free(order);
      return base_str_fail(err, cap, "parameter '%s': duplicate value '%s'", name, values[first]);
    }
  search_param *ps = base_array_grow(s->params, s->param_count, &s->param_cap, sizeof *ps, 8);
  uint32_t **vo =
      ps ? base_array_grow(s->value_order, s->param_count, &s->value_order_cap, sizeof *vo, 8)
         : NULL;
  if (ps)
    s->params = ps;
  if (!vo) {
    free(order);
    return base_str_fail(err, cap, "out of memory");
  }
  s->value_order = vo;
  s->value_order[s->param_count] = order;
  search_param p = {.name = strdup(name), .ordered = ordered ? 1 : 0};
  char **v = calloc(value_count, sizeof *v);
  p.values = (const char *const *)v;
  p.value_count = value_count;
  int ok = p.name && v;
  for (uint32_t i = 0; ok && i < value_count; i++)
    ok = (v[i] = strdup(values[i])) != NULL;
  if (!ok) {
    free_param(&p);
    free(order);
    return base_str_fail(err, cap, "out of memory");
  }
  s->params[s->param_count++] = p;
  return 0;
}

int64_t search_space_value_index(const search_space_file *s, size_t p, const char *word) {
  const search_param *q = &s->params[p];
  const uint32_t *order = s->value_order ? s->value_order[p] : NULL;
  if (!order) { /* a space built without add_param's index */
    for (uint32_t i = 0; i < q->value_count; i++)
      if (strcmp(q->values[i], word) == 0)
        return i;
    return -1;
  }
  size_t lo = 0, hi = q->value_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(q->values[order[mid]], word);
    if (c == 0)
      return order[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

static uint64_t code_of(const search_space_file *s, const uint32_t *config) {
  uint64_t code = 0;
  for (size_t i = 0; i < s->param_count; i++)
    code = code * s->params[i].value_count + config[i];
  return code;
}

static size_t slot_of(uint64_t code, size_t cap) {
  uint64_t h = code * 0x9e3779b97f4a7c15ull;
  return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* The slot of code in the index: where it is, or the empty one where it
 * would go (slot_cap > 0). */
static size_t slot_find(const search_space_file *s, uint64_t code) {
  size_t i = slot_of(code, s->slot_cap);
  while (s->slots[i] && code_of(s, s->entries[s->slots[i] - 1].config) != code)
    i = (i + 1) & (s->slot_cap - 1);
  return i;
}

/* Doubles the index (or makes the first one); 0, or -1 when out of memory. */
static int index_grow(search_space_file *s) {
  size_t cap = s->slot_cap ? s->slot_cap * 2 : 256;
  size_t *slots = calloc(cap, sizeof *slots);
  if (!slots)
    return -1;
  free(s->slots);
  s->slots = slots;
  s->slot_cap = cap;
  for (size_t e = 0; e < s->entry_count; e++)
    s->slots[slot_find(s, code_of(s, s->entries[e].config))] = e + 1;
  return 0;
}

const search_space_entry *search_space_find(const search_space_file *s, const uint32_t *config) {
  for (size_t i = 0; i < s->param_count; i++)
    if (config[i] >= s->params[i].value_count)
      return NULL;
  if (!s->slot_cap)
    return NULL;
  size_t k = s->slots[slot_find(s, code_of(s, config))];
  return k ? &s->entries[k - 1] : NULL;
}

int search_space_add_entry(search_space_file *s, const search_space_entry *e, char *err,
                           size_t cap) {
  if (!s->param_count)
    return base_str_fail(err, cap, "configuration before any parameter");
  for (size_t i = 0; i < s->param_count; i++)
    if (e->config[i] >= s->params[i].value_count)
      return base_str_fail(err, cap, "parameter '%s': position %u out of range", s->params[i].name,
                           e->config[i]);
  if ((s->entry_count + 1) * 2 > s->slot_cap && index_grow(s) != 0)
    return base_str_fail(err, cap, "out of memory");
  size_t slot = slot_find(s, code_of(s, e->config));
  if (s->slots[slot])
    return base_str_fail(err, cap, "duplicate configuration (first recorded as configuration %zu)",
                         s->slots[slot]);
  search_space_entry *es =
      base_array_grow(s->entries, s->entry_count, &s->entry_cap, sizeof *es, 64);
  if (!es)
    return base_str_fail(err, cap, "out of memory");
  s->entries = es;
  search_space_entry c = *e;
  c.config = malloc(s->param_count * sizeof *c.config);
  c.policy = base_str_dup(e->policy);
  c.reason = base_str_dup(e->reason);
  if (!c.config || (e->policy && !c.policy) || (e->reason && !c.reason)) {
    free(c.config);
    free(c.policy);
    free(c.reason);
    return base_str_fail(err, cap, "out of memory");
  }
  memcpy(c.config, e->config, s->param_count * sizeof *c.config);
  s->entries[s->entry_count++] = c;
  s->slots[slot] = s->entry_count;
  return 0;
}

double search_space_best(const search_space_file *s) {
  double best = INFINITY;
  for (size_t i = 0; i < s->entry_count; i++)
    if (!s->entries[i].rejected && s->entries[i].median < best)
      best = s->entries[i].median;
  return best;
}

size_t search_space_ok_count(const search_space_file *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->entry_count; i++)
    n += !s->entries[i].rejected;
  return n;
}

void search_space_free(search_space_file *s) {
  if (!s)
    return;
  free(s->name);
  for (size_t i = 0; i < s->meta_count; i++)
    free(s->meta[i]);
  free(s->meta);
  for (size_t i = 0; i < s->param_count; i++) {
    free_param(&s->params[i]);
    if (s->value_order)
      free(s->value_order[i]);
  }
  free(s->params);
  free(s->value_order);
  for (size_t i = 0; i < s->entry_count; i++) {
    free(s->entries[i].config);
    free(s->entries[i].policy);
    free(s->entries[i].reason);
  }
  free(s->entries);
  free(s->slots);
  memset(s, 0, sizeof *s);
}

/* ---- writing ------------------------------------------------------------ */

int search_space_write_header(FILE *f, const search_space_file *s) {
  fprintf(f, "%s %d\n", SPACE_MAGIC, CALHOST_SPACE_FORMAT_VERSION);
  fprintf(f, "space %s\n", s->name && *s->name ? s->name : "unnamed");
  for (size_t i = 0; i < s->meta_count; i++)
    fprintf(f, "meta %s\n", s->meta[i]);
  for (size_t i = 0; i < s->param_count; i++) {
    const search_param *p = &s->params[i];
    fprintf(f, "param %s %s", p->name, p->ordered ? "ordered" : "categorical");
    for (uint32_t v = 0; v < p->value_count; v++)
      fprintf(f, " %s", p->values[v]);
    fputc('\n', f);
  }
  return ferror(f) ? -1 : 0;
}

static void write_policy(FILE *f, const char *p) {
  if (!p || !*p) {
    fputc('-', f);
    return;
  }
  for (const unsigned char *c = (const unsigned char *)p; *c; c++) {
    if (*c == '%' || *c <= ' ' || *c >= 0x7f || (*c == '-' && c == (const unsigned char *)p))
      fprintf(f, "%%%02X", *c);
    else
      fputc(*c, f);
  }
}

int search_space_write_entry(FILE *f, const search_space_file *s, const search_space_entry *e) {
  fputs("config", f);
  for (size_t i = 0; i < s->param_count; i++)
    fprintf(f, " %s", s->params[i].values[e->config[i]]);
  if (e->rejected)
    fputs(" -", f);
  else
    fprintf(f, " %.6g", e->median);
  fprintf(f, " %.4g %.4g %.4g ", e->spread, e->compile_seconds, e->seconds);
  write_policy(f, e->policy);
  if (e->rejected) {
    fputc(' ', f);
    /* one line: line breaks and tabs become spaces */
    const char *r = e->reason && *e->reason ? e->reason : "rejected";
    for (; *r; r++)
      fputc(*r == '\n' || *r == '\r' || *r == '\t' ? ' ' : *r, f);
  }
  fputc('\n', f);
  return ferror(f) ? -1 : 0;
}

int search_space_save(const search_space_file *s, const char *path, char *err, size_t cap) {
  /* the rule of every output file (base/files.h): folders created, a
   * device, FIFO or directory at path refused, a temporary file created
   * exclusively (never through a planted link), renamed over path */
  char why[800], tmp[4096];
  if (base_output_prepare(path, why, sizeof why) != 0)
    return base_str_fail(err, cap, "%s: %s", path, why);
  int fd = base_output_create(path, NULL, tmp, sizeof tmp, err, cap);
  if (fd < 0)
    return -1;
  FILE *f = fdopen(fd, "w");
  if (!f) {
    base_str_fail(err, cap, "%s: %s", tmp, strerror(errno));
    close(fd);
    unlink(tmp);
    return -1;
  }
  int rc = search_space_write_header(f, s);
  for (size_t i = 0; rc == 0 && i < s->entry_count; i++)
    rc = search_space_write_entry(f, s, &s->entries[i]);
  if (fclose(f) != 0 || rc != 0) {
    base_str_fail(err, cap, "%s: write error: %s", tmp, strerror(errno));
    unlink(tmp);
    return -1;
  }
  if (base_output_replace(tmp, path, err, cap) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct reader {
  const char *name;
  size_t line;
  char *err;
  size_t cap;
} reader;

static int fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *r, const char *fmt, ...) {
  int where = r->err && r->cap ? snprintf(r->err, r->cap, "%s:%zu: ", r->name, r->line) : 0;
  if (where >= 0 && (size_t)where < r->cap) {
    va_list ap;
    va_start(ap, fmt);
    base_str_vfail(r->err + where, r->cap - (size_t)where, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Splits line into at most max words (in place); *rest points after the
 * last word taken (at its remaining text, spaces skipped). */
static size_t split_words(char *line, char **words, size_t max, char **rest) {
  size_t n = 0;
  char *p = line;
  while (*p == ' ')
    p++;
  while (*p && n < max) {
    words[n++] = p;
    while (*p && *p != ' ')
      p++;
    if (*p)
      *p++ = '\0';
    while (*p == ' ')
      p++;
  }
  if (rest)
    *rest = p;
  return n;
}

static int parse_number(const char *w, double *out) {
  char *end;
  errno = 0;
  double v = strtod(w, &end);
  if (end == w || *end || errno || !isfinite(v) || v < 0)
    return -1;
  *out = v;
  return 0;
}

static int hexval(int c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes a POLICY word into a new string (NULL for "-"); -1 if malformed. */
static int parse_policy(const char *w, char **out) {
  *out = NULL;
  if (strcmp(w, "-") == 0)
    return 0;
  size_t n = strlen(w);
  char *d = malloc(n + 1), *o = d;
  if (!d)
    return -1;
  for (const char *p = w; *p; p++) {
    if (*p == '%') {
      int hi = p[1] ? hexval(p[1]) : -1, lo = hi >= 0 && p[2] ? hexval(p[2]) : -1;
      if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
        free(d);
        return -1;
      }
      *o++ = (char)(hi * 16 + lo);
      p += 2;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
  *out = d;
  return 0;
}

static int read_config(reader *r, search_space_file *s, char *text) {
  size_t np = s->param_count, want = np + 5;
  char **w = malloc((want + 1) * sizeof *w);
  uint32_t *cfg = malloc((np ? np : 1) * sizeof *cfg);
  char *rest = NULL;
  int rc = -1;
  search_space_entry e;
  memset(&e, 0, sizeof e);
  if (!w || !cfg) {
    rc = fail(r, "out of memory");
    goto out;
  }
  if (!np) {
    rc = fail(r, "config line before any param line");
    goto out;
  }
  size_t n = split_words(text, w, want, &rest);
  if (n < want) {
    rc = fail(r,
              "config line has %zu fields; expected %zu values, median, spread, compile "
              "seconds, seconds and policy",
              n, want);
    goto out;
  }
  for (size_t i = 0; i < np; i++) {
    int64_t v = search_space_value_index(s, i, w[i]);
    if (v < 0) {
      rc = fail(r, "'%s' is not a value of parameter '%s'", w[i], s->params[i].name);
      goto out;
    }
    cfg[i] = (uint32_t)v;
  }
  e.config = cfg;
  if (strcmp(w[np], "-") == 0) {
    e.rejected = 1;
    if (!*rest) {
      rc = fail(r, "rejected configuration without a reason");
      goto out;
    }
    e.reason = rest;
  } else {
    if (parse_number(w[np], &e.median) != 0 || e.median <= 0) {
      rc = fail(r, "median '%s' is not a positive number", w[np]);
      goto out;
    }
    if (*rest) {
      rc = fail(r, "text after the policy of a configuration that was not rejected");
      goto out;
    }
  }
  static const char *const names[] = {"spread", "compile seconds", "seconds"};
  double *fields[] = {&e.spread, &e.compile_seconds, &e.seconds};
  for (int i = 0; i < 3; i++)
    if (parse_number(w[np + 1 + i], fields[i]) != 0) {
      rc = fail(r, "%s '%s' is not a number >= 0", names[i], w[np + 1 + i]);
      goto out;
    }
  char *policy = NULL;
  if (parse_policy(w[np + 4], &policy) != 0) {
    rc = fail(r, "policy '%s' has a malformed %%XX escape", w[np + 4]);
    goto out;
  }
  e.policy = policy;
  char why[256];
  if (search_space_add_entry(s, &e, why, sizeof why) != 0) {
    free(policy);
    rc = fail(r, "%s", why);
    goto out;
  }
  free(policy);
  rc = 0;
out:
  free(w);
  free(cfg);
  return rc;
}

static int read_param(reader *r, search_space_file *s, char *text) {
  size_t max = 8;
  for (const char *p = text; *p; p++)
    max += *p == ' ';
  char **w = malloc(max * sizeof *w);
  if (!w)
    return fail(r, "out of memory");
  size_t n = split_words(text, w, max, NULL);
  int rc = 0;
  int ordered = 0;
  if (n < 3) {
    rc = fail(r, "param line needs a name, ordered|categorical and at least one value");
  } else if (strcmp(w[1], "ordered") == 0 || strcmp(w[1], "categorical") == 0) {
    ordered = w[1][0] == 'o';
    char why[256];
    if (search_space_add_param(s, w[0], ordered, (const char *const *)&w[2], (uint32_t)(n - 2), why,
                               sizeof why) != 0)
      rc = fail(r, "%s", why);
  } else {
    rc = fail(r, "parameter '%s': kind '%s' is neither ordered nor categorical", w[0], w[1]);
  }
  free(w);
  return rc;
}

int search_space_read(FILE *f, const char *name, search_space_file *s, char *err, size_t cap) {
  reader r = {.name = name ? name : "(space)", .err = err, .cap = cap};
  char *line = NULL;
  size_t lcap = 0;
  ssize_t len;
  int rc = -1, have_magic = 0, have_space = 0;
  if (search_space_init(s, "") != 0)
    return base_str_fail(err, cap, "%s: out of memory", r.name);
  while ((len = getline(&line, &lcap, f)) >= 0) {
    r.line++;
    if (len > 0 && line[len - 1] == '\n')
      line[--len] = '\0';
    if (len > 0 && line[len - 1] == '\r')
      line[--len] = '\0';
    if ((size_t)len != strlen(line)) {
      fail(&r, "NUL byte in line");
      goto out;
    }
    for (char *p = line; *p; p++)
      if (*p == '\t') {
        fail(&r, "tab character (fields are separated by single spaces)");
        goto out;
      }
    char *p = line;
    while (*p == ' ')
      p++;
    if (!*p || *p == '#')
      continue;
    char *kw = p;
    while (*p && *p != ' ')
      p++;
    if (*p)
      *p++ = '\0';
    while (*p == ' ')
      p++;
    if (!have_magic) {
      if (strcmp(kw, SPACE_MAGIC) != 0) {
        fail(&r, "not a space file (expected '%s %d')", SPACE_MAGIC, CALHOST_SPACE_FORMAT_VERSION);
        goto out;
      }
      if (strcmp(p, "1") != 0) {
        fail(&r, "unsupported space format version '%s' (this reader knows 1)", p);
        goto out;
      }
      have_magic = 1;
    } else if (strcmp(kw, "space") == 0) {
      if (have_space || s->param_count) {
        fail(&r, have_space ? "second space line" : "space line after a param line");
        goto out;
      }
      if (!base_str_is_word(p)) {
        fail(&r, "space name must be one word");
        goto out;
      }
      free(s->name);
      if (!(s->name = strdup(p))) {
        fail(&r, "out of memory");
        goto out;
      }
      have_space = 1;
    } else if (strcmp(kw, "meta") == 0) {
      char *v = p;
      while (*v && *v != ' ')
        v++;
      if (*v)
        *v++ = '\0';
      if (!*p) {
        fail(&r, "meta line needs a key");
        goto out;
      }
      if (search_space_add_meta(s, p, v) != 0) {
        const char *takes = strcmp(p, "order") == 0      ? "plausible or none"
                            : strcmp(p, "complete") == 0 ? "0 or 1"
                            : strcmp(p, "curated") == 0  ? "0 or 1"
                            : strcmp(p, "cost") == 0     ? "median, mean or min"
                                                         : NULL;
        if (takes)
          fail(&r, "meta %s '%s' is not %s", p, v, takes);
        else
          fail(&r, "out of memory");
        goto out;
      }
    } else if (strcmp(kw, "param") == 0) {
      if (!have_space) {
        fail(&r, "param line before the space line");
        goto out;
      }
      if (read_param(&r, s, p) != 0)
        goto out;
    } else if (strcmp(kw, "config") == 0) {
      if (read_config(&r, s, p) != 0)
        goto out;
    } else {
      fail(&r, "unknown line '%.40s'", kw);
      goto out;
    }
  }
  if (ferror(f)) {
    base_str_fail(err, cap, "%s: read error", r.name);
    goto out;
  }
  if (!have_magic || !have_space || !s->param_count) {
    r.line++;
    fail(&r,
         !have_magic   ? "empty file (no '%s 1' line)"
         : !have_space ? "no space line%s"
                       : "no param line%s",
         have_magic ? "" : SPACE_MAGIC);
    goto out;
  }
  rc = 0;
out:
  free(line);
  return rc;
}

int search_space_load(const char *path, search_space_file *s, char *err, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f) {
    memset(s, 0, sizeof *s);
    return base_str_fail(err, cap, "%s: %s", path, strerror(errno));
  }
  int rc = search_space_read(f, path, s, err, cap);
  fclose(f);
  return rc;
}

/* ---- replay ------------------------------------------------------------- */

static int replay_valid(void *user, const uint32_t *config) {
  search_space_replay *r = user;
  return search_space_find(r->space, config) != NULL;
}

static int replay_evaluate(void *user, const uint32_t *config, search_outcome *out) {
  search_space_replay *r = user;
  const search_space_entry *e = search_space_find(r->space, config);
  r->evaluated++;
  if (!e) { /* the engine only evaluates valid configurations */
    out->rejected = 1;
    return 0;
  }
  out->rejected = e->rejected;
  out->cost = e->rejected ? 0 : e->median;
  out->seconds = e->seconds;
  r->clock += e->seconds;
  return 0;
}

double search_space_replay_clock(void *replay) {
  return ((search_space_replay *)replay)->clock;
}

int search_space_replay_init(const search_space_file *s, int use_start, search_space_replay *r,
                             search_space *out) {
  memset(r, 0, sizeof *r);
  memset(out, 0, sizeof *out);
  r->space = s;
  if (s->entry_count) {
    r->start = malloc(s->entry_count * s->param_count * sizeof *r->start);
    if (!r->start)
      return -1;
    for (size_t i = 0; i < s->entry_count; i++)
      memcpy(r->start + i * s->param_count, s->entries[i].config,
             s->param_count * sizeof *r->start);
    if (use_start) {
      out->starts = r->start;
      out->start_count = s->entry_count;
      out->starts_curated = s->curated;
    }
    out->listed = r->start;
    out->listed_count = s->entry_count;
  }
  out->name = s->name;
  out->params = s->params;
  out->param_count = s->param_count;
  out->valid = replay_valid;
  out->evaluate = replay_evaluate;
  out->user = r;
  return 0;
}

void search_space_replay_free(search_space_replay *r) {
  if (!r)
    return;
  free(r->start);
  memset(r, 0, sizeof *r);
}
