/*
 * test_loader_win.c: the plugin loader on Windows (module_win32.c,
 * safety_win32.c and discovery in loader.c), built with mingw-w64 and run
 * under Wine by tests/windows/run.sh: the SDK's template plugin,
 * cross-compiled as a DLL, discovered in a directory, checked, loaded,
 * negotiated and called; a DLL without the entry point, a file that is not
 * a DLL, an ABI out of range and a missing DLL dependency each refused with
 * a message that says which; the DLL search order (the plugin's own
 * directory and System32 only) with an impostor dependency planted beside
 * the program, in the current directory and on PATH never loaded;
 * CALHOST_PLUGIN_PATH split at ';'; a non-ASCII plugin directory; a
 * directory or missing file refused by the checks.
 *
 * The DLLs come from CALHOST_TEST_DLL_DIR (default: ..\tests\windows\dlls
 * from the program's directory, the cross build's layout).
 */
#include <stdint.h>

#include "loader/loader.h"
#include "loader/module.h"
#include "win_test.h"

static char dll_dir[4096];

/* dll_dir\name copied into dir\as (as NULL: the same name); 0 or -1. */
static int copy_dll(const char *name, const char *dir, const char *as) {
  char *from = wt_path(dll_dir, name), *to = wt_path(dir, as ? as : name);
  wchar_t *wf = wt_wide(from), *wt = wt_wide(to);
  BOOL ok = wf && wt && CopyFileW(wf, wt, FALSE);
  free(wf);
  free(wt);
  free(from);
  free(to);
  return ok ? 0 : -1;
}

/* Discovers the plugins of dir only (no environment, no default dirs). */
static int discover_dir(const char *dir, loader_plugin_list *list) {
  loader_options o;
  loader_options_init(&o);
  o.use_environment = 0;
  o.use_default_dirs = 0;
  char *dirs[1] = {(char *)dir};
  o.config_dirs = dirs;
  o.config_dir_count = 1;
  return loader_discover(&o, list);
}

/* The record whose file name ends in name, or NULL. */
static loader_plugin *record_of(const loader_plugin_list *list, const char *name) {
  for (size_t i = 0; i < list->count; i++) {
    const char *p = list->items[i]->path;
    size_t lp = strlen(p), ln = strlen(name);
    if (lp > ln && !strcmp(p + lp - ln, name) && (p[lp - ln - 1] == '\\' || p[lp - ln - 1] == '/'))
      return list->items[i];
  }
  return NULL;
}

/* ---- cases ---------------------------------------------------------------- */

/* The template plugin, cross-compiled: found in a directory, checked,
 * loaded with LoadLibraryExW, negotiated (ABI 2) and its vtable called. */
static void the_template_plugin_dll_is_discovered_loaded_and_called(void) {
  char *dir = wt_mkdtemp("");
  loader_plugin_list list = {0};
  calhost_plugin_instance *inst = NULL;
  loader_plugin *p = NULL;
  WT_CHECK_GOTO(copy_dll("my_backend.dll", dir, NULL) == 0, out, "cannot copy my_backend.dll");
  int good = discover_dir(dir, &list);
  WT_CHECK_GOTO(good == 1 && list.count == 1, out, "%d loaded of %zu found", good, list.count);
  p = loader_plugin_list_find(&list, "my_backend");
  WT_CHECK_GOTO(p && p->loaded && p->state == CALHOST_PLUGIN_LOADED, out, "state %s: %s",
                list.items[0]->state == CALHOST_PLUGIN_LOADED ? "loaded" : "not loaded",
                list.items[0]->reason ? list.items[0]->reason : "");
  WT_CHECK_GOTO(p->abi_version == 2 && p->operator_count == 1 && !strcmp(p->operators[0], "Add"),
                out, "ABI %u, %zu operators", (unsigned)p->abi_version, p->operator_count);
  WT_CHECK_GOTO(p->origin == CALHOST_ORIGIN_CONFIG, out, "origin %d", (int)p->origin);
  WT_CHECK_GOTO(loader_plugin_create(p, NULL, 0, &inst) == CALHOST_OK && inst, out,
                "create failed");
  char err[256] = "";
  WT_CHECK_GOTO(loader_plugin_validate(p, inst, "chunk=1024", 10, err, sizeof err) == CALHOST_OK,
                out, "validate_policy refused chunk=1024: %s", err);
  WT_CHECK_GOTO(loader_plugin_validate(p, inst, "chunk=3", 7, err, sizeof err) != CALHOST_OK &&
                    wt_has(err, "chunk="),
                out, "validate_policy accepted chunk=3");
out:
  if (inst)
    loader_plugin_destroy(p, inst);
  loader_plugin_list_free(&list);
  wt_rmtree(dir);
  free(dir);
}

