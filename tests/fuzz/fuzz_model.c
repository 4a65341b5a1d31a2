/*
 * fuzz_model.c: libFuzzer target for the ONNX model reader (host/model:
 * protobuf-c's generated ModelProto decoder and the shape walk over it).
 * Every input is read with model_read_bytes, with batch=4 bound (so the
 * symbolic paths run too).
 *
 * Properties beyond "no crash, no leak, no undefined behaviour": a refused
 * input yields a non-empty error naming the input and a zeroed result; an
 * accepted one lists nodes with 1 to 8 positive dimensions, a structure
 * string, and a count and first node consistent with it; every skipped node
 * has a reason. Seeds: the committed corpus plus run.sh's copies of
 * libonnx-testdata's MatMul and Gemm models (corpus/model/ holds files that
 * tests/model/make_models.py writes: broken and symbolic models).
 */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1024 * 1024)
    return 0;
  static char bound_name[] = "batch";
  const model_dim dims[] = {{bound_name, 4}};
  model_info m;
  char err[1024] = "";
  if (model_read_bytes(data, size, "fuzz.onnx", dims, 1, &m, err, sizeof err) != 0) {
    if (strncmp(err, "fuzz.onnx: ", 11) || m.nodes || m.node_count || m.path)
      abort();
    return 0;
  }
  if (strncmp(m.digest, "sha256:", 7) || strlen(m.digest) != 71)
    abort();
  for (size_t i = 0; i < m.node_count; i++) {
    const model_node *n = &m.nodes[i];
    if (!n->shape_rank || n->shape_rank > MODEL_MAX_RANK || !n->structure || !n->name ||
        n->first > i || n->count < 1 || m.nodes[n->first].count != n->count ||
        strcmp(m.nodes[n->first].structure, n->structure))
      abort();
    for (size_t k = 0; k < n->shape_rank; k++)
      if (n->shape[k] <= 0)
        abort();
  }
  for (size_t i = 0; i < m.skipped_count; i++)
    if (!m.skipped[i].reason[0])
      abort();
  model_info_free(&m);
  return 0;
}
