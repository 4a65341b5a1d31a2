/*
 * space.c: the search's space for one sweep (see measure_internal.h): the
 * plugin's named parameters (ABI 2 describe_space, with the plausible order
 * and the space's defects) or its numbered candidates, the warm start from
 * the request's stored policies, and the search's strategy and budget. The
 * run over that space (rounds, racing, the winner) is measure.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "measure_internal.h"

/* The search's strategy and budget for this sweep (see measure.h); curated:
 * the space is the plugin's candidate list, which the rigor measure runs
 * whole when it has at most CALHOST_SEARCH_CURATED_WHOLE_MAX candidates
 * (search_sweep_rigor_plan): the plugin curated it to be affordable, the
 * engine's pruning keeps it so, and on cpu_gemm a 10% model search chose
 * winners up to 1.2x slower than the whole list's (search-bench --live). A
 * larger space (an OpenCL backend's described space) gets the search's
 * measure budget. */
static void search_plan(const sweep_request *req, uint64_t size, int curated,
                        search_strategy *strategy, uint32_t *evaluations, double *seconds) {
  search_rigor rg = req->params.rigor == CALHOST_RIGOR_QUICK ? CALHOST_SEARCH_RIGOR_QUICK
                    : req->params.rigor == CALHOST_RIGOR_EXHAUSTIVE
                        ? CALHOST_SEARCH_RIGOR_EXHAUSTIVE
                        : CALHOST_SEARCH_RIGOR_MEASURE;
  search_strategy rigor_strategy;
  uint32_t rigor_budget;
  search_sweep_rigor_plan(rg, size, curated, &rigor_strategy, &rigor_budget);
  *seconds = req->budget_seconds > 0 ? req->budget_seconds : 0;
  if (req->budget_evaluations)
    *evaluations =
        size && req->budget_evaluations > size ? (uint32_t)size : req->budget_evaluations;
  else if (*seconds > 0)
    *evaluations = 0; /* the seconds alone bound it */
  else
    *evaluations = rigor_budget;
  if (size && *evaluations >= size)
    *evaluations = 0;      /* the whole space: the search ends exhausted */
  if (req->policy_count) { /* explicit candidates (verify): every one */
    *evaluations = 0;
    *seconds = 0;
    *strategy = CALHOST_SEARCH_EXHAUSTIVE;
    return;
  }
  if (req->strategy != CALHOST_SEARCH_DEFAULT)
    *strategy = req->strategy;
  else if (rg == CALHOST_SEARCH_RIGOR_EXHAUSTIVE) /* a budget with it: the first N, in order */
    *strategy = CALHOST_SEARCH_EXHAUSTIVE;
  else if (!req->budget_evaluations && *seconds == 0)
    *strategy = rigor_strategy;
  else if (!*evaluations && *seconds > 0) /* a time alone: presumed below the space */
    *strategy = search_default_strategy(size > 1 ? size - 1 : 1, size);
  else
    *strategy = search_default_strategy(*evaluations, size);
}

/* The named space's validity test: the plugin's assignment_valid. */
static int named_valid(void *user, const uint32_t *config) {
  sweep *s = user;
  char err[256];
  if (s->default_config && !memcmp(s->default_config, config, s->np * sizeof *config))
    return 0; /* the default's point: measured as the default, never proposed */
  return s->vt->assignment_valid(s->session, config, s->np, err, sizeof err) == CALHOST_OK;
}

/* Appends config to the plausible order unless invalid or already there. */
static int add_start(sweep *s, uint32_t **starts, size_t *n, size_t cap, const uint32_t *config) {
  if (*n >= cap || !named_valid(s, config))
    return 0;
  if (s->default_config && !memcmp(s->default_config, config, s->np * sizeof *config))
    return 0; /* the default's point: measured as the default */
  for (size_t i = 0; i < *n; i++)
    if (!memcmp(*starts + i * s->np, config, s->np * sizeof *config))
      return 0;
  memcpy(*starts + *n * s->np, config, s->np * sizeof *config);
  (*n)++;
  return 0;
}

