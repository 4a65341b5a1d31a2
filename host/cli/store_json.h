/*
 * store_json.h: the store's objects as the command line prints them: a
 * profile and a lookup result as JSON, through the one JSON writer
 * (base/json.h), and a profile as one line of text. Both forms of `lookup`
 * and `list` print these; nothing else writes them.
 */
#ifndef CALHOST_CLI_STORE_JSON_H
#define CALHOST_CLI_STORE_JSON_H

#include <stdio.h>

#include "calhost/calstore.h"

/* Writes a profile object: {"kind", "source", "backend", "operator",
 * "implementation", "model_digest", "processor", "thread_count",
 * "structure": {name: value}, "measurements": [{"name", "value", "unit"}],
 * "policy"}; the fields a kind lacks are null (structure {} for exact
 * keys). "null" when p is NULL. */
void cli_json_profile(FILE *out, const calstore_profile *p);

/* Writes a lookup result and a newline: {"status", "level", "profile",
 * "rejections": [{"reason", "message", "profile"}], "diagnostics": []}.
 * r NULL (the store could not be opened): status st, level "none",
 * profile null, and one diagnostic {"path", "status"} when path is set.
 * unvalidated (may be NULL): the candidates were not checked by the
 * backend's validator; one diagnostic {"status": "not_validated",
 * "backend": unvalidated_backend, "message": unvalidated} says why. */
void cli_json_lookup_result(FILE *out, const calstore_lookup_result *r, calstore_status st,
                            const char *path, const char *unvalidated_backend,
                            const char *unvalidated);

/* cli_json_lookup_result of a lookup without --plugin (r and st as
 * there, no diagnostics) with the runtime's choice, as `lookup --model
 * --json` gives it per node: "backend" (the chosen one's, or the first
 * answer's; null when none), "chosen_by" ("configuration", "race",
 * "loader order" or "nothing") and "reason" (the race's figures). */
void cli_json_lookup_chosen(FILE *out, const calstore_lookup_result *r, calstore_status st,
                            const char *backend, const char *chosen_by, const char *reason);

/* Writes a profile as one line of text: "exact|portable calibrated|override
 * backend=\"...\" ... policy=\"...\"", the values as JSON strings (so control
 * characters are escaped), measurement names and units escaped. The text
 * form of `list` and of the key form of `lookup`. */
void cli_text_profile(FILE *out, const calstore_profile *p);

#endif /* CALHOST_CLI_STORE_JSON_H */
