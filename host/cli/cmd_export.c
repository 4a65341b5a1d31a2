/*
 * cmd_export.c: `calhost export OUT`: writes the store's profiles to OUT
 * in the store format (calstore_export). A new OUT whose directory does
 * not exist (or is not a directory) is refused before the store is read,
 * naming both; a failure of the export names OUT.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/text.h"
#include "commands.h"

/* Refuses an OUT that cannot be created because its directory is missing
 * or not a directory: prints "export: cannot write OUT: its directory DIR
 * does not exist" (or "... DIR is not a directory") and returns 2; 0 when
 * OUT exists (a file or a link: the export replaces or follows it) or its
 * directory does. */
static int refuse_missing_directory(const char *out) {
  struct stat st;
  if (lstat(out, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
    return 0;
  char *copy = strdup(out);
  if (!copy)
    return cli_error("export: out of memory");
  const char *dir = dirname(copy);
  int rc = 0, found = stat(dir, &st) == 0;
  if (!found && (errno == ENOENT || errno == ENOTDIR))
    rc = cli_error("export: cannot write %s: its directory %s does not exist", out, dir);
  else if (found && !S_ISDIR(st.st_mode))
    rc = cli_error("export: cannot write %s: %s is not a directory", out, dir);
  free(copy);
  return rc;
}

static int run_export(cli_context *cli, cli_args *a) {
  const char *out = a->positional[0];
  if (refuse_missing_directory(out))
    return 2;
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
