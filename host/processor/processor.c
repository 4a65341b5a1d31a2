/*
 * processor.c: processor identity (hwloc topology + cpuid / auxv ISA
 * features), the canonical processor description string, pinning, and the
 * calibration targets. The grammar of the description string is in
 * processor.h.
 */
#define _GNU_SOURCE
#include "base/str.h"
#include "processor.h"

#include <ctype.h>
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

/* ---- ISA features --------------------------------------------------------- */

/* The canonical order of features, in the info and in the string. */
static const char *const known_features[] = {
    /* x86 */
    "sse4_2", "avx", "f16c", "fma", "avx2", "avx_vnni", "avx512f", "avx512dq", "avx512cd",
    "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_int8",
    "amx_bf16",
    /* aarch64 */
    "asimd", "fp16", "dotprod", "i8mm", "bf16", "sve", "sve2", "sme", NULL};

const char *const *processor_known_features(void) {
  return known_features;
}

/* Where a feature shows: bit `bit` of register word `word` (below), usable
 * only when the OS saves the state the feature needs (`needs`). */
typedef struct isa_bit {
  unsigned char word, bit, needs;
  const char *name;
} isa_bit;

enum { NEEDS_NONE, NEEDS_YMM, NEEDS_ZMM, NEEDS_AMX, NEEDS_COUNT };

#if defined(__x86_64__) || defined(__i386__)
/* The cpuid registers read: leaf 1 ECX, leaf 7.0 EBX/ECX/EDX, leaf 7.1 EAX
 * (Intel SDM vol. 2A, CPUID). */
enum { L1_ECX, L7_EBX, L7_ECX, L7_EDX, L7S1_EAX, WORD_COUNT };
static const isa_bit isa_bits[] = {
    {L1_ECX, 20, NEEDS_NONE, "sse4_2"},      {L1_ECX, 28, NEEDS_YMM, "avx"},
    {L1_ECX, 29, NEEDS_YMM, "f16c"},         {L1_ECX, 12, NEEDS_YMM, "fma"},
    {L7_EBX, 5, NEEDS_YMM, "avx2"},          {L7_EBX, 16, NEEDS_ZMM, "avx512f"},
    {L7_EBX, 17, NEEDS_ZMM, "avx512dq"},     {L7_EBX, 28, NEEDS_ZMM, "avx512cd"},
    {L7_EBX, 30, NEEDS_ZMM, "avx512bw"},     {L7_EBX, 31, NEEDS_ZMM, "avx512vl"},
    {L7_ECX, 11, NEEDS_ZMM, "avx512_vnni"},  {L7_EDX, 23, NEEDS_ZMM, "avx512_fp16"},
    {L7_EDX, 24, NEEDS_AMX, "amx_tile"},     {L7_EDX, 25, NEEDS_AMX, "amx_int8"},
    {L7_EDX, 22, NEEDS_AMX, "amx_bf16"},     {L7S1_EAX, 4, NEEDS_YMM, "avx_vnni"},
    {L7S1_EAX, 5, NEEDS_ZMM, "avx512_bf16"},
};

static unsigned long long read_xcr0(void) {
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}

/* Reads the registers and which extended state the OS manages. */
static void read_isa_words(unsigned long long word[], int os_saves[]) {
  unsigned a, b, c, d, max_leaf = __get_cpuid_max(0, NULL);
  if (max_leaf >= 1 && __get_cpuid(1, &a, &b, &c, &d)) {
    word[L1_ECX] = c;
    if (c & (1u << 27)) { /* OSXSAVE: the OS manages extended state */
      unsigned long long xcr0 = read_xcr0();
      os_saves[NEEDS_YMM] = (xcr0 & 0x6) == 0x6;
      os_saves[NEEDS_ZMM] = os_saves[NEEDS_YMM] && (xcr0 & 0xe0) == 0xe0;
      os_saves[NEEDS_AMX] = (xcr0 & (3ull << 17)) == (3ull << 17);
    }
  }
  if (max_leaf >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    word[L7_EBX] = b;
    word[L7_ECX] = c;
    word[L7_EDX] = d;
    if (a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d))
      word[L7S1_EAX] = a;
  }
}
#elif defined(__aarch64__) && defined(__linux__)
/* AT_HWCAP and AT_HWCAP2, with the kernel's bit numbers (a stable ABI:
 * arch/arm64/include/uapi/asm/hwcap.h); the OS enables what it reports. */
