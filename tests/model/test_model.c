/*
 * test_model.c: the ONNX model reader (host/model) over models written at
 * test time by make_models.py (Debian's /usr/bin/python3 with python3-onnx):
 * the nodes listed with shapes and structure, symbolic dimensions, nodes of
 * one structure counted, unknown shapes skipped with the reason, broken
 * files refused naming file and node, the digest as sha256sum prints it,
 * and the --dims syntax; models as exporters write them (issue 37): Gemm's
 * bias forms, batch broadcasting, injective workload names, any dim_param
 * bound, a binding in the key, ReduceSum's identity, a file truncated while
 * it is read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "config/values.h"
#include "model/model.h"

static char dir[] = "/tmp/calhost-model-XXXXXX";
static char path[4096];

static const char *model_path(const char *name) {
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

static int setup(void **state) {
  (void)state;
  if (!mkdtemp(dir))
    return -1;
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/model/make_models.py' '%s'",
           getenv("CALHOST_SOURCE_DIR"), dir);
  return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static const model_node *node_named(const model_info *m, const char *name) {
  for (size_t i = 0; i < m->node_count; i++)
    if (!strcmp(m->nodes[i].name, name))
      return &m->nodes[i];
  return NULL;
}

static void assert_shape(const model_node *n, int64_t a, int64_t b, int64_t c) {
  assert_non_null(n);
  assert_int_equal(n->shape_rank, 3);
  assert_int_equal(n->shape[0], a);
  assert_int_equal(n->shape[1], b);
  assert_int_equal(n->shape[2], c);
}

static void read_ok(const char *name, const char *dims, model_info *m) {
  model_dim *d = NULL;
  size_t nd = 0;
  char err[1024] = "";
  assert_int_equal(config_value_dims(dims, &d, &nd, err, sizeof err), 0);
  int rc = model_read(model_path(name), d, nd, m, err, sizeof err);
  config_dims_free(d, nd);
  if (rc != 0)
    fail_msg("%s", err);
}

static void mlp_lists_matmul_gemm_and_reducesum_with_structure(void **state) {
  (void)state;
  model_info m;
  read_ok("mlp.onnx", NULL, &m);
  assert_int_equal(m.graph_node_count, 5);
  assert_int_equal(m.node_count, 5);
  assert_int_equal(m.skipped_count, 0);
  assert_int_equal(m.opset, 13);
  const model_node *fc1 = node_named(&m, "fc1");
  assert_shape(fc1, 8, 256, 512);
  assert_string_equal(fc1->operator_name, "MatMul");
  assert_string_equal(fc1->dtype, "float32");
  assert_int_equal(fc1->property_count, 0);
  /* Gemm with a bias C[N] and beta 1: MatMul plus bias=n (CONTRACT37: beta
   * only when it is not 1) */
  const model_node *fc2 = node_named(&m, "fc2");
  assert_shape(fc2, 8, 64, 256);
  assert_string_equal(fc2->onnx_operator, "Gemm");
  assert_string_equal(fc2->operator_name, "MatMul");
  assert_int_equal(fc2->property_count, 1);
  assert_string_equal(fc2->properties[0].name, "bias");
  assert_string_equal(fc2->properties[0].value, "n");
  /* transB: N comes from B's first dimension; alpha kept */
  const model_node *fc3 = node_named(&m, "fc3");
  assert_shape(fc3, 8, 32, 64);
  assert_string_equal(fc3->structure,
                      "operator=MatMul;dtype=float32;shape=8,32,64;alpha=0.5;trans_b=1");
  /* a Gemm without C, alpha 1, no transpose is a MatMul */
  const model_node *fc4 = node_named(&m, "fc4");
  assert_shape(fc4, 8, 16, 32);
  assert_int_equal(fc4->property_count, 0);
  assert_string_equal(fc4->structure, "operator=MatMul;dtype=float32;shape=8,16,32");
  const model_node *sum = node_named(&m, "sum");
  assert_non_null(sum);
  assert_string_equal(sum->operator_name, "ReduceSum");
  assert_int_equal(sum->shape_rank, 2);
  assert_int_equal(sum->shape[0], 8);
  assert_int_equal(sum->shape[1], 16);
  model_info_free(&m);
}

