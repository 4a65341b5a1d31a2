/*
 * cmd_model.c: `calhost model show FILE [--dims NAME=N,...] [--json]`: what
 * calhost reads from an ONNX model (host/model/model.h): the nodes it would
 * calibrate (name, ONNX operator, the operator a plugin serves, dtype,
 * shape, structure, how many nodes share the structure), the nodes it
 * skips with the reason, and the model's digest; `model show` reads no
 * configuration, store or plugin. The file also holds the models of a run
 * (cli_model_workloads: a calibrate, plan or verify run's --model and
 * [model NAME] sections as workloads of the configuration) and
 * `lookup --model` (cli_lookup_model: each node's policy through the
 * deployment runtime, which reads the configuration and the store and
 * loads the plugins).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/array.h"
#include "base/json.h"
#include "base/str.h"
#include "base/text.h"
#include "commands.h"
#include "config/config.h"
#include "config/values.h"
#include "model/model.h"
#include "workload.h"

static const cli_flag model_flags[] = {
    {FL_DIMS, "--dims", NULL, "NAME=N,...",
     "bind symbolic dimensions, e.g. batch=8,seq=128 or '\"past_sequence_length + 1\"=129'"},
    {FL_ROUNDS, "--rounds", NULL, "N",
     "bench: rounds over every structure (1): median totals, each ratio's spread"},
    {FL_DEVICE, "--device", NULL, "INDEX|IDENTITY",
     "bench: time the device backends on this device (see calhost devices)"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

static void skip_reason(const model_skip *s, int ini, char *buf, size_t cap);

static void print_shape(FILE *out, const model_node *n) {
  for (size_t i = 0; i < n->shape_rank; i++)
    fprintf(out, "%s%" PRId64, i ? "," : "", n->shape[i]);
}

static void print_text(FILE *out, const model_info *m) {
  base_text_printf(out, "model %s\n", m->path);
  base_text_printf(out, "  digest %s\n", m->digest);
  if (m->binding[0])
    base_text_printf(out, "  binding %s (exact key model digest %s)\n", m->binding, m->key_digest);
  if (m->unbound[0])
    base_text_printf(out, "  needs dims: %s (unbound: their nodes are skipped)\n", m->unbound);
  base_text_printf(
      out, "  %" PRIu64 " bytes, IR version %" PRId64 ", opset %" PRId64 "%s%s, %zu graph node%s\n",
      m->file_size, m->ir_version, m->opset, m->producer[0] ? ", producer " : "", m->producer,
      m->graph_node_count, m->graph_node_count == 1 ? "" : "s");
  base_text_printf(out, "nodes to calibrate: %zu (%zu structure%s)\n", m->node_count,
                   m->structure_count, m->structure_count == 1 ? "" : "s");
  for (size_t i = 0; i < m->node_count; i++) {
    const model_node *n = &m->nodes[i];
    base_text_printf(out, "  %s  %s", n->name, n->onnx_operator);
    if (strcmp(n->onnx_operator, n->operator_name))
      base_text_printf(out, " as %s", n->operator_name);
    fprintf(out, " %s shape=", n->dtype);
    print_shape(out, n);
    for (size_t k = 0; k < n->property_count; k++)
      base_text_printf(out, " %s=%s", n->properties[k].name, n->properties[k].value);
    base_text_printf(out, "  (%s)", n->inputs);
    if (n->count > 1) {
      if (n->first == i)
        fprintf(out, "  x%zu", n->count);
      else
        base_text_printf(out, "  same as %s", m->nodes[n->first].name);
    }
    fputc('\n', out);
  }
  if (m->skipped_count) {
    base_text_printf(out, "skipped: %zu\n", m->skipped_count);
    for (size_t i = 0; i < m->skipped_count; i++) {
      char why[2048];
      skip_reason(&m->skipped[i], 0, why, sizeof why);
      base_text_printf(out, "  %s  %s: %s\n", m->skipped[i].name, m->skipped[i].onnx_operator, why);
    }
  }
}

/* Opens the JSON object of a model's answer (`model show --json`,
 * `lookup --model --json`): status, file, digest, binding and key digest. */
static void json_model_head(FILE *out, const char *path, const char *digest, const char *binding,
                            const char *key_digest) {
  fputc('{', out);
  base_json_member_string(out, 1, "status", "ok");
  base_json_member_string(out, 0, "file", path);
  base_json_member_string(out, 0, "digest", digest);
  base_json_member_string(out, 0, "binding", binding);
  base_json_member_string(out, 0, "key_digest", key_digest);
}

