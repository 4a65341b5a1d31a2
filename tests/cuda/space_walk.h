/*
 * space_walk.h: what cuda_nvrtc and cuda-compile-all share: the distinct
 * compile-time configurations of cuda_gemm's space for a dtype and device
 * limits (split-K and swizzle are kernel arguments: every valid point maps
 * to one of these modules), and compiling a list of them with NVRTC on a
 * few threads, checking ptxas's report against the device's register
 * file. Header-only, for the two tests/cuda programs.
 */
#ifndef CALHOST_TESTS_CUDA_SPACE_WALK_H
#define CALHOST_TESTS_CUDA_SPACE_WALK_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgemm.h"
#include "cu_nvrtc.h"

typedef struct walk_item {
  cgemm_config c;
  cgemm_dtype t;
  int rc, registers, spill;
  double seconds;
  char log[512];
} walk_item;

/* Calls fn for every valid point (full assignment) of dtype t under l
 * with K padded to kp. */
static void walk_points(cgemm_dtype t, const cgemm_limits *l, unsigned kp,
                        void (*fn)(const cgemm_config *c, void *user), void *user) {
  uint32_t a[CG_COUNT] = {0};
  for (;;) {
    cgemm_config c;
    for (int k = 0; k < CG_COUNT; k++)
      c.v[k] = cgemm_params[k].values[a[k]];
    if (cgemm_fits(&c, t, l, kp, NULL, 0) == 0)
      fn(&c, user);
    int k = 0;
    while (k < CG_COUNT && ++a[k] == cgemm_params[k].count)
      a[k++] = 0;
    if (k == CG_COUNT)
      return;
  }
}

typedef struct walk_list {
  walk_item *items;
  size_t count, cap;
  size_t points; /* valid points seen */
} walk_list;

/* Adds c's compile-time part for t unless the list has it. */
static void walk_add(walk_list *w, const cgemm_config *c, cgemm_dtype t) {
  cgemm_config k = *c;
  k.v[CG_SPLITK] = 1;
  k.v[CG_SWIZZLE] = 1;
  for (size_t i = 0; i < w->count; i++)
    if (w->items[i].t == t && !memcmp(&w->items[i].c, &k, sizeof k))
      return;
  if (w->count == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 256;
    w->items = realloc(w->items, w->cap * sizeof *w->items);
    if (!w->items)
      abort();
  }
  memset(&w->items[w->count], 0, sizeof w->items[0]);
  w->items[w->count].c = k;
  w->items[w->count].t = t;
  w->count++;
}

typedef struct walk_job {
  const cu_nvrtc *nv;
  const char *arch;
  walk_list *list;
  size_t next;
  pthread_mutex_t lock;
  int verbose;
} walk_job;

static void *walk_worker(void *arg) {
  walk_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    size_t i = j->next++;
    pthread_mutex_unlock(&j->lock);
    if (i >= j->list->count)
      return NULL;
    walk_item *it = &j->list->items[i];
    char defs[200];
    cu_nvrtc_result r;
    cgemm_defines(&it->c, it->t, defs, sizeof defs);
    it->rc = cu_nvrtc_compile(j->nv, cgemm_source, defs, j->arch, "gemm", &r);
    it->registers = r.registers;
    it->spill = r.spill_bytes;
    it->seconds = r.seconds;
    snprintf(it->log, sizeof it->log, "%s", r.log);
    free(r.cubin);
    if (j->verbose) {
      pthread_mutex_lock(&j->lock);
      printf("%s %s rc=%d %.2fs registers=%d spill=%d %s\n", j->arch, defs, it->rc, it->seconds,
             it->registers, it->spill, it->log);
      fflush(stdout);
      pthread_mutex_unlock(&j->lock);
    }
  }
}

/* Compiles every item of w for arch on `threads` threads. */
static void walk_compile(const cu_nvrtc *nv, const char *arch, walk_list *w, int threads,
                         int verbose) {
  walk_job j = {nv, arch, w, 0, PTHREAD_MUTEX_INITIALIZER, verbose};
  pthread_t tid[16];
  if (threads < 1)
    threads = 1;
  if (threads > 16)
    threads = 16;
  for (int i = 0; i < threads; i++)
    pthread_create(&tid[i], NULL, walk_worker, &j);
  for (int i = 0; i < threads; i++)
    pthread_join(tid[i], NULL);
}

/* What is wrong with a compiled item under l ("" when nothing): a
 * failed compile, no register report, more registers than the block's
 * file holds for its threads, or spilling (the rule should have refused
 * it). */
static const char *walk_verdict(const walk_item *it, const cgemm_limits *l, char *buf, size_t cap) {
  uint32_t threads = cgemm_threads(&it->c);
  buf[0] = '\0';
  if (it->rc != 0)
    snprintf(buf, cap, "does not compile: %s", it->log);
  else if (it->registers <= 0)
    snprintf(buf, cap, "ptxas reported no register count");
  else if ((uint32_t)it->registers > l->max_regs_thread ||
           (uint64_t)it->registers * threads > l->regs_block)
    snprintf(buf, cap, "%d registers x %u threads exceed the block's %u", it->registers, threads,
             l->regs_block);
  else if (it->spill > 64)
    snprintf(buf, cap, "spills %d bytes", it->spill);
  return buf;
}

#endif /* CALHOST_TESTS_CUDA_SPACE_WALK_H */