static void digest_is_the_files_sha256_as_sha256sum_prints_it(void **state) {
  (void)state;
  model_info m;
  read_ok("mlp.onnx", NULL, &m);
  char cmd[4200], line[256] = "";
  snprintf(cmd, sizeof cmd, "sha256sum '%s'", model_path("mlp.onnx"));
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  assert_non_null(fgets(line, sizeof line, p));
  pclose(p);
  line[64] = '\0';
  assert_string_equal(m.digest + 7, line);
  assert_memory_equal(m.digest, "sha256:", 7);
  model_info_free(&m);
}

static void symbolic_dimension_is_bound_or_the_node_skipped_naming_it(void **state) {
  (void)state;
  model_info m;
  read_ok("batch.onnx", NULL, &m);
  assert_int_equal(m.node_count, 0);
  assert_int_equal(m.skipped_count, 1);
  assert_string_equal(m.skipped[0].name, "proj");
  assert_non_null(strstr(m.skipped[0].reason, "symbolic 'batch'"));
  model_info_free(&m);
  /* batch=8 x seq 128 rows against one matrix: one GEMM of 1024 rows */
  read_ok("batch.onnx", "batch=8", &m);
  assert_int_equal(m.skipped_count, 0);
  assert_shape(node_named(&m, "proj"), 1024, 32, 64);
  model_info_free(&m);
  read_ok("batch.onnx", "batch=2, seq=999", &m);
  assert_shape(node_named(&m, "proj"), 256, 32, 64);
  model_info_free(&m);
}

static void nodes_of_one_structure_are_counted_once(void **state) {
  (void)state;
  model_info m;
  read_ok("three.onnx", NULL, &m);
  assert_int_equal(m.node_count, 3);
  assert_int_equal(m.structure_count, 2);
  const model_node *q = node_named(&m, "q"), *k = node_named(&m, "k"), *o = node_named(&m, "out");
  assert_shape(q, 64, 256, 256);
  assert_shape(o, 64, 128, 256);
  assert_int_equal(q->count, 2);
  assert_int_equal(k->count, 2);
  assert_ptr_equal(&m.nodes[k->first], q);
  assert_int_equal(o->count, 1);
  assert_ptr_equal(&m.nodes[o->first], o);
  model_info_free(&m);
}

static void node_without_a_shape_is_skipped_with_the_reason(void **state) {
  (void)state;
  model_info m;
  read_ok("noshape.onnx", NULL, &m);
  assert_int_equal(m.node_count, 0);
  assert_int_equal(m.skipped_count, 1);
  assert_string_equal(m.skipped[0].name, "after_relu");
  assert_string_equal(m.skipped[0].onnx_operator, "MatMul");
  assert_non_null(strstr(m.skipped[0].reason, "shape inference"));
  model_info_free(&m);
}

static void broken(const char *name, const char *expect_a, const char *expect_b) {
  model_info m;
  char err[1024] = "";
  assert_int_equal(model_read(model_path(name), NULL, 0, &m, err, sizeof err), -1);
  assert_int_equal(m.node_count, 0);
  assert_null(m.nodes);
  if (strncmp(err, model_path(name), strlen(model_path(name))))
    fail_msg("%s: the error does not start with the file: %s", name, err);
  if (!strstr(err, expect_a) || (expect_b && !strstr(err, expect_b)))
    fail_msg("%s: expected '%s' and '%s' in: %s", name, expect_a, expect_b ? expect_b : "", err);
}

