/*
 * test_check_elf.c: plugin check's ELF reader (host/check/elf_exports.h) on
 * images built here, of both classes: the extra exports are the defined,
 * global or weak, default or protected dynamic symbols other than the
 * entry point and the linker's; a table whose offset and size wrap around
 * a 32-bit sum, a table past the end of the file and a file that is not an
 * ELF object are refused with the reason.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calhost/plugin.h"
#include "check/elf_exports.h"

/* The names of the dynamic string table, NUL-separated (offsets below). */
static const char strtab[] = "\0calhost_plugin_negotiate\0extra_fn\0hidden_fn\0undef_fn\0_init\0"
                             "local_fn\0weak_obj";
enum {
  N_ENTRY = 1,
  N_EXTRA = 26,
  N_HIDDEN = 35,
  N_UNDEF = 45,
  N_INIT = 54,
  N_LOCAL = 60,
  N_WEAK = 69
};

/* One symbol: name offset, binding, type, visibility, defined or not. */
typedef struct sym_spec {
  unsigned name, bind, type, vis, defined;
} sym_spec;

static const sym_spec syms[] = {
    {N_ENTRY, STB_GLOBAL, STT_FUNC, STV_DEFAULT, 1},
    {N_EXTRA, STB_GLOBAL, STT_FUNC, STV_DEFAULT, 1},
    {N_HIDDEN, STB_GLOBAL, STT_FUNC, STV_HIDDEN, 1},
    {N_UNDEF, STB_GLOBAL, STT_FUNC, STV_DEFAULT, 0},
    {N_INIT, STB_GLOBAL, STT_FUNC, STV_DEFAULT, 1},
    {N_LOCAL, STB_LOCAL, STT_FUNC, STV_DEFAULT, 1},
    {N_WEAK, STB_WEAK, STT_OBJECT, STV_PROTECTED, 1},
};
#define NSYMS (sizeof syms / sizeof syms[0] + 1) /* the null symbol first */

/* Writes image to a temporary file; its path in path (unlinked by the
 * caller). */
