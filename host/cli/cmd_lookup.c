/*
 * cmd_lookup.c: `calhost lookup`, both of its forms:
 *   lookup --backend B --operator OP --implementation V [exact key]
 *          [--structure N=V]... [--force-portable]
 *       walks the store's precedence for a key given on the command line
 *       with the validator of the plugin serving B (unvalidated, and saying
 *       so, when that plugin cannot be found or loaded);
 *   lookup --workload W [--plugin B] [--threads N|max] [--device D] [--explain]
 *       builds the exact and portable keys of a configured workload through
 *       the plugin's key-builder for this machine and walks the precedence
 *       with the plugin's validator; without --plugin, every enabled plugin
 *       serving the workload's operator answers and the runtime chooses
 *       (calhost_runtime_choose: [model NAME] / [lookup] backends, else the
 *       race calibrate recorded between them, else the first in the
 *       loader's order with a profile);
 *   both through the deployment runtime (workload.c, host/runtime): its
 *   store, its force_portable (--force-portable, else [lookup]) and its
 *   plugin loading; --explain (workload form) shows every level.
 * --json prints the lookup result object (store_json.h) either way. Exit 0
 * when a profile was selected, 1 when none, 2 on errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "commands.h"
#include "config/config.h"
#include "runtime/binding.h"
#include "store_json.h"
#include "workload.h"

static const cli_flag lookup_flags[] = {
    {FL_WORKLOAD, "--workload", NULL, "NAME", "the configured workload (deployment form)"},
    {FL_PLUGIN, "--plugin", NULL, "BACKEND",
     "with --workload/--model: the plugin to ask (default: every one serving it; the "
     "configured order, else the race, chooses)"},
    {FL_EXPLAIN, "--explain", NULL, NULL,
     "with --workload: every precedence level; both forms: why the backend was chosen"},
    {FL_THREADS, "--threads", NULL, "N", "thread count of the exact key (--workload: N or max)"},
    {FL_DEVICE, "--device", NULL, "INDEX|IDENTITY",
     "with --workload: the device of a device backend (see calhost devices)"},
    WL_KEY_FLAGS,
    {FL_FORCE_PORTABLE, "--force-portable", NULL, NULL, "skip the exact levels"},
    {FL_MODEL, "--model", NULL, "FILE", "an ONNX model: the policy of each node (cmd_model.c)"},
    {FL_NODE, "--node", NULL, "NAME", "with --model: only this node"},
    {FL_DIMS, "--dims", NULL, "NAME=N,...", "with --model: bind symbolic dimensions"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

/* ---- the key form ----------------------------------------------------- */

/* --json's answer when the runtime could not open the store: the store's
 * status and file as a diagnostic. The runtime words the failure in one
 * line (already printed); the status and file come from opening the store
 * once more through the binding (only on this failure path). */
static void store_failure_json(const cli_context *cli) {
  cli_context quiet = *cli; /* "no configuration file found" was said once */
  quiet.quiet = 1;
  config_settings cfg;
  calstore *s = NULL;
  calstore_status st = CALSTORE_UNREADABLE;
  if (cli_load_config(&quiet, &cfg) == 0) {
    st = runtime_binding_open_store(&cfg, cli->store_path, &s, NULL, 0);
    config_free(&cfg);
  }
  cli_json_lookup_result(stdout, NULL, st != CALSTORE_OK ? st : CALSTORE_UNREADABLE,
                         s ? calstore_path(s) : NULL, NULL, NULL);
  calstore_close(&s);
}

/* The key form: the key from the command line, the store, the configuration
 * and the plugin serving --backend through the deployment runtime, as the
 * workload form has them: force_portable is the runtime's (--force-portable,
 * else [lookup] force_portable), each candidate goes through the plugin's
 * validator (loaded with its [plugin NAME] settings, probed in a child).
 * When that plugin cannot be found or loaded the lookup still answers,
 * unvalidated, and says so (stderr and a "not_validated" diagnostic).
 * Returns 0 selected, 1 none, 2 on errors. */
