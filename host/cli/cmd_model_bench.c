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
 * total. Without --device the CPU backends are timed (a device backend is
 * named in a note that says how to time it); with --device INDEX|IDENTITY
 * (the runtime's `device` option, as lookup --device) the backends that
 * serve that device, each with a target naming its device (as calibrate's
 * race builds it), by the device's clock where every entrant reports one
 * (else the host's, said), and the selection is the runtime's choice for
 * that device.
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
#include "config/values.h"
#include "processor/processor.h"
#include "runtime/binding.h"
#include "runtime/race.h"
#include "sweep/race.h"
#include "workload.h"

#define MB_MAX_BACKENDS 8
#define MB_MAX_ROUNDS 100

/* One structure (workload) of the model's calibrated nodes. */
typedef struct mb_structure {
  const char *workload;
  char device[520];   /* --device: the device identity its backends' keys name ("": none) */
  size_t nodes;       /* how many nodes share it */
  const char *chosen; /* the selection's backend */
  size_t nb;          /* backends timed */
  const char *backend[MB_MAX_BACKENDS];
  const char *policy[MB_MAX_BACKENDS]; /* tuned (NULL: no profile: its default stands in) */
  const calhost_plugin_vtable *vt[MB_MAX_BACKENDS];
  uint32_t abi[MB_MAX_BACKENDS];
  calhost_plugin_instance *inst[MB_MAX_BACKENDS];
  uint32_t device_index[MB_MAX_BACKENDS]; /* --device: each backend's index of s->device */
  uint32_t clock[2];                      /* rounds timed by the host's [0], the device's [1] */
  /* per round r: [r * MB_MAX_BACKENDS + k], NAN when not timed */
  double *tuned_us;
  double *default_us;
  char error[256];
} mb_structure;

/* The backends seen over the model, in order of first appearance. */
typedef struct mb_names {
  const char *name[MB_MAX_BACKENDS];
  size_t n;
} mb_names;

/* The run: --device (NULL: the CPU), the backends not timed and why, the
 * device timed (the first structure's) and the clocks of its rounds. */
typedef struct mb_run {
  const char *device_spec;
  mb_names skipped;   /* drive devices (CPU run), run on the CPUs (device run) */
  mb_names elsewhere; /* --device: their index names another device than the selection's */
  const char *device; /* the first timed structure's device identity, NULL: none */
  uint32_t clock[2];  /* rounds of structures timed by the host's, the device's clock */
} mb_run;

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

/* Whether device backend p's keys for s (on the runtime's device) name
 * s's device: its index into s->device_index[k]; s->device set from it
 * when still empty. */
static int on_device(calhost_runtime *rt, calhost_runtime_plugin *p, mb_structure *s, size_t k) {
  calhost_runtime_selection *sel = NULL;
  int same = 0;
  if (calhost_runtime_build_keys(rt, p, s->workload, 0, &sel, NULL, 0) == CALHOST_RUNTIME_OK &&
      sel->device_identity) {
    if (!s->device[0])
      snprintf(s->device, sizeof s->device, "%s", sel->device_identity);
    same = !strcmp(s->device, sel->device_identity);
    s->device_index[k] = sel->device_index;
  }
  calhost_runtime_selection_free(&sel);
  return same;
}

/* The backends of structure s with a profile (c's candidates) that run
 * where the bench times (the host's CPUs; --device: that device, the one
 * the selection's keys name, else the first's): s->backend, policy, vt,
 * abi, inst (and device, device_index). */
static void pick_backends(calhost_runtime *rt, const calhost_runtime_choice *c, mb_structure *s,
                          mb_run *run) {
  if (run->device_spec && c->selection && c->selection->device_identity)
    snprintf(s->device, sizeof s->device, "%s", c->selection->device_identity);
  for (size_t i = 0; i < c->candidate_count && s->nb < MB_MAX_BACKENDS; i++) {
    const calhost_runtime_candidate *x = &c->candidates[i];
    calhost_runtime_plugin *p = NULL;
    if (!x->has_profile)
      continue;
    if (calhost_runtime_load_plugin(rt, x->backend, NULL, &p, NULL, 0) != CALHOST_RUNTIME_OK)
      continue;
    size_t k = s->nb;
    int parts = runtime_plugin_parts(p, &s->vt[k], &s->abi[k], &s->inst[k]);
    if (parts < 0)
      continue;
    if (parts != (run->device_spec != NULL)) {
      names_add(&run->skipped, x->backend);
      continue;
    }
    if (parts == 1 && !on_device(rt, p, s, k)) {
      names_add(&run->elsewhere, x->backend);
      continue;
    }
    s->backend[k] = x->backend;
    s->policy[k] = x->policy;
    s->nb++;
  }
}

/* Round `round` of structure s: each of its backends tuned and default,
 * interleaved, on target 0 of targets (s->device: each backend's target
 * names its device, as calibrate's race builds it). Each entrant's output
 * is checked in round 0 only. */
static void time_structure(calhost_runtime *rt, mb_structure *s, uint32_t round,
                           const sweep_rigor_params *params, const processor_target_list *targets) {
  const config_settings *cfg = runtime_settings_of(rt);
  const config_workload *cw = config_workload_named(cfg, s->workload);
  calhost_workload w;
  runtime_binding_workload(cw, &w);
  calhost_target tg[MB_MAX_BACKENDS];
  sweep_race_entrant e[2 * MB_MAX_BACKENDS];
  size_t n = 0;
  memset(e, 0, sizeof e);
  for (size_t k = 0; k < s->nb; k++) {
    if (s->device[0])
      runtime_binding_device_target(targets, 0, s->device, s->device_index[k], &tg[k]);
    else
      runtime_binding_target(targets, 0, &tg[k]);
  }
  for (size_t k = 0; k < s->nb; k++)
    for (int d = 0; d < 2; d++)
      e[n++] = (sweep_race_entrant){.vtable = s->vt[k],
                                    .abi_version = s->abi[k],
                                    .instance = s->inst[k],
                                    .workload = &w,
                                    .target = &tg[k],
                                    .policy = d ? NULL : s->policy[k],
                                    .checked = round > 0,
                                    .prunable = d};
  sweep_race_run(e, n, params, 0, NULL, NULL);
  /* the race's clock: the device's when every entrant reported one */
  for (size_t i = 0; i < n; i++)
    if (e[i].ok) {
      s->clock[e[i].device_clock ? 1 : 0]++;
      break;
    }
  double *tu = s->tuned_us + (size_t)round * MB_MAX_BACKENDS;
  double *du = s->default_us + (size_t)round * MB_MAX_BACKENDS;
  for (size_t k = 0; k < s->nb; k++) {
    tu[k] = e[2 * k].ok ? e[2 * k].figures.median_us : NAN;
    du[k] = e[2 * k + 1].ok ? e[2 * k + 1].figures.median_us : NAN;
    if (!e[2 * k].ok && !s->error[0])
      snprintf(s->error, sizeof s->error, "%.60s: %.190s", s->backend[k], e[2 * k].error);
  }
}

/* The total of one configuration over the structures in one round: tuned
 * (1) or default (0) of backend (NULL: the selection). NAN when a
 * structure has no figure for it; *partial counts the structures where the
 * backend has no profile (not timed there). */
static double total_of(const mb_structure *s, size_t ns, const char *backend, int tuned,
                       uint32_t round, size_t *partial) {
  double t = 0;
  *partial = 0;
  for (size_t i = 0; i < ns; i++) {
    long k = index_of(&s[i], backend ? backend : s[i].chosen);
    double v = NAN;
    if (k >= 0)
      v = (tuned ? s[i].tuned_us : s[i].default_us)[(size_t)round * MB_MAX_BACKENDS + (size_t)k];
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

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of the n finite values of v (NAN when none); v is reordered. */
static double median_of(double *v, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i]))
      v[k++] = v[i];
  if (!k)
    return NAN;
  qsort(v, k, sizeof *v, cmp_double);
  return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/* A total of the bench: its name, backend (NULL: the selection), kind,
 * each round's total, the median, and its ratio to the selection's total
 * per round (median, min, max). */
typedef struct mb_total {
  char name[300];
  const char *backend;
  int tuned;
  size_t partial;
  double round_us[MB_MAX_ROUNDS];
  double median_us;
  double ratio, ratio_min, ratio_max; /* this / selection, over the rounds */
} mb_total;

/* The ratio's median and range over the rounds of a[r] / b[r]. */
static void ratio_of(const double *a, const double *b, uint32_t rounds, double *median, double *lo,
                     double *hi) {
  double v[MB_MAX_ROUNDS];
  size_t n = 0;
  *lo = *hi = NAN;
  for (uint32_t r = 0; r < rounds; r++)
    if (isfinite(a[r]) && isfinite(b[r]) && b[r] > 0) {
      v[n] = a[r] / b[r];
      if (!n || v[n] < *lo)
        *lo = v[n];
      if (!n || v[n] > *hi)
        *hi = v[n];
      n++;
    }
  *median = median_of(v, n);
}

/* The node time of backend k of structure s: the median over the rounds. */
static double node_us(const mb_structure *s, long k, uint32_t rounds) {
  double v[MB_MAX_ROUNDS];
  if (k < 0)
    return NAN;
  for (uint32_t r = 0; r < rounds; r++)
    v[r] = s->tuned_us[(size_t)r * MB_MAX_BACKENDS + (size_t)k];
  return median_of(v, rounds);
}

static void fmt_ms(char *buf, size_t cap, double us) {
  if (!isfinite(us))
    snprintf(buf, cap, "-");
  else if (us >= 1000.0)
    snprintf(buf, cap, "%.3f ms", us / 1000.0);
  else
    snprintf(buf, cap, "%.2f us", us);
}

/* The selection's time for node n (the median over the rounds), NAN when
 * not timed. */
static double selection_node_us(const calhost_runtime_node_choice *n, const mb_structure *s,
                                size_t ns, uint32_t rounds) {
  for (size_t j = 0; n->backend && j < ns; j++)
    if (!strcmp(s[j].workload, n->workload))
      return node_us(&s[j], index_of(&s[j], n->backend), rounds);
  return NAN;
}

/* The clock of the run's figures: "device" when every structure's race
 * was timed by the device's clock, "host" when none, else "mixed". */
static const char *clock_word(const mb_run *run) {
  return !run->clock[1] ? "host" : run->clock[0] ? "mixed" : "device";
}

/* The backends not timed, as JSON members "not_timed":[{backend, why}]. */
static void json_not_timed(FILE *o, const mb_run *run) {
  fputs(",\"not_timed\":[", o);
  for (int l = 0; l < 2; l++) {
    const mb_names *b = l ? &run->elsewhere : &run->skipped;
    for (size_t i = 0; i < b->n; i++) {
      fputs(l || i ? ",{" : "{", o);
      base_json_member_string(o, 1, "backend", b->name[i]);
      base_json_member_string(o, 0, "why",
                              l                  ? "another device"
                              : run->device_spec ? "runs on the host's CPUs"
                                                 : "drives devices (--device)");
      fputc('}', o);
    }
  }
  fputc(']', o);
}

static const calhost_runtime_node_choice *node_at(const calhost_runtime_model_choice *mc,
                                                  size_t i) {
  return (const calhost_runtime_node_choice *)((const char *)mc->nodes + i * mc->node_stride);
}

/* Prints the bench as JSON (cli_model_bench's contract). */
static void print_json(FILE *o, const calhost_runtime_model *m,
                       const calhost_runtime_model_choice *mc, const mb_structure *s, size_t ns,
                       const mb_total *t, size_t nt, uint32_t rounds, uint32_t tc,
                       size_t calibrated, const sweep_rigor_params *params, const mb_total *best,
                       const mb_run *run) {
  double sel = t[0].median_us;
  fputc('{', o);
  base_json_member_string(o, 1, "status", "ok");
  base_json_member_string(o, 0, "command", "model bench");
  base_json_member_string(o, 0, "file", m->path);
  base_json_member_string(o, 0, "digest", m->digest);
  base_json_member_string(o, 0, "rigor", base_rigor_name(params->rigor));
  fprintf(o, ",\"threads\":%u,\"rounds\":%u,\"node_count\":%zu,\"calibrated_nodes\":%zu",
          (unsigned)tc, (unsigned)rounds, m->node_count, calibrated);
  base_json_member_string(o, 0, "device_spec", run->device_spec);
  base_json_member_string(o, 0, "device", run->device);
  base_json_member_string(o, 0, "clock", clock_word(run));
  json_not_timed(o, run);
  fputs(",\"nodes\":[", o);
  for (size_t i = 0; i < mc->node_count; i++) {
    const calhost_runtime_node_choice *n = node_at(mc, i);
    fputs(i ? ",\n{" : "\n{", o);
    base_json_member_string(o, 1, "name", n->node);
    base_json_member_string(o, 0, "workload", n->workload);
    base_json_member_string(o, 0, "backend", n->backend);
    base_json_member_string(o, 0, "policy", n->policy);
    double us = selection_node_us(n, s, ns, rounds);
    base_json_member_number(o, 0, "time_us", us);
    base_json_member_number(o, 0, "share", isfinite(us) && sel > 0 ? us / sel : NAN);
    fputc('}', o);
  }
  fputs("],\"totals\":[", o);
  for (size_t c = 0; c < nt; c++) {
    fputs(c ? ",\n{" : "\n{", o);
    base_json_member_string(o, 1, "name", t[c].name);
    base_json_member_string(o, 0, "backend", t[c].backend);
    base_json_member_string(o, 0, "kind",
                            !t[c].backend ? "selection"
                            : t[c].tuned  ? "tuned"
                                          : "default");
    base_json_member_number(o, 0, "total_us", t[c].partial ? NAN : t[c].median_us);
    if (t[c].backend)
      fprintf(o, ",\"structures_missing\":%zu", t[c].partial);
    base_json_member_number(o, 0, "vs_selection", t[c].partial ? NAN : t[c].ratio);
    base_json_member_number(o, 0, "vs_selection_min", t[c].partial ? NAN : t[c].ratio_min);
    base_json_member_number(o, 0, "vs_selection_max", t[c].partial ? NAN : t[c].ratio_max);
    fputs(",\"round_totals_us\":[", o);
    for (uint32_t r = 0; r < rounds; r++) {
      if (r)
        fputc(',', o);
      if (isfinite(t[c].round_us[r]) && !t[c].partial)
        fprintf(o, "%.17g", t[c].round_us[r]);
      else
        fputs("null", o);
    }
    fputs("]}", o);
  }
  fputs("],\"selection_vs_best_tuned\":{", o);
  base_json_member_number(o, 1, "median", best->ratio);
  base_json_member_number(o, 0, "min", best->ratio_min);
  base_json_member_number(o, 0, "max", best->ratio_max);
  fputs("}}\n", o);
}

/* Prints the bench as text (cli_model_bench's contract). */
static void print_text(FILE *o, const calhost_runtime_model *m,
                       const calhost_runtime_model_choice *mc, const mb_structure *s, size_t ns,
                       const mb_total *t, size_t nt, uint32_t rounds, uint32_t tc,
                       size_t calibrated, const sweep_rigor_params *params, const mb_total *best,
                       const mb_run *run) {
  double sel = t[0].median_us;
  char where[700];
  if (run->device_spec)
    snprintf(where, sizeof where, "device %.520s, %s clock", run->device_spec, clock_word(run));
  else
    snprintf(where, sizeof where, "%u thread%s", (unsigned)tc, tc == 1 ? "" : "s");
  base_text_printf(o,
                   "model %s: %zu node%s, %zu calibrated, %zu structure%s (rigor %s, %s, "
                   "interleaved, %u round%s)\n",
                   m->path, m->node_count, m->node_count == 1 ? "" : "s", calibrated, ns,
                   ns == 1 ? "" : "s", base_rigor_name(params->rigor), where, (unsigned)rounds,
                   rounds == 1 ? "" : "s");
  if (run->device)
    base_text_printf(o, "device %s: %s\n", run->device_spec, run->device);
  base_text_printf(o, "%-24s %-12s %12s %7s  %s\n", "node", "backend", "time", "share", "policy");
  for (size_t i = 0; i < mc->node_count; i++) {
    const calhost_runtime_node_choice *n = node_at(mc, i);
    double us = selection_node_us(n, s, ns, rounds);
    char tm[32], share[16];
    fmt_ms(tm, sizeof tm, us);
    snprintf(share, sizeof share, isfinite(us) && sel > 0 ? "%.1f%%" : "-", 100.0 * us / sel);
    base_text_printf(o, "%-24s %-12s %12s %7s  %s\n", n->node, n->backend ? n->backend : "none", tm,
                     share, n->policy ? n->policy : "(not calibrated)");
  }
  base_text_printf(o, "totals (each node's time x its count, over the calibrated nodes%s):\n",
                   rounds > 1 ? "; the median of the rounds, and the ratio to the selection's "
                                "total: median (min-max of the rounds)"
                              : "");
  for (size_t c = 0; c < nt; c++) {
    char tm[32];
    fmt_ms(tm, sizeof tm, t[c].partial ? NAN : t[c].median_us);
    if (t[c].partial)
      base_text_printf(o, "  %-26s %12s  (no profile for %zu structure%s)\n", t[c].name, tm,
                       t[c].partial, t[c].partial == 1 ? "" : "s");
    else if (rounds > 1 && isfinite(t[c].ratio))
      base_text_printf(o, "  %-26s %12s  %.3fx (%.3f-%.3f)\n", t[c].name, tm, t[c].ratio,
                       t[c].ratio_min, t[c].ratio_max);
    else if (isfinite(t[c].ratio))
      base_text_printf(o, "  %-26s %12s  %.2fx\n", t[c].name, tm, t[c].ratio);
    else
      base_text_printf(o, "  %-26s %12s  -\n", t[c].name, tm);
  }
  if (isfinite(best->ratio))
    base_text_printf(
        o, "selection / best single backend tuned: %.3fx (%.3f-%.3f over %u round%s)\n",
        best->ratio, best->ratio_min, best->ratio_max, (unsigned)rounds, rounds == 1 ? "" : "s");
  for (size_t j = 0; j < ns; j++)
    if (s[j].error[0])
      base_text_printf(o, "note: %s: %s\n", s[j].workload, s[j].error);
  for (size_t b = 0; b < run->skipped.n; b++)
    base_text_printf(o,
                     run->device_spec
                         ? "note: %s runs on the host's CPUs: not timed on a device (model bench "
                           "without --device times it)\n"
                         : "note: %s drives devices: not timed on the CPUs (time its device with "
                           "model bench --device N, see calhost devices)\n",
                     run->skipped.name[b]);
  if (run->device_spec && !run->device)
    base_text_printf(
        o, "note: no backend with a profile here serves device %s (see calhost devices)\n",
        run->device_spec);
  for (size_t b = 0; b < run->elsewhere.n; b++)
    base_text_printf(o, "note: %s: its device %s is not %s: not timed with it\n",
                     run->elsewhere.name[b], run->device_spec, run->device ? run->device : "");
}

/* The structures of a model's calibrated nodes, in graph order, into s
 * (room for every node): each with its node count and `rounds` x
 * MB_MAX_BACKENDS figures set to NAN. Sets *ns and *calibrated (nodes with
 * a backend). Returns 0, or the status of an out-of-memory error. */
static int collect_structures(const calhost_runtime_model_choice *mc, uint32_t rounds,
                              mb_structure *s, size_t *ns_out, size_t *calibrated) {
  size_t ns = 0;
  int rc = 0;
  for (size_t i = 0; !rc && i < mc->node_count; i++) {
    const calhost_runtime_node_choice *n = node_at(mc, i);
    if (!n->backend)
      continue;
    (*calibrated)++;
    size_t j = 0;
    while (j < ns && strcmp(s[j].workload, n->workload))
      j++;
    if (j == ns) {
      s[ns].workload = n->workload;
      s[ns].chosen = n->backend;
      s[ns].tuned_us = malloc((size_t)rounds * MB_MAX_BACKENDS * sizeof(double));
      s[ns].default_us = malloc((size_t)rounds * MB_MAX_BACKENDS * sizeof(double));
      ns++;
      if (!s[j].tuned_us || !s[j].default_us)
        rc = cli_error("model bench: out of memory");
      for (size_t x = 0; !rc && x < (size_t)rounds * MB_MAX_BACKENDS; x++)
        s[j].tuned_us[x] = s[j].default_us[x] = NAN;
    }
    s[j].nodes++;
  }
  *ns_out = ns;
  return rc;
}

/* The totals of a bench into t (room for 1 + 2 * MB_MAX_BACKENDS): calhost's
 * selection first, then each backend seen tuned and default, each with its
 * rounds, median and ratio to the selection; *best the best complete single
 * backend tuned per round and the selection's ratio to it. Returns the
 * number of totals. */
static size_t compute_totals(const mb_structure *s, size_t ns, const mb_names *seen,
                             uint32_t rounds, mb_total *t, mb_total *best) {
  size_t nt = 0;
  snprintf(t[nt].name, sizeof t[nt].name, "calhost selection");
  t[nt].tuned = 1;
  nt++;
  for (size_t b = 0; b < seen->n; b++)
    for (int tuned = 1; tuned >= 0; tuned--) {
      snprintf(t[nt].name, sizeof t[nt].name, "%s %s", seen->name[b], tuned ? "tuned" : "default");
      t[nt].backend = seen->name[b];
      t[nt].tuned = tuned;
      nt++;
    }
  for (size_t c = 0; c < nt; c++) {
    double v[MB_MAX_ROUNDS];
    for (uint32_t r = 0; r < rounds; r++) {
      size_t part;
      t[c].round_us[r] = total_of(s, ns, t[c].backend, t[c].tuned, r, &part);
      t[c].partial = part;
      v[r] = t[c].round_us[r];
    }
    t[c].median_us = median_of(v, rounds);
  }
  for (size_t c = 0; c < nt; c++)
    ratio_of(t[c].round_us, t[0].round_us, rounds, &t[c].ratio, &t[c].ratio_min, &t[c].ratio_max);
  /* the best single backend tuned, per round (complete totals only) */
  for (uint32_t r = 0; r < rounds; r++) {
    best->round_us[r] = NAN;
    for (size_t c = 1; c < nt; c++)
      if (t[c].tuned && !t[c].partial && isfinite(t[c].round_us[r]) &&
          !(best->round_us[r] <= t[c].round_us[r]))
        best->round_us[r] = t[c].round_us[r];
  }
  ratio_of(t[0].round_us, best->round_us, rounds, &best->ratio, &best->ratio_min, &best->ratio_max);
  return nt;
}

/* The backends of each structure (the runtime's candidates with a
 * profile, pick_backends), the backends seen into *seen, and run->device
 * the first structure's device with a backend. */
static void plan_structures(calhost_runtime *rt, mb_structure *s, size_t ns, mb_names *seen,
                            mb_run *run) {
  char why[4608];
  for (size_t j = 0; j < ns; j++) {
    calhost_runtime_choice *c = NULL;
    if (calhost_runtime_choose(rt, s[j].workload, 0, &c, why, sizeof why) != CALHOST_RUNTIME_OK) {
      snprintf(s[j].error, sizeof s[j].error, "%.200s", why);
      continue;
    }
    pick_backends(rt, c, &s[j], run);
    for (size_t k = 0; k < s[j].nb; k++)
      names_add(seen, s[j].backend[k]);
    if (!run->device && s[j].nb && s[j].device[0])
      run->device = s[j].device;
    calhost_runtime_choice_free(&c);
  }
}

int cli_model_bench(cli_context *cli, cli_args *a) {
  if (a->positional_count < 2)
    return cli_usage(a, "bench needs a model file");
  const char *file = a->positional[1];
  char why[4608];
  uint32_t rounds = 1;
  if (cli_has(a, FL_ROUNDS)) {
    unsigned long long v;
    if (config_value_uint(a->value[FL_ROUNDS], 1, MB_MAX_ROUNDS, &v, why, sizeof why) != 0)
      return cli_usage(a, "--rounds: '%s': %s", a->value[FL_ROUNDS], why);
    rounds = (uint32_t)v;
  }
  mb_run run = {.device_spec = a->value[FL_DEVICE]};
  calhost_runtime *rt = NULL;
  calhost_runtime_status rs = wl_runtime_open(cli, -1, run.device_spec, &rt, why, sizeof why);
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
  processor_pin_thread(targets.cpus, targets.cpu_count, NULL, 0);

  /* the structures of the calibrated nodes, in graph order */
  mb_structure *s = calloc(m->node_count ? m->node_count : 1, sizeof *s);
  mb_total *t = calloc(1 + 2 * MB_MAX_BACKENDS, sizeof *t);
  size_t ns = 0, nt = 0, calibrated = 0;
  mb_names seen = {{0}, 0};
  int rc = s && t ? 0 : cli_error("model bench: out of memory");
  if (!rc)
    rc = collect_structures(mc, rounds, s, &ns, &calibrated);
  if (!rc)
    plan_structures(rt, s, ns, &seen, &run);
  /* rounds over every structure: a total's rounds are comparable with the
   * other totals' same rounds (the same minutes of the machine) */
  for (uint32_t r = 0; !rc && r < rounds; r++)
    for (size_t j = 0; j < ns; j++)
      if (s[j].nb)
        time_structure(rt, &s[j], r, &params, &targets);
  for (size_t j = 0; !rc && j < ns; j++)
    for (int k = 0; k < 2; k++)
      run.clock[k] += s[j].clock[k];
  mb_total best = {.ratio = NAN, .ratio_min = NAN, .ratio_max = NAN};
  if (!rc)
    nt = compute_totals(s, ns, &seen, rounds, t, &best);
  if (!rc && cli->json)
    print_json(stdout, m, mc, s, ns, t, nt, rounds, tc, calibrated, &params, &best, &run);
  else if (!rc)
    print_text(stdout, m, mc, s, ns, t, nt, rounds, tc, calibrated, &params, &best, &run);
  if (!rc && !calibrated)
    rc = cli_error("model bench: no node of %s has a profile (calhost calibrate --model %s)", file,
                   file);
  double sel = nt ? t[0].median_us : NAN;
  for (size_t j = 0; s && j < ns; j++) {
    free(s[j].tuned_us);
    free(s[j].default_us);
  }
  free(s);
  free(t);
  processor_target_list_free(&targets);
  calhost_runtime_model_choice_free(&mc);
  calhost_runtime_close(&rt);
  return rc ? rc : (isfinite(sel) ? 0 : 1);
}
