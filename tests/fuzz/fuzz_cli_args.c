/*
 * fuzz_cli_args.c: libFuzzer target for the command line's argument parser
 * (host/cli/args.c) and the key and structure flags (context.c): `lookup`,
 * `override set|clear` and `invalidate` with arbitrary flags, through
 * cli_main and the real command descriptors over a small scratch store that
 * is reset before every input.
 *
 * Input: arguments separated by '\n' (a NUL ends the input); the first line
 * names the command ("lookup", "override", "invalidate"), anything else is
 * ignored. Inputs naming --workload are skipped: that form loads the
 * configuration and plugins (another target's business). The key form
 * loads the plugin its --backend names to validate candidates; an input
 * rarely names an installed one, and a missing plugin only adds a
 * "not validated" diagnostic (a file name match, nothing is probed). Properties: no
 * crash, leak or undefined behaviour, an exit status of 0, 1 or 2, and the
 * store file still loads afterwards. run.sh passes -close_fd_mask=3 so the
 * commands' own output does not drown libFuzzer's.
 * It links the cli_context library (see cli_args.cmake).
 */
#include <string.h>

#include "calhost/calstore.h"
#include "cli/commands.h"
#include "fuzz_common.h"

#define MAX_ARGS 64

static const char seed_store[] =
    "onnx_light_calibration_profiles 1\n"
    "profile exact calibrated\nbackend \"b\"\noperator \"MatMul\"\nimplementation \"1\"\n"
    "model_digest \"sha256:00\"\nprocessor \"cpu\"\nthread_count 4\n"
    "measurement \"median_latency\" 2.5 \"us\"\npolicy \"tile=8\"\nend\n"
    "profile portable override\nbackend \"b\"\noperator \"MatMul\"\nimplementation \"1\"\n"
    "structure \"dtype\" \"float32\"\nstructure \"shape\" \"m,n,k\"\npolicy \"tile=16\"\nend\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  char *argv[MAX_ARGS + 4];
  int argc = 0;
  for (char *save = NULL, *tok = strtok_r(text, "\n", &save); tok && argc < MAX_ARGS;
       tok = strtok_r(NULL, "\n", &save)) {
    if (strstr(tok, "--workload")) {
      while (argc > 0)
        free(argv[--argc]);
      free(text);
      return 0;
    }
    /* Each argument in its own exact-size block: ASan sees overreads. */
    argv[argc] = strdup(tok);
    if (!argv[argc])
      break;
    argc++;
  }
  argv[argc] = NULL;
  const cli_command *cmd = NULL;
  if (argc > 0 && !strcmp(argv[0], "lookup"))
    cmd = &cli_cmd_lookup;
  else if (argc > 0 && !strcmp(argv[0], "override"))
    cmd = &cli_cmd_override;
  else if (argc > 0 && !strcmp(argv[0], "invalidate"))
    cmd = &cli_cmd_invalidate;
  if (cmd) {
    const char *store =
        fuzz_write_file("profiles.txt", (const uint8_t *)seed_store, sizeof seed_store - 1);
    /* calhost --store STORE [--quiet] ARGS... */
    char *full[MAX_ARGS + 5]; /* calhost --store STORE [--quiet] + MAX_ARGS + NULL */
    int n = 0;
    full[n++] = (char *)"calhost";
    full[n++] = (char *)"--store";
    full[n++] = (char *)store;
    if (size % 2)
      full[n++] = (char *)"--quiet";
    for (int i = 0; i < argc; i++)
      full[n++] = argv[i];
    full[n] = NULL;
    cli_context cli;
    memset(&cli, 0, sizeof cli);
    cli.argv0 = "calhost";
    const cli_command *table[] = {cmd};
    int rc = cli_main(&cli, table, 1, n, full);
    FUZZ_CHECK(rc >= 0 && rc <= 2, "%s returned exit status %d", argv[0], rc);
    size_t count = 0;
    calstore_status st = calstore_read_file(store, NULL, NULL, NULL, NULL, &count);
    FUZZ_CHECK(st == CALSTORE_OK, "after `%s` the store no longer loads: %s", argv[0],
               calstore_status_name(st));
  }
  for (int i = 0; i < argc; i++)
    free(argv[i]);
  free(text);
  return 0;
}
