/*
 * test_identity.c: the processor description string. It is a pure function
 * of processor_info (synthetic infos), stable across calls on this
 * machine, and sensitive to the cache topology: hwloc XML topologies that
 * differ only in the L2 size, or CPU sets that reach the caches differently,
 * give different strings; equal topologies give equal strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "processor/processor.h"

/* A 1-package, 2-core, 2-PUs-per-core machine: L3 shared by all, one L2 and
 * one L1d per core. The two %llu: the L2 sizes of core 0 and core 1. */
static const char xml_template[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"2.0\">\n"
    " <object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\""
    " allowed_cpuset=\"0x0000000f\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\""
    " allowed_nodeset=\"0x00000001\" gp_index=\"1\">\n"
    "  <info name=\"Architecture\" value=\"x86_64\"/>\n"
    "  <object type=\"Package\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"13\">\n"
    "   <info name=\"CPUVendor\" value=\"GenuineTest\"/>\n"
    "   <info name=\"CPUModel\" value=\"Test CPU; Model=9\"/>\n"
    "   <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x0000000f\" "
    "complete_cpuset=\"0x0000000f\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"14\""
    " local_memory=\"1073741824\"/>\n"
    "   <object type=\"L3Cache\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"12\" cache_size=\"8388608\""
    " depth=\"3\" cache_linesize=\"64\" cache_associativity=\"0\" cache_type=\"0\">\n"
    "    <object type=\"L2Cache\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"6\" cache_size=\"%llu\""
    " depth=\"2\" cache_linesize=\"64\" cache_associativity=\"0\" cache_type=\"0\">\n"
    "     <object type=\"L1Cache\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"5\" cache_size=\"32768\""
    " depth=\"1\" cache_linesize=\"64\" cache_associativity=\"0\" cache_type=\"1\">\n"
    "      <object type=\"Core\" os_index=\"0\" cpuset=\"0x00000003\" "
    "complete_cpuset=\"0x00000003\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"4\">\n"
    "       <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"2\"/>\n"
    "       <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"3\"/>\n"
    "      </object>\n"
    "     </object>\n"
    "    </object>\n"
    "    <object type=\"L2Cache\" cpuset=\"0x0000000c\" complete_cpuset=\"0x0000000c\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"11\" cache_size=\"%llu\""
    " depth=\"2\" cache_linesize=\"64\" cache_associativity=\"0\" cache_type=\"0\">\n"
    "     <object type=\"L1Cache\" cpuset=\"0x0000000c\" complete_cpuset=\"0x0000000c\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"10\" cache_size=\"32768\""
    " depth=\"1\" cache_linesize=\"64\" cache_associativity=\"0\" cache_type=\"1\">\n"
    "      <object type=\"Core\" os_index=\"1\" cpuset=\"0x0000000c\" "
    "complete_cpuset=\"0x0000000c\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"9\">\n"
    "       <object type=\"PU\" os_index=\"2\" cpuset=\"0x00000004\" complete_cpuset=\"0x00000004\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"7\"/>\n"
    "       <object type=\"PU\" os_index=\"3\" cpuset=\"0x00000008\" complete_cpuset=\"0x00000008\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"8\"/>\n"
    "      </object>\n"
    "     </object>\n"
    "    </object>\n"
    "   </object>\n"
    "  </object>\n"
    " </object>\n"
    "</topology>\n";

static char *make_xml2(unsigned long long l2_core0, unsigned long long l2_core1) {
  size_t cap = sizeof xml_template + 64;
  char *xml = malloc(cap);
  assert_non_null(xml);
  snprintf(xml, cap, xml_template, l2_core0, l2_core1);
  return xml;
}

static char *make_xml(unsigned long long l2) {
  return make_xml2(l2, l2);
}

static void identify_xml(unsigned long long l2, const int *cpus, size_t n, processor_info *info) {
  char err[256];
  char *xml = make_xml(l2);
  if (processor_identify_xml(xml, cpus, n, info, err, sizeof err) != 0)
    fail_msg("identify_xml: %s", err);
  free(xml);
}

/* Everything but the ISA (which comes from the running CPU). */
static const char *after_isa(const char *description) {
  const char *p = strstr(description, ";isa=");
  assert_non_null(p);
  p = strchr(p + 1, ';');
  assert_non_null(p);
  return p;
}

static void xml_topology_is_described(void **state) {
  processor_info info;
  (void)state;
  identify_xml(1048576, NULL, 0, &info);
  assert_string_equal(info.arch, "x86_64");
  assert_string_equal(info.vendor, "GenuineTest");
  assert_int_equal(info.cores, 2);
  assert_int_equal(info.pus, 4);
  assert_int_equal(info.cache_count, 3);
  assert_int_equal(info.caches[0].level, 1);
  assert_int_equal(info.caches[0].kind, CALHOST_CACHE_DATA);
  assert_int_equal(info.caches[0].size, 32768);
  assert_int_equal(info.caches[0].line_size, 64);
  assert_int_equal(info.caches[0].pus_per_instance, 2);
  assert_int_equal(info.caches[0].instances, 2);
  assert_int_equal(info.caches[1].level, 2);
  assert_int_equal(info.caches[2].level, 3);
  assert_int_equal(info.caches[2].instances, 1);
  {
    static const char prefix[] = "x86_64;vendor=GenuineTest;model=Test CPU_ Model_9;isa=";
    assert_int_equal(strncmp(info.description, prefix, sizeof prefix - 1), 0);
  }
}

static void same_topology_same_string(void **state) {
  processor_info a, b;
  (void)state;
  identify_xml(1048576, NULL, 0, &a);
  identify_xml(1048576, NULL, 0, &b);
  assert_string_equal(a.description, b.description);
  assert_string_equal(after_isa(a.description),
                      ";l1d=32768/2/2;l2=1048576/2/2;l3=8388608/4/1;cores=2;pus=4");
}

static void different_l2_size_different_string(void **state) {
  processor_info a, b;
  (void)state;
  identify_xml(1048576, NULL, 0, &a);
  identify_xml(2097152, NULL, 0, &b);
  assert_string_not_equal(a.description, b.description);
  assert_string_equal(after_isa(b.description),
                      ";l1d=32768/2/2;l2=2097152/2/2;l3=8388608/4/1;cores=2;pus=4");
}

static void cpu_set_shapes_the_string(void **state) {
  static const int same_core[] = {0, 1}, two_cores[] = {0, 2};
  processor_info a, b;
  char err[128];
  char *xml;
  (void)state;
  identify_xml(1048576, same_core, 2, &a);
  identify_xml(1048576, two_cores, 2, &b);
  assert_string_equal(after_isa(a.description),
                      ";l1d=32768/2/1;l2=1048576/2/1;l3=8388608/4/1;cores=1;pus=2");
  assert_string_equal(after_isa(b.description),
                      ";l1d=32768/2/2;l2=1048576/2/2;l3=8388608/4/1;cores=2;pus=2");
  /* a CPU the topology lacks is an error */
  xml = make_xml(1048576);
  {
    static const int missing[] = {0, 7};
    assert_int_equal(processor_identify_xml(xml, missing, 2, &a, err, sizeof err), -1);
    assert_non_null(strstr(err, "7"));
  }
  assert_int_equal(processor_identify_xml("<not xml", NULL, 0, &a, err, sizeof err), -1);
  free(xml);
}

static void hybrid_levels_list_each_kind(void **state) {
  static const int core0[] = {0, 1};
  processor_info info;
  char err[128];
  char *xml = make_xml2(1048576, 2097152);
  (void)state;
  assert_int_equal(processor_identify_xml(xml, NULL, 0, &info, err, sizeof err), 0);
  assert_string_equal(after_isa(info.description),
                      ";l1d=32768/2/2;l2=2097152/2/1;l2=1048576/2/1;l3=8388608/4/1;cores=2;pus=4");
  assert_int_equal(processor_identify_xml(xml, core0, 2, &info, err, sizeof err), 0);
  assert_string_equal(after_isa(info.description),
                      ";l1d=32768/2/1;l2=1048576/2/1;l3=8388608/4/1;cores=1;pus=2");
  free(xml);
}

static processor_info synthetic(void) {
  processor_info info;
  memset(&info, 0, sizeof info);
  strcpy(info.arch, "x86_64");
  strcpy(info.vendor, "AuthenticAMD");
  strcpy(info.model, "  AMD   EPYC 9654 96-Core Processor ");
  strcpy(info.features, "avx2 fma sse4_2 avx");
  info.cache_count = 3;
  info.caches[0] = (processor_cache_level){1, CALHOST_CACHE_DATA, 32768, 64, 2, 4};
  info.caches[1] = (processor_cache_level){2, CALHOST_CACHE_UNIFIED, 1048576, 64, 2, 4};
  info.caches[2] = (processor_cache_level){3, CALHOST_CACHE_UNIFIED, 33554432, 64, 16, 1};
  info.cores = 4;
  info.pus = 8;
  return info;
}

static void describe_is_a_pure_function(void **state) {
  processor_info info = synthetic(), other;
  char a[CALHOST_PROCESSOR_DESCRIPTION_MAX], b[CALHOST_PROCESSOR_DESCRIPTION_MAX];
  size_t n;
  (void)state;
  n = processor_describe(&info, a, sizeof a);
  assert_string_equal(a, "x86_64;vendor=AuthenticAMD;model=AMD EPYC 9654 96-Core Processor;"
                         "isa=sse4_2,avx,fma,avx2;l1d=32768/2/4;l2=1048576/2/4;"
                         "l3=33554432/16/1;cores=4;pus=8");
  assert_int_equal(n, strlen(a));
  processor_describe(&info, b, sizeof b);
  assert_string_equal(a, b);
  /* the description field is not an input */
  strcpy(info.description, "junk");
  processor_describe(&info, b, sizeof b);
  assert_string_equal(a, b);

  /* each part of the topology counts */
  other = synthetic();
  other.caches[1].size = 2097152;
  processor_describe(&other, b, sizeof b);
  assert_string_not_equal(a, b);
  other = synthetic();
  other.caches[2].pus_per_instance = 8;
  processor_describe(&other, b, sizeof b);
  assert_string_not_equal(a, b);
  other = synthetic();
  other.caches[2].instances = 2;
  processor_describe(&other, b, sizeof b);
  assert_string_not_equal(a, b);
  other = synthetic();
  other.pus = 4;
  processor_describe(&other, b, sizeof b);
  assert_string_not_equal(a, b);
  other = synthetic();
  strcpy(other.features, "sse4_2 avx fma avx2 avx512f");
  processor_describe(&other, b, sizeof b);
  assert_string_not_equal(a, b);
  /* ... but not the line size, nor the order features are listed in */
  other = synthetic();
  other.caches[0].line_size = 128;
  strcpy(other.features, "fma avx sse4_2 avx2");
  processor_describe(&other, b, sizeof b);
  assert_string_equal(a, b);

  /* snprintf-like truncation */
  assert_int_equal(processor_describe(&info, b, 10), n);
  assert_int_equal(strlen(b), 9);
}

static void text_fields_are_sanitized(void **state) {
  processor_info info = synthetic();
  char d[CALHOST_PROCESSOR_DESCRIPTION_MAX];
  (void)state;
  strcpy(info.model, "A;B=C,D\tE\n");
  info.vendor[0] = '\0';
  info.features[0] = '\0';
  info.cache_count = 0;
  processor_describe(&info, d, sizeof d);
  assert_string_equal(d, "x86_64;vendor=unknown;model=A_B_C_D E;isa=none;cores=4;pus=8");
}

/* Whether hwloc can see this machine's caches: through CPUID (its x86
 * backend, which it disables under valgrind: tests/reliability/run.sh sets
 * CALHOST_UNDER_VALGRIND) or through Linux's sysfs, which some virtual
 * machines leave without cache directories (seen on a guest whose
 * /sys/devices/system/cpu/cpu0/cache is missing: under valgrind the
 * description there has no cache). */
static int caches_visible(void) {
  const char *e = getenv("CALHOST_UNDER_VALGRIND");
  int valgrind = e && e[0] && strcmp(e, "0") != 0;
  return !valgrind || access("/sys/devices/system/cpu/cpu0/cache", F_OK) == 0;
}

static void this_machine_is_stable_across_calls(void **state) {
  processor_info a, b;
  char err[256], again[CALHOST_PROCESSOR_DESCRIPTION_MAX];
  (void)state;
  if (processor_identify(NULL, 0, &a, err, sizeof err) != 0)
    fail_msg("%s", err);
  assert_int_equal(processor_identify(NULL, 0, &b, err, sizeof err), 0);
  assert_string_equal(a.description, b.description);
  processor_describe(&a, again, sizeof again);
  assert_string_equal(a.description, again);
  assert_true(a.pus >= 1);
  assert_true(a.cores >= 1 && a.cores <= a.pus);
  assert_true(a.arch[0] != '\0');
  assert_non_null(strstr(a.description, ";pus="));
  printf("# this machine: %s\n# features: %s\n", a.description, a.features);
#if defined(__x86_64__)
  assert_string_equal(a.arch, "x86_64");
  if (caches_visible())
    assert_true(a.cache_count >= 1);
#endif
}

static void features_are_known_names_in_canonical_order(void **state) {
  processor_info a;
  const char *const *known = processor_known_features();
  char copy[sizeof a.features], *save = NULL, *tok;
  size_t last = 0;
  int first = 1;
  (void)state;
  assert_int_equal(processor_identify(NULL, 0, &a, NULL, 0), 0);
  strcpy(copy, a.features);
  for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    size_t i = 0;
    while (known[i] && strcmp(known[i], tok) != 0)
      i++;
    if (!known[i])
      fail_msg("unknown feature %s", tok);
    assert_true(first || i > last);
    last = i;
    first = 0;
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(xml_topology_is_described),
      cmocka_unit_test(same_topology_same_string),
      cmocka_unit_test(different_l2_size_different_string),
      cmocka_unit_test(cpu_set_shapes_the_string),
      cmocka_unit_test(hybrid_levels_list_each_kind),
      cmocka_unit_test(describe_is_a_pure_function),
      cmocka_unit_test(text_fields_are_sanitized),
      cmocka_unit_test(this_machine_is_stable_across_calls),
      cmocka_unit_test(features_are_known_names_in_canonical_order),
  };
  return cmocka_run_group_tests_name("processor_identity", tests, NULL, NULL);
}