static void write_file(const void *image, size_t size, char *path, size_t cap) {
  snprintf(path, cap, "/tmp/calhost-elf-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, image, size), (ssize_t)size);
  close(fd);
}

/* An ELF64 image: header, symbols, strings, then three section headers
 * (null, .dynsym, .dynstr). dynsym_offset 0: where the symbols are. */
static size_t elf64(unsigned char *img, uint64_t dynsym_offset) {
  Elf64_Ehdr eh = {0};
  size_t sym_at = sizeof eh, str_at = sym_at + NSYMS * sizeof(Elf64_Sym);
  size_t sh_at = str_at + sizeof strtab;
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_type = ET_DYN;
  eh.e_shoff = sh_at;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3;
  memcpy(img, &eh, sizeof eh);
  for (size_t i = 1; i < NSYMS; i++) {
    const sym_spec *s = &syms[i - 1];
    Elf64_Sym y = {0};
    y.st_name = s->name;
    y.st_info = ELF64_ST_INFO(s->bind, s->type);
    y.st_other = s->vis;
    y.st_shndx = s->defined ? 1 : SHN_UNDEF;
    memcpy(img + sym_at + i * sizeof y, &y, sizeof y);
  }
  memcpy(img + str_at, strtab, sizeof strtab);
  Elf64_Shdr sh[3] = {{0}};
  sh[1].sh_type = SHT_DYNSYM;
  sh[1].sh_link = 2;
  sh[1].sh_offset = dynsym_offset ? dynsym_offset : sym_at;
  sh[1].sh_size = NSYMS * sizeof(Elf64_Sym);
  sh[1].sh_entsize = sizeof(Elf64_Sym);
  sh[2].sh_type = SHT_STRTAB;
  sh[2].sh_offset = str_at;
  sh[2].sh_size = sizeof strtab;
  memcpy(img + sh_at, sh, sizeof sh);
  return sh_at + sizeof sh;
}

/* The same image as ELF32. */
static size_t elf32(unsigned char *img, uint32_t dynsym_offset) {
  Elf32_Ehdr eh = {0};
  size_t sym_at = sizeof eh, str_at = sym_at + NSYMS * sizeof(Elf32_Sym);
  size_t sh_at = str_at + sizeof strtab;
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS32;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_type = ET_DYN;
  eh.e_shoff = (uint32_t)sh_at;
  eh.e_shentsize = sizeof(Elf32_Shdr);
  eh.e_shnum = 3;
  memcpy(img, &eh, sizeof eh);
  for (size_t i = 1; i < NSYMS; i++) {
    const sym_spec *s = &syms[i - 1];
    Elf32_Sym y = {0};
    y.st_name = s->name;
    y.st_info = ELF32_ST_INFO(s->bind, s->type);
    y.st_other = (unsigned char)s->vis;
    y.st_shndx = s->defined ? 1 : SHN_UNDEF;
    memcpy(img + sym_at + i * sizeof y, &y, sizeof y);
  }
  memcpy(img + str_at, strtab, sizeof strtab);
  Elf32_Shdr sh[3] = {{0}};
  sh[1].sh_type = SHT_DYNSYM;
  sh[1].sh_link = 2;
  sh[1].sh_offset = dynsym_offset ? dynsym_offset : (uint32_t)sym_at;
  sh[1].sh_size = NSYMS * sizeof(Elf32_Sym);
  sh[1].sh_entsize = sizeof(Elf32_Sym);
  sh[2].sh_type = SHT_STRTAB;
  sh[2].sh_offset = (uint32_t)str_at;
  sh[2].sh_size = sizeof strtab;
  memcpy(img + sh_at, sh, sizeof sh);
  return sh_at + sizeof sh;
}

/* check_elf_extra_exports on image: its count, the list in list. */
static int exports_of(const unsigned char *img, size_t size, char *list, size_t cap) {
  char path[64];
  write_file(img, size, path, sizeof path);
  int n = check_elf_extra_exports(path, list, cap);
  unlink(path);
  return n;
}

static void both_classes_list_the_extra_exports(void **state) {
  (void)state;
  static unsigned char img[4096];
  char list[256];
  size_t size = elf64(img, 0);
  assert_int_equal(exports_of(img, size, list, sizeof list), 2);
  assert_string_equal(list, "extra_fn, weak_obj");
  memset(img, 0, sizeof img);
  size = elf32(img, 0);
  assert_int_equal(exports_of(img, size, list, sizeof list), 2);
  assert_string_equal(list, "extra_fn, weak_obj");
}

/* A 32-bit table offset whose sum with the size wraps past 2^32: a reader
 * that adds in 32 bits sees a small end and reads far outside the file. */
static void a_wrapping_table_is_refused(void **state) {
  (void)state;
  static unsigned char img[4096];
  char list[256];
  size_t size = elf32(img, 0xffffffc0u);
  assert_int_equal(exports_of(img, size, list, sizeof list), -1);
  assert_string_equal(list, "damaged dynamic symbol table");
  memset(img, 0, sizeof img);
  size = elf64(img, 1u << 20); /* past the end of the file */
  assert_int_equal(exports_of(img, size, list, sizeof list), -1);
  assert_string_equal(list, "damaged dynamic symbol table");
}

static void other_files_are_refused(void **state) {
  (void)state;
  static unsigned char img[4096];
  char list[256];
  memset(img, 'x', 64);
  assert_int_equal(exports_of(img, 64, list, sizeof list), -1);
  assert_string_equal(list, "not an ELF object");
  size_t size = elf64(img, 0);
  img[EI_CLASS] = 7;
  assert_int_equal(exports_of(img, size, list, sizeof list), -1);
  assert_string_equal(list, "unknown ELF class");
  size = elf64(img, 0);
  assert_int_equal(exports_of(img, sizeof(Elf64_Ehdr) + 8, list, sizeof list), -1);
  assert_string_equal(list, "no section headers");
  assert_int_equal(check_elf_extra_exports("/nonexistent/calhost-plugin.so", list, sizeof list),
                   -1);
  assert_string_equal(list, "cannot read the file");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(both_classes_list_the_extra_exports),
      cmocka_unit_test(a_wrapping_table_is_refused),
      cmocka_unit_test(other_files_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
