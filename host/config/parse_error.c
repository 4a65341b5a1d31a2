/*
 * parse_error.c: the first error of one parse of calhost.ini (parser.h),
 * recorded by the INI reader (parse.c) and by the rules of the sections
 * and keys (keys.c) alike: owned here so that neither of them uses the
 * other's file for it.
 */
#include <stdarg.h>
#include <stdio.h>

#include "parser.h"

int cfg_perr(parser *p, unsigned line, const char *fmt, ...) {
  va_list ap;
  if (p->has_error)
    return 0;
  p->has_error = 1;
  p->err_line = line;
  p->err_detect = p->line;
  va_start(ap, fmt);
  vsnprintf(p->err, sizeof p->err, fmt, ap);
  va_end(ap);
  return 0; /* inih: this line failed */
}

int cfg_oom(parser *p) {
  p->out_of_memory = 1;
  return cfg_perr(p, p->line, "out of memory");
}
