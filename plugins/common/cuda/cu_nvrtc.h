/*
 * cu_nvrtc.h: NVRTC, loaded with dlopen at run time (never linked): the
 * library (libnvrtc.so.13, .12, libnvrtc.so through the loader, then the
 * CUDA roots below: the toolkit, CUDA_HOME/CUDA_PATH, pip's layouts), the
 * include folder holding the headers the kernels need (cuda_fp16.h,
 * cuda_bf16.h, mma.h and crt/mma.h: NVRTC 13 carries none of them), and one
 * compile of a source to a CUBIN for an architecture with ptxas's register
 * and spill report. Also the search itself (cu_find_library,
 * cu_find_headers), for cublaslt's library too. Shared by cuda_gemm,
 * cublaslt and tests/cuda. Internal (hidden).
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

/* ---- where CUDA's files are ------------------------------------------
 * The roots searched after the dynamic loader's own search (the system's
 * libraries, LD_LIBRARY_PATH and the ldconfig cache, tried first by
 * dlopen of the plain soname), in order: $CUDA_HOME, $CUDA_PATH,
 * /usr/local/cuda, /usr/local/cuda-* (newest name first), then pip's
 * layouts under every site folder ($PYTHONPATH's entries,
 * $VIRTUAL_ENV/lib/python3.* /site-packages, ~/.local/lib/python3.*
 * /site-packages, /usr/local/lib/python3.* /{dist,site}-packages,
 * /usr/lib/python3/dist-packages): SITE/nvidia/cu13 (CUDA 13's wheels),
 * SITE/nvidia/cuda_nvrtc, SITE/nvidia/cublas, SITE/nvidia/cuda_runtime
 * (CUDA 12's per-component wheels). In each root, libraries in lib64/,
 * lib/ and targets/x86_64-linux/lib/, headers in include/ and
 * targets/x86_64-linux/include/. */
#define CU_PATH_MAX 1024
#define CU_ROOTS_MAX 48

/* The roots above that exist, into roots (max entries); their count. */
CUNV_HIDDEN size_t cu_cuda_roots(char roots[][CU_PATH_MAX], size_t max);

/* The first file named one of names (NULL-terminated: "libnvrtc.so.13",
 * ...) in a library folder of a root: 0 with its path in out, or -1. */
CUNV_HIDDEN int cu_find_library(const char *const *names, char *out, size_t cap);

/* What the kernels include, as a mask. */
enum {
  CU_HDR_FP16 = 1, /* cuda_fp16.h (and .hpp) */
  CU_HDR_BF16 = 2, /* cuda_bf16.h (and .hpp) */
  CU_HDR_MMA = 4,  /* mma.h and crt/mma.h (WMMA) */
  CU_HDR_ALL = 7
};

/* The include folder for NVRTC: the first with every header of
 * CU_HDR_ALL among ../include and ../../include of libdir (the NVRTC
 * library's folder; may be NULL), then the roots' include folders, then
 * /usr/include; else the one with the most of them. Its mask, with the
 * folder in dir ("" and 0 when none has any). */
CUNV_HIDDEN unsigned cu_find_headers(const char *libdir, char *dir, size_t cap);

/* "float16 needs cuda_fp16.h"-style reason why dtype (0 float32, 1
 * float16, 2 bfloat16) cannot compile with the headers of mask `have`,
 * `mma` set when the kernel needs WMMA; NULL when it can. */
CUNV_HIDDEN const char *cu_headers_missing(unsigned have, int dtype, int mma);

/* Loads NVRTC (once per process, thread-safe). NULL with the
 * reason in why (cap bytes) when no library is found. */
CUNV_HIDDEN const cu_nvrtc *cu_nvrtc_load(char *why, size_t cap);

/* NVRTC's version as major*1000 + minor*10 (12080), 0 if unknown. */
CUNV_HIDDEN int cu_nvrtc_version(const cu_nvrtc *nv);

/* The headers NVRTC's compiles can include (CU_HDR_ mask) and the folder
 * they are in ("" when none). */
CUNV_HIDDEN unsigned cu_nvrtc_headers(const cu_nvrtc *nv);
CUNV_HIDDEN const char *cu_nvrtc_include(const cu_nvrtc *nv);

/* One line for `devices` and `plugin check`: "nvrtc 13.0 (PATH); headers
 * DIR: fp16 bf16 mma" or what is missing, or why NVRTC is absent. */
CUNV_HIDDEN void cu_nvrtc_describe(char *buf, size_t cap);

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
