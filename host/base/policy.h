/*
 * policy.h: the host's one rule for whether two policy texts are the same
 * policy. Every plugin separates a policy's parameters with ';'; the GPU
 * backends wrote ',' before issue 42 and their validators still read it
 * (plugins/common/policy_text.h, one separator throughout a text), so a
 * store may hold "a=1,b=2" for the policy a plugin now writes "a=1;b=2".
 * The host compares a stored policy with one a plugin serialized only
 * through base_policy_same (verify's default, the engine's avoided and
 * default policies, the race's entrants and annotations, warm starts), and
 * host/report reads a text's parameters with base_policy_separator. Here,
 * in base, because the host links no plugin code (plugins/common). Part of
 * the base layer: libc only.
 */
#ifndef CALHOST_BASE_POLICY_H
#define CALHOST_BASE_POLICY_H

#include <stddef.h>

/* The separator of the parameters of policy[0, length): ',' for a text
 * without ';' whose every ','-separated part is a "name=value" (the GPU
 * backends' earlier form), else ';' (also for a text of one part, so
 * "shape=1,2" is one parameter). */
char base_policy_separator(const char *policy, size_t length);

/* Whether a[0, an) and b[0, bn) are the same policy: the same text once
 * each text's separator (base_policy_separator) is read as ';'. So
 * "a=1,b=2" and "a=1;b=2" are the same, "a=1;b=2" and "a=1;b=3" are not,
 * and a ',' inside a value of a ';'-separated text stays a ','. Returns 1
 * or 0. */
int base_policy_same_n(const char *a, size_t an, const char *b, size_t bn);

/* base_policy_same_n of two NUL-terminated texts; NULL is the same as no
 * policy, not even another NULL (returns 0). */
int base_policy_same(const char *a, const char *b);

#endif /* CALHOST_BASE_POLICY_H */
