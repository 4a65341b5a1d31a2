/*
 * words.h: the one rule for the word of an enum value (what the command
 * line, JSON output and diagnostics print for a state, a status or a
 * kind): a table of words indexed by the enum, and a fallback word for a
 * value outside it. Every host part that names an enum's values uses it;
 * libcalstore, which links no host part, keeps its own (store/names.c).
 * Part of the base layer: depends on nothing but libc, and is portable
 * (the Windows cross build's loader uses it).
 */
#ifndef CALHOST_BASE_WORDS_H
#define CALHOST_BASE_WORDS_H

#include <stddef.h>

/* words[v] when v < n and words[v] is set (a table with designated
 * initializers may leave gaps), else fallback. */
const char *base_word(const char *const *words, size_t n, unsigned v, const char *fallback);

/* BASE_WORD(words, last, v, fallback): base_word over a table `words`
 * declared as an array indexed by an enum whose last value is `last`. It
 * fails to compile unless the table has exactly one entry for each value
 * from 0 to last (the safety -Wswitch gave when the words were a switch):
 * a value added to the enum, and named as its last, needs its word.
 * Every table is designated ([VALUE] = "word"), so the words cannot drift
 * out of the enum's order; a value left out reads as the fallback. */
#define BASE_WORD(words, last, v, fallback)                                                        \
  ((void)sizeof(struct {                                                                           \
     _Static_assert(sizeof(words) / sizeof *(words) == (size_t)(last) + 1,                         \
                    #words " must name every value up to " #last);                                 \
     int covered;                                                                                  \
   }),                                                                                             \
   base_word((words), sizeof(words) / sizeof *(words), (unsigned)(v), (fallback)))

#endif /* CALHOST_BASE_WORDS_H */
