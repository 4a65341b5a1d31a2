/*
 * cu_nvrtc.h: NVRTC, loaded with dlopen at run time (never linked): the
 * library (libnvrtc.so.13, .12, libnvrtc.so, then the toolkit's lib64 under
 * $CUDA_HOME, $CUDA_PATH and /usr/local/cuda), the include folder holding
 * mma.h for the kernels, and one compile of a source to a CUBIN for an
 * architecture with ptxas's register and spill report. Shared by
 * cuda_gemm, cublaslt and tests/cuda. Internal (hidden).
 */
#ifndef CALHOST_CU_NVRTC_H
#define CALHOST_CU_NVRTC_H

#include <stddef.h>

#if defined(__GNUC__)
#define CUNV_HIDDEN __attribute__((visibility("hidden")))
#else
#define CUNV_HIDDEN
#endif

typedef struct cu_nvrtc cu_nvrtc;

/* Loads NVRTC (once per process, thread-safe). NULL with the
 * reason in why (cap bytes) when no library is found. */
CUNV_HIDDEN const cu_nvrtc *cu_nvrtc_load(char *why, size_t cap);

/* NVRTC's version as major*1000 + minor*10 (12080), 0 if unknown. */
CUNV_HIDDEN int cu_nvrtc_version(const cu_nvrtc *nv);

/* The result of one compile: the CUBIN (malloc'ed, the caller frees it),
 * ptxas's figures for the named kernel (-1 when not reported), and the
 * log's first line on failure. */
typedef struct cu_nvrtc_result {
  void *cubin;
  size_t cubin_size;
  int registers;   /* of kernel `report_kernel` */
  int spill_bytes; /* spill stores + loads of it */
  double seconds;  /* wall time of the compile */
  char log[512];   /* one line (failures: the first error) */
} cu_nvrtc_result;

/* Compiles `source` with the given -D options (one string, blank
 * separated) for arch ("sm_80") into *out. 0 on success, -1 with the
 * reason in out->log. report_kernel may be NULL. */
CUNV_HIDDEN int cu_nvrtc_compile(const cu_nvrtc *nv, const char *source, const char *defines,
                                 const char *arch, const char *report_kernel, cu_nvrtc_result *out);

#endif /* CALHOST_CU_NVRTC_H */
