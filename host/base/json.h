/*
 * json.h: the one JSON writer of calhost (every --json output of the
 * command line and the calibrate report). Output is always valid UTF-8 JSON,
 * whatever bytes the strings hold.
 *
 * The string rule (documented in README.md, "Output"): '"' and '\' are
 * escaped; \b \f \n \r \t use their short forms; other control characters
 * (U+0000..U+001F, U+007F) and C1 controls (U+0080..U+009F) are written as
 * \u00XX; valid UTF-8 passes through; each byte that is not part of a valid
 * UTF-8 sequence is written as \u00XX with the byte's value (so a Latin-1
 * byte 0xE9 reads as U+00E9 "é"; a decoder cannot tell it from a real
 * U+00E9, which is the price of always-valid output).
 * Part of the base layer: depends on nothing but libc.
 */
#ifndef CALHOST_BASE_JSON_H
#define CALHOST_BASE_JSON_H

#include <stdio.h>

/* Writes s as a JSON string by the rule above; "null" when s is NULL. */
void base_json_string(FILE *out, const char *s);

/* Writes v with 17 significant digits; "null" when v is not finite. */
void base_json_number(FILE *out, double v);

/* Writes v as a decimal integer (an array element; members use
 * base_json_member_uint). */
void base_json_uint(FILE *out, unsigned long long v);

/* Writes "true" or "false". */
void base_json_bool(FILE *out, int v);

/* Writes "KEY": (the key as a JSON string, then a colon), preceded by a
 * comma unless first is nonzero. For object members. */
void base_json_key(FILE *out, int first, const char *key);

/* Object members: each writes "KEY":VALUE, preceded by a comma unless first
 * is nonzero (base_json_key, then the value as the writers above write it;
 * uint and int in decimal, null as "null"). */
void base_json_member_string(FILE *out, int first, const char *key, const char *v);
void base_json_member_number(FILE *out, int first, const char *key, double v);
void base_json_member_bool(FILE *out, int first, const char *key, int v);
void base_json_member_uint(FILE *out, int first, const char *key, unsigned long long v);
void base_json_member_int(FILE *out, int first, const char *key, long long v);
void base_json_member_null(FILE *out, int first, const char *key);
/* Writes {"status":STATUS,"message":MESSAGE} and a newline: the one shape
 * of a command's "no" or failure in --json (message may be NULL: null). */
void base_json_status_message(FILE *out, const char *status, const char *message);

/* Writes "KEY":["V0","V1",...] (each as base_json_string; [] when n is 0),
 * preceded by a comma unless first is nonzero. */
void base_json_member_strings(FILE *out, int first, const char *key, char *const *v, size_t n);

#endif /* CALHOST_BASE_JSON_H */
