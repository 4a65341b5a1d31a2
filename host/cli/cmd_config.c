/*
 * cmd_config.c: the configuration commands.
 *
 *   calhost [--config FILE] config check [FILE] [--plugins] [--json]
 *       Validates FILE (else --config, else the default search). Prints
 *       "ok: FILE" and exits 0, or prints "FILE:LINE: message" to stderr
 *       and exits 1; 2 for usage errors, a missing or unreadable FILE, or
 *       when no file is found. With --plugins, also hands each [plugin
 *       NAME] section to its plugin as calibrate would (create() with the
 *       settings, in a child; the devices selection against the devices
 *       listed): a refusal is invalid (1), a section no enabled plugin
 *       receives a warning.
 *   calhost [--config FILE] config show [--json]
 *       Prints the effective configuration: every key, its value and where
 *       the value came from (FILE:LINE, "default", or "computed" for the
 *       model digests). Exits 0, 1 when the configuration is invalid (as
 *       config check), 2 when its file is missing or unreadable.
 * Only a regular file is read (config_load): a FIFO or a device named by
 * FILE or --config is refused at once, never waited on.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "commands.h"
#include "config/config.h"
#include "config/digest.h"
#include "loader/loader.h"
#include "runtime/binding.h"
#include "runtime/devices.h"

/* What --plugins found of one [plugin NAME] section. */
typedef struct section_verdict {
  const config_plugin_section *section;
  int refused;    /* the plugin refused it: the configuration is invalid */
  unsigned line;  /* the section's line, or the refused devices key's */
  char why[1200]; /* the refusal or the warning, "" when accepted */
} section_verdict;

/* config check --plugins: every [plugin NAME] section of cfg given to the
 * plugin that would receive it (runtime_settings_check_isolated). A
 * backend that is disabled, not found or not loadable is a warning: the
 * file may serve other machines. Prints "calhost: FILE:LINE: [plugin
 * NAME]: ..." to stderr for each refusal and warning; fills v (one per
 * section, cfg->plugin_section_count) and returns the number refused, or
 * -1 when the plugins could not be discovered. */
static long check_plugin_sections(const cli_context *cli, const config_settings *cfg,
                                  section_verdict *v) {
  loader_options o;
  loader_plugin_list list;
  long refused = 0;
  size_t rejected_count = 0;
  loader_options_init(&o);
  runtime_binding_loader_options(cfg, &o);
  if (cli_discover(cli, "config check", &o, &list) != 0)
    return -1;
  for (size_t k = 0; k < list.count; k++)
    rejected_count += !list.items[k]->loaded && list.items[k]->reason;
  for (size_t i = 0; i < cfg->plugin_section_count; i++) {
    const config_plugin_section *sec = &cfg->plugin_sections[i];
    loader_plugin *p = loader_plugin_list_find(&list, sec->name), *rejected = NULL;
    int rc = 0;
    for (size_t k = 0; !p && k < list.count; k++) /* a rejected record that names it */
      if (list.items[k]->backend && !strcmp(list.items[k]->backend, sec->name))
        rejected = list.items[k];
    v[i].section = sec;
    if (!config_backend_enabled(cfg, sec->name))
      snprintf(v[i].why, sizeof v[i].why,
               "not checked: the backend is not enabled ([plugins] enabled, disabled)");
    else if (rejected)
      snprintf(v[i].why, sizeof v[i].why, "not checked: its plugin %s was not loaded: %s",
               rejected->path ? rejected->path : sec->name,
               rejected->reason ? rejected->reason : "rejected");
    else if (!p && rejected_count) /* a rejected plugin may be the one: its name is unknown */
      snprintf(v[i].why, sizeof v[i].why,
               "not checked: no loaded plugin provides this backend (%zu plugin%s rejected: see "
               "`calhost plugins`)",
               rejected_count, rejected_count == 1 ? " was" : "s were");
    else if (!p)
      snprintf(v[i].why, sizeof v[i].why,
               "not checked: no plugin found provides this backend (see `calhost plugins`)");
    else
      rc = runtime_settings_check_isolated(cfg, p, cfg->plugin_timeout_seconds, v[i].why,
                                           sizeof v[i].why);
    v[i].refused = rc != 0;
    v[i].line = sec->origin.line;
    if (rc == RUNTIME_SETTINGS_NO_DEVICE) { /* point at the devices key */
      char key[300];
      snprintf(key, sizeof key, "plugin.%s.devices", sec->name);
      v[i].line = config_origin_of(cfg, key).line;
    }
    refused += v[i].refused;
    if (v[i].refused || (v[i].why[0] && !cli->quiet))
      base_text_printf(stderr, "calhost: %s:%u: [plugin %s]: %s%s\n",
                       sec->origin.file ? sec->origin.file : "?", v[i].line, sec->name,
                       v[i].refused ? "" : "warning: ", v[i].why);
  }
  loader_plugin_list_free(&list);
  return refused;
}

