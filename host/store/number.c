/*
 * number.c: the numbers of the version-1 format, read and written.
 *
 *  - Reading: the two number grammars the format accepts (a count:
 *    [+]digits; a measurement: a plain decimal [+-]digits[.digits][e[+-]digits]
 *    without hexadecimal, inf or nan), and a correctly rounded decimal to
 *    double conversion with a fast exact path for the usual
 *    [-]digits[.digits] forms (strtod otherwise).
 *  - Writing: %u counts and %.17g doubles, with a fast exact path that gives
 *    printf's bytes (snprintf otherwise).
 *
 * Why these grammars and not strtod's or the reference's operator>>: see
 * README.md, "Reading files written by hand".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const uint64_t pow10_u64[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* ---- reading ---------------------------------------------------------------- */

cs_count_result cs_read_count(const char *s, size_t n, uint32_t *out) {
  size_t i = 0;
  if (n && s[0] == '-') {
    /* "-0" (any number of zeros) is zero, as the reference's unsigned
     * extraction reads it; any other negative count is refused */
    size_t z = 1;
    while (z < n && s[z] == '0')
      z++;
    if (z > 1 && z == n) {
      *out = 0;
      return CS_COUNT_OK;
    }
    return CS_COUNT_NEGATIVE;
  }
  if (n && s[0] == '+')
    i++;
  if (i == n)
    return CS_COUNT_SYNTAX;
  uint64_t v = 0;
  for (; i < n; i++) {
    if (!is_digit(s[i]))
      return CS_COUNT_SYNTAX;
    v = v * 10 + (uint64_t)(s[i] - '0');
    if (v > UINT32_MAX) {
      for (i++; i < n; i++) /* a syntax error further on still wins */
        if (!is_digit(s[i]))
          return CS_COUNT_SYNTAX;
      return CS_COUNT_TOO_LARGE;
    }
  }
  *out = (uint32_t)v;
  return CS_COUNT_OK;
}

/* [+-]? (digits (. digits*)? | . digits) ([eE] [+-]? digits)? */
static int decimal_syntax(const char *s, size_t n) {
  size_t i = 0, intd = 0, fracd = 0;
  if (i < n && (s[i] == '+' || s[i] == '-'))
    i++;
  while (i < n && is_digit(s[i]))
    i++, intd++;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && is_digit(s[i]))
      i++, fracd++;
  }
  if (intd + fracd == 0)
    return 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    size_t expd = 0;
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-'))
      i++;
    while (i < n && is_digit(s[i]))
      i++, expd++;
    if (!expd)
      return 0;
  }
  return i == n;
}

int cs_read_double(const char *s, size_t n, double *out) {
  if (cs_parse_decimal(s, n, out)) /* its forms are a subset of the grammar */
    return 1;
  if (!decimal_syntax(s, n))
    return 0;
  char local[128], *copy = local;
  if (n >= sizeof local && !(copy = malloc(n + 1)))
    return -1;
  memcpy(copy, s, n);
  copy[n] = '\0';
  *out = strtod(copy, NULL); /* the syntax above is a subset of strtod's */
  if (copy != local)
    free(copy);
  return 1;
}

#if defined(__SIZEOF_INT128__)
/* round(m * 10^k / 2^s) with ties to even, exactly (m < 2^53, k <= 21,
 * 1 <= s <= 120). */
static uint64_t scaled_round(uint64_t m, int k, int s) {
  unsigned __int128 x = (unsigned __int128)m;
  for (int i = 0; i < k; i += 19) {
    int step = k - i < 19 ? k - i : 19;
    x *= pow10_u64[step];
  }
  unsigned __int128 q = x >> s, r = x - (q << s), half = (unsigned __int128)1 << (s - 1);
  if (r > half || (r == half && (q & 1)))
    q++;
  return (uint64_t)q;
}
#endif

