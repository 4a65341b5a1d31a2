/*
 * cmd_model.c: `calhost model show FILE [--dims NAME=N,...] [--json]`: what
 * calhost reads from an ONNX model (host/model/model.h): the nodes it would
 * calibrate (name, ONNX operator, the operator a plugin serves, dtype,
 * shape, structure, how many nodes share the structure), the nodes it
 * skips with the reason, and the model's digest. Reads no configuration,
 * store or plugin.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "commands.h"
#include "config/config.h"
#include "config/values.h"
#include "model/model.h"
#include "workload.h"

static const cli_flag model_flags[] = {
    {FL_DIMS, "--dims", NULL, "NAME=N,...", "bind symbolic dimensions, e.g. batch=8,seq=128"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

static void print_shape(FILE *out, const model_node *n) {
  for (size_t i = 0; i < n->shape_rank; i++)
    fprintf(out, "%s%" PRId64, i ? "," : "", n->shape[i]);
}

static void print_text(FILE *out, const model_info *m) {
  base_text_printf(out, "model %s\n", m->path);
  base_text_printf(out, "  digest %s\n", m->digest);
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
    for (size_t i = 0; i < m->skipped_count; i++)
      base_text_printf(out, "  %s  %s: %s\n", m->skipped[i].name, m->skipped[i].onnx_operator,
                       m->skipped[i].reason);
  }
}

static void print_json(FILE *out, const model_info *m) {
  fputc('{', out);
  base_json_member_string(out, 1, "status", "ok");
  base_json_member_string(out, 0, "file", m->path);
  base_json_member_string(out, 0, "digest", m->digest);
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
    base_json_member_string(out, 0, "reason", m->skipped[i].reason);
    fputc('}', out);
  }
  fputs("]}\n", out);
}

static int run_model(cli_context *cli, cli_args *a) {
  if (!strcmp(a->positional[0], "bench"))
    return cli_model_bench(cli, a);
  if (strcmp(a->positional[0], "show"))
    return cli_usage(a, "unknown subcommand '%s' (show, bench)", a->positional[0]);
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
    return cli_error("model: %s", why);
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
    "   or: calhost model bench FILE [--dims NAME=N,...] [--json]",
    "what calhost reads from an ONNX model; the model's total time (bench)",
    "show: the nodes calhost would calibrate (MatMul, Gemm as MatMul, ReduceSum)\n"
    "with their static shapes, the nodes skipped with the reason (a symbolic\n"
    "dimension --dims does not bind, a shape the file does not give), and the\n"
    "model digest (the file's SHA-256, as sha256sum prints it). Exit 0, or 2\n"
    "when the file is not a readable ONNX model (the error names the file and\n"
    "node). --json prints {status, file, digest, ..., nodes: [{name,\n"
    "onnx_operator, operator, dtype, shape, properties, structure, inputs,\n"
    "count, same_as}], skipped: [{name, onnx_operator, reason}]}.\n"
    "bench: the model's total over its calibrated nodes (each structure's time\n"
    "x its node count), timed interleaved with the configuration's rigor on its\n"
    "first thread count: calhost's selection (lookup --model's choice per node),\n"
    "each backend tuned, each backend's default, and each node's share. --json\n"
    "prints {status, file, digest, rigor, threads, node_count, calibrated_nodes,\n"
    "nodes: [{name, workload, backend, policy, time_us, share}], totals: [{name,\n"
    "backend, kind, total_us, structures_missing}]} (calhost report BENCH.json --html\n"
    "OUT draws it).\n",
    model_flags,
    1,
    2,
    run_model,
};

/* ---- the models of a run ------------------------------------------------ */

static void note_skipped(const cli_context *cli, const char *name, const model_info *m) {
  if (cli->quiet || cli->json)
    return;
  for (size_t i = 0; i < m->skipped_count; i++)
    base_text_printf(stderr, "calhost: note: model %s: node %s (%s) skipped: %s\n", name,
                     m->skipped[i].name, m->skipped[i].onnx_operator, m->skipped[i].reason);
}

