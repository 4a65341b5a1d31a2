/*
 * cmd_calibrate.c: `calhost calibrate`: parses its flags, applies them over
 * the configuration (flags win; their origin is "<command line>") and hands
 * over to the sweep driver (host/sweep/calibrate.h). The deployment commands
 * `lookup --workload` and `override set|clear --workload` live in
 * cmd_calibrate_lookup.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config/config.h"
#include "config/values.h"
#include "sweep/calibrate.h"
#include "sweep/plan.h"

#define MAX_FILTERS 64

static const char *opt_value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (!strncmp(a, name, n) && a[n] == '=')
    return a + n + 1;
  if (!strcmp(a, name) && *i + 1 < argc)
    return argv[++*i];
  return NULL;
}

static int is_opt(const char *a, const char *name) {
  size_t n = strlen(name);
  return !strcmp(a, name) || (!strncmp(a, name, n) && a[n] == '=');
}

int calhost_cmd_calibrate(calhost_cli *cli, int argc, char **argv) {
  char *plugins[MAX_FILTERS], *workloads[MAX_FILTERS];
  size_t np = 0, nw = 0;
  const char *rigor = NULL, *threads = NULL, *budget = NULL, *timeout = NULL, *reps = NULL;
  const char *report = NULL; /* --report DIR (cmd_report.c) */
  int force = 0, json = cli->json, quiet = cli->quiet;
  calhost_cli local = *cli;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (is_opt(a, "--config")) {
      if (!(v = opt_value(argc, argv, &i, "--config")))
        return calhost_cli_usage_error(cli, "calibrate: --config needs a file");
      local.config_path = v;
    } else if (is_opt(a, "--store")) {
      if (!(v = opt_value(argc, argv, &i, "--store")))
        return calhost_cli_usage_error(cli, "calibrate: --store needs a path");
      local.store_path = v;
    } else if (is_opt(a, "--plugin")) {
      if (!(v = opt_value(argc, argv, &i, "--plugin")) || np >= MAX_FILTERS)
        return calhost_cli_usage_error(cli, "calibrate: --plugin needs a backend name");
      plugins[np++] = (char *)v;
    } else if (is_opt(a, "--workload")) {
      if (!(v = opt_value(argc, argv, &i, "--workload")) || nw >= MAX_FILTERS)
        return calhost_cli_usage_error(cli, "calibrate: --workload needs a workload name");
      workloads[nw++] = (char *)v;
    } else if (is_opt(a, "--rigor")) {
      if (!(rigor = opt_value(argc, argv, &i, "--rigor")))
        return calhost_cli_usage_error(cli, "calibrate: --rigor needs quick|measure|exhaustive");
    } else if (is_opt(a, "--threads")) {
      if (!(threads = opt_value(argc, argv, &i, "--threads")))
        return calhost_cli_usage_error(cli, "calibrate: --threads needs a list, e.g. 1,2,max");
    } else if (is_opt(a, "--time-budget")) {
      if (!(budget = opt_value(argc, argv, &i, "--time-budget")))
        return calhost_cli_usage_error(cli, "calibrate: --time-budget needs seconds");
    } else if (is_opt(a, "--timeout")) {
      if (!(timeout = opt_value(argc, argv, &i, "--timeout")))
        return calhost_cli_usage_error(cli, "calibrate: --timeout needs seconds");
    } else if (is_opt(a, "--repetitions")) {
      if (!(reps = opt_value(argc, argv, &i, "--repetitions")))
        return calhost_cli_usage_error(cli, "calibrate: --repetitions needs a count");
    } else if (is_opt(a, "--report")) {
      if (!(report = opt_value(argc, argv, &i, "--report")))
        return calhost_cli_usage_error(cli, "calibrate: --report needs a directory");
    } else if (!strcmp(a, "--force")) {
      force = 1;
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
      quiet = 1;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: calhost calibrate [--config F] [--plugin B]... [--workload W]...\n"
             "                         [--rigor quick|measure|exhaustive] [--threads LIST]\n"
             "                         [--time-budget S] [--timeout S] [--repetitions N]\n"
             "                         [--force] [--json] [--quiet] [--report DIR]\n");
      return 0;
    } else {
      return calhost_cli_usage_error(cli, "calibrate: unknown argument '%s'", a);
    }
  }

  calhost_config cfg;
  memset(&cfg, 0, sizeof cfg);
  if (calhost_cli_load_config(&local, &cfg) != 0)
    return 2;
  const char *rigor_origin = NULL, *threads_origin = NULL;
  if (rigor) {
    calhost_rigor rg;
    if (calhost_rigor_parse(rigor, &rg) != 0) {
      calhost_config_free(&cfg);
      return calhost_cli_usage_error(cli, "calibrate: bad --rigor '%s' (quick|measure|exhaustive)",
                                     rigor);
    }
    cfg.rigor = rg;
    rigor_origin = "<command line>";
  }
  /* The values parse as in calhost.ini (config/values.h): same syntax, same limits. */
  char why[300];
  if (threads) {
    uint32_t *list;
    size_t n;
    if (calhost_value_threads(threads, &list, &n, why, sizeof why) != 0) {
      calhost_config_free(&cfg);
      return calhost_cli_usage_error(cli, "calibrate: bad --threads '%s': %s", threads, why);
    }
    free(cfg.thread_counts);
    cfg.thread_counts = list;
    cfg.thread_count_count = n;
    threads_origin = "<command line>";
  }
  if (budget && calhost_value_duration(budget, 1, &cfg.time_budget_seconds, why, sizeof why) != 0) {
    calhost_config_free(&cfg);
    return calhost_cli_usage_error(cli, "calibrate: bad --time-budget '%s': %s", budget, why);
  }
  if (timeout &&
      calhost_value_duration(timeout, 0, &cfg.plugin_timeout_seconds, why, sizeof why) != 0) {
    calhost_config_free(&cfg);
    return calhost_cli_usage_error(cli, "calibrate: bad --timeout '%s': %s", timeout, why);
  }
  if (reps && calhost_value_repetitions(reps, &cfg.repetitions, why, sizeof why) != 0) {
    calhost_config_free(&cfg);
    return calhost_cli_usage_error(cli, "calibrate: bad --repetitions '%s': %s", reps, why);
  }
  if (!rigor_origin) {
    calhost_config_origin o = calhost_config_origin_of(&cfg, "calibration.rigor");
    rigor_origin = o.file ? o.file : "<default>";
  }
  if (!threads_origin) {
    calhost_config_origin o = calhost_config_origin_of(&cfg, "calibration.threads");
    threads_origin = o.file ? o.file : "<default>";
  }

  calhost_calibrate_options o;
  memset(&o, 0, sizeof o);
  o.config = &cfg;
  o.store_path = local.store_path;
  o.plugins = plugins;
  o.plugin_count = np;
  o.workloads = workloads;
  o.workload_count = nw;
  o.force = force;
  o.json = json;
  o.quiet = quiet;
  o.progress = -1;
  o.rigor_origin = rigor_origin;
  o.threads_origin = threads_origin;
  if (report && !(o.json_out = calhost_cli_report_open(report))) {
    calhost_config_free(&cfg);
    return 2;
  }
  int rc = calhost_calibrate(&o);
  if (report)
    rc = calhost_cli_report_finish(report, o.json_out, rc, quiet);
  calhost_config_free(&cfg);
  return rc;
}