static void print_json(FILE *out, const model_info *m) {
  json_model_head(out, m->path, m->digest, m->binding, m->key_digest);
  base_json_member_string(out, 0, "unbound", m->unbound);
  base_json_member_uint(out, 0, "file_size", m->file_size);
  base_json_member_int(out, 0, "ir_version", m->ir_version);
  base_json_member_int(out, 0, "opset", m->opset);
  base_json_member_string(out, 0, "producer", m->producer);
  base_json_member_uint(out, 0, "graph_nodes", m->graph_node_count);
  base_json_member_uint(out, 0, "structures", m->structure_count);
  fputs(",\"nodes\":[", out);
  for (size_t i = 0; i < m->node_count; i++) {
    const model_node *n = &m->nodes[i];
    fputs(i ? ",\n{" : "\n{", out);
    base_json_member_string(out, 1, "name", n->name);
    base_json_member_string(out, 0, "onnx_operator", n->onnx_operator);
    base_json_member_string(out, 0, "operator", n->operator_name);
    base_json_member_string(out, 0, "dtype", n->dtype);
    fputs(",\"shape\":[", out);
    print_shape(out, n);
    fputs("],\"properties\":{", out);
    for (size_t k = 0; k < n->property_count; k++)
      base_json_member_string(out, k == 0, n->properties[k].name, n->properties[k].value);
    fputc('}', out);
    base_json_member_string(out, 0, "structure", n->structure);
    base_json_member_string(out, 0, "inputs", n->inputs);
    base_json_member_uint(out, 0, "count", n->count);
    base_json_member_string(out, 0, "same_as", n->first == i ? NULL : m->nodes[n->first].name);
    fputc('}', out);
  }
  fputs("],\"skipped\":[", out);
  for (size_t i = 0; i < m->skipped_count; i++) {
    fputs(i ? ",\n{" : "\n{", out);
    base_json_member_string(out, 1, "name", m->skipped[i].name);
    base_json_member_string(out, 0, "onnx_operator", m->skipped[i].onnx_operator);
    char why[2048];
    skip_reason(&m->skipped[i], 0, why, sizeof why);
    base_json_member_string(out, 0, "reason", why);
    base_json_member_string(out, 0, "symbol", m->skipped[i].symbol);
    base_json_member_bool(out, 0, "identity", m->skipped[i].identity);
    fputc('}', out);
  }
  fputs("]}\n", out);
}

static int run_model(cli_context *cli, cli_args *a) {
  if (!strcmp(a->positional[0], "bench"))
    return cli_model_bench(cli, a);
  if (strcmp(a->positional[0], "show"))
    return cli_usage(a, "unknown subcommand '%s' (show, bench)", a->positional[0]);
  if (cli_has(a, FL_ROUNDS) || cli_has(a, FL_DEVICE))
    return cli_usage(a, "%s is bench's", cli_has(a, FL_ROUNDS) ? "--rounds" : "--device");
  if (a->positional_count < 2)
    return cli_usage(a, "show needs a model file");
  const char *path = a->positional[1];
  char why[1024];
  model_dim *dims = NULL;
  size_t nd = 0;
  if (config_value_dims(a->value[FL_DIMS], &dims, &nd, why, sizeof why) != 0)
    return cli_usage(a, "bad --dims: %s", why);
  model_info m;
  int rc = model_read(path, dims, nd, &m, why, sizeof why);
  config_dims_free(dims, nd);
  if (rc != 0) {
    if (cli->json)
      base_json_status_message(stdout, "error", why);
    return cli_error("model show: %s", why);
  }
  if (cli->json)
    print_json(stdout, &m);
  else
    print_text(stdout, &m);
  model_info_free(&m);
  return 0;
}

