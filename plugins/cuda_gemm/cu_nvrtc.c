/*
 * cu_nvrtc.c: NVRTC through dlopen, the kernels' include folder and one
 * compile with ptxas's report (see cu_nvrtc.h).
 */
#define _GNU_SOURCE /* dladdr */
#include "cu_nvrtc.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  char include_opt[4200]; /* "-I<folder with mma.h>" or "" */
};

static cu_nvrtc g_nv;
static int g_state; /* 0 not tried, 1 loaded, -1 absent */
static char g_why[256];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int file_exists(const char *dir, const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, R_OK) == 0;
}

/* The folder holding mma.h: next to the library (../include of its
 * lib64 or targets/<arch>/lib), $CUDA_HOME, $CUDA_PATH, /usr/local/cuda,
 * /usr/include (Debian's nvidia-cuda-toolkit). */
static void find_include(cu_nvrtc *nv) {
  char dir[4096] = "";
  Dl_info info;
  if (dladdr((void *)nv->nvrtcVersion, &info) && info.dli_fname) {
    char real[4096];
    if (realpath(info.dli_fname, real)) {
      char *slash = strrchr(real, '/');
      if (slash) {
        *slash = '\0';
        snprintf(dir, sizeof dir, "%.4000s/../include", real);
        if (file_exists(dir, "mma.h"))
          goto found;
      }
    }
  }
  {
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda", NULL};
    for (int i = 0; i < 3; i++) {
      if (!homes[i] || !*homes[i])
        continue;
      snprintf(dir, sizeof dir, "%.4000s/include", homes[i]);
      if (file_exists(dir, "mma.h"))
        goto found;
    }
  }
  snprintf(dir, sizeof dir, "/usr/include");
  if (file_exists(dir, "mma.h"))
    goto found;
  nv->include_opt[0] = '\0';
  return;
found:
  snprintf(nv->include_opt, sizeof nv->include_opt, "-I%s", dir);
}

static int try_open(cu_nvrtc *nv, const char *name) {
  nv->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  return nv->lib != NULL;
}

const cu_nvrtc *cu_nvrtc_load(char *why, size_t cap) {
  pthread_mutex_lock(&g_lock);
  if (g_state == 0) {
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
    int ok = 0;
    g_state = -1;
    for (int i = 0; names[i] && !ok; i++)
      ok = try_open(&g_nv, names[i]);
    if (!ok) {
      const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
      for (int i = 0; i < 3 && !ok; i++) {
        char path[4200];
        if (!homes[i] || !*homes[i])
          continue;
        snprintf(path, sizeof path, "%.4000s/lib64/libnvrtc.so", homes[i]);
        ok = try_open(&g_nv, path);
      }
    }
    if (!ok) {
      snprintf(g_why, sizeof g_why, "NVRTC not found (libnvrtc.so.13; set CUDA_HOME)");
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
        g_state = 1;
      }
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (g_state != 1) {
    if (why && cap)
      snprintf(why, cap, "%s", g_why);
    return NULL;
  }
  return &g_nv;
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
