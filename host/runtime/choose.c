/*
 * choose.c: the deployment runtime's choice of a backend (runtime.h,
 * "choosing the backend", since 0.5): every plugin serving a workload is
 * asked for its selection and race.h's rule chooses among them; a model's
 * nodes are chosen once per structure. Built on the public calls of
 * runtime.c (serving_backends, load_plugin, select) and the configuration's
 * [lookup] / [model NAME] backends.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calhost/runtime.h"
#include "race.h"

/* A choice and what it owns. */
typedef struct choice_box {
  calhost_runtime_choice pub;
  calhost_runtime_candidate *cands;
  runtime_race_entry *entries;
  calhost_runtime_selection **sels; /* each candidate's selection (NULL: failed) */
  calhost_runtime_plugin **plugins;
  char **notes;
  char reason[2048];
  size_t n;
} choice_box;

static void append(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...) {
  size_t n = strlen(buf);
  if (n + 1 >= cap)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - n, fmt, ap);
  va_end(ap);
}

/* "1.23 ms" / "456 us" */
static void fmt_us(char *buf, size_t cap, double us) {
  if (!isfinite(us) || us <= 0)
    snprintf(buf, cap, "-");
  else if (us >= 1000)
    snprintf(buf, cap, "%.3g ms", us / 1000);
  else
    snprintf(buf, cap, "%.3g us", us);
}

/* The race's figures: "A 1.2 ms (default 3 ms; 2 rounds), B 2 ms (default
 * 2.1 ms; 2 rounds, dropped)" (rounds when the race recorded them). */
static void race_figures(const choice_box *b, double id, char *buf, size_t cap) {
  for (size_t i = 0, k = 0; i < b->n; i++) {
    if (!b->entries[i].raced || b->entries[i].race.id != id)
      continue;
    char w[32], d[32];
    fmt_us(w, sizeof w, b->entries[i].race.latency_us);
    fmt_us(d, sizeof d, b->entries[i].race.default_us);
    const runtime_race *x = &b->entries[i].race;
    append(buf, cap, "%s%s %s (default %s", k++ ? ", " : "", b->entries[i].backend, w, d);
    if (x->rounds)
      append(buf, cap, "; %u round%s%s%s", (unsigned)x->rounds, x->rounds == 1 ? "" : "s",
             x->dropped ? ", dropped" : "", x->tie >= 2 ? ", tied" : "");
    append(buf, cap, ")");
  }
}

static void reason_of(choice_box *b, long chosen, const char *rule, const char *order_origin) {
  char *r = b->reason;
  size_t cap = sizeof b->reason;
  r[0] = '\0';
  if (!strcmp(rule, "configured")) {
    if (chosen < 0)
      append(r, cap, "none: no backend of %s has a profile", order_origin);
    else
      append(r, cap, "%s: the first backend of %s with a profile", b->entries[chosen].backend,
             order_origin);
    return;
  }
  if (!strcmp(rule, "race")) {
    const runtime_race *x = &b->entries[chosen].race;
    char when[64];
    time_t secs = (time_t)(x->id / 1e6);
    struct tm tm;
    if (gmtime_r(&secs, &tm))
      strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    else
      snprintf(when, sizeof when, "%.0f", x->id);
    const char *level = b->sels[chosen]->result->level == CALSTORE_LEVEL_EXACT_CALIBRATED ? "exact"
                        : b->sels[chosen]->result->level == CALSTORE_LEVEL_PORTABLE_CALIBRATED
                            ? "portable"
                            : "selected";
    if (x->tie >= 2)
      append(r, cap,
             "%s: tied with %u other%s within the race's noise in the race of its %s profile; "
             "chosen by the tie rule (the lower median; the others are as good within the noise)",
             b->entries[chosen].backend, (unsigned)x->tie - 1, x->tie == 2 ? "" : "s", level);
    else
      append(r, cap, "%s: fastest of %u in the race of its %s profile", b->entries[chosen].backend,
             (unsigned)x->entrants, level);
    append(r, cap, " (race of %s%s%s: ", when, b->entries[chosen].device ? " on device " : "",
           b->entries[chosen].device ? b->entries[chosen].device : "");
    race_figures(b, x->id, r, cap);
    append(r, cap, ")");
    return;
  }
  if (!strcmp(rule, "first")) {
    size_t with = 0;
    for (size_t i = 0; i < b->n; i++)
      with += b->entries[i].has_profile;
    append(r, cap,
           "%s: no race recorded between the backends with a profile (%zu of %zu have one); the "
           "first in the loader's order with a profile answers",
           b->entries[chosen].backend, with, b->n);
    return;
  }
  append(r, cap, "none: no backend serving it has a profile");
}

static void box_free(choice_box *b) {
  if (!b)
    return;
  calhost_runtime_selection_free(&b->pub.selection); /* unless the caller took it */
  for (size_t i = 0; i < b->n; i++) {
    calhost_runtime_selection_free(&b->sels[i]);
    free(b->notes[i]);
  }
  free(b->cands);
  free(b->entries);
  free(b->sels);
  free(b->plugins);
  free(b->notes);
  free(b);
}

