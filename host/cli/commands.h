/*
 * commands.h: the commands of the calhost command line and what they share:
 * the global options, error output, configuration and store resolution.
 *
 * Each command lives in the file named after it (cmd_calibrate.c,
 * cmd_lookup.c, cmd_override.c, cmd_invalidate.c, cmd_store_check.c for
 * `check` (of the store), cmd_list.c, cmd_export.c, cmd_import.c,
 * cmd_plugins.c, cmd_plugin_check.c for `plugin check`, cmd_devices.c,
 * cmd_config.c, cmd_report.c, cmd_verify.c, cmd_plan.c) and describes itself, with its flag table, in one
 * cli_command (args.h); main.c lists them. A command's run function returns
 * the process exit status: 0 success, 1 "no" (check failed, nothing
 * selected or calibrated, override refused, no such override), 2 usage or
 * operational error.
 */
#ifndef CALHOST_CLI_COMMANDS_H
#define CALHOST_CLI_COMMANDS_H

#include <stdio.h>

#include "args.h"
#include "calhost/calstore.h"

struct config_settings;
struct loader_options;
struct loader_plugin_list;

/* Global options: set by the parser wherever they appear on the line. */
typedef struct cli_context {
  const char *argv0;
  const char *store_path;  /* --store PATH, or NULL */
  const char *config_path; /* --config FILE, or NULL */
  int json;                /* --json */
  int quiet;               /* --quiet / -q */
  int verbose;             /* --verbose / -v (other parts read it for log levels) */
} cli_context;

/* Prints "calhost: MESSAGE" (escaped: store and plugin text may hold
 * control characters) to stderr. Returns 2 for `return cli_error`. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints a store failure: "calhost: [WHAT: ]PATH[:LINE]: STATUS: message",
 * the line omitted when 0, with the advice of runtime_binding_store_error
 * (runtime/binding.h) for a malformed file or an unsupported version. what may
 * be NULL. */
void cli_store_error(const char *what, calstore_status st, const calstore_error *err);

/* Prints the failure of a store operation of command cmd: "calhost: CMD:
 * STATUS: message" (cli_error; the one wording of export, import,
 * invalidate, lookup and override). Returns 2. */
int cli_store_failed(const char *cmd, calstore_status st, const calstore_error *err);

/* Settles the status st of a commit of command cmd whose applied flag
 * (calstore_batch_commit_applied's) is applied: a failure after the rename
 * (applied nonzero: only the directory sync failed, every process already
 * reads the change) prints "calhost: warning: CMD: the change is stored,
 * but durability is not guaranteed (it may not survive a power loss):
 * MESSAGE" on stderr, is remembered for the --json answer of
 * cli_store_done (a "warning" member) and becomes CALSTORE_OK. Any other
 * status is returned as it is. */
calstore_status cli_store_durability(const char *cmd, calstore_status st, int applied,
                                     const calstore_error *err);

/* The warning cli_store_durability remembered for this command, or NULL. */
const char *cli_store_warning(void);

/* The answer of a store command that succeeded (the one form of export,
 * invalidate and override): with --json {"status":"ok"}, plus the member
 * key: count when key is not NULL, plus "persisted": true|false when the
 * command changed the store (change nonzero; cli_store_change_kept), plus
 * "warning" when cli_store_durability remembered one; else,
 * unless --quiet, the text line formatted from fmt on stdout, and for a
 * change the note of cli_store_change_kept on stderr. Returns 0, the
 * command's exit status. */
