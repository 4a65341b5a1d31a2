/*
 * onnx_reader.c: reading an ONNX file (read whole into memory, never mapped, then
 * hashed and decoded by protobuf-c's onnx__model_proto__unpack) and listing its served
 * nodes with their shapes (model.h). Owns the shape table (every named
 * tensor of the main graph with a known type: inputs, initializers,
 * value_info, outputs) and the mapping of MatMul, Gemm and ReduceSum onto
 * workload shapes and structure.
 */
#define _GNU_SOURCE
#include "model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/files.h"
#include "base/str.h"
#include "config/values.h"
#include "onnx.pb-c.h"

/* ---- the shape table ---------------------------------------------------- */

/* A tensor's type as read: element type and dimensions, each known (value),
 * symbolic (param) or unknown (neither). */
typedef struct tensor_dim {
  int64_t value;     /* > 0 when known */
  const char *param; /* the symbol, when symbolic */
  int has_value;
} tensor_dim;

typedef struct tensor_type {
  const char *name;
  int32_t elem_type;
  int has_shape; /* 0: the rank itself is unknown */
  size_t rank;
  const tensor_dim *dims; /* rank entries (arena) */
} tensor_type;

typedef struct shape_table {
  tensor_type *slots; /* open addressing over name */
  size_t capacity;    /* power of two */
  size_t count;
  tensor_dim *arena; /* every tensor_dim, in blocks */
  struct arena_block {
    struct arena_block *next;
    tensor_dim dims[];
  } * blocks;
} shape_table;

static uint64_t hash_name(const char *s) {
  return base_str_fnv1a(BASE_STR_FNV_OFFSET, s, strlen(s));
}

static void table_free(shape_table *t) {
  free(t->slots);
  while (t->blocks) {
    struct arena_block *n = t->blocks->next;
    free(t->blocks);
    t->blocks = n;
  }
  memset(t, 0, sizeof *t);
}

static int table_init(shape_table *t, size_t expected) {
  memset(t, 0, sizeof *t);
  size_t cap = 16;
  while (cap < expected * 2 + 16)
    cap *= 2;
  t->slots = calloc(cap, sizeof *t->slots);
  t->capacity = cap;
  return t->slots ? 0 : -1;
}

static const tensor_type *table_find(const shape_table *t, const char *name) {
  if (!name || !*name)
    return NULL;
  for (size_t i = hash_name(name) & (t->capacity - 1);; i = (i + 1) & (t->capacity - 1)) {
    if (!t->slots[i].name)
      return NULL;
    if (!strcmp(t->slots[i].name, name))
      return &t->slots[i];
  }
}

static tensor_dim *table_dims(shape_table *t, size_t n) {
  struct arena_block *b = malloc(sizeof *b + (n ? n : 1) * sizeof(tensor_dim));
  if (!b)
    return NULL;
  b->next = t->blocks;
  t->blocks = b;
  return b->dims;
}

/* Adds a tensor unless the name is known already (the first source wins:
 * inputs, then initializers, value_info, outputs). 0, or -1 out of memory. */
static int table_add(shape_table *t, const tensor_type *v) {
  if (!v->name || !*v->name || table_find(t, v->name))
    return 0;
  size_t i = hash_name(v->name) & (t->capacity - 1);
  while (t->slots[i].name)
    i = (i + 1) & (t->capacity - 1);
  t->slots[i] = *v;
  t->count++;
  return 0;
}

/* Why a model fails, with the file's name first. */
static int fail(char *err, size_t cap, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t cap, const char *path, const char *fmt, ...) {
  if (err && cap) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(err, cap, "%s: %s", path, msg);
  }
  return -1;
}

static int add_value_info(shape_table *t, const Onnx__ValueInfoProto *v, const char *path,
                          char *err, size_t cap) {
  if (!v || !v->name || !v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !v->type->tensor_type)
    return 0;
  const Onnx__TypeProto__Tensor *tt = v->type->tensor_type;
  tensor_type e = {v->name, tt->has_elem_type ? tt->elem_type : 0, tt->shape != NULL, 0, NULL};
  if (tt->shape) {
    if (tt->shape->n_dim > MODEL_ABSURD_RANK)
      return fail(err, cap, path, "tensor %s: absurd rank %zu (at most %d)", v->name,
                  tt->shape->n_dim, MODEL_ABSURD_RANK);
    tensor_dim *d = table_dims(t, tt->shape->n_dim);
    if (!d)
      return fail(err, cap, path, "out of memory");
    for (size_t i = 0; i < tt->shape->n_dim; i++) {
      const Onnx__TensorShapeProto__Dimension *x = tt->shape->dim[i];
      d[i] = (tensor_dim){0, NULL, 0};
      if (!x)
        continue;
      if (x->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
        d[i].value = x->dim_value;
        d[i].has_value = 1;
      } else if (x->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                 x->dim_param && *x->dim_param) {
        d[i].param = x->dim_param;
      }
    }
    e.rank = tt->shape->n_dim;
    e.dims = d;
  }
  return table_add(t, &e) ? fail(err, cap, path, "out of memory") : 0;
}

