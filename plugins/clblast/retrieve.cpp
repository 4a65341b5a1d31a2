/*
 * retrieve.cpp: the one piece of the clblast backend in C++: CLBlast's C
 * API can override a kernel's tuning parameters but not read them, so this
 * shim reads the current (database) parameters with the C++ API's
 * clblast::RetrieveParameters for the C plugin (see retrieve.h).
 */
#include "retrieve.h"

#include <clblast.h>
#include <cstdio>
#include <string>
#include <unordered_map>

extern "C" int clb_retrieve(cl_device_id device, const char *kernel, clb_params *out) {
  std::unordered_map<std::string, size_t> map;
  out->count = 0;
  try {
    if (clblast::RetrieveParameters(device, kernel, clblast::Precision::kSingle, map) !=
        clblast::StatusCode::kSuccess)
      return -1;
    for (const auto &kv : map) {
      if (out->count >= CLB_PARAMS_MAX || kv.first.size() >= sizeof out->names[0])
        return -1;
      std::snprintf(out->names[out->count], sizeof out->names[0], "%s", kv.first.c_str());
      out->values[out->count] = kv.second;
      out->count++;
    }
  } catch (...) {
    return -1;
  }
  return 0;
}
