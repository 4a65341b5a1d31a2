/*
 * cmd_plan.c: `calhost plan`: the work items of a calibration run (plugin
 * x workload x target thread count) and the shard of each, so an operator
 * can size a fleet's job array (config/fleet/README.md). It takes
 * calibrate's flags (the plan of a command line is that command's items:
 * the same configuration, plugins, --plugin/--workload filters and thread
 * counts) and runs nothing:
 *
 *   plan                  every item (one shard)
 *   plan --shard I/N      the items of shard I of N (what `calibrate --shard I/N` runs)
 *   plan --shards N       every item with its shard of N, and each shard's count
 *
 * The shard rule is host/calibrate/shard.h's. Exit status as calibrate's
 * for the same flags: 0, 1 when a requested plugin did not load while
 * another did or when there is no item at all, 2 on errors (none of the
 * requested plugins loaded included); its messages name `plan`.
 */
#define _GNU_SOURCE /* getline */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "base/json.h"
#include "base/text.h"
#include "calibrate/calibrate.h"
#include "config/values.h"

static void print_json(const calibrate_work_list *l, uint32_t shards, int only,
                       const calibrate_shard *sh, const size_t *counts) {
  FILE *o = stdout;
  fputc('{', o);
  base_json_member_uint(o, 1, "shards", shards);
  if (only)
    base_json_member_uint(o, 0, "shard", sh->index);
  else
    base_json_member_null(o, 0, "shard");
  base_json_key(o, 0, "items");
  fputc('[', o);
  size_t n = 0;
  for (size_t i = 0; i < l->count; i++) {
    const calibrate_work_item *x = &l->items[i];
    if (only && x->shard != sh->index)
      continue;
    fputs(n++ ? ",\n{" : "\n{", o);
    base_json_member_string(o, 1, "backend", x->backend);
    base_json_member_string(o, 0, "implementation", x->implementation);
    base_json_member_string(o, 0, "workload", x->workload);
    base_json_member_string(o, 0, "operator", x->operator_name);
    base_json_member_uint(o, 0, "threads", x->threads);
    if (x->device) {
      base_json_key(o, 0, "device");
      fputc('{', o);
      base_json_member_uint(o, 1, "index", x->device_index);
      base_json_member_string(o, 0, "identity", x->device);
      fputc('}', o);
    } else {
      base_json_member_null(o, 0, "device");
    }
    base_json_member_uint(o, 0, "shard", x->shard);
    fputc('}', o);
  }
  fputs(n ? "\n]" : "]", o);
  base_json_member_uint(o, 0, "total", l->count);
  base_json_key(o, 0, "counts");
  fputc('[', o);
  for (uint32_t s = 0; s < shards; s++) {
    if (s)
      fputc(',', o);
    base_json_uint(o, counts[s]);
  }
  fputs("]}\n", o);
}

static void print_text(const calibrate_work_list *l, uint32_t shards, int only,
                       const calibrate_shard *sh, const size_t *counts, int quiet) {
  int wb = 7, ww = 8;
  for (size_t i = 0; i < l->count; i++) {
    int b = (int)strlen(l->items[i].backend), w = (int)strlen(l->items[i].workload);
    wb = b > wb ? b : wb;
    ww = w > ww ? w : ww;
  }
  if (!quiet)
    printf("%-*s  %-*s  %7s  %6s  %s\n", wb, "backend", ww, "workload", "threads", "device",
           "shard");
  for (size_t i = 0; i < l->count; i++) {
    const calibrate_work_item *x = &l->items[i];
    if (only && x->shard != sh->index)
      continue;
    char dev[16] = "-";
    if (x->device)
      snprintf(dev, sizeof dev, "%u", (unsigned)x->device_index);
    base_text_printf(stdout, "%-*s  %-*s  %7u  %6s  %u/%u\n", wb, x->backend, ww, x->workload,
                     (unsigned)x->threads, dev, (unsigned)x->shard, (unsigned)shards);
  }
  if (quiet)
    return;
  if (only) {
    printf("%zu of %zu items in shard %u/%u\n", counts[sh->index], l->count, (unsigned)sh->index,
           (unsigned)shards);
    return;
  }
  printf("%zu items", l->count);
  if (shards > 1) {
    size_t empty = 0;
    printf(" in %u shards", (unsigned)shards);
    for (uint32_t s = 0; s < shards; s++) { /* each count labelled: not read as shard numbers */
      if (shards <= 16)
        printf("%sshard %u: %zu item%s", s ? ", " : " (", (unsigned)s, counts[s],
               counts[s] == 1 ? "" : "s");
      empty += counts[s] == 0;
    }
    if (shards <= 16)
      printf(")");
    if (empty)
      printf("; %zu empty: fewer items than shards, or an uneven hash split", empty);
  }
  printf("\n");
}