int cli_model_workloads(const cli_context *cli, cli_args *a, config_settings *cfg, char ***only,
                        size_t *only_count) {
  char why[1400], where[4200];
  *only = NULL;
  *only_count = 0;
  for (size_t i = 0; i < cfg->model_count; i++) {
    const config_model *cm = &cfg->models[i];
    model_info m;
    base_text_where(where, sizeof where, cm->file_origin.file, cm->file_origin.line);
    if (model_read(cm->file, cm->dims, cm->dim_count, &m, why, sizeof why) != 0)
      return cli_error("%s: [model %s]: %s", where, cm->name, why);
    note_skipped(cli, cm->name, &m);
    long n = model_workloads_add(cfg, &m, cm->name, cm->file_origin, why, sizeof why);
    model_info_free(&m);
    if (n < 0)
      return cli_error("%s: [model %s]: %s", where, cm->name, why);
  }
  const char *file = a->value[FL_MODEL];
  if (!file)
    return 0;
  config_dim *dims = NULL;
  size_t nd = 0;
  if (config_value_dims(a->value[FL_DIMS], &dims, &nd, why, sizeof why) != 0)
    return cli_usage(a, "bad --dims: %s", why);
  model_info m;
  int rc = model_read(file, dims, nd, &m, why, sizeof why);
  config_dims_free(dims, nd);
  if (rc != 0)
    return cli_error("%s: %s", a->command, why);
  char name[256];
  model_name_of_file(file, name, sizeof name);
  note_skipped(cli, name, &m);
  size_t before = cfg->workload_count;
  long n = model_workloads_add(cfg, &m, name, (config_origin){NULL, 0}, why, sizeof why);
  model_info_free(&m);
  if (n < 0)
    return cli_error("%s: --model %s: %s", a->command, file, why);
  *only = malloc((size_t)(n ? n : 1) * sizeof **only);
  if (!*only)
    return cli_error("%s: out of memory", a->command);
  for (size_t i = before; i < cfg->workload_count; i++)
    (*only)[(*only_count)++] = cfg->workloads[i].name;
  return 0;
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

static const char *rule_word(calhost_runtime_rule r) {
  return r == CALHOST_RUNTIME_RULE_CONFIGURED ? "configuration"
         : r == CALHOST_RUNTIME_RULE_RACE     ? "race"
         : r == CALHOST_RUNTIME_RULE_FIRST    ? "loader order"
                                              : "nothing";
}

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
  x->rule = rule_word(ch->rule);
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

int cli_lookup_model(cli_context *cli, cli_args *a) {
  if (cli_has(a, FL_WORKLOAD) || cli_has(a, FL_DEVICE) || cli_has(a, FL_BACKEND) ||
      cli_has(a, FL_OPERATOR) || cli_has(a, FL_MODEL_DIGEST))
    return cli_usage(
        a, "--model takes --node, --dims, --plugin, --threads, --explain and --force-portable");
  const char *file = a->value[FL_MODEL], *only = a->value[FL_NODE];
  char why[4608];
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
  if (!ans) {
    calhost_runtime_close(&rt);
    return cli_error("lookup: out of memory");
  }
  if (cli->json) {
    fputc('{', stdout);
    base_json_member_string(stdout, 1, "status", "ok");
    base_json_member_string(stdout, 0, "file", m->path);
    base_json_member_string(stdout, 0, "digest", m->digest);
    base_json_member_bool(stdout, 0, "force_portable", calhost_runtime_force_portable(rt));
    fputs(",\"nodes\":[", stdout);
  } else if (!cli->quiet) {
    base_text_printf(stdout, "model %s (%s)%s\n", m->path, m->digest,
                     calhost_runtime_force_portable(rt) ? ", force_portable" : "");
  }
  int none = 0, first = 1;
  for (size_t i = 0; i < m->node_count; i++) {
    const calhost_runtime_model_node *n = &m->nodes[i];
    if (only && strcmp(n->name, only))
      continue;
    node_answer *x = &ans[i];
    calhost_runtime_plugin *p = NULL;
    if (!a->value[FL_PLUGIN]) {
      rs = choose_node(rt, n->workload, tc, x);
    } else {
      rs = calhost_runtime_load_plugin(rt, a->value[FL_PLUGIN], n->workload, &p, x->why,
                                       sizeof x->why);
      if (rs == CALHOST_RUNTIME_OK) {
        x->backend = calhost_runtime_plugin_backend(p);
        rs = calhost_runtime_select(rt, p, n->workload, tc, &x->sel, x->why, sizeof x->why);
      }
    }
    if (rs != CALHOST_RUNTIME_OK)
      x->sel = NULL;
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
  calhost_runtime_close(&rt);
  return none ? 1 : 0;
}