static int add_initializer(shape_table *t, const Onnx__TensorProto *x, const char *path, char *err,
                           size_t cap) {
  if (!x || !x->name)
    return 0;
  if (x->n_dims > MODEL_ABSURD_RANK)
    return fail(err, cap, path, "initializer %s: absurd rank %zu (at most %d)", x->name, x->n_dims,
                MODEL_ABSURD_RANK);
  tensor_dim *d = table_dims(t, x->n_dims);
  if (!d)
    return fail(err, cap, path, "out of memory");
  for (size_t i = 0; i < x->n_dims; i++)
    d[i] = (tensor_dim){x->dims[i], NULL, 1};
  tensor_type e = {x->name, x->has_data_type ? x->data_type : 0, 1, x->n_dims, d};
  return table_add(t, &e) ? fail(err, cap, path, "out of memory") : 0;
}

/* ---- element types ------------------------------------------------------ */

static const char *dtype_name(int32_t t) {
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
    return "float32";
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
    return "uint8";
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
    return "int8";
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16:
    return "uint16";
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
    return "int16";
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
    return "int32";
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
    return "int64";
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
    return "float16";
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
    return "float64";
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
    return "uint32";
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
    return "uint64";
  case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16:
    return "bfloat16";
  default:
    return NULL;
  }
}

/* ---- the nodes ---------------------------------------------------------- */

typedef struct builder {
  model_info *m;
  const char *path;
  const model_dim *dims;
  size_t dim_count;
  size_t node_cap, skip_cap;
  char *err;
  size_t cap;
  unsigned char *dim_used; /* dim_count flags: the binding bound a listed node's input */
  char unbound[1024];      /* the symbols that kept a node skipped, quoted, ", "-separated */
  const char *symbol;      /* resolve's unbound symbol (the last resolve's), or NULL */
} builder;

/* A node's resolved input: its static dimensions, or why there are none. */
typedef struct resolved {
  int64_t d[MODEL_ABSURD_RANK];
  size_t rank;
  int32_t elem_type;
  char why[300];          /* non-empty: the shape is unknown (skip) */
  const char *symbol;     /* the unbound symbol that made it unknown, or NULL */
  const char *symbols[8]; /* every unbound symbol of the tensor (the first 8) */
  size_t symbol_count;
  size_t used[MODEL_ABSURD_RANK]; /* indices into the binding of the symbols bound */
  size_t used_count;
} resolved;

/* Records an unbound symbol in b->unbound (once). */
static void note_unbound(builder *b, const char *symbol) {
  char q[300];
  config_dim_name_quoted(symbol, q, sizeof q);
  size_t n = strlen(b->unbound), k = strlen(q);
  for (const char *p = b->unbound; (p = strstr(p, q)) != NULL; p += k)
    if ((p == b->unbound || p[-1] == ' ') && (p[k] == ',' || !p[k]))
      return;
  if (n + k + 3 < sizeof b->unbound)
    snprintf(b->unbound + n, sizeof b->unbound - n, "%s%s", n ? ", " : "", q);
}

static const char *node_label(const Onnx__NodeProto *n, size_t index, char *buf, size_t cap) {
  if (n->name && *n->name)
    return n->name;
  snprintf(buf, cap, "%s#%zu", n->op_type ? n->op_type : "?", index);
  return buf;
}

/* -1: broken input (err set); 0: resolved, or unknown with r->why set. */
static int resolve(const builder *b, const shape_table *t, const char *node, const char *op,
                   const char *role, const char *tensor, resolved *r) {
  memset(r, 0, sizeof *r);
  const tensor_type *v = table_find(t, tensor);
  if (!v) {
    snprintf(r->why, sizeof r->why,
             "input %s (%s) has no type in the graph (no input, initializer or value_info names "
             "it: run ONNX shape inference first)",
             role, tensor);
    return 0;
  }
  r->elem_type = v->elem_type;
  if (!v->has_shape) {
    snprintf(r->why, sizeof r->why, "input %s (%s) has no shape", role, tensor);
    return 0;
  }
  r->rank = v->rank;
  for (size_t i = 0; i < v->rank; i++) {
    const tensor_dim *d = &v->dims[i];
    if (d->has_value) {
      if (d->value <= 0)
        return fail(b->err, b->cap, b->path,
                    "node %s (%s): input %s (%s): dimension %zu is %" PRId64
                    " (dimensions must be positive)",
                    node, op, role, tensor, i, d->value);
      r->d[i] = d->value;
      continue;
    }
    if (d->param) {
      size_t k = 0;
      while (k < b->dim_count && strcmp(b->dims[k].name, d->param))
        k++;
      if (k < b->dim_count) {
        r->d[i] = b->dims[k].value;
        r->used[r->used_count++] = k;
        continue;
      }
      snprintf(r->why, sizeof r->why, "input %s (%s): dimension %zu is symbolic '%.100s'", role,
               tensor, i, d->param);
      r->symbol = d->param;
      /* the tensor's other unbound symbols: a user binds them all at once */
      for (size_t j = i; j < v->rank && r->symbol_count < 8; j++) {
        const char *p = v->dims[j].has_value ? NULL : v->dims[j].param;
        size_t q = 0;
        while (p && q < b->dim_count && strcmp(b->dims[q].name, p))
          q++;
        if (p && q == b->dim_count)
          r->symbols[r->symbol_count++] = p;
      }
      return 0;
    }
    snprintf(r->why, sizeof r->why, "input %s (%s): dimension %zu is unknown", role, tensor, i);
    return 0;
  }
  return 0;
}