static int lookup_key(cli_context *cli, cli_args *a) {
  calstore_property structure[CALHOST_CLI_MAX_STRUCTURE];
  calstore_key k;
  int rc = cli_key_flags(a, 0, 1, &k, structure);
  if (rc)
    return rc;
  wl_ctx c;
  char unvalidated[4700];
  /* --force-portable forces it; else the configuration's [lookup] */
  calhost_runtime_status rs =
      wl_open_key(cli, "lookup", k.backend, cli_has(a, FL_FORCE_PORTABLE) ? 1 : -1, &c, unvalidated,
                  sizeof unvalidated);
  if (rs != CALHOST_RUNTIME_OK) {
    if (cli->json && rs == CALHOST_RUNTIME_STORE)
      store_failure_json(cli);
    else if (cli->json)
      cli_json_lookup_result(stdout, NULL,
                             rs == CALHOST_RUNTIME_CONFIG ? CALSTORE_INVALID_ARGUMENT
                                                          : CALSTORE_NO_MEMORY,
                             NULL, NULL, NULL);
    return 2;
  }
  calhost_runtime *rt = c.rt;
  calhost_runtime_plugin *plugin = c.plugin;
  calstore_lookup_options o =
      runtime_binding_lookup_options(&k, NULL, calhost_runtime_force_portable(rt));
  calstore_lookup_result *r = NULL;
  calstore_error err = {0};
  calstore_status st =
      calstore_lookup(calhost_runtime_store(rt), &o,
                      plugin ? calhost_runtime_validate_policy : NULL, plugin, &r, &err);
  if (!r) {
    cli_store_failed("lookup", st, &err);
    wl_close(&c);
    return 2;
  }
  if (cli->json) {
    cli_json_lookup_result(stdout, r, st, NULL, unvalidated[0] ? k.backend : NULL,
                           unvalidated[0] ? unvalidated : NULL);
  } else {
    if (r->profile) {
      printf("selected (%s): ", calstore_level_name(r->level));
      cli_text_profile(stdout, r->profile);
    } else {
      printf("no profile selected\n");
    }
    for (size_t i = 0; i < r->rejection_count; i++) {
      const calstore_rejection *x = &r->rejections[i];
      base_text_printf(stdout, "rejected (%s: %s): ", calstore_reject_reason_name(x->reason),
                       x->message ? x->message : "");
      cli_text_profile(stdout, &x->profile);
    }
  }
  int code = r->status == CALSTORE_OK ? 0 : 1;
  calstore_lookup_result_free(&r);
  wl_close(&c);
  return code;
}

/* ---- the workload form -------------------------------------------------- */

static int profile_level(const calstore_profile *p) {
  int exact = p->key.kind == CALSTORE_KEY_EXACT;
  if (p->source == CALSTORE_SOURCE_OVERRIDE)
    return exact ? CALSTORE_LEVEL_EXACT_OVERRIDE : CALSTORE_LEVEL_PORTABLE_OVERRIDE;
  return exact ? CALSTORE_LEVEL_EXACT_CALIBRATED : CALSTORE_LEVEL_PORTABLE_CALIBRATED;
}

static int same_text(const char *a, const char *b) {
  return !strcmp(a ? a : "", b ? b : "");
}

/* Whether the structures hold the same properties (in any order). */
static int same_structure(const calstore_key *a, const calstore_key *b) {
  if (a->structure_count != b->structure_count)
    return 0;
  for (size_t i = 0; i < a->structure_count; i++) {
    int found = 0;
    for (size_t j = 0; j < b->structure_count && !found; j++)
      found = same_text(a->structure[i].name, b->structure[j].name) &&
              same_text(a->structure[i].value, b->structure[j].value);
    if (!found)
      return 0;
  }
  return 1;
}

/* Whether a rejected profile is one of the asked keys (the exact key: its
 * model, processor and thread count; the portable key: its structure),
 * whatever its implementation: its policy refused, an older implementation
 * of it, the exact key skipped by force_portable. The others are the
 * backend's profiles for other keys. */
static int about_this_key(const calstore_rejection *x, const calhost_runtime_selection *sel) {
  const calstore_key *k = &x->profile.key;
  if (k->kind == CALSTORE_KEY_EXACT)
    return same_text(k->model_digest, sel->exact.model_digest) &&
           same_text(k->processor, sel->exact.processor) &&
           k->thread_count == sel->exact.thread_count;
  return same_structure(k, &sel->portable);
}

/* --explain: the keys, each level with the rejections that concern the
 * asked key, then a count of the backend's profiles for other keys by
 * reason (each listed at its level with verbose). */
