/*
 * parser.h: internal to host/config: the state of one parse of calhost.ini,
 * shared by the INI reader (parse.c: lines, section headers, duplicates,
 * the first error) and the rules of the sections and keys (keys.c: what
 * each key means and which values it takes), and the small containers of
 * config.c that both fill. Not included outside host/config.
 */
#ifndef CALHOST_CONFIG_PARSER_H
#define CALHOST_CONFIG_PARSER_H

#include <stddef.h>

#include "config.h"

typedef enum section_kind {
  SEC_NONE = 0,
  SEC_STORE,
  SEC_PLUGINS,
  SEC_CALIBRATION,
  SEC_LOOKUP,
  SEC_WORKLOAD,
  SEC_PLUGIN,
  SEC_MODEL, /* [model NAME]: an ONNX model file and its dimension bindings */
  SEC_BAD, /* an erroneous header: its keys are skipped */
} section_kind;

typedef struct seen_entry {
  char *name;
  unsigned line;
} seen_entry;

/* Names seen so far (sections of the file, keys of a section) with the
 * line of each: a hash set, so that a file of N sections is read in O(N)
 * (a list searched linearly made 120,000 sections take a minute). */
typedef struct seen_set {
  seen_entry *items;
  size_t count, capacity;
  size_t *slots;     /* open addressing: 1 + index into items, 0 empty */
  size_t slot_count; /* a power of two, at least twice count; 0 before the first */
} seen_set;

typedef struct parser {
  config_settings *cfg;
  const char *file; /* display name, for messages */
  char *base_dir;   /* relative paths resolve against it */
  /* the reader */
  const char *text;
  size_t length, pos;
  unsigned line;
  /* the current section */
  section_kind kind;
  char section[300]; /* "[workload sq]" for messages */
  char prefix[280];  /* "calibration" or "workload.sq": origin keys */
  unsigned section_line;
  size_t index; /* workload / plugin section index */
  seen_set sections;
  seen_set keys; /* keys of the current section */
  /* the first error */
  unsigned err_line;   /* the line it names */
  unsigned err_detect; /* the line being read when it was found */
  int has_error;
  int out_of_memory;
  char err[900];
} parser;

/* ---- parse_error.c: the parse's first error ---------------------------- */

/* Records the first error ("message" at line) and returns 0 (inih: this
 * line failed); later errors are ignored. */
int cfg_perr(parser *p, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Records "out of memory" at the current line; returns 0. */
int cfg_oom(parser *p);

/* ---- keys.c: the sections and keys calhost.ini knows ------------------- */

/* The kind of the section "[word name]" (name "" when none), or SEC_BAD
 * after reporting an unknown section or a missing, bad or unexpected name. */
section_kind cfg_section_kind(parser *p, const char *word, const char *name);

/* Opens a section of p->kind named name: a [workload NAME] or [plugin NAME]
 * gets its entry in the configuration (p->index). */
void cfg_section_open(parser *p, const char *name);

/* Closes the current section: reports a [workload] without its required
 * keys (at the header's line). */
void cfg_section_close(parser *p);

/* Applies "name = value" in the current section; 1 accepted, 0 refused
 * (the error is recorded). */
int cfg_key(parser *p, const char *name, const char *value);

/* Checks across keys after the whole file was read; 0, or -1 (recorded). */
int cfg_finish(parser *p);

/* ---- config.c: the containers of config_settings ------------------------ */

/* Adds name (copied) seen at line to v; 0, or -1 on allocation failure.
 * The caller looks it up first (a name is added once). */
int cfg_seen_push(seen_set *v, const char *name, unsigned line);

/* The entry of name in v, or NULL; O(1) expected. */
const seen_entry *cfg_seen_find(const seen_set *v, const char *name);

/* Frees what v owns and zeroes it. */
void cfg_seen_free(seen_set *v);

/* Appends a copy of s to the string vector; NULL on allocation failure. */
char **cfg_strv_push(char ***v, size_t *n, const char *s);

/* Frees the string vector and zeroes it. */
void cfg_strv_free(char ***v, size_t *n);

/* Appends copies of name and value; 0, or -1 on allocation failure. */
int cfg_props_push(calhost_property **p, size_t *n, const char *name, const char *value);

/* Nonzero for a name: [A-Za-z0-9_.-]+ */
int cfg_valid_name(const char *s);

/* Records where "section.key" was set; 0, or -1 on allocation failure. */
int cfg_origins_add(config_settings *cfg, const char *dotted_key, unsigned line);

#endif /* CALHOST_CONFIG_PARSER_H */