static int skip_as(builder *b, const char *name, const char *op, const char *reason,
                   const char *symbol, int identity) {
  model_info *m = b->m;
  model_skip *grown = base_array_grow(m->skipped, m->skipped_count, &b->skip_cap, sizeof *grown, 8);
  if (!grown)
    return fail(b->err, b->cap, b->path, "out of memory");
  m->skipped = grown;
  model_skip *s = &m->skipped[m->skipped_count];
  memset(s, 0, sizeof *s);
  s->name = base_str_dup(name);
  s->onnx_operator = base_str_dup(op);
  s->reason = base_str_dup(reason);
  s->symbol = symbol ? base_str_dup(symbol) : NULL;
  s->identity = identity;
  if (!s->name || !s->onnx_operator || !s->reason || (symbol && !s->symbol)) {
    free(s->name), free(s->onnx_operator), free(s->reason), free(s->symbol);
    return fail(b->err, b->cap, b->path, "out of memory");
  }
  if (symbol)
    note_unbound(b, symbol);
  m->skipped_count++;
  return 0;
}

static int skip(builder *b, const char *name, const char *op, const char *reason) {
  return skip_as(b, name, op, reason, NULL, 0);
}

/* Skips a node for an unknown input (r->why), naming its symbol; the
 * unbound symbols of the node's other inputs (more, may be NULL) are noted
 * too. */
static int skip_unknown(builder *b, const char *name, const char *op, const resolved *r,
                        const resolved *more) {
  for (size_t i = 0; i < r->symbol_count; i++)
    note_unbound(b, r->symbols[i]);
  for (size_t i = 0; more && i < more->symbol_count; i++)
    note_unbound(b, more->symbols[i]);
  return skip_as(b, name, op, r->why, r->symbol, 0);
}

/* Marks the bindings a listed node's inputs used. */
static void mark_used(builder *b, const resolved *r) {
  for (size_t i = 0; i < r->used_count; i++)
    b->dim_used[r->used[i]] = 1;
}

static const Onnx__AttributeProto *attribute(const Onnx__NodeProto *n, const char *name) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i] && n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
      return n->attribute[i];
  return NULL;
}

static int64_t attribute_int(const Onnx__NodeProto *n, const char *name, int64_t dflt) {
  const Onnx__AttributeProto *a = attribute(n, name);
  return a && a->has_i ? a->i : dflt;
}

static float attribute_float(const Onnx__NodeProto *n, const char *name, float dflt) {
  const Onnx__AttributeProto *a = attribute(n, name);
  return a && a->has_f ? a->f : dflt;
}