static void broken_files_are_refused_naming_the_file_and_node(void **state) {
  (void)state;
  broken("text.onnx", "not an ONNX model", NULL);
  broken("truncated.onnx", "does not parse", NULL);
  broken("zero_dim.onnx", "node mm (MatMul)", "is 0");
  broken("negative_dim.onnx", "node mm (MatMul)", "is -3");
  broken("missing_input.onnx", "node lonely (MatMul)", "missing inputs");
  broken("absurd_rank.onnx", "absurd rank 100", NULL);
  broken("inner_differs.onnx", "node mm (MatMul)", "inner dimensions differ");
  broken("no-such-file.onnx", "No such file", NULL);
  /* an empty file, and bytes in memory that are no model */
  FILE *f = fopen(model_path("empty.onnx"), "w");
  assert_non_null(f);
  fclose(f);
  broken("empty.onnx", "empty", NULL);
  model_info m;
  char err[256];
  assert_int_equal(model_read_bytes("\x0a\xff", 2, "mem", NULL, 0, &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "mem: not an ONNX model"));
}

static void dims_parse_accepts_bindings_and_refuses_bad_ones(void **state) {
  (void)state;
  model_dim *d;
  size_t n;
  char why[256];
  assert_int_equal(config_value_dims(" batch=8 , seq = 128,", &d, &n, why, sizeof why), 0);
  assert_int_equal(n, 2);
  assert_string_equal(d[0].name, "batch");
  assert_int_equal(d[0].value, 8);
  assert_string_equal(d[1].name, "seq");
  assert_int_equal(d[1].value, 128);
  config_dims_free(d, n);
  assert_int_equal(config_value_dims("", &d, &n, why, sizeof why), 0);
  assert_int_equal(n, 0);
  const char *bad[] = {"batch", "batch=0",         "batch=-1",      "batch=x",
                       "=3",    "batch=8,batch=9", "batch=8 seq=3", "batch=99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    why[0] = '\0';
    if (config_value_dims(bad[i], &d, &n, why, sizeof why) != -1)
      fail_msg("'%s' was accepted", bad[i]);
    assert_true(why[0] != '\0');
    assert_null(d);
  }
}

/* The value of property name of n, or NULL. */
static const char *prop(const model_node *n, const char *name) {
  for (size_t i = 0; i < n->property_count; i++)
    if (!strcmp(n->properties[i].name, name))
      return n->properties[i].value;
  return NULL;
}

static void gemm_bias_takes_each_broadcast_form_and_beta_only_when_not_one(void **state) {
  (void)state;
  model_info m;
  read_ok("gemm_bias.onnx", NULL, &m);
  static const struct {
    const char *node, *structure;
  } want[] = {
      {"scalar", "operator=MatMul;dtype=float32;shape=8,16,32;bias=scalar"},
      {"scalar1", "operator=MatMul;dtype=float32;shape=8,16,32;bias=scalar"},
      {"n", "operator=MatMul;dtype=float32;shape=8,16,32;bias=n"},
      {"one_n", "operator=MatMul;dtype=float32;shape=8,16,32;bias=n"},
      {"m", "operator=MatMul;dtype=float32;shape=8,16,32;bias=m"},
      {"mn", "operator=MatMul;dtype=float32;shape=8,16,32;bias=mn"},
      {"half", "operator=MatMul;dtype=float32;shape=8,16,32;beta=0.5;bias=n"},
      /* beta 0: C adds nothing, a plain product */
      {"zero", "operator=MatMul;dtype=float32;shape=8,16,32"},
      {"alpha_t", "operator=MatMul;dtype=float32;shape=8,16,32;alpha=2;bias=n;trans_a=1"},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const model_node *n = node_named(&m, want[i].node);
    assert_non_null(n);
    assert_string_equal(n->structure, want[i].structure);
  }
  model_info_free(&m);
  /* a C that does not broadcast to the output is refused, naming the node */
  char err[512] = "";
  assert_int_equal(model_read(model_path("bad_bias.onnx"), NULL, 0, &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "bad_bias.onnx: node /bad/Gemm (Gemm): C does not broadcast"));
}

