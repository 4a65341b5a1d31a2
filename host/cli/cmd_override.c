/*
 * cmd_override.c: `calhost override set|clear`, both of its forms:
 *   override set|clear --backend B --operator OP --implementation V
 *       (--model-digest D --processor P --threads N | --portable
 *        --structure NAME=VALUE...) [--policy TEXT]
 *       a key given on the command line; `set` validates the policy with
 *       the plugin serving --backend when it loads here, else installs it
 *       unvalidated with a warning;
 *   override set|clear --workload W [--plugin B] [--threads N|max] [--device D]
 *       [--portable] [--policy TEXT]
 *       the key the plugin builds for this machine (workload.c); `set`
 *       validates the policy with the plugin first.
 * Exit 0 done, 1 the plugin refused the policy or (clear) no such
 * override, 2 usage or operational error. With [store]
 * persistence_enabled = false the change is not kept: a note says so
 * (--json: "persisted": false).
 */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "commands.h"
#include "workload.h"

static const cli_flag override_flags[] = {
    {FL_POLICY, "--policy", NULL, "TEXT", "the policy to install (set)"},
    {FL_PORTABLE, "--portable", NULL, NULL, "the portable key instead of the exact one"},
    {FL_WORKLOAD, "--workload", NULL, "NAME", "the configured workload (deployment form)"},
    {FL_PLUGIN, "--plugin", NULL, "BACKEND", "with --workload: the plugin that builds the key"},
    {FL_THREADS, "--threads", NULL, "N", "thread count of the exact key (--workload: N or max)"},
    {FL_DEVICE, "--device", NULL, "INDEX|IDENTITY",
     "with --workload: the device of a device backend (see calhost devices)"},
    WL_KEY_FLAGS,
    {FL_NONE, NULL, NULL, NULL, NULL},
};

static const char *fixed_policy(void *user, size_t *length, char *err, size_t cap) {
  (void)err;
  (void)cap;
  *length = strlen(user);
  return user;
}

/* Commits batch b holding one change (st: how queueing it went) with
 * calstore_batch_commit_applied: a failed directory sync after the rename
 * is a change made, with a durability warning (cli_store_durability).
 * Frees the batch whatever the outcome. */
static calstore_status commit_change(const char *cmd, calstore_batch **b, calstore_status st,
                                     calstore_error *err) {
  if (st == CALSTORE_OK) {
    int applied = 0;
    st = calstore_batch_commit_applied(b, &applied, err);
    st = cli_store_durability(cmd, st, applied, err);
  }
  calstore_batch_abort(b);
  return st;
}

/* Installs the override of key k with policy in one batch (commit_change). */
static calstore_status install(const char *cmd, calstore *store, const calstore_key *k,
                               const char *policy, calstore_validator_fn validator, void *user,
                               calstore_error *err) {
  calstore_batch *b = NULL;
  calstore_status st = calstore_batch_begin(store, &b, err);
  if (st == CALSTORE_OK)
    st = calstore_batch_install_override(b, k, NULL, 0, fixed_policy, (void *)policy, validator,
                                         user, err);
  return commit_change(cmd, &b, st, err);
}

/* Clears the override of key k in one batch (commit_change), or
 * CALSTORE_NOT_FOUND when the store, as this command opened it, holds no
 * override with the key. */
static calstore_status clear(const char *cmd, calstore *store, const calstore_key *k,
                             calstore_error *err) {
  calstore_lookup_result *got = NULL;
  calstore_status st = calstore_get(store, k, CALSTORE_SOURCE_OVERRIDE, &got, err);
  int found = st == CALSTORE_OK && got && got->profile;
  calstore_lookup_result_free(&got);
  if (st != CALSTORE_OK && st != CALSTORE_NOT_FOUND)
    return st;
  if (!found)
    return CALSTORE_NOT_FOUND;
  calstore_batch *b = NULL;
  st = calstore_batch_begin(store, &b, err);
  if (st == CALSTORE_OK)
    st = calstore_batch_clear_override(b, k, err);
  return commit_change(cmd, &b, st, err);
}

/* The exit status and message of a store answer. */
static int finish(cli_context *cli, const char *cmd, calstore_status st, const calstore_error *err,
                  const char *done) {
  if (st == CALSTORE_NOT_FOUND || st == CALSTORE_POLICY_REJECTED) {
    /* a "no" (exit 1): said on stderr, and answered on stdout with --json
     * as lookup answers its "no" */
    if (st == CALSTORE_NOT_FOUND)
      cli_error("%s: no override with this key", cmd);
    else
      /* the store's message says what refused it: no second layer saying so */
      cli_error("%s: %s (%s)", cmd, err->message, calstore_status_name(st));
    if (cli->json)
      base_json_status_message(stdout, calstore_status_name(st),
                               st == CALSTORE_NOT_FOUND ? "no override with this key"
                                                        : err->message);
    if (st == CALSTORE_NOT_FOUND)
      cli_store_change_kept(cli); /* with persistence off the store read nothing */
    return 1;
  }
  if (st != CALSTORE_OK) {
    cli_store_failed(cmd, st, err);
    return 2;
  }
  return cli_store_done(cli, 1, NULL, 0, "%s\n", done);
}

