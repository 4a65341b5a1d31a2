/*
 * cmd_plugins.c: the plugin commands of the command line:
 *   calhost plugins [--json]      list every discovered plugin: path, backend,
 *                                 implementation and ABI versions, operators,
 *                                 loaded or rejected with the reason;
 *   calhost plugin check PATH     run the conformance checker (host/loader/
 *                                 check.c) on one plugin file.
 * Plugin directories, explicit paths and the enabled/disabled lists come
 * from the configuration ([plugins]); CALHOST_PLUGIN_PATH adds directories.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../config/config.h"
#include "../config/values.h"
#include "commands.h"
#include "check/check.h"
#include "loader/loader.h"

static const char *origin_name(calhost_plugin_origin o) {
  switch (o) {
  case CALHOST_ORIGIN_EXPLICIT:
    return "explicit";
  case CALHOST_ORIGIN_ENVIRONMENT:
    return "CALHOST_PLUGIN_PATH";
  case CALHOST_ORIGIN_CONFIG:
    return "config";
  case CALHOST_ORIGIN_DEFAULT:
    return "default";
  }
  return "unknown";
}

/* Writes s as a JSON string (or null). */
static void json_string(FILE *out, const char *s) {
  if (!s) {
    fputs("null", out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(out, "\\%c", ch);
    else if (ch < 0x20 || ch == 0x7f)
      fprintf(out, "\\u%04x", ch);
    else
      fputc(ch, out);
  }
  fputc('"', out);
}

static void print_json(FILE *out, const calhost_plugin_list *list) {
  fputs("{\"plugins\":[", out);
  for (size_t i = 0; i < list->count; i++) {
    const calhost_plugin *p = list->items[i];
    fputs(i ? ",\n{" : "\n{", out);
    fputs("\"path\":", out);
    json_string(out, p->path);
    fputs(",\"origin\":", out);
    json_string(out, origin_name(p->origin));
    fputs(",\"backend\":", out);
    json_string(out, p->backend);
    fputs(",\"implementation_version\":", out);
    json_string(out, p->implementation_version);
    fprintf(out, ",\"abi_version\":%u,\"plugin_abi_min\":%u,\"plugin_abi_max\":%u", p->abi_version,
            p->plugin_abi_min, p->plugin_abi_max);
    fputs(",\"operators\":[", out);
    for (size_t k = 0; k < p->operator_count; k++) {
      if (k)
        fputc(',', out);
      json_string(out, p->operators[k]);
    }
    fputs("],\"description\":", out);
    json_string(out, p->description);
    fprintf(out, ",\"status\":\"%s\",\"reason\":", p->loaded ? "loaded" : "rejected");
    json_string(out, p->loaded ? NULL : p->reason ? p->reason : "not loaded");
    fputc('}', out);
  }
  fputs("\n]}\n", out);
}

static void print_text(FILE *out, const calhost_plugin_list *list) {
  size_t loaded = 0;
  if (!list->count)
    fprintf(out, "no plugins found (configure [plugins] directories or set "
                 "CALHOST_PLUGIN_PATH)\n");
  for (size_t i = 0; i < list->count; i++) {
    const calhost_plugin *p = list->items[i];
    fprintf(out, "%s (%s)\n", p->path, origin_name(p->origin));
    if (p->backend) {
      fprintf(out,
              "  backend %s, implementation %s, ABI %u (plugin %u..%u), operators:", p->backend,
              p->implementation_version ? p->implementation_version : "?", p->abi_version,
              p->plugin_abi_min, p->plugin_abi_max);
      for (size_t k = 0; k < p->operator_count; k++)
        fprintf(out, " %s", p->operators[k]);
      fputc('\n', out);
      if (p->description && *p->description)
        fprintf(out, "  %s\n", p->description);
    }
    if (p->loaded) {
      fprintf(out, "  loaded\n");
      loaded++;
    } else {
      fprintf(out, "  rejected: %s\n", p->reason ? p->reason : "not loaded");
    }
  }
  fprintf(out, "%zu plugin%s found, %zu loaded\n", list->count, list->count == 1 ? "" : "s",
          loaded);
}

int calhost_cmd_plugins(calhost_cli *cli, int argc, char **argv) {
  calhost_config cfg;
  calhost_loader_options o;
  calhost_plugin_list list;
  memset(&cfg, 0, sizeof cfg);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json"))
      cli->json = 1;
    else
      return calhost_cli_usage_error(cli, "plugins: unknown argument '%s'", argv[i]);
  }
  if (calhost_cli_load_config(cli, &cfg) != 0)
    return 2;
  calhost_loader_options_init(&o);
  o.config_dirs = cfg.plugin_dirs;
  o.config_dir_count = cfg.plugin_dir_count;
  o.explicit_paths = cfg.plugin_paths;
  o.explicit_path_count = cfg.plugin_path_count;
  o.enabled = cfg.enabled_backends;
  o.enabled_count = cfg.enabled_count;
  o.disabled = cfg.disabled_backends;
  o.disabled_count = cfg.disabled_count;
  if (cli->quiet)
    o.services.min_log_level = CALHOST_LOG_ERROR;
  if (calhost_loader_discover(&o, &list) < 0) {
    fprintf(stderr, "calhost: plugins: out of memory\n");
    calhost_config_free(&cfg);
    return 2;
  }
  if (cli->json)
    print_json(stdout, &list);
  else
    print_text(stdout, &list);
  calhost_plugin_list_free(&list);
  calhost_config_free(&cfg);
  return 0;
}

