/*
 * win_dep.c: a DLL that needs_dep.dll depends on (test_loader_win). Built
 * twice: the real one (answer 42, shipped beside the plugin when a case
 * wants it) and, with PLANTED, an impostor of the same name (answer 666)
 * that the test plants beside the program, in the current directory and on
 * PATH: the loader's pinned search order must never pick it up.
 */
#ifdef PLANTED
#define ANSWER 666
#else
#define ANSWER 42
#endif

__declspec(dllexport) int win_dep_answer(void);
__declspec(dllexport) int win_dep_answer(void) {
  return ANSWER;
}
