/*
 * cmd_import.c: `calhost import [--force] FILE...`: merges the profiles of
 * other store files into the store in one batch; a malformed file imports
 * nothing (its problems are listed as "FILE:LINE: message").
 *
 * The portable rule of import (the fleet merge): an incoming portable
 * calibrated profile is a conditional put (calstore_batch_put_if_absent):
 * the commit writes it only when the store, as reloaded under the lock, and
 * the profiles queued before it in this import hold no calibrated profile
 * with its portable key. So the first calibrated portable profile of an
 * implementation stays, as with calibrate, whatever the order of the
 * shards; --force puts every profile (the last one of a key wins). Every
 * other profile is put as it is (exact keys carry the processor: node
 * types never collide).
 *
 * With [store] persistence_enabled = false nothing is kept: a note says so
 * (--json: "persisted": false, as every store change's reply).
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/json.h"
#include "base/text.h"
#include "commands.h"
#include "diag.h"

#define IMPORT_FLAG_BLOCK 1024

typedef struct flag_block { /* *stored of the conditional puts: must not move until the commit */
  struct flag_block *next;
  size_t used;
  int stored[IMPORT_FLAG_BLOCK];
} flag_block;

typedef struct import_ctx {
  calstore_batch *batch;
  calstore_status st;
  calstore_error err;
  size_t count;
  int force;
  flag_block *flags;
} import_ctx;

static int *next_flag(import_ctx *c) {
  if (!c->flags || c->flags->used == IMPORT_FLAG_BLOCK) {
    flag_block *b = calloc(1, sizeof *b);
    if (!b)
      return NULL;
    b->next = c->flags;
    c->flags = b;
  }
  return &c->flags->stored[c->flags->used++];
}

static int import_visit(void *user, const calstore_profile *p) {
  import_ctx *c = user;
  if (!c->force && p->key.kind == CALSTORE_KEY_PORTABLE &&
      p->source == CALSTORE_SOURCE_CALIBRATED) {
    int *stored = next_flag(c);
    if (!stored) {
      c->st = CALSTORE_NO_MEMORY;
      snprintf(c->err.message, sizeof c->err.message, "out of memory");
      return 1;
    }
    c->st = calstore_batch_put_if_absent(c->batch, p, stored, &c->err);
  } else {
    c->st = calstore_batch_put(c->batch, p, &c->err);
  }
  if (c->st != CALSTORE_OK)
    return 1;
  c->count++;
  return 0;
}

/* After the commit: the conditional puts that kept an existing profile;
 * frees the flags. */
static size_t import_kept(import_ctx *c) {
  size_t kept = 0;
  while (c->flags) {
    flag_block *b = c->flags;
    for (size_t i = 0; i < b->used; i++)
      kept += !b->stored[i];
    c->flags = b->next;
    free(b);
  }
  return kept;
}

static const cli_flag import_flags[] = {
    {FL_FORCE, "--force", NULL, NULL,
     "replace existing calibrated portable profiles too (default: the first one stays)"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

static int run_import(cli_context *cli, cli_args *a) {
  calstore *s = NULL;
  if (cli_open_store(cli, &s) != CALSTORE_OK)
    return 2;
  import_ctx c = {0};
  c.force = cli_has(a, FL_FORCE);
  calstore_error err = {0};
  calstore_status st = calstore_batch_begin(s, &c.batch, &err);
  if (st != CALSTORE_OK)
    cli_store_failed("import", st, &err);
  for (size_t i = 0; i < a->positional_count && st == CALSTORE_OK; i++) {
    const char *file = a->positional[i];
    diag_list d = {0};
    c.st = CALSTORE_OK;
    st = calstore_read_file(file, import_visit, &c, diag_collect, &d, NULL);
    if (st != CALSTORE_OK) {
      cli_error("import: %s is %s; nothing was imported", file, calstore_status_name(st));
      diag_print(stderr, file, &d);
    } else if (c.st != CALSTORE_OK) {
      st = c.st;
      cli_error("import: %s: %s; nothing was imported", file, c.err.message);
    }
    diag_free(&d);
  }
  if (st == CALSTORE_OK) {
    int applied = 0;
    st = calstore_batch_commit_applied(&c.batch, &applied, &err);
    st = cli_store_durability("import", st, applied, &err);
    if (st != CALSTORE_OK)
      cli_store_failed("import", st, &err);
  }
  calstore_batch_abort(&c.batch);
  calstore_close(&s);
  size_t kept = import_kept(&c);
  if (st != CALSTORE_OK)
    return 2;
  c.count -= kept;
  if (cli->json) {
    fputc('{', stdout);
    base_json_member_string(stdout, 1, "status", "ok");
    base_json_member_uint(stdout, 0, "profiles", c.count);
    base_json_member_uint(stdout, 0, "kept", kept);
    base_json_member_uint(stdout, 0, "files", a->positional_count);
    base_json_member_bool(stdout, 0, "persisted", cli_store_change_kept(cli));
    if (cli_store_warning())
      base_json_member_string(stdout, 0, "warning", cli_store_warning());
    fputs("}\n", stdout);
    return 0;
  }
  if (!cli->quiet)
    printf("imported %zu profiles from %zu file%s%s", c.count, a->positional_count,
           a->positional_count == 1 ? "" : "s", kept ? "" : "\n");
  if (!cli->quiet && kept)
    printf("; kept %zu existing portable profile%s (import --force replaces them)\n", kept,
           kept == 1 ? "" : "s");
  fflush(stdout);
  cli_store_change_kept(cli); /* the note when persistence is off */
  return 0;
}

const cli_command cli_cmd_import = {
    "import",
    "[--force] FILE...",
    "merge profiles from other store files",
    "One commit; a malformed file imports nothing. An existing calibrated\n"
    "portable profile stays (the first one of an implementation), unless --force.\n",
    import_flags,
    1,
    CLI_MAX_POSITIONAL,
    run_import,
};