/* Whether assignment a serializes to the default policy (then the default
 * is measured once, as the default, and never as a search candidate). */
static int default_is_assignment(sweep *s, const uint32_t *a) {
  char *p = NULL, *d = NULL, why[640];
  size_t lp = 0, ld = 0;
  if (!VT_HAS(s, default_policy))
    return 0;
  int same = sweep_serialize(s, 0, a, &p, &lp, why, sizeof why) == 0 &&
             sweep_serialize(s, CALHOST_SWEEP_DEFAULT_INDEX, NULL, &d, &ld, why, sizeof why) == 0 &&
             lp == ld && !memcmp(p, d, lp);
  free(p);
  free(d);
  sweep_plugin_message(s);
  return same;
}

/* [A-Za-z0-9_]+ */
static int parameter_name_ok(const char *s) {
  if (!s || !*s)
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return 0;
  return 1;
}

int sweep_space_defect(const calhost_parameter_space *ps, char *why, size_t cap) {
  size_t np = ps->parameter_count;
  if (!ps->parameters || np < 1 || np > 64)
    return base_str_fail(why, cap, "describe_space gave %zu parameters (1 to 64 allowed)", np);
  for (size_t i = 0; i < np; i++) {
    const calhost_parameter *q = &ps->parameters[i];
    if (!parameter_name_ok(q->name))
      return base_str_fail(why, cap, "parameter %zu: the name must be [A-Za-z0-9_]+", i);
    for (size_t j = 0; j < i; j++)
      if (!strcmp(ps->parameters[j].name, q->name))
        return base_str_fail(why, cap, "parameter '%s' appears twice", q->name);
    if (q->value_count < 1 || !q->values)
      return base_str_fail(why, cap, "parameter '%s' has no values", q->name);
    for (uint32_t v = 0; v < q->value_count; v++) {
      if (!base_str_is_word(q->values[v]))
        return base_str_fail(why, cap,
                             "parameter '%s': value %u is empty, NULL or not a printable word",
                             q->name, v);
      for (uint32_t w = 0; w < v; w++)
        if (!strcmp(q->values[w], q->values[v]))
          return base_str_fail(why, cap, "parameter '%s': value '%s' appears twice", q->name,
                               q->values[v]);
    }
  }
  return 0;
}

/* The plugin's named parameters (ABI 2: describe_space, assignment_valid,
 * serialize_assignment) as the search's space, with the plausible order:
 * the default's assignment, then the numbered candidates (the plugin's
 * curated list, in its order) mapped through policy_assignment when the
 * plugin has it. Returns 1 when set up, 0 when the session has only
 * numbered candidates or describes a space sweep_space_defect refuses
 * (`plugin check` names the defect), -1 when out of memory. */