/* One directory, five files: the good plugin loads; a DLL without
 * calhost_plugin_negotiate, a text file named .dll, a plugin of ABI 3..4
 * and a plugin whose dependency is missing are each unloadable, and each
 * reason says which. */
static void bad_dlls_are_each_refused_with_a_message_that_says_why(void) {
  char *dir = wt_mkdtemp(""), *fake = wt_path(dir, "not_a_dll.dll");
  loader_plugin_list list = {0};
  static const struct {
    const char *file, *says, *says_too;
  } bad[] = {
      {"test_noentry.dll", "no entry point 'calhost_plugin_negotiate'", "not a calhost plugin"},
      {"not_a_dll.dll", "not a DLL", "not_a_dll.dll"},
      {"test_abi_range.dll", "plugin supports ABI 3..4", "host supports 1..2"},
      {"needs_dep.dll", "a DLL it depends on was not found: win_dep.dll", "System32"},
  };
  WT_CHECK_GOTO(
      copy_dll("my_backend.dll", dir, NULL) == 0 && copy_dll("test_noentry.dll", dir, NULL) == 0 &&
          copy_dll("test_abi_range.dll", dir, NULL) == 0 &&
          copy_dll("needs_dep.dll", dir, NULL) == 0 && wt_write(fake, "this is not a DLL\n") == 0,
      out, "cannot prepare %s", dir);
  int good = discover_dir(dir, &list);
  WT_CHECK_GOTO(good == 1 && list.count == 5, out, "%d loaded of %zu found", good, list.count);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    loader_plugin *p = record_of(&list, bad[i].file);
    WT_CHECK_GOTO(p, out, "%s was not found", bad[i].file);
    printf("    %s: %s: %s\n", bad[i].file, loader_plugin_state_name(p->state),
           p->reason ? p->reason : "");
    WT_CHECK_GOTO(p->state == CALHOST_PLUGIN_UNLOADABLE && !p->loaded, out, "%s: state %s",
                  bad[i].file, loader_plugin_state_name(p->state));
    WT_CHECK_GOTO(wt_has(p->reason, bad[i].says) && wt_has(p->reason, bad[i].says_too), out,
                  "%s: reason '%s' lacks '%s' / '%s'", bad[i].file, p->reason ? p->reason : "",
                  bad[i].says, bad[i].says_too);
  }
out:
  loader_plugin_list_free(&list);
  wt_rmtree(dir);
  free(fake);
  free(dir);
}

/* The search order of a plugin's dependencies is pinned to the plugin's
 * own directory and System32 (LoadLibraryExW with
 * LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_SYSTEM32): an
 * impostor win_dep.dll beside the program, in the current directory and on
 * PATH is never loaded; the real one beside the plugin is. */