static void batched_matmul_broadcasts_as_onnx_and_folds_a_shared_b(void **state) {
  (void)state;
  model_info m;
  read_ok("broadcast.onnx", NULL, &m);
  /* A[4,1,16,32] x B[1,5,32,8]: 20 products of 4 As and 5 Bs */
  const model_node *n = node_named(&m, "cross");
  assert_shape(n, 16, 8, 32);
  assert_string_equal(prop(n, "batch"), "20");
  assert_string_equal(prop(n, "batch_a"), "4");
  assert_string_equal(prop(n, "batch_b"), "5");
  /* one B for the whole batch: (6 x 16) rows, no batch */
  n = node_named(&m, "shared_b");
  assert_shape(n, 96, 8, 32);
  assert_null(prop(n, "batch"));
  assert_int_equal(n->count, 2); /* shared_b2: the same weight again */
  /* one A, six Bs */
  n = node_named(&m, "shared_a");
  assert_shape(n, 16, 8, 32);
  assert_string_equal(prop(n, "batch"), "6");
  assert_string_equal(prop(n, "batch_a"), "1");
  assert_null(prop(n, "batch_b"));
  /* B's batch dimensions all 1: a shared B too */
  n = node_named(&m, "ones_b");
  assert_shape(n, 64, 8, 32);
  assert_null(prop(n, "batch"));
  model_info_free(&m);
  char err[512] = "";
  assert_int_equal(model_read(model_path("no_broadcast.onnx"), NULL, 0, &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "node /bad/MatMul (MatMul): batch dimensions do not broadcast"));
}

static void workload_names_of_one_model_never_collide(void **state) {
  (void)state;
  model_info m;
  read_ok("names.onnx", NULL, &m);
  assert_int_equal(m.structure_count, 6);
  char names[6][128];
  for (size_t i = 0; i < 6; i++)
    model_workload_name(&m, i, "names", names[i], sizeof names[i]);
  assert_string_equal(names[0], "names.-senc-sMatMul");
  assert_string_equal(names[1], "names._enc_MatMul");
  assert_string_equal(names[2], "names.MatMul-n2"); /* unnamed, index 2 */
  assert_string_equal(names[3], "names.MatMul_2");
  assert_string_equal(names[4], "names.a--b");
  assert_string_equal(names[5], "names.a----b");
  /* all of them added: no "exists already" */
  config_settings cfg;
  memset(&cfg, 0, sizeof cfg);
  char err[512] = "";
  if (model_workloads_add(&cfg, &m, "names", (config_origin){NULL, 0}, err, sizeof err) != 6)
    fail_msg("%s", err);
  config_free(&cfg);
  model_info_free(&m);
}

static void any_dim_param_binds_quoted_and_every_unbound_one_is_named(void **state) {
  (void)state;
  model_info m;
  read_ok("decoder.onnx", NULL, &m);
  assert_string_equal(m.unbound, "batch, \"past_sequence_length + 1\"");
  assert_int_equal(m.skipped_count, 2);
  assert_string_equal(m.skipped[0].symbol, "batch");
  char hint[200];
  model_bind_hint("past_sequence_length + 1", 0, hint, sizeof hint);
  assert_string_equal(hint, "--dims '\"past_sequence_length + 1\"=N'");
  model_bind_hint("past_sequence_length + 1", 1, hint, sizeof hint);
  assert_string_equal(hint, "dims = \"past_sequence_length + 1\"=N");
  model_info_free(&m);
  read_ok("decoder.onnx", "batch=2, \"past_sequence_length + 1\"=129", &m);
  assert_int_equal(m.skipped_count, 0);
  assert_string_equal(m.unbound, "");
  const model_node *n = node_named(&m, "/h.0/attn/MatMul");
  assert_shape(n, 1, 129, 64);
  assert_string_equal(prop(n, "batch"), "24");
  assert_string_equal(m.binding, "batch=2,\"past_sequence_length + 1\"=129");
  model_info_free(&m);
}

