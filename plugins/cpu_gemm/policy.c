/*
 * policy.c: parsing, validation, serialization, default and candidate
 * enumeration of cpu_gemm policies (see policy.h for the grammar).
 */
#include "policy.h"

#include "matmul.h"

#include <stdio.h>
#include <string.h>

enum { F_KERNEL, F_MC, F_NC, F_KC, F_SPLIT, F_COUNT };
static const char *const field_names[F_COUNT] = {"kernel", "mc", "nc", "kc", "split"};

/* Parses a decimal number without sign or leading zero, at most 9 digits. */
static int parse_number(const char *s, size_t len, const char *field, int *out, char *err,
                        size_t cap) {
  int v = 0;
  if (len == 0)
    return matmul_fail(err, cap, "%s: empty value", field);
  for (size_t i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9')
      return matmul_fail(err, cap, "%s: not a decimal number", field);
  if (len > 1 && s[0] == '0')
    return matmul_fail(err, cap, "%s: leading zero", field);
  if (len > 9)
    return matmul_fail(err, cap, "%s: value too large (overflow)", field);
  for (size_t i = 0; i < len; i++)
    v = v * 10 + (s[i] - '0');
  *out = v;
  return 0;
}

int cpu_gemm_policy_parse(const char *text, size_t len, int max_isa, gemm_config *out, char *err,
                          size_t cap) {
  int seen[F_COUNT] = {0};
  gemm_config cfg = {0, 0, 0, 0, GEMM_SPLIT_N};
  size_t pos = 0;

  if (!text || len == 0)
    return matmul_fail(err, cap, "empty policy");
  if (len > CPU_GEMM_POLICY_MAX)
    return matmul_fail(err, cap, "policy longer than %d bytes", CPU_GEMM_POLICY_MAX);
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)text[i];
    if (ch <= ' ' || ch >= 0x7f)
      return matmul_fail(err, cap, "invalid byte 0x%02x at offset %zu (no spaces or control bytes)",
                         ch, i);
  }
  while (pos < len) {
    size_t end = pos, eq;
    const char *key, *val;
    size_t key_len, val_len;
    int f;
    while (end < len && text[end] != ';')
      end++;
    if (end == pos)
      return matmul_fail(err, cap, "empty field at offset %zu", pos);
    if (end + 1 == len && text[end] == ';')
      return matmul_fail(err, cap, "trailing ';' at offset %zu", end);
    for (eq = pos; eq < end && text[eq] != '='; eq++)
      ;
    if (eq == end)
      return matmul_fail(err, cap, "field at offset %zu has no '='", pos);
    key = text + pos;
    key_len = eq - pos;
    val = text + eq + 1;
    val_len = end - eq - 1;
    for (f = 0; f < F_COUNT; f++)
      if (strlen(field_names[f]) == key_len && memcmp(field_names[f], key, key_len) == 0)
        break;
    if (f == F_COUNT)
      return matmul_fail(err, cap, "unknown field '%.*s'", (int)(key_len > 32 ? 32 : key_len), key);
    if (seen[f])
      return matmul_fail(err, cap, "duplicate field %s", field_names[f]);
    seen[f] = 1;
    if (memchr(val, '=', val_len))
      return matmul_fail(err, cap, "%s: unexpected '=' in value", field_names[f]);
    switch (f) {
    case F_KERNEL:
      cfg.kernel = gemm_kernel_find(val, val_len);
      if (cfg.kernel < 0)
        return matmul_fail(err, cap, "unknown kernel '%.*s'", (int)(val_len > 32 ? 32 : val_len),
                           val);
      break;
    case F_MC:
      if (parse_number(val, val_len, "mc", &cfg.mc, err, cap))
        return -1;
      break;
    case F_NC:
      if (parse_number(val, val_len, "nc", &cfg.nc, err, cap))
        return -1;
      break;
    case F_KC:
      if (parse_number(val, val_len, "kc", &cfg.kc, err, cap))
        return -1;
      break;
    default: {
      int sp = GEMM_SPLIT_BATCH;
      while (sp >= 0 && !(val_len == 1 && val[0] == cpu_gemm_split_word((gemm_split)sp)[0]))
        sp--;
      if (sp < 0)
        return matmul_fail(err, cap, "split: expected 'n', 'm', 's' or 'b'");
      cfg.split = (gemm_split)sp;
      break;
    }
    }
    pos = end + 1;
  }
  for (int f = 0; f < F_COUNT; f++)
    if (!seen[f])
      return matmul_fail(err, cap, "missing field %s", field_names[f]);
  if (gemm_config_check(&cfg, err, cap) != 0)
    return -1;
  if (max_isa >= 0 && (int)gemm_kernel_at(cfg.kernel)->isa > max_isa)
    return matmul_fail(err, cap, "kernel %s needs %s; this processor supports up to %s",
                       gemm_kernel_at(cfg.kernel)->name,
                       gemm_isa_name(gemm_kernel_at(cfg.kernel)->isa),
                       gemm_isa_name((gemm_isa)max_isa));
  if (out)
    *out = cfg;
  return 0;
}

int cpu_gemm_policy_format(const gemm_config *cfg, char *buf, size_t capacity) {
  int n;
  if (!cfg || gemm_config_check(cfg, NULL, 0) != 0)
    return -1;
  n = snprintf(buf, buf ? capacity : 0, "kernel=%s;mc=%d;nc=%d;kc=%d;split=%s",
               gemm_kernel_at(cfg->kernel)->name, cfg->mc, cfg->nc, cfg->kc,
               cpu_gemm_split_word(cfg->split));
  return n;
}

