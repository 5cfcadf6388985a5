/* tests/capture.h — what a test's own process writes to stdout or stderr
 * (ncclsim's log lines), read back as text. Include after <cmocka.h>. */
#ifndef TESTS_CAPTURE_H_
#define TESTS_CAPTURE_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Everything written to fd `fd` between capture_start and capture_end. */
typedef struct {
  int fd, saved;
  FILE *file;
} capture;

static inline void capture_start(capture *c, int fd) {
  fflush(fd == 1 ? stdout : stderr);
  c->fd = fd;
  c->file = tmpfile();
  assert_non_null(c->file);
  c->saved = dup(fd);
  assert_true(c->saved >= 0);
  assert_true(dup2(fileno(c->file), fd) >= 0);
}

/* Returns the captured text (free it). */
static inline char *capture_end(capture *c) {
  fflush(c->fd == 1 ? stdout : stderr);
  assert_true(dup2(c->saved, c->fd) >= 0);
  close(c->saved);
  assert_int_equal(fseek(c->file, 0, SEEK_END), 0);
  long n = ftell(c->file);
  assert_true(n >= 0);
  char *text = (char *)calloc(1, (size_t)n + 1);
  assert_non_null(text);
  rewind(c->file);
  assert_int_equal(fread(text, 1, (size_t)n, c->file), (size_t)n);
  fclose(c->file);
  return text;
}

static inline void assert_contains(const char *text, const char *what) {
  if (!strstr(text, what)) fail_msg("\"%s\" not in output:\n%s", what, text);
}

static inline void assert_lacks(const char *text, const char *what) {
  if (strstr(text, what)) fail_msg("\"%s\" unexpectedly in output:\n%s", what, text);
}

#endif /* TESTS_CAPTURE_H_ */