static void a_binding_enters_the_representatives_key_and_the_file_hash_stays(void **state) {
  (void)state;
  model_info a, b, none;
  /* an unused binding (rows) is not part of it: the same key */
  read_ok("encoder.onnx", "seq=32, batch=2, rows=7", &a);
  read_ok("encoder.onnx", "batch=1,seq=64", &b);
  assert_string_equal(a.digest, b.digest); /* the file's sha256 */
  assert_string_equal(a.binding, "batch=2,seq=32");
  char want[200];
  snprintf(want, sizeof want, "%s;dims=batch=2,seq=32", a.digest);
  assert_string_equal(a.key_digest, want);
  snprintf(want, sizeof want, "%s;dims=batch=1,seq=64", b.digest);
  assert_string_equal(b.key_digest, want);
  /* the two bindings' workloads: the representative's digests differ */
  config_settings cfg;
  memset(&cfg, 0, sizeof cfg);
  char err[512] = "";
  assert_true(model_workloads_add(&cfg, &a, "enc-1", (config_origin){NULL, 0}, err, sizeof err) >
              0);
  assert_true(model_workloads_add(&cfg, &b, "enc-2", (config_origin){NULL, 0}, err, sizeof err) >
              0);
  size_t keyed = 0;
  for (size_t i = 0; i < cfg.workload_count; i++)
    if (cfg.workloads[i].model_file) {
      keyed++;
      assert_non_null(strstr(cfg.workloads[i].model_digest, ";dims=batch="));
    }
  assert_int_equal(keyed, 2);
  config_free(&cfg);
  /* a model that uses no binding keeps the file's digest as the key */
  read_ok("three.onnx", "batch=4", &none);
  assert_string_equal(none.binding, "");
  assert_string_equal(none.key_digest, none.digest);
  model_info_free(&none);
  model_info_free(&a);
  model_info_free(&b);
}

static void reducesum_noop_with_empty_axes_is_an_identity(void **state) {
  (void)state;
  model_info m;
  read_ok("noop.onnx", NULL, &m);
  assert_int_equal(m.node_count, 1);
  assert_string_equal(m.nodes[0].name, "full");
  assert_int_equal(m.skipped_count, 1);
  assert_string_equal(m.skipped[0].name, "identity");
  assert_int_equal(m.skipped[0].identity, 1);
  model_info_free(&m);
}

/* A file truncated and rewritten by another process while it is read (cp
 * over it): each read succeeds or fails naming the file, never a signal
 * (a mapping of the file raised SIGBUS here). */
static void a_file_truncated_while_read_is_an_error_never_a_signal(void **state) {
  (void)state;
  char src[4200], victim[4200], cmd[9000];
  snprintf(src, sizeof src, "%s", model_path("big.onnx"));
  snprintf(victim, sizeof victim, "%s", model_path("victim.onnx"));
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, victim);
  assert_int_equal(system(cmd), 0);
  FILE *f = fopen(src, "rb");
  assert_non_null(f);
  static char data[8 << 20];
  size_t size = fread(data, 1, sizeof data, f);
  fclose(f);
  pid_t writer = fork();
  assert_true(writer >= 0);
  if (writer == 0) { /* truncate, then write it back in pieces, for ever */
    for (;;) {
      FILE *w = fopen(victim, "r+b");
      if (!w)
        _exit(1);
      if (ftruncate(fileno(w), 0) != 0)
        _exit(1);
      for (size_t k = 0; k < size; k += 65536)
        fwrite(data + k, 1, size - k < 65536 ? size - k : 65536, w), fflush(w);
      fclose(w);
    }
  }
  size_t ok = 0, failed = 0;
  for (int i = 0; i < 300; i++) {
    model_info m;
    char err[512] = "";
    if (model_read(victim, NULL, 0, &m, err, sizeof err) == 0) {
      ok++;
      model_info_free(&m);
    } else {
      failed++;
      if (!strstr(err, victim))
        fail_msg("the error does not name the file: %s", err);
    }
  }
  kill(writer, SIGKILL);
  int st;
  waitpid(writer, &st, 0);
  assert_int_equal(ok + failed, 300);
}