int cs_parse_decimal(const char *s, size_t n, double *out) {
#if defined(__SIZEOF_INT128__)
  /* [-]digits[.digits] only: no exponent, no sign other than '-' */
  size_t i = 0;
  int neg = 0;
  if (i < n && s[i] == '-') {
    neg = 1;
    i++;
  }
  uint64_t d = 0;
  int digits = 0, frac = 0, dot = 0;
  for (; i < n; i++) {
    char c = s[i];
    if (c == '.' && !dot) {
      dot = 1;
      continue;
    }
    if (c < '0' || c > '9')
      return 0;
    if (digits == 0 && c == '0') { /* leading zeros do not count */
      if (dot)
        frac++;
      continue;
    }
    if (++digits > 19)
      return 0;
    d = d * 10 + (uint64_t)(c - '0');
    if (dot)
      frac++;
  }
  if (i != n || (dot && n == (size_t)neg + 1) || n == (size_t)neg)
    return 0;
  if (d == 0) {
    *out = neg ? -0.0 : 0.0;
    return 1;
  }
  double v;
  if (frac == 0) {
    v = (double)d; /* one rounding to nearest, ties to even */
  } else {
    if (frac > 21)
      return 0;
    /* v = d / 10^frac, correctly rounded: enough quotient bits plus sticky */
    unsigned __int128 den = 1;
    for (int k = 0; k < frac; k += 19)
      den *= pow10_u64[frac - k < 19 ? frac - k : 19];
    int lz = 0;
    for (uint64_t t = d; !(t & (1ull << 63)); t <<= 1)
      lz++;
    int sh = 63 + lz; /* d << sh has its top bit at 126 */
    unsigned __int128 num = (unsigned __int128)d << sh;
    unsigned __int128 q = num / den, r = num - q * den;
    int bits = 0;
    for (unsigned __int128 t = q; t; t >>= 1)
      bits++;
    if (bits < 56)
      return 0;
    int drop = bits - 53;
    uint64_t mant = (uint64_t)(q >> drop);
    unsigned __int128 rest = q & (((unsigned __int128)1 << drop) - 1);
    unsigned __int128 half = (unsigned __int128)1 << (drop - 1);
    if (rest > half || (rest == half && (r != 0 || (mant & 1))))
      mant++;
    if (mant == (1ull << 53)) {
      mant >>= 1;
      drop++;
    }
    v = ldexp((double)mant, drop - sh);
  }
  *out = neg ? -v : v;
  return 1;
#else
  (void)s;
  (void)n;
  (void)out;
  return 0;
#endif
}

/* ---- writing ---------------------------------------------------------------- */

int cs_format_uint(char *out, uint64_t v) {
  char tmp[24];
  int n = 0, k = 0;
  do
    tmp[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  while (n)
    out[k++] = tmp[--n];
  out[k] = '\0';
  return k;
}

/* Formats v exactly like printf("%.17g"): an exact 128-bit fast path for
 * the usual magnitudes (1e-5 <= |v| < 2^52) and integers, snprintf
 * otherwise. Returns the length. */
int cs_format_double(char *out, size_t cap, double v) {
  if (v != 0.0 && fabs(v) < 1e17 && v == (double)(long long)v && cap >= 21) {
    long long iv = (long long)v;
    if (iv < 0) {
      out[0] = '-';
      return 1 + cs_format_uint(out + 1, (unsigned long long)-iv);
    }
    return cs_format_uint(out, (unsigned long long)iv);
  }
#if defined(__SIZEOF_INT128__)
  double a = fabs(v);
  if (cap >= 32 && a >= 1e-5 && a < 4503599627370496.0) {
    int e2;
    double fr = frexp(a, &e2); /* a = fr * 2^e2, fr in [0.5, 1) */
    uint64_t m = (uint64_t)ldexp(fr, 53);
    int s = 53 - e2; /* a = m / 2^s, s >= 1 here */
    /* floor(log10(a)) within one: the loop below corrects it */
    int x = (int)floor((double)(e2 - 1) * 0.30102999566398120);
    uint64_t q = 0;
    for (int tries = 0; tries < 4; tries++) {
      int k = 16 - x;
      if (k < 0 || k > 21 || s > 120)
        goto slow;
      q = scaled_round(m, k, s);
      if (q >= pow10_u64[17])
        x++;
      else if (q < pow10_u64[16])
        x--;
      else
        break;
    }
    if (q < pow10_u64[16] || q >= pow10_u64[17])
      goto slow;
    char dig[17];
    for (int i = 16; i >= 0; i--) {
      dig[i] = (char)('0' + q % 10);
      q /= 10;
    }
    int nd = 17;
    while (nd > 1 && dig[nd - 1] == '0')
      nd--;
    char *o = out;
    if (v < 0)
      *o++ = '-';
    if (x >= -4 && x < 17) { /* fixed notation */
      if (x < 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = -1; i > x; i--)
          *o++ = '0';
        memcpy(o, dig, (size_t)nd);
        o += nd;
      } else {
        int intd = x + 1;
        for (int i = 0; i < intd; i++)
          *o++ = i < nd ? dig[i] : '0';
        if (nd > intd) {
          *o++ = '.';
          memcpy(o, dig + intd, (size_t)(nd - intd));
          o += nd - intd;
        }
      }
      *o = '\0';
      return (int)(o - out);
    }
  }
slow:
#endif
  return snprintf(out, cap, "%.17g", v);
}
