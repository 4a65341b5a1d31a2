/*
 * cmd_invalidate.c: `calhost invalidate --backend B [--implementation V]`:
 * removes a backend's profiles, calibrated ones and user overrides, exact
 * and portable (of one implementation version, or all).
 * With [store] persistence_enabled = false nothing is kept: a note says so
 * (--json: "persisted": false).
 */
#include <stdio.h>

#include "commands.h"

static const cli_flag invalidate_flags[] = {
    {FL_BACKEND, "--backend", NULL, "NAME", "the backend whose profiles go (required)"},
    {FL_IMPLEMENTATION, "--implementation", NULL, "VERSION", "only this implementation version"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

static int run_invalidate(cli_context *cli, cli_args *a) {
  if (!cli_has(a, FL_BACKEND))
    return cli_usage(a, "--backend is required");
  calstore *s = NULL;
  if (cli_open_store(cli, &s) != CALSTORE_OK)
    return 2;
  calstore_error err = {0};
  size_t removed = 0;
  calstore_status st =
      calstore_invalidate(s, a->value[FL_BACKEND], a->value[FL_IMPLEMENTATION], &removed, &err);
  calstore_close(&s);
  /* a failure that removed something is the directory sync after the
   * rename (calstore_invalidate): the profiles are gone for everyone */
  st = cli_store_durability("invalidate", st, removed != 0, &err);
  if (st != CALSTORE_OK)
    return cli_store_failed("invalidate", st, &err);
  return cli_store_done(cli, 1, "removed", removed, "removed %zu profiles\n", removed);
}

const cli_command cli_cmd_invalidate = {
    "invalidate",
    "--backend B [--implementation V]",
    "remove a backend's profiles",
    "Removes every profile of the backend (of one implementation version with\n"
    "--implementation): calibrated profiles and user overrides, exact and\n"
    "portable. Exit 0 (also when none matched), 2 on errors.\n",
    invalidate_flags,
    0,
    0,
    run_invalidate,
};