const cli_command cli_cmd_model = {
    "model",
    "show FILE [--dims NAME=N,...]\n"
    "   or: calhost model bench FILE [--dims NAME=N,...] [--rounds N] [--device N] [--json]",
    "what calhost reads from an ONNX model; the model's total time (bench)",
    "show: the nodes calhost would calibrate (MatMul, Gemm as MatMul, ReduceSum)\n"
    "with their static shapes, the nodes skipped with the reason (a symbolic\n"
    "dimension --dims does not bind, a shape the file does not give), and the\n"
    "model digest (the file's SHA-256, as sha256sum prints it); with --dims the\n"
    "binding the nodes use and the exact key's model digest it gives\n"
    "(sha256:HEX;dims=BINDING). A dimension name that is not a plain word goes\n"
    "in double quotes: --dims '\"past_sequence_length + 1\"=129'. Exit 0, or 2\n"
    "when the file is not a readable ONNX model (the error names the file and\n"
    "node). --json prints {status, file, digest, binding, key_digest, unbound,\n"
    "..., nodes: [{name, onnx_operator, operator, dtype, shape, properties,\n"
    "structure, inputs, count, same_as}], skipped: [{name, onnx_operator,\n"
    "reason, symbol, identity}]}.\n"
    "bench: the model's total over its calibrated nodes (each structure's time\n"
    "x its node count), timed interleaved with the configuration's rigor on its\n"
    "first thread count: calhost's selection (lookup --model's choice per node),\n"
    "each backend tuned, each backend's default, and each node's share. With\n"
    "--rounds N every structure is timed N times over (round after round): each\n"
    "total is the median of its rounds' totals, and its ratio to the selection's\n"
    "total the median of the rounds' ratios with their min-max (the run's noise);\n"
    "the line 'selection / best single backend tuned' says the same of the best.\n"
    "The CPU backends are timed (a device backend is named in a note); with\n"
    "--device INDEX|IDENTITY (as lookup --device) the backends serving that\n"
    "device instead, each on its device as calibrate's race times them, by the\n"
    "device's clock where every one reports it (else the host's, said), and the\n"
    "selection is the runtime's choice for that device.\n"
    "--json prints {status, file, digest, rigor, threads, rounds, node_count,\n"
    "calibrated_nodes, device_spec, device, clock, not_timed: [{backend, why}],\n"
    "nodes: [{name, workload, backend, policy, time_us, share}],\n"
    "totals: [{name, backend, kind, total_us, structures_missing, vs_selection,\n"
    "vs_selection_min, vs_selection_max, round_totals_us}], selection_vs_best_tuned:\n"
    "{median, min, max}} (calhost report BENCH.json --html OUT draws it).\n",
    model_flags,
    1,
    2,
    run_model,
};

/* ---- the models of a run ------------------------------------------------ */

/* A node of a model read for a run: what the unserved report names. */
typedef struct run_node {
  const char *name, *onnx_operator; /* borrowed from strings */
  const char *operator_name;        /* the operator a plugin serves (MatMul for Gemm) */
  char *workload;                   /* NULL: skipped by the reader (why) */
  size_t index;                     /* the workload's index in the configuration */
  char *why;                        /* the reader's reason and how to bind, or NULL */
} run_node;

typedef struct read_model {
  char *label; /* "[model NAME]" or "--model FILE", with the binding when several */
  int in_run;  /* its nodes are the run's (a --model run: only --model's) */
  run_node *nodes;
  size_t node_count;
  char **strings;
  size_t string_count;
} read_model;

struct cli_model_set {
  read_model *models;
  size_t count, cap;
};

void cli_model_set_free(cli_model_set *ms) {
  if (!ms)
    return;
  for (size_t i = 0; i < ms->count; i++) {
    read_model *m = &ms->models[i];
    for (size_t k = 0; k < m->node_count; k++)
      free(m->nodes[k].workload), free(m->nodes[k].why);
    for (size_t k = 0; k < m->string_count; k++)
      free(m->strings[k]);
    free(m->strings), free(m->nodes), free(m->label);
  }
  free(ms->models);
  free(ms);
}

static const char *keep(read_model *r, const char *s) {
  char *c = base_str_dup(s);
  if (c)
    r->strings[r->string_count++] = c;
  return c;
}

/* The reason a node was skipped, with how to bind its symbol in the form
 * the user types (ini: a [model] section's dims =; else --dims). */
static void skip_reason(const model_skip *s, int ini, char *buf, size_t cap) {
  if (!s->symbol) {
    snprintf(buf, cap, "%s", s->reason);
    return;
  }
  char hint[700];
  model_bind_hint(s->symbol, ini, hint, sizeof hint);
  snprintf(buf, cap, "%s (bind it: %s)", s->reason, hint);
}

/* Records model m (read under model_name) in ms: its nodes with their
 * workloads, its skipped nodes with the reason. 0, or -1 out of memory. */