enum { HWCAP1, HWCAP2, WORD_COUNT };
static const isa_bit isa_bits[] = {
    {HWCAP1, 1, NEEDS_NONE, "asimd"},    {HWCAP1, 10, NEEDS_NONE, "fp16"},
    {HWCAP1, 20, NEEDS_NONE, "dotprod"}, {HWCAP1, 22, NEEDS_NONE, "sve"},
    {HWCAP2, 13, NEEDS_NONE, "i8mm"},    {HWCAP2, 14, NEEDS_NONE, "bf16"},
    {HWCAP2, 1, NEEDS_NONE, "sve2"},     {HWCAP2, 23, NEEDS_NONE, "sme"},
};

static void read_isa_words(unsigned long long word[], int os_saves[]) {
  (void)os_saves;
  word[HWCAP1] = getauxval(AT_HWCAP);
  word[HWCAP2] = getauxval(AT_HWCAP2);
}
#else
enum { WORD_COUNT = 1 };
static const isa_bit isa_bits[] = {{0, 0, NEEDS_COUNT, NULL}}; /* none detected */

static void read_isa_words(unsigned long long word[], int os_saves[]) {
  (void)word;
  (void)os_saves;
}
#endif

/* Sets have[i] for each known feature the running CPU (and OS) supports. */
static void detect_features(int have[]) {
  unsigned long long word[WORD_COUNT] = {0};
  int os_saves[NEEDS_COUNT + 1] = {[NEEDS_NONE] = 1};
  memset(have, 0, sizeof(int) * (sizeof known_features / sizeof known_features[0]));
  read_isa_words(word, os_saves);
  for (size_t b = 0; b < sizeof isa_bits / sizeof isa_bits[0]; b++) {
    const isa_bit *e = &isa_bits[b];
    if (!os_saves[e->needs] || !((word[e->word] >> e->bit) & 1))
      continue;
    for (size_t i = 0; known_features[i]; i++)
      if (!strcmp(known_features[i], e->name))
        have[i] = 1;
  }
}

static void fill_features(processor_info *out) {
  int have[sizeof known_features / sizeof known_features[0]];
  size_t len = 0;
  detect_features(have);
  out->features[0] = '\0';
  for (size_t i = 0; known_features[i]; i++)
    if (have[i])
      processor_append(out->features, sizeof out->features, &len, "%s%s", len ? " " : "",
                       known_features[i]);
}

/* ---- the description string --------------------------------------------- */

/* Copies a text field: printable ASCII, ';' '=' ',' and others made '_',
 * runs of blanks collapsed, trimmed; "unknown" when empty. */
static void clean_text(char *dst, size_t cap, const char *src) {
  size_t n = 0;
  int space = 0;
  if (!cap)
    return;
  for (const unsigned char *s = (const unsigned char *)(src ? src : ""); *s && n + 1 < cap; s++) {
    unsigned char ch = *s;
    if (isspace(ch)) {
      space = n > 0;
      continue;
    }
    if (space && n + 2 < cap)
      dst[n++] = ' ';
    space = 0;
    if (ch < 0x21 || ch > 0x7e || ch == ';' || ch == '=' || ch == ',')
      ch = '_';
    dst[n++] = (char)ch;
  }
  dst[n] = '\0';
  if (n == 0)
    snprintf(dst, cap, "unknown");
}

static const char *cache_name(const processor_cache_level *c, char *buf, size_t cap) {
  const char *suffix = c->kind == CALHOST_CACHE_DATA          ? "d"
                       : c->kind == CALHOST_CACHE_INSTRUCTION ? "i"
                                                              : "";
  snprintf(buf, cap, "l%u%s", c->level, suffix);
  return buf;
}

