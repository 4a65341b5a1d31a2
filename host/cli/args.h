/*
 * args.h: the one argument parser of the calhost command line, table
 * driven. Each command describes itself (name, synopsis, its flag table,
 * how many plain arguments it takes, its run function) in a cli_command;
 * the parser accepts the global flags (--config, --store, --json, --quiet,
 * --verbose, --help) before or after the command name, `--flag VALUE` and
 * `--flag=VALUE`, repeated flags, and `--` before plain arguments that start
 * with a dash. An unknown command or flag is a usage error that suggests the
 * closest name (edit distance).
 */
#ifndef CALHOST_CLI_ARGS_H
#define CALHOST_CLI_ARGS_H

#include <stddef.h>
#include <stdio.h>

struct cli_context;

/* Every flag of every command; a command's table lists the ones it takes. */
typedef enum cli_flag_id {
  FL_NONE = 0,
  FL_CONFIG, /* global flags */
  FL_STORE,
  FL_JSON,
  FL_QUIET,
  FL_VERBOSE,
  FL_HELP,
  FL_PLUGIN, /* command flags */
  FL_WORKLOAD,
  FL_RIGOR,
  FL_THREADS,
  FL_TIME_BUDGET,
  FL_TIMEOUT,
  FL_REPETITIONS,
  FL_FORCE,
  FL_BACKEND,
  FL_OPERATOR,
  FL_IMPLEMENTATION,
  FL_MODEL_DIGEST,
  FL_PROCESSOR,
  FL_STRUCTURE,
  FL_FORCE_PORTABLE,
  FL_PORTABLE,
  FL_POLICY,
  FL_EXPLAIN,
  FL_DTYPE,
  FL_SHAPE,
  FL_REPORT,
  FL_HTML,
  FL_THRESHOLD,
  FL_RECALIBRATE,
  FL_SHARD,        /* calibrate, plan: I/N */
  FL_SHARDS,       /* plan: N */
  FL_BY_PROCESSOR, /* list */
  FL_DEVICE,
  FL_STRATEGY,
  FL_BUDGET,
  FL_RECORD,
  FL_PLUGINS, /* config check */
  FL_DIMS,    /* model show, calibrate, lookup: symbolic dimension bindings */
  FL_MODEL,   /* calibrate, lookup: an ONNX model file */
  FL_NODE,    /* lookup --model: one node */
  FL_SETTING, /* plugin check: KEY=VALUE */
  /* calibrate: no warm start from the store */
  FL_NO_WARM_START,
  FL_ROUNDS, /* model bench: rounds over every structure */
  FL_COUNT
} cli_flag_id;

/* One entry of a flag table (the table ends with an entry whose id is
 * FL_NONE). value is the placeholder of the flag's value ("NAME"), NULL
 * for a flag without a value; help is one line for `COMMAND --help`. */
typedef struct cli_flag {
  cli_flag_id id;
  const char *name;       /* "--plugin" */
  const char *short_name; /* "-q", or NULL */
  const char *value;
  const char *help;
} cli_flag;

#define CLI_MAX_POSITIONAL 256
#define CLI_MAX_OCCURRENCES 512

/* What the parser found after the command name. Values point into argv. */
typedef struct cli_args {
  const char *command;         /* the command's name, for messages */
  const char *value[FL_COUNT]; /* last value of each flag given; "" for a flag
                                  without a value; NULL when not given */
  struct {
    cli_flag_id id;
    char *value;
  } seen[CLI_MAX_OCCURRENCES]; /* every flag occurrence in order (repeatable flags) */
  size_t seen_count;
  char *positional[CLI_MAX_POSITIONAL];
  size_t positional_count;
} cli_args;

typedef struct cli_command {
  const char *name;
  const char *synopsis;  /* after "calhost COMMAND": "[--plugin BACKEND]..." */
  const char *summary;   /* one line for `calhost --help` */
  const char *details;   /* more lines for `calhost help COMMAND`, or NULL */
  const cli_flag *flags; /* the command's flags (not the global ones) */
  size_t min_positional; /* plain arguments it needs ... */
  size_t max_positional; /* ... and takes */
  int (*run)(struct cli_context *cli, cli_args *args);
} cli_command;

/* Runs the command line: parses the global flags and the command, prints
 * help (`--help`, `help [COMMAND]`, `COMMAND --help`; `--json help
 * [COMMAND]` prints the command and flag tables as JSON, the source of the
 * manual page and the bash completion) or the version
 * (`--version`), or calls the command's run function. commands is the
 * table of every command (count entries). Returns the exit status: the
 * command's, 0 for help and version, 2 for a usage error. */
int cli_main(struct cli_context *cli, const cli_command *const *commands, size_t count, int argc,
             char **argv);

/* Nonzero when the flag was given. */
int cli_has(const cli_args *a, cli_flag_id id);

/* Copies the values of every occurrence of a repeatable flag into out (at
 * most cap); returns how many there were (more than cap: the caller's
 * usage error). */
size_t cli_all(const cli_args *a, cli_flag_id id, char **out, size_t cap);

/* Usage error of a command: prints "calhost: COMMAND: MESSAGE" (escaped)
 * and "Try 'calhost help COMMAND'." to stderr; returns 2. */
int cli_usage(const cli_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Levenshtein distance of a and b (bytes), capped at 64. For suggestions. */
size_t cli_edit_distance(const char *a, const char *b);

#endif /* CALHOST_CLI_ARGS_H */