static void format_dims(char *buf, size_t cap, const char *role, const resolved *r) {
  size_t n = (size_t)snprintf(buf, cap, "%s[", role);
  for (size_t i = 0; i < r->rank && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%" PRId64, i ? "," : "", r->d[i]);
  if (n < cap)
    snprintf(buf + n, cap - n, "]");
}

/* A node being listed: what node_add copies into the model. */
typedef struct listed {
  const char *operator_name, *dtype;
  int64_t shape[MODEL_MAX_RANK];
  size_t rank;
  calhost_property props[8];
  char values[8][48];
  size_t prop_count;
  char inputs[400];
} listed;

static void listed_prop(listed *l, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void listed_prop(listed *l, const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(l->values[l->prop_count], sizeof l->values[0], fmt, ap);
  va_end(ap);
  l->props[l->prop_count] = (calhost_property){name, l->values[l->prop_count]};
  l->prop_count++;
}

static int node_add(builder *b, const char *name, const char *onnx_op, const listed *l, int unnamed,
                    size_t index) {
  model_info *m = b->m;
  model_node *grown = base_array_grow(m->nodes, m->node_count, &b->node_cap, sizeof *grown, 16);
  if (!grown)
    return fail(b->err, b->cap, b->path, "out of memory");
  m->nodes = grown;
  model_node *x = &m->nodes[m->node_count];
  memset(x, 0, sizeof *x);
  char structure[1024];
  size_t k = (size_t)snprintf(structure, sizeof structure,
                              "operator=%s;dtype=%s;shape=", l->operator_name, l->dtype);
  for (size_t i = 0; i < l->rank && k < sizeof structure; i++)
    k += (size_t)snprintf(structure + k, sizeof structure - k, "%s%" PRId64, i ? "," : "",
                          l->shape[i]);
  for (size_t i = 0; i < l->prop_count && k < sizeof structure; i++)
    k += (size_t)snprintf(structure + k, sizeof structure - k, ";%s=%s", l->props[i].name,
                          l->props[i].value);
  x->name = base_str_dup(name);
  x->onnx_operator = base_str_dup(onnx_op);
  x->operator_name = base_str_dup(l->operator_name);
  x->dtype = base_str_dup(l->dtype);
  x->inputs = base_str_dup(l->inputs);
  x->structure = base_str_dup(structure);
  x->properties = l->prop_count ? calloc(l->prop_count, sizeof *x->properties) : NULL;
  int ok = x->name && x->onnx_operator && x->operator_name && x->dtype && x->inputs &&
           x->structure && (!l->prop_count || x->properties);
  for (size_t i = 0; ok && i < l->prop_count; i++) {
    char *pn = base_str_dup(l->props[i].name), *pv = base_str_dup(l->props[i].value);
    x->properties[i] = (calhost_property){pn, pv};
    x->property_count = i + 1;
    ok = pn && pv;
  }
  memcpy(x->shape, l->shape, sizeof x->shape);
  x->shape_rank = l->rank;
  x->unnamed = unnamed;
  x->graph_index = index;
  m->node_count++; /* freed with the model on failure */
  return ok ? 0 : fail(b->err, b->cap, b->path, "out of memory");
}

/* Multiplies into *acc; -1 on overflow. */
static int mul(int64_t *acc, int64_t v) {
  return __builtin_mul_overflow(*acc, v, acc) ? -1 : 0;
}

/* Gemm's bias form (CONTRACT: scalar, n, m, mn) of a C of r against an
 * output of m x n; NULL when C does not broadcast to it. */
static const char *bias_form(const resolved *c, int64_t m, int64_t n) {
  int ones = 1;
  for (size_t i = 0; i < c->rank; i++)
    ones = ones && c->d[i] == 1;
  if (c->rank <= 2 && ones)
    return "scalar";
  if (c->rank == 1)
    return c->d[0] == n ? "n" : NULL;
  if (c->rank != 2)
    return NULL;
  if (c->d[0] == 1 && c->d[1] == n)
    return "n";
  if (c->d[0] == m && c->d[1] == 1)
    return "m";
  if (c->d[0] == m && c->d[1] == n)
    return "mn";
  return NULL;
}

/* The batch of a MatMul as ONNX (numpy) broadcasting defines it: A's and
 * B's dimensions before the last two, aligned right, each pair equal or
 * one of them 1. Sets *batch (the products), *batch_a and *batch_b (the
 * distinct A and B matrices). -1: they do not broadcast (why set), -2:
 * overflow. */
static int broadcast_batch(const resolved *a, const resolved *bb, int64_t *batch, int64_t *batch_a,
                           int64_t *batch_b, char *why, size_t cap) {
  size_t ra = a->rank >= 2 ? a->rank - 2 : 0, rb = bb->rank >= 2 ? bb->rank - 2 : 0;
  size_t r = ra > rb ? ra : rb;
  *batch = *batch_a = *batch_b = 1;
  for (size_t i = 0; i < r; i++) {
    int64_t da = i >= r - ra ? a->d[i - (r - ra)] : 1, db = i >= r - rb ? bb->d[i - (r - rb)] : 1;
    if (da != db && da != 1 && db != 1) {
      snprintf(why, cap,
               "batch dimensions do not broadcast: %" PRId64 " against %" PRId64
               " (ONNX MatMul broadcasts as numpy: equal, or one of them 1)",
               da, db);
      return -1;
    }
    if (mul(batch, da > db ? da : db) || mul(batch_a, da) || mul(batch_b, db))
      return -2;
  }
  return 0;
}

/* MatMul's dimensions (numpy's matmul, the batch broadcast) into *m, *nn,
 * *k and its batch properties into l (da, db: the inputs' dims as text,
 * for the messages). 0, or -1 with b's error set. */
static int matmul_dims(builder *b, const char *name, const resolved *a, const resolved *bb,
                       listed *l, const char *da, const char *db, int64_t *m, int64_t *nn,
                       int64_t *k) {
  if (!a->rank || !bb->rank)
    return fail(b->err, b->cap, b->path, "node %s (MatMul): an input is a scalar (%s %s)", name, da,
                db);
  /* numpy's matmul: a vector A is [1,K], a vector B is [K,1] */
  *m = a->rank >= 2 ? a->d[a->rank - 2] : 1;
  *k = a->d[a->rank - 1];
  int64_t kb = bb->rank >= 2 ? bb->d[bb->rank - 2] : bb->d[0];
  *nn = bb->rank >= 2 ? bb->d[bb->rank - 1] : 1;
  if (*k != kb)
    return fail(b->err, b->cap, b->path, "node %s (MatMul): inner dimensions differ (%s %s)", name,
                da, db);
  int64_t batch, batch_a, batch_b;
  char why[200];
  int rc = broadcast_batch(a, bb, &batch, &batch_a, &batch_b, why, sizeof why);
  if (rc == -1)
    return fail(b->err, b->cap, b->path, "node %s (MatMul): %s (%s %s)", name, why, da, db);
  if (rc)
    return fail(b->err, b->cap, b->path, "node %s (MatMul): absurd dimensions (%s %s)", name, da,
                db);
  if (batch_b == 1) {
    /* one B shared by every product: the A matrices stacked are exactly
     * one GEMM of (batch x M) rows */
    if (mul(m, batch))
      return fail(b->err, b->cap, b->path, "node %s (MatMul): absurd dimensions (%s)", name, da);
  } else {
    /* a batched product (CONTRACT37): the broadcast batch, and the
     * distinct A and B matrices when fewer */
    listed_prop(l, "batch", "%" PRId64, batch);
    if (batch_a != batch)
      listed_prop(l, "batch_a", "%" PRId64, batch_a);
    if (batch_b != batch)
      listed_prop(l, "batch_b", "%" PRId64, batch_b);
  }
  return 0;
}

static int matmul_node(builder *b, const shape_table *t, const Onnx__NodeProto *n, const char *name,
                       int unnamed, size_t index) {
  const char *op = n->op_type;
  int gemm = !strcmp(op, "Gemm");
  if (n->n_input < 2 || !n->input[0] || !*n->input[0] || !n->input[1] || !*n->input[1])
    return fail(b->err, b->cap, b->path, "node %s (%s): missing inputs (needs A and B, has %zu)",
                name, op, n->n_input);
  resolved a, bb, c;
  if (resolve(b, t, name, op, "A", n->input[0], &a) ||
      resolve(b, t, name, op, "B", n->input[1], &bb))
    return -1;
  if (a.why[0] || bb.why[0])
    return skip_unknown(b, name, op, a.why[0] ? &a : &bb, a.why[0] ? &bb : NULL);
  const char *dt = dtype_name(a.elem_type);
  if (!dt) {
    char why[80];
    snprintf(why, sizeof why, "input A has element type %d, which calhost does not name",
             (int)a.elem_type);
    return skip(b, name, op, why);
  }
  if (bb.elem_type && bb.elem_type != a.elem_type) {
    char why[120];
    snprintf(why, sizeof why, "inputs A and B have different element types (%d and %d)",
             (int)a.elem_type, (int)bb.elem_type);
    return skip(b, name, op, why);
  }
  listed l;
  memset(&l, 0, sizeof l);
  l.operator_name = "MatMul";
  l.dtype = dt;
  char da[180], db[180], dc[180] = "";
  format_dims(da, sizeof da, "A", &a);
  format_dims(db, sizeof db, "B", &bb);
  snprintf(l.inputs, sizeof l.inputs, "%s %s", da, db);
  int64_t m = 0, nn = 0, k = 0; /* set by each form below */
  if (gemm) {
    if (a.rank != 2 || bb.rank != 2)
      return fail(b->err, b->cap, b->path, "node %s (Gemm): inputs must be matrices (%s %s)", name,
                  da, db);
    int64_t ta = attribute_int(n, "transA", 0), tb = attribute_int(n, "transB", 0);
    float alpha = attribute_float(n, "alpha", 1.0f), beta = attribute_float(n, "beta", 1.0f);
    m = ta ? a.d[1] : a.d[0];
    k = ta ? a.d[0] : a.d[1];
    int64_t kb = tb ? bb.d[1] : bb.d[0];
    nn = tb ? bb.d[0] : bb.d[1];
    if (k != kb)
      return fail(b->err, b->cap, b->path,
                  "node %s (Gemm): inner dimensions differ (%s %s, transA=%d transB=%d)", name, da,
                  db, ta != 0, tb != 0);
    int has_c = n->n_input >= 3 && n->input[2] && *n->input[2];
    const char *form = NULL;
    if (has_c && beta != 0.0f) { /* a C times 0 adds nothing: no bias */
      if (resolve(b, t, name, op, "C", n->input[2], &c))
        return -1;
      if (c.why[0])
        return skip_unknown(b, name, op, &c, NULL);
      format_dims(dc, sizeof dc, "C", &c);
      form = bias_form(&c, m, nn);
      if (!form)
        return fail(b->err, b->cap, b->path,
                    "node %s (Gemm): C does not broadcast to the %" PRId64 "x%" PRId64
                    " output (%s %s %s)",
                    name, m, nn, da, db, dc);
      snprintf(l.inputs, sizeof l.inputs, "%.132s %.132s %.132s", da, db, dc); /* shown, may be cut */
      mark_used(b, &c);
    }
    /* what makes it more than C = A x B, in name order */
    if (alpha != 1.0f)
      listed_prop(&l, "alpha", "%.7g", (double)alpha);
    if (form && beta != 1.0f)
      listed_prop(&l, "beta", "%.7g", (double)beta);
    if (form)
      listed_prop(&l, "bias", "%s", form);
    if (ta)
      listed_prop(&l, "trans_a", "1");
    if (tb)
      listed_prop(&l, "trans_b", "1");
  } else if (matmul_dims(b, name, &a, &bb, &l, da, db, &m, &nn, &k) != 0) {
    return -1;
  }
  int64_t work = m;
  if (mul(&work, nn) || mul(&work, k))
    return fail(b->err, b->cap, b->path, "node %s (%s): absurd dimensions (%s %s)", name, op, da,
                db);
  l.shape[0] = m, l.shape[1] = nn, l.shape[2] = k;
  l.rank = 3;
  mark_used(b, &a);
  mark_used(b, &bb);
  return node_add(b, name, op, &l, unnamed, index);
}

static int reducesum_node(builder *b, const shape_table *t, const Onnx__NodeProto *n,
                          const char *name, int unnamed, size_t index) {
  if (n->n_input < 1 || !n->input[0] || !*n->input[0])
    return fail(b->err, b->cap, b->path, "node %s (ReduceSum): missing input", name);
  /* the axes: an input (opset 13; an initializer of shape [0] is none), or
   * the attribute (before 13) */
  const Onnx__AttributeProto *axes = attribute(n, "axes");
  int axes_input = n->n_input >= 2 && n->input[1] && *n->input[1];
  if (axes_input) {
    const tensor_type *x = table_find(t, n->input[1]);
    if (x && x->has_shape && x->rank == 1 && x->dims[0].has_value && x->dims[0].value == 0)
      axes_input = 0;
  }
  int no_axes = !axes_input && !(axes && axes->n_ints);
  if (no_axes && attribute_int(n, "noop_with_empty_axes", 0))
    return skip_as(b, name, "ReduceSum",
                   "an identity (noop_with_empty_axes=1 without axes): nothing to calibrate", NULL,
                   1);
  resolved a;
  if (resolve(b, t, name, "ReduceSum", "data", n->input[0], &a))
    return -1;
  if (a.why[0])
    return skip_unknown(b, name, "ReduceSum", &a, NULL);
  const char *dt = dtype_name(a.elem_type);
  if (!dt)
    return skip(b, name, "ReduceSum", "its input's element type is not one calhost names");
  if (!a.rank)
    return skip(b, name, "ReduceSum", "its input is a scalar");
  if (a.rank > MODEL_MAX_RANK) {
    char why[120];
    snprintf(why, sizeof why, "its input has rank %zu (a workload has at most %d dimensions)",
             a.rank, MODEL_MAX_RANK);
    return skip(b, name, "ReduceSum", why);
  }
  listed l;
  memset(&l, 0, sizeof l);
  l.operator_name = "ReduceSum";
  l.dtype = dt;
  format_dims(l.inputs, sizeof l.inputs, "data", &a);
  int64_t elements = 1;
  for (size_t i = 0; i < a.rank; i++) {
    l.shape[i] = a.d[i];
    if (mul(&elements, a.d[i]))
      return fail(b->err, b->cap, b->path, "node %s (ReduceSum): absurd dimensions (%s)", name,
                  l.inputs);
  }
  l.rank = a.rank;
  if (axes_input) {
    listed_prop(&l, "axes", "input");
  } else if (axes && axes->n_ints) {
    char list[48] = "";
    size_t k = 0;
    for (size_t i = 0; i < axes->n_ints && k < sizeof list; i++)
      k += (size_t)snprintf(list + k, sizeof list - k, "%s%" PRId64, i ? "," : "", axes->ints[i]);
    listed_prop(&l, "axes", "%s", list);
  }
  if (!attribute_int(n, "keepdims", 1))
    listed_prop(&l, "keepdims", "0");
  mark_used(b, &a);
  return node_add(b, name, "ReduceSum", &l, unnamed, index);
}

/* The work of a structure in the model: nodes x product of the shape (as a
 * double: only compared). */
static double structure_work(const model_node *n) {
  double w = (double)n->count;
  for (size_t k = 0; k < n->shape_rank; k++)
    w *= (double)n->shape[k];
  return w;
}

/* Sets each node's representative flag (model.h's rule): one pass per
 * distinct operator (a model lists two or three), so linear in nodes. */
static void mark_representatives(model_info *m) {
  const char *done[8]; /* the operators done: a model lists MatMul and ReduceSum */
  size_t ndone = 0;
  for (size_t i = 0; i < m->node_count; i++) {
    const char *op = m->nodes[i].operator_name;
    int seen = 0;
    for (size_t j = 0; j < ndone && !seen; j++)
      seen = !strcmp(done[j], op);
    if (seen || ndone == sizeof done / sizeof done[0])
      continue;
    done[ndone++] = op;
    size_t best = i;
    double best_work = -1;
    for (size_t k = i; k < m->node_count; k++) {
      const model_node *n = &m->nodes[k];
      if (n->first != k || strcmp(n->operator_name, op))
        continue;
      double w = structure_work(n);
      if (w > best_work) {
        best_work = w;
        best = k;
      }
    }
    for (size_t k = i; k < m->node_count; k++)
      if (!strcmp(m->nodes[k].operator_name, op))
        m->nodes[k].representative = m->nodes[k].first == best;
  }
}

/* Appends c to buf as the key_name escape writes it (model.h). */
static size_t escape_byte(unsigned char c, char *buf, size_t n) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
      c == '.') {
    buf[n++] = (char)c;
  } else if (c == '-' || c == '/' || c == ':') {
    buf[n++] = '-';
    buf[n++] = c == '-' ? '-' : c == '/' ? 's' : 'c';
  } else {
    n += (size_t)sprintf(buf + n, "-x%02x", c);
  }
  return n;
}

