/*
 * retrieve.h: reading CLBlast's current tuning parameters of a kernel for
 * the C plugin (retrieve.cpp). Internal (hidden).
 */
#ifndef CALHOST_CLBLAST_RETRIEVE_H
#define CALHOST_CLBLAST_RETRIEVE_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLB_PARAMS_MAX 32

typedef struct clb_params {
  size_t count;
  char names[CLB_PARAMS_MAX][32];
  size_t values[CLB_PARAMS_MAX];
} clb_params;

/* Fills *out with the single-precision parameters CLBlast would use now for
 * `kernel` ("Xgemm", "GemmRoutine", ...) on device (its database, or an
 * override made earlier in this process). Returns 0, or -1 when CLBlast
 * fails or has more than CLB_PARAMS_MAX parameters. */
__attribute__((visibility("hidden"))) int clb_retrieve(cl_device_id device, const char *kernel,
                                                       clb_params *out);

#ifdef __cplusplus
}
#endif
#endif /* CALHOST_CLBLAST_RETRIEVE_H */
