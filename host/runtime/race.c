/*
 * race.c: the race measurements of a profile and the rule that chooses a
 * backend by them (race.h). Pure functions over store profiles and the
 * configuration: calibrate writes the races, lookup and the runtime read
 * them.
 */
#include "race.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int is_race_name(const char *name) {
  return !strcmp(name, RUNTIME_RACE_ID) || !strcmp(name, RUNTIME_RACE_LATENCY) ||
         !strcmp(name, RUNTIME_RACE_DEFAULT) || !strcmp(name, RUNTIME_RACE_ENTRANTS) ||
         !strcmp(name, RUNTIME_RACE_RANK) || !strcmp(name, RUNTIME_RACE_ROUNDS) ||
         !strcmp(name, RUNTIME_RACE_DROPPED) || !strcmp(name, RUNTIME_RACE_DEFAULT_ROUNDS) ||
         !strcmp(name, RUNTIME_RACE_DEFAULT_DROPPED) || !strcmp(name, RUNTIME_RACE_TIE);
}

/* A count measurement's value, 0 when not a sensible count. */
static uint32_t count_of(double v) {
  return v > 0 && v < 1e6 ? (uint32_t)v : 0;
}

int runtime_race_read(const calstore_profile *p, runtime_race *out) {
  memset(out, 0, sizeof *out);
  out->default_us = NAN;
  if (!p)
    return 0;
  for (size_t i = 0; i < p->measurement_count; i++) {
    const calstore_measurement *m = &p->measurements[i];
    if (!strcmp(m->name, RUNTIME_RACE_ID))
      out->id = m->value;
    else if (!strcmp(m->name, RUNTIME_RACE_LATENCY))
      out->latency_us = m->value;
    else if (!strcmp(m->name, RUNTIME_RACE_DEFAULT))
      out->default_us = m->value;
    else if (!strcmp(m->name, RUNTIME_RACE_ENTRANTS))
      out->entrants = count_of(m->value);
    else if (!strcmp(m->name, RUNTIME_RACE_RANK))
      out->rank = count_of(m->value);
    else if (!strcmp(m->name, RUNTIME_RACE_ROUNDS))
      out->rounds = count_of(m->value);
    else if (!strcmp(m->name, RUNTIME_RACE_DROPPED))
      out->dropped = m->value > 0;
    else if (!strcmp(m->name, RUNTIME_RACE_DEFAULT_ROUNDS))
      out->default_rounds = count_of(m->value);
    else if (!strcmp(m->name, RUNTIME_RACE_DEFAULT_DROPPED))
      out->default_dropped = m->value > 0;
    else if (!strcmp(m->name, RUNTIME_RACE_TIE))
      out->tie = count_of(m->value);
  }
  if (out->id > 0 && out->latency_us > 0)
    return 1;
  memset(out, 0, sizeof *out);
  out->default_us = NAN;
  return 0;
}

size_t runtime_race_strip(const calstore_measurement *in, size_t n, calstore_measurement *out) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!is_race_name(in[i].name))
      out[k++] = in[i];
  return k;
}

void runtime_race_append(const runtime_race *race, calstore_measurement *m, size_t *n) {
  m[(*n)++] = (calstore_measurement){RUNTIME_RACE_ID, race->id, "us_epoch"};
  m[(*n)++] = (calstore_measurement){RUNTIME_RACE_LATENCY, race->latency_us, "us"};
  if (isfinite(race->default_us) && race->default_us > 0)
    m[(*n)++] = (calstore_measurement){RUNTIME_RACE_DEFAULT, race->default_us, "us"};
  m[(*n)++] = (calstore_measurement){RUNTIME_RACE_ENTRANTS, (double)race->entrants, "count"};
  m[(*n)++] = (calstore_measurement){RUNTIME_RACE_RANK, (double)race->rank, "count"};
  if (race->rounds) {
    m[(*n)++] = (calstore_measurement){RUNTIME_RACE_ROUNDS, (double)race->rounds, "count"};
    m[(*n)++] = (calstore_measurement){RUNTIME_RACE_DROPPED, race->dropped ? 1.0 : 0.0, "count"};
  }
  if (race->default_rounds) {
    m[(*n)++] =
        (calstore_measurement){RUNTIME_RACE_DEFAULT_ROUNDS, (double)race->default_rounds, "count"};
    m[(*n)++] = (calstore_measurement){RUNTIME_RACE_DEFAULT_DROPPED,
                                       race->default_dropped ? 1.0 : 0.0, "count"};
  }
  if (race->tie >= 2)
    m[(*n)++] = (calstore_measurement){RUNTIME_RACE_TIE, (double)race->tie, "count"};
}