/* Gives each structure's first node its key_name (model.h): escaped, or
 * "OP-nINDEX" when unnamed, "-iINDEX" added when an earlier structure took
 * the name. A hash set of the names given: linear in structures. */
static int name_structures(builder *b) {
  model_info *m = b->m;
  shape_table taken;
  if (table_init(&taken, m->structure_count))
    return fail(b->err, b->cap, b->path, "out of memory");
  int rc = 0;
  for (size_t i = 0; !rc && i < m->node_count; i++) {
    model_node *x = &m->nodes[i];
    if (x->first != i)
      continue;
    size_t len = x->unnamed ? strlen(x->onnx_operator) + 24 : strlen(x->name) * 4 + 24;
    char *k = malloc(len + 24);
    if (!k) {
      rc = fail(b->err, b->cap, b->path, "out of memory");
      break;
    }
    size_t n = 0;
    if (x->unnamed) {
      n = (size_t)sprintf(k, "%s-n%zu", x->onnx_operator, x->graph_index);
    } else {
      for (const char *c = x->name; *c; c++)
        n = escape_byte((unsigned char)*c, k, n);
      k[n] = '\0';
    }
    if (table_find(&taken, k))
      sprintf(k + n, "-i%zu", x->graph_index);
    x->key_name = k;
    tensor_type e = {k, 0, 0, 0, NULL};
    table_add(&taken, &e);
  }
  table_free(&taken);
  return rc;
}