size_t processor_describe(const processor_info *info, char *buf, size_t capacity) {
  size_t len = 0;
  char arch[sizeof info->arch], vendor[sizeof info->vendor], model[sizeof info->model];
  char name[16];
  int any = 0;
  if (buf && capacity)
    buf[0] = '\0';
  clean_text(arch, sizeof arch, info->arch);
  clean_text(vendor, sizeof vendor, info->vendor);
  clean_text(model, sizeof model, info->model);
  processor_append(buf, capacity, &len, "%s;vendor=%s;model=%s;isa=", arch, vendor, model);
  /* features: the canonical order, whatever the order in info->features */
  for (size_t i = 0; known_features[i]; i++) {
    const char *f = info->features;
    size_t fl = strlen(known_features[i]);
    while ((f = strstr(f, known_features[i])) != NULL) {
      int start_ok = f == info->features || f[-1] == ' ' || f[-1] == ',';
      int end_ok = f[fl] == '\0' || f[fl] == ' ' || f[fl] == ',';
      if (start_ok && end_ok) {
        processor_append(buf, capacity, &len, "%s%s", any ? "," : "", known_features[i]);
        any = 1;
        break;
      }
      f += fl;
    }
  }
  if (!any)
    processor_append(buf, capacity, &len, "none");
  for (size_t i = 0; i < info->cache_count && i < CALHOST_PROCESSOR_MAX_CACHES; i++) {
    const processor_cache_level *c = &info->caches[i];
    processor_append(buf, capacity, &len, ";%s=%llu/%u/%u", cache_name(c, name, sizeof name),
                     (unsigned long long)c->size, c->pus_per_instance, c->instances);
  }
  processor_append(buf, capacity, &len, ";cores=%u;pus=%u", info->cores, info->pus);
  return len;
}

/* ---- hwloc ------------------------------------------------------------------ */

/* By level; unified / data before instruction; then larger before smaller,
 * wider sharing before narrower. */
static int cmp_cache(const void *a, const void *b) {
  const processor_cache_level *x = a, *y = b;
  int xi = x->kind == CALHOST_CACHE_INSTRUCTION, yi = y->kind == CALHOST_CACHE_INSTRUCTION;
  if (x->level != y->level)
    return x->level < y->level ? -1 : 1;
  if (xi != yi)
    return xi - yi;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  if (x->pus_per_instance != y->pus_per_instance)
    return x->pus_per_instance > y->pus_per_instance ? -1 : 1;
  return 0;
}

static const char *info_of(hwloc_topology_t topo, hwloc_const_cpuset_t set, const char *name) {
  hwloc_obj_t obj = NULL;
  const char *v;
  while ((obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, obj)) != NULL)
    if (obj->cpuset && hwloc_bitmap_intersects(obj->cpuset, set) &&
        (v = hwloc_obj_get_info_by_name(obj, name)) != NULL)
      return v;
  /* some platforms attach them to the machine (root) object */
  return hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), name);
}

/* The PUs to describe into set: cpus (each must be online), else the
 * allowed CPUs (live) or the whole topology; only PUs the topology knows.
 * 0, or -1 with err set (set is the caller's to free either way). */
static int select_pus(hwloc_topology_t topo, const int *cpus, size_t cpu_count, int live,
                      hwloc_bitmap_t set, char *err, size_t cap) {
  if (cpu_count == 0 && live) {
    int *allowed = NULL;
    size_t n = 0;
    if (processor_allowed_cpus(&allowed, &n, err, cap) != 0)
      return -1;
    for (size_t i = 0; i < n; i++)
      hwloc_bitmap_set(set, (unsigned)allowed[i]);
    free(allowed);
  } else if (cpu_count == 0) {
    hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(topo));
  } else {
    for (size_t i = 0; i < cpu_count; i++) {
      if (cpus[i] < 0 || !hwloc_get_pu_obj_by_os_index(topo, (unsigned)cpus[i]))
        return base_str_fail(err, cap, "CPU %d is not online on this machine", cpus[i]);
      hwloc_bitmap_set(set, (unsigned)cpus[i]);
    }
  }
  /* only PUs the topology knows */
  hwloc_bitmap_and(set, set, hwloc_topology_get_topology_cpuset(topo));
  if (hwloc_bitmap_iszero(set))
    return base_str_fail(err, cap, "the CPU set is empty");
  return 0;
}

