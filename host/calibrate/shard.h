/*
 * shard.h: fleet calibration's split of a run's work items into N disjoint
 * shards (`calhost calibrate --shard I/N`, `calhost plan`). Pure functions,
 * testable without plugins.
 *
 * A work item is one sweep of a run: backend x workload x target thread
 * count (x device, once targets have devices). Its shard is a hash of the
 * item's identity (the backend name, the workload's name, the target's
 * thread count) modulo N: FNV-1a over "backend\0workload\0threads" (and
 * "\0device" when the item has a device, so items without one keep their
 * shard), finished with the MurmurHash3 64-bit mixer.
 *
 * Why a hash and not "rank in sorted order mod N": an item's shard depends
 * on the item alone, so every node of an array computes it without knowing
 * the other items (a plugin that fails to load on one node, a workload added
 * to the configuration, the order of the configuration: none moves any other
 * item to another shard), and the union of the N shards is exactly the
 * unsharded run. The price: the shards are balanced only statistically (with
 * M items a shard holds M/N +- about sqrt(M/N) of them; with a handful of
 * items one shard may get none). Sorted rank mod N would balance the counts
 * to within one but moves items between shards whenever an item is added or
 * removed, and needs every node to enumerate the same full list.
 * Internal to the host.
 */
#ifndef CALHOST_CALIBRATE_SHARD_H
#define CALHOST_CALIBRATE_SHARD_H

#include <stddef.h>
#include <stdint.h>

/* The largest shard count accepted (a Slurm array rarely exceeds it). */
#define CALHOST_SHARD_MAX 65536u

/* Which shard of how many a run calibrates; count 0 (all zero: the
 * default) means unsharded. */
typedef struct calibrate_shard {
  uint32_t index; /* 0 .. count-1 */
  uint32_t count; /* N >= 1, or 0: unsharded */
} calibrate_shard;

/* Parses "I/N" (decimal, 0 <= I < N <= CALHOST_SHARD_MAX, no sign, no
 * spaces). Returns 0 and fills *out, or -1 with the reason in why. */
int calibrate_shard_parse(const char *text, calibrate_shard *out, char *why, size_t cap);

/* The shard (0 .. count-1) of the item backend x workload x threads (x
 * device, NULL or "" when none); 0 when count <= 1. Deterministic across
 * runs, machines and byte orders. */
uint32_t calibrate_shard_of(const char *backend, const char *workload, uint32_t threads,
                            const char *device, uint32_t count);

/* Nonzero when the item belongs to shard s (always for an unsharded s). */
int calibrate_shard_has(const calibrate_shard *s, const char *backend, const char *workload,
                        uint32_t threads, const char *device);

#endif /* CALHOST_CALIBRATE_SHARD_H */
