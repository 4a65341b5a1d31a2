/*
 * text.h: terminal-safe text for every human-readable output of calhost
 * (the command line and the calibrate report). Store contents, plugin
 * messages and configuration values may hold control characters (ESC ] ...
 * BEL retitles a terminal) or bytes that are not UTF-8; everything that can
 * carry such data is printed through these functions.
 *
 * The escaping rule (documented in README.md, "Output"): valid UTF-8 passes
 * through; a control character (U+0000..U+001F, U+007F) is written as \n,
 * \r, \t or \xHH; a C1 control (U+0080..U+009F) as \u00HH; each byte that is
 * not part of a valid UTF-8 sequence as \xHH. A backslash is written as is.
 * Part of the base layer: depends on nothing but libc.
 */
#ifndef CALHOST_BASE_TEXT_H
#define CALHOST_BASE_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at p (1..4; shortest form, no
 * surrogates, at most U+10FFFF), with its code point in *cp; 0 when the
 * byte at p does not start a valid sequence (or is NUL). */
size_t base_utf8_decode(const unsigned char *p, uint32_t *cp);

/* Writes s (NULL: "(null)") to out escaped as above. */
void base_text_put(FILE *out, const char *s);

/* Escapes s into buf (at most cap bytes, always NUL-terminated, cut at a
 * whole escape); returns buf. For a value that goes into a fixed field. */
const char *base_text_escape(char *buf, size_t cap, const char *s);

/* printf-style: formats the message, then writes it escaped. One line per
 * call: a single trailing newline of the formatted text is kept, any other
 * newline is escaped (a value cannot forge a line). */
void base_text_printf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void base_text_vprintf(FILE *out, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* A figure for a person: v with `digits` significant digits ("%.*g": 314.9,
 * 1.25e-05, 1e+300; never a fixed-point expansion of an unbounded value),
 * "-" when v is NaN or infinite. Into buf (cap bytes, at least 16 to hold
 * every value whole); returns buf. The one formatter of a latency, ratio or
 * spread in calibrate's and verify's tables and messages. */
const char *base_text_figure(char *buf, size_t cap, double v, int digits);

/* "PATH:LINE" into buf, or "PATH" when line is 0 (a file-level problem);
 * "-" when path is NULL or empty. Returns buf. The one formatter of a
 * location; messages read "PATH:LINE: message". */
const char *base_text_where(char *buf, size_t cap, const char *path, unsigned line);

/* Writes "PREFIXPATH[:LINE]: MESSAGE\n" escaped (prefix may be NULL or
 * "calhost: "). */
void base_text_diag(FILE *out, const char *prefix, const char *path, unsigned line, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));

/* A write-only stream that passes what is written to it on to out with the
 * escaping above, except that newlines and tabs pass through (for output
 * produced line by line elsewhere, e.g. a report that prints plugin text).
 * A UTF-8 sequence split across writes is kept whole. fclose() flushes it
 * and leaves out open. NULL when the stream cannot be made. */
FILE *base_text_filter_open(FILE *out);

/* Nonzero when out is a terminal that understands cursor escapes: a tty and
 * TERM set, non-empty and not "dumb". Progress bars draw only then. */
int base_text_cursor_ok(FILE *out);

#endif /* CALHOST_BASE_TEXT_H */
