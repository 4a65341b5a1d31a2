/*
 * args.c: the one argument parser of the command line (see args.h): global
 * and per-command flag tables, help and version output, suggestions.
 */
#include "args.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "calhost/calstore.h"
#include "calhost/plugin.h"
#include "commands.h"

#ifndef CALHOST_VERSION
#define CALHOST_VERSION "unknown"
#endif

static const cli_flag global_flags[] = {
    {FL_CONFIG, "--config", NULL, "FILE", "read this configuration file"},
    {FL_STORE, "--store", NULL, "PATH", "use this profile store file"},
    {FL_JSON, "--json", NULL, NULL, "print the result as JSON on stdout"},
    {FL_QUIET, "--quiet", "-q", NULL, "print only errors (and the JSON result)"},
    {FL_VERBOSE, "--verbose", "-v", NULL, "say more (configuration used, plugin logs)"},
    {FL_HELP, "--help", "-h", NULL, "show this help"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

size_t cli_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  size_t row[65];
  if (la > 64)
    la = 64;
  if (lb > 64)
    lb = 64;
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* Keeps the closest candidate to word in *best (close enough to suggest:
 * at most 2 edits, and fewer than half the word). */
static void consider(const char *word, const char *candidate, const char **best, size_t *dist) {
  if (!candidate)
    return;
  size_t d = cli_edit_distance(word, candidate);
  size_t len = strlen(candidate);
  if (d <= 2 && d * 2 < len && d < *dist) {
    *best = candidate;
    *dist = d;
  }
}

static void print_flags(FILE *out, const cli_flag *flags) {
  for (const cli_flag *f = flags; f && f->id != FL_NONE; f++) {
    char left[64];
    snprintf(left, sizeof left, "%s%s%s%s%s", f->short_name ? f->short_name : "",
             f->short_name ? ", " : "", f->name, f->value ? " " : "", f->value ? f->value : "");
    fprintf(out, "  %-26s %s\n", left, f->help);
  }
}

static void print_usage(FILE *out, const cli_command *const *commands, size_t count) {
  fprintf(out, "usage: calhost [--store PATH] [--config FILE] [--json] [--quiet] [--verbose]\n"
               "               COMMAND [ARGS...]\n"
               "       calhost help COMMAND | COMMAND --help | --version\n\ncommands:\n");
  for (size_t i = 0; i < count; i++)
    fprintf(out, "  %-11s %s\n", commands[i]->name, commands[i]->summary);
  fprintf(out, "\nglobal flags (before or after the command):\n");
  print_flags(out, global_flags);
  fprintf(out, "  %-26s %s\n", "--version", "print the version and exit");
  fprintf(out, "\nexit status: 0 success, 1 \"no\" (check failed, nothing selected or\n"
               "calibrated), 2 usage or operational error.\n");
}

static void print_command_help(FILE *out, const cli_command *c) {
  fprintf(out, "usage: calhost [GLOBAL FLAGS] %s%s%s\n\n%s\n", c->name, c->synopsis[0] ? " " : "",
          c->synopsis, c->summary);
  if (c->details)
    fprintf(out, "\n%s", c->details);
  if (c->flags && c->flags[0].id != FL_NONE) {
    fprintf(out, "\nflags:\n");
    print_flags(out, c->flags);
  }
  fprintf(out, "\nglobal flags (before or after the command):\n");
  print_flags(out, global_flags);
}

/* The flag table as JSON: [{"name", "short", "value", "help"}, ...]. */
static void print_flags_json(FILE *out, const cli_flag *flags) {
  int first = 1;
  fputc('[', out);
  for (const cli_flag *f = flags; f && f->id != FL_NONE; f++, first = 0) {
    fputs(first ? "\n      {" : ",\n      {", out);
    base_json_member_string(out, 1, "name", f->name);
    base_json_member_string(out, 0, "short", f->short_name);
    base_json_member_string(out, 0, "value", f->value);
    base_json_member_string(out, 0, "help", f->help);
    fputc('}', out);
  }
  fputc(']', out);
}

/* `calhost --json help [COMMAND]`: the command and flag tables the parser
 * uses, as one JSON object (every command, or the one named), so that the
 * manual page and the shell completion are generated from them
 * (host/cli/doc/gen_cli_docs.py) and cannot drift from the parser. */
static void print_help_json(FILE *out, const cli_command *const *commands, size_t count,
                            const cli_command *only) {
  int first = 1;
  fputc('{', out);
  base_json_member_string(out, 1, "program", "calhost");
  base_json_member_string(out, 0, "version", CALHOST_VERSION);
  base_json_key(out, 0, "global_flags");
  print_flags_json(out, global_flags);
  base_json_key(out, 0, "commands");
  fputc('[', out);
  for (size_t i = 0; i < count; i++) {
    const cli_command *c = commands[i];
    if (only && c != only)
      continue;
    fputs(first ? "\n  {" : ",\n  {", out);
    first = 0;
    base_json_member_string(out, 1, "name", c->name);
    base_json_member_string(out, 0, "synopsis", c->synopsis);
    base_json_member_string(out, 0, "summary", c->summary);
    base_json_member_string(out, 0, "details", c->details);
    base_json_member_uint(out, 0, "min_positional", c->min_positional);
    base_json_member_uint(out, 0, "max_positional", c->max_positional);
    base_json_key(out, 0, "flags");
    print_flags_json(out, c->flags);
    fputc('}', out);
  }
  fputs("]}\n", out);
}

static void print_version(FILE *out) {
  fprintf(out, "calhost %s (plugin ABI %u..%u, store format %d)\n", CALHOST_VERSION,
          (unsigned)CALHOST_ABI_VERSION_MIN, (unsigned)CALHOST_ABI_VERSION,
          CALSTORE_FORMAT_VERSION);
}

int cli_usage(const cli_args *a, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (a && a->command) {
    base_text_printf(stderr, "calhost: %s: %s\n", a->command, msg);
    base_text_printf(stderr, "Try 'calhost help %s'.\n", a->command);
  } else {
    base_text_printf(stderr, "calhost: %s\n", msg);
    fputs("Try 'calhost --help'.\n", stderr);
  }
  return 2;
}

/* A usage error of a command's arguments: "calhost: CMD: MESSAGE", the
 * command's synopsis as its help prints it (its continuation lines
 * aligned under "calhost"), and the hint. The message is escaped (it may
 * quote an argument); the synopsis is the program's own text, whose line
 * breaks are real ones. Returns 2. */
static int usage_with_synopsis(const cli_args *a, const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int usage_with_synopsis(const cli_args *a, const cli_command *cmd, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  base_text_printf(stderr, "calhost: %s: %s\n", a->command, msg);
  fprintf(stderr, "usage: calhost %s%s%s\n", cmd->name, cmd->synopsis[0] ? " " : "", cmd->synopsis);
  base_text_printf(stderr, "Try 'calhost help %s'.\n", a->command);
  return 2;
}

/* The flag of arg in table (exact name, NAME=VALUE, or short name), or
 * NULL; *inline_value gets the text after '='. */
static const cli_flag *match(const cli_flag *table, char *arg, char **inline_value) {
  for (const cli_flag *f = table; f && f->id != FL_NONE; f++) {
    size_t n = strlen(f->name);
    if (!strncmp(arg, f->name, n) && (arg[n] == '\0' || arg[n] == '=')) {
      *inline_value = arg[n] == '=' ? arg + n + 1 : NULL;
      return f;
    }
    if (f->short_name && !strcmp(arg, f->short_name)) {
      *inline_value = NULL;
      return f;
    }
  }
  return NULL;
}

static const cli_command *find_command(const cli_command *const *commands, size_t count,
                                       const char *name) {
  for (size_t i = 0; i < count; i++)
    if (!strcmp(commands[i]->name, name))
      return commands[i];
  return NULL;
}

static int unknown_command(const cli_command *const *commands, size_t count, const char *name) {
  const char *best = NULL;
  size_t dist = (size_t)-1;
  for (size_t i = 0; i < count; i++)
    consider(name, commands[i]->name, &best, &dist);
  consider(name, "help", &best, &dist);
  if (best)
    return cli_usage(NULL, "unknown command '%s' (did you mean '%s'?)", name, best);
  return cli_usage(NULL, "unknown command '%s'", name);
}

static int unknown_flag(const cli_args *a, const cli_command *cmd, const char *arg) {
  char name[128];
  const char *best = NULL;
  size_t dist = (size_t)-1;
  snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
  for (const cli_flag *f = cmd ? cmd->flags : NULL; f && f->id != FL_NONE; f++)
    consider(name, f->name, &best, &dist);
  for (const cli_flag *f = global_flags; f->id != FL_NONE; f++)
    consider(name, f->name, &best, &dist);
  if (!cmd)
    consider(name, "--version", &best, &dist);
  if (best)
    return cli_usage(a, "unknown option '%s' (did you mean '%s'?)", name, best);
  return cli_usage(a, "unknown option '%s'", name);
}

static void apply_global(cli_context *cli, cli_flag_id id, char *value, int *help) {
  switch (id) {
  case FL_CONFIG:
    cli->config_path = value;
    break;
  case FL_STORE:
    cli->store_path = value;
    break;
  case FL_JSON:
    cli->json = 1;
    break;
  case FL_QUIET:
    cli->quiet = 1;
    break;
  case FL_VERBOSE:
    cli->verbose = 1;
    break;
  case FL_HELP:
    *help = 1;
    break;
  default:
    break;
  }
}

int cli_main(cli_context *cli, const cli_command *const *commands, size_t count, int argc,
             char **argv) {
  static cli_args args;
  cli_args *a = &args;
  const cli_command *cmd = NULL;
  int help = 0, help_command = 0, only_plain = 0;
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    char *arg = argv[i];
    if (!only_plain && !strcmp(arg, "--")) {
      only_plain = 1;
      continue;
    }
    if (!only_plain && arg[0] == '-' && arg[1]) {
      if (!cmd && !help_command && !strcmp(arg, "--version")) {
        print_version(stdout);
        return 0;
      }
      char *value = NULL;
      const cli_flag *f = cmd ? match(cmd->flags, arg, &value) : NULL;
      int global = 0;
      if (!f) {
        f = match(global_flags, arg, &value);
        global = f != NULL;
      }
      if (!f)
        return unknown_flag(a, cmd, arg);
      if (f->value && !value) {
        if (i + 1 >= argc)
          return cli_usage(a, "%s needs a value (%s)", f->name, f->value);
        value = argv[++i];
      } else if (!f->value && value) {
        return cli_usage(a, "%s takes no value", f->name);
      }
      if (!f->value)
        value = (char *)"";
      /* a flag with a value says one thing: twice with two values is an
       * error, not "the last one wins" (--plugin, --workload,
       * --structure and --setting are lists) */
      if (f->value && a->value[f->id] && strcmp(a->value[f->id], value) && f->id != FL_PLUGIN &&
          f->id != FL_WORKLOAD && f->id != FL_STRUCTURE && f->id != FL_SETTING)
        return cli_usage(a, "%s given twice ('%s', then '%s'): give it once", f->name,
                         a->value[f->id], value);
      if (global)
        apply_global(cli, f->id, value, &help);
      a->value[f->id] = value;
      if (a->seen_count >= CLI_MAX_OCCURRENCES)
        return cli_usage(a, "too many flags");
      a->seen[a->seen_count].id = f->id;
      a->seen[a->seen_count].value = value;
      a->seen_count++;
      continue;
    }
    if (!cmd && !help_command) {
      if (!strcmp(arg, "help")) {
        help_command = 1;
        continue;
      }
      cmd = find_command(commands, count, arg);
      if (!cmd)
        return unknown_command(commands, count, arg);
      a->command = cmd->name;
      continue;
    }
    if (a->positional_count >= CLI_MAX_POSITIONAL)
      return cli_usage(a, "too many arguments");
    a->positional[a->positional_count++] = arg;
  }
  if (help_command) {
    if (!a->positional_count) {
      if (cli->json)
        print_help_json(stdout, commands, count, NULL);
      else
        print_usage(stdout, commands, count);
      return 0;
    }
    const cli_command *c = find_command(commands, count, a->positional[0]);
    if (!c)
      return unknown_command(commands, count, a->positional[0]);
    if (cli->json)
      print_help_json(stdout, commands, count, c);
    else
      print_command_help(stdout, c);
    return 0;
  }
  if (help) {
    if (cmd)
      print_command_help(stdout, cmd);
    else
      print_usage(stdout, commands, count);
    return 0;
  }
  if (!cmd) {
    print_usage(stderr, commands, count);
    return 2;
  }
  if (a->positional_count > cmd->max_positional)
    return usage_with_synopsis(a, cmd, "unexpected argument '%s'",
                               a->positional[cmd->max_positional]);
  if (a->positional_count < cmd->min_positional)
    return usage_with_synopsis(a, cmd, "missing argument");
  return cmd->run(cli, a);
}

int cli_has(const cli_args *a, cli_flag_id id) {
  return a->value[id] != NULL;
}

size_t cli_all(const cli_args *a, cli_flag_id id, char **out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < a->seen_count; i++)
    if (a->seen[i].id == id) {
      if (n < cap)
        out[n] = a->seen[i].value;
      n++;
    }
  return n;
}
