/*
 * workload.h: the workload forms of `lookup` and `override` over the
 * deployment runtime (host/runtime), the lookup through its public API
 * (include/calhost/runtime.h) as a deployment uses it: the command's
 * configuration file (its search rule, read once by the command through
 * host/config for its messages, then again by the runtime) and --store open a
 * runtime (calhost_runtime_open), which loads the plugin that serves the
 * workload (with its [plugin NAME] settings) and builds the keys for this
 * machine, exactly as a deployment and calibrate do.
 */
#ifndef CALHOST_CLI_WORKLOAD_H
#define CALHOST_CLI_WORKLOAD_H

#include "calhost/runtime.h"
#include "commands.h"

typedef struct wl_ctx {
  calhost_runtime *rt;
  calhost_runtime_plugin *plugin;
  calhost_runtime_selection *sel; /* the keys (and, after wl_select, the answer) */
  calhost_runtime_status status;  /* wl_open's failure (CALHOST_RUNTIME_STORE: the store) */
  /* a lookup without --plugin: the plugins asked, "NAME (selected|none, N
   * rejected|why not)", ", "-separated, and how many */
  char asked[2048];
  size_t asked_count;
  /* a lookup without --plugin: the runtime's choice among them (its
   * reason, the race's figures); sel is its selection */
  calhost_runtime_choice *choice;
} wl_ctx;

/* The key form's flags of lookup and override, as entries of a cli_flag
 * table (the workload form refuses them: its plugin builds the key). */
/* clang-format off */
#define WL_KEY_FLAGS                                                                               \
  {FL_BACKEND, "--backend", NULL, "NAME", "key: backend"},                                         \
  {FL_OPERATOR, "--operator", NULL, "OP", "key: operator"},                                        \
  {FL_IMPLEMENTATION, "--implementation", NULL, "VERSION", "key: implementation version"},         \
  {FL_MODEL_DIGEST, "--model-digest", NULL, "DIGEST", "exact key: model digest"},                  \
  {FL_PROCESSOR, "--processor", NULL, "TEXT", "exact key: processor"},                             \
  {FL_STRUCTURE, "--structure", NULL, "NAME=VALUE", "portable key property (repeatable)"}
/* clang-format on */

/* Opens the deployment runtime as the command's configuration says, with
 * calhost_runtime_open alone: the command reads its configuration first
 * (cli_load_config_file: its search rule, its notes on stderr, its errors
 * with file and line, the [store] persistence_enabled of
 * cli_store_change_kept), then the runtime is opened on the same file (the
 * built-in defaults when none was found) with --store, force_portable (1:
 * forced, 0: not, -1: the configuration's) and device (NULL: the runtime's
 * default). Returns CALHOST_RUNTIME_OK with *rt; CALHOST_RUNTIME_CONFIG
 * with err "" when the command's reading failed (said already); else the
 * runtime's status with its one line in err (not printed). */
calhost_runtime_status wl_runtime_open(cli_context *cli, int force_portable, const char *device,
                                       calhost_runtime **rt, char *err, size_t err_capacity);

/* The key form of lookup and override (--backend ...): opens the
 * deployment runtime (wl_runtime_open) with --store
 * (force_portable 1: forced, -1: the configuration's), then loads the
 * plugin serving backend, to validate policies with. A plugin that cannot be
 * found or loaded is no failure: c->plugin stays NULL and unvalidated says
 * why ("policy not validated: ..."), also printed as a warning on stderr
 * (not under --quiet).
 * Returns CALHOST_RUNTIME_OK (close with wl_close), or the failure, printed,
 * with c closed. */
calhost_runtime_status wl_open_key(cli_context *cli, const char *cmd, const char *backend,
                                   int force_portable, wl_ctx *c, char *unvalidated,
                                   size_t unvalidated_cap);

/* With --workload: a usage error naming the first key flag given ("--backend
 * cannot be combined with --workload ..."), returning 2; 0 when none is. */
int wl_refuse_key_flags(const cli_args *a);

/* Loads the configuration (the command's rule) and opens a runtime over it
 * with --store (force_portable 1: forced, -1: the configuration's), loads
 * `plugin` (else the first enabled plugin serving the workload's operator;
 * with select, every enabled plugin serving it, and the runtime chooses
 * among them (calhost_runtime_choose: the configured order, else the
 * race, else the first with a profile): c->plugin and c->sel are the
 * chosen one's, or the first one's "none", c->choice says why, and
 * c->asked names each plugin asked and its answer)
 * and builds the keys of `workload` for `threads` ("N" or "max"; NULL: the
 * first configured thread count) on `device` (--device INDEX|IDENTITY of
 * a device backend; NULL: the first of its [plugin NAME] devices, as calibrate
 * calibrates them). With select set, also selects the
 * policy (c->sel->result). Returns 0, or prints why and returns 2; call
 * wl_close either way. */
int wl_open(cli_context *cli, const char *workload, const char *plugin, const char *threads,
            const char *device, int force_portable, int select, wl_ctx *c);

/* Releases everything wl_open acquired. */
void wl_close(wl_ctx *c);

/* How the runtime chose a backend, as lookup prints it: "configuration",
 * "race", "loader order" or "nothing". */
const char *wl_rule_word(calhost_runtime_rule rule);

#endif /* CALHOST_CLI_WORKLOAD_H */