/* The caches of the PUs in set into out->caches. */
static void describe_caches(hwloc_topology_t topo, hwloc_const_bitmap_t set, processor_info *out) {
  static const hwloc_obj_type_t cache_types[] = {
      HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE,  HWLOC_OBJ_L3CACHE,  HWLOC_OBJ_L4CACHE,
      HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3ICACHE};
  hwloc_obj_t obj;
  /* One entry per cache type and distinct (size, sharing): a hybrid set
   * (big and little cores with different L2s) lists each kind. */
  out->cache_count = 0;
  for (size_t t = 0; t < sizeof cache_types / sizeof cache_types[0]; t++) {
    obj = NULL;
    while ((obj = hwloc_get_next_obj_by_type(topo, cache_types[t], obj)) != NULL) {
      processor_cache_level c;
      size_t k;
      if (!obj->cpuset || !hwloc_bitmap_intersects(obj->cpuset, set) || !obj->attr)
        continue;
      memset(&c, 0, sizeof c);
      c.level = obj->attr->cache.depth;
      c.kind = obj->attr->cache.type == HWLOC_OBJ_CACHE_DATA          ? CALHOST_CACHE_DATA
               : obj->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION ? CALHOST_CACHE_INSTRUCTION
                                                                      : CALHOST_CACHE_UNIFIED;
      c.size = obj->attr->cache.size;
      c.line_size = obj->attr->cache.linesize;
      c.pus_per_instance = (unsigned)hwloc_bitmap_weight(obj->cpuset);
      for (k = 0; k < out->cache_count; k++) {
        processor_cache_level *e = &out->caches[k];
        if (e->level == c.level && e->kind == c.kind && e->size == c.size &&
            e->pus_per_instance == c.pus_per_instance)
          break;
      }
      if (k == out->cache_count) {
        if (out->cache_count == CALHOST_PROCESSOR_MAX_CACHES)
          continue;
        out->caches[out->cache_count++] = c;
      }
      out->caches[k].instances++;
    }
  }
  qsort(out->caches, out->cache_count, sizeof out->caches[0], cmp_cache);
}

/* The vendor, model and architecture of the PUs in set (live: the
 * running machine, whose cpuid fills what hwloc does not know). */
static void describe_names(hwloc_topology_t topo, hwloc_const_bitmap_t set, int live,
                           processor_info *out) {
  const char *v;
  v = info_of(topo, set, "CPUVendor");
  if (!v)
    v = info_of(topo, set, "CPUImplementer");
  clean_text(out->vendor, sizeof out->vendor, v);
  v = info_of(topo, set, "CPUModel");
  if (!v)
    v = info_of(topo, set, "CPUPartNumber");
  clean_text(out->model, sizeof out->model, v);
  v = live ? NULL : hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "Architecture");
  if (!v) {
    struct utsname u;
    v = uname(&u) == 0 ? u.machine : "unknown";
    clean_text(out->arch, sizeof out->arch, v);
  } else {
    clean_text(out->arch, sizeof out->arch, v);
  }
#if defined(__x86_64__) || defined(__i386__)
  if (live && (!strcmp(out->vendor, "unknown") || !strcmp(out->model, "unknown"))) {
    unsigned r[12], a, b, c, d;
    if (!strcmp(out->vendor, "unknown") && __get_cpuid(0, &a, &b, &c, &d)) {
      char vend[13];
      memcpy(vend, &b, 4);
      memcpy(vend + 4, &d, 4);
      memcpy(vend + 8, &c, 4);
      vend[12] = '\0';
      clean_text(out->vendor, sizeof out->vendor, vend);
    }
    if (!strcmp(out->model, "unknown") &&
        (unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x80000004u) {
      char brand[49];
      for (unsigned i = 0; i < 3; i++)
        __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
      memcpy(brand, r, 48);
      brand[48] = '\0';
      clean_text(out->model, sizeof out->model, brand);
    }
  }
#endif
}

