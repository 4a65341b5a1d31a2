/*
 * space.c: cpu_gemm's candidate list as named parameters for the host's
 * search (see space.h): the values of each parameter, the membership of
 * each point of their product, and assignments to and from configurations.
 */
#include "space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matmul.h"
#include "policy.h"

enum { P_KERNEL, P_MC, P_NC, P_KC, P_SPLIT };

static const char *const param_names[CPU_GEMM_SPACE_PARAMS] = {"kernel", "mc", "nc", "kc", "split"};

/* Parameter p of a configuration, as a number. */
static int field(const gemm_config *c, int p) {
  const int v[CPU_GEMM_SPACE_PARAMS] = {c->kernel, c->mc, c->nc, c->kc, (int)c->split};
  return v[p];
}

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Index of value v among parameter p's values, or -1. */
static int value_index(const cpu_gemm_space *sp, int p, int v) {
  for (uint32_t i = 0; i < sp->params[p].value_count; i++)
    if (sp->numbers[p][i] == v)
      return (int)i;
  return -1;
}

/* The position of an assignment in the membership array. */
static size_t point(const cpu_gemm_space *sp, const uint32_t *a) {
  size_t at = 0;
  for (int p = 0; p < CPU_GEMM_SPACE_PARAMS; p++)
    at = at * sp->params[p].value_count + a[p];
  return at;
}

void cpu_gemm_space_free(cpu_gemm_space *sp) {
  if (!sp)
    return;
  for (int p = 0; p < CPU_GEMM_SPACE_PARAMS; p++) {
    free(sp->numbers[p]);
    free(sp->words[p]);
  }
  free(sp->text);
  free(sp->member);
  memset(sp, 0, sizeof *sp);
}

int cpu_gemm_space_init(cpu_gemm_space *sp, const gemm_config *cands, size_t n) {
  memset(sp, 0, sizeof *sp);
  enum { WORD = 12 }; /* "-2147483648" and its NUL */
  size_t product = 1;
  sp->text = malloc(3 * n * WORD);
  for (int p = 0; p < CPU_GEMM_SPACE_PARAMS; p++) {
    sp->numbers[p] = malloc(n * sizeof *sp->numbers[p]);
    sp->words[p] = malloc(n * sizeof *sp->words[p]);
    if (!sp->numbers[p] || !sp->words[p] || !sp->text) {
      cpu_gemm_space_free(sp);
      return -1;
    }
    uint32_t count = 0; /* the distinct values, in order of first appearance */
    for (size_t i = 0; i < n; i++) {
      int v = field(&cands[i], p), seen = 0;
      for (uint32_t j = 0; j < count && !seen; j++)
        seen = sp->numbers[p][j] == v;
      if (!seen)
        sp->numbers[p][count++] = v;
    }
    int ordered = p == P_MC || p == P_NC || p == P_KC;
    if (ordered)
      qsort(sp->numbers[p], count, sizeof *sp->numbers[p], compare_ints);
    for (uint32_t j = 0; j < count; j++) {
      int v = sp->numbers[p][j];
      if (p == P_KERNEL) {
        sp->words[p][j] = gemm_kernel_at(v)->name;
      } else if (p == P_SPLIT) {
        sp->words[p][j] = cpu_gemm_split_word((gemm_split)v);
      } else {
        char *w = sp->text + ((size_t)(p - P_MC) * n + j) * WORD;
        snprintf(w, WORD, "%d", v);
        sp->words[p][j] = w;
      }
    }
    sp->params[p] = (calhost_parameter){param_names[p], sp->words[p], count,
                                        ordered ? CALHOST_PARAMETER_ORDERED : 0u};
    product *= count;
  }
  sp->member = calloc(product, 1);
  if (!sp->member) {
    cpu_gemm_space_free(sp);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    uint32_t a[CPU_GEMM_SPACE_PARAMS];
    for (int p = 0; p < CPU_GEMM_SPACE_PARAMS; p++)
      a[p] = (uint32_t)value_index(sp, p, field(&cands[i], p));
    sp->member[point(sp, a)] = 1;
  }
  return 0;
}

int cpu_gemm_space_config(const cpu_gemm_space *sp, const uint32_t *a, size_t count,
                          gemm_config *out, char *err, size_t cap) {
  if (!a || count != CPU_GEMM_SPACE_PARAMS)
    return matmul_fail(err, cap, "expected %d parameter values, got %zu", CPU_GEMM_SPACE_PARAMS,
                       count);
  for (int p = 0; p < CPU_GEMM_SPACE_PARAMS; p++)
    if (a[p] >= sp->params[p].value_count)
      return matmul_fail(err, cap, "%s: value index %u out of range (%u values)", param_names[p],
                         a[p], sp->params[p].value_count);
  gemm_config c = {sp->numbers[P_KERNEL][a[P_KERNEL]], sp->numbers[P_MC][a[P_MC]],
                   sp->numbers[P_NC][a[P_NC]], sp->numbers[P_KC][a[P_KC]],
                   (gemm_split)sp->numbers[P_SPLIT][a[P_SPLIT]]};
  if (!sp->member[point(sp, a)]) {
    const gemm_kernel_info *k = gemm_kernel_at(c.kernel);
    if (c.mc % k->mr || c.nc % k->nr)
      return matmul_fail(err, cap, "%s: mc=%d and nc=%d must be multiples of its %dx%d tile",
                         k->name, c.mc, c.nc, k->mr, k->nr);
    return matmul_fail(err, cap,
                       "kernel=%s;mc=%d;nc=%d;kc=%d;split=%s is not a candidate for this shape "
                       "(mc and nc are the targets 64/128/256 and 256/1024/4096 rounded to "
                       "the kernel's tile)",
                       k->name, c.mc, c.nc, c.kc, cpu_gemm_split_word(c.split));
  }
  if (out)
    *out = c;
  return 0;
}

int cpu_gemm_space_assignment(const cpu_gemm_space *sp, const gemm_config *cfg, uint32_t *a) {
  for (int p = 0; p < CPU_GEMM_SPACE_PARAMS; p++) {
    int i = value_index(sp, p, field(cfg, p));
    if (i < 0)
      return -1;
    a[p] = (uint32_t)i;
  }
  return sp->member[point(sp, a)] ? 0 : -1;
}
