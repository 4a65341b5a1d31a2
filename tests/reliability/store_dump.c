/*
 * store_dump.c: a small tool for the reliability scripts: loads a store file
 * with calstore_read_file and prints its verdict ("status WORD") and one line
 * per profile (source, kind, key fields " => " policy; sorted). Policies
 * longer than 80 bytes are shown as their first 40 bytes, "...(N bytes)".
 * Exit status 0 when the file is valid, 1 otherwise.
 */
#include "rel_common.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: store_dump FILE\n");
    return 2;
  }
  calstore_status st;
  char *text = rel_file_snapshot(argv[1], &st);
  printf("status %s\n", calstore_status_name(st));
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char *arrow = strstr(line, " => ");
    size_t plen = arrow ? strlen(arrow + 4) : 0;
    if (arrow && plen > 80)
      printf("%.*s => %.40s...(%zu bytes)\n", (int)(arrow - line), line, arrow + 4, plen);
    else
      printf("%s\n", line);
  }
  free(text);
  return st == CALSTORE_OK ? 0 : 1;
}