static int record_model(cli_model_set *ms, const model_info *m, const char *model_name,
                        size_t before, const char *label, int ini, int in_run) {
  if (!ms)
    return 0;
  read_model *g = base_array_grow(ms->models, ms->count, &ms->cap, sizeof *g, 4);
  if (!g)
    return -1;
  ms->models = g;
  read_model *r = &ms->models[ms->count++];
  memset(r, 0, sizeof *r);
  size_t n = m->node_count + m->skipped_count;
  r->label = base_str_dup(label);
  r->in_run = in_run;
  r->nodes = calloc(n + 1, sizeof *r->nodes);
  r->strings = calloc(2 * n + 1, sizeof *r->strings);
  if (!r->label || !r->nodes || !r->strings)
    return -1;
  char w[1024], why[2048];
  for (size_t i = 0; i < m->node_count; i++) {
    run_node *x = &r->nodes[r->node_count++];
    model_workload_name(m, i, model_name, w, sizeof w);
    x->name = keep(r, m->nodes[i].name);
    x->onnx_operator = keep(r, m->nodes[i].onnx_operator);
    x->operator_name = !strcmp(m->nodes[i].operator_name, "MatMul") ? "MatMul" : "ReduceSum";
    x->workload = base_str_dup(w);
    /* model_workloads_add appended the structures in node order */
    x->index = m->nodes[i].first == i ? before++ : r->nodes[m->nodes[i].first].index;
    if (!x->name || !x->onnx_operator || !x->workload)
      return -1;
  }
  for (size_t i = 0; i < m->skipped_count; i++) {
    if (m->skipped[i].identity)
      continue; /* nothing to tune */
    run_node *x = &r->nodes[r->node_count++];
    skip_reason(&m->skipped[i], ini, why, sizeof why);
    x->name = keep(r, m->skipped[i].name);
    x->onnx_operator = keep(r, m->skipped[i].onnx_operator);
    x->operator_name =
        !strcmp(x->onnx_operator ? x->onnx_operator : "", "ReduceSum") ? "ReduceSum" : "MatMul";
    x->why = base_str_dup(why);
    if (!x->name || !x->onnx_operator || !x->why)
      return -1;
  }
  return 0;
}

static void note_skipped(const cli_context *cli, const char *cmd, const char *label,
                         const model_info *m, int ini) {
  if (cli->quiet || cli->json)
    return;
  char why[2048];
  for (size_t i = 0; i < m->skipped_count; i++) {
    skip_reason(&m->skipped[i], ini, why, sizeof why);
    base_text_printf(stderr, "calhost: note: %s: %s: node %s (%s) skipped: %s\n", cmd, label,
                     m->skipped[i].name, m->skipped[i].onnx_operator, why);
  }
}

/* Whether the model names model_name can take in cfg: no workload yet
 * starts with "NAME." (the names of the run so far). */
static int name_free(const config_settings *cfg, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i < cfg->model_count; i++)
    if (!strcmp(cfg->models[i].name, name))
      return 0;
  for (size_t i = 0; i < cfg->workload_count; i++)
    if (!strncmp(cfg->workloads[i].name, name, n) && cfg->workloads[i].name[n] == '.')
      return 0;
  return 1;
}

/* The name of binding j of count under base: base itself for one binding,
 * "base-J" (J from 1) for several. */
static void binding_name(const char *base, size_t j, size_t count, char *buf, size_t cap) {
  if (count > 1)
    snprintf(buf, cap, "%s-%zu", base, j + 1);
  else
    snprintf(buf, cap, "%s", base);
}

/* Appends the names of cfg's workloads from index before on to *only. */
static int add_only(const config_settings *cfg, size_t before, char ***only, size_t *only_count) {
  size_t n = cfg->workload_count - before;
  char **g = realloc(*only, (*only_count + n + 1) * sizeof *g);
  if (!g)
    return -1;
  *only = g;
  for (size_t i = before; i < cfg->workload_count; i++)
    g[(*only_count)++] = cfg->workloads[i].name;
  return 0;
}

