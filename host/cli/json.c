/*
 * json.c: minimal JSON output for the command line (see json.h).
 */
#include "json.h"

#include <math.h>

void calhost_json_string(FILE *out, const char *s) {
  if (!s) {
    fputs("null", out);
    return;
  }
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"':
      fputs("\\\"", out);
      break;
    case '\\':
      fputs("\\\\", out);
      break;
    case '\n':
      fputs("\\n", out);
      break;
    case '\r':
      fputs("\\r", out);
      break;
    case '\t':
      fputs("\\t", out);
      break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        fprintf(out, "\\u%04x", *p);
      else
        fputc(*p, out);
    }
  }
  fputc('"', out);
}

void calhost_json_profile(FILE *out, const calstore_profile *p) {
  if (!p) {
    fputs("null", out);
    return;
  }
  const calstore_key *k = &p->key;
  int exact = k->kind == CALSTORE_KEY_EXACT;
  fputs("{\"kind\":", out);
  calhost_json_string(out, exact ? "exact" : "portable");
  fputs(",\"source\":", out);
  calhost_json_string(out, p->source == CALSTORE_SOURCE_OVERRIDE ? "override" : "calibrated");
  fputs(",\"backend\":", out);
  calhost_json_string(out, k->backend);
  fputs(",\"operator\":", out);
  calhost_json_string(out, k->operator_name);
  fputs(",\"implementation\":", out);
  calhost_json_string(out, k->implementation);
  fputs(",\"model_digest\":", out);
  calhost_json_string(out, exact ? k->model_digest : NULL);
  fputs(",\"processor\":", out);
  calhost_json_string(out, exact ? k->processor : NULL);
  if (exact)
    fprintf(out, ",\"thread_count\":%u", (unsigned)k->thread_count);
  else
    fputs(",\"thread_count\":null", out);
  fputs(",\"structure\":{", out);
  for (size_t i = 0; i < k->structure_count; i++) {
    if (i)
      fputc(',', out);
    calhost_json_string(out, k->structure[i].name);
    fputc(':', out);
    calhost_json_string(out, k->structure[i].value);
  }
  fputs("},\"measurements\":[", out);
  for (size_t i = 0; i < p->measurement_count; i++) {
    const calstore_measurement *m = &p->measurements[i];
    fputs(i ? ",{\"name\":" : "{\"name\":", out);
    calhost_json_string(out, m->name);
    if (isfinite(m->value))
      fprintf(out, ",\"value\":%.17g,\"unit\":", m->value);
    else
      fputs(",\"value\":null,\"unit\":", out);
    calhost_json_string(out, m->unit);
    fputc('}', out);
  }
  fputs("],\"policy\":", out);
  calhost_json_string(out, p->policy);
  fputc('}', out);
}

const char *calhost_level_name(calstore_level level) {
  switch (level) {
  case CALSTORE_LEVEL_EXACT_OVERRIDE:
    return "exact_override";
  case CALSTORE_LEVEL_PORTABLE_OVERRIDE:
    return "portable_override";
  case CALSTORE_LEVEL_EXACT_CALIBRATED:
    return "exact_calibrated";
  case CALSTORE_LEVEL_PORTABLE_CALIBRATED:
    return "portable_calibrated";
  case CALSTORE_LEVEL_NONE:
    break;
  }
  return "none";
}
