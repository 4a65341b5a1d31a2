/*
 * cmd_devices.c: `calhost devices [--plugin BACKEND]... [--json]`: every
 * device of every device backend found (like `clinfo -l` or `nvidia-smi
 * -L`): backend, index, kind, name and identity, and with --json the
 * hardware and the plugin's details. Plugins disabled by the configuration
 * are listed too (marked), so a device a disabled backend would calibrate
 * is visible. The listing runs plugin code (and starts device runtimes):
 * each plugin's devices are listed in a child (runtime/devices.h), never in
 * this process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "commands.h"
#include "config/config.h"
#include "loader/loader.h"
#include "runtime/binding.h"
#include "runtime/devices.h"

#define MAX_FILTER 64

typedef struct listed {
  loader_plugin *p;
  int enabled;
  int device_backend;
  int failed;
  char why[1024];
  runtime_device_list devices;
} listed;

static void print_text(FILE *out, const listed *l, size_t n) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    const listed *x = &l[i];
    const char *note = x->enabled ? "" : " (disabled in the configuration)";
    if (!x->device_backend) {
      base_text_printf(out, "%s%s: no devices (runs on the host's CPUs)\n", x->p->backend, note);
      continue;
    }
    if (x->failed) {
      base_text_printf(out, "%s%s: cannot list devices: %s\n", x->p->backend, note, x->why);
      continue;
    }
    base_text_printf(out, "%s%s: %zu device%s\n", x->p->backend, note, x->devices.count,
                     x->devices.count == 1 ? "" : "s");
    for (size_t k = 0; k < x->devices.count; k++) {
      const runtime_device *d = &x->devices.items[k];
      base_text_printf(out, "  device %u (%s): %s\n", d->index, runtime_device_kind_name(d->kind),
                       d->name);
      base_text_printf(out, "    identity %s\n", d->identity);
      total++;
    }
  }
  fprintf(out, "%zu device%s\n", total, total == 1 ? "" : "s");
}

static void print_json(FILE *out, const listed *l, size_t n) {
  int first = 1;
  fputc('{', out);
  base_json_key(out, 1, "devices");
  fputc('[', out);
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < l[i].devices.count; k++) {
      const runtime_device *d = &l[i].devices.items[k];
      fputs(first ? "\n{" : ",\n{", out);
      first = 0;
      base_json_member_string(out, 1, "backend", l[i].p->backend);
      base_json_member_uint(out, 0, "index", d->index);
      base_json_member_string(out, 0, "kind", runtime_device_kind_name(d->kind));
      base_json_member_string(out, 0, "name", d->name);
      base_json_member_string(out, 0, "identity", d->identity);
      base_json_member_string(out, 0, "hardware", d->hardware);
      base_json_member_bool(out, 0, "enabled", l[i].enabled);
      base_json_key(out, 0, "details");
      fputc('{', out);
      for (size_t j = 0; j < d->detail_count; j++) {
        base_json_key(out, j == 0, d->details[j].name);
        base_json_string(out, d->details[j].value);
      }
      fputs("}}", out);
    }
  fputs("\n]", out);
  base_json_key(out, 0, "plugins");
  fputc('[', out);
  for (size_t i = 0; i < n; i++) {
    fputs(i ? ",\n{" : "\n{", out);
    base_json_member_string(out, 1, "backend", l[i].p->backend);
    base_json_member_bool(out, 0, "enabled", l[i].enabled);
    base_json_member_bool(out, 0, "device_backend", l[i].device_backend);
    base_json_member_uint(out, 0, "device_count", l[i].devices.count);
    base_json_member_string(out, 0, "error", l[i].failed ? l[i].why : NULL);
    fputc('}', out);
  }
  fputs("\n]}\n", out);
}

static int run_devices(cli_context *cli, cli_args *a) {
  config_settings cfg;
  loader_options o;
  loader_plugin_list list;
  char *only[MAX_FILTER];
  size_t nonly = cli_all(a, FL_PLUGIN, only, MAX_FILTER);
  if (nonly > MAX_FILTER)
    return cli_usage(a, "at most %d --plugin flags", MAX_FILTER);
  memset(&cfg, 0, sizeof cfg);
  if (cli_load_config(cli, &cfg) != 0)
    return 2;
  loader_options_init(&o);
  runtime_binding_loader_options(&cfg, &o);
  /* disabled backends are listed too (marked): load every plugin found,
   * or the --plugin ones */
  o.enabled = nonly ? only : NULL;
  o.enabled_count = nonly;
  o.disabled = NULL;
  o.disabled_count = 0;
  if (cli_discover(cli, "devices", &o, &list) != 0) {
    config_free(&cfg);
    return 2;
  }
  int status = 0;
  listed *l = calloc(list.count + 1, sizeof *l);
  size_t n = 0;
  if (!l) {
    cli_error("devices: out of memory");
    status = 2;
    goto out;
  }
  for (size_t i = 0; i < nonly; i++) {
    loader_plugin *p = loader_plugin_list_find(&list, only[i]);
    if (!p || !p->loaded) {
      cli_error("devices: plugin %s: %s", only[i],
                p && p->reason ? p->reason : "not found (or it failed to load)");
      status = 1;
    }
  }
  for (size_t i = 0; i < list.count; i++) {
    loader_plugin *p = list.items[i];
    if (!p->loaded)
      continue;
    listed *x = &l[n++];
    x->p = p;
    x->enabled = config_backend_enabled(&cfg, p->backend);
    x->device_backend = runtime_devices_supported(p);
    if (x->device_backend &&
        runtime_devices_list_isolated(&cfg, p, cfg.plugin_timeout_seconds, &x->devices, x->why,
                                      sizeof x->why) != 0) {
      x->failed = 1;
      status = 1;
    }
  }
  if (cli->json)
    print_json(stdout, l, n);
  else
    print_text(stdout, l, n);
out:
  for (size_t i = 0; i < n; i++)
    runtime_device_list_free(&l[i].devices);
  free(l);
  loader_plugin_list_free(&list);
  config_free(&cfg);
  return status;
}

static const cli_flag devices_flags[] = {
    {FL_PLUGIN, "--plugin", NULL, "BACKEND", "only this backend's devices (repeatable)"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

const cli_command cli_cmd_devices = {
    "devices",
    "[--plugin BACKEND]... [--json]",
    "list the devices of every device backend",
    "Every device of every plugin that drives devices (ABI 2): backend, index,\n"
    "kind, name and identity; --json adds the hardware and the plugin's details.\n"
    "Backends disabled in the configuration are listed too, marked. The index or\n"
    "the identity names a device in [plugin NAME] devices and in lookup/override\n"
    "--device. Exit 1 when a backend could not list its devices.\n",
    devices_flags,
    0,
    0,
    run_devices,
};