/* Whether two paths name one file (the same device and inode). */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_model_workloads(const cli_context *cli, cli_args *a, config_settings *cfg, char ***only,
                        size_t *only_count, cli_model_set **models) {
  char why[1400], where[4200], label[600];
  const char *cmd = a->command;
  *only = NULL;
  *only_count = 0;
  if (models)
    *models = NULL;
  const char *file = a->value[FL_MODEL];
  if (!file && a->value[FL_DIMS])
    return cli_usage(a, "--dims binds the symbolic dimensions of --model FILE: give --model (a "
                        "[model NAME] section binds its own with `dims =`)");
  config_binding *bindings = NULL;
  size_t nb = 0;
  if (file && config_value_bindings(a->value[FL_DIMS], &bindings, &nb, why, sizeof why) != 0)
    return cli_usage(a, "bad --dims: %s", why);
  cli_model_set *ms = models ? calloc(1, sizeof *ms) : NULL;
  if (models && !ms) {
    config_bindings_free(bindings, nb);
    return cli_error("%s: out of memory", cmd);
  }
  /* --model naming a [model NAME]'s file: the run is that section's, and
   * its bindings that --dims names (all without --dims) */
  unsigned char *taken = nb ? calloc(nb, 1) : NULL;
  int rc = 0;
  for (size_t i = 0; !rc && i < cfg->model_count; i++) {
    const config_model *cm = &cfg->models[i];
    int mine = file && same_file(file, cm->file);
    size_t count = cm->binding_count ? cm->binding_count : 1;
    base_text_where(where, sizeof where, cm->file_origin.file, cm->file_origin.line);
    for (size_t j = 0; !rc && j < count; j++) {
      const config_binding *b = cm->binding_count ? &cm->bindings[j] : NULL;
      char name[300], canon[1024] = "";
      binding_name(cm->name, j, count, name, sizeof name);
      if (b)
        config_dims_canonical(b->dims, b->count, canon, sizeof canon);
      int wanted = mine && !nb;
      for (size_t k = 0; mine && k < nb; k++) {
        char c2[1024];
        config_dims_canonical(bindings[k].dims, bindings[k].count, c2, sizeof c2);
        if (!strcmp(c2, canon))
          wanted = taken[k] = 1;
      }
      model_info m;
      if (model_read(cm->file, b ? b->dims : NULL, b ? b->count : 0, &m, why, sizeof why) != 0) {
        rc = cli_error("%s: %s: [model %s]: %s", cmd, where, cm->name, why);
        break;
      }
      if (count > 1)
        snprintf(label, sizeof label, "[model %.200s] dims %.300s", cm->name, canon);
      else
        snprintf(label, sizeof label, "[model %s]", cm->name);
      note_skipped(cli, cmd, label, &m, 1);
      size_t before = cfg->workload_count;
      long n = model_workloads_add(cfg, &m, name, cm->file_origin, why, sizeof why);
      if (n < 0)
        rc = cli_error("%s: %s: [model %s]: %s", cmd, where, cm->name, why);
      else if (record_model(ms, &m, name, before, label, 1, !file || wanted) != 0 ||
               (wanted && add_only(cfg, before, only, only_count) != 0))
        rc = cli_error("%s: out of memory", cmd);
      model_info_free(&m);
    }
  }
  /* --model FILE: each --dims binding no section gave (none: the file as
   * it is, unless a section gave the run) */
  int from_section = file && *only_count > 0;
  for (size_t k = 0; !rc && file && k < (nb ? nb : (from_section ? 0 : 1)); k++) {
    if (nb && taken[k])
      continue;
    const config_binding *b = nb ? &bindings[k] : NULL;
    char base[256], name[300], canon[1024] = "";
    model_name_of_file(file, base, sizeof base);
    binding_name(base, k, nb, name, sizeof name);
    for (unsigned suffix = 2; !name_free(cfg, name); suffix++) { /* a section's name */
      char t[280];
      binding_name(base, k, nb, t, sizeof t);
      snprintf(name, sizeof name, "%s-%u", t, suffix);
    }
    if (b)
      config_dims_canonical(b->dims, b->count, canon, sizeof canon);
    model_info m;
    if (model_read(file, b ? b->dims : NULL, b ? b->count : 0, &m, why, sizeof why) != 0) {
      rc = cli_error("%s: --model: %s", cmd, why);
      break;
    }
    if (nb > 1)
      snprintf(label, sizeof label, "--model %.200s --dims %.300s", file, canon);
    else
      snprintf(label, sizeof label, "--model %s", file);
    note_skipped(cli, cmd, label, &m, 0);
    size_t before = cfg->workload_count;
    long n = model_workloads_add(cfg, &m, name, (config_origin){NULL, 0}, why, sizeof why);
    if (n < 0)
      rc = cli_error("%s: --model %s: %s", cmd, file, why);
    else if (record_model(ms, &m, name, before, label, 0, 1) != 0 ||
             add_only(cfg, before, only, only_count) != 0)
      rc = cli_error("%s: out of memory", cmd);
    else if (!m.node_count && m.unbound[0])
      rc = cli_error("%s: --model %s: no node to %s: the model needs its symbolic dimensions "
                     "bound: %s (give --dims, e.g. --dims '%s=N')",
                     cmd, file, cmd, m.unbound, m.unbound);
    else if (!m.node_count)
      rc = cli_error("%s: --model %s: no node to %s (see calhost model show %s)", cmd, file, cmd,
                     file);
    model_info_free(&m);
  }
  free(taken);
  config_bindings_free(bindings, nb);
  if (rc) {
    free(*only);
    *only = NULL;
    *only_count = 0;
    cli_model_set_free(ms);
    return rc;
  }
  if (models)
    *models = ms;
  return 0;
}

