/*
 * cmd_verify.c: `calhost verify`: applies its flags over the configuration
 * like calibrate's (cli_sweep_config) and hands over to the verify
 * mode of the calibrate driver (host/calibrate/verify.h), which prints the
 * verdicts.
 */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config/config.h"
#include "config/values.h"
#include "calibrate/verify.h"

#define MAX_FILTERS 64

static const cli_flag verify_flags[] = {
    {FL_PLUGIN, "--plugin", NULL, "BACKEND", "verify only this backend (repeatable)"},
    {FL_WORKLOAD, "--workload", NULL, "NAME", "verify only this workload (repeatable)"},
    CALHOST_CLI_FLAGS_MODEL,
    CALHOST_CLI_FLAG_RIGOR,
    CALHOST_CLI_FLAGS_SWEEP_LIMITS,
    {FL_REPETITIONS, "--repetitions", NULL, "N", "samples per policy"},
    {FL_THRESHOLD, "--threshold", NULL, "T",
     "slowdown tolerated: 0.25 or 25% (default), 0 to 10 (1000%)"},
    {FL_RECALIBRATE, "--recalibrate", NULL, NULL, "recalibrate the failing keys, one commit"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

static int run_verify(cli_context *cli, cli_args *a) {
  char *plugins[MAX_FILTERS], *workloads[MAX_FILTERS];
  size_t np = cli_all(a, FL_PLUGIN, plugins, MAX_FILTERS);
  size_t nw = cli_all(a, FL_WORKLOAD, workloads, MAX_FILTERS);
  if (np > MAX_FILTERS || nw > MAX_FILTERS)
    return cli_usage(a, "more than %d --plugin or --workload filters", MAX_FILTERS);
  calibrate_verify_options vo = {CALHOST_VERIFY_DEFAULT_THRESHOLD, cli_has(a, FL_RECALIBRATE)};
  const char *threshold = a->value[FL_THRESHOLD];
  char why[256];
  if (threshold && config_value_fraction(threshold, CALHOST_VERIFY_MAX_THRESHOLD, &vo.threshold,
                                         why, sizeof why) != 0)
    return cli_usage(a, "bad --threshold '%s': %s", threshold, why);

  config_settings cfg;
  const char *rigor_origin, *threads_origin;
  int bad = cli_sweep_config(cli, a, &cfg, &rigor_origin, &threads_origin);
  if (bad)
    return bad;
  char **model_only = NULL, **workloads_list = workloads; /* [model NAME], --model */
  size_t model_only_count = 0;
  if ((bad = cli_model_workloads(cli, a, &cfg, &model_only, &model_only_count, NULL)) != 0) {
    config_free(&cfg);
    return bad;
  }
  if (a->value[FL_MODEL] && !nw) {
    workloads_list = model_only;
    nw = model_only_count;
  }
  calibrate_options o;
  memset(&o, 0, sizeof o);
  o.config = &cfg;
  o.store_path = cli->store_path;
  o.plugins = plugins;
  o.plugin_count = np;
  o.workloads = workloads_list;
  o.workload_count = nw;
  o.json = cli->json;
  o.quiet = cli->quiet;
  o.progress = -1;
  o.rigor_origin = rigor_origin;
  o.threads_origin = threads_origin;
  int rc = calibrate_verify(&o, &vo);
  free(model_only);
  config_free(&cfg);
  return rc;
}

const cli_command cli_cmd_verify = {
    "verify",
    "[--plugin B]... [--workload W]... [--rigor quick|measure|exhaustive]\n"
    "       [--threads LIST] [--time-budget S] [--timeout S] [--repetitions N]\n"
    "       [--threshold T] [--recalibrate]",
    "re-time the stored profiles against the default and judge them",
    "For the configured workloads, re-times each stored exact profile's policy\n"
    "and the backend default with calibrate's engine and prints a verdict per\n"
    "key: ok, slower, lost-to-default, outdated, invalid, missing (or error).\n"
    "Never changes the store without --recalibrate, which recalibrates exactly\n"
    "the failing keys and commits them in one batch. Exit 0 when every key\n"
    "holds (missing keys do not fail, unless every key is missing: nothing was\n"
    "verified), 1 when one is slower, lost-to-default,\n"
    "outdated or invalid (with --recalibrate: was not recalibrated), 2 on\n"
    "errors, 130/143/129 when interrupted (SIGINT/SIGTERM/SIGHUP, named).\n",
    verify_flags,
    0,
    0,
    run_verify,
};