static const cli_flag plan_flags[] = {
    {FL_SHARD, "--shard", NULL, "I/N", "only the items of shard I of N"},
    {FL_SHARDS, "--shards", NULL, "N", "every item with its shard of N, and each shard's count"},
    {FL_PLUGIN, "--plugin", NULL, "BACKEND", "only this backend (repeatable)"},
    {FL_WORKLOAD, "--workload", NULL, "NAME", "only this workload (repeatable)"},
    CALHOST_CLI_FLAGS_MODEL,
    {FL_THREADS, "--threads", NULL, "LIST", "thread counts, e.g. 1,2,max"},
    /* calibrate's other flags, checked as calibrate checks them and
     * otherwise ignored, so that a calibrate command line plans as it is */
    CALHOST_CLI_FLAGS_CALIBRATE_MEASURE,
    {FL_NONE, NULL, NULL, NULL, NULL},
};

static int run_plan(cli_context *cli, cli_args *a) {
  const char *shard = a->value[FL_SHARD], *shards_text = a->value[FL_SHARDS];
  calibrate_shard sh = {0, 0};
  uint32_t shards = 1;
  char why[200], spec[32];
  if (shard && shards_text)
    return cli_usage(a, "give --shard I/N or --shards N, not both");
  if (shard) {
    if (calibrate_shard_parse(shard, &sh, why, sizeof why) != 0)
      return cli_usage(a, "bad --shard: %s", why);
    shards = sh.count;
  } else if (shards_text) {
    unsigned long long c;
    if (config_value_uint(shards_text, 1, CALHOST_SHARD_MAX, &c, NULL, 0) != 0)
      return cli_usage(a, "bad --shards '%s' (1 .. %u)", shards_text, CALHOST_SHARD_MAX);
    shards = (uint32_t)c;
    /* the items are numbered by calibrate's --shard: any index of N */
    snprintf(spec, sizeof spec, "0/%u", (unsigned)shards);
    a->value[FL_SHARD] = spec;
  }
  calibrate_work_list list = {0};
  int rc = cli_calibrate_run(cli, a, &list);
  if (rc == 0 || rc == 1) {
    size_t *counts = calloc(shards, sizeof *counts);
    if (!counts) {
      calibrate_work_list_free(&list);
      return 2;
    }
    for (size_t i = 0; i < list.count; i++)
      counts[list.items[i].shard]++;
    if (cli->json)
      print_json(&list, shards, shard != NULL, &sh, counts);
    else
      print_text(&list, shards, shard != NULL, &sh, counts, cli->quiet);
    free(counts);
  }
  calibrate_work_list_free(&list);
  return rc;
}

const cli_command cli_cmd_plan = {
    "plan",
    "[--shard I/N | --shards N] [--plugin B]... [--workload W]... [--threads LIST]\n"
    "       [calibrate's other flags]",
    "list a calibrate run's work items and their shards (fleet calibration)",
    "The items (plugin x workload x thread count) of the calibrate command with\n"
    "the same flags, and the shard of each (calibrate --shard I/N runs shard I);\n"
    "nothing runs. The rule and fleet calibration on Slurm: the installed\n"
    "share/calhost/fleet/README.md (config/fleet/README.md in the sources).\n"
    "calibrate's measuring flags (--rigor ... --report below) are checked as\n"
    "calibrate checks them and change no item.\n"
    "Exit 0; 1 when a plugin asked for did not load but another did (its items\n"
    "are missing), or when the run has no item at all;\n"
    "2 on errors, and when no plugin asked for loaded (nothing to plan), as\n"
    "calibrate.\n",
    plan_flags,
    0,
    0,
    run_plan,
};
