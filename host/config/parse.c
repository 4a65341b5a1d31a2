/*
 * parse.c: reads calhost.ini with inih (config_load, config_load_file,
 * config_load_string): the file itself (a regular file only, opened
 * without blocking), lines, section headers, duplicate sections
 * and keys, and the first error as "FILE:LINE: message". What each section
 * and key means is keys.c's.
 *
 * inih drives the parse through ini_parse_stream with our own line reader.
 * The reader counts lines (Debian's libinih is built without line numbers
 * in the handler), sees every section header (inih does not report empty
 * sections, and we must catch repeated ones), strips leading whitespace (so
 * that indented keys are never taken for inih's multi-line continuations)
 * and refuses lines longer than inih's line buffer instead of letting inih
 * split them. The first error wins and is reported as "FILE:LINE: message".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/files.h"
#include "base/str.h"
#include "parser.h"

/* Ends the current section: the key rules check it, its keys are forgotten. */
static void end_section(parser *p) {
  cfg_section_close(p);
  cfg_seen_free(&p->keys);
  p->kind = SEC_NONE;
}

/* A section header line (text after '[' ... up to the end of the line). */
static void begin_section(parser *p, const char *start) {
  const char *close = strchr(start, ']');
  char inner[128], word[128], name[128];
  const char *s;
  size_t len;
  end_section(p);
  p->kind = SEC_BAD;
  p->section_line = p->line;
  if (!close) {
    cfg_perr(p, p->line, "section header without a closing ']'");
    return;
  }
  for (s = close + 1; *s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'; s++)
    ;
  if (*s && *s != ';' && *s != '#') {
    cfg_perr(p, p->line, "unexpected text after the section header's ']'");
    return;
  }
  len = (size_t)(close - start);
  if (len >= sizeof inner) {
    cfg_perr(p, p->line, "section header too long (at most %zu characters)", sizeof inner - 1);
    return;
  }
  memcpy(inner, start, len);
  inner[len] = '\0';
  word[0] = name[0] = '\0';
  {
    const char *q = inner;
    size_t wl = 0, nl = 0;
    while (*q == ' ' || *q == '\t')
      q++;
    while (*q && *q != ' ' && *q != '\t')
      word[wl++] = *q++;
    word[wl] = '\0';
    while (*q == ' ' || *q == '\t')
      q++;
    while (*q)
      name[nl++] = *q++;
    while (nl && (name[nl - 1] == ' ' || name[nl - 1] == '\t'))
      nl--;
    name[nl] = '\0';
  }
  if (name[0])
    snprintf(p->section, sizeof p->section, "[%s %s]", word, name);
  else
    snprintf(p->section, sizeof p->section, "[%s]", word);

  {
    section_kind kind = cfg_section_kind(p, word, name);
    char canon[300];
    const seen_entry *prev;
    if (kind == SEC_BAD)
      return;
    snprintf(canon, sizeof canon, "%s%s%s", word, name[0] ? " " : "", name);
    prev = cfg_seen_find(&p->sections, canon);
    if (prev) {
      cfg_perr(p, p->line, "duplicate section %s (first at line %u)", p->section, prev->line);
      return;
    }
    if (cfg_seen_push(&p->sections, canon, p->line) != 0) {
      cfg_oom(p);
      return;
    }
    if (name[0])
      snprintf(p->prefix, sizeof p->prefix, "%s.%s", word, name);
    else
      snprintf(p->prefix, sizeof p->prefix, "%s", word);
    p->kind = kind;
    cfg_section_open(p, name);
  }
}

/* inih's line reader: one line per call, counted; see the file comment. */
static char *read_line(char *str, int num, void *stream) {
  parser *p = stream;
  const char *start, *nl, *s;
  size_t len, body;
  if (p->pos >= p->length)
    return NULL;
  start = p->text + p->pos;
  nl = memchr(start, '\n', p->length - p->pos);
  len = nl ? (size_t)(nl - start) + 1 : p->length - p->pos;
  p->pos += len;
  p->line++;
  s = start;
  if (p->line == 1 && len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3))
    s += 3;
  while (s < start + len && (*s == ' ' || *s == '\t'))
    s++;
  body = len - (size_t)(s - start);
  while (body && (s[body - 1] == '\n' || s[body - 1] == '\r'))
    body--;
  /* What inih gets: the line without its leading blanks and its line break,
   * NUL-terminated; inih's buffer wants 3 bytes to spare. */
  if (num < 4 || body > (size_t)num - 3) {
    cfg_perr(p, p->line, "line too long (at most %d characters)", num < 4 ? 0 : num - 3);
    str[0] = '\0';
    return str;
  }
  memcpy(str, s, body);
  str[body] = '\0';
  if (str[0] == '[')
    begin_section(p, str + 1);
  return str;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
  parser *p = user;
  const seen_entry *prev;
  char okey[600];
  (void)section; /* we track sections ourselves, in read_line */
  if (p->kind == SEC_BAD)
    return 1;
  if (p->kind != SEC_NONE) {
    prev = cfg_seen_find(&p->keys, name);
    if (prev)
      return cfg_perr(p, p->line, "duplicate key '%s' in %s (first at line %u)", name, p->section,
                      prev->line);
    if (cfg_seen_push(&p->keys, name, p->line) != 0)
      return cfg_oom(p);
  }
  if (!cfg_key(p, name, value))
    return 0;
  snprintf(okey, sizeof okey, "%s.%s", p->prefix, name);
  if (cfg_origins_add(p->cfg, okey, p->line) != 0)
    return cfg_oom(p);
  return 1;
}