static void explain(FILE *o, const calhost_runtime_selection *sel, const calstore_lookup_result *r,
                    int verbose) {
  const calstore_key *ek = &sel->exact, *pk = &sel->portable;
  int force_portable = sel->force_portable;
  base_text_printf(o, "lookup %s %s implementation %s (workload %s)\n", ek->backend,
                   ek->operator_name, ek->implementation, sel->workload);
  base_text_printf(o, "  exact key:    model %s\n", ek->model_digest);
  base_text_printf(o, "                processor %s\n", ek->processor);
  base_text_printf(o, "                threads %u\n", ek->thread_count);
  if (sel->device_identity)
    base_text_printf(o, "  device:       %u (%s)\n", sel->device_index, sel->device_identity);
  char structure[4096] = "";
  for (size_t i = 0, n = 0; i < pk->structure_count; i++)
    n += (size_t)snprintf(structure + n, n < sizeof structure ? sizeof structure - n : 0, " %s=%s",
                          pk->structure[i].name, pk->structure[i].value);
  base_text_printf(o, "  portable key:%s\n", structure);
  fprintf(o, "  force_portable: %s\n", force_portable ? "yes" : "no");
  for (int lvl = CALSTORE_LEVEL_EXACT_OVERRIDE; lvl <= CALSTORE_LEVEL_PORTABLE_CALIBRATED; lvl++) {
    const char *what;
    int exact = lvl == CALSTORE_LEVEL_EXACT_OVERRIDE || lvl == CALSTORE_LEVEL_EXACT_CALIBRATED;
    if (force_portable && exact)
      what = "skipped (force_portable)";
    else if ((int)r->level == lvl)
      what = "SELECTED";
    else if (r->level != CALSTORE_LEVEL_NONE && lvl > (int)r->level)
      what = "not consulted (a higher level was selected)";
    else
      what = "no acceptable profile";
    fprintf(o, "  %d. %-20s %s\n", lvl, calstore_level_name((calstore_level)lvl), what);
    for (size_t i = 0; i < r->rejection_count; i++) {
      const calstore_rejection *x = &r->rejections[i];
      if (profile_level(&x->profile) == lvl && (verbose || about_this_key(x, sel)))
        base_text_printf(o, "       rejected [%s] %s: policy %s\n",
                         calstore_reject_reason_name(x->reason), x->message ? x->message : "",
                         x->profile.policy);
    }
  }
  /* the backend's profiles for other keys (another model, structure,
   * processor, thread count): counted by reason, listed with --verbose */
  size_t others[CALSTORE_REJECT_FORCE_PORTABLE + 1] = {0}, other_total = 0;
  for (size_t i = 0; i < r->rejection_count; i++)
    if (!about_this_key(&r->rejections[i], sel) &&
        (unsigned)r->rejections[i].reason <= CALSTORE_REJECT_FORCE_PORTABLE) {
      others[r->rejections[i].reason]++;
      other_total++;
    }
  if (other_total) {
    fprintf(o, "  %s%zu other profile%s of %s %s, for other keys (",
            verbose ? "listed above: " : "", other_total, other_total == 1 ? "" : "s", ek->backend,
            ek->operator_name);
    for (unsigned k = 0, n = 0; k <= CALSTORE_REJECT_FORCE_PORTABLE; k++)
      if (others[k])
        fprintf(o, "%s%s %zu", n++ ? ", " : "",
                calstore_reject_reason_name((calstore_reject_reason)k), others[k]);
    fprintf(o, ")%s\n", verbose ? "" : "; --verbose lists them");
  }
  if (r->profile) {
    base_text_printf(o, "selected %s: %s\n", calstore_level_name(r->level), r->profile->policy);
    for (size_t i = 0; i < r->profile->measurement_count; i++)
      base_text_printf(o, "  %s = %g %s\n", r->profile->measurements[i].name,
                       r->profile->measurements[i].value, r->profile->measurements[i].unit);
  } else {
    fprintf(o, "nothing selected\n");
  }
}

