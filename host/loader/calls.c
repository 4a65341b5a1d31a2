/*
 * calls.c: every call the host makes into a loaded plugin in its own
 * process (loader.h, "Calling a loaded plugin in this process"): the
 * calling thread's record of the plugin call it is inside (what the exit
 * guard names), the stdout guard (off unless the program turns it on, then
 * nested and locked, so threads cannot leave fd 1 on stderr), the exit
 * guard (a program's exit() inside a plugin call becomes a failure naming
 * the plugin), and the wrappers of create, destroy, build_key and
 * validate_policy.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"
#ifndef _WIN32
#include "base/text.h"
#include "isolate/isolate.h"
#define say base_text_printf /* a path's control characters escaped */
#else
#define say fprintf /* no base/text.c in the Windows build */
#endif

/* The calling thread's innermost plugin call (loader_call_begin). */
static _Thread_local loader_call *current;

/* The stdout guard: off by default (a library never rewires its program's
 * descriptors); when on, the first of any nested or concurrent calls saves
 * fd 1 and points it at stderr, the last one restores it, under the lock. */
static atomic_int guard_on;
static loader_ticket_lock guard_lock;
static unsigned guard_depth; /* calls inside the guard, every thread; under guard_lock */
static int guard_saved = -1; /* fd 1 as it was before the first of them */

static atomic_int exit_guard_installed;

static int in_isolated_child(void) {
#ifndef _WIN32
  return isolate_in_child();
#else
  return 0;
#endif
}

void loader_stdout_guard_enable(int on) {
  atomic_store(&guard_on, on != 0);
}

int loader_stdout_guard_begin(void) {
  /* in an isolated child stdout is the capture pipe already: what the
   * plugin prints is kept there (and the lock may have been held by
   * another thread of the parent at fork) */
  if (!atomic_load(&guard_on) || in_isolated_child())
    return 0;
  int token = 1;
  loader_ticket_lock_acquire(&guard_lock);
  if (guard_depth == 0) {
    fflush(stdout);
    guard_saved = dup(STDOUT_FILENO);
    if (guard_saved < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      if (guard_saved >= 0)
        close(guard_saved);
      guard_saved = -1;
      token = 0;
    }
  }
  if (token)
    guard_depth++;
  loader_ticket_lock_release(&guard_lock);
  return token;
}

void loader_stdout_guard_end(int token) {
  if (!token)
    return;
  loader_ticket_lock_acquire(&guard_lock);
  if (guard_depth > 0 && --guard_depth == 0) {
    fflush(stdout);
    dup2(guard_saved, STDOUT_FILENO);
    close(guard_saved);
    guard_saved = -1;
  }
  loader_ticket_lock_release(&guard_lock);
}

void loader_call_begin(loader_call *c, const loader_plugin *p, const char *entry) {
  c->plugin = p;
  c->entry = entry;
  c->outer = current;
  current = c;
  c->guard = loader_stdout_guard_begin();
}

void loader_call_end(loader_call *c) {
  loader_stdout_guard_end(c->guard);
  current = c->outer;
}

const loader_call *loader_call_current(void) {
  return current;
}

/* exit() (or a return from main) while the exiting thread is inside a
 * plugin call: the plugin ended the program. Say so and turn it into
 * status 2, without running what is left of the exit (the program's state
 * is whatever the plugin left mid-call). */
static void exit_guard_report(int have_status, int status) {
  const loader_call *c = current;
  if (!c || in_isolated_child())
    return;
  const loader_plugin *p = c->plugin;
  char what[64];
  if (have_status)
    snprintf(what, sizeof what, "exit(%d)", status);
  else
    snprintf(what, sizeof what, "exit()");
  fflush(stdout);
  char where[96];
  if (!strcmp(c->entry, "loading") || !strcmp(c->entry, "unloading"))
    snprintf(where, sizeof where, "while %s", c->entry);
  else
    snprintf(where, sizeof where, "in %s()", c->entry);
  if (p && p->backend)
    say(stderr,
        "calhost: error: plugin '%s' (%s) called %s %s: calhost stops here, with "
        "what it was doing not done\n",
        p->backend, p->path ? p->path : "?", what, where);
  else
    say(stderr,
        "calhost: error: plugin %s called %s %s: calhost stops here, with what it "
        "was doing not done\n",
        p && p->path ? p->path : "?", what, where);
  fflush(stderr);
  _exit(LOADER_EXIT_GUARD_STATUS);
}

#if defined(__GLIBC__)
static void exit_guard_on_exit(int status, void *arg) {
  (void)arg;
  exit_guard_report(1, status);
}
#else
static void exit_guard_atexit(void) {
  exit_guard_report(0, 0);
}
#endif

int loader_exit_guard_install(void) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&exit_guard_installed, &expected, 1))
    return 0;
#if defined(__GLIBC__)
  return on_exit(exit_guard_on_exit, NULL) == 0 ? 0 : -1;
#else
  return atexit(exit_guard_atexit) == 0 ? 0 : -1;
#endif
}

calhost_status loader_plugin_create(loader_plugin *p, const calhost_property *settings,
                                    size_t setting_count, calhost_plugin_instance **out) {
  *out = NULL;
  if (!p || !p->loaded)
    return CALHOST_INVALID_ARGUMENT;
  loader_call c;
  loader_call_begin(&c, p, "create");
  calhost_status st = p->vtable.create(&p->services, settings, setting_count, out);
  loader_call_end(&c);
  if (st != CALHOST_OK || !*out) {
    *out = NULL;
    return st == CALHOST_OK ? CALHOST_ERROR : st;
  }
  return CALHOST_OK;
}

void loader_plugin_destroy(loader_plugin *p, calhost_plugin_instance *inst) {
  if (!p || !p->loaded || !inst)
    return;
  loader_call c;
  loader_call_begin(&c, p, "destroy");
  p->vtable.destroy(inst);
  loader_call_end(&c);
}

calhost_status loader_plugin_build_key(loader_plugin *p, calhost_plugin_instance *inst,
                                       const calhost_workload *w, const calhost_target *t,
                                       calhost_built_key *key) {
  loader_call c;
  loader_call_begin(&c, p, "build_key");
  calhost_status st = p->vtable.build_key(inst, w, t, key);
  loader_call_end(&c);
  return st;
}

calhost_status loader_plugin_validate(loader_plugin *p, calhost_plugin_instance *inst,
                                      const char *policy, size_t length, char *err, size_t cap) {
  loader_call c;
  loader_call_begin(&c, p, "validate_policy");
  calhost_status st = p->vtable.validate_policy(inst, policy, length, err, cap);
  loader_call_end(&c);
  return st;
}