/* Counts the nodes of each structure (first, count). */
static int count_structures(builder *b) {
  model_info *m = b->m;
  shape_table seen; /* name = structure, dims unused; elem_type = first index */
  if (table_init(&seen, m->node_count))
    return fail(b->err, b->cap, b->path, "out of memory");
  for (size_t i = 0; i < m->node_count; i++) {
    const tensor_type *f = table_find(&seen, m->nodes[i].structure);
    if (f) {
      m->nodes[i].first = (size_t)f->rank;
    } else {
      tensor_type e = {m->nodes[i].structure, 0, 0, i, NULL};
      table_add(&seen, &e);
      m->nodes[i].first = i;
      m->structure_count++;
    }
    m->nodes[m->nodes[i].first].count++;
  }
  for (size_t i = 0; i < m->node_count; i++)
    m->nodes[i].count = m->nodes[m->nodes[i].first].count;
  table_free(&seen);
  mark_representatives(m);
  return 0;
}

static int list_nodes(builder *b, const Onnx__ModelProto *mp) {
  const Onnx__GraphProto *g = mp->graph;
  shape_table t;
  if (table_init(&t, g->n_input + g->n_initializer + g->n_value_info + g->n_output))
    return fail(b->err, b->cap, b->path, "out of memory");
  int rc = 0;
  for (size_t i = 0; !rc && i < g->n_input; i++)
    rc = add_value_info(&t, g->input[i], b->path, b->err, b->cap);
  for (size_t i = 0; !rc && i < g->n_initializer; i++)
    rc = add_initializer(&t, g->initializer[i], b->path, b->err, b->cap);
  for (size_t i = 0; !rc && i < g->n_value_info; i++)
    rc = add_value_info(&t, g->value_info[i], b->path, b->err, b->cap);
  for (size_t i = 0; !rc && i < g->n_output; i++)
    rc = add_value_info(&t, g->output[i], b->path, b->err, b->cap);
  b->m->graph_node_count = g->n_node;
  for (size_t i = 0; !rc && i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    if (!n || !n->op_type)
      continue;
    /* the default domain's operators only ("" or "ai.onnx") */
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
      continue;
    char buf[64];
    const char *name = node_label(n, i, buf, sizeof buf);
    int unnamed = !n->name || !*n->name;
    if (!strcmp(n->op_type, "MatMul") || !strcmp(n->op_type, "Gemm"))
      rc = matmul_node(b, &t, n, name, unnamed, i);
    else if (!strcmp(n->op_type, "ReduceSum"))
      rc = reducesum_node(b, &t, n, name, unnamed, i);
  }
  table_free(&t);
  if (!rc)
    rc = count_structures(b);
  return rc ? rc : name_structures(b);
}

