/* cmd_calibrate.c: PLACEHOLDER until its owner implements it (see commands.h). */
#include <stdio.h>
#include "commands.h"
int calhost_cmd_calibrate(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
int calhost_cmd_lookup_workload(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
int calhost_cmd_override_workload(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
