/*
 * context.c: what every subcommand shares: usage errors, resolving and
 * loading the configuration (--config, else the default search of
 * calhost_config_find_default, else the built-in defaults: one rule,
 * whatever other flags are given), and opening the store the host owns
 * (the configuration's [store], its path replaced by --store when given).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../config/config.h"
#include "commands.h"
#include "loader/loader.h"

int calhost_cli_usage_error(const calhost_cli *cli, const char *fmt, ...) {
  va_list ap;
  (void)cli;
  fputs("calhost: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\nTry 'calhost --help'.\n", stderr);
  return 2;
}

int calhost_cli_load_config(const calhost_cli *cli, calhost_config *cfg) {
  char path[4096], err[1024];
  const char *file = cli->config_path;
  calhost_log_set_verbose(cli->verbose); /* --verbose shows plugins' debug and info logs */
  if (!file && calhost_config_find_default(path, sizeof path) == 0)
    file = path;
  if (!file) {
    /* Said always (not only with --verbose): an installation without its
     * config otherwise fails later with "no workload". */
    if (!cli->quiet) {
      char places[4 * 4096];
      calhost_config_search_places(places, sizeof places);
      fprintf(stderr,
              "calhost: no configuration file found (searched %s); using the built-in "
              "defaults, which have no workloads\n",
              places);
    }
    if (calhost_config_defaults(cfg) != 0) {
      fprintf(stderr, "calhost: out of memory\n");
      return -1;
    }
    return 0;
  }
  if (cli->verbose)
    fprintf(stderr, "calhost: configuration: %s\n", file);
  if (calhost_config_load(file, cfg, err, sizeof err) != 0) {
    fprintf(stderr, "calhost: %s\n", err);
    return -1;
  }
  return 0;
}

calstore_status calhost_cli_open_store_config(const calhost_cli *cli, const calhost_config *cfg,
                                              calstore **out) {
  calstore_options opts;
  calstore_error err = {0};
  calstore_options_init(&opts);
  if (cfg->store_path)
    opts.path = cfg->store_path;
  opts.persistence_enabled = cfg->persistence_enabled;
  if (cli->store_path)
    opts.path = cli->store_path;
  calstore_status st = calstore_open(&opts, out, &err);
  if (st != CALSTORE_OK)
    fprintf(stderr, "calhost: %s%s%.0u: %s: %s\n", err.path[0] ? err.path : "store",
            err.line ? ":" : "", err.line, calstore_status_name(st), err.message);
  return st;
}

calstore_status calhost_cli_open_store(const calhost_cli *cli, calstore **out) {
  calhost_config cfg = {0};
  calstore_status st;
  /* The same configuration whatever other flags are given: --store replaces
   * only the path, [store] persistence_enabled still applies. */
  if (calhost_cli_load_config(cli, &cfg) != 0)
    return CALSTORE_INVALID_ARGUMENT;
  st = calhost_cli_open_store_config(cli, &cfg, out);
  calhost_config_free(&cfg);
  return st;
}
