/*
 * cmd_model_bench.c: `calhost model bench FILE [--dims ...] [--json]`
 * (issue 38): the model's own figure. The deployment runtime reads the
 * model and chooses each node's backend (calhost_runtime_choose_model);
 * for every structure of a calibrated node, each backend with a profile
 * runs its tuned policy and its default, interleaved (sweep/race.h, the
 * configuration's rigor, on the configuration's CPU set and first thread
 * count, in this process); the model's total is each structure's time
 * times its node count, summed over the calibrated nodes, for: calhost's
 * selection, each backend tuned (its default where it has no profile),
 * each backend's default; with each node's share of the selection's
 * total. Device backends are not timed here (named in a note).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "calhost/runtime.h"
#include "commands.h"
#include "config/config.h"
#include "processor/processor.h"
#include "runtime/binding.h"
#include "runtime/race.h"
#include "sweep/race.h"
#include "workload.h"

#define MB_MAX_BACKENDS 8

/* One structure (workload) of the model's calibrated nodes. */
typedef struct mb_structure {
  const char *workload;
  size_t nodes;       /* how many nodes share it */
  const char *chosen; /* the selection's backend */
  size_t nb;          /* backends timed */
  const char *backend[MB_MAX_BACKENDS];
  const char *policy[MB_MAX_BACKENDS]; /* tuned (NULL: no profile: its default stands in) */
  double tuned_us[MB_MAX_BACKENDS];    /* NAN: not timed */
  double default_us[MB_MAX_BACKENDS];
  char error[256];
} mb_structure;

/* The backends seen over the model, in order of first appearance. */
typedef struct mb_names {
  const char *name[MB_MAX_BACKENDS];
  size_t n;
} mb_names;

static void names_add(mb_names *b, const char *name) {
  for (size_t i = 0; i < b->n; i++)
    if (!strcmp(b->name[i], name))
      return;
  if (b->n < MB_MAX_BACKENDS)
    b->name[b->n++] = name;
}

static long index_of(const mb_structure *s, const char *backend) {
  for (size_t i = 0; i < s->nb; i++)
    if (!strcmp(s->backend[i], backend))
      return (long)i;
  return -1;
}

/* Times structure s: each backend with a profile (tuned and default),
 * interleaved. */
static void time_structure(calhost_runtime *rt, const calhost_runtime_choice *c, mb_structure *s,
                           const sweep_rigor_params *params, const calhost_target *tg,
                           mb_names *skipped) {
  const config_settings *cfg = runtime_settings_of(rt);
  const config_workload *cw = config_workload_named(cfg, s->workload);
  calhost_workload w;
  runtime_binding_workload(cw, &w);
  sweep_race_entrant e[2 * MB_MAX_BACKENDS];
  size_t n = 0;
  memset(e, 0, sizeof e);
  for (size_t i = 0; i < c->candidate_count && s->nb < MB_MAX_BACKENDS; i++) {
    const calhost_runtime_candidate *x = &c->candidates[i];
    calhost_runtime_plugin *p = NULL;
    const calhost_plugin_vtable *vt;
    uint32_t abi;
    calhost_plugin_instance *inst;
    if (!x->has_profile)
      continue;
    if (calhost_runtime_load_plugin(rt, x->backend, NULL, &p, NULL, 0) != CALHOST_RUNTIME_OK)
      continue;
    int parts = runtime_plugin_parts(p, &vt, &abi, &inst);
    if (parts != 0) {
      if (parts == 1)
        names_add(skipped, x->backend);
      continue;
    }
    size_t k = s->nb++;
    s->backend[k] = x->backend;
    s->policy[k] = x->policy;
    for (int d = 0; d < 2; d++)
      e[n++] = (sweep_race_entrant){.vtable = vt,
                                    .abi_version = abi,
                                    .instance = inst,
                                    .workload = &w,
                                    .target = tg,
                                    .policy = d ? NULL : x->policy};
  }
  sweep_race_run(e, n, params, NULL, NULL);
  for (size_t k = 0; k < s->nb; k++) {
    s->tuned_us[k] = e[2 * k].ok ? e[2 * k].figures.median_us : NAN;
    s->default_us[k] = e[2 * k + 1].ok ? e[2 * k + 1].figures.median_us : NAN;
    if (!e[2 * k].ok && !s->error[0])
      snprintf(s->error, sizeof s->error, "%.60s: %.190s", s->backend[k], e[2 * k].error);
  }
}

/* The total of one configuration over the structures: tuned (1) or
 * default (0) of backend (NULL: the selection). NAN when a structure has
 * no figure for it; *partial counts the structures where backend's default
 * stood in for a missing profile. */