/* Fills everything but features and description from a loaded topology. */
static int describe_topology(hwloc_topology_t topo, const int *cpus, size_t cpu_count, int live,
                             processor_info *out, char *err, size_t cap) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  hwloc_obj_t obj;
  int rc = 0;
  if (!set)
    return base_str_fail(err, cap, "out of memory");
  if (select_pus(topo, cpus, cpu_count, live, set, err, cap) != 0) {
    hwloc_bitmap_free(set);
    return -1;
  }
  out->pus = (unsigned)hwloc_bitmap_weight(set);
  out->cores = 0;
  obj = NULL;
  while ((obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, obj)) != NULL)
    if (obj->cpuset && hwloc_bitmap_intersects(obj->cpuset, set))
      out->cores++;
  if (out->cores == 0)
    out->cores = out->pus;

  describe_caches(topo, set, out);
  describe_names(topo, set, live, out);
  hwloc_bitmap_free(set);
  return rc;
}

static int identify(const char *xml, const int *cpus, size_t cpu_count, processor_info *out,
                    char *err, size_t cap) {
  hwloc_topology_t topo;
  int rc;
  memset(out, 0, sizeof *out);
  if (hwloc_topology_init(&topo) != 0)
    return base_str_fail(err, cap, "hwloc: cannot initialize a topology");
  if (xml) {
    size_t n = strlen(xml);
    if (n > 0x7ffffffe || hwloc_topology_set_xmlbuffer(topo, xml, (int)n + 1) != 0) {
      int e = errno;
      hwloc_topology_destroy(topo);
      return base_str_fail(err, cap, "hwloc: cannot read the XML topology: %s", strerror(e));
    }
  }
  if (hwloc_topology_load(topo) != 0) {
    int e = errno;
    hwloc_topology_destroy(topo);
    return base_str_fail(err, cap, "hwloc: cannot load the topology: %s", strerror(e));
  }
  rc = describe_topology(topo, cpus, cpu_count, xml == NULL, out, err, cap);
  hwloc_topology_destroy(topo);
  if (rc != 0)
    return rc;
  fill_features(out);
  processor_describe(out, out->description, sizeof out->description);
  return 0;
}

int processor_identify(const int *cpus, size_t cpu_count, processor_info *out, char *err,
                       size_t err_capacity) {
  return identify(NULL, cpus, cpu_count, out, err, err_capacity);
}

int processor_identify_xml(const char *xml, const int *cpus, size_t cpu_count, processor_info *out,
                           char *err, size_t err_capacity) {
  if (!xml)
    return base_str_fail(err, err_capacity, "no XML topology given");
  return identify(xml, cpus, cpu_count, out, err, err_capacity);
}

/* ---- pinning ---------------------------------------------------------------- */

static int set_affinity(const int *cpus, size_t cpu_count, char *err, size_t cap) {
  size_t setsize = CPU_ALLOC_SIZE(CALHOST_CPU_LIMIT);
  cpu_set_t *set = CPU_ALLOC(CALHOST_CPU_LIMIT);
  int rc;
  if (!set)
    return base_str_fail(err, cap, "out of memory");
  CPU_ZERO_S(setsize, set);
  if (cpu_count == 0) {
    /* every CPU; the kernel keeps the ones the process may use */
    if (sched_getaffinity(getpid(), setsize, set) != 0) {
      int e = errno;
      CPU_FREE(set);
      return base_str_fail(err, cap, "sched_getaffinity: %s", strerror(e));
    }
  } else {
    for (size_t i = 0; i < cpu_count; i++) {
      if (cpus[i] < 0 || cpus[i] >= CALHOST_CPU_LIMIT) {
        CPU_FREE(set);
        return base_str_fail(err, cap, "CPU %d is out of range", cpus[i]);
      }
      CPU_SET_S((size_t)cpus[i], setsize, set);
    }
  }
  rc = sched_setaffinity(0, setsize, set);
  if (rc != 0) {
    int e = errno;
    char list[256];
    CPU_FREE(set);
    processor_cpulist_format(cpus, cpu_count, list, sizeof list);
    return base_str_fail(err, cap, "cannot pin to CPUs %s: %s", list, strerror(e));
  }
  CPU_FREE(set);
  return 0;
}