/* calibrate's report of the nodes no backend tuned (after the run): each
 * node of a model of the run whose workload no sweep calibrated, and each
 * node the reader skipped (an identity aside). Prints them on stderr, one
 * a line, naming the command; returns how many are of an operator a plugin
 * of the run serves (what fails a --model run). */
size_t cli_model_report_unserved(const cli_model_set *ms, const config_settings *cfg,
                                 const unsigned char *served, char *const *filters,
                                 size_t filter_count, const char *cmd) {
  if (!ms)
    return 0;
  /* whether a plugin of the run serves MatMul, ReduceSum */
  int op_served[2] = {0, 0};
  for (size_t i = 0; i < ms->count; i++)
    for (size_t k = 0; ms->models[i].in_run && k < ms->models[i].node_count; k++) {
      const run_node *x = &ms->models[i].nodes[k];
      if (x->workload && x->index < cfg->workload_count && served[x->index])
        op_served[!strcmp(x->operator_name, "ReduceSum")] = 1;
    }
  size_t listed = 0, failing = 0;
  for (size_t i = 0; i < ms->count; i++) {
    const read_model *m = &ms->models[i];
    for (size_t k = 0; m->in_run && k < m->node_count; k++) {
      const run_node *x = &m->nodes[k];
      if (x->workload && filter_count && !base_str_listed(filters, filter_count, x->workload))
        continue;
      int state = x->workload && x->index < cfg->workload_count ? served[x->index] : 0;
      if (state == 2)
        continue;
      int op = op_served[!strcmp(x->operator_name, "ReduceSum")];
      char why[2300];
      if (x->why)
        snprintf(why, sizeof why, "%s", x->why);
      else if (state == 1)
        snprintf(why, sizeof why,
                 "no backend calibrated it: each declined its structure or failed (the sweeps "
                 "of workload %s above say why)",
                 x->workload);
      else
        snprintf(why, sizeof why, "no plugin of the run serves %s", x->operator_name);
      if (!listed++)
        base_text_printf(stderr, "calhost: %s: nodes left untuned:\n", cmd);
      base_text_printf(stderr, "  %s: node %s (%s): %s\n", m->label, x->name, x->onnx_operator,
                       why);
      failing += state == 1 || (x->why && op);
    }
  }
  return failing;
}

/* ---- lookup --model ----------------------------------------------------- */

typedef struct node_answer {
  calhost_runtime_selection *sel; /* NULL: no plugin or no key (why) */
  char why[600];
  const char *backend;
  /* without --plugin: how the runtime chose the backend, and why */
  const char *rule;
  char reason[1200];
} node_answer;

/* Without --plugin: every enabled plugin serving the node answers and the
 * runtime chooses (calhost_runtime_choose: [model NAME] / [lookup]
 * backends, else the race, else the first with a profile). */
static calhost_runtime_status choose_node(calhost_runtime *rt, const char *workload, uint32_t tc,
                                          node_answer *x) {
  calhost_runtime_choice *ch = NULL;
  calhost_runtime_status rs = calhost_runtime_choose(rt, workload, tc, &ch, x->why, sizeof x->why);
  if (rs != CALHOST_RUNTIME_OK)
    return rs;
  x->sel = ch->selection;
  ch->selection = NULL;
  x->backend = ch->backend;
  for (size_t i = 0; !x->backend && i < ch->candidate_count; i++)
    if (!ch->candidates[i].note)
      x->backend = ch->candidates[i].backend; /* the first answer's "none" */
  x->rule = wl_rule_word(ch->rule);
  snprintf(x->reason, sizeof x->reason, "%s", ch->reason);
  calhost_runtime_choice_free(&ch);
  return x->sel ? CALHOST_RUNTIME_OK : CALHOST_RUNTIME_NOT_FOUND;
}

