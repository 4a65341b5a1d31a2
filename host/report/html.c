/*
 * html.c: text into HTML: UTF-8 validation and repair, escaping (the run's
 * strings come from plugins and stores: untrusted), and numbers for people.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

size_t rpt_utf8_seq(const unsigned char *p, size_t left) {
  if (!left)
    return 0;
  unsigned char c = p[0];
  if (c < 0x80)
    return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0)
      lo = 0xA0; /* overlong */
    else if (c == 0xED)
      hi = 0x9F; /* surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0)
      lo = 0x90; /* overlong */
    else if (c == 0xF4)
      hi = 0x8F; /* above U+10FFFF */
  } else
    return 0;
  if (left < n || p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if ((p[i] & 0xC0) != 0x80)
      return 0;
  return n;
}

char *rpt_utf8_repair(const char *buf, size_t len, size_t *out_len) {
  const unsigned char *p = (const unsigned char *)buf;
  size_t bad = 0;
  for (size_t i = 0; i < len;) {
    size_t k = rpt_utf8_seq(p + i, len - i);
    if (k)
      i += k;
    else
      bad++, i++;
  }
  char *out = malloc(len + 2 * bad + 1);
  if (!out)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    size_t k = rpt_utf8_seq(p + i, len - i);
    if (k) {
      memcpy(out + o, p + i, k);
      o += k, i += k;
    } else {
      memcpy(out + o, "\xEF\xBF\xBD", 3);
      o += 3, i++;
    }
  }
  out[o] = '\0';
  *out_len = o;
  return out;
}

/* The characters HTML text escapes, and their entities (same order). */
static const char html_specials[] = "&<>\"'";
static const char *const html_entities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};

void rpt_text_wbr(FILE *o, const char *s, size_t max, const char *breaks) {
  if (!s)
    return;
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s), chars = 0;
  while (left) {
    if (max && chars == max) {
      fputs("\xE2\x80\xA6", o); /* … */
      return;
    }
    chars++;
    size_t k = rpt_utf8_seq(p, left);
    if (!k) {
      fputs("\xEF\xBF\xBD", o);
      p++, left--;
      continue;
    }
    if (k == 1) {
      unsigned char c = *p;
      const char *special = c ? strchr(html_specials, c) : NULL;
      if (special)
        fputs(html_entities[special - html_specials], o);
      else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
        fputs("\xEF\xBF\xBD", o);
      else
        fputc(c, o);
      if (breaks && c && strchr(breaks, c) && left > 1)
        fputs("<wbr>", o);
    } else if (k == 2 && p[0] == 0xC2 && p[1] < 0xA0) {
      fputs("\xEF\xBF\xBD", o); /* C1 control U+0080..U+009F */
    } else {
      fwrite(p, 1, k, o);
    }
    p += k, left -= k;
  }
}

void rpt_text(FILE *o, const char *s, size_t max) {
  rpt_text_wbr(o, s, max, NULL);
}

const char *rpt_us(char *buf, size_t cap, double us) {
  if (!isfinite(us))
    snprintf(buf, cap, "\xE2\x80\x93");
  else if (fabs(us) >= 10000)
    snprintf(buf, cap, "%.2f ms", us / 1000);
  else if (fabs(us) >= 100)
    snprintf(buf, cap, "%.1f \xC2\xB5s", us);
  else if (fabs(us) >= 1)
    snprintf(buf, cap, "%.2f \xC2\xB5s", us);
  else if (fabs(us) >= 0.001)
    snprintf(buf, cap, "%.1f ns", us * 1000);
  else
    snprintf(buf, cap, "%.3g ns", us * 1000);
  return buf;
}