/* The binding's canonical text, of the symbols the listed nodes used. */
static int binding_text(builder *b) {
  config_dim *used = b->dim_count ? calloc(b->dim_count, sizeof *used) : NULL;
  size_t n = 0;
  for (size_t i = 0; i < b->dim_count; i++)
    if (b->dim_used[i])
      used[n++] = b->dims[i];
  size_t len = config_dims_canonical(used, n, NULL, 0);
  b->m->binding = malloc(len + 1);
  b->m->unbound = base_str_dup(b->unbound);
  if (b->m->binding)
    config_dims_canonical(used, n, b->m->binding, len + 1);
  free(used);
  return b->m->binding && b->m->unbound ? 0 : fail(b->err, b->cap, b->path, "out of memory");
}

void model_info_free(model_info *m) {
  if (!m)
    return;
  for (size_t i = 0; i < m->node_count; i++) {
    model_node *n = &m->nodes[i];
    free(n->name), free(n->onnx_operator), free(n->operator_name), free(n->dtype);
    free(n->inputs), free(n->structure), free(n->key_name);
    for (size_t k = 0; k < n->property_count; k++) {
      free((char *)n->properties[k].name);
      free((char *)n->properties[k].value);
    }
    free(n->properties);
  }
  free(m->nodes);
  for (size_t i = 0; i < m->skipped_count; i++) {
    free(m->skipped[i].name), free(m->skipped[i].onnx_operator), free(m->skipped[i].reason);
    free(m->skipped[i].symbol);
  }
  free(m->skipped);
  free(m->binding);
  free(m->unbound);
  free(m->key_digest);
  free(m->path);
  free(m->producer);
  memset(m, 0, sizeof *m);
}

