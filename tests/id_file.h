/* tests/id_file.h — a unique id handed between the processes of a test
 * through a file, as a launcher would hand it (tests/hosts_rank.c,
 * tests/hosts_mgmt.c). Needs <stdio.h>, <unistd.h>, <nccl.h> and slow.h. */
#ifndef N4C_TESTS_ID_FILE_H_
#define N4C_TESTS_ID_FILE_H_

/* Writes id to path whole: through a temporary file renamed into place,
 * so a reader never sees part of it. 0, or -1 on an I/O error. */
static int write_id(const char *path, const ncclUniqueId *id) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f || fwrite(id, 1, sizeof *id, f) != sizeof *id || fclose(f) != 0) return -1;
  return rename(tmp, path);
}

/* Reads the id at path once it is there, polling every 10 ms for up to
 * `seconds` times the build's slowdown. 0, or -1 when it never came. */
static int read_id(const char *path, ncclUniqueId *id, int seconds) {
  for (int i = 0; i < 100 * seconds * slowdown(); i++) {
    FILE *f = fopen(path, "rb");
    if (f) {
      size_t n = fread(id, 1, sizeof *id, f);
      fclose(f);
      if (n == sizeof *id) return 0;
    }
    usleep(10000);
  }
  return -1;
}

#endif