static void a_planted_dll_beside_the_program_or_in_the_cwd_is_not_loaded(void) {
  char *dir = wt_mkdtemp(""), *plant_dir = wt_mkdtemp(""), *plugin = wt_path(dir, "needs_dep.dll");
  char *beside = NULL, *plant_src = wt_path(dll_dir, "plant");
  wchar_t exe[MAX_PATH + 1], old_cwd[MAX_PATH + 1];
  char old_path[32767] = "";
  DWORD had_path = GetEnvironmentVariableA("PATH", old_path, sizeof old_path);
  loader_module *m = NULL;
  char err[1024] = "";
  int moved_cwd = 0;
  GetCurrentDirectoryW(MAX_PATH, old_cwd);
  GetModuleFileNameW(NULL, exe, MAX_PATH);
  *wcsrchr(exe, L'\\') = L'\0';
  char *exe_dir = wt_narrow(exe);
  beside = wt_path(exe_dir, "win_dep.dll");
  {
    /* the impostor: beside the program, in the current directory, on PATH */
    char saved[4096];
    snprintf(saved, sizeof saved, "%s", dll_dir);
    snprintf(dll_dir, sizeof dll_dir, "%s", plant_src);
    int ok = copy_dll("win_dep.dll", exe_dir, NULL) == 0 &&
             copy_dll("win_dep.dll", plant_dir, NULL) == 0;
    snprintf(dll_dir, sizeof dll_dir, "%s", saved);
    WT_CHECK_GOTO(ok, out, "cannot plant win_dep.dll beside %s and in %s", exe_dir, plant_dir);
  }
  WT_CHECK_GOTO(copy_dll("needs_dep.dll", dir, NULL) == 0, out, "cannot copy needs_dep.dll");
  wchar_t *wplant = wt_wide(plant_dir);
  moved_cwd = SetCurrentDirectoryW(wplant);
  free(wplant);
  WT_CHECK_GOTO(moved_cwd, out, "cannot enter %s", plant_dir);
  {
    char path_env[32767 + 4096];
    snprintf(path_env, sizeof path_env, "%s;%s", plant_dir, old_path);
    SetEnvironmentVariableA("PATH", path_env);
  }
  m = loader_module_open(plugin, err, sizeof err);
  WT_CHECK_GOTO(!m, out, "needs_dep.dll loaded with win_dep.dll from outside its directory");
  WT_CHECK_GOTO(wt_has(err, "a DLL it depends on"), out, "message: %s", err);
  WT_CHECK_GOTO(!GetModuleHandleW(L"win_dep.dll"), out, "an impostor win_dep.dll was loaded");
  /* the real dependency beside the plugin is found there (and only there) */
  WT_CHECK_GOTO(copy_dll("win_dep.dll", dir, NULL) == 0, out, "cannot copy win_dep.dll");
  m = loader_module_open(plugin, err, sizeof err);
  WT_CHECK_GOTO(m, out, "with win_dep.dll beside it: %s", err);
  int (*answer)(void) = (int (*)(void))loader_module_symbol(m, "needs_dep_answer");
  WT_CHECK_GOTO(answer && answer() == 42, out, "win_dep answered %d: the impostor was loaded",
                answer ? answer() : -1);
out:
  loader_module_close(&m);
  if (moved_cwd)
    SetCurrentDirectoryW(old_cwd);
  SetEnvironmentVariableA("PATH", had_path ? old_path : NULL);
  if (beside)
    wt_rmtree(beside);
  wt_rmtree(dir);
  wt_rmtree(plant_dir);
  free(beside);
  free(exe_dir);
  free(plant_src);
  free(plugin);
  free(plant_dir);
  free(dir);
}

/* CALHOST_PLUGIN_PATH lists directories separated by ';' (a drive letter
 * holds a ':'), and a directory with non-ASCII characters is listed and
 * loaded through the wide API. */
