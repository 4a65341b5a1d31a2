/*
 * model.h: ONNX model files as calhost's input (the model part, internal to
 * the host).
 *
 * Owns reading a ModelProto (protobuf-c, over code generated at build time
 * from Debian's onnx.proto) and listing the nodes a plugin could serve:
 * MatMul, Gemm (mapped onto MatMul: its transA/transB/alpha/beta become
 * structure) and ReduceSum, each with the static shapes and element type of
 * its inputs (from the graph's inputs, initializers, value_info and
 * outputs). A symbolic dimension is bound by name (config_value_dims); a
 * node whose shapes stay unknown is listed as skipped, with the reason,
 * never guessed. The model's digest is the SHA-256 of the file as given
 * (config_digest_bytes: the same hex as sha256sum).
 *
 * Files: onnx_reader.c (reading, the shape table, the nodes), workloads.c (a
 * model's nodes as configured workloads, and their key rule).
 */
#ifndef CALHOST_MODEL_H
#define CALHOST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h" /* calhost_property */
#include "config/config.h"  /* config_dim, config_workload */
#include "config/digest.h"  /* CALHOST_DIGEST_CAPACITY */

/* The most dimensions a workload shape has (config's shape limit). */
#define MODEL_MAX_RANK 8
/* A tensor of more dimensions than this is refused as broken input. */
#define MODEL_ABSURD_RANK 64

/* A binding of a symbolic dimension (config.h; parsed by config_value_dims). */
typedef config_dim model_dim;

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
  char *inputs;       /* the input shapes as read, for people: "A[8,128,512] B[512,512]" */
  char *structure;    /* operator, dtype, shape and properties in one canonical string */
  size_t first;       /* index (in nodes) of the first node of the same structure */
  size_t count;       /* nodes of this structure (on each of them) */
  int unnamed;        /* the node has no name in the file (name is "OP#INDEX") */
  size_t graph_index; /* its index among the main graph's nodes */
  int representative; /* its structure is its operator's representative (the key rule) */
  char *key_name;     /* the node part of its structure's workload name (on the first node
                         of a structure; model_workload_name) */
} model_node;

/* A node of a served operator that is not listed, and why. */
typedef struct model_skip {
  char *name;
  char *onnx_operator;
  char *reason; /* "input A (x): dimension 0 is symbolic 'batch'" (model_bind_hint says how to
                   bind it in the caller's form) */
  char *symbol; /* the unbound symbolic dimension that made it skip, or NULL */
  int identity; /* 1: an identity (ReduceSum noop_with_empty_axes): nothing to tune */
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
  char *binding;    /* the canonical binding (config_dims_canonical) of the symbols the listed
                       nodes use: "" when they use none */
  char *unbound;    /* the symbols left unbound that made nodes skip, quoted as dims takes
                       them, ", "-separated: "" when none (the model needs no more dims) */
  char *key_digest; /* the representative's exact model digest (the key rule below) */
} model_info;

/* Reads the ONNX model at path. dims binds symbolic dimensions (dim_count
 * entries, may be NULL/0). The file must be a regular file (a FIFO or
 * device is refused without blocking); it is read whole into memory (never
 * mapped: a file truncated or rewritten while it is read is an error
 * naming it, never SIGBUS), hashed and decoded once: the memory at the
 * peak is the file's bytes and the decoded message (about the file's
 * size, weights included, as protobuf-c copies bytes fields), both
 * released before returning; the result keeps only names and shapes.
 * Returns 0 with *out filled (free with model_info_free), or -1 with *out
 * zeroed and "PATH: reason" (naming the node where one is at fault: "PATH:
 * node NAME (MatMul): ...") in err. Broken input is an error: not a
 * regular file, empty, a protobuf that does not parse as a ModelProto
 * (not ONNX, truncated), no graph, a served node with missing inputs or
 * shapes that do not agree, batch dimensions or a Gemm bias that do not
 * broadcast, a dimension of 0 or below, a rank over MODEL_ABSURD_RANK, a
 * file whose size changed while it was read. */
