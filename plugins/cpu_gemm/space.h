/*
 * space.h: cpu_gemm's candidate space as named parameters (ABI 2
 * describe_space): kernel (categorical), mc, nc, kc (ordered) and split
 * (categorical), taken from a session's candidate list (policy.c,
 * cpu_gemm_candidates), and the mapping between the host's assignments and
 * configurations. A point of the parameters' product is valid when it is
 * one of the candidates: the list's rules (mc and nc are targets rounded to
 * the kernel's tile, values collapse onto small problems, kernels up to the
 * session's ISA class) are the space's constraints. Internal to the plugin.
 */
#ifndef CALHOST_CPU_GEMM_SPACE_H
#define CALHOST_CPU_GEMM_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include <calhost/plugin.h>

#include "gemm.h"

/* kernel, mc, nc, kc, split: the order of calhost_parameter_space.parameters */
#define CPU_GEMM_SPACE_PARAMS 5

typedef struct cpu_gemm_space {
  calhost_parameter params[CPU_GEMM_SPACE_PARAMS];
  /* each parameter's values as numbers (kernel index, mc, nc, kc,
   * gemm_split), params[i].value_count of them */
  int *numbers[CPU_GEMM_SPACE_PARAMS];
  const char **words[CPU_GEMM_SPACE_PARAMS]; /* their texts (params[i].values) */
  char *text;                                /* storage of the numbers' texts */
  unsigned char *member; /* one byte per point of the product: 1 = a candidate */
} cpu_gemm_space;

/* Builds the space of the n candidates at cands (n >= 1): kernels and splits
 * in their order of first appearance, mc, nc and kc in increasing order
 * (flagged ordered). Returns 0, or -1 out of memory (*sp is then freed). */
GEMM_HIDDEN int cpu_gemm_space_init(cpu_gemm_space *sp, const gemm_config *cands, size_t n);

/* Frees what cpu_gemm_space_init allocated; NULL-safe, idempotent. */
GEMM_HIDDEN void cpu_gemm_space_free(cpu_gemm_space *sp);

/* The configuration of assignment a (count value indices). Returns 0 when it
 * is a candidate; -1 with the reason in err (NUL-terminated, at most
 * err_capacity bytes; err may be NULL) when count is not
 * CPU_GEMM_SPACE_PARAMS, an index is out of range, or the point is not a
 * candidate. */
GEMM_HIDDEN int cpu_gemm_space_config(const cpu_gemm_space *sp, const uint32_t *a, size_t count,
                                      gemm_config *out, char *err, size_t err_capacity);

/* The assignment (CPU_GEMM_SPACE_PARAMS indices written to a) of a
 * configuration. Returns 0, or -1 when cfg is not a candidate. */
GEMM_HIDDEN int cpu_gemm_space_assignment(const cpu_gemm_space *sp, const gemm_config *cfg,
                                          uint32_t *a);

#endif /* CALHOST_CPU_GEMM_SPACE_H */