static int plugin_check(calhost_cli *cli, int argc, char **argv) {
  calhost_check_options o;
  const char *path = NULL;
  int64_t shape[CALHOST_MAX_SHAPE_RANK];
  char why[300];
  calhost_check_options_init(&o);
  o.verbose = cli->verbose;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if ((!strcmp(a, "--timeout") || !strcmp(a, "--operator") || !strcmp(a, "--dtype") ||
         !strcmp(a, "--shape") || !strcmp(a, "--threads")) &&
        i + 1 >= argc)
      return calhost_cli_usage_error(cli, "plugin check: %s needs a value", a);
    if (!strcmp(a, "--timeout")) {
      if (calhost_value_duration(argv[++i], 0, &o.timeout_seconds, why, sizeof why) != 0)
        return calhost_cli_usage_error(cli, "plugin check: bad --timeout '%s': %s", argv[i], why);
    } else if (!strcmp(a, "--threads")) {
      if (calhost_value_thread_count(argv[++i], &o.thread_count, why, sizeof why) != 0)
        return calhost_cli_usage_error(cli, "plugin check: bad --threads '%s': %s", argv[i], why);
      if (o.thread_count == 0) { /* "max": every online CPU */
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.thread_count = n > 0 ? (uint32_t)n : 1;
      }
    } else if (!strcmp(a, "--operator")) {
      o.operator_name = argv[++i];
    } else if (!strcmp(a, "--dtype")) {
      o.dtype = argv[++i];
    } else if (!strcmp(a, "--shape")) {
      size_t rank;
      if (calhost_value_shape(argv[++i], shape, &rank, why, sizeof why) != 0)
        return calhost_cli_usage_error(cli, "plugin check: bad --shape '%s': %s", argv[i], why);
      o.shape = shape;
      o.shape_rank = rank;
    } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
      o.verbose = 1;
    } else if (!strcmp(a, "--json")) {
      cli->json = 1; /* accepted; the report is text */
    } else if (a[0] == '-') {
      return calhost_cli_usage_error(cli, "plugin check: unknown option '%s'", a);
    } else if (!path) {
      path = a;
    } else {
      return calhost_cli_usage_error(cli, "plugin check: one PATH only");
    }
  }
  if (!path)
    return calhost_cli_usage_error(
        cli, "usage: calhost plugin check PATH [--timeout S] "
             "[--operator OP] [--dtype T] [--shape D,D,...] [--threads N] [-v]");
  if (access(path, R_OK) != 0) {
    fprintf(stderr, "calhost: plugin check: %s: %s\n", path, strerror(errno));
    return 2;
  }
  return calhost_plugin_check(path, &o, stdout);
}

int calhost_cmd_plugin(calhost_cli *cli, int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "check"))
    return plugin_check(cli, argc - 1, argv + 1);
  return calhost_cli_usage_error(cli, "usage: calhost plugin check PATH");
}
