/*
 * cmd_plugins.c: `calhost plugins [--json]`: lists every discovered plugin:
 * path, backend, implementation and ABI versions, operators, loaded or
 * rejected, the loader's state (unsafe, unloadable, duplicate, disabled)
 * and the reason (`calhost plugin check` is cmd_plugin_check.c).
 * Plugin directories, explicit paths and the enabled/disabled lists come
 * from the configuration ([plugins]); CALHOST_PLUGIN_PATH adds directories.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "base/words.h"
#include "commands.h"
#include "config/config.h"
#include "loader/loader.h"
#include "runtime/binding.h"

static const char *origin_name(loader_plugin_origin o) {
  static const char *const words[] = {[CALHOST_ORIGIN_EXPLICIT] = "explicit",
                                      [CALHOST_ORIGIN_ENVIRONMENT] = "CALHOST_PLUGIN_PATH",
                                      [CALHOST_ORIGIN_CONFIG] = "config",
                                      [CALHOST_ORIGIN_DEFAULT] = "default"};
  return BASE_WORD(words, CALHOST_ORIGIN_DEFAULT, o, "unknown");
}

static void print_json(FILE *out, const loader_plugin_list *list) {
  fputs("{\"plugins\":[", out);
  for (size_t i = 0; i < list->count; i++) {
    const loader_plugin *p = list->items[i];
    fputs(i ? ",\n{" : "\n{", out);
    base_json_member_string(out, 1, "path", p->path);
    base_json_member_string(out, 0, "origin", origin_name(p->origin));
    base_json_member_string(out, 0, "backend", p->backend);
    base_json_member_string(out, 0, "implementation_version", p->implementation_version);
    base_json_member_uint(out, 0, "abi_version", p->abi_version);
    base_json_member_uint(out, 0, "plugin_abi_min", p->plugin_abi_min);
    base_json_member_uint(out, 0, "plugin_abi_max", p->plugin_abi_max);
    base_json_member_strings(out, 0, "operators", p->operators, p->operator_count);
    base_json_member_string(out, 0, "description", p->description);
    base_json_member_string(out, 0, "status", p->loaded ? "loaded" : "rejected");
    base_json_member_string(out, 0, "state", loader_plugin_state_name(p->state));
    base_json_member_string(out, 0, "reason",
                            p->loaded   ? NULL
                            : p->reason ? p->reason
                                        : "not loaded");
    fputc('}', out);
  }
  fputs("\n]}\n", out);
}

static void print_text(FILE *out, const loader_plugin_list *list) {
  size_t loaded = 0;
  if (!list->count)
    fprintf(out, "no plugins found (configure [plugins] directories or set "
                 "CALHOST_PLUGIN_PATH)\n");
  for (size_t i = 0; i < list->count; i++) {
    const loader_plugin *p = list->items[i];
    base_text_printf(out, "%s (%s)\n", p->path, origin_name(p->origin));
    if (p->backend) {
      char ops[2048] = "";
      for (size_t k = 0, n = 0; k < p->operator_count; k++)
        n += (size_t)snprintf(ops + n, n < sizeof ops ? sizeof ops - n : 0, " %s", p->operators[k]);
      base_text_printf(out,
                       "  backend %s, implementation %s, ABI %u (plugin %u..%u), "
                       "operators:%s\n",
                       p->backend, p->implementation_version ? p->implementation_version : "?",
                       p->abi_version, p->plugin_abi_min, p->plugin_abi_max, ops);
      if (p->description && *p->description)
        base_text_printf(out, "  %s\n", p->description);
    }
    if (p->loaded) {
      fprintf(out, "  loaded\n");
      loaded++;
    } else {
      base_text_printf(out, "  rejected: %s\n", p->reason ? p->reason : "not loaded");
    }
  }
  fprintf(out, "%zu plugin%s found, %zu loaded\n", list->count, list->count == 1 ? "" : "s",
          loaded);
}

static int run_plugins(cli_context *cli, cli_args *a) {
  config_settings cfg;
  loader_options o;
  loader_plugin_list list;
  (void)a;
  memset(&cfg, 0, sizeof cfg);
  if (cli_load_config(cli, &cfg) != 0)
    return 2;
  loader_options_init(&o);
  runtime_binding_loader_options(&cfg, &o);
  if (cli_discover(cli, "plugins", &o, &list) != 0) {
    config_free(&cfg);
    return 2;
  }
  if (cli->json)
    print_json(stdout, &list);
  else
    print_text(stdout, &list);
  loader_plugin_list_free(&list);
  config_free(&cfg);
  return 0;
}

const cli_command cli_cmd_plugins = {
    "plugins",
    "",
    "list discovered plugins",
    "Every plugin file found (configured directories, CALHOST_PLUGIN_PATH,\n"
    "explicit paths): backend, versions, operators, loaded or rejected and why.\n",
    NULL,
    0,
    0,
    run_plugins,
};
