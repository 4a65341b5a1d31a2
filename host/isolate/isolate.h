/*
 * isolate.h: the one way calhost runs untrusted plugin code in a child
 * process (probing a plugin, every `plugin check` check, each plugin's
 * sweeps). A forked child gets the crash signals reset to their defaults (a
 * crash is a crash, even under a sanitizer's handler), SIGINT/SIGTERM
 * default, SIGPIPE ignored, the parent-death signal SIGKILL (Linux), and its
 * stdout (and, on request, stderr) sent to capture pipes; every pipe is
 * close-on-exec. It sends its results as framed records (proto.h) over a
 * dedicated pipe. The parent reads records and output until the child ends,
 * the time limit passes or the cancel flag is raised (then SIGKILL), and
 * reports how it ended as an enum with a one-line message beside it: callers
 * decide on the enum, never on the message. Also the host's one
 * signal-name table (its monotonic clock is base/clock.h's). Internal to the host (POSIX only).
 */
#ifndef CALHOST_ISOLATE_H
#define CALHOST_ISOLATE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

typedef enum isolate_child_end {
  CALHOST_CHILD_OK = 0,          /* sent the done record and exited 0 */
  CALHOST_CHILD_EXITED = 1,      /* exited (any status) before the done record, or nonzero */
  CALHOST_CHILD_SIGNALED = 2,    /* killed by a signal (crash, abort) */
  CALHOST_CHILD_TIMEOUT = 3,     /* ran past the time limit; SIGKILLed */
  CALHOST_CHILD_CANCELLED = 4,   /* the cancel flag was raised; SIGKILLed */
  CALHOST_CHILD_PROTOCOL = 5,    /* corrupt or truncated record stream */
  CALHOST_CHILD_START_FAILED = 6 /* pipe or fork failed */
} isolate_child_end;

#define CALHOST_CHILD_OUTPUT_MAX 2048

typedef struct isolate_child_outcome {
  isolate_child_end end;
  int exit_code;     /* when it exited */
  int signal;        /* when a signal killed it */
  int saw_done;      /* the done record arrived */
  int truncated;     /* the stream ended inside a frame */
  double seconds;    /* wall time of the child */
  char message[256]; /* one line: "killed by signal 11 (SIGSEGV)", "timed out after 5 s (killed)" */
  char output[CALHOST_CHILD_OUTPUT_MAX]; /* first bytes of the child's stdout, NUL-terminated */
  size_t output_total;                   /* bytes it wrote to stdout in all */
  char errors[CALHOST_CHILD_OUTPUT_MAX]; /* first bytes of its stderr (capture_stderr only) */
  size_t errors_total;                   /* bytes it wrote to stderr (capture_stderr only) */
} isolate_child_outcome;

/* The child's work: write records to record_fd (isolate_proto_write);
 * the return value is the child's exit status. */
typedef int (*isolate_child_fn)(void *user, int record_fd);

/* Called in the parent for each complete record, in order. */
typedef void (*isolate_record_fn)(void *user, const isolate_proto_msg *msg);

typedef struct isolate_options {
  double timeout_seconds;             /* <= 0: no limit */
  volatile sig_atomic_t *cancel_flag; /* may be NULL */
  uint32_t done_type;                 /* the record type that marks a clean finish */
  int capture_stderr; /* 1: the child's stderr goes to a capture pipe too (errors[]) */
} isolate_options;

/* Forks; in the child: the signal set-up above, stdout (and stderr when
 * o->capture_stderr) to capture pipes, then child(child_user, fd); stdio is
 * flushed after it returns, so buffered output is captured too, then
 * _exit with its return value. In the parent: reads records and output
 * until the child ends, the limit passes (SIGKILL) or *cancel_flag is raised
 * (SIGKILL), calling on_record (may be NULL) for each record, and fills
 * *out. Returns 0 when the child ended cleanly (out->end ==
 * CALHOST_CHILD_OK), else -1. Do not reap children you did not start
 * elsewhere while this runs. */
int isolate_run(const isolate_options *o, isolate_child_fn child, void *child_user,
                isolate_record_fn on_record, void *parent_user, isolate_child_outcome *out);

/* 1 in a child isolate_run started (its stdout is a capture pipe already,
 * so the loader's stdout guard stands aside there), else 0. */
int isolate_in_child(void);

/* "SIGSEGV"-style name of a signal number (static), "signal" when unknown. */
const char *isolate_signal_name(int sig);


#endif /* CALHOST_ISOLATE_H */
