/*
 * services.c: the host-services table (plugin.h's calhost_host_services) the
 * loader hands to every plugin: logging with levels, error messages attached
 * to a failed call, cancellation, progress and aligned allocation. One
 * context per plugin attributes messages to their backend; the caller plugs
 * its own sinks in through loader_services_hooks. Also the default log
 * level (CALHOST_LOG_LEVEL, --verbose). set_error is safe from any thread.
 */
#include <stdio.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <sched.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "base/words.h"
#include "loader.h"

static int verbose_flag;

const char *loader_log_level_name(calhost_log_level level) {
  static const char *const words[] = {[CALHOST_LOG_DEBUG] = "debug",
                                      [CALHOST_LOG_INFO] = "info",
                                      [CALHOST_LOG_WARNING] = "warning",
                                      [CALHOST_LOG_ERROR] = "error"};
  return BASE_WORD(words, CALHOST_LOG_ERROR, level, "log");
}

static void svc_log(void *context, calhost_log_level level, const char *message) {
  loader_services_context *ctx = context;
  const loader_services_hooks *h = ctx ? ctx->hooks : NULL;
  if (!message)
    return;
  if (h && h->log) {
    h->log(h->user, ctx->backend, level, message);
    return;
  }
  if ((int)level < (int)(h ? h->min_log_level : loader_log_level_default()))
    return;
  fprintf(stderr, "calhost: [%s] %s: %s\n", ctx && ctx->backend ? ctx->backend : "plugin",
          loader_log_level_name(level), message);
}

void loader_ticket_lock_acquire(loader_ticket_lock *l) {
  unsigned ticket = atomic_fetch_add_explicit(&l->next, 1u, memory_order_relaxed);
  while (atomic_load_explicit(&l->serving, memory_order_acquire) != ticket)
#if defined(_WIN32)
    SwitchToThread();
#else
    sched_yield();
#endif
}

void loader_ticket_lock_release(loader_ticket_lock *l) {
  atomic_fetch_add_explicit(&l->serving, 1u, memory_order_release);
}

/* The context's lock (a thread calling set_error in a loop cannot starve the
 * host's take_error). Held only for a copy of at most 1 KiB. */
static void lock(loader_services_context *ctx) {
  loader_ticket_lock_acquire(&ctx->lock);
}

static void unlock(loader_services_context *ctx) {
  loader_ticket_lock_release(&ctx->lock);
}

static void svc_set_error(void *context, const char *message) {
  loader_services_context *ctx = context;
  size_t n = 0;
  if (!ctx)
    return;
  if (!message)
    message = "(no message)";
  lock(ctx);
  /* Keep it on one line: a reason is printed in listings and reports. */
  for (; message[n] && n + 1 < sizeof ctx->error; n++)
    ctx->error[n] = (message[n] == '\n' || message[n] == '\r') ? ' ' : message[n];
  ctx->error[n] = '\0';
  ctx->has_error = 1;
  unlock(ctx);
}

static int svc_is_cancelled(void *context) {
  loader_services_context *ctx = context;
  const loader_services_hooks *h = ctx ? ctx->hooks : NULL;
  if (!h)
    return 0;
  if (h->cancel_flag && *h->cancel_flag)
    return 1;
  return h->is_cancelled ? h->is_cancelled(h->user) != 0 : 0;
}

static void svc_progress(void *context, double fraction, const char *what) {
  loader_services_context *ctx = context;
  const loader_services_hooks *h = ctx ? ctx->hooks : NULL;
  if (h && h->progress)
    h->progress(h->user, ctx->backend, fraction, what);
}

static void *svc_allocate(void *context, size_t size, size_t alignment) {
  void *p = NULL;
  (void)context;
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  if (alignment & (alignment - 1))
    return NULL;
  if (size == 0)
    size = 1;
#if defined(_WIN32)
  p = _aligned_malloc(size, alignment);
  return p;
#else
  return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
#endif
}

static void svc_free(void *context, void *pointer) {
  (void)context;
#if defined(_WIN32)
  _aligned_free(pointer);
#else
  free(pointer);
#endif
}

void loader_services_init(calhost_host_services *table, loader_services_context *ctx,
                          const loader_services_hooks *hooks, const char *backend) {
  memset(table, 0, sizeof *table);
  memset(ctx, 0, sizeof *ctx);
  atomic_init(&ctx->lock.next, 0u);
  atomic_init(&ctx->lock.serving, 0u);
  ctx->hooks = hooks;
  ctx->backend = backend;
  table->header.struct_type = CALHOST_STRUCT_HOST_SERVICES;
  table->header.struct_version = 1;
  table->header.struct_size = (uint32_t)sizeof *table;
  table->context = ctx;
  table->log = svc_log;
  table->set_error = svc_set_error;
  table->is_cancelled = svc_is_cancelled;
  table->progress = svc_progress;
  table->allocate = svc_allocate;
  table->free_memory = svc_free;
}

const char *loader_services_take_error(loader_services_context *ctx) {
  int had;
  if (!ctx)
    return NULL;
  lock(ctx);
  had = ctx->has_error;
  if (had)
    memcpy(ctx->taken, ctx->error, sizeof ctx->taken);
  ctx->has_error = 0;
  unlock(ctx);
  return had ? ctx->taken : NULL;
}

int loader_log_level_parse(const char *word, calhost_log_level *out) {
  static const calhost_log_level levels[] = {CALHOST_LOG_DEBUG, CALHOST_LOG_INFO,
                                             CALHOST_LOG_WARNING, CALHOST_LOG_ERROR};
  for (size_t i = 0; word && i < sizeof levels / sizeof levels[0]; i++) {
    const char *name = loader_log_level_name(levels[i]);
    size_t k = 0;
    while (word[k] && name[k] && (word[k] | 0x20) == name[k])
      k++;
    if (!word[k] && !name[k]) {
      *out = levels[i];
      return 0;
    }
  }
  return -1;
}

calhost_log_level loader_log_level_default(void) {
  calhost_log_level level = CALHOST_LOG_WARNING;
  if (loader_log_level_parse(getenv("CALHOST_LOG_LEVEL"), &level) != 0)
    level = CALHOST_LOG_WARNING;
  return verbose_flag ? CALHOST_LOG_DEBUG : level;
}

void loader_log_set_verbose(int verbose) {
  verbose_flag = verbose != 0;
}
