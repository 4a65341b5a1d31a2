/*
 * json.c: the one JSON writer (see json.h for the string rule).
 */
#include "json.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "text.h"

void base_json_string(FILE *out, const char *s) {
  /* the two-character escapes: \" \\ \b \f \n \r \t */
  static const char escaped[] = "\"\\\b\f\n\r\t", letter[] = "\"\\bfnrt";
  if (!s) {
    fputs("null", out);
    return;
  }
  fputc('"', out);
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    uint32_t cp = 0;
    size_t n = base_utf8_decode(p, &cp);
    if (n == 0) { /* not UTF-8: the byte's value as U+00XX */
      fprintf(out, "\\u%04x", *p);
      p++;
      continue;
    }
    const char *e = cp && cp < 0x80 ? strchr(escaped, (int)cp) : NULL;
    if (e)
      fprintf(out, "\\%c", letter[e - escaped]);
    else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
      fprintf(out, "\\u%04x", (unsigned)cp);
    else
      fwrite(p, 1, n, out);
    p += n;
  }
  fputc('"', out);
}

void base_json_number(FILE *out, double v) {
  if (isfinite(v))
    fprintf(out, "%.17g", v);
  else
    fputs("null", out);
}

void base_json_bool(FILE *out, int v) {
  fputs(v ? "true" : "false", out);
}

void base_json_key(FILE *out, int first, const char *key) {
  if (!first)
    fputc(',', out);
  base_json_string(out, key);
  fputc(':', out);
}

void base_json_member_string(FILE *out, int first, const char *key, const char *v) {
  base_json_key(out, first, key);
  base_json_string(out, v);
}

void base_json_member_number(FILE *out, int first, const char *key, double v) {
  base_json_key(out, first, key);
  base_json_number(out, v);
}

void base_json_member_bool(FILE *out, int first, const char *key, int v) {
  base_json_key(out, first, key);
  base_json_bool(out, v);
}

void base_json_uint(FILE *out, unsigned long long v) {
  fprintf(out, "%llu", v);
}

void base_json_member_uint(FILE *out, int first, const char *key, unsigned long long v) {
  base_json_key(out, first, key);
  base_json_uint(out, v);
}

void base_json_member_int(FILE *out, int first, const char *key, long long v) {
  base_json_key(out, first, key);
  fprintf(out, "%lld", v);
}

void base_json_member_null(FILE *out, int first, const char *key) {
  base_json_key(out, first, key);
  fputs("null", out);
}

void base_json_member_strings(FILE *out, int first, const char *key, char *const *v, size_t n) {
  base_json_key(out, first, key);
  fputc('[', out);
  for (size_t i = 0; i < n; i++) {
    if (i)
      fputc(',', out);
    base_json_string(out, v[i]);
  }
  fputc(']', out);
}

void base_json_status_message(FILE *out, const char *status, const char *message) {
  fputc('{', out);
  base_json_member_string(out, 1, "status", status);
  base_json_member_string(out, 0, "message", message);
  fputs("}\n", out);
}