/* Decodes and lists: the digest is the caller's. */
static int read_decoded(const void *data, size_t size, const char *name, const model_dim *dims,
                        size_t dim_count, model_info *out, char *err, size_t cap) {
  if (!size)
    return fail(err, cap, name, "not an ONNX model: the file is empty");
  Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, data);
  if (!mp)
    return fail(err, cap, name,
                "not an ONNX model: the protobuf does not parse as a ModelProto (another "
                "format, or a truncated file)");
  int rc = 0;
  if (!mp->graph) {
    rc = fail(err, cap, name, "not an ONNX model: it has no graph%s",
              mp->has_ir_version ? "" : " and no IR version");
  } else {
    out->path = base_str_dup(name);
    out->file_size = size;
    out->ir_version = mp->has_ir_version ? mp->ir_version : 0;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
      const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
      if (o && (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) && o->has_version)
        out->opset = o->version;
    }
    out->producer = base_str_format("%s%s%s", mp->producer_name ? mp->producer_name : "",
                                    mp->producer_version && *mp->producer_version ? " " : "",
                                    mp->producer_version ? mp->producer_version : "");
    if (!out->path || !out->producer)
      rc = fail(err, cap, name, "out of memory");
    else {
      builder b = {out, name, dims, dim_count, 0, 0, err, cap, NULL, "", NULL};
      b.dim_used = calloc(dim_count + 1, 1);
      rc = b.dim_used ? list_nodes(&b, mp) : fail(err, cap, name, "out of memory");
      if (!rc)
        rc = binding_text(&b);
      free(b.dim_used);
    }
  }
  onnx__model_proto__free_unpacked(mp, NULL);
  return rc;
}

int model_read_bytes(const void *data, size_t size, const char *name, const model_dim *dims,
                     size_t dim_count, model_info *out, char *err, size_t cap) {
  memset(out, 0, sizeof *out);
  if (config_digest_bytes(data, size, out->digest) != 0)
    return fail(err, cap, name, "SHA-256 failed");
  if (read_decoded(data, size, name, dims, dim_count, out, err, cap) != 0) {
    model_info_free(out);
    return -1;
  }
  out->key_digest = out->binding[0] ? base_str_format("%s;dims=%s", out->digest, out->binding)
                                    : base_str_dup(out->digest);
  if (!out->key_digest) {
    model_info_free(out);
    return fail(err, cap, name, "out of memory");
  }
  return 0;
}

size_t model_bind_hint(const char *symbol, int ini, char *buf, size_t cap) {
  char q[600];
  config_dim_name_quoted(symbol, q, sizeof q);
  if (ini)
    return (size_t)snprintf(buf, cap, "dims = %s=N", q);
  /* the shell's single quotes around it; a ' inside written as '\'' */
  char sh[1300];
  size_t n = 0;
  for (const char *c = q; *c && n + 5 < sizeof sh; c++) {
    if (*c == '\'') {
      memcpy(sh + n, "'\\''", 4);
      n += 4;
    } else {
      sh[n++] = *c;
    }
  }
  sh[n] = '\0';
  return (size_t)snprintf(buf, cap, "--dims '%s=N'", sh);
}

/* Reads the whole file into memory (never mapped: a file truncated while it
 * is read is a short read here, an error naming it, where a mapping would
 * raise SIGBUS in whatever program reads it). */
int model_read(const char *path, const model_dim *dims, size_t dim_count, model_info *out,
               char *err, size_t cap) {
  memset(out, 0, sizeof *out);
  int fd = base_open_regular(path, 0, err, cap);
  if (fd < 0)
    return -1;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return fail(err, cap, path, "%s", strerror(e));
  }
  if (st.st_size == 0) {
    close(fd);
    return fail(err, cap, path, "not an ONNX model: the file is empty");
  }
  if ((uint64_t)st.st_size > SIZE_MAX / 4) {
    close(fd);
    return fail(err, cap, path, "too large to read (%jd bytes)", (intmax_t)st.st_size);
  }
  size_t size = (size_t)st.st_size, got = 0;
  unsigned char *data = malloc(size + 1);
  if (!data) {
    close(fd);
    return fail(err, cap, path, "out of memory (%zu bytes)", size);
  }
  int e = 0;
  /* size + 1: one byte more than stat said tells a file that grew */
  while (got < size + 1) {
    ssize_t r = read(fd, data + got, size + 1 - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      e = errno;
      break;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  int rc;
  if (e)
    rc = fail(err, cap, path, "read failed: %s", strerror(e));
  else if (got != size)
    rc = fail(err, cap, path,
              "the file changed while it was read (%zu bytes at the start, %s%zu read): written "
              "or truncated by another program; read it again once it is complete",
              size, got > size ? "more than " : "", got > size ? size : got);
  else
    rc = model_read_bytes(data, size, path, dims, dim_count, out, err, cap);
  free(data);
  return rc;
}
