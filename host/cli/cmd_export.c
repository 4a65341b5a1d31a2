/*
 * cmd_export.c: `calhost export OUT`: writes the store's profiles to OUT
 * in the store format (calstore_export). OUT follows the rule of every
 * output file (base_output_prepare: its missing folders are created; a
 * device, FIFO or directory at OUT, a folder that is a file or not
 * writable, or OUT itself read-only is refused before the store is read);
 * a failure of the export names OUT. Onto the store itself (also through
 * a link) the export is a commit under the store's lock that rewrites the
 * latest file; a hard link of the store is refused (calstore_export).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/files.h"
#include "base/text.h"
#include "commands.h"

static int run_export(cli_context *cli, cli_args *a) {
  const char *out = a->positional[0];
  char why[600];
  if (base_output_prepare(out, why, sizeof why) != 0)
    return cli_error("export: cannot write %s: %s", out, why);
  calstore *s = NULL;
  if (cli_open_store(cli, &s) != CALSTORE_OK)
    return 2;
  calstore_error err = {0};
  calstore_status st = calstore_export(s, out, &err);
  size_t n = calstore_count(s);
  calstore_close(&s);
  if (st != CALSTORE_OK) {
    /* the library names the file in err.path; say it when its message
     * does not ("cannot create a temporary file next to it: ...") */
    if (err.path[0] && !strstr(err.message, err.path))
      return cli_error("export: %s: %s: %s", calstore_status_name(st), err.path, err.message);
    return cli_store_failed("export", st, &err);
  }
  return cli_store_done(cli, 0, "profiles", n, "exported %zu profiles to %s\n", n, out);
}

const cli_command cli_cmd_export = {
    "export", "OUT", "write the profiles to a file", NULL, NULL, 1, 1, run_export,
};
