/*
 * cu_nvrtc.c: NVRTC through dlopen, the kernels' include folder and one
 * compile with ptxas's report (see cu_nvrtc.h).
 */
#define _GNU_SOURCE /* dladdr */
#include "cu_nvrtc.h"

#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NV_FUNCS(X)                                                                                \
  X(nvrtcVersion)                                                                                  \
  X(nvrtcCreateProgram)                                                                            \
  X(nvrtcCompileProgram)                                                                           \
  X(nvrtcDestroyProgram)                                                                           \
  X(nvrtcGetProgramLogSize)                                                                        \
  X(nvrtcGetProgramLog)                                                                            \
  X(nvrtcGetCUBINSize)                                                                             \
  X(nvrtcGetCUBIN)                                                                                 \
  X(nvrtcGetErrorString)

struct cu_nvrtc {
  void *lib;
#define NV_MEMBER(f) __typeof__(f) *f;
  NV_FUNCS(NV_MEMBER)
#undef NV_MEMBER
  int version;
  unsigned headers;                  /* CU_HDR_ mask */
  char path[CU_PATH_MAX];            /* the library's real path */
  char include[CU_PATH_MAX];         /* the include folder, "" when none */
  char include_opt[CU_PATH_MAX + 4]; /* "-I<include>" or "" */
};

static cu_nvrtc g_nv;
static int g_state; /* 0 not tried, 1 loaded, -1 absent */
static char g_why[256];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int file_exists(const char *dir, const char *name) {
  char path[2 * CU_PATH_MAX + 8];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, R_OK) == 0;
}

static int dir_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static size_t add_root(char roots[][CU_PATH_MAX], size_t n, size_t max, const char *path) {
  if (!path || !*path || n >= max || strlen(path) >= CU_PATH_MAX || !dir_exists(path))
    return n;
  for (size_t i = 0; i < n; i++)
    if (strcmp(roots[i], path) == 0)
      return n;
  snprintf(roots[n], CU_PATH_MAX, "%s", path);
  return n + 1;
}

/* The matches of pattern, newest name first (reverse sort), as roots. */
static size_t add_glob(char roots[][CU_PATH_MAX], size_t n, size_t max, const char *pattern) {
  glob_t g;
  if (glob(pattern, 0, NULL, &g) != 0)
    return n;
  for (size_t i = g.gl_pathc; i-- > 0;)
    n = add_root(roots, n, max, g.gl_pathv[i]);
  globfree(&g);
  return n;
}

/* The pip layouts under one site folder. */
static size_t add_site(char roots[][CU_PATH_MAX], size_t n, size_t max, const char *site) {
  static const char *const subs[] = {"nvidia/cu13", "nvidia/cuda_nvrtc", "nvidia/cublas",
                                     "nvidia/cuda_runtime"};
  char path[CU_PATH_MAX];
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
    if (snprintf(path, sizeof path, "%s/%s", site, subs[i]) < (int)sizeof path)
      n = add_root(roots, n, max, path);
  }
  return n;
}

static size_t add_site_glob(char roots[][CU_PATH_MAX], size_t n, size_t max, const char *pattern) {
  glob_t g;
  if (glob(pattern, 0, NULL, &g) != 0)
    return n;
  for (size_t i = g.gl_pathc; i-- > 0;)
    n = add_site(roots, n, max, g.gl_pathv[i]);
  globfree(&g);
  return n;
}

