/*
 * cmd_list.c: `calhost list [--backend B]`: every stored profile, one line
 * of text each (control characters escaped) or a JSON array of profile
 * objects (store_json.h).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "store_json.h"

static const cli_flag list_flags[] = {
    {FL_BACKEND, "--backend", NULL, "NAME", "only this backend's profiles"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

typedef struct list_ctx {
  const char *backend;
  int json;
  size_t printed;
} list_ctx;

static int list_visit(void *user, const calstore_profile *p) {
  list_ctx *c = user;
  if (c->backend && strcmp(c->backend, p->key.backend))
    return 0;
  if (c->json) {
    fputs(c->printed ? ",\n" : "\n", stdout);
    calhost_json_profile(stdout, p);
  } else {
    calhost_text_profile(stdout, p);
  }
  c->printed++;
  return 0;
}

static int run_list(calhost_cli *cli, cli_args *a) {
  calstore *s = NULL;
  if (calhost_cli_open_store(cli, &s) != CALSTORE_OK) {
    calstore_close(&s);
    return 2;
  }
  list_ctx c = {a->value[FL_BACKEND], cli->json, 0};
  if (c.json)
    fputs("[", stdout);
  calstore_inspect(s, list_visit, &c);
  if (c.json)
    fputs(c.printed ? "\n]\n" : "]\n", stdout);
  calstore_close(&s);
  return 0;
}

const cli_command calhost_cmd_list = {
    "list", "[--backend B]", "list stored profiles", NULL, list_flags, 0, 0, run_list,
};