/* ---- load ------------------------------------------------------------- */

int config_load_string(const char *text, size_t length, const char *name, config_settings *cfg,
                       char *err, size_t err_capacity) {
  parser p;
  int rc;
  const char *slash;
  if (err && err_capacity)
    err[0] = '\0';
  if (!name)
    name = "<string>";
  if (config_defaults(cfg) != 0) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: out of memory", name);
    return -1;
  }
  memset(&p, 0, sizeof p);
  cfg->source_path = strdup(name);
  slash = strrchr(name, '/');
  if (slash == name)
    p.base_dir = strdup("/");
  else if (slash)
    p.base_dir = strndup(name, (size_t)(slash - name));
  else
    p.base_dir = strdup(".");
  if (!cfg->source_path || !p.base_dir) {
    free(p.base_dir);
    config_free(cfg);
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: out of memory", name);
    return -1;
  }
  p.cfg = cfg;
  p.file = cfg->source_path;
  p.text = text;
  p.length = length;
  {
    const char *nul = memchr(text, '\0', length);
    if (nul) {
      unsigned line = 1;
      for (const char *q = text; q < nul; q++)
        line += *q == '\n';
      p.line = line;
      cfg_perr(&p, line, "NUL byte in the file (not a text file?)");
      p.length = 0;
    }
  }
  rc = ini_parse_stream(read_line, &p, handler, &p);
  if (!p.has_error || !(rc > 0 && (unsigned)rc < p.err_detect))
    end_section(&p);
  if (rc > 0 && (!p.has_error || (unsigned)rc < p.err_detect)) {
    p.has_error = 0;
    cfg_perr(&p, (unsigned)rc, "syntax error (expected 'key = value', '[section]' or a comment)");
  } else if (rc < 0 && !p.has_error) {
    cfg_perr(&p, 0, "out of memory");
  }
  if (!p.has_error)
    cfg_finish(&p);
  cfg_seen_free(&p.sections);
  cfg_seen_free(&p.keys);
  free(p.base_dir);
  if (p.has_error) {
    if (err && err_capacity) {
      if (p.err_line)
        snprintf(err, err_capacity, "%s:%u: %s", name, p.err_line, p.err);
      else
        snprintf(err, err_capacity, "%s: %s", name, p.err);
    }
    config_free(cfg);
    return -1;
  }
  return 0;
}

/* Reads the regular file at path into *text (malloc'd, *length bytes).
 * Returns 0, or -1 with "PATH: message" in err. The file is opened without
 * blocking (a FIFO must not wait for a writer, a device must not be read)
 * and refused unless it is a regular file (or /dev/null, which reads as
 * empty), before any read. */
#define CONFIG_FILE_MAX (64u << 20)

static int read_config_file(const char *path, char **text, size_t *length, char *err,
                            size_t err_capacity) {
  int fd = base_open_regular(path, 1, err, err_capacity);
  *text = NULL;
  *length = 0;
  if (fd < 0)
    return -1;
  int rc = base_read_fd(fd, CONFIG_FILE_MAX, text, length), e = errno;
  close(fd);
  if (rc != 0 && e == EFBIG)
    return base_str_fail(err, err_capacity, "%s: too large for a configuration file", path);
  if (rc != 0)
    return base_str_fail(err, err_capacity, "%s: read error: %s", path, strerror(e));
  return 0;
}

int config_load_file(const char *path, config_settings *cfg, char *err, size_t err_capacity) {
  char *buf;
  size_t len;
  int rc;
  memset(cfg, 0, sizeof *cfg);
  if (!path) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "no configuration file given");
    return CONFIG_LOAD_UNREADABLE;
  }
  if (read_config_file(path, &buf, &len, err, err_capacity) != 0)
    return CONFIG_LOAD_UNREADABLE;
  rc = config_load_string(buf ? buf : "", len, path, cfg, err, err_capacity);
  free(buf);
  return rc;
}

int config_load(const char *path, config_settings *cfg, char *err, size_t err_capacity) {
  return config_load_file(path, cfg, err, err_capacity) != 0 ? -1 : 0;
}
