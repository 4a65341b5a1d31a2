/*
 * model.h: ONNX model files as calhost's input (the model part, internal to
 * the host).
 *
 * Owns reading a ModelProto (protobuf-c, over code generated at build time
 * from Debian's onnx.proto) and listing the nodes a plugin could serve:
 * MatMul, Gemm (mapped onto MatMul: its transA/transB/alpha/beta become
 * structure) and ReduceSum, each with the static shapes and element type of
 * its inputs (from the graph's inputs, initializers, value_info and
 * outputs). A symbolic dimension is bound by name (model_dims_parse); a
 * node whose shapes stay unknown is listed as skipped, with the reason,
 * never guessed. The model's digest is the SHA-256 of the file as given
 * (config_digest_bytes: the same hex as sha256sum).
 *
 * Files: model.c (reading, the shape table, the nodes), dims.c (the
 * `batch=8, seq=128` bindings).
 */
#ifndef CALHOST_MODEL_H
#define CALHOST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h" /* calhost_property */
#include "config/digest.h"  /* CALHOST_DIGEST_CAPACITY */

/* The most dimensions a workload shape has (config's shape limit). */
#define MODEL_MAX_RANK 8
/* A tensor of more dimensions than this is refused as broken input. */
#define MODEL_ABSURD_RANK 64

/* One binding of a symbolic dimension: `batch=8`. */
typedef struct model_dim {
  char *name;
  int64_t value; /* >= 1 */
} model_dim;

/* A node calhost would calibrate. Strings are owned by the model_info. */
typedef struct model_node {
  char *name; /* the node's name, or "OP#INDEX" (its index in the graph) when it has none */
  char *onnx_operator; /* MatMul, Gemm, ReduceSum */
  char *operator_name; /* the operator a plugin serves: MatMul (also for Gemm), ReduceSum */
  char *dtype;         /* float32, float16, float64, bfloat16, int8, ... */
  int64_t
      shape[MODEL_MAX_RANK]; /* the workload shape: M,N,K for MatMul; the input's for ReduceSum */
  size_t shape_rank;
  calhost_property *properties; /* structure beyond dtype and shape, sorted by name: Gemm's
                                   alpha, beta, trans_a, trans_b when not MatMul's; MatMul's
                                   batch; ReduceSum's axes, keepdims */
  size_t property_count;
  char *inputs;    /* the input shapes as read, for people: "A[8,128,512] B[512,512]" */
  char *structure; /* operator, dtype, shape and properties in one canonical string */
  size_t first;    /* index (in nodes) of the first node of the same structure */
  size_t count;    /* nodes of this structure (on each of them) */
} model_node;

/* A node of a served operator that is not listed, and why. */
typedef struct model_skip {
  char *name;
  char *onnx_operator;
  char *reason; /* "input X: dimension 'batch' is symbolic (bind it: --dims batch=N)" */
} model_skip;

typedef struct model_info {
  char *path;                           /* the file as given */
  char digest[CALHOST_DIGEST_CAPACITY]; /* "sha256:HEX" of the file's bytes */
  uint64_t file_size;
  int64_t ir_version;
  int64_t opset;           /* the default domain's opset version (0: none imported) */
  char *producer;          /* producer_name and version, may be "" */
  size_t graph_node_count; /* every node of the main graph */
  model_node *nodes;
  size_t node_count;
  size_t structure_count; /* distinct structures among nodes */
  model_skip *skipped;
  size_t skipped_count;
} model_info;

/* Reads the ONNX model at path. dims binds symbolic dimensions (dim_count
 * entries, may be NULL/0). The file must be a regular file (a FIFO or
 * device is refused without blocking); it is mapped, hashed and decoded
 * once: the private memory at the peak is the decoded message (about the
 * file's size, weights included, as protobuf-c copies bytes fields) beside
 * the file-backed mapping, which is released before returning; the result
 * keeps only names and shapes.
 * Returns 0 with *out filled (free with model_info_free), or -1 with *out
 * zeroed and "PATH: reason" (naming the node where one is at fault: "PATH:
 * node NAME (MatMul): ...") in err. Broken input is an error: not a
 * regular file, empty, a protobuf that does not parse as a ModelProto
 * (not ONNX, truncated), no graph, a served node with missing inputs or
 * shapes that do not agree, a dimension of 0 or below, a rank over
 * MODEL_ABSURD_RANK. */
int model_read(const char *path, const model_dim *dims, size_t dim_count, model_info *out,
               char *err, size_t cap);

/* model_read over bytes in memory (the fuzz target, tests); name stands for
 * the file in messages and in out->path. */
int model_read_bytes(const void *data, size_t size, const char *name, const model_dim *dims,
                     size_t dim_count, model_info *out, char *err, size_t cap);

/* Frees what *m owns and zeroes it. NULL-safe. */
void model_info_free(model_info *m);

/* Parses dimension bindings: "batch=8, seq=128" (names of letters, digits,
 * '_', '.', '-', ':' and '/'; values positive decimal integers; each name
 * once). Returns 0 with *out (free with model_dims_free) and *count, or -1
 * with the reason in why. An empty text gives no bindings. */
int model_dims_parse(const char *text, model_dim **out, size_t *count, char *why, size_t cap);

/* Frees count bindings. NULL-safe. */
void model_dims_free(model_dim *dims, size_t count);

#endif /* CALHOST_MODEL_H */
