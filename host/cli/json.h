/*
 * json.h: the command line's minimal JSON output helpers (owned with the
 * store commands; free for any cmd_*.c to use): escaped strings and the
 * profile / lookup-result objects every store command prints.
 */
#ifndef CALHOST_CLI_JSON_H
#define CALHOST_CLI_JSON_H

#include <stdio.h>

#include "calhost/calstore.h"

/* Writes s as a JSON string ("null" when s is NULL): '"', '\\' and control
 * characters escaped; bytes >= 0x80 are passed through (UTF-8 in, UTF-8
 * out). */
void calhost_json_string(FILE *out, const char *s);

/* Writes a profile object: {"kind", "source", "backend", "operator",
 * "implementation", "model_digest", "processor", "thread_count",
 * "structure": {name: value}, "measurements": [{"name", "value", "unit"}],
 * "policy"}; the fields a kind lacks are null (structure {} for exact
 * keys). "null" when p is NULL. */
void calhost_json_profile(FILE *out, const calstore_profile *p);

/* Stable word for a precedence level: "exact_override", "portable_override",
 * "exact_calibrated", "portable_calibrated", "none". */
const char *calhost_level_name(calstore_level level);

#endif /* CALHOST_CLI_JSON_H */
