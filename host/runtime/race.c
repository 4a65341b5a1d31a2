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
         !strcmp(name, RUNTIME_RACE_RANK);
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
      out->entrants = m->value > 0 && m->value < 1e6 ? (uint32_t)m->value : 0;
    else if (!strcmp(m->name, RUNTIME_RACE_RANK))
      out->rank = m->value > 0 && m->value < 1e6 ? (uint32_t)m->value : 0;
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
  /* the latest race recorded between two or more entries with a profile */
  double latest = 0;
  for (size_t i = 0; i < n; i++) {
    if (!e[i].raced || e[i].race.id <= latest)
      continue;
    size_t with = 0;
    for (size_t j = 0; j < n; j++)
      with += e[j].raced && e[j].race.id == e[i].race.id;
    if (with >= 2)
      latest = e[i].race.id;
  }
  if (latest > 0) {
    long best = -1;
    for (size_t i = 0; i < n; i++)
      if (e[i].raced && e[i].race.id == latest &&
          (best < 0 || e[i].race.latency_us < e[best].race.latency_us))
        best = (long)i;
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
