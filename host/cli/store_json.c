/*
 * store_json.c: the store's objects as JSON (see store_json.h).
 */
#include "store_json.h"

#include "base/json.h"
#include "base/text.h"

void cli_json_profile(FILE *out, const calstore_profile *p) {
  if (!p) {
    fputs("null", out);
    return;
  }
  const calstore_key *k = &p->key;
  int exact = k->kind == CALSTORE_KEY_EXACT;
  fputs("{\"kind\":", out);
  base_json_string(out, exact ? "exact" : "portable");
  fputs(",\"source\":", out);
  base_json_string(out, p->source == CALSTORE_SOURCE_OVERRIDE ? "override" : "calibrated");
  fputs(",\"backend\":", out);
  base_json_string(out, k->backend);
  fputs(",\"operator\":", out);
  base_json_string(out, k->operator_name);
  fputs(",\"implementation\":", out);
  base_json_string(out, k->implementation);
  fputs(",\"model_digest\":", out);
  base_json_string(out, exact ? k->model_digest : NULL);
  fputs(",\"processor\":", out);
  base_json_string(out, exact ? k->processor : NULL);
  if (exact)
    fprintf(out, ",\"thread_count\":%u", (unsigned)k->thread_count);
  else
    fputs(",\"thread_count\":null", out);
  fputs(",\"structure\":{", out);
  for (size_t i = 0; i < k->structure_count; i++) {
    if (i)
      fputc(',', out);
    base_json_string(out, k->structure[i].name);
    fputc(':', out);
    base_json_string(out, k->structure[i].value);
  }
  fputs("},\"measurements\":[", out);
  for (size_t i = 0; i < p->measurement_count; i++) {
    const calstore_measurement *m = &p->measurements[i];
    fputs(i ? ",{\"name\":" : "{\"name\":", out);
    base_json_string(out, m->name);
    fputs(",\"value\":", out);
    base_json_number(out, m->value);
    fputs(",\"unit\":", out);
    base_json_string(out, m->unit);
    fputc('}', out);
  }
  fputs("],\"policy\":", out);
  base_json_string(out, p->policy);
  fputc('}', out);
}

void cli_json_lookup_result(FILE *o, const calstore_lookup_result *r, calstore_status st,
                            const char *path) {
  fputs("{\"status\":", o);
  base_json_string(o, calstore_status_name(r ? r->status : st));
  fputs(",\"level\":", o);
  base_json_string(o, calstore_level_name(r ? r->level : CALSTORE_LEVEL_NONE));
  fputs(",\"profile\":", o);
  cli_json_profile(o, r ? r->profile : NULL);
  fputs(",\"rejections\":[", o);
  for (size_t i = 0; r && i < r->rejection_count; i++) {
    const calstore_rejection *x = &r->rejections[i];
    fputs(i ? ",{\"reason\":" : "{\"reason\":", o);
    base_json_string(o, calstore_reject_reason_name(x->reason));
    fputs(",\"message\":", o);
    base_json_string(o, x->message);
    fputs(",\"profile\":", o);
    cli_json_profile(o, &x->profile);
    fputc('}', o);
  }
  fputs("],\"diagnostics\":[", o);
  if (!r && path) {
    fputs("{\"path\":", o);
    base_json_string(o, path);
    fputs(",\"status\":", o);
    base_json_string(o, calstore_status_name(st));
    fputc('}', o);
  }
  fputs("]}\n", o);
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