void calhost_runtime_choice_free(calhost_runtime_choice **choice) {
  if (!choice || !*choice)
    return;
  box_free((choice_box *)*choice); /* pub is the first member */
  *choice = NULL;
}

/* calhost_runtime_choose with the [model NAME] of `model` (NULL: found by
 * the workload's name). */
static calhost_runtime_status choose(calhost_runtime *rt, const char *workload, uint32_t threads,
                                     const char *model, calhost_runtime_choice **out, char *err,
                                     size_t cap) {
  *out = NULL;
  const char *const *names;
  size_t n;
  calhost_runtime_status st = calhost_runtime_serving_backends(rt, workload, &names, &n, err, cap);
  if (st != CALHOST_RUNTIME_OK)
    return st;
  if (!n) {
    snprintf(err, cap, "no enabled plugin serves workload '%s'", workload);
    return CALHOST_RUNTIME_NOT_FOUND;
  }
  choice_box *b = calloc(1, sizeof *b);
  if (b) {
    b->cands = calloc(n, sizeof *b->cands);
    b->entries = calloc(n, sizeof *b->entries);
    b->sels = calloc(n, sizeof *b->sels);
    b->plugins = calloc(n, sizeof *b->plugins);
    b->notes = calloc(n, sizeof *b->notes);
  }
  if (!b || !b->cands || !b->entries || !b->sels || !b->plugins || !b->notes) {
    box_free(b);
    snprintf(err, cap, "out of memory");
    return CALHOST_RUNTIME_NO_MEMORY;
  }
  b->n = n;
  calhost_runtime_status first_failure = CALHOST_RUNTIME_OK;
  char first_err[1024] = "";
  size_t answered = 0;
  for (size_t i = 0; i < n; i++) {
    char why[1024];
    runtime_race_entry *e = &b->entries[i];
    e->backend = names[i];
    st = calhost_runtime_load_plugin(rt, names[i], NULL, &b->plugins[i], why, sizeof why);
    if (st == CALHOST_RUNTIME_OK)
      st = calhost_runtime_select(rt, b->plugins[i], workload, threads, &b->sels[i], why,
                                  sizeof why);
    if (st != CALHOST_RUNTIME_OK) {
      if (first_failure == CALHOST_RUNTIME_OK) {
        first_failure = st;
        snprintf(first_err, sizeof first_err, "%s", why);
      }
      b->notes[i] = strdup(why);
      b->plugins[i] = NULL;
      continue;
    }
    answered++;
    e->device = b->sels[i]->device_identity; /* races compare one device's backends */
    const calstore_lookup_result *res = b->sels[i]->result;
    e->has_profile = res && res->profile;
    if (e->has_profile)
      e->raced = runtime_race_read(res->profile, &e->race);
    else
      runtime_race_read(NULL, &e->race);
  }
  if (!answered) {
    snprintf(err, cap, "%s", first_err);
    box_free(b);
    return first_failure;
  }
  char *const *order;
  size_t n_order;
  char origin[300];
  runtime_race_order(runtime_settings_of(rt), model, workload, &order, &n_order, origin,
                     sizeof origin);
  const char *rule;
  long chosen = runtime_race_choose(b->entries, n, order, n_order, &rule);
  reason_of(b, chosen, rule, origin);
  for (size_t i = 0; i < n; i++) {
    const runtime_race_entry *e = &b->entries[i];
    b->cands[i] = (calhost_runtime_candidate){.backend = e->backend,
                                              .has_profile = e->has_profile,
                                              .raced = e->raced,
                                              .race_id = e->race.id,
                                              .race_latency_us = e->race.latency_us,
                                              .race_default_latency_us = e->race.default_us,
                                              .note = b->notes[i],
                                              .race_rank = e->race.rank,
                                              .race_tie = e->race.tie};
    if (!e->raced)
      b->cands[i].race_latency_us = NAN;
    if (b->sels[i] && b->sels[i]->result)
      b->cands[i].rejection_count = b->sels[i]->result->rejection_count;
    if (e->has_profile) {
      b->cands[i].policy = b->sels[i]->result->profile->policy;
      b->cands[i].level = b->sels[i]->result->level;
    }
  }
  calhost_runtime_choice *c = &b->pub;
  c->struct_size = (uint32_t)sizeof *c;
  c->candidates = b->cands;
  c->candidate_count = n;
  c->reason = b->reason;
  c->rule = !strcmp(rule, "configured") && chosen >= 0 ? CALHOST_RUNTIME_RULE_CONFIGURED
            : !strcmp(rule, "race")                    ? CALHOST_RUNTIME_RULE_RACE
            : !strcmp(rule, "first")                   ? CALHOST_RUNTIME_RULE_FIRST
                                                       : CALHOST_RUNTIME_RULE_NONE;
  long shown = chosen;
  if (shown < 0) /* none: the first answer's "none" (its keys and rejections) */
    for (size_t i = 0; i < n && shown < 0; i++)
      if (b->sels[i])
        shown = (long)i;
  if (chosen >= 0) {
    c->backend = b->entries[chosen].backend;
    c->plugin = b->plugins[chosen];
  }
  if (shown >= 0) {
    c->selection = b->sels[shown];
    b->sels[shown] = NULL; /* moved into the choice (box_free frees it) */
  }
  *out = c;
  return CALHOST_RUNTIME_OK;
}