int processor_pin_thread(const int *cpus, size_t cpu_count, char *err, size_t err_capacity) {
  return set_affinity(cpus, cpu_count, err, err_capacity);
}

int processor_pin_worker(const int *cpus, size_t cpu_count, unsigned worker, char *err,
                         size_t err_capacity) {
  if (cpu_count == 0)
    return set_affinity(NULL, 0, err, err_capacity);
  return set_affinity(&cpus[worker % cpu_count], 1, err, err_capacity);
}

/* ---- targets ----------------------------------------------------------------- */

int processor_targets(const int *cpus, size_t cpu_count, int cpus_all,
                      const uint32_t *thread_counts, size_t thread_count_count,
                      processor_target_list *out, char *err, size_t err_capacity) {
  int *allowed = NULL;
  size_t allowed_n = 0;
  memset(out, 0, sizeof *out);
  if (processor_allowed_cpus(&allowed, &allowed_n, err, err_capacity) != 0)
    return -1;
  if (cpus_all || cpu_count == 0) {
    out->cpus = allowed;
    out->cpu_count = allowed_n;
  } else {
    out->cpus = malloc(cpu_count * sizeof *out->cpus);
    if (!out->cpus) {
      free(allowed);
      return base_str_fail(err, err_capacity, "out of memory");
    }
    for (size_t i = 0; i < cpu_count; i++) {
      int ok = 0;
      for (size_t j = 0; j < allowed_n && !ok; j++)
        ok = allowed[j] == cpus[i];
      if (!ok) {
        char list[512];
        processor_cpulist_format(allowed, allowed_n, list, sizeof list);
        base_str_fail(
            err, err_capacity,
            "CPU %d of the configured set is not available to calhost (online and allowed: "
            "%s)",
            cpus[i], list);
        free(allowed);
        processor_target_list_free(out);
        return PROCESSOR_TARGETS_CPU_UNAVAILABLE;
      }
      out->cpus[i] = cpus[i];
    }
    out->cpu_count = cpu_count;
    free(allowed);
    /* ascending, like the parser gives them */
    for (size_t i = 1; i < out->cpu_count; i++)
      for (size_t j = i; j > 0 && out->cpus[j - 1] > out->cpus[j]; j--) {
        int t = out->cpus[j];
        out->cpus[j] = out->cpus[j - 1];
        out->cpus[j - 1] = t;
      }
  }
  if (out->cpu_count == 0) {
    processor_target_list_free(out);
    return base_str_fail(err, err_capacity, "no CPU available");
  }
  if (processor_identify(out->cpus, out->cpu_count, &out->processor, err, err_capacity) != 0) {
    processor_target_list_free(out);
    return -1;
  }
  out->items = calloc(thread_count_count ? thread_count_count : 1, sizeof *out->items);
  if (!out->items) {
    processor_target_list_free(out);
    return base_str_fail(err, err_capacity, "out of memory");
  }
  for (size_t i = 0; i < thread_count_count; i++) {
    uint32_t t = thread_counts[i] ? thread_counts[i] : out->processor.pus;
    int dup = 0;
    if (t > out->processor.pus) {
      char list[512];
      processor_cpulist_format(out->cpus, out->cpu_count, list, sizeof list);
      base_str_fail(err, err_capacity,
                    "threads = %u exceeds the %u hardware threads of the target CPUs %s", t,
                    out->processor.pus, list);
      processor_target_list_free(out);
      return -1;
    }
    for (size_t j = 0; j < out->count; j++)
      dup |= out->items[j].thread_count == t;
    if (dup)
      continue;
    out->items[out->count].cpus = out->cpus;
    out->items[out->count].cpu_count = out->cpu_count;
    out->items[out->count].thread_count = t;
    out->count++;
  }
  return 0;
}

void processor_target_list_free(processor_target_list *list) {
  if (!list)
    return;
  free(list->cpus);
  free(list->items);
  memset(list, 0, sizeof *list);
}
