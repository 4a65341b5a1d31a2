/*
 * cmd_calibrate.c: `calhost calibrate`: applies its flags over the
 * configuration (flags win; their origin is "<command line>") and hands
 * over to the calibrate application (host/calibrate/calibrate.h), which prints the
 * progress and the report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "commands.h"
#include "config/config.h"
#include "config/values.h"
#include "calibrate/calibrate.h"
#include "sweep/rigor.h"

#define MAX_FILTERS 64

static const cli_flag calibrate_flags[] = {
    {FL_PLUGIN, "--plugin", NULL, "BACKEND", "calibrate only this backend (repeatable)"},
    {FL_WORKLOAD, "--workload", NULL, "NAME", "calibrate only this workload (repeatable)"},
    CALHOST_CLI_FLAGS_MODEL,
    {FL_THREADS, "--threads", NULL, "LIST", "thread counts, e.g. 1,2,max"},
    CALHOST_CLI_FLAGS_CALIBRATE_MEASURE,
    {FL_SHARD, "--shard", NULL, "I/N", "only shard I of N of the work items (calhost plan)"},
    {FL_NO_WARM_START, "--no-warm-start", NULL, NULL,
     "start each search cold, not from the store's winners on other devices"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

int cli_sweep_config(const cli_context *cli, cli_args *a, config_settings *cfg,
                     const char **rigor_origin, const char **threads_origin) {
  const char *rigor = a->value[FL_RIGOR], *threads = a->value[FL_THREADS];
  const char *budget = a->value[FL_TIME_BUDGET], *timeout = a->value[FL_TIMEOUT];
  const char *reps = a->value[FL_REPETITIONS];
  const char *strategy = a->value[FL_STRATEGY], *search_budget = a->value[FL_BUDGET];
  memset(cfg, 0, sizeof *cfg);
  if (cli_load_config(cli, cfg) != 0)
    return 2;
  *rigor_origin = *threads_origin = NULL;
  if (rigor) {
    sweep_rigor rg;
    if (base_rigor_parse(rigor, &rg) != 0) {
      config_free(cfg);
      return cli_usage(a, "bad --rigor '%s' (quick|measure|exhaustive)", rigor);
    }
    cfg->rigor = rg;
    *rigor_origin = "<command line>";
  }
  /* The values parse as in calhost.ini (config/values.h): same syntax, same limits. */
  char why[300];
  if (threads) {
    uint32_t *list;
    size_t n;
    if (config_value_threads(threads, &list, &n, why, sizeof why) != 0) {
      config_free(cfg);
      return cli_usage(a, "bad --threads '%s': %s", threads, why);
    }
    free(cfg->thread_counts);
    cfg->thread_counts = list;
    cfg->thread_count_count = n;
    *threads_origin = "<command line>";
  }
  if (budget && config_value_duration(budget, 1, &cfg->time_budget_seconds, why, sizeof why) != 0) {
    config_free(cfg);
    return cli_usage(a, "bad --time-budget '%s': %s", budget, why);
  }
  for (size_t i = 0; budget && i < cfg->plugin_section_count; i++)
    cfg->plugin_sections[i].time_budget_seconds = 0; /* --time-budget is every plugin's */
  if (timeout &&
      config_value_duration(timeout, 0, &cfg->plugin_timeout_seconds, why, sizeof why) != 0) {
    config_free(cfg);
    return cli_usage(a, "bad --timeout '%s': %s", timeout, why);
  }
  if (reps && config_value_repetitions(reps, &cfg->repetitions, why, sizeof why) != 0) {
    config_free(cfg);
    return cli_usage(a, "bad --repetitions '%s': %s", reps, why);
  }
  if (strategy && config_value_strategy(strategy, &cfg->strategy, why, sizeof why) != 0) {
    config_free(cfg);
    return cli_usage(a, "bad --strategy: %s", why);
  }
  if (search_budget && config_value_search_budget(search_budget, &cfg->budget_evaluations,
                                                  &cfg->budget_seconds, why, sizeof why) != 0) {
    config_free(cfg);
    return cli_usage(a, "bad --budget: %s", why);
  }
  if (!*rigor_origin) {
    config_origin o = config_origin_of(cfg, "calibration.rigor");
    *rigor_origin = o.file ? o.file : "<default>";
  }
  if (!*threads_origin) {
    config_origin o = config_origin_of(cfg, "calibration.threads");
    *threads_origin = o.file ? o.file : "<default>";
  }
  return 0;
}

static int run_calibrate(cli_context *cli, cli_args *a) {
  return cli_calibrate_run(cli, a, NULL);
}

