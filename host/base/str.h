/*
 * str.h: the one way the host makes an owned copy of a string, a
 * formatted string it owns, and the message of a failure written into a
 * caller's error buffer (the `char *err, size_t cap` pair that the config,
 * processor, search and loader functions take), and the host's three
 * character rules for text it accepts from a file or a plugin: printable
 * one-line text, a word, a backend name. Part of the base layer:
 * depends on nothing but libc, and is portable (the Windows cross build's
 * loader uses it).
 */
#ifndef CALHOST_BASE_STR_H
#define CALHOST_BASE_STR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* printf-style format checking, by the rule of the vsnprintf that str.c
 * calls: on mingw-w64 that is __MINGW_PRINTF_FORMAT (GNU's rule in C99
 * mode, where mingw-w64 uses its own C99 printf; msvcrt's otherwise). */
#if defined(__MINGW32__)
#include <stdio.h> /* __MINGW_PRINTF_FORMAT */
#define BASE_STR_PRINTF(f, a) __attribute__((format(__MINGW_PRINTF_FORMAT, f, a)))
#else
#define BASE_STR_PRINTF(f, a) __attribute__((format(printf, f, a)))
/* The rule of printable one-line text (a policy, a device identity, a key
 * field, a configuration value): no control character, i.e. no byte below
 * 0x20 (line breaks, tabs, NUL) and no DEL (0x7f); other bytes, UTF-8
 * included, pass. The index of the first byte of s[0..n) that breaks it,
 * or n when none does. */
size_t base_str_control_at(const char *s, size_t n);

/* Whether s (NUL-terminated) is printable one-line text by that rule; the
 * empty string is; NULL is not. */
int base_str_one_line(const char *s);

/* Whether s is a word: non-empty one-line text without blanks (no byte at
 * or below ' ', no DEL), as a parameter value or a space file field. */
int base_str_is_word(const char *s);

/* The backend name rule ([A-Za-z0-9_.-]{1,max}; max 0: no length limit):
 * the names of plugins, workloads, sections and operators. ASCII only,
 * whatever the locale. */
int base_str_is_name(const char *s, size_t max);

#endif

/* A malloc'd copy of s; NULL when s is NULL or memory ran out. */
char *base_str_dup(const char *s);

/* A malloc'd string formatted as printf does; NULL when memory ran out. */
char *base_str_format(const char *fmt, ...) BASE_STR_PRINTF(1, 2);
char *base_str_vformat(const char *fmt, va_list ap) BASE_STR_PRINTF(1, 0);

/* Formats the message of a failure into err (at most cap bytes, always
 * NUL-terminated) when err is not NULL and cap > 0, and returns -1, so that
 * a failing function reads `return base_str_fail(err, cap, "...", ...);`. */
int base_str_fail(char *err, size_t cap, const char *fmt, ...) BASE_STR_PRINTF(3, 4);
int base_str_vfail(char *err, size_t cap, const char *fmt, va_list ap) BASE_STR_PRINTF(3, 0);

/* Whether s is one of the n strings of list (none is NULL). */
int base_str_listed(char *const *list, size_t n, const char *s);

/* The one rule of an allow list and a deny list (the configuration's
 * enabled and disabled backends): s passes when the allow list is empty or
 * names it, and the deny list does not; the deny list wins. */
int base_str_allowed(char *const *allow, size_t allow_count, char *const *deny, size_t deny_count,
                     const char *s);

/* The rule of printable one-line text (a policy, a device identity, a key
 * field, a configuration value): no control character, i.e. no byte below
 * 0x20 (line breaks, tabs, NUL) and no DEL (0x7f); other bytes, UTF-8
 * included, pass. The index of the first byte of s[0..n) that breaks it,
 * or n when none does. */
size_t base_str_control_at(const char *s, size_t n);

/* Whether s (NUL-terminated) is printable one-line text by that rule; the
 * empty string is; NULL is not. */
int base_str_one_line(const char *s);

/* Whether s is a word: non-empty one-line text without blanks (no byte at
 * or below ' ', no DEL), as a parameter value or a space file field. */
int base_str_is_word(const char *s);

/* The backend name rule ([A-Za-z0-9_.-]{1,max}; max 0: no length limit):
 * the names of plugins, workloads, sections and operators. ASCII only,
 * whatever the locale. */
int base_str_is_name(const char *s, size_t max);

/* The FNV-1a 64-bit hash of n bytes at data, continued from h (start with
 * BASE_STR_FNV_OFFSET): a stable, portable hash for names and shards, not
 * for security. */
#define BASE_STR_FNV_OFFSET 14695981039346656037ull
uint64_t base_str_fnv1a(uint64_t h, const void *data, size_t n);

#endif