size_t cu_cuda_roots(char roots[][CU_PATH_MAX], size_t max) {
  char pattern[CU_PATH_MAX + 64];
  size_t n = 0;
  const char *env;
  n = add_root(roots, n, max, getenv("CUDA_HOME"));
  n = add_root(roots, n, max, getenv("CUDA_PATH"));
  n = add_root(roots, n, max, "/usr/local/cuda");
  n = add_glob(roots, n, max, "/usr/local/cuda-*");
  if ((env = getenv("PYTHONPATH")) && *env) {
    char copy[4 * CU_PATH_MAX], *save = NULL;
    snprintf(copy, sizeof copy, "%s", env);
    for (char *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
      n = add_site(roots, n, max, tok);
  }
  if ((env = getenv("VIRTUAL_ENV")) && *env && strlen(env) < CU_PATH_MAX) {
    snprintf(pattern, sizeof pattern, "%s/lib/python3*/site-packages", env);
    n = add_site_glob(roots, n, max, pattern);
  }
  if ((env = getenv("HOME")) && *env && strlen(env) < CU_PATH_MAX) {
    snprintf(pattern, sizeof pattern, "%s/.local/lib/python3*/site-packages", env);
    n = add_site_glob(roots, n, max, pattern);
  }
  n = add_site_glob(roots, n, max, "/usr/local/lib/python3*/dist-packages");
  n = add_site_glob(roots, n, max, "/usr/local/lib/python3*/site-packages");
  n = add_site(roots, n, max, "/usr/lib/python3/dist-packages");
  return n;
}

static const char *const g_libdirs[] = {"lib64", "lib", "targets/x86_64-linux/lib"};

int cu_find_library(const char *const *names, char *out, size_t cap) {
  static char roots[CU_ROOTS_MAX][CU_PATH_MAX];
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  char dir[CU_PATH_MAX + 32];
  int found = -1;
  pthread_mutex_lock(&lock);
  size_t n = cu_cuda_roots(roots, CU_ROOTS_MAX);
  for (size_t r = 0; r < n && found != 0; r++)
    for (size_t d = 0; d < sizeof g_libdirs / sizeof g_libdirs[0] && found != 0; d++) {
      snprintf(dir, sizeof dir, "%s/%s", roots[r], g_libdirs[d]);
      for (size_t i = 0; names[i] && found != 0; i++)
        if (file_exists(dir, names[i]) && snprintf(out, cap, "%s/%s", dir, names[i]) < (int)cap)
          found = 0;
    }
  pthread_mutex_unlock(&lock);
  return found;
}

static unsigned headers_in(const char *dir) {
  unsigned m = 0;
  if (file_exists(dir, "cuda_fp16.h") && file_exists(dir, "cuda_fp16.hpp"))
    m |= CU_HDR_FP16;
  if (file_exists(dir, "cuda_bf16.h") && file_exists(dir, "cuda_bf16.hpp"))
    m |= CU_HDR_BF16;
  if (file_exists(dir, "mma.h") && file_exists(dir, "crt/mma.h"))
    m |= CU_HDR_MMA;
  return m;
}

static unsigned popcount3(unsigned m) {
  return (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1);
}

/* Keeps dir as the best so far when it has more of the headers. */
static void consider(const char *dir, char *best, size_t cap, unsigned *best_mask) {
  char real[PATH_MAX];
  unsigned m;
  if (!dir_exists(dir))
    return;
  m = headers_in(dir);
  if (popcount3(m) > popcount3(*best_mask)) {
    *best_mask = m;
    snprintf(best, cap, "%s", realpath(dir, real) ? real : dir);
  }
}

unsigned cu_find_headers(const char *libdir, char *out, size_t cap) {
  char roots[CU_ROOTS_MAX][CU_PATH_MAX], dir[CU_PATH_MAX + 64];
  unsigned mask = 0;
  out[0] = '\0';
  if (libdir && *libdir) {
    snprintf(dir, sizeof dir, "%s/../include", libdir);
    consider(dir, out, cap, &mask);
    snprintf(dir, sizeof dir, "%s/../../include", libdir);
    if (mask != CU_HDR_ALL)
      consider(dir, out, cap, &mask);
  }
  size_t n = mask == CU_HDR_ALL ? 0 : cu_cuda_roots(roots, CU_ROOTS_MAX);
  for (size_t r = 0; r < n && mask != CU_HDR_ALL; r++) {
    snprintf(dir, sizeof dir, "%s/include", roots[r]);
    consider(dir, out, cap, &mask);
    snprintf(dir, sizeof dir, "%s/targets/x86_64-linux/include", roots[r]);
    if (mask != CU_HDR_ALL)
      consider(dir, out, cap, &mask);
  }
  if (mask != CU_HDR_ALL)
    consider("/usr/include", out, cap, &mask);
  return mask;
}

const char *cu_headers_missing(unsigned have, int dtype, int mma) {
  if (dtype == 1 && !(have & CU_HDR_FP16))
    return "float16 needs cuda_fp16.h and cuda_fp16.hpp, which no include folder searched has "
           "(install the toolkit's headers or pip's nvidia-cuda-runtime; set CUDA_HOME)";
  if (dtype == 2 && !(have & CU_HDR_BF16))
    return "bfloat16 needs cuda_bf16.h and cuda_bf16.hpp, which no include folder searched has "
           "(install the toolkit's headers or pip's nvidia-cuda-runtime; set CUDA_HOME)";
  if (dtype != 0 && mma && !(have & CU_HDR_MMA))
    return "the 16-bit kernels need mma.h and crt/mma.h (WMMA), which no include folder searched "
           "has (install the toolkit's headers; set CUDA_HOME)";
  return NULL;
}

/* The folder holding the headers: next to the library (../include of its
 * lib64, ../../include of targets/<arch>/lib), then the roots. */
static void find_include(cu_nvrtc *nv) {
  char dir[CU_PATH_MAX] = "", inc[CU_PATH_MAX];
  Dl_info info;
  if (dladdr((void *)nv->nvrtcVersion, &info) && info.dli_fname) {
    char real[PATH_MAX];
    if (realpath(info.dli_fname, real)) {
      snprintf(nv->path, sizeof nv->path, "%.1000s", real);
      char *slash = strrchr(real, '/');
      if (slash) {
        *slash = '\0';
        snprintf(dir, sizeof dir, "%.1000s", real);
      }
    }
  }
  nv->headers = cu_find_headers(dir, inc, sizeof inc);
  snprintf(nv->include, sizeof nv->include, "%s", inc);
  if (inc[0])
    snprintf(nv->include_opt, sizeof nv->include_opt, "-I%s", inc);
  else
    nv->include_opt[0] = '\0';
}

static int try_open(cu_nvrtc *nv, const char *name) {
  nv->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  return nv->lib != NULL;
}

static const char *const g_nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                            NULL};