int cli_store_done(const cli_context *cli, int change, const char *key, size_t count,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Whether a change to the store is kept: 0 when the configuration this
 * command loaded (cli_load_config) says [store] persistence_enabled =
 * false (the store lives in memory for this run only), else 1. When 0,
 * and neither --json nor --quiet is given, prints on stderr "calhost:
 * note: persistence is disabled ([store] persistence_enabled = false in
 * FILE): the change is not kept". The --json replies carry the answer as
 * "persisted". */
int cli_store_change_kept(const cli_context *cli);

/* The configuration file of the one rule: --config, else the default
 * search (config_find_default, its path into buf of cap bytes);
 * NULL when none is found (the built-in defaults apply). */
const char *cli_config_file(const cli_context *cli, char *buf, size_t cap);

/* Writes "BEFORE(the places the default search looks)AFTER\n" to out,
 * escaped: how a command says that no configuration file was found. */
void cli_print_search_places(FILE *out, const char *before, const char *after);

/* Loads the configuration named by --config, else the default search
 * (config_find_default), else the built-in defaults, into *cfg, and
 * remembers its [store] persistence_enabled and file for
 * cli_store_change_kept. Returns 0, or prints the error (with file and
 * line) and returns -1. */
int cli_load_config(const cli_context *cli, struct config_settings *cfg);

/* As cli_load_config, also saying which file was read: *file is it (buf
 * holds a found default's path; cap bytes), or NULL for the built-in
 * defaults. What opens the deployment runtime on the same file uses it. */
int cli_load_config_file(const cli_context *cli, struct config_settings *cfg, char *buf, size_t cap,
                         const char **file);

/* Opens the store: the configuration of cli_load_config (always
 * the same rule, whatever other flags are given) supplies [store] path and
 * persistence_enabled; --store PATH replaces only the path; else the
 * default path. A failure is printed (with --json also as {"status",
 * "message"} on stdout) and returned, with *out closed and NULL, so a
 * command reads `if (cli_open_store(cli, &s) != CALSTORE_OK) return 2;`. */
calstore_status cli_open_store(const cli_context *cli, calstore **out);

/* Like cli_open_store, with a configuration the command already
 * loaded (so a command loads it once). cfg is only read. On a failure
 * *out is still set when the handle is usable (see calstore_open: its
 * path names the file in a report); the caller closes it. */
calstore_status cli_open_store_config(const cli_context *cli, const struct config_settings *cfg,
                                      calstore **out);

/* The store path the commands work on (the same rule as
 * cli_open_store) into buf, without reading the store. Returns 0,
 * or prints why and returns -1. */
int cli_store_path(const cli_context *cli, char *buf, size_t cap);

/* The key flags of `lookup` and `override` (--backend, --operator,
 * --implementation, --model-digest, --processor, --threads, --structure)
 * as a store key; portable selects the portable form. structure receives
 * the --structure pairs (split in place in argv). Returns 0, or a usage
 * error's exit status. For lookup (lookup nonzero) both forms may be
 * given together. */
#define CALHOST_CLI_MAX_STRUCTURE 64
int cli_key_flags(cli_args *a, int portable, int lookup, calstore_key *k,
                  calstore_property *structure);

/* Discovers and loads the plugins with loader options o (set from the
 * configuration by the caller) into *list, logging only errors under
 * --quiet. Returns 0 (free list with loader_plugin_list_free), or prints
 * "calhost: WHAT: out of memory" and returns -1. */
int cli_discover(const cli_context *cli, const char *what, struct loader_options *o,
                 struct loader_plugin_list *list);

/* Loads the configuration (cli_load_config) into *cfg and applies
 * the sweep flags that calibrate and verify share over it: --rigor,
 * --threads, --time-budget, --timeout, --repetitions (the syntax and limits
 * of the same keys in calhost.ini). *rigor_origin and *threads_origin say
 * where those values came from ("<command line>", a file, "<default>").
 * Returns 0 (free cfg with config_free), or the exit status of the
 * failure, already reported (cfg freed). In cmd_calibrate.c. */
int cli_sweep_config(const cli_context *cli, cli_args *a, struct config_settings *cfg,
                     const char **rigor_origin, const char **threads_origin);

/* The flag-table entries of the sweep flags cli_sweep_config
 * applies, described once for calibrate and verify (each command words its
 * own --repetitions; calibrate lists its search flags after --rigor). */
/* clang-format off */
#define CALHOST_CLI_FLAG_RIGOR {FL_RIGOR, "--rigor", NULL, "LEVEL", "quick, measure or exhaustive"}
#define CALHOST_CLI_FLAGS_SWEEP_LIMITS                                                     \
  {FL_THREADS, "--threads", NULL, "LIST", "thread counts, e.g. 1,2,max"},                  \
  {FL_TIME_BUDGET, "--time-budget", NULL, "SECONDS", "per-plugin time budget (0: none)"},  \
  {FL_TIMEOUT, "--timeout", NULL, "SECONDS", "kill a plugin call that runs longer"}
/* calibrate's flags that shape how items are measured, not which: plan
 * takes them too (one list, so a calibrate command line always plans) */
#define CALHOST_CLI_FLAGS_CALIBRATE_MEASURE                                                \
  CALHOST_CLI_FLAG_RIGOR,                                                                  \
  {FL_STRATEGY, "--strategy", NULL, "NAME",                                                \
   "search: default, exhaustive, random, local, annealing, genetic, model, bayes"},        \
  {FL_BUDGET, "--budget", NULL, "N|Ts", "candidates evaluated per sweep, or seconds (30s)"}, \
  {FL_RECORD, "--record", NULL, "FILE", "write every evaluated candidate to a space file"}, \
  {FL_TIME_BUDGET, "--time-budget", NULL, "SECONDS", "per-plugin time budget (0: none)"},  \
  {FL_TIMEOUT, "--timeout", NULL, "SECONDS", "kill a plugin call that runs longer"},       \
  {FL_REPETITIONS, "--repetitions", NULL, "N", "samples per candidate"},                   \
  {FL_FORCE, "--force", NULL, NULL, "recalibrate keys that already have a profile"},       \
  {FL_REPORT, "--report", NULL, "DIR", "also write DIR/run.json and DIR/report.html"}
/* clang-format on */

/* The commands (each in its cmd_NAME.c). */
extern const cli_command cli_cmd_calibrate;
extern const cli_command cli_cmd_lookup;
extern const cli_command cli_cmd_override;
extern const cli_command cli_cmd_invalidate;
extern const cli_command cli_cmd_check;
extern const cli_command cli_cmd_list;
extern const cli_command cli_cmd_export;
extern const cli_command cli_cmd_import;
extern const cli_command cli_cmd_plugins;
extern const cli_command cli_cmd_plugin;
extern const cli_command cli_cmd_devices;
extern const cli_command cli_cmd_config;
extern const cli_command cli_cmd_report;
extern const cli_command cli_cmd_verify;
extern const cli_command cli_cmd_model; /* cmd_model.c: model show FILE */

/* The models of a run (cmd_model.c): every [model NAME] section of cfg
 * (each of its `dims` bindings: workloads NAME.NODE for one, NAME-J.NODE
 * for several), and --model FILE (with --dims: one binding, or several
 * separated by '|') when a has it, read (host/model) and appended to cfg as
 * workloads (model_workloads_add: the key rule of config/README.md). The
 * names of --model's workloads go into *only (a malloc'd array of strings
 * owned by cfg, *only_count of them; NULL/0 without --model): what the run
 * restricts itself to. When --model names the file of a [model NAME]
 * section (the same file), the run is that section's workloads (of the
 * bindings --dims names, each of them without --dims) rather than a second
 * copy. --dims without --model is a usage error. Skipped nodes are noted on
 * stderr unless --quiet, with how to bind a symbol in the form the user
 * types (`dims = ...` for a section, --dims for --model). *models (may be
 * NULL) receives what cli_model_report_unserved needs (free with
 * cli_model_set_free). Returns 0, or prints the error, naming the command
 * ("calibrate: FILE:LINE: [model NAME]: reason" for a section), and
 * returns 2. */
struct config_settings;
typedef struct cli_model_set cli_model_set;
/* clang-format off */
#define CALHOST_CLI_FLAGS_MODEL                                                            \
  {FL_MODEL, "--model", NULL, "FILE", "only this ONNX model's nodes"},                    \
  {FL_DIMS, "--dims", NULL, "NAME=N,...[|...]",                                           \
   "with --model: bind symbolic dimensions ('|' between several bindings)"}
/* clang-format on */
int cli_model_workloads(const cli_context *cli, cli_args *a, struct config_settings *cfg,
                        char ***only, size_t *only_count, cli_model_set **models);
void cli_model_set_free(cli_model_set *models);

/* After a calibrate run: prints on stderr ("calhost: CMD: nodes left
 * untuned:" then one line a node) every node of the run's models that no
 * sweep calibrated (served: calibrate_options.served) or that the reader
 * skipped (an identity aside), among the --workload filters when given.
 * Returns how many. */
size_t cli_model_report_unserved(const cli_model_set *models, const struct config_settings *cfg,
                                 const unsigned char *served, char *const *filters,
                                 size_t filter_count, const char *cmd);

/* `lookup --model FILE [--node NAME] [--dims ...] [--plugin B] [--threads
 * N|max] [--force-portable]` (cmd_model.c): each node's policy as the
 * deployment runtime selects it (calhost_runtime_add_model, then
 * calhost_runtime_select per node). Returns the exit status: 0 every node
 * selected, 1 some have none, 2 an error. */
int cli_lookup_model(cli_context *cli, cli_args *a);

/* `model bench FILE [--dims ...] [--device N] [--json]` (cmd_model_bench.c):
 * the model's total over its calibrated nodes with calhost's selection, each
 * backend tuned and each default, timed interleaved (on the CPUs, or with
 * --device on that device); exit 0, 1 when a
 * figure is missing, 2 on errors. */
int cli_model_bench(cli_context *cli, cli_args *a);

/* The two steps of `calibrate --report DIR` (cmd_report.c): report_open
 * creates DIR (and its parents) and opens a temporary file there for the
 * run's JSON, its name into tmp (NULL after printing the error);
 * report_finish closes it, renames it to DIR/run.json, writes
 * DIR/report.html from it (both replaced whole) and returns the exit
 * status: status, or 2 when the report failed. A run that wrote no JSON
 * (stopped before any sweep) leaves the previous report as it was. */
FILE *cli_report_open(const char *dir, char *tmp, size_t tmp_cap);
int cli_report_finish(const char *dir, const char *tmp, FILE *json, int status, int quiet);

/* Fleet planning (cmd_plan.c): `plan [--shard I/N | --shards N] [calibrate's flags]`. */
extern const cli_command cli_cmd_plan;

/* calibrate's flags (a: parsed with cli_calibrate_flags, or a table
 * holding them) over the configuration, then the sweep driver: with plan
 * NULL it calibrates; otherwise nothing runs and *plan receives the run's
 * work items (`calhost plan`; free with calibrate_work_list_free). Returns
 * the exit status. */
struct calibrate_work_list;
int cli_calibrate_run(cli_context *cli, cli_args *a, struct calibrate_work_list *plan);

#endif /* CALHOST_CLI_COMMANDS_H */