static int named_space(sweep *s, uint32_t count, uint32_t **starts, size_t *nstart) {
  if (!VT_HAS(s, describe_space) || !VT_HAS(s, assignment_valid) ||
      !VT_HAS(s, serialize_assignment))
    return 0;
  calhost_parameter_space ps;
  memset(&ps, 0, sizeof ps);
  ps.header.struct_type = CALHOST_STRUCT_PARAMETER_SPACE;
  ps.header.struct_version = 1;
  ps.header.struct_size = sizeof ps;
  if (s->vt->describe_space(s->session, &ps) != CALHOST_OK) {
    sweep_plugin_message(s); /* CALHOST_UNSUPPORTED: numbered only */
    return 0;
  }
  char defect[512];
  if (sweep_space_defect(&ps, defect, sizeof defect) != 0) {
    sweep_add_warning(
        s,
        "its described parameter space is unusable (%s), so the %u numbered candidates "
        "were searched instead (`calhost plugin check` names the defect too)",
        defect, count);
    return 0;
  }
  s->named_params = calloc(ps.parameter_count, sizeof *s->named_params);
  if (!s->named_params)
    return -1;
  for (uint32_t i = 0; i < ps.parameter_count; i++) {
    s->named_params[i].name = ps.parameters[i].name;
    s->named_params[i].values = ps.parameters[i].values;
    s->named_params[i].value_count = ps.parameters[i].value_count;
    s->named_params[i].ordered = (ps.parameters[i].flags & CALHOST_PARAMETER_ORDERED) != 0;
  }
  s->params = s->named_params;
  s->np = ps.parameter_count;
  s->named = 1;
  size_t cap = 1 + (count < 1024 ? count : 1024), n = 0;
  uint32_t *a = malloc(s->np * sizeof *a);
  *starts = malloc(cap * s->np * sizeof **starts);
  if (!a || !*starts) {
    free(a);
    return -1;
  }
  if (ps.default_assignment) {
    char err[256] = "";
    if (s->vt->assignment_valid(s->session, ps.default_assignment, s->np, err, sizeof err) !=
        CALHOST_OK) {
      const char *m = sweep_plugin_message(s);
      sweep_add_warning(
          s,
          "the default assignment of its described space is refused by its own "
          "assignment_valid (%s), so the speedup is measured against a default outside "
          "the space",
          err[0] ? err
          : m    ? m
                 : "no reason given");
    } else if (default_is_assignment(s, ps.default_assignment)) {
      s->default_config = ps.default_assignment; /* measured as the default only */
    } else {
      add_start(s, starts, &n, cap, ps.default_assignment);
    }
  }
  if (VT_HAS(s, policy_assignment))
    for (uint32_t i = 0; i < count && n < cap; i++) {
      char *policy = NULL, why[640];
      size_t len = 0;
      if (sweep_serialize(s, i, NULL, &policy, &len, why, sizeof why) == 0 &&
          s->vt->policy_assignment(s->session, policy, len, a, s->np) == CALHOST_OK)
        add_start(s, starts, &n, cap, a);
      free(policy);
      sweep_plugin_message(s);
    }
  free(a);
  *nstart = n;
  return 1;
}

/* The request's warm policies (sweep_request.warm_policies) as
 * configurations of the search's space, each validated by the plugin in
 * this session, into *out (malloc'd, *n of s->np positions each; NULL / 0
 * when none is usable). 0, or -1 when out of memory. */
static int warm_configs(sweep *s, uint32_t **out, size_t *n) {
  const sweep_request *req = s->req;
  size_t nw = req->warm_count;
  *out = NULL;
  *n = 0;
  if (!nw || !req->warm_policies || req->policy_count)
    return 0;
  if (s->named && !VT_HAS(s, policy_assignment))
    return 0;
  /* per warm policy: its configuration and whether the plugin took it */
  uint32_t *cfg = malloc(nw * s->np * sizeof *cfg);
  unsigned char *ok = calloc(nw, 1);
  if (!cfg || !ok) {
    free(cfg);
    free(ok);
    return -1;
  }
  if (s->named) {
    for (size_t w = 0; w < nw; w++) {
      const char *pol = req->warm_policies[w];
      ok[w] = pol && *pol &&
              s->vt->policy_assignment(s->session, pol, strlen(pol), cfg + w * s->np, s->np) ==
                  CALHOST_OK &&
              named_valid(s, cfg + w * s->np);
      sweep_plugin_message(s);
    }
  } else { /* each candidate serialized once, matched against every policy */
    uint32_t most = s->count < SWEEP_WARM_NUMBERED_MAX ? s->count : SWEEP_WARM_NUMBERED_MAX;
    for (uint32_t i = 0; i < most; i++) {
      char *cand = NULL, why[640];
      size_t len = 0;
      if (sweep_serialize(s, i, NULL, &cand, &len, why, sizeof why) == 0)
        for (size_t w = 0; w < nw; w++) {
          const char *pol = req->warm_policies[w];
          if (!ok[w] && pol && strlen(pol) == len && !memcmp(cand, pol, len)) {
            cfg[w] = i;
            ok[w] = 1;
          }
        }
      free(cand);
      sweep_plugin_message(s);
    }
  }
  for (size_t w = 0; w < nw; w++) /* the plugin's, in the request's order */
    if (ok[w])
      memmove(cfg + (*n)++ * s->np, cfg + w * s->np, s->np * sizeof *cfg);
  free(ok);
  if (*n)
    *out = cfg;
  else
    free(cfg);
  return 0;
}