static int same_device(const runtime_race_entry *a, const runtime_race_entry *b) {
  return !strcmp(a->device ? a->device : "", b->device ? b->device : "");
}

/* The latest race of entry f's device recorded between two or more of
 * that device's entries, 0: none. */
static double device_latest(const runtime_race_entry *e, size_t n, size_t f) {
  double mine = 0;
  for (size_t i = 0; i < n; i++) {
    if (!e[i].raced || !same_device(&e[i], &e[f]) || e[i].race.id <= mine)
      continue;
    size_t with = 0;
    for (size_t j = 0; j < n; j++)
      with += e[j].raced && same_device(&e[j], &e[f]) && e[j].race.id == e[i].race.id;
    if (with >= 2)
      mine = e[i].race.id;
  }
  return mine;
}

long runtime_race_choose(const runtime_race_entry *e, size_t n, char *const *order, size_t n_order,
                         const char **rule) {
  if (n_order) {
    *rule = "configured";
    for (size_t o = 0; o < n_order; o++)
      for (size_t i = 0; i < n; i++)
        if (e[i].has_profile && !strcmp(e[i].backend, order[o]))
          return (long)i;
    return -1;
  }
  /* the device of the first entry (loader order) that ran in its device's
   * latest race: that race decides */
  double latest = 0;
  size_t from = 0;
  for (size_t f = 0; f < n && latest <= 0; f++) {
    double mine = e[f].raced ? device_latest(e, n, f) : 0;
    if (mine > 0 && e[f].race.id == mine) {
      latest = mine;
      from = f;
    }
  }
  if (latest > 0) {
    long best = -1;
    for (size_t i = 0; i < n; i++) {
      if (!e[i].raced || e[i].race.id != latest || !same_device(&e[i], &e[from]))
        continue;
      if (best < 0)
        best = (long)i;
      else if (e[i].race.rank && e[best].race.rank ? e[i].race.rank < e[best].race.rank
                                                   : e[i].race.latency_us < e[best].race.latency_us)
        best = (long)i;
    }
    *rule = "race";
    return best;
  }
  for (size_t i = 0; i < n; i++)
    if (e[i].has_profile) {
      *rule = "first";
      return (long)i;
    }
  *rule = "none";
  return -1;
}

void runtime_race_order(const config_settings *cfg, const char *model, const char *workload,
                        char *const **order, size_t *n, char *buf, size_t cap) {
  *order = NULL;
  *n = 0;
  if (cap)
    buf[0] = '\0';
  for (size_t i = 0; cfg && i < cfg->model_count; i++) {
    const config_model *m = &cfg->models[i];
    size_t len = strlen(m->name);
    int mine = model ? !strcmp(m->name, model)
                     : workload && !strncmp(workload, m->name, len) && workload[len] == '.';
    if (mine && m->backend_count) {
      *order = m->backends;
      *n = m->backend_count;
      snprintf(buf, cap, "[model %s] backends", m->name);
      return;
    }
  }
  if (cfg && cfg->lookup_backend_count) {
    *order = cfg->lookup_backends;
    *n = cfg->lookup_backend_count;
    snprintf(buf, cap, "[lookup] backends");
  }
}