static void dims_take_quoted_names_and_several_bindings(void **state) {
  (void)state;
  config_binding *b;
  size_t n;
  char why[256], canon[256];
  assert_int_equal(config_value_bindings("seq=128, batch=1 | batch=8, \"a \\\"b\\\" + 1\"=3", &b,
                                         &n, why, sizeof why),
                   0);
  assert_int_equal(n, 2);
  config_dims_canonical(b[0].dims, b[0].count, canon, sizeof canon);
  assert_string_equal(canon, "batch=1,seq=128");
  assert_string_equal(b[1].dims[1].name, "a \"b\" + 1");
  config_dims_canonical(b[1].dims, b[1].count, canon, sizeof canon);
  assert_string_equal(canon, "\"a \\\"b\\\" + 1\"=3,batch=8");
  config_bindings_free(b, n);
  /* the canonical text parses back as the binding */
  model_dim *d;
  assert_int_equal(config_value_dims(canon, &d, &n, why, sizeof why), 0);
  assert_int_equal(n, 2);
  assert_string_equal(d[0].name, "a \"b\" + 1");
  config_dims_free(d, n);
  assert_int_equal(config_value_bindings("", &b, &n, why, sizeof why), 0);
  assert_int_equal(n, 0);
  const char *bad[] = {"batch=1 |", "| batch=1", "batch=1 | batch=1", "\"unterminated=1", "\"\"=1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (config_value_bindings(bad[i], &b, &n, why, sizeof why) != -1)
      fail_msg("'%s' was accepted", bad[i]);
  /* one binding only where one is taken */
  assert_int_equal(config_value_dims("batch=1 | batch=2", &d, &n, why, sizeof why), -1);
}

/* config_workload_named through its index: every name found after the
 * workloads grew, none after an add that failed and was undone. */
static void workloads_are_found_by_name_as_they_grow_and_shrink(void **state) {
  (void)state;
  model_info m;
  read_ok("gemm_bias.onnx", NULL, &m); /* 7 structures */
  config_settings cfg;
  memset(&cfg, 0, sizeof cfg);
  char err[512], name[300];
  for (int k = 0; k < 4; k++) {
    snprintf(name, sizeof name, "g%d", k);
    assert_int_equal(model_workloads_add(&cfg, &m, name, (config_origin){NULL, 0}, err, sizeof err),
                     7);
    for (size_t i = 0; i < cfg.workload_count; i++)
      assert_ptr_equal(config_workload_named(&cfg, cfg.workloads[i].name), &cfg.workloads[i]);
  }
  assert_null(config_workload_named(&cfg, "g9.n"));
  /* a second g1: refused, the configuration as it was, and still indexed */
  assert_int_equal(model_workloads_add(&cfg, &m, "g1", (config_origin){NULL, 0}, err, sizeof err),
                   -1);
  assert_non_null(strstr(err, "exists already"));
  assert_int_equal(cfg.workload_count, 28);
  assert_non_null(config_workload_named(&cfg, "g3.mn"));
  assert_null(config_workload_named(&cfg, "g4.mn"));
  config_free(&cfg);
  model_info_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mlp_lists_matmul_gemm_and_reducesum_with_structure),
      cmocka_unit_test(digest_is_the_files_sha256_as_sha256sum_prints_it),
      cmocka_unit_test(symbolic_dimension_is_bound_or_the_node_skipped_naming_it),
      cmocka_unit_test(nodes_of_one_structure_are_counted_once),
      cmocka_unit_test(node_without_a_shape_is_skipped_with_the_reason),
      cmocka_unit_test(broken_files_are_refused_naming_the_file_and_node),
      cmocka_unit_test(dims_parse_accepts_bindings_and_refuses_bad_ones),
      cmocka_unit_test(gemm_bias_takes_each_broadcast_form_and_beta_only_when_not_one),
      cmocka_unit_test(batched_matmul_broadcasts_as_onnx_and_folds_a_shared_b),
      cmocka_unit_test(workload_names_of_one_model_never_collide),
      cmocka_unit_test(any_dim_param_binds_quoted_and_every_unbound_one_is_named),
      cmocka_unit_test(a_binding_enters_the_representatives_key_and_the_file_hash_stays),
      cmocka_unit_test(reducesum_noop_with_empty_axes_is_an_identity),
      cmocka_unit_test(a_file_truncated_while_read_is_an_error_never_a_signal),
      cmocka_unit_test(dims_take_quoted_names_and_several_bindings),
      cmocka_unit_test(workloads_are_found_by_name_as_they_grow_and_shrink),
  };
  return cmocka_run_group_tests_name("model", tests, setup, teardown);
}