int model_read(const char *path, const model_dim *dims, size_t dim_count, model_info *out,
               char *err, size_t cap);

/* model_read over bytes in memory (the fuzz target, tests); name stands for
 * the file in messages and in out->path. */
int model_read_bytes(const void *data, size_t size, const char *name, const model_dim *dims,
                     size_t dim_count, model_info *out, char *err, size_t cap);

/* How to bind an unbound symbol, in the form the user types: "--dims
 * 'batch=N'" (ini 0: a command line) or "dims = batch=N" (ini 1: a [model]
 * section); a name that is not a plain word is quoted ("past_sequence_length
 * + 1"=N). Returns the length like snprintf. */
size_t model_bind_hint(const char *symbol, int ini, char *buf, size_t cap);

/* Frees what *m owns and zeroes it. NULL-safe. */
void model_info_free(model_info *m);

/* ---- a model's nodes as workloads, and the key rule (workloads.c) -------
 *
 * One workload per distinct node structure (the first node of it names it).
 * The exact key names the model (one exact profile per model and operator):
 * the structure of each operator with the largest share of the model's work
 * (nodes x the product of the shape; the first in graph order on a tie) is
 * the operator's *representative*, and its workload's model digest is
 * key_digest: the model file's SHA-256 ("sha256:HEX", as sha256sum prints
 * it) when the listed nodes use no symbolic dimension, else that digest
 * followed by ";dims=" and the binding's canonical text
 * ("sha256:HEX;dims=batch=8,seq=128"), so that each binding of one file
 * has its own exact profile and the file's hash stays its first 71 bytes.
 * Every other structure keeps its own exact profile under the digest of its
 * canonical description (config_workload_canonical, as a [workload] of that
 * shape without a model file): its shape already says the binding. So no
 * node loses its per-shape tuning on this machine and no two structures of
 * one model, nor two bindings' representatives, share a key. Portable
 * profiles stay one per structure. */

/* Whether node i's structure is its operator's representative in m. */
int model_node_is_representative(const model_info *m, size_t i);

/* The workload name of node i: "MODEL.NODE", the first node of i's
 * structure naming it, NODE its key_name: the node's name with the bytes of
 * [A-Za-z0-9_.] as they are and the others escaped by '-' ("--" for '-',
 * "-s" for '/', "-c" for ':', "-xHH" for any other byte), so that two
 * distinct names never give one (/enc/MatMul is "-senc-sMatMul",
 * _enc_MatMul stays itself); an unnamed node is "OP-nINDEX" (its index in
 * the graph) and a name that two structures' first nodes share (an invalid
 * model's) gets "-iINDEX" on the later one: neither form can come from
 * escaping a name, so the workloads of one model never collide. (A workload
 * name also names record files.) Returns the length like snprintf. */
size_t model_workload_name(const model_info *m, size_t i, const char *model_name, char *buf,
                           size_t cap);

/* The name of a model given by its file: the base name without ".onnx",
 * every byte outside [A-Za-z0-9_.-] as '_' ("model" when nothing is left). */
void model_name_of_file(const char *path, char *buf, size_t cap);

/* Appends to cfg one workload per distinct structure of m (the rule above),
 * named by model_workload_name, with the model digest already set
 * (config_workload_digest returns it without reading anything); the
 * representative's model_file is m->path and its model_origin is origin
 * (the [model] section's file line, or {NULL, 0} for a command-line model).
 * A workload name the configuration already has is an error. Returns the
 * number of workloads added, or -1 with "reason" in err (cfg keeps what it
 * had). */
long model_workloads_add(config_settings *cfg, const model_info *m, const char *model_name,
                         config_origin origin, char *err, size_t cap);

#endif /* CALHOST_MODEL_H */