static int lookup_workload(cli_context *cli, cli_args *a) {
  if (wl_refuse_key_flags(a))
    return 2;
  const char *workload = a->value[FL_WORKLOAD];
  wl_ctx c;
  /* --force-portable forces it; else the configuration's [lookup] */
  int rc = wl_open(cli, workload, a->value[FL_PLUGIN], a->value[FL_THREADS], a->value[FL_DEVICE],
                   cli_has(a, FL_FORCE_PORTABLE) ? 1 : -1, 1, &c);
  if (rc != 0) {
    if (cli->json && c.status == CALHOST_RUNTIME_STORE)
      store_failure_json(cli);
    else if (cli->json) /* the configuration, the plugin or the workload: said on stderr */
      cli_json_lookup_result(stdout, NULL, CALSTORE_INVALID_ARGUMENT, NULL, NULL, NULL);
    wl_close(&c);
    return rc;
  }
  const calstore_lookup_result *res = c.sel->result;
  calstore_status st = c.sel->status;
  if (cli_has(a, FL_EXPLAIN)) {
    if (c.asked_count > 1) /* without --plugin: which plugins were asked */
      base_text_printf(cli->json ? stderr : stdout, "plugins asked: %s\n", c.asked);
    if (c.choice) /* without --plugin: why this backend (the race's figures) */
      base_text_printf(cli->json ? stderr : stdout, "backend chosen by %s: %s\n",
                       wl_rule_word(c.choice->rule), c.choice->reason);
    explain(cli->json ? stderr : stdout, c.sel, res, cli->verbose);
  }
  if (cli->json && c.choice) /* without --plugin: the choice's rule and reason too */
    cli_json_lookup_chosen(stdout, res, st,
                           c.choice->backend ? c.choice->backend : c.sel->exact.backend,
                           wl_rule_word(c.choice->rule), c.choice->reason);
  else if (cli->json)
    cli_json_lookup_result(stdout, res, st, NULL, NULL, NULL);
  else if (!cli_has(a, FL_EXPLAIN)) {
    if (res->profile)
      base_text_printf(stdout, "%s %s: %s\n", calstore_level_name(res->level), c.sel->exact.backend,
                       res->profile->policy);
    else if (c.asked_count > 1)
      base_text_printf(stdout,
                       "none: no acceptable profile for workload %s from any plugin serving %s "
                       "(asked: %s)\n",
                       workload, c.sel->exact.operator_name, c.asked);
    else
      base_text_printf(stdout, "none: no acceptable profile for workload %s of %s (%zu rejected)\n",
                       workload, c.sel->exact.backend, res->rejection_count);
  }
  rc = res->profile ? 0 : 1;
  wl_close(&c);
  return rc;
}

static int run_lookup(cli_context *cli, cli_args *a) {
  if (cli_has(a, FL_MODEL))
    return cli_lookup_model(cli, a);
  if (cli_has(a, FL_DIMS) || cli_has(a, FL_NODE)) /* the model form's own flags */
    return cli_usage(a, "%s needs --model FILE", cli_has(a, FL_DIMS) ? "--dims" : "--node");
  if (cli_has(a, FL_WORKLOAD))
    return lookup_workload(cli, a);
  if (cli_has(a, FL_PLUGIN) || cli_has(a, FL_EXPLAIN) || cli_has(a, FL_DEVICE))
    return cli_usage(a, "%s needs --workload",
                     cli_has(a, FL_PLUGIN)    ? "--plugin"
                     : cli_has(a, FL_EXPLAIN) ? "--explain"
                                              : "--device");
  return lookup_key(cli, a);
}

const cli_command cli_cmd_lookup = {
    "lookup",
    "--backend B --operator OP --implementation V [--model-digest D --processor P --threads N]\n"
    "       [--structure NAME=VALUE]... [--force-portable]\n"
    "   or: calhost lookup --workload W [--plugin B] [--threads N|max] [--device D] "
    "[--force-portable] "
    "[--explain]\n"
    "   or: calhost lookup --model FILE [--node NAME] [--dims NAME=N,...] [--plugin B]\n"
    "       [--threads N|max] [--force-portable] [--explain]",
    "select a profile for a key, a configured workload or a model's nodes",
    "Walks the precedence: exact override, portable override, exact calibrated,\n"
    "portable calibrated; --force-portable or [lookup] force_portable skips the\n"
    "exact levels. With --workload the plugin builds the keys for this machine;\n"
    "without --plugin every enabled plugin serving the workload's operator is\n"
    "asked and the backend is chosen: [model NAME] / [lookup] backends when\n"
    "configured, else the fastest in the race calibrate recorded between them,\n"
    "else the first in the loader's order with a profile (--explain says which);\n"
    "either form checks each candidate policy with the validator of the plugin\n"
    "serving the backend. When the key form cannot find or load that plugin it\n"
    "still answers, unvalidated, with a warning on stderr and a \"not_validated\"\n"
    "diagnostic in --json. Exit 0 selected (validated or not), 1 none, 2 error.\n"
    "With --model the runtime selects each node's policy (calhost_runtime_add_model:\n"
    "the key rule of config/README.md, Models); exit 0 when every node has one.\n",
    lookup_flags,
    0,
    0,
    run_lookup,
};
