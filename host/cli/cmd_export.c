/*
 * cmd_export.c: `calhost export OUT`: writes the store's profiles to OUT
 * in the store format (calstore_export).
 */
#include <stdio.h>

#include "base/text.h"
#include "commands.h"

static int run_export(cli_context *cli, cli_args *a) {
  const char *out = a->positional[0];
  calstore *s = NULL;
  if (cli_open_store(cli, &s) != CALSTORE_OK)
    return 2;
  calstore_error err = {0};
  calstore_status st = calstore_export(s, out, &err);
  size_t n = calstore_count(s);
  calstore_close(&s);
  if (st != CALSTORE_OK)
    return cli_store_failed("export", st, &err);
  return cli_store_done(cli, "profiles", n, "exported %zu profiles to %s\n", n, out);
}

const cli_command cli_cmd_export = {
    "export", "OUT", "write the profiles to a file", NULL, NULL, 1, 1, run_export,
};
