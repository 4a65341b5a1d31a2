/*
 * elf_exports.h: the conformance checker's ELF reader: the dynamic symbols a plugin
 * file exports, read from the file without loading it (ELF32 and ELF64,
 * either byte order the host reads natively). Private to host/check.
 */
#ifndef CALHOST_CHECK_ELF_EXPORTS_H
#define CALHOST_CHECK_ELF_EXPORTS_H

#include <stddef.h>

/* The defined, exported (global, weak or unique binding; default or
 * protected visibility) dynamic symbols of the ELF object at path other
 * than the plugin's entry point and the linker's own (_init, _fini, _edata,
 * _end, __bss_start): returns their number with the first 8 names in list
 * (", "-joined), or -1 with the reason in list ("cannot read the file",
 * "not an ELF object", "no section headers", "damaged dynamic symbol
 * table", ...). */
int check_elf_extra_exports(const char *path, char *list, size_t cap);

#endif /* CALHOST_CHECK_ELF_EXPORTS_H */