static int override_workload(cli_context *cli, cli_args *a, int set, const char *cmd) {
  if (wl_refuse_key_flags(a))
    return 2;
  const char *workload = a->value[FL_WORKLOAD], *policy = a->value[FL_POLICY];
  int portable = cli_has(a, FL_PORTABLE);
  wl_ctx c;
  int rc = wl_open(cli, workload, a->value[FL_PLUGIN], a->value[FL_THREADS], a->value[FL_DEVICE],
                   -1, 0, &c);
  if (rc != 0) {
    wl_close(&c);
    return rc;
  }
  const calstore_key *k = portable ? &c.sel->portable : &c.sel->exact;
  calstore *store = calhost_runtime_store(c.rt);
  calstore_error err = {0};
  calstore_status st;
  if (set)
    st = install(cmd, store, k, policy, calhost_runtime_validate_policy, c.plugin, &err);
  else
    st = clear(cmd, store, k, &err);
  char done[1024];
  snprintf(done, sizeof done, "%s %s override for %s workload %s%s", set ? "installed" : "cleared",
           portable ? "portable" : "exact", c.sel->exact.backend, workload,
           portable ? "" : " on this machine");
  rc = finish(cli, cmd, st, &err, done);
  wl_close(&c);
  return rc;
}

static int run_override(cli_context *cli, cli_args *a) {
  const char *action = a->positional[0];
  if (strcmp(action, "set") && strcmp(action, "clear"))
    return cli_usage(a, "use 'override set' or 'override clear', not '%s'", action);
  int set = !strcmp(action, "set");
  const char *cmd = set ? "override set" : "override clear";
  if (set && !cli_has(a, FL_POLICY))
    return cli_usage(a, "set: --policy TEXT is required");
  if (!set && cli_has(a, FL_POLICY))
    return cli_usage(a, "clear takes no --policy");
  if (cli_has(a, FL_WORKLOAD))
    return override_workload(cli, a, set, cmd);
  if (cli_has(a, FL_PLUGIN) || cli_has(a, FL_DEVICE))
    return cli_usage(a, "%s needs --workload", cli_has(a, FL_PLUGIN) ? "--plugin" : "--device");
  calstore_property structure[CALHOST_CLI_MAX_STRUCTURE];
  calstore_key k;
  int rc = cli_key_flags(a, cli_has(a, FL_PORTABLE), 0, &k, structure);
  if (rc)
    return rc;
  calstore_error err = {0};
  calstore_status st;
  if (!set) {
    calstore *s = NULL;
    if (cli_open_store(cli, &s) != CALSTORE_OK)
      return 2;
    st = clear(cmd, s, &k, &err);
    calstore_close(&s);
    return finish(cli, cmd, st, &err, "override cleared");
  }
  /* set: the policy goes through the validator of the plugin serving
   * --backend when it loads here, as lookup's key form does; else it is
   * installed unvalidated, with a warning (a store prepared for elsewhere) */
  wl_ctx c;
  char unvalidated[4700];
  if (wl_open_key(cli, cmd, k.backend, -1, &c, unvalidated, sizeof unvalidated) !=
      CALHOST_RUNTIME_OK)
    return 2;
  st = install(cmd, calhost_runtime_store(c.rt), &k, a->value[FL_POLICY],
               c.plugin ? calhost_runtime_validate_policy : NULL, c.plugin, &err);
  rc = finish(cli, cmd, st, &err,
              c.plugin ? "override installed" : "override installed (not validated)");
  wl_close(&c);
  return rc;
}

const cli_command cli_cmd_override = {
    "override",
    "set|clear --backend B --operator OP --implementation V\n"
    "       (--model-digest D --processor P --threads N | --portable --structure N=V...)\n"
    "       [--policy TEXT]\n"
    "   or: calhost override set|clear --workload W [--plugin B] [--threads N|max] [--device D] "
    "[--portable]\n"
    "       [--policy TEXT]",
    "set or clear a user override",
    "An override wins over calibrated profiles of the same key. With --workload\n"
    "the plugin builds the key for this machine. set validates the policy with\n"
    "the plugin (the key form: the one serving --backend; when none loads here,\n"
    "the override is stored unvalidated, with a warning); a refused policy\n"
    "exits 1.\n",
    override_flags,
    1,
    1,
    run_override,
};