const cu_nvrtc *cu_nvrtc_load(char *why, size_t cap) {
  int state;
  pthread_mutex_lock(&g_lock);
  if (g_state == 0) {
    int ok = 0, decided = -1;
    for (int i = 0; g_nvrtc_names[i] && !ok; i++)
      ok = try_open(&g_nv, g_nvrtc_names[i]);
    if (!ok) {
      char path[CU_PATH_MAX];
      if (cu_find_library(g_nvrtc_names, path, sizeof path) == 0)
        ok = try_open(&g_nv, path);
    }
    if (!ok) {
      snprintf(g_why, sizeof g_why,
               "NVRTC not found (libnvrtc.so.13 in the loader's path, CUDA_HOME, CUDA_PATH, "
               "/usr/local/cuda*, or pip's nvidia/cu13)");
    } else {
      int missing = 0;
#define NV_LOAD(f)                                                                                 \
  if (!(*(void **)&g_nv.f = dlsym(g_nv.lib, #f)))                                                  \
    missing = 1;
      NV_FUNCS(NV_LOAD)
#undef NV_LOAD
      if (missing) {
        snprintf(g_why, sizeof g_why, "NVRTC library lacks a function this backend calls");
        dlclose(g_nv.lib);
      } else {
        int major = 0, minor = 0;
        g_nv.nvrtcVersion(&major, &minor);
        g_nv.version = major * 1000 + minor * 10;
        find_include(&g_nv);
        decided = 1;
      }
    }
    g_state = decided; /* only now: a concurrent caller waits on the lock */
  }
  state = g_state;
  pthread_mutex_unlock(&g_lock);
  if (state != 1) {
    if (why && cap)
      snprintf(why, cap, "%s", g_why);
    return NULL;
  }
  return &g_nv;
}

unsigned cu_nvrtc_headers(const cu_nvrtc *nv) {
  return nv ? nv->headers : 0;
}

const char *cu_nvrtc_include(const cu_nvrtc *nv) {
  return nv ? nv->include : "";
}

void cu_nvrtc_describe(char *buf, size_t cap) {
  char why[256];
  const cu_nvrtc *nv = cu_nvrtc_load(why, sizeof why);
  if (!nv) {
    snprintf(buf, cap, "%s", why);
    return;
  }
  unsigned h = nv->headers;
  snprintf(buf, cap, "nvrtc %d.%d (%s); headers %s:%s%s%s%s", nv->version / 1000,
           (nv->version % 1000) / 10, nv->path[0] ? nv->path : "?",
           nv->include[0] ? nv->include : "none found", h & CU_HDR_FP16 ? " fp16" : " no fp16",
           h & CU_HDR_BF16 ? " bf16" : " no bf16", h & CU_HDR_MMA ? " mma" : " no mma",
           h == CU_HDR_ALL ? "" : " (16-bit types declined)");
}

int cu_nvrtc_version(const cu_nvrtc *nv) {
  return nv ? nv->version : 0;
}

/* The first line of text that contains "error" (or the first line), with
 * control bytes blanked, into out. */
static void first_error(const char *log, char *out, size_t cap) {
  const char *line = strstr(log, "error");
  size_t n = 0;
  if (line)
    while (line > log && line[-1] != '\n')
      line--;
  else
    line = log;
  for (; *line && *line != '\n' && n + 1 < cap; line++)
    out[n++] = (unsigned char)*line < 0x20 ? ' ' : *line;
  out[n] = '\0';
}

/* ptxas -v: "Compiling entry function 'NAME'", then "N bytes spill stores,
 * M bytes spill loads" and "Used R registers". */
static void ptxas_report(const char *log, const char *kernel, cu_nvrtc_result *out) {
  char needle[160];
  const char *p;
  out->registers = -1;
  out->spill_bytes = -1;
  if (!kernel)
    return;
  snprintf(needle, sizeof needle, "entry function '%s'", kernel);
  p = strstr(log, needle);
  if (!p)
    return;
  const char *next = strstr(p + 1, "Compiling entry function");
  const char *spill = strstr(p, "bytes spill stores");
  const char *used = strstr(p, "Used ");
  if (spill && (!next || spill < next)) {
    const char *s = spill;
    unsigned st = 0, ld = 0;
    while (s > p && s[-1] != ',' && s[-1] != '\n')
      s--;
    if (sscanf(s, " %u bytes spill stores, %u bytes spill loads", &st, &ld) == 2)
      out->spill_bytes = (int)(st + ld);
  }
  if (used && (!next || used < next))
    sscanf(used, "Used %d registers", &out->registers);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int cu_nvrtc_compile(const cu_nvrtc *nv, const char *source, const char *defines, const char *arch,
                     const char *report_kernel, cu_nvrtc_result *out) {
  nvrtcProgram prog = NULL;
  const char *opts[48];
  char archopt[32], defs[1024], *save = NULL;
  int nopt = 0, rc = -1;
  size_t logsize = 0;
  char *log = NULL;
  double t0 = now_seconds();
  memset(out, 0, sizeof *out);
  out->registers = out->spill_bytes = -1;
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
  opts[nopt++] = archopt;
  opts[nopt++] = "-std=c++17";
  opts[nopt++] = "--ptxas-options=-v";
  opts[nopt++] = "-default-device";
  if (nv->include_opt[0])
    opts[nopt++] = nv->include_opt;
  snprintf(defs, sizeof defs, "%s", defines ? defines : "");
  for (char *tok = strtok_r(defs, " ", &save); tok && nopt < 47; tok = strtok_r(NULL, " ", &save))
    opts[nopt++] = tok;
  if (nv->nvrtcCreateProgram(&prog, source, "cuda_gemm.cu", 0, NULL, NULL) != NVRTC_SUCCESS) {
    snprintf(out->log, sizeof out->log, "nvrtcCreateProgram failed");
    return -1;
  }
  nvrtcResult r = nv->nvrtcCompileProgram(prog, nopt, opts);
  if (nv->nvrtcGetProgramLogSize(prog, &logsize) == NVRTC_SUCCESS && logsize > 0) {
    log = malloc(logsize + 1);
    if (log && nv->nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
      log[logsize] = '\0';
    else if (log)
      log[0] = '\0';
  }
  if (r != NVRTC_SUCCESS) {
    char first[400] = "";
    if (log)
      first_error(log, first, sizeof first);
    snprintf(out->log, sizeof out->log, "%s: %s", nv->nvrtcGetErrorString(r), first);
    goto done;
  }
  if (nv->nvrtcGetCUBINSize(prog, &out->cubin_size) != NVRTC_SUCCESS || !out->cubin_size ||
      !(out->cubin = malloc(out->cubin_size)) ||
      nv->nvrtcGetCUBIN(prog, out->cubin) != NVRTC_SUCCESS) {
    free(out->cubin);
    out->cubin = NULL;
    snprintf(out->log, sizeof out->log, "no CUBIN for %s", arch);
    goto done;
  }
  if (log)
    ptxas_report(log, report_kernel, out);
  rc = 0;
done:
  out->seconds = now_seconds() - t0;
  free(log);
  nv->nvrtcDestroyProgram(&prog);
  return rc;
}
