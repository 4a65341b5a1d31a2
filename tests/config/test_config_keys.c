/*
 * test_config_keys.c: the configuration's key table (host/config/
 * config_keys.h) and the reference that documents it: config/README.md's
 * key table of each section lists exactly the table's keys of that
 * section, in the table's order, and the parser and the visitor know each
 * of them (a key in the table is accepted, and `config show` visits it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_keys.h"
#include "harness.h"

static const struct {
  const char *section;
  const char *key;
} table[] = {
#define KEY(kind, section, key) {#section, #key},
    CALHOST_CONFIG_KEYS(KEY)
#undef KEY
};
enum { TABLE_COUNT = sizeof table / sizeof table[0] };

/* The keys config/README.md's table under "## [SECTION ...]" lists (the
 * rows whose first cell is a `key`), joined with ',' into out. Returns the
 * number of such sections found (1 when the reference has the section). */
static int readme_keys(const char *readme, const char *section, char *out, size_t cap) {
  char heading[64];
  const char *at;
  int in_table = 0;
  out[0] = '\0';
  snprintf(heading, sizeof heading, "\n## [%s", section);
  for (at = strstr(readme, heading); at; at = strstr(at + 1, heading))
    if (at[strlen(heading)] == ']' || at[strlen(heading)] == ' ')
      break; /* "## [plugin NAME]", not "## [plugins]" */
  if (!at)
    return 0;
  at += strlen(heading);
  for (const char *line = strchr(at, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
    const char *l = line + 1;
    if (!strncmp(l, "## ", 3))
      break; /* the next section */
    if (!strncmp(l, "| Key |", 7)) {
      in_table = 1;
      continue;
    }
    if (in_table && l[0] != '|')
      break; /* the end of the section's key table */
    if (in_table && !strncmp(l, "| `", 3)) {
      const char *end = strchr(l + 3, '`');
      assert_non_null(end);
      snprintf(out + strlen(out), cap - strlen(out), "%s%.*s", out[0] ? "," : "",
               (int)(end - (l + 3)), l + 3);
    }
  }
  return 1;
}

static void table_keys(const char *section, char *out, size_t cap) {
  out[0] = '\0';
  for (size_t i = 0; i < TABLE_COUNT; i++)
    if (!strcmp(table[i].section, section))
      snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "," : "", table[i].key);
}

/* Every section of the table has a key table in config/README.md listing
 * exactly its keys, in order. */
static void test_readme_lists_the_table_keys(void **state) {
  (void)state;
  char *readme = harness_slurp_source("config/README.md", NULL);
  assert_non_null(readme);
  for (size_t i = 0; i < TABLE_COUNT; i++) {
    char documented[1024], keys[1024];
    if (i && !strcmp(table[i].section, table[i - 1].section))
      continue;
    if (!readme_keys(readme, table[i].section, documented, sizeof documented))
      fail_msg("config/README.md has no section [%s]", table[i].section);
    table_keys(table[i].section, keys, sizeof keys);
    if (strcmp(documented, keys) != 0)
      fail_msg("config/README.md [%s] lists keys '%s'; config_keys.h has '%s'", table[i].section,
               documented, keys);
  }
  free(readme);
}

/* The reader itself is held to it: a README row added for a key the table
 * lacks (or a row missing) is a mismatch. */
static void test_readme_reader_sees_a_difference(void **state) {
  (void)state;
  const char *doc = "x\n## [store]\n\ntext\n\n| Key | Type |\n|-----|------|\n"
                    "| `path` | path |\n| `persistence_enabled` | boolean |\n| `extra` | x |\n\n"
                    "## [plugins]\n";
  char documented[256], keys[256];
  assert_int_equal(readme_keys(doc, "store", documented, sizeof documented), 1);
  assert_string_equal(documented, "path,persistence_enabled,extra");
  table_keys("store", keys, sizeof keys);
  assert_string_not_equal(documented, keys);
  assert_int_equal(readme_keys(doc, "lookup", documented, sizeof documented), 0);
}

typedef struct seen {
  int hits[TABLE_COUNT];
} seen;

static int record(void *user, const char *section, const char *key, const char *value,
                  config_origin origin) {
  seen *s = user;
  (void)value;
  (void)origin;
  for (size_t i = 0; i < TABLE_COUNT; i++)
    if (!strncmp(section, table[i].section, strlen(table[i].section)) &&
        (section[strlen(table[i].section)] == '\0' || section[strlen(table[i].section)] == ' ') &&
        !strcmp(key, table[i].key))
      s->hits[i]++;
  return 0;
}

/* A configuration setting every key of the table loads (the parser knows
 * each), and config_visit visits each exactly once. */
static void test_parser_and_visitor_know_every_key(void **state) {
  (void)state;
  const char *text = "[store]\npath = /tmp/s.txt\npersistence_enabled = false\n"
                     "[plugins]\ndirectories = /a\npaths = /b.so\nenabled = x\ndisabled = y\n"
                     "[calibration]\ncpus = 0\nthreads = 1\nrigor = quick\nstrategy = random\n"
                     "budget = 5\ntime_budget = 3\nrepetitions = 2\nplugin_timeout = 9\n"
                     "[lookup]\nforce_portable = true\nbackends = x\n"
                     "[workload w]\noperator = MatMul\ndtype = float32\nshape = 1,2,3\n"
                     "model = /m.onnx\n"
                     "[model m]\nfile = /m.onnx\ndims = batch=1\nbackends = x\n"
                     "[plugin x]\ndevices = 0\ntime_budget = 4\n";
  config_settings cfg;
  char err[512];
  seen s = {{0}};
  assert_int_equal(config_load_string(text, strlen(text), "/t/keys.ini", &cfg, err, sizeof err), 0);
  assert_int_equal(config_visit(&cfg, record, &s), 0);
  for (size_t i = 0; i < TABLE_COUNT; i++)
    if (s.hits[i] != 1)
      fail_msg("[%s] %s visited %d times", table[i].section, table[i].key, s.hits[i]);
  config_free(&cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_readme_lists_the_table_keys),
      cmocka_unit_test(test_readme_reader_sees_a_difference),
      cmocka_unit_test(test_parser_and_visitor_know_every_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
