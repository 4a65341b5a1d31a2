/*
 * policy.h: the cpu_gemm policy: its text form ("kernel=K;mc=N;nc=N;kc=N;
 * split=n|m|s|b"), the strict parser/validator, the serializer, the untuned
 * default and the candidate space of a shape. Internal to the plugin; tests
 * link policy.c and gemm.c directly.
 */
#ifndef CALHOST_CPU_GEMM_POLICY_H
#define CALHOST_CPU_GEMM_POLICY_H

#include <stddef.h>

#include "gemm.h"

/* Longest policy text accepted (bytes, without a NUL). */
#define CPU_GEMM_POLICY_MAX 128

/* Parses the len bytes at text (no NUL needed; any bytes are safe) into
 * *out. Strict: exactly the five fields kernel, mc, nc, kc, split, each once,
 * in any order, separated by ';', no spaces, no trailing ';', decimal numbers
 * without sign or leading zero; then gemm_config_check's consistency rules;
 * then, when max_isa >= 0, the kernel's ISA class must be at most max_isa.
 * Returns 0, or -1 with the reason in err (NUL-terminated, at most
 * err_capacity bytes; err may be NULL). */
GEMM_HIDDEN int cpu_gemm_policy_parse(const char *text, size_t len, int max_isa, gemm_config *out,
                                      char *err, size_t err_capacity);

/* Writes cfg's canonical text ("kernel=..;mc=..;nc=..;kc=..;split=..") into
 * buf with a NUL. Returns its length, or the length needed (> capacity-1)
 * when buf is too small, or -1 for an invalid cfg. */
GEMM_HIDDEN int cpu_gemm_policy_format(const gemm_config *cfg, char *buf, size_t capacity);

/* The policy word of a split: "n", "m", "s" or "b". */
GEMM_HIDDEN const char *cpu_gemm_split_word(gemm_split split);

/* The documented untuned default: the portable kernel gen_4x8 with
 * mc=64, nc=512, kc=128, split=n, valid on every processor. */
GEMM_HIDDEN void cpu_gemm_policy_default(gemm_config *out);

/* The candidate space for an m x n x k product on `threads` threads with
 * kernels up to max_isa: every kernel the processor supports x kc
 * {256, 128, 512, 384} x mc targets {128, 64, 256} (rounded to a multiple of
 * MR) x nc targets {1024, 4096, 256} (rounded to a multiple of NR) x split
 * {n, m, s} (split only when threads > 1), then, after the best ISA class's
 * entries, its kernels x kc 1024 x mc targets {128, 64} x the nc targets
 * (deep products only: for k <= 512 it collapses onto kc 512; a panel over
 * the packing limits is left out): 462 points on one thread, 1386 on more,
 * for an AVX-512 processor and a product of N and K >= 4096 (334 / 1002 at
 * 1024^3, where nc 4096 collapses onto 1024). Values that exceed
 * the problem collapse to the problem's size (rounded up to the tile) and
 * duplicates are dropped, so small problems get small spaces. Order: best
 * ISA class first, then kc, mc, nc, kernel, split, the most plausible value
 * of each list first, so a prefix (a sweep cut short by its time budget)
 * covers every kernel of the best class with typical tiles. Deterministic.
 * Writes at most capacity configs to out (may be NULL) and returns the total
 * count. */
GEMM_HIDDEN size_t cpu_gemm_candidates(int max_isa, size_t m, size_t n, size_t k, unsigned threads,
                                       gemm_config *out, size_t capacity);

/* The candidate space of a batch of `batch` m x n x k products: as
 * cpu_gemm_candidates, with split b (threads take whole products) as a
 * fourth split when batch > 1 and threads > 1 (one product: the same list). */
GEMM_HIDDEN size_t cpu_gemm_candidates_batched(int max_isa, size_t m, size_t n, size_t k,
                                               size_t batch, unsigned threads, gemm_config *out,
                                               size_t capacity);

#endif /* CALHOST_CPU_GEMM_POLICY_H */