static void plugin_path_splits_at_semicolons_and_takes_non_ascii_dirs(void) {
  char *a = wt_mkdtemp("-\xc3\xa9"), *b = wt_mkdtemp("-\xe6\x97\xa5");
  loader_plugin_list list = {0};
  char env[8400];
  WT_CHECK_GOTO(copy_dll("my_backend.dll", a, NULL) == 0 &&
                    copy_dll("needs_dep.dll", b, NULL) == 0 &&
                    copy_dll("win_dep.dll", b, NULL) == 0,
                out, "cannot prepare %s and %s", a, b);
  snprintf(env, sizeof env, "%s;%s", a, b);
  wchar_t *wenv = wt_wide(env);
  SetEnvironmentVariableW(L"CALHOST_PLUGIN_PATH", wenv);
  free(wenv);
  {
    /* the CRT's copy of the environment, which getenv reads, as UTF-8 */
    _putenv_s("CALHOST_PLUGIN_PATH", env);
  }
  loader_options o;
  loader_options_init(&o);
  o.use_default_dirs = 0;
  int good = loader_discover(&o, &list);
  WT_CHECK_GOTO(good == 2, out, "%d loaded of %zu found (%s)", good, list.count,
                list.count && list.items[0]->reason ? list.items[0]->reason : "");
  loader_plugin *p = loader_plugin_list_find(&list, "my_backend");
  WT_CHECK_GOTO(p && wt_has(p->path, "\xc3\xa9") && p->origin == CALHOST_ORIGIN_ENVIRONMENT, out,
                "my_backend from %s", p ? p->path : "(nowhere)");
  WT_CHECK_GOTO(loader_plugin_list_find(&list, "test_needs_dep"), out, "no test_needs_dep");
out:
  _putenv_s("CALHOST_PLUGIN_PATH", "");
  loader_plugin_list_free(&list);
  wt_rmtree(a);
  wt_rmtree(b);
  free(a);
  free(b);
}

/* What replaces POSIX's owner and mode checks: a plugin must be an existing
 * regular file; a directory named like a DLL is refused as unsafe and a
 * named file that does not exist cannot be checked. (ACLs are not read.) */
static void the_checks_refuse_a_directory_and_a_missing_file(void) {
  char *dir = wt_mkdtemp(""), *sub = wt_path(dir, "dir.dll"), *gone = wt_path(dir, "gone.dll");
  char err[512] = "";
  wchar_t *w = wt_wide(sub);
  CreateDirectoryW(w, NULL);
  free(w);
  int rc = loader_check_path(sub, err, sizeof err);
  WT_CHECK_GOTO(rc == -1 && wt_has(err, "is a directory"), out, "directory: %d %s", rc, err);
  rc = loader_check_path(gone, err, sizeof err);
  WT_CHECK_GOTO(rc == -2 && wt_has(err, "does not exist"), out, "missing: %d %s", rc, err);
  {
    loader_options o;
    loader_options_init(&o);
    o.use_environment = 0;
    o.use_default_dirs = 0;
    loader_plugin *p = loader_open(&o, NULL, gone);
    int ok = p && p->state == CALHOST_PLUGIN_UNLOADABLE && wt_has(p->reason, "gone.dll");
    char why[600];
    snprintf(why, sizeof why, "%s", p && p->reason ? p->reason : "(no record)");
    loader_plugin_free(p);
    WT_CHECK_GOTO(ok, out, "loader_open of a missing file: %s", why);
  }
out:
  wt_rmtree(dir);
  free(sub);
  free(gone);
  free(dir);
}

static const wt_case cases[] = {
    {"the_template_plugin_dll_is_discovered_loaded_and_called",
     the_template_plugin_dll_is_discovered_loaded_and_called},
    {"bad_dlls_are_each_refused_with_a_message_that_says_why",
     bad_dlls_are_each_refused_with_a_message_that_says_why},
    {"a_planted_dll_beside_the_program_or_in_the_cwd_is_not_loaded",
     a_planted_dll_beside_the_program_or_in_the_cwd_is_not_loaded},
    {"plugin_path_splits_at_semicolons_and_takes_non_ascii_dirs",
     plugin_path_splits_at_semicolons_and_takes_non_ascii_dirs},
    {"the_checks_refuse_a_directory_and_a_missing_file",
     the_checks_refuse_a_directory_and_a_missing_file},
};

int main(int argc, char **argv) {
  const char *d = getenv("CALHOST_TEST_DLL_DIR");
  if (d && *d) {
    snprintf(dll_dir, sizeof dll_dir, "%s", d);
  } else {
    wchar_t exe[MAX_PATH + 1];
    GetModuleFileNameW(NULL, exe, MAX_PATH);
    *wcsrchr(exe, L'\\') = L'\0';
    char *e = wt_narrow(exe);
    snprintf(dll_dir, sizeof dll_dir, "%s\\..\\tests\\windows\\dlls", e);
    free(e);
  }
  return wt_main(cases, sizeof cases / sizeof cases[0], argc, argv);
}
