/*
 * cmd_import.c: `calhost import FILE...`: merges the profiles of other
 * store files into the store in one batch; a malformed file imports
 * nothing (its problems are listed as "FILE:LINE: message").
 */
#include <stdio.h>

#include "base/text.h"
#include "commands.h"
#include "diag.h"

typedef struct import_ctx {
  calstore_batch *batch;
  calstore_status st;
  calstore_error err;
  size_t count;
} import_ctx;

static int import_visit(void *user, const calstore_profile *p) {
  import_ctx *c = user;
  c->st = calstore_batch_put(c->batch, p, &c->err);
  if (c->st != CALSTORE_OK)
    return 1;
  c->count++;
  return 0;
}

static int run_import(calhost_cli *cli, cli_args *a) {
  calstore *s = NULL;
  if (calhost_cli_open_store(cli, &s) != CALSTORE_OK) {
    calstore_close(&s);
    return 2;
  }
  import_ctx c = {0};
  calstore_error err = {0};
  calstore_status st = calstore_batch_begin(s, &c.batch, &err);
  if (st != CALSTORE_OK)
    calhost_cli_error("import: %s: %s", calstore_status_name(st), err.message);
  for (size_t i = 0; i < a->positional_count && st == CALSTORE_OK; i++) {
    const char *file = a->positional[i];
    diag_list d = {0};
    c.st = CALSTORE_OK;
    st = calstore_read_file(file, import_visit, &c, diag_collect, &d, NULL);
    if (st != CALSTORE_OK) {
      calhost_cli_error("import: %s is %s; nothing was imported", file, calstore_status_name(st));
      diag_print(stderr, file, &d);
    } else if (c.st != CALSTORE_OK) {
      st = c.st;
      calhost_cli_error("import: %s: %s; nothing was imported", file, c.err.message);
    }
    diag_free(&d);
  }
  if (st == CALSTORE_OK) {
    st = calstore_batch_commit(&c.batch, &err);
    if (st != CALSTORE_OK)
      calhost_cli_error("import: %s: %s", calstore_status_name(st), err.message);
  }
  calstore_batch_abort(&c.batch);
  calstore_close(&s);
  if (st != CALSTORE_OK)
    return 2;
  if (cli->json)
    printf("{\"status\":\"ok\",\"profiles\":%zu,\"files\":%zu}\n", c.count, a->positional_count);
  else if (!cli->quiet)
    printf("imported %zu profiles from %zu file%s\n", c.count, a->positional_count,
           a->positional_count == 1 ? "" : "s");
  return 0;
}

const cli_command calhost_cmd_import = {
    "import",           "FILE...",  "merge profiles from other store files", NULL, NULL, 1,
    CLI_MAX_POSITIONAL, run_import,
};