/* The "plugins" member of config check --json: one object per section. */
static void print_verdicts_json(FILE *out, const section_verdict *v, size_t n) {
  fputs(", \"plugins\": [", out);
  for (size_t i = 0; i < n; i++) {
    fputs(i ? ", {\"backend\": " : "{\"backend\": ", out);
    base_json_string(out, v[i].section->name);
    fprintf(out, ", \"line\": %u, \"accepted\": ", v[i].line);
    base_json_bool(out, !v[i].refused && !v[i].why[0]);
    fputs(v[i].refused ? ", \"error\": " : ", \"warning\": ", out);
    base_json_string(out, v[i].why[0] ? v[i].why : NULL);
    fputc('}', out);
  }
  fputc(']', out);
}

static int config_check(cli_context *cli, cli_args *a) {
  const char *file = a->positional_count > 1 ? a->positional[1] : NULL;
  char found[4096], err[1024];
  config_settings cfg;
  if (!file)
    file = cli_config_file(cli, found, sizeof found);
  if (!file) {
    cli_print_search_places(
        stderr, "calhost: config check: no configuration file given or found (searched ", ")");
    return 2;
  }
  /* a file that is not there, not readable or not a regular file (a
   * directory, a FIFO: refused without blocking) is an operational error,
   * not an invalid configuration */
  int rc = config_load_file(file, &cfg, err, sizeof err);
  if (rc == CONFIG_LOAD_UNREADABLE)
    return cli_error("config check: %s", err);
  /* A check reads the model files too: their digests are what keys need. */
  int bad = rc != 0;
  if (!bad && config_digest_all(&cfg, err, sizeof err) != 0) {
    config_free(&cfg);
    bad = 1;
  }
  /* ... and every [model NAME] as calibrate reads it (each binding): a
   * missing file, not ONNX, a node at fault, workloads that clash with a
   * [workload]; the nodes it would skip are noted */
  size_t model_workloads = 0;
  if (!bad && cfg.model_count) {
    cli_args ma;
    memset(&ma, 0, sizeof ma);
    ma.command = "config check";
    char **only = NULL;
    size_t only_count = 0, before = cfg.workload_count;
    if (cli_model_workloads(cli, &ma, &cfg, &only, &only_count, NULL) != 0) {
      snprintf(err, sizeof err, "a [model NAME] section cannot be calibrated (said above)");
      config_free(&cfg);
      bad = 2; /* said already */
    } else {
      model_workloads = cfg.workload_count - before;
      free(only);
    }
  }
  if (bad) {
    if (cli->json) {
      fputs("{\"file\": ", stdout);
      base_json_string(stdout, file);
      fputs(", \"valid\": false, \"error\": ", stdout);
      base_json_string(stdout, err);
      fputs("}\n", stdout);
    }
    if (bad != 2)
      cli_error("%s", err);
    return 1;
  }
  /* --plugins: the sections as their plugins take them */
  section_verdict *v = NULL;
  long refused = 0;
  if (cli_has(a, FL_PLUGINS)) {
    v = calloc(cfg.plugin_section_count + 1, sizeof *v);
    if (!v) {
      config_free(&cfg);
      return cli_error("config check: out of memory");
    }
    refused = check_plugin_sections(cli, &cfg, v);
    if (refused < 0) {
      free(v);
      config_free(&cfg);
      return 2;
    }
  }
  if (cli->json) {
    fputs("{\"file\": ", stdout);
    base_json_string(stdout, file);
    printf(", \"valid\": %s, \"workloads\": %zu, \"plugin_sections\": %zu",
           refused ? "false" : "true", cfg.workload_count, cfg.plugin_section_count);
    if (v)
      print_verdicts_json(stdout, v, cfg.plugin_section_count);
    fputs("}\n", stdout);
  } else if (!cli->quiet && !refused && !v && cfg.model_count) {
    base_text_printf(stdout, "ok: %s (%zu [model NAME] section%s: %zu workload%s)\n", file,
                     cfg.model_count, cfg.model_count == 1 ? "" : "s", model_workloads,
                     model_workloads == 1 ? "" : "s");
  } else if (!cli->quiet && !refused && !v) {
    base_text_printf(stdout, "ok: %s\n", file);
  } else if (!cli->quiet && !refused) {
    size_t accepted = 0;
    for (size_t i = 0; i < cfg.plugin_section_count; i++)
      accepted += !v[i].why[0];
    base_text_printf(stdout,
                     "ok: %s (%zu of %zu [plugin NAME] sections checked by their plugins)\n", file,
                     accepted, cfg.plugin_section_count);
  }
  free(v);
  config_free(&cfg);
  return refused ? 1 : 0;
}

typedef struct show_state {
  FILE *out;
  int json;
  int count;
  char section[300];
} show_state;

static void origin_text(const char *key, config_origin o, char *buf, size_t cap) {
  if (!strcmp(key, "model_digest"))
    snprintf(buf, cap, "computed");
  else if (o.file)
    snprintf(buf, cap, "%s:%u", o.file, o.line);
  else
    snprintf(buf, cap, "default");
}

