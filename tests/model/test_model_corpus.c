/*
 * test_model_corpus.c: the reader over every model of Debian's
 * libonnx-testdata (about 1,000 files written by the ONNX project): each
 * reads without a crash or a leak (under the sanitizers and valgrind), and
 * lists exactly the MatMul and Gemm nodes whose inputs have static shapes,
 * as corpus_expect.py (python3-onnx, the oracle) counts them.
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

#include "model/model.h"

#define CORPUS "/usr/share/libonnx-testdata"

static void every_corpus_model_lists_its_static_matmul_and_gemm_nodes(void **state) {
  (void)state;
  char dir[] = "/tmp/calhost-corpus-XXXXXX", cmd[8192], expect[4200];
  assert_non_null(mkdtemp(dir));
  snprintf(expect, sizeof expect, "%s/expect.tsv", dir);
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/model/corpus_expect.py' '%s' '%s'",
           getenv("CALHOST_SOURCE_DIR"), CORPUS, expect);
  assert_int_equal(system(cmd), 0);
  FILE *f = fopen(expect, "r");
  assert_non_null(f);
  char line[8192];
  size_t files = 0, listed = 0;
  while (fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t');
    assert_non_null(tab);
    *tab = '\0';
    size_t want = strtoul(tab + 1, NULL, 10);
    model_info m;
    char err[1024];
    if (model_read(line, NULL, 0, &m, err, sizeof err) != 0)
      fail_msg("%s", err);
    size_t got = 0;
    for (size_t i = 0; i < m.node_count; i++)
      got +=
          !strcmp(m.nodes[i].onnx_operator, "MatMul") || !strcmp(m.nodes[i].onnx_operator, "Gemm");
    if (got != want)
      fail_msg("%s: %zu MatMul/Gemm nodes listed, the oracle counts %zu", line, got, want);
    listed += got;
    files++;
    model_info_free(&m);
  }
  fclose(f);
  print_message("%zu models, %zu MatMul/Gemm nodes listed\n", files, listed);
  assert_true(files >= 1000);
  assert_true(listed > 0);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_corpus_model_lists_its_static_matmul_and_gemm_nodes),
  };
  return cmocka_run_group_tests_name("model_corpus", tests, NULL, NULL);
}
