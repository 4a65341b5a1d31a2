/*
 * tuning.c: the words of the rigor levels and the search strategies (see
 * tuning.h).
 */
#include "tuning.h"

#include <string.h>

#include "words.h"

static const char *const rigor_words[] = {
    [CALHOST_RIGOR_QUICK] = "quick",
    [CALHOST_RIGOR_MEASURE] = "measure",
    [CALHOST_RIGOR_EXHAUSTIVE] = "exhaustive",
};

static const char *const strategy_words[] = {
    [CALHOST_SEARCH_DEFAULT] = "default",     [CALHOST_SEARCH_EXHAUSTIVE] = "exhaustive",
    [CALHOST_SEARCH_RANDOM] = "random",       [CALHOST_SEARCH_LOCAL] = "local",
    [CALHOST_SEARCH_ANNEALING] = "annealing", [CALHOST_SEARCH_GENETIC] = "genetic",
    [CALHOST_SEARCH_MODEL] = "model",         [CALHOST_SEARCH_BAYES] = "bayes",
};

/* The index of word in words[0..n), or -1. */
static int word_index(const char *const *words, unsigned n, const char *word) {
  for (unsigned i = 0; word && i < n; i++)
    if (!strcmp(word, words[i]))
      return (int)i;
  return -1;
}

const char *base_rigor_name(base_rigor rigor) {
  return BASE_WORD(rigor_words, CALHOST_RIGOR_EXHAUSTIVE, rigor, "?");
}

int base_rigor_parse(const char *word, base_rigor *out) {
  int i = word_index(rigor_words, CALHOST_RIGOR_EXHAUSTIVE + 1, word);
  if (i >= 0)
    *out = (base_rigor)i;
  return i >= 0 ? 0 : -1;
}

const char *base_strategy_name(base_strategy s) {
  return BASE_WORD(strategy_words, CALHOST_SEARCH_STRATEGY_COUNT - 1, s, "?");
}

int base_strategy_parse(const char *word, base_strategy *out) {
  int i = word_index(strategy_words, CALHOST_SEARCH_STRATEGY_COUNT, word);
  if (i >= 0)
    *out = (base_strategy)i;
  return i >= 0 ? 0 : -1;
}