static int show_key(void *user, const char *section, const char *key, const char *value,
                    config_origin origin) {
  show_state *st = user;
  char where[4200];
  origin_text(key, origin, where, sizeof where);
  if (st->json) {
    fputs(st->count ? ",\n    {" : "\n    {", st->out);
    fputs("\"section\": ", st->out);
    base_json_string(st->out, section);
    fputs(", \"key\": ", st->out);
    base_json_string(st->out, key);
    fputs(", \"value\": ", st->out);
    base_json_string(st->out, value);
    fputs(", \"origin\": ", st->out);
    base_json_string(st->out, where);
    fputs("}", st->out);
  } else {
    char line[1200];
    if (strcmp(st->section, section) != 0) {
      if (st->count)
        fputc('\n', st->out);
      base_text_printf(st->out, "[%s]\n", section);
      snprintf(st->section, sizeof st->section, "%s", section);
    }
    if (value)
      snprintf(line, sizeof line, "%s = %s", key, value);
    else
      snprintf(line, sizeof line, "; %s (unset)", key);
    base_text_printf(st->out, "%-44s ; %s\n", line, where);
  }
  st->count++;
  return 0;
}

static int config_show(cli_context *cli, cli_args *a) {
  char found[4096];
  const char *file;
  config_settings cfg;
  show_state st = {stdout, 0, 0, ""};
  if (a->positional_count > 1)
    return cli_usage(a, "show: unexpected argument '%s'", a->positional[1]);
  if (cli_has(a, FL_PLUGINS))
    return cli_usage(a, "show: --plugins goes with check");
  file = cli_config_file(cli, found, sizeof found);
  if (file) {
    char err[1024];
    int rc = config_load_file(file, &cfg, err, sizeof err);
    if (rc != 0) {
      /* as every command: a file that cannot be read is an operational
       * error (2); an invalid one is config check's "no" (1) */
      cli_error("%s", err);
      return rc == CONFIG_LOAD_UNREADABLE ? 2 : 1;
    }
    if (config_digest_all(&cfg, err, sizeof err) != 0) {
      cli_error("%s", err);
      config_free(&cfg);
      return 1;
    }
  } else if (config_defaults(&cfg) != 0) {
    fprintf(stderr, "calhost: out of memory\n");
    return 2;
  }
  st.json = cli->json;
  char role_text[PATH_MAX + 128];
  const char *role_kind = NULL;
  const char *role = file && !cli->config_path
                         ? config_default_role(file, &role_kind, role_text, sizeof role_text)
                         : NULL;
  if (cli->config_path)
    role_kind = "command_line";
  if (st.json) {
    fputs("{\"file\": ", stdout);
    base_json_string(stdout, file);
    fputs(", \"keys\": [", stdout);
  } else {
    if (file && role) {
      base_text_printf(stdout, "; effective configuration from %s: %s\n", file, role);
    } else if (file) {
      base_text_printf(stdout, "; effective configuration from %s\n", file);
    } else {
      cli_print_search_places(
          stdout, "; effective configuration from built-in defaults (no file found; searched ",
          ")");
    }
    printf("; each key's origin: FILE:LINE, default, or computed\n\n");
  }
  config_visit(&cfg, show_key, &st);
  if (st.json) {
    fputs("\n  ], \"file_role\": ", stdout);
    base_json_string(stdout, role_kind);
    fputs("}\n", stdout);
  }
  config_free(&cfg);
  return 0;
}

static int run_config(cli_context *cli, cli_args *a) {
  if (!strcmp(a->positional[0], "check"))
    return config_check(cli, a);
  if (!strcmp(a->positional[0], "show"))
    return config_show(cli, a);
  return cli_usage(a, "unknown subcommand '%s' (check, show)", a->positional[0]);
}

static const cli_flag config_flags[] = {
    {FL_PLUGINS, "--plugins", NULL, NULL,
     "check: give each [plugin NAME] section to its plugin (create, devices)"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

const cli_command cli_cmd_config = {
    "config",
    "check [FILE] [--plugins] | show",
    "check or show the configuration",
    "check [FILE]: validates FILE (else --config, else the default search);\n"
    "  exit 0 valid, 1 invalid (FILE:LINE: message on stderr), 2 when the file\n"
    "  is missing or unreadable or none is found. With --plugins, each [plugin\n"
    "  NAME] section is also given to its plugin as calibrate would (create()\n"
    "  with the settings, in a child; the devices selection): a refusal is\n"
    "  invalid (1); a section no enabled plugin receives is a warning.\n"
    "show: every key of the effective configuration, its value and origin\n"
    "  (FILE:LINE, default, or computed); exit 0, 1 when the configuration is\n"
    "  invalid, 2 when the file is missing or unreadable.\n"
    "A FILE that is not a regular file (a directory, a FIFO, a device) is\n"
    "unreadable: refused at once, never waited on.\n",
    config_flags,
    1,
    2,
    run_config,
};