calhost_runtime_status calhost_runtime_choose(calhost_runtime *runtime, const char *workload,
                                              uint32_t threads, calhost_runtime_choice **out,
                                              char *err, size_t err_capacity) {
  if (out)
    *out = NULL;
  if (!runtime || !workload || !out) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "calhost_runtime_choose: NULL argument");
    return CALHOST_RUNTIME_INVALID_ARGUMENT;
  }
  char scratch[8];
  return choose(runtime, workload, threads, NULL, out, err ? err : scratch,
                err ? err_capacity : sizeof scratch);
}

/* ---- models ------------------------------------------------------------ */

typedef struct model_box {
  calhost_runtime_model_choice pub;
  calhost_runtime_node_choice *nodes;
  calhost_runtime_choice **choices; /* per node: the choice of its workload (shared) */
  calhost_runtime_choice **owned;   /* one per distinct workload */
  size_t nowned;
} model_box;

void calhost_runtime_model_choice_free(calhost_runtime_model_choice **choice) {
  if (!choice || !*choice)
    return;
  model_box *b = (model_box *)*choice;
  for (size_t i = 0; i < b->nowned; i++)
    calhost_runtime_choice_free(&b->owned[i]);
  free(b->owned);
  free(b->choices);
  free(b->nodes);
  free(b);
  *choice = NULL;
}

calhost_runtime_status calhost_runtime_choose_model(calhost_runtime *runtime,
                                                    const calhost_runtime_model *model,
                                                    uint32_t threads,
                                                    calhost_runtime_model_choice **out, char *err,
                                                    size_t err_capacity) {
  char scratch[8];
  if (!err || !err_capacity)
    err = scratch, err_capacity = sizeof scratch;
  if (out)
    *out = NULL;
  if (!runtime || !model || !out) {
    snprintf(err, err_capacity, "calhost_runtime_choose_model: NULL argument");
    return CALHOST_RUNTIME_INVALID_ARGUMENT;
  }
  *out = NULL;
  size_t n = model->node_count;
  model_box *b = calloc(1, sizeof *b);
  if (b) {
    b->nodes = calloc(n ? n : 1, sizeof *b->nodes);
    b->choices = calloc(n ? n : 1, sizeof *b->choices);
    b->owned = calloc(n ? n : 1, sizeof *b->owned);
  }
  if (!b || !b->nodes || !b->choices || !b->owned) {
    calhost_runtime_model_choice_free((calhost_runtime_model_choice **)&b);
    snprintf(err, err_capacity, "out of memory");
    return CALHOST_RUNTIME_NO_MEMORY;
  }
  calhost_runtime_model_choice *m = &b->pub;
  m->struct_size = (uint32_t)sizeof *m;
  m->model = model;
  m->nodes = b->nodes;
  m->node_count = n;
  m->node_stride = sizeof *b->nodes;
  for (size_t i = 0; i < n; i++) {
    const calhost_runtime_model_node *mn = &model->nodes[i];
    calhost_runtime_node_choice *nc = &b->nodes[i];
    nc->struct_size = (uint32_t)sizeof *nc;
    nc->node = mn->name;
    nc->workload = mn->workload;
    nc->race_latency_us = nc->race_default_latency_us = NAN;
    calhost_runtime_choice *c = NULL;
    for (size_t j = 0; j < i && !c; j++) /* nodes of one structure share a workload */
      if (b->choices[j] && !strcmp(model->nodes[j].workload, mn->workload))
        c = b->choices[j];
    if (!c) {
      calhost_runtime_status st =
          choose(runtime, mn->workload, threads, model->name, &c, err, err_capacity);
      if (st == CALHOST_RUNTIME_NO_MEMORY) {
        calhost_runtime_model_choice_free(&m);
        return st;
      }
      if (st != CALHOST_RUNTIME_OK) { /* this node: none, with the reason */
        nc->rule = CALHOST_RUNTIME_RULE_NONE;
        nc->reason = NULL;
        continue;
      }
      b->owned[b->nowned++] = c;
    }
    b->choices[i] = c;
    nc->backend = c->backend;
    nc->plugin = c->plugin;
    nc->rule = c->rule;
    nc->reason = c->reason;
    if (c->backend && c->selection && c->selection->result && c->selection->result->profile) {
      nc->policy = c->selection->result->profile->policy;
      nc->level = c->selection->result->level;
      m->chosen_count++;
    }
    for (size_t k = 0; k < c->candidate_count; k++)
      if (c->backend && !strcmp(c->candidates[k].backend, c->backend) && c->candidates[k].raced) {
        nc->race_latency_us = c->candidates[k].race_latency_us;
        nc->race_default_latency_us = c->candidates[k].race_default_latency_us;
      }
  }
  *out = m;
  return CALHOST_RUNTIME_OK;
}
