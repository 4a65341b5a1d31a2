/* cmd_store.c: PLACEHOLDER until its owner implements it (see commands.h). */
#include <stdio.h>
#include "commands.h"
int calhost_cmd_check(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
int calhost_cmd_list(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
int calhost_cmd_export(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
int calhost_cmd_import(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
int calhost_cmd_lookup(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
int calhost_cmd_override(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
int calhost_cmd_invalidate(calhost_cli *cli, int argc, char **argv) {
  (void)cli; (void)argc;
  fprintf(stderr, "calhost: %s: not implemented yet\n", argv[0]);
  return 2;
}
