/*
 * shard.c: the shard of a work item and the "I/N" syntax (see shard.h).
 */
#include "shard.h"
#include "base/str.h"
#include "config/values.h"

#include <stdio.h>
#include <string.h>

static uint64_t mix64(uint64_t h) { /* MurmurHash3 fmix64 */
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

uint32_t calibrate_shard_of(const char *backend, const char *workload, uint32_t threads,
                            const char *device, uint32_t count) {
  if (count <= 1)
    return 0;
  char num[16];
  int len = snprintf(num, sizeof num, "%u", (unsigned)threads);
  uint64_t h = BASE_STR_FNV_OFFSET;
  h = base_str_fnv1a(h, backend ? backend : "", strlen(backend ? backend : "") + 1);
  h = base_str_fnv1a(h, workload ? workload : "", strlen(workload ? workload : "") + 1);
  h = base_str_fnv1a(h, num, (size_t)len);
  if (device && *device) {
    h = base_str_fnv1a(h, "", 1);
    h = base_str_fnv1a(h, device, strlen(device));
  }
  return (uint32_t)(mix64(h) % count);
}

int calibrate_shard_has(const calibrate_shard *s, const char *backend, const char *workload,
                        uint32_t threads, const char *device) {
  if (!s || s->count <= 1)
    return 1;
  return calibrate_shard_of(backend, workload, threads, device, s->count) == s->index;
}

int calibrate_shard_parse(const char *text, calibrate_shard *out, char *why, size_t cap) {
  unsigned long long i, n;
  /* I and N through the one decimal parser of the CLI and the config */
  char buf[48];
  const char *slash = text ? strchr(text, '/') : NULL;
  size_t len = slash ? (size_t)(slash - text) : 0;
  if (!slash || len >= sizeof buf ||
      (memcpy(buf, text, len), buf[len] = '\0',
       config_value_uint(buf, 0, CALHOST_SHARD_MAX, &i, NULL, 0) != 0) ||
      config_value_uint(slash + 1, 0, CALHOST_SHARD_MAX, &n, NULL, 0) != 0)
    return base_str_fail(why, cap, "'%s' is not I/N (two decimal numbers, at most %u)",
                         text ? text : "", CALHOST_SHARD_MAX);
  if (n < 1)
    return base_str_fail(why, cap, "'%s': the shard count N must be at least 1", text);
  if (i >= n)
    return base_str_fail(why, cap, "'%s': the shard index I must be below N (0 .. %llu)", text,
                         n - 1);
  out->index = (uint32_t)i;
  out->count = (uint32_t)n;
  return 0;
}
