/*
 * cmd_config.c: the configuration commands.
 *
 *   calhost [--config FILE] config check [FILE] [--json]
 *       Validates FILE (else --config, else the default search). Prints
 *       "ok: FILE" and exits 0, or prints "FILE:LINE: message" to stderr
 *       and exits 1; 2 for usage errors or when no file is found.
 *   calhost [--config FILE] config show [--json]
 *       Prints the effective configuration: every key, its value and where
 *       the value came from (FILE:LINE, "default", or "computed" for the
 *       model digests).
 */
#include <stdio.h>
#include <string.h>

#include "../config/config.h"
#include "../config/digest.h"
#include "commands.h"

/* The file `show` and `check` read: --config, else the default search;
 * NULL when none (built-in defaults). */
static const char *resolve_file(const calhost_cli *cli, char *buf, size_t cap) {
  if (cli->config_path)
    return cli->config_path;
  if (calhost_config_find_default(buf, cap) == 0)
    return buf;
  return NULL;
}

static void json_string(FILE *out, const char *s) {
  if (!s) {
    fputs("null", out);
    return;
  }
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"':
      fputs("\\\"", out);
      break;
    case '\\':
      fputs("\\\\", out);
      break;
    case '\n':
      fputs("\\n", out);
      break;
    case '\r':
      fputs("\\r", out);
      break;
    case '\t':
      fputs("\\t", out);
      break;
    default:
      if (*p < 0x20)
        fprintf(out, "\\u%04x", *p);
      else
        fputc(*p, out);
    }
  }
  fputc('"', out);
}

static int config_check(calhost_cli *cli, int argc, char **argv) {
  const char *file = NULL;
  char found[4096], err[1024];
  calhost_config cfg;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json"))
      cli->json = 1;
    else if (argv[i][0] == '-' && argv[i][1])
      return calhost_cli_usage_error(cli, "config check: unknown option '%s'", argv[i]);
    else if (file)
      return calhost_cli_usage_error(cli, "config check takes one FILE");
    else
      file = argv[i];
  }
  if (!file)
    file = resolve_file(cli, found, sizeof found);
  if (!file) {
    char places[4 * 4096];
    calhost_config_search_places(places, sizeof places);
    fprintf(stderr, "calhost: config check: no configuration file given or found (searched %s)\n",
            places);
    return 2;
  }
  /* A check reads the model files too: their digests are what keys need. */
  int bad = calhost_config_load(file, &cfg, err, sizeof err) != 0;
  if (!bad && calhost_config_digest_all(&cfg, err, sizeof err) != 0) {
    calhost_config_free(&cfg);
    bad = 1;
  }
  if (bad) {
    if (cli->json) {
      fputs("{\"file\": ", stdout);
      json_string(stdout, file);
      fputs(", \"valid\": false, \"error\": ", stdout);
      json_string(stdout, err);
      fputs("}\n", stdout);
    }
    fprintf(stderr, "calhost: %s\n", err);
    return 1;
  }
  if (cli->json) {
    fputs("{\"file\": ", stdout);
    json_string(stdout, file);
    printf(", \"valid\": true, \"workloads\": %zu, \"plugin_sections\": %zu}\n", cfg.workload_count,
           cfg.plugin_section_count);
  } else if (!cli->quiet) {
    printf("ok: %s\n", file);
  }
  calhost_config_free(&cfg);
  return 0;
}

typedef struct show_state {
  FILE *out;
  int json;
  int count;
  char section[300];
} show_state;

static void origin_text(const char *key, calhost_config_origin o, char *buf, size_t cap) {
  if (!strcmp(key, "model_digest"))
    snprintf(buf, cap, "computed");
  else if (o.file)
    snprintf(buf, cap, "%s:%u", o.file, o.line);
  else
    snprintf(buf, cap, "default");
}

static int show_key(void *user, const char *section, const char *key, const char *value,
                    calhost_config_origin origin) {
  show_state *st = user;
  char where[4200];
  origin_text(key, origin, where, sizeof where);
  if (st->json) {
    fputs(st->count ? ",\n    {" : "\n    {", st->out);
    fputs("\"section\": ", st->out);
    json_string(st->out, section);
    fputs(", \"key\": ", st->out);
    json_string(st->out, key);
    fputs(", \"value\": ", st->out);
    json_string(st->out, value);
    fputs(", \"origin\": ", st->out);
    json_string(st->out, where);
    fputs("}", st->out);
  } else {
    char line[1200];
    if (strcmp(st->section, section) != 0) {
      fprintf(st->out, "%s[%s]\n", st->count ? "\n" : "", section);
      snprintf(st->section, sizeof st->section, "%s", section);
    }
    if (value)
      snprintf(line, sizeof line, "%s = %s", key, value);
    else
      snprintf(line, sizeof line, "; %s (unset)", key);
    fprintf(st->out, "%-44s ; %s\n", line, where);
  }
  st->count++;
  return 0;
}

static int config_show(calhost_cli *cli, int argc, char **argv) {
  char found[4096];
  const char *file;
  calhost_config cfg;
  show_state st = {stdout, 0, 0, ""};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json"))
      cli->json = 1;
    else
      return calhost_cli_usage_error(cli, "config show: unexpected argument '%s'", argv[i]);
  }
  file = resolve_file(cli, found, sizeof found);
  if (file) {
    char err[1024];
    if (calhost_config_load(file, &cfg, err, sizeof err) != 0) {
      fprintf(stderr, "calhost: %s\n", err);
      return 1;
    }
    if (calhost_config_digest_all(&cfg, err, sizeof err) != 0) {
      fprintf(stderr, "calhost: %s\n", err);
      calhost_config_free(&cfg);
      return 1;
    }
  } else if (calhost_config_defaults(&cfg) != 0) {
    fprintf(stderr, "calhost: out of memory\n");
    return 2;
  }
  st.json = cli->json;
  if (st.json) {
    fputs("{\"file\": ", stdout);
    json_string(stdout, file);
    fputs(", \"keys\": [", stdout);
  } else {
    if (file) {
      printf("; effective configuration from %s\n", file);
    } else {
      char places[4 * 4096];
      calhost_config_search_places(places, sizeof places);
      printf("; effective configuration from built-in defaults (no file found; searched %s)\n",
             places);
    }
    printf("; each key's origin: FILE:LINE, default, or computed\n\n");
  }
  calhost_config_visit(&cfg, show_key, &st);
  if (st.json)
    fputs("\n  ]}\n", stdout);
  calhost_config_free(&cfg);
  return 0;
}

int calhost_cmd_config(calhost_cli *cli, int argc, char **argv) {
  if (argc < 2)
    return calhost_cli_usage_error(cli, "config needs a subcommand: check [FILE] | show");
  if (!strcmp(argv[1], "check"))
    return config_check(cli, argc - 1, argv + 1);
  if (!strcmp(argv[1], "show"))
    return config_show(cli, argc - 1, argv + 1);
  return calhost_cli_usage_error(cli, "unknown config subcommand '%s' (check, show)", argv[1]);
}