static double total_of(const mb_structure *s, size_t ns, const char *backend, int tuned,
                       size_t *partial) {
  double t = 0;
  *partial = 0;
  for (size_t i = 0; i < ns; i++) {
    long k = index_of(&s[i], backend ? backend : s[i].chosen);
    double v = NAN;
    if (k >= 0)
      v = tuned ? s[i].tuned_us[k] : s[i].default_us[k];
    if (k < 0 && backend) {
      /* no profile of this backend here: it is not timed for this structure */
      (*partial)++;
      continue;
    }
    if (!isfinite(v))
      return NAN;
    t += v * (double)s[i].nodes;
  }
  return t;
}

static void fmt_ms(char *buf, size_t cap, double us) {
  if (!isfinite(us))
    snprintf(buf, cap, "-");
  else if (us >= 1000.0)
    snprintf(buf, cap, "%.3f ms", us / 1000.0);
  else
    snprintf(buf, cap, "%.2f us", us);
}

int cli_model_bench(cli_context *cli, cli_args *a) {
  if (a->positional_count < 2)
    return cli_usage(a, "bench needs a model file");
  const char *file = a->positional[1];
  char why[4608];
  calhost_runtime *rt = NULL;
  calhost_runtime_status rs = wl_runtime_open(cli, -1, NULL, &rt, why, sizeof why);
  if (rs == CALHOST_RUNTIME_CONFIG && !why[0])
    return 2;
  const calhost_runtime_model *m = NULL;
  if (rs == CALHOST_RUNTIME_OK)
    rs = calhost_runtime_add_model(rt, file, a->value[FL_DIMS], &m, why, sizeof why);
  calhost_runtime_model_choice *mc = NULL;
  if (rs == CALHOST_RUNTIME_OK)
    rs = calhost_runtime_choose_model(rt, m, 0, &mc, why, sizeof why);
  if (rs != CALHOST_RUNTIME_OK) {
    calhost_runtime_close(&rt);
    return cli_error("model bench: %s", why);
  }
  const config_settings *cfg = runtime_settings_of(rt);
  sweep_rigor_params params;
  sweep_rigor_params_init(cfg->rigor, cfg->repetitions, &params);
  uint32_t tc = cfg->thread_count_count ? cfg->thread_counts[0] : 1;
  processor_target_list targets;
  memset(&targets, 0, sizeof targets);
  if (runtime_binding_targets(cfg, &tc, 1, &targets, why, sizeof why) != 0) {
    calhost_runtime_model_choice_free(&mc);
    calhost_runtime_close(&rt);
    return cli_error("model bench: %s", why);
  }
  calhost_target tg;
  runtime_binding_target(&targets, 0, &tg);
  processor_pin_thread(targets.cpus, targets.cpu_count, NULL, 0);

  /* the structures of the calibrated nodes, in graph order */
  mb_structure *s = calloc(m->node_count ? m->node_count : 1, sizeof *s);
  size_t ns = 0, calibrated = 0;
  mb_names seen = {{0}, 0}, skipped = {{0}, 0};
  int rc = s ? 0 : cli_error("model bench: out of memory");
  for (size_t i = 0; s && i < mc->node_count; i++) {
    const calhost_runtime_node_choice *n =
        (const calhost_runtime_node_choice *)((const char *)mc->nodes + i * mc->node_stride);
    if (!n->backend)
      continue;
    calibrated++;
    size_t j = 0;
    while (j < ns && strcmp(s[j].workload, n->workload))
      j++;
    if (j == ns) {
      s[ns].workload = n->workload;
      s[ns].chosen = n->backend;
      ns++;
    }
    s[j].nodes++;
  }
  for (size_t j = 0; s && j < ns; j++) {
    calhost_runtime_choice *c = NULL;
    if (calhost_runtime_choose(rt, s[j].workload, 0, &c, why, sizeof why) != CALHOST_RUNTIME_OK) {
      snprintf(s[j].error, sizeof s[j].error, "%.200s", why);
      continue;
    }
    time_structure(rt, c, &s[j], &params, &tg, &skipped);
    for (size_t k = 0; k < s[j].nb; k++)
      names_add(&seen, s[j].backend[k]);
    calhost_runtime_choice_free(&c);
  }
  size_t part;
  double sel = s ? total_of(s, ns, NULL, 1, &part) : NAN;
  FILE *o = stdout;
  if (s && cli->json) {
    fputc('{', o);
    base_json_member_string(o, 1, "status", "ok");
    base_json_member_string(o, 0, "command", "model bench");
    base_json_member_string(o, 0, "file", m->path);
    base_json_member_string(o, 0, "digest", m->digest);
    base_json_member_string(o, 0, "rigor", base_rigor_name(params.rigor));
    fprintf(o, ",\"threads\":%u,\"node_count\":%zu,\"calibrated_nodes\":%zu", (unsigned)tc,
            m->node_count, calibrated);
    fputs(",\"nodes\":[", o);
    for (size_t i = 0, first = 1; i < mc->node_count; i++) {
      const calhost_runtime_node_choice *n =
          (const calhost_runtime_node_choice *)((const char *)mc->nodes + i * mc->node_stride);
      fputs(first ? "\n{" : ",\n{", o);
      first = 0;
      base_json_member_string(o, 1, "name", n->node);
      base_json_member_string(o, 0, "workload", n->workload);
      base_json_member_string(o, 0, "backend", n->backend);
      base_json_member_string(o, 0, "policy", n->policy);
      double us = NAN;
      for (size_t j = 0; n->backend && j < ns; j++)
        if (!strcmp(s[j].workload, n->workload)) {
          long k = index_of(&s[j], n->backend);
          us = k >= 0 ? s[j].tuned_us[k] : NAN;
        }
      base_json_member_number(o, 0, "time_us", us);
      base_json_member_number(o, 0, "share", isfinite(us) && sel > 0 ? us / sel : NAN);
      fputc('}', o);
    }
    fputs("],\"totals\":[", o);
    fputs("\n{", o);
    base_json_member_string(o, 1, "name", "calhost selection");
    base_json_member_string(o, 0, "backend", NULL);
    base_json_member_string(o, 0, "kind", "selection");
    base_json_member_number(o, 0, "total_us", sel);
    fputc('}', o);
    for (size_t b = 0; b < seen.n; b++)
      for (int tuned = 1; tuned >= 0; tuned--) {
        char name[300];
        double t = total_of(s, ns, seen.name[b], tuned, &part);
        snprintf(name, sizeof name, "%s %s", seen.name[b], tuned ? "tuned" : "default");
        fputs(",\n{", o);
        base_json_member_string(o, 1, "name", name);
        base_json_member_string(o, 0, "backend", seen.name[b]);
        base_json_member_string(o, 0, "kind", tuned ? "tuned" : "default");
        base_json_member_number(o, 0, "total_us", part ? NAN : t);
        fprintf(o, ",\"structures_missing\":%zu", part);
        fputc('}', o);
      }
    fputs("]}\n", o);
  } else if (s) {
    base_text_printf(o,
                     "model %s: %zu node%s, %zu calibrated, %zu structure%s (rigor %s, %u "
                     "thread%s, interleaved)\n",
                     m->path, m->node_count, m->node_count == 1 ? "" : "s", calibrated, ns,
                     ns == 1 ? "" : "s", base_rigor_name(params.rigor), (unsigned)tc,
                     tc == 1 ? "" : "s");
    base_text_printf(o, "%-24s %-12s %12s %7s  %s\n", "node", "backend", "time", "share", "policy");
    for (size_t i = 0; i < mc->node_count; i++) {
      const calhost_runtime_node_choice *n =
          (const calhost_runtime_node_choice *)((const char *)mc->nodes + i * mc->node_stride);
      double us = NAN;
      for (size_t j = 0; n->backend && j < ns; j++)
        if (!strcmp(s[j].workload, n->workload)) {
          long k = index_of(&s[j], n->backend);
          us = k >= 0 ? s[j].tuned_us[k] : NAN;
        }
      char t[32], share[16];
      fmt_ms(t, sizeof t, us);
      snprintf(share, sizeof share, isfinite(us) && sel > 0 ? "%.1f%%" : "-", 100.0 * us / sel);
      base_text_printf(o, "%-24s %-12s %12s %7s  %s\n", n->node, n->backend ? n->backend : "none",
                       t, share, n->policy ? n->policy : "(not calibrated)");
    }
    char t[32];
    fmt_ms(t, sizeof t, sel);
    base_text_printf(o, "totals (each node's time x its count, over the calibrated nodes):\n");
    base_text_printf(o, "  %-26s %12s  1.00x\n", "calhost selection", t);
    for (size_t b = 0; b < seen.n; b++)
      for (int tuned = 1; tuned >= 0; tuned--) {
        char name[300];
        double v = total_of(s, ns, seen.name[b], tuned, &part);
        snprintf(name, sizeof name, "%s %s", seen.name[b], tuned ? "tuned" : "default");
        fmt_ms(t, sizeof t, part ? NAN : v);
        if (part)
          base_text_printf(o, "  %-26s %12s  (no profile for %zu structure%s)\n", name, t, part,
                           part == 1 ? "" : "s");
        else
          base_text_printf(o, "  %-26s %12s  %.2fx\n", name, t, v / sel);
      }
    for (size_t j = 0; j < ns; j++)
      if (s[j].error[0])
        base_text_printf(o, "note: %s: %s\n", s[j].workload, s[j].error);
    for (size_t b = 0; b < skipped.n; b++)
      base_text_printf(o, "note: %s drives devices: not timed by model bench\n", skipped.name[b]);
  }
  if (s && !calibrated)
    rc = cli_error("model bench: no node of %s has a profile (calhost calibrate --model %s)", file,
                   file);
  free(s);
  processor_target_list_free(&targets);
  calhost_runtime_model_choice_free(&mc);
  calhost_runtime_close(&rt);
  return rc ? rc : (isfinite(sel) ? 0 : 1);
}
