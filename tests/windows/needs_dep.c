/*
 * needs_dep.c: a calhost plugin DLL (the test_good plugin of
 * tests/plugins/misbehave.c) that also imports win_dep_answer from
 * win_dep.dll, for test_loader_win's missing-dependency and DLL search
 * order cases. needs_dep_answer() reports which win_dep.dll was loaded.
 */
#include "../plugins/misbehave.c"

__declspec(dllimport) int win_dep_answer(void);
__declspec(dllexport) int needs_dep_answer(void);
__declspec(dllexport) int needs_dep_answer(void) {
  return win_dep_answer();
}
