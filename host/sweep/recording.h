/*
 * recording.h: `calibrate --record FILE`: writes every candidate a sweep's
 * search evaluates (policy, parameter values, the median and spread the
 * search was given, compile time, the whole evaluation's time, rejections
 * with their reasons) to a space file in the host/search format
 * (host/search/README.md, "Space files"), line by line as the sweep goes,
 * through the measurement engine's search_start and evaluated hooks (the
 * search part's observe hook). The file is written as PATH.part (created
 * exclusively, never through a planted link: base_output_create) and renamed
 * to PATH when the sweep ends (base_output_replace: a directory, FIFO or
 * device at PATH is refused, the candidates then kept in PATH.part), so a
 * sweep that dies leaves PATH.part. An
 * exhaustive sweep records the complete space; `search-bench --spaces DIR`
 * and search_space_replay_init replay it.
 * Internal to the host.
 */
#ifndef CALHOST_SWEEP_RECORDING_H
#define CALHOST_SWEEP_RECORDING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "measure.h"
#include "search/spacefile.h"

/* One sweep's recording. */
typedef struct sweep_recording {
  char path[4096];         /* the final file */
  char part[4096 + 8];     /* PATH.part while the sweep runs */
  char name[256];          /* the space's name (one word) */
  const char *const *meta; /* "KEY VALUE" lines to add (borrowed until start) */
  size_t meta_count;
  FILE *f;
  search_space_file space; /* header and the entries so far */
  int started;
  int failed;       /* nonzero after an error: nothing more is written */
  char error[4700]; /* "PATH: reason" when failed */
  uint32_t entries; /* config lines written */
} sweep_recording;

/* Starts a run of recordings (calibrate's parent, before its first sweep;
 * the sweeps' children inherit it): each recording's header says `meta run
 * ID` (pid and clock of this call), and sweep_recording_finish never
 * replaces a file of the same run holding another space. Without a call,
 * the first recording of the process starts one. */
void sweep_recording_new_run(void);

/* The file of one sweep of a run: path itself when the run has a single
 * sweep (single nonzero), else path without a trailing ".space", then
 * "-BACKEND-WORKLOAD-tTHREADS.space", or "-BACKEND-WORKLOAD-dDEVICE-tTHREADS
 * .space" for a sweep on device DEVICE (device >= 0; -1: a CPU target), so
 * that the sweeps of several devices never share a file. BACKEND and
 * WORKLOAD are the names themselves when both are names ([A-Za-z0-9_.-]) of
 * at most 95 bytes and the backend has no '-'; otherwise WORKLOAD is its
 * first 78 bytes (blanks, '/', '\' and '~' as '_'), '~' and 16 hex digits
 * of the FNV-1a hash of the whole backend and workload, so that two sweeps
 * of a run never share a name (a readable name has no '~'). Writes it into
 * buf (cap bytes) and the space's name (the same without path and
 * ".space") into name (name_cap; may be NULL). Returns 0, or -1 when it
 * does not fit. */
int sweep_recording_path(const char *path, int single, const char *backend, const char *workload,
                         long device, uint32_t threads, char *buf, size_t cap, char *name,
                         size_t name_cap);

/* Prepares *r for a sweep whose file is `path` and space `name`, with
 * metadata lines "KEY VALUE" (borrowed until sweep_recording_start).
 * Opens nothing yet. */
void sweep_recording_init(sweep_recording *r, const char *path, const char *name,
                          const char *const *meta, size_t meta_count);

/* The search_start hook's work: writes the header (the space's parameters,
 * the metadata, the strategy and budget) to PATH.part. On failure sets
 * r->failed and r->error. */
void sweep_recording_start(sweep_recording *r, const sweep_search_info *info);

/* The evaluated hook's work: appends one config line and flushes it. */
void sweep_recording_add(sweep_recording *r, const sweep_evaluation *ev);

/* Ends the recording: closes PATH.part and renames it to PATH (when the
 * search started), unless PATH holds another sweep's recording of this run
 * (its `meta run` this run's, its space another name): that is never
 * replaced. Returns 0, or -1 with r->error (a refused or failed rename says
 * the recording is kept in PATH.part). Frees what r holds. */
int sweep_recording_finish(sweep_recording *r);

#endif /* CALHOST_SWEEP_RECORDING_H */
