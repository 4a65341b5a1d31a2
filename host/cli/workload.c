/*
 * workload.c: the workload forms of `lookup` and `override` over the
 * deployment runtime (see workload.h): the lookup itself goes through the
 * public API (calhost/runtime.h) as a deployment's does; the command also
 * uses the internal configuration code, to read the file first with its
 * own search and messages (then the runtime reads it again) and to parse
 * --threads.
 */
#include "workload.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "config/values.h"

int wl_refuse_key_flags(const cli_args *a) {
  static const cli_flag key_flags[] = {WL_KEY_FLAGS, {FL_NONE, NULL, NULL, NULL, NULL}};
  for (const cli_flag *f = key_flags; f->id != FL_NONE; f++)
    if (cli_has(a, f->id))
      return cli_usage(a, "%s cannot be combined with --workload (the plugin builds the key)",
                       f->name);
  return 0;
}

calhost_runtime_status wl_runtime_open(cli_context *cli, int force_portable, const char *device,
                                       calhost_runtime **rt, char *err, size_t err_capacity) {
  char path[4096];
  const char *file = NULL;
  config_settings cfg;
  *rt = NULL;
  if (err_capacity)
    err[0] = '\0';
  /* the command's own reading: its search, its notes, its errors */
  if (cli_load_config_file(cli, &cfg, path, sizeof path, &file) != 0)
    return CALHOST_RUNTIME_CONFIG;
  config_free(&cfg);
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = file; /* NULL: the built-in defaults, as the command said */
  o.store_path = cli->store_path;
  o.force_portable = force_portable;
  o.device = device;
  return calhost_runtime_open(&o, rt, err, err_capacity);
}

calhost_runtime_status wl_open_key(cli_context *cli, const char *cmd, const char *backend,
                                   int force_portable, wl_ctx *c, char *unvalidated,
                                   size_t unvalidated_cap) {
  char why[4608];
  memset(c, 0, sizeof *c);
  unvalidated[0] = '\0';
  calhost_runtime_status rs = wl_runtime_open(cli, force_portable, NULL, &c->rt, why, sizeof why);
  if (rs != CALHOST_RUNTIME_OK) {
    if (why[0])
      cli_error("%s", why);
    return rs;
  }
  rs = calhost_runtime_load_plugin(c->rt, backend, NULL, &c->plugin, why, sizeof why);
  if (rs == CALHOST_RUNTIME_NOT_FOUND || rs == CALHOST_RUNTIME_PLUGIN) {
    c->plugin = NULL;
    snprintf(unvalidated, unvalidated_cap, "policy not validated: %s", why);
    if (!cli->quiet)
      cli_error("warning: %s", unvalidated);
  } else if (rs != CALHOST_RUNTIME_OK) {
    cli_error("%s: %s", cmd, why);
    wl_close(c);
    return rs;
  }
  return CALHOST_RUNTIME_OK;
}

void wl_close(wl_ctx *c) {
  calhost_runtime_choice_free(&c->choice);
  calhost_runtime_selection_free(&c->sel);
  calhost_runtime_close(&c->rt);
  c->plugin = NULL;
}

/* Appends "NAME (WHAT)" to c->asked, ", "-separated. */
static void asked(wl_ctx *c, const char *name, const char *what) {
  size_t n = strlen(c->asked);
  snprintf(c->asked + n, sizeof c->asked - n, "%s%.200s (%.1000s)", n ? ", " : "", name, what);
  c->asked_count++;
}

/* A lookup without --plugin: every enabled plugin serving the workload's
 * operator answers and the runtime chooses (calhost_runtime_choose: the
 * configured order, else the race recorded between them, else the first in
 * the loader's order with a profile); a plugin that cannot answer here (no
 * device, a failing create) is passed over and named in c->asked. Without
 * any profile the answer is the first plugin's "none". */
static calhost_runtime_status select_any(wl_ctx *c, const char *workload, uint32_t tc, char *err,
                                         size_t cap) {
  calhost_runtime_status st = calhost_runtime_choose(c->rt, workload, tc, &c->choice, err, cap);
  if (st != CALHOST_RUNTIME_OK)
    return st;
  for (size_t i = 0; i < c->choice->candidate_count; i++) {
    const calhost_runtime_candidate *x = &c->choice->candidates[i];
    char what[4700];
    if (c->choice->backend && !strcmp(x->backend, c->choice->backend))
      snprintf(what, sizeof what, "selected");
    else if (x->has_profile)
      snprintf(what, sizeof what, "has a profile, not chosen");
    else if (x->note)
      snprintf(what, sizeof what, "%s", x->note);
    else
      snprintf(what, sizeof what, "none, %zu rejected", x->rejection_count);
    asked(c, x->backend, what);
  }
  c->sel = c->choice->selection;
  c->choice->selection = NULL; /* c->sel owns it now */
  if (c->choice->plugin)
    c->plugin = c->choice->plugin;
  else if (c->sel) /* none chosen: the plugin of the first answer */
    for (size_t i = 0; i < c->choice->candidate_count; i++)
      if (!c->choice->candidates[i].note) {
        calhost_runtime_load_plugin(c->rt, c->choice->candidates[i].backend, NULL, &c->plugin, NULL,
                                    0);
        break;
      }
  return CALHOST_RUNTIME_OK;
}

int wl_open(cli_context *cli, const char *workload, const char *plugin, const char *threads,
            const char *device, int force_portable, int select, wl_ctx *c) {
  char err[4608];
  memset(c, 0, sizeof *c);
  uint32_t tc = 0; /* the runtime's default: the first configured count */
  if (threads) {
    if (config_value_thread_count(threads, &tc, err, sizeof err) != 0) {
      cli_error("bad --threads '%s': %s", threads, err);
      return 2;
    }
    if (tc == 0) /* "max" */
      tc = CALHOST_RUNTIME_THREADS_MAX;
  }
  calhost_runtime_status st = wl_runtime_open(cli, force_portable, device, &c->rt, err, sizeof err);
  c->status = st;
  if (st == CALHOST_RUNTIME_CONFIG && !err[0])
    return 2; /* the command said why */
  if (st == CALHOST_RUNTIME_OK)
    st = calhost_runtime_load_plugin(c->rt, plugin, workload, &c->plugin, err, sizeof err);
  if (st == CALHOST_RUNTIME_OK && select && !plugin)
    st = select_any(c, workload, tc, err, sizeof err);
  else if (st == CALHOST_RUNTIME_OK)
    st = select
             ? calhost_runtime_select(c->rt, c->plugin, workload, tc, &c->sel, err, sizeof err)
             : calhost_runtime_build_keys(c->rt, c->plugin, workload, tc, &c->sel, err, sizeof err);
  c->status = st;
  if (st != CALHOST_RUNTIME_OK) {
    cli_error("%s", err);
    return 2;
  }
  return 0;
}

const char *wl_rule_word(calhost_runtime_rule r) {
  return r == CALHOST_RUNTIME_RULE_CONFIGURED ? "configuration"
         : r == CALHOST_RUNTIME_RULE_RACE     ? "race"
         : r == CALHOST_RUNTIME_RULE_FIRST    ? "loader order"
                                              : "nothing";
}