/* The numbered candidates as the search's space: the one ordered parameter
 * "index", the plugin's order (at most 1024 of them) as the plausible
 * order. 0, or -1 when out of memory. */
static int numbered_space(sweep *s, uint32_t count, uint32_t **starts, size_t *nstart) {
  *nstart = count < 1024 ? count : 1024;
  *starts = malloc(*nstart * sizeof **starts);
  if (!*starts || search_numbered(count, &s->param, &s->words) != 0)
    return -1;
  for (size_t i = 0; i < *nstart; i++)
    (*starts)[i] = (uint32_t)i;
  s->params = &s->param;
  s->np = 1;
  return 0;
}

int sweep_space_build(sweep *s, sweep_space *sp) {
  const sweep_request *req = s->req;
  sweep_result *out = s->out;
  uint32_t count = s->count;
  memset(sp, 0, sizeof *sp);
  /* The search's space: the plugin's named parameters when it describes
   * them (ABI 2), else the numbered candidates in the plugin's order. */
  size_t nstart = 0;
  int named = 0;
  if (!req->policy_count) /* explicit candidates (verify): numbered */
    named = named_space(s, count, &sp->starts, &nstart);
  if (named < 0)
    return base_str_fail(out->error, sizeof out->error, "out of memory");
  if (!named && count > SWEEP_MAX_NUMBERED)
    return base_str_fail(out->error, sizeof out->error,
                         "candidate_count %u is more than a numbered space holds (at most %u): "
                         "describe the parameters (describe_space) so that the search need not "
                         "number every candidate",
                         count, SWEEP_MAX_NUMBERED);
  if (!named && numbered_space(s, count, &sp->starts, &nstart) != 0)
    return base_str_fail(out->error, sizeof out->error, "out of memory");
  search_space *space = &sp->space;
  *space = (search_space){.name = req->workload->name,
                          .params = s->params,
                          .param_count = s->np,
                          .user = s, /* the caller sets evaluate */
                          .starts = sp->starts,
                          .start_count = nstart};
  if (named)
    space->valid = named_valid;
  if (warm_configs(s, &sp->warm, &space->warm_count) != 0)
    return base_str_fail(out->error, sizeof out->error, "out of memory");
  space->warm = sp->warm;
  uint64_t size = named ? search_count_valid(space, 1u << 20) : count;
  search_options *so = &sp->so;
  search_options_init(so);
  /* size 0: a described space too large to count, never a curated list */
  int curated = !named || (size && size <= count);
  space->starts_curated = curated && sp->starts != NULL; /* the plugin's list, ranked */
  search_plan(req, size, curated, &so->strategy, &so->max_evaluations, &so->max_seconds);
  so->seed = req->seed ? req->seed : 1;
  out->numbered = !named;
  out->space_size = size;
  out->strategy = (uint32_t)so->strategy;
  out->budget_evaluations = so->max_evaluations;
  out->budget_seconds = so->max_seconds;
  out->planned = so->max_evaluations                    ? so->max_evaluations
                 : size && size <= (uint64_t)UINT32_MAX ? (uint32_t)size
                                                        : 0;
  sp->size = size;
  sp->named = named;
  sp->curated = curated;
  return 0;
}

void sweep_space_free(sweep *s, sweep_space *sp) {
  free(sp->starts);
  free(sp->warm);
  sp->starts = sp->warm = NULL;
  free(s->named_params);
  s->named_params = NULL;
  search_numbered_free(s->words, s->words ? s->count : 0);
  s->words = NULL;
}
