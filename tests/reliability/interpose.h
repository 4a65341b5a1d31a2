/*
 * interpose.h: fault injection by symbol interposition for the reliability
 * tests. interpose.c defines open/openat/write/pwrite/writev/ftruncate/
 * fsync/fdatasync/rename/renameat/unlink/close/flock in the test executable itself,
 * so libcalstore (static or shared) calls them instead of libc's; each
 * forwards to the raw system call unless an armed rule fires.
 *
 * A rule matches calls of the kinds in `mask` that touch a path under
 * `prefix` (fd-based calls are resolved through /proc/self/fd). At the
 * `nth` matching call (1-based) it acts: SIGKILL the process, SIGSTOP it,
 * call a hook, or fail with `err`; once, or on every later matching call
 * too when `sticky`. Only system calls made through these symbols are seen:
 * stdio's internal writes are not, which is why the crash test also kills
 * at random times.
 */
#ifndef CALHOST_RELIABILITY_INTERPOSE_H
#define CALHOST_RELIABILITY_INTERPOSE_H

enum {
  IP_OPEN = 1 << 0,   /* open/openat with O_CREAT, O_WRONLY or O_RDWR */
  IP_WRITE = 1 << 1,  /* write, pwrite, writev */
  IP_TRUNC = 1 << 2,  /* ftruncate */
  IP_FSYNC = 1 << 3,  /* fsync, fdatasync */
  IP_RENAME = 1 << 4, /* rename, renameat (matches on either path) */
  IP_UNLINK = 1 << 5, /* unlink */
  IP_CLOSE = 1 << 6,  /* close */
  IP_LOCK = 1 << 7,   /* flock (matches on the locked file) */
  IP_ALL = 0xff,
};

typedef enum ip_action {
  IP_NOTHING = 0, /* only count */
  IP_KILL = 1,    /* raise(SIGKILL) before the call */
  IP_STOP = 2,    /* raise(SIGSTOP) before the call, then perform it */
  IP_FAIL = 3,    /* return -1 with errno = err, without performing it */
  IP_HOOK = 4,    /* call hook(kind, path) before the call, then perform it */
} ip_action;

typedef void (*ip_hook_fn)(int kind, const char *path);

/* Arms one rule (replacing any previous one) and resets the counters. */
void ip_arm(const char *prefix, int mask, unsigned nth, ip_action action, int err, int sticky,
            ip_hook_fn hook);
/* Disarms; counters keep their values. */
void ip_disarm(void);
/* Matching calls seen since ip_arm, and how many times the rule fired. */
unsigned ip_calls(void);
unsigned ip_fired(void);
/* The kind (IP_*) of the call that fired last, and its name ("write"...). */
const char *ip_kind_name(int kind);
int ip_last_kind(void);

#endif
