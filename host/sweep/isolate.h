/*
 * isolate.h: running untrusted plugin code in a forked child with a time
 * limit, receiving its results as framed records (proto.h) over a dedicated
 * pipe. The child's stdout (where a plugin may print garbage) goes to a
 * second pipe; the parent keeps a bounded amount of it for the report and it
 * never reaches the record stream. A crash (signal), hang (timeout: SIGKILL),
 * abort, exit() or truncated stream is reported in the outcome; whatever
 * records arrived before it were already handed to the parent's callback.
 * Internal to the host (POSIX only).
 */
#ifndef CALHOST_SWEEP_ISOLATE_H
#define CALHOST_SWEEP_ISOLATE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

typedef enum calhost_child_end {
  CALHOST_CHILD_OK = 0,          /* sent the done record and exited 0 */
  CALHOST_CHILD_EXITED = 1,      /* exited (any status) before the done record, or nonzero */
  CALHOST_CHILD_SIGNALED = 2,    /* killed by a signal (crash, abort) */
  CALHOST_CHILD_TIMEOUT = 3,     /* ran past the time limit; SIGKILLed */
  CALHOST_CHILD_CANCELLED = 4,   /* the cancel flag was raised; SIGKILLed */
  CALHOST_CHILD_PROTOCOL = 5,    /* corrupt or truncated record stream */
  CALHOST_CHILD_START_FAILED = 6 /* pipe or fork failed */
} calhost_child_end;

#define CALHOST_CHILD_OUTPUT_MAX 2048

typedef struct calhost_child_outcome {
  calhost_child_end end;
  int exit_code;     /* when it exited */
  int signal;        /* when a signal killed it */
  int saw_done;      /* the done record arrived */
  int truncated;     /* the stream ended inside a frame */
  double seconds;    /* wall time of the child */
  char message[256]; /* one line: "killed by signal 11 (SIGSEGV)", "timed out after 5 s", ... */
  char output[CALHOST_CHILD_OUTPUT_MAX]; /* first bytes of the child's stdout, NUL-terminated */
  size_t output_total;                   /* bytes it wrote to stdout in all */
} calhost_child_outcome;

/* The child's work: write records to record_fd (calhost_proto_write);
 * the return value is the child's exit status. */
typedef int (*calhost_child_fn)(void *user, int record_fd);

/* Called in the parent for each complete record, in order. */
typedef void (*calhost_record_fn)(void *user, const calhost_proto_msg *msg);

typedef struct calhost_isolate_options {
  double timeout_seconds;             /* <= 0: no limit */
  volatile sig_atomic_t *cancel_flag; /* may be NULL */
  uint32_t done_type;                 /* the record type that marks a clean finish */
} calhost_isolate_options;

/* Forks; in the child: default SIGINT/SIGTERM, SIGPIPE ignored, stdout to
 * the capture pipe, parent-death signal SIGKILL (Linux), then
 * _exit(child(child_user, fd)). In the parent: reads records and output
 * until the child ends, the limit passes (SIGKILL) or *cancel_flag is raised
 * (SIGKILL), calling on_record for each record, and fills *out. Returns 0
 * when the child ended cleanly (out->end == CALHOST_CHILD_OK), else -1. */
int calhost_isolate_run(const calhost_isolate_options *o, calhost_child_fn child, void *child_user,
                        calhost_record_fn on_record, void *parent_user, calhost_child_outcome *out);

/* "SIGSEGV"-style name of a signal number (static), "signal" when unknown. */
const char *calhost_isolate_signal_name(int sig);

#endif /* CALHOST_SWEEP_ISOLATE_H */