const char *cpu_gemm_split_word(gemm_split split) {
  static const char *const words[] = {[GEMM_SPLIT_N] = "n",
                                      [GEMM_SPLIT_M] = "m",
                                      [GEMM_SPLIT_SERIAL] = "s",
                                      [GEMM_SPLIT_BATCH] = "b"};
  return (unsigned)split < sizeof words / sizeof *words ? words[split] : "n";
}

void cpu_gemm_policy_default(gemm_config *out) {
  out->kernel = gemm_kernel_find("gen_4x8", 7);
  out->mc = 64;
  out->nc = 512;
  out->kc = 128;
  out->split = GEMM_SPLIT_N;
}

/* The deep kc value, tried on fewer tiles (cpu_gemm_candidates_batched). */
#define KC_DEEP 1024
#define KC_DEEP_MC_TARGETS 2 /* the first two mc targets: 128 and 64 */

static size_t clamp_tile(size_t target, size_t tile, size_t dim) {
  size_t v = (target + tile / 2) / tile * tile; /* nearest multiple */
  size_t whole = (dim + tile - 1) / tile * tile;
  if (v < tile)
    v = tile;
  return v < whole ? v : whole;
}

static size_t clamp_k(size_t kc, size_t k) {
  return kc < k ? kc : k;
}

/* Value a of a list after collapsing onto the problem, or 0 when an earlier
 * entry of the list collapses onto the same value. */
static size_t mc_at(const size_t *t, size_t a, size_t tile, size_t dim) {
  size_t v = clamp_tile(t[a], tile, dim);
  for (size_t b = 0; b < a; b++)
    if (clamp_tile(t[b], tile, dim) == v)
      return 0;
  return v;
}

static size_t kc_at(const size_t *t, size_t a, size_t k) {
  size_t v = clamp_k(t[a], k);
  for (size_t b = 0; b < a; b++)
    if (clamp_k(t[b], k) == v)
      return 0;
  return v;
}

size_t cpu_gemm_candidates(int max_isa, size_t m, size_t n, size_t k, unsigned threads,
                           gemm_config *out, size_t capacity) {
  return cpu_gemm_candidates_batched(max_isa, m, n, k, 1, threads, out, capacity);
}

size_t cpu_gemm_candidates_batched(int max_isa, size_t m, size_t n, size_t k, size_t batch,
                                   unsigned threads, gemm_config *out, size_t capacity) {
  /* Most plausible values first within each list, so that any prefix of the
   * space (a sweep stopped by its time budget) already covers every kernel
   * of the best ISA class with a typical blocking. */
  /* kc 1024 last (the list of before is unchanged up to the end of the best
   * class's entries, where these come): deep products
   * gain from it (B's micro-panel then streams from L2, but C is read and
   * written once per 1024 of K instead of once per 256-512); for k < 1024
   * it is the whole of K, for k <= 512 a duplicate that is dropped. Only
   * with the best ISA class's kernels (the others are there for a sweep cut
   * short) and mc targets 128 and 64 (a 256 x 1024 block of A is 1 MiB,
   * a whole L2 cache), so the list grows by about a tenth, not a quarter. */
  static const size_t kc_values[] = {256, 128, 512, 384, KC_DEEP};
  enum { KC_VALUES = sizeof kc_values / sizeof kc_values[0] };
  static const size_t mc_targets[] = {128, 64, 256};
  static const size_t nc_targets[] = {1024, 4096, 256};
  size_t count = 0;
  static const gemm_split split_values[] = {GEMM_SPLIT_N, GEMM_SPLIT_M, GEMM_SPLIT_SERIAL,
                                            GEMM_SPLIT_BATCH};
  int splits = threads > 1 ? (batch > 1 ? 4 : 3) : 1;
  for (int isa = max_isa; isa >= GEMM_ISA_PORTABLE; isa--)
    for (size_t c = 0; c < KC_VALUES; c++) {
      size_t kc = kc_at(kc_values, c, k);
      if (!kc)
        continue;
      int deep = kc_values[c] == KC_DEEP;
      if (deep && isa != max_isa)
        continue;
      for (size_t a = 0; a < (deep ? (size_t)KC_DEEP_MC_TARGETS : 3); a++)
        for (size_t b = 0; b < 3; b++)
          for (int ki = 0; ki < gemm_kernel_count(); ki++) {
            const gemm_kernel_info *kern = gemm_kernel_at(ki);
            size_t mc, nc;
            if ((int)kern->isa != isa)
              continue;
            mc = mc_at(mc_targets, a, (size_t)kern->mr, m);
            nc = mc_at(nc_targets, b, (size_t)kern->nr, n);
            if (!mc || !nc)
              continue;
            { /* a panel over the packing limits (nc 4096 x kc 1024 on wide tiles) */
              gemm_config probe = {ki, (int)mc, (int)nc, (int)kc, GEMM_SPLIT_N};
              if (gemm_config_check(&probe, NULL, 0) != 0)
                continue;
            }
            for (int sp = 0; sp < splits; sp++) {
              if (out && count < capacity) {
                out[count].kernel = ki;
                out[count].mc = (int)mc;
                out[count].nc = (int)nc;
                out[count].kc = (int)kc;
                out[count].split = split_values[sp];
              }
              count++;
            }
          }
    }
  return count;
}
