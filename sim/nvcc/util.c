/*
 * sim/nvcc/util.c — string vectors and buffers, files, commands.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvcc.h"

const char *prog = "ncclsim-nvcc";
volatile sig_atomic_t nvcc_child;

void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s fatal   : ", prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

void warnx_(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s warning : ", prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) die("out of memory");
  return p;
}

void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) die("out of memory");
  return p;
}

char *xstrdup(const char *s) {
  char *d = strdup(s);
  if (!d) die("out of memory");
  return d;
}

char *xasprintf(const char *fmt, ...) {
  va_list ap;
  char *s;
  va_start(ap, fmt);
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (n < 0) die("out of memory");
  return s;
}

void strv_push(strv *s, const char *x) {
  if (s->n + 1 >= s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->v = xrealloc(s->v, s->cap * sizeof *s->v);
  }
  s->v[s->n++] = xstrdup(x);
  s->v[s->n] = NULL;
}

void strv_pushf(strv *s, const char *fmt, ...) {
  va_list ap;
  char *x;
  va_start(ap, fmt);
  if (vasprintf(&x, fmt, ap) < 0) die("out of memory");
  va_end(ap);
  strv_push(s, x);
  free(x);
}

void strv_append(strv *s, const strv *t) {
  for (size_t i = 0; i < t->n; i++) strv_push(s, t->v[i]);
}

void strv_split(strv *s, const char *words) {
  char *copy = xstrdup(words), *save = NULL;
  for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) strv_push(s, t);
  free(copy);
}

void strv_free(strv *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i]);
  free(s->v);
  memset(s, 0, sizeof *s);
}

void sb_add(sbuf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}

void sb_puts(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  char *x;
  va_start(ap, fmt);
  int n = vasprintf(&x, fmt, ap);
  va_end(ap);
  if (n < 0) die("out of memory");
  sb_add(b, x, (size_t)n);
  free(x);
}

char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  sbuf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_add(&b, chunk, n);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(b.s);
    errno = EIO;
    return NULL;
  }
  if (!b.s) sb_add(&b, "", 0);
  if (len) *len = b.n;
  return b.s;
}

int write_file(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(data, 1, len, f);
  if (fclose(f) != 0 || w != len) return -1;
  return 0;
}

int make_dirs(const char *path) {
  char *p = xstrdup(path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        free(p);
        return -1;
      }
      *s = '/';
    }
  int rc = mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
  free(p);
  return rc;
}

/* Only async-signal-safe calls (openat, getdents64, unlinkat, close), so
 * that the handler of a fatal signal removes the tree too. */
struct dirent64_ {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

static void remove_at(int dirfd, const char *name) {
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    /* Entries removed while a directory is read may shift the rest:
     * read it again from the start until a pass removes nothing. */
    for (bool removed = true; removed;) {
      removed = false;
      lseek(fd, 0, SEEK_SET);
      _Alignas(8) char buf[4096];
      long n;
      while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long at = 0; at < n;) {
          struct dirent64_ *e = (struct dirent64_ *)(buf + at);
          at += e->reclen;
          const char *s = e->name;
          if (s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2]))) continue;
          if (e->type == DT_DIR || (unlinkat(fd, s, 0) != 0 && errno == EISDIR)) remove_at(fd, s);
          removed = true;
        }
      }
    }
    close(fd);
  }
  unlinkat(dirfd, name, AT_REMOVEDIR);
}

void remove_tree(const char *path) {
  int saved = errno;
  remove_at(AT_FDCWD, path);
  errno = saved;
}

void print_cmd(const strv *argv) {
  for (size_t i = 0; i < argv->n; i++) fprintf(stderr, "%s%s", i ? " " : "#$ ", argv->v[i]);
  fputc('\n', stderr);
}

int run_cmd(const strv *argv, bool verbose) {
  if (verbose) print_cmd(argv);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid) nvcc_child = pid;
  if (pid == 0) {
    execvp(argv->v[0], argv->v);
    fprintf(stderr, "%s fatal   : cannot run %s: %s\n", prog, argv->v[0], strerror(errno));
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) {
      nvcc_child = 0;
      return -1;
    }
  nvcc_child = 0;
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}
