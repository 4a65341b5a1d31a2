/*
 * test_model.c: the ONNX model reader (host/model) over models written at
 * test time by make_models.py (Debian's /usr/bin/python3 with python3-onnx):
 * the nodes listed with shapes and structure, symbolic dimensions, nodes of
 * one structure counted, unknown shapes skipped with the reason, broken
 * files refused naming file and node, the digest as sha256sum prints it,
 * and the --dims syntax.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mlp_lists_matmul_gemm_and_reducesum_with_structure),
      cmocka_unit_test(digest_is_the_files_sha256_as_sha256sum_prints_it),
      cmocka_unit_test(symbolic_dimension_is_bound_or_the_node_skipped_naming_it),
      cmocka_unit_test(nodes_of_one_structure_are_counted_once),
      cmocka_unit_test(node_without_a_shape_is_skipped_with_the_reason),
      cmocka_unit_test(broken_files_are_refused_naming_the_file_and_node),
      cmocka_unit_test(dims_parse_accepts_bindings_and_refuses_bad_ones),
  };
  return cmocka_run_group_tests_name("model", tests, setup, teardown);
}