static void answer_text(const calhost_runtime_model_node *n, const node_answer *x, int explain) {
  base_text_printf(stdout, "%s  %s  ", n->name, n->onnx_operator);
  if (!x->sel) {
    base_text_printf(stdout, "none: %s\n", x->why);
    return;
  }
  const calstore_lookup_result *r = x->sel->result;
  if (r && r->profile)
    base_text_printf(stdout, "%s %s: %s", calstore_level_name(r->level), x->backend,
                     r->profile->policy);
  else
    base_text_printf(stdout, "none: no acceptable profile of %s (%zu rejected)", x->backend,
                     r ? r->rejection_count : 0);
  base_text_printf(stdout, "  [exact model %s]\n", x->sel->exact.model_digest);
  if (explain && x->rule)
    base_text_printf(stdout, "    backend chosen by %s: %s\n", x->rule, x->reason);
}

static void answer_json(const calhost_runtime_model_node *n, const node_answer *x, int first) {
  fputs(first ? "\n{" : ",\n{", stdout);
  base_json_member_string(stdout, 1, "name", n->name);
  base_json_member_string(stdout, 0, "onnx_operator", n->onnx_operator);
  base_json_member_string(stdout, 0, "workload", n->workload);
  base_json_member_bool(stdout, 0, "model_keyed", n->model_keyed);
  const calstore_lookup_result *r = x->sel ? x->sel->result : NULL;
  base_json_member_string(stdout, 0, "backend", x->sel ? x->backend : NULL);
  base_json_member_string(stdout, 0, "exact_model_digest",
                          x->sel ? x->sel->exact.model_digest : NULL);
  base_json_member_string(stdout, 0, "level",
                          r && r->profile ? calstore_level_name(r->level) : NULL);
  base_json_member_string(stdout, 0, "policy", r && r->profile ? r->profile->policy : NULL);
  base_json_member_string(stdout, 0, "message", x->sel ? NULL : x->why);
  if (x->rule) {
    base_json_member_string(stdout, 0, "chosen_by", x->rule);
    base_json_member_string(stdout, 0, "reason", x->reason);
  }
  fputc('}', stdout);
}

/* The answer for node i of m: the one already given for its structure
 * (asked: a hash of the workload names, slots a power of two, node index +
 * 1 of each workload's first), else the runtime's choice, or plugin's
 * selection with --plugin. */
static node_answer *answer_node(calhost_runtime *rt, const calhost_runtime_model *m, size_t i,
                                const char *plugin, uint32_t tc, node_answer *ans, size_t *asked,
                                size_t slots) {
  const calhost_runtime_model_node *n = &m->nodes[i];
  calhost_runtime_status rs;
  node_answer *x = &ans[i];
  size_t h = (size_t)base_str_fnv1a(BASE_STR_FNV_OFFSET, n->workload, strlen(n->workload));
  size_t slot = h & (slots - 1);
  while (asked[slot] && strcmp(m->nodes[asked[slot] - 1].workload, n->workload))
    slot = (slot + 1) & (slots - 1);
  if (asked[slot]) {
    x = &ans[asked[slot] - 1]; /* answered for this structure already */
  } else if (!plugin) {
    asked[slot] = i + 1;
    rs = choose_node(rt, n->workload, tc, x);
  } else {
    asked[slot] = i + 1;
    calhost_runtime_plugin *p = NULL;
    rs = calhost_runtime_load_plugin(rt, plugin, n->workload, &p, x->why, sizeof x->why);
    if (rs == CALHOST_RUNTIME_OK) {
      x->backend = calhost_runtime_plugin_backend(p);
      rs = calhost_runtime_select(rt, p, n->workload, tc, &x->sel, x->why, sizeof x->why);
    }
    if (rs != CALHOST_RUNTIME_OK)
      x->sel = NULL;
  }
  return x;
}

/* The lookup's header: the model, its binding and force_portable (JSON:
 * the object's opening members, up to the nodes array). */
static void model_header(const cli_context *cli, calhost_runtime *rt,
                         const calhost_runtime_model *m) {
  if (cli->json) {
    json_model_head(stdout, m->path, m->digest, m->binding, m->key_digest);
    base_json_member_bool(stdout, 0, "force_portable", calhost_runtime_force_portable(rt));
    fputs(",\"nodes\":[", stdout);
  } else if (!cli->quiet) {
    base_text_printf(stdout, "model %s (%s)%s%s%s\n", m->path, m->digest,
                     m->binding[0] ? ", dims " : "", m->binding,
                     calhost_runtime_force_portable(rt) ? ", force_portable" : "");
  }
}