int cli_calibrate_run(cli_context *cli, cli_args *a, calibrate_work_list *plan) {
  char *plugins[MAX_FILTERS], *workloads[MAX_FILTERS];
  size_t np = cli_all(a, FL_PLUGIN, plugins, MAX_FILTERS);
  size_t nw = cli_all(a, FL_WORKLOAD, workloads, MAX_FILTERS);
  if (np > MAX_FILTERS || nw > MAX_FILTERS)
    return cli_usage(a, "more than %d --plugin or --workload filters", MAX_FILTERS);
  char **workloads_list = workloads;
  const char *report = plan ? NULL : a->value[FL_REPORT]; /* --report DIR (cmd_report.c) */
  const char *shard = a->value[FL_SHARD];
  const char *record = plan ? NULL : a->value[FL_RECORD];
  int force = cli_has(a, FL_FORCE), json = cli->json, quiet = cli->quiet;
  const cli_context local = *cli;

  config_settings cfg;
  const char *rigor_origin, *threads_origin;
  int bad = cli_sweep_config(&local, a, &cfg, &rigor_origin, &threads_origin);
  if (bad)
    return bad;
  char why[300];
  if (record && !*record) {
    config_free(&cfg);
    return cli_usage(a, "bad --record: an empty file name");
  }
  calibrate_shard sh = {0, 0};
  if (shard && calibrate_shard_parse(shard, &sh, why, sizeof why) != 0) {
    config_free(&cfg);
    return cli_usage(a, "bad --shard: %s", why);
  }
  /* [model NAME] sections and --model FILE: their nodes become workloads */
  char **model_only = NULL;
  size_t model_only_count = 0;
  cli_model_set *models = NULL;
  if ((bad = cli_model_workloads(&local, a, &cfg, &model_only, &model_only_count, &models)) != 0) {
    config_free(&cfg);
    return bad;
  }
  if (a->value[FL_MODEL] && !nw) {
    workloads_list = model_only;
    nw = model_only_count;
  }
  /* which workloads a sweep calibrated: the models' untuned nodes */
  unsigned char *served = plan ? NULL : calloc(cfg.workload_count + 1, 1);

  calibrate_options o;
  memset(&o, 0, sizeof o);
  o.config = &cfg;
  o.store_path = local.store_path;
  o.plugins = plugins;
  o.plugin_count = np;
  o.workloads = workloads_list;
  o.workload_count = nw;
  o.force = force;
  o.json = json;
  o.quiet = quiet;
  o.progress = -1;
  o.rigor_origin = rigor_origin;
  o.threads_origin = threads_origin;
  o.shard = sh;
  o.record_path = record;
  o.served = served;
  o.no_warm_start = cli_has(a, FL_NO_WARM_START);
  char report_tmp[4096];
  if (report && !(o.json_out = cli_report_open(report, report_tmp, sizeof report_tmp))) {
    free(model_only);
    free(served);
    cli_model_set_free(models);
    config_free(&cfg);
    return 2;
  }
  int rc = plan ? calibrate_plan(&o, plan) : calibrate_execute(&o);
  /* every node no backend tuned, named; a --model run that leaves one
   * untuned fails (a shard holds only part of the run: it only names them) */
  if (served && (rc == 0 || rc == 1)) {
    size_t untuned =
        cli_model_report_unserved(models, &cfg, served, a->value[FL_MODEL] ? NULL : workloads,
                                  a->value[FL_MODEL] ? 0 : nw, "calibrate");
    if (untuned && a->value[FL_MODEL] && sh.count <= 1)
      rc = 1;
  }
  if (report)
    rc = cli_report_finish(report, report_tmp, o.json_out, rc, quiet);
  free(model_only);
  free(served);
  cli_model_set_free(models);
  config_free(&cfg);
  return rc;
}

const cli_command cli_cmd_calibrate = {
    "calibrate",
    "[--plugin B]... [--workload W]... [--rigor quick|measure|exhaustive]\n"
    "       [--strategy NAME] [--budget N|Ts] [--record FILE]\n"
    "       [--threads LIST] [--time-budget S] [--timeout S] [--repetitions N] [--force]\n"
    "       [--report DIR] [--shard I/N] [--model FILE [--dims NAME=N,...]] [--no-warm-start]",
    "run calibration sweeps and store the winners",
    "Flags win over the configuration. The rigor level decides which candidates\n"
    "run (quick: 2% of the space, 8 to 32, model search; measure: the plugin's\n"
    "curated list whole, a larger described space 10%, 32 to 256; exhaustive:\n"
    "every one); --strategy and --budget override it.\n"
    "Each search begins with the store's policies of the same kernel found on\n"
    "other devices or processors (exact profiles of the same model, portable\n"
    "ones of the same structure), fastest first, each validated by the plugin\n"
    "here (a warm start); --no-warm-start starts it cold.\n"
    "--record FILE writes each sweep's evaluated candidates as a space file\n"
    "(FILE-BACKEND-WORKLOAD-tN.space when the run has several sweeps,\n"
    "FILE-BACKEND-WORKLOAD-dD-tN.space for a sweep on device D).\n"
    "With --model (or [model NAME] sections) the nodes no backend tuned are\n"
    "listed after the run (a structure every plugin declined, a node left\n"
    "symbolic: bind it with --dims; several bindings: --dims 'A | B').\n"
    "Exit 0 when every sweep was stored or already calibrated, 1 when some\n"
    "failed or nothing was calibrated (every sweep unsupported, or no workload\n"
    "for the chosen plugins; a shard of --shard I/N only warns), or when a\n"
    "--model run left a node of an operator a plugin of the run serves\n"
    "untuned, 2 on errors,\n"
    "130/143/129 when interrupted by SIGINT/SIGTERM/SIGHUP (finished workloads are committed).\n",
    calibrate_flags,
    0,
    0,
    run_calibrate,
};
