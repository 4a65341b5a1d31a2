/*
 * elf_exports.c: the conformance checker's ELF reader (elf_exports.h). One reader for both
 * classes: each section header and symbol is copied out of the mapped image
 * into a class-neutral form, so the bounds checks are written once.
 */
#include "elf_exports.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calhost/plugin.h"

/* A section header and a symbol, whatever the class. */
typedef struct elf_section {
  uint64_t type, link, offset, size, entsize;
} elf_section;

typedef struct elf_symbol {
  uint64_t name, shndx;
  unsigned info, other;
} elf_symbol;

/* The image and its class's sizes. */
typedef struct elf_image {
  const unsigned char *img;
  size_t size;
  int is64;
  uint64_t shoff, shnum, shentsize; /* from the file header */
  size_t shdr_size, sym_size;       /* this class's structure sizes */
} elf_image;

static void read_section(const elf_image *e, uint64_t i, elf_section *s) {
  const unsigned char *p = e->img + e->shoff + i * e->shdr_size;
  if (e->is64) {
    Elf64_Shdr h;
    memcpy(&h, p, sizeof h);
    *s = (elf_section){h.sh_type, h.sh_link, h.sh_offset, h.sh_size, h.sh_entsize};
  } else {
    Elf32_Shdr h;
    memcpy(&h, p, sizeof h);
    *s = (elf_section){h.sh_type, h.sh_link, h.sh_offset, h.sh_size, h.sh_entsize};
  }
}

static void read_symbol(const elf_image *e, const elf_section *table, uint64_t k, elf_symbol *s) {
  const unsigned char *p = e->img + table->offset + k * e->sym_size;
  if (e->is64) {
    Elf64_Sym y;
    memcpy(&y, p, sizeof y);
    *s = (elf_symbol){y.st_name, y.st_shndx, y.st_info, y.st_other};
  } else {
    Elf32_Sym y;
    memcpy(&y, p, sizeof y);
    *s = (elf_symbol){y.st_name, y.st_shndx, y.st_info, y.st_other};
  }
}

/* Reads the file header's section-table fields into *e; -1 with the reason
 * in list when the class is unknown or the image too small. */
static int read_header(elf_image *e, char *list, size_t cap) {
  if (e->img[EI_CLASS] == ELFCLASS64 && e->size >= sizeof(Elf64_Ehdr)) {
    Elf64_Ehdr h;
    memcpy(&h, e->img, sizeof h);
    *e = (elf_image){
        e->img,           e->size, 1, h.e_shoff, h.e_shnum, h.e_shentsize, sizeof(Elf64_Shdr),
        sizeof(Elf64_Sym)};
  } else if (e->img[EI_CLASS] == ELFCLASS32 && e->size >= sizeof(Elf32_Ehdr)) {
    Elf32_Ehdr h;
    memcpy(&h, e->img, sizeof h);
    *e = (elf_image){
        e->img,           e->size, 0, h.e_shoff, h.e_shnum, h.e_shentsize, sizeof(Elf32_Shdr),
        sizeof(Elf32_Sym)};
  } else {
    return snprintf(list, cap, "unknown ELF class"), -1;
  }
  return 0;
}

/* Linker-defined symbols every shared object exports. */
static int linker_symbol(const char *name) {
  static const char *const names[] = {"_init", "_fini", "_edata", "_end", "__bss_start"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i]))
      return 1;
  return 0;
}

/* Whether symbol y (of a table whose names are strtab) is one a plugin
 * must not export; its name in *name. */
static int extra_export(const elf_symbol *y, const elf_section *strtab, const char *names,
                        const char **name) {
  int bind = ELF64_ST_BIND(y->info), type = ELF64_ST_TYPE(y->info);
  int vis = ELF64_ST_VISIBILITY(y->other);
  if (y->shndx == SHN_UNDEF || y->name >= strtab->size ||
      (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) || type == STT_SECTION ||
      type == STT_FILE || (vis != STV_DEFAULT && vis != STV_PROTECTED))
    return 0;
  *name = names + y->name;
  return memchr(*name, '\0', strtab->size - y->name) &&
         strcmp(*name, CALHOST_PLUGIN_ENTRY_POINT) != 0 && !linker_symbol(*name);
}

/* The extra exports of every dynamic symbol table of a mapped image. */
static int scan_dynsym(elf_image *e, char *list, size_t cap) {
  int count = 0;
  if (read_header(e, list, cap) != 0)
    return -1;
  if (e->shoff == 0 || e->shentsize != e->shdr_size || e->shoff + e->shnum * e->shdr_size > e->size)
    return snprintf(list, cap, "no section headers"), -1;
  for (uint64_t i = 0; i < e->shnum; i++) {
    elf_section sh, str;
    read_section(e, i, &sh);
    if (sh.type != SHT_DYNSYM || sh.link >= e->shnum)
      continue;
    read_section(e, sh.link, &str);
    if (sh.offset + sh.size > e->size || str.offset + str.size > e->size ||
        sh.entsize != e->sym_size)
      return snprintf(list, cap, "damaged dynamic symbol table"), -1;
    const char *names = (const char *)(e->img + str.offset), *name;
    for (uint64_t k = 1; k < sh.size / e->sym_size; k++) {
      elf_symbol y;
      read_symbol(e, &sh, k, &y);
      if (!extra_export(&y, &str, names, &name))
        continue;
      if (count < 8) {
        size_t used = strlen(list);
        snprintf(list + used, cap - used, "%s%s", count ? ", " : "", name);
      }
      count++;
    }
  }
  return count;
}

int check_elf_extra_exports(const char *path, char *list, size_t cap) {
  struct stat st;
  int count, fd = open(path, O_RDONLY | O_CLOEXEC);
  list[0] = '\0';
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)EI_NIDENT) {
    snprintf(list, cap, "cannot read the file");
    if (fd >= 0)
      close(fd);
    return -1;
  }
  size_t size = (size_t)st.st_size;
  void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED)
    return snprintf(list, cap, "cannot map the file"), -1;
  elf_image e = {.img = map, .size = size};
  if (memcmp(e.img, ELFMAG, SELFMAG) != 0) {
    snprintf(list, cap, "not an ELF object");
    count = -1;
  } else {
    count = scan_dynsym(&e, list, cap);
  }
  munmap(map, size);
  return count;
}