int cli_lookup_model(cli_context *cli, cli_args *a) {
  if (cli_has(a, FL_WORKLOAD) || cli_has(a, FL_DEVICE) || cli_has(a, FL_BACKEND) ||
      cli_has(a, FL_OPERATOR) || cli_has(a, FL_MODEL_DIGEST))
    return cli_usage(
        a, "--model takes --node, --dims, --plugin, --threads, --explain and --force-portable");
  const char *file = a->value[FL_MODEL], *only = a->value[FL_NODE];
  char why[4608];
  config_dim *dims = NULL;
  size_t nd = 0;
  if (config_value_dims(a->value[FL_DIMS], &dims, &nd, why, sizeof why) != 0)
    return cli_usage(a, "bad --dims: %s (a lookup deploys one binding)", why);
  config_dims_free(dims, nd);
  uint32_t tc = 0;
  if (a->value[FL_THREADS]) {
    if (config_value_thread_count(a->value[FL_THREADS], &tc, why, sizeof why) != 0)
      return cli_usage(a, "bad --threads '%s': %s", a->value[FL_THREADS], why);
    if (tc == 0)
      tc = CALHOST_RUNTIME_THREADS_MAX;
  }
  calhost_runtime *rt = NULL;
  calhost_runtime_status rs =
      wl_runtime_open(cli, cli_has(a, FL_FORCE_PORTABLE) ? 1 : -1, NULL, &rt, why, sizeof why);
  if (rs == CALHOST_RUNTIME_CONFIG && !why[0])
    return 2; /* the command said why */
  const calhost_runtime_model *m = NULL;
  if (rs == CALHOST_RUNTIME_OK)
    rs = calhost_runtime_add_model(rt, file, a->value[FL_DIMS], &m, why, sizeof why);
  if (rs == CALHOST_RUNTIME_OK && m->unbound[0]) {
    /* its policies were calibrated for a binding: without it the nodes
     * that stay would choose another representative, and answer with
     * another structure's policy */
    snprintf(why, sizeof why,
             "%s: the model needs its symbolic dimensions bound: %s (its policies are a "
             "binding's: give the binding it was calibrated with, --dims 'NAME=N,...', each "
             "name as listed)",
             file, m->unbound);
    rs = CALHOST_RUNTIME_INVALID_ARGUMENT;
  }
  if (rs != CALHOST_RUNTIME_OK) {
    if (cli->json)
      base_json_status_message(stdout, "error", why);
    calhost_runtime_close(&rt);
    return cli_error("lookup: %s", why);
  }
  size_t found = 0;
  for (size_t i = 0; i < m->node_count; i++)
    found += !only || !strcmp(m->nodes[i].name, only);
  if (!found) {
    snprintf(why, sizeof why, "%s: no node %s among the %zu listed (see calhost model show)", file,
             only ? only : "", m->node_count);
    if (!only)
      snprintf(why, sizeof why, "%s: no node to select for (see calhost model show)", file);
    if (cli->json)
      base_json_status_message(stdout, "error", why);
    calhost_runtime_close(&rt);
    return cli_error("lookup: %s", why);
  }
  node_answer *ans = calloc(m->node_count, sizeof *ans);
  /* the nodes of one structure share a workload, hence one selection:
   * asked once (a hash of the workload names), so a lookup costs its
   * structures, not its nodes */
  size_t slots = 16;
  while (slots < 2 * m->node_count + 16)
    slots *= 2;
  size_t *asked = calloc(slots, sizeof *asked); /* node index + 1 of each workload's first */
  if (!ans || !asked) {
    free(ans), free(asked);
    calhost_runtime_close(&rt);
    return cli_error("lookup: out of memory");
  }
  model_header(cli, rt, m);
  int none = 0, first = 1;
  for (size_t i = 0; i < m->node_count; i++) {
    const calhost_runtime_model_node *n = &m->nodes[i];
    if (only && strcmp(n->name, only))
      continue;
    node_answer *x = answer_node(rt, m, i, a->value[FL_PLUGIN], tc, ans, asked, slots);
    none += !x->sel || !x->sel->result || !x->sel->result->profile;
    if (cli->json)
      answer_json(n, x, first);
    else
      answer_text(n, x, cli_has(a, FL_EXPLAIN));
    first = 0;
  }
  if (cli->json)
    fputs("]}\n", stdout);
  for (size_t i = 0; i < m->node_count; i++)
    calhost_runtime_selection_free(&ans[i].sel);
  free(ans);
  free(asked);
  calhost_runtime_close(&rt);
  return none ? 1 : 0;
}
