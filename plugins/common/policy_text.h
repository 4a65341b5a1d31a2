/*
 * policy_text.h: the one writer and parser of the "NAME=VALUE;NAME=VALUE"
 * policy texts of the GPU backends (opencl_gemm, clblast, cuda_gemm,
 * cublaslt), compiled into each of them (hidden, never exported).
 *
 * Every plugin separates a policy's parameters with ';' (cpu_gemm always
 * did). The GPU backends wrote ',' before issue 42: their parsers read both
 * forms, one separator throughout a text, so the profiles already in users'
 * stores keep validating; host/report/params.c reads both as well.
 */
#ifndef CALHOST_PLUGINS_POLICY_TEXT_H
#define CALHOST_PLUGINS_POLICY_TEXT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define POLICY_TEXT_HIDDEN __attribute__((visibility("hidden")))
#else
#define POLICY_TEXT_HIDDEN
#endif

/* The separator every plugin writes, and the one the GPU backends wrote
 * before (read, never written). */
#define POLICY_TEXT_SEP ';'
#define POLICY_TEXT_OLD_SEP ','

/* Largest parameter count of a policy text. */
#define POLICY_TEXT_MAX_FIELDS 32

/* Appends parameter k of a policy, "NAME=VALUE" preceded by POLICY_TEXT_SEP
 * when k > 0, at buf + *n (capacity cap, always NUL-terminated; output past
 * cap is cut) and advances *n by what was appended. The writer of every
 * GPU backend's policy text: a loop over its parameters. */
POLICY_TEXT_HIDDEN void policy_text_put(char *buf, size_t cap, size_t *n, int k, const char *name,
                                        unsigned long long value);

/* One parameter's value in a parsed text: its bytes (not NUL-terminated)
 * and its offset in the whole text (for messages). */
typedef struct policy_value {
  const char *text;
  size_t length, offset;
} policy_value;

/* Splits p[start, len) into exactly `count` parameters "NAME=VALUE" named
 * names[0..count) in that order, separated by ';' or (the earlier stored
 * form) ',', the first separator fixing the one of the whole text; a value
 * runs to the next separator and may be empty. Fills out[0..count).
 * Returns 0, or -1 with the reason in err ("expected ';' before NAME at
 * offset N", "expected NAME= at offset N", "trailing text at offset N").
 * The caller has checked the text's preconditions (matmul_policy_text). */
POLICY_TEXT_HIDDEN int policy_text_split(const char *p, size_t len, size_t start,
                                         const char *const *names, int count, policy_value *out,
                                         char *err, size_t cap);

/* Reads v as a decimal number without sign or leading zero, at most max.
 * Returns 0 with *out set, 1 when v is empty or holds a non-digit, 2 for a
 * leading zero, 3 when above max. */
POLICY_TEXT_HIDDEN int policy_text_number(const policy_value *v, uint64_t max, uint64_t *out);

#endif /* CALHOST_PLUGINS_POLICY_TEXT_H */
