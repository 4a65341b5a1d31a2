/*
 * store_json.c: the store's objects as JSON (see store_json.h).
 */
#include "store_json.h"

#include "base/json.h"
#include "base/text.h"

/* One measurement as an object {"name", "value", "unit"} of an array (after
 * a comma unless first). */
static void json_measurement(FILE *out, int first, const calstore_measurement *m) {
  fputs(first ? "{" : ",{", out);
  base_json_member_string(out, 1, "name", m->name);
  base_json_member_number(out, 0, "value", m->value);
  base_json_member_string(out, 0, "unit", m->unit);
  fputc('}', out);
}

void cli_json_profile(FILE *out, const calstore_profile *p) {
  if (!p) {
    fputs("null", out);
    return;
  }
  const calstore_key *k = &p->key;
  int exact = k->kind == CALSTORE_KEY_EXACT;
  fputc('{', out);
  base_json_member_string(out, 1, "kind", exact ? "exact" : "portable");
  base_json_member_string(out, 0, "source",
                          p->source == CALSTORE_SOURCE_OVERRIDE ? "override" : "calibrated");
  base_json_member_string(out, 0, "backend", k->backend);
  base_json_member_string(out, 0, "operator", k->operator_name);
  base_json_member_string(out, 0, "implementation", k->implementation);
  base_json_member_string(out, 0, "model_digest", exact ? k->model_digest : NULL);
  base_json_member_string(out, 0, "processor", exact ? k->processor : NULL);
  if (exact)
    base_json_member_uint(out, 0, "thread_count", k->thread_count);
  else
    base_json_member_null(out, 0, "thread_count");
  fputs(",\"structure\":{", out);
  for (size_t i = 0; i < k->structure_count; i++)
    base_json_member_string(out, i == 0, k->structure[i].name, k->structure[i].value);
  fputs("},\"measurements\":[", out);
  for (size_t i = 0; i < p->measurement_count; i++)
    json_measurement(out, i == 0, &p->measurements[i]);
  fputc(']', out);
  base_json_member_string(out, 0, "policy", p->policy);
  fputc('}', out);
}

/* cli_json_lookup_result's members, without the closing brace. */
static void lookup_result_members(FILE *o, const calstore_lookup_result *r, calstore_status st,
                                  const char *path, const char *unvalidated_backend,
                                  const char *unvalidated) {
  fputc('{', o);
  base_json_member_string(o, 1, "status", calstore_status_name(r ? r->status : st));
  base_json_member_string(o, 0, "level", calstore_level_name(r ? r->level : CALSTORE_LEVEL_NONE));
  base_json_key(o, 0, "profile");
  cli_json_profile(o, r ? r->profile : NULL);
  fputs(",\"rejections\":[", o);
  for (size_t i = 0; r && i < r->rejection_count; i++) {
    const calstore_rejection *x = &r->rejections[i];
    fputs(i ? ",{" : "{", o);
    base_json_member_string(o, 1, "reason", calstore_reject_reason_name(x->reason));
    base_json_member_string(o, 0, "message", x->message);
    base_json_key(o, 0, "profile");
    cli_json_profile(o, &x->profile);
    fputc('}', o);
  }
  fputs("],\"diagnostics\":[", o);
  int first = 1;
  if (!r && path) {
    fputc('{', o);
    base_json_member_string(o, 1, "path", path);
    base_json_member_string(o, 0, "status", calstore_status_name(st));
    fputc('}', o);
    first = 0;
  }
  if (unvalidated) {
    fputs(first ? "{" : ",{", o);
    base_json_member_string(o, 1, "status", "not_validated");
    base_json_member_string(o, 0, "backend", unvalidated_backend);
    base_json_member_string(o, 0, "message", unvalidated);
    fputc('}', o);
  }
  fputc(']', o);
}

void cli_json_lookup_result(FILE *o, const calstore_lookup_result *r, calstore_status st,
                            const char *path, const char *unvalidated_backend,
                            const char *unvalidated) {
  lookup_result_members(o, r, st, path, unvalidated_backend, unvalidated);
  fputs("}\n", o);
}

void cli_json_lookup_chosen(FILE *o, const calstore_lookup_result *r, calstore_status st,
                            const char *backend, const char *chosen_by, const char *reason) {
  lookup_result_members(o, r, st, NULL, NULL, NULL);
  base_json_member_string(o, 0, "backend", backend);
  base_json_member_string(o, 0, "chosen_by", chosen_by);
  base_json_member_string(o, 0, "reason", reason);
  fputs("}\n", o);
}

void cli_text_profile(FILE *out, const calstore_profile *p) {
  const calstore_key *k = &p->key;
  fprintf(out, "%s %s backend=", k->kind == CALSTORE_KEY_EXACT ? "exact" : "portable",
          p->source == CALSTORE_SOURCE_OVERRIDE ? "override" : "calibrated");
  base_json_string(out, k->backend);
  fputs(" operator=", out);
  base_json_string(out, k->operator_name);
  fputs(" implementation=", out);
  base_json_string(out, k->implementation);
  if (k->kind == CALSTORE_KEY_EXACT) {
    fputs(" model_digest=", out);
    base_json_string(out, k->model_digest);
    fputs(" processor=", out);
    base_json_string(out, k->processor);
    fprintf(out, " thread_count=%u", (unsigned)k->thread_count);
  }
  for (size_t i = 0; i < k->structure_count; i++) {
    fputs(" structure:", out);
    base_text_put(out, k->structure[i].name);
    fputc('=', out);
    base_json_string(out, k->structure[i].value);
  }
  for (size_t i = 0; i < p->measurement_count; i++)
    base_text_printf(out, " %s=%.17g%s%s", p->measurements[i].name, p->measurements[i].value,
                     p->measurements[i].unit[0] ? " " : "", p->measurements[i].unit);
  fputs(" policy=", out);
  base_json_string(out, p->policy);
  fputc('\n', out);
}
