/*
 * space.c: a recorded search space (host/search's space file, written by
 * `calhost calibrate --record` or search-record) as a run the page can
 * show: one result per space, every recorded configuration a candidate
 * (rejected ones with their reason), the fastest one the winner. The
 * space's meta lines (plugin, implementation, threads, processor...) fill
 * what the page shows of the run, with the backend's default when the
 * recording names it (meta default, default_median); what a recording does
 * not know (the store's verdict, calhost's version, the load) is left out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"
#include "search/spacefile.h"

/* The value of meta line "KEY VALUE", or NULL. */
static const char *meta(const search_space_file *s, const char *key) {
  size_t n = strlen(key);
  for (size_t i = 0; i < s->meta_count; i++)
    if (!strncmp(s->meta[i], key, n) && s->meta[i][n] == ' ')
      return s->meta[i] + n + 1;
  return NULL;
}

/* The entry's policy, or "name=value;..." from its configuration (malloc). */
static char *entry_policy(const search_space_file *s, const search_space_entry *e) {
  if (e->policy)
    return strdup(e->policy);
  size_t cap = 1;
  for (size_t p = 0; p < s->param_count; p++)
    cap += strlen(s->params[p].name) + strlen(s->params[p].values[e->config[p]]) + 2;
  char *out = malloc(cap);
  if (!out)
    return NULL;
  size_t n = 0;
  for (size_t p = 0; p < s->param_count; p++)
    n += (size_t)snprintf(out + n, cap - n, "%s%s=%s", p ? ";" : "", s->params[p].name,
                          s->params[p].values[e->config[p]]);
  out[n] = '\0';
  return out;
}

static int set_str(json_t *o, const char *key, const char *value) {
  return value ? json_object_set_new(o, key, json_string(value)) : 0;
}

/* The run object of a loaded space (NULL when out of memory). */
static json_t *space_run(const search_space_file *s) {
  json_t *run = json_object(), *results = json_array(), *env = json_object();
  json_t *res = json_object(), *cands = json_array(), *m = json_object(), *counts = json_object();
  if (!run || !results || !env || !res || !cands || !m || !counts)
    goto oom;
  const char *threads = meta(s, "threads"), *rigor = meta(s, "rigor");
  char rigor_text[200];
  snprintf(rigor_text, sizeof rigor_text, "%.100s%s", rigor ? rigor : "recorded space",
           rigor ? " (recorded)" : "");
  set_str(run, "rigor", rigor_text);
  set_str(env, "processor", meta(s, "processor"));
  set_str(res, "plugin", meta(s, "plugin") ? meta(s, "plugin") : "unknown");
  set_str(res, "implementation", meta(s, "implementation"));
  /* the configured workload's name (the space's name adds plugin and threads) */
  set_str(res, "workload", meta(s, "workload") ? meta(s, "workload") : s->name);
  set_str(res, "operator", meta(s, "operator"));
  if (threads)
    json_object_set_new(res, "threads", json_integer(strtol(threads, NULL, 10)));
  set_str(res, "status", "recorded");

  const search_space_entry *best = NULL;
  size_t rejected = 0;
  for (size_t i = 0; i < s->entry_count; i++) {
    const search_space_entry *e = &s->entries[i];
    if (e->rejected)
      rejected++;
    else if (isfinite(e->median) && (!best || e->median < best->median))
      best = e;
  }
  for (size_t i = 0; i < s->entry_count; i++) {
    const search_space_entry *e = &s->entries[i];
    json_t *c = json_object();
    char *policy = entry_policy(s, e);
    if (!c || !policy || json_array_append_new(cands, c) != 0) {
      free(policy);
      goto oom;
    }
    set_str(c, "policy", policy);
    free(policy);
    json_object_set_new(c, "default", json_false());
    json_object_set_new(c, "winner", json_boolean(e == best));
    set_str(c, "status", e->rejected ? "rejected" : "measured");
    json_object_set_new(c, "reason", e->reason ? json_string(e->reason) : json_null());
    if (!e->rejected) {
      json_object_set_new(c, "median_us", json_real(e->median));
      json_object_set_new(c, "spread_us", json_real(e->spread));
    }
  }
  /* the space's size (the product of its parameters' value counts: the
   * budget may have measured a part of it), what was recorded */
  double size = 1;
  for (size_t p = 0; p < s->param_count; p++)
    size *= s->params[p].value_count;
  json_int_t space = size < 9.0e15 && size >= (double)s->entry_count ? (json_int_t)size
                                                                     : (json_int_t)s->entry_count;
  json_object_set_new(counts, "candidates", json_integer(space));
  json_object_set_new(counts, "planned", json_integer((json_int_t)s->entry_count));
  json_object_set_new(counts, "tried", json_integer((json_int_t)s->entry_count));
  json_object_set_new(counts, "pruned", json_integer(0));
  json_object_set_new(counts, "rejected", json_integer((json_int_t)rejected));
  /* the backend's default, when the recording says (calibrate --record
   * writes "meta default POLICY" and "meta default_median US"): measured
   * outside the search, it is not one of the configurations */
  const char *def = meta(s, "default"), *dm_text = meta(s, "default_median");
  double dm = dm_text ? strtod(dm_text, NULL) : NAN;
  if (!(dm > 0 && isfinite(dm)))
    dm = NAN;
  if (def) {
    set_str(res, "default_policy", def);
    json_t *c = json_object();
    if (c && json_array_append_new(cands, c) == 0) {
      set_str(c, "policy", def);
      json_object_set_new(c, "default", json_true());
      json_object_set_new(c, "winner", json_false());
      set_str(c, "status", isfinite(dm) ? "measured" : "rejected");
      json_object_set_new(c, "reason", json_null());
      if (isfinite(dm))
        json_object_set_new(c, "median_us", json_real(dm));
    }
  }
  if (best) {
    char *policy = entry_policy(s, best);
    set_str(res, "winner", policy);
    free(policy);
    json_object_set_new(m, "median_latency_us", json_real(best->median));
    json_object_set_new(m, "spread_us", json_real(best->spread));
    if (isfinite(dm)) {
      json_object_set_new(m, "default_median_latency_us", json_real(dm));
      json_object_set_new(m, "speedup_vs_default", json_real(dm / best->median));
    }
    json_object_set_new(res, "measurements", m);
  } else {
    json_decref(m);
  }
  m = NULL;
  json_object_set_new(res, "candidates", cands);
  json_object_set_new(res, "counts", counts);
  json_array_append_new(results, res);
  json_object_set_new(run, "results", results);
  json_object_set_new(run, "environment", env);
  return run;
oom:
  json_decref(run);
  json_decref(results);
  json_decref(env);
  json_decref(res);
  json_decref(cands);
  json_decref(m);
  json_decref(counts);
  return NULL;
}

int rpt_is_space_file(const char *head, size_t len) {
  static const char magic[] = "calhost-search-space ";
  return len >= sizeof magic - 1 && !memcmp(head, magic, sizeof magic - 1);
}

json_t *rpt_space_load(const char *text, size_t len, const char *name, char *err, size_t cap) {
  search_space_file s;
  FILE *f = fmemopen((void *)text, len, "r");
  if (!f) {
    snprintf(err, cap, "%s: out of memory", name);
    return NULL;
  }
  int rc = search_space_read(f, name, &s, err, cap);
  fclose(f);
  json_t *run = rc == 0 ? space_run(&s) : NULL;
  search_space_free(&s);
  if (rc == 0 && !run)
    snprintf(err, cap, "%s: out of memory", name);
  return run;
}
