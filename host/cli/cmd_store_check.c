/*
 * cmd_store_check.c: `calhost check` (of the store; `calhost plugin check`
 * is cmd_plugin_check.c): reads the store file (--store, else the
 * configured or default one) strictly and reports its status, each problem
 * as "PATH:LINE: message" and the profile count. Exit 0 valid, 1 not.
 */
#include <stdio.h>

#include "base/json.h"
#include "base/text.h"
#include "commands.h"
#include "diag.h"

static int run_check(cli_context *cli, cli_args *a) {
  (void)a;
  char path[4096];
  /* the path only: opening the store would report its problems a second time */
  if (cli_store_path(cli, path, sizeof path) != 0)
    return 2;
  diag_list d = {0};
  size_t count = 0;
  calstore_status st = calstore_read_file(path, NULL, NULL, diag_collect, &d, &count);
  if (cli->json) {
    fputc('{', stdout);
    base_json_member_string(stdout, 1, "status", calstore_status_name(st));
    base_json_member_string(stdout, 0, "path", path);
    base_json_member_uint(stdout, 0, "profiles", count);
    base_json_key(stdout, 0, "diagnostics");
    diag_print_json(stdout, &d);
    fputs("}\n", stdout);
  } else {
    printf("%s\n", calstore_status_name(st));
    diag_print(stdout, path, &d);
    if (st == CALSTORE_OK && !cli->quiet)
      printf("%zu profiles\n", count);
  }
  diag_free(&d);
  return st == CALSTORE_OK ? 0 : 1;
}

const cli_command cli_cmd_check = {
    "check",
    "",
    "check the store file",
    "Reads the store strictly: prints its status, every problem as PATH:LINE:\n"
    "message, and the number of profiles. Exit 0 valid, 1 not.\n",
    NULL,
    0,
    0,
    run_check,
};
