/*
 * sim/nvcc/rewrite.c — the program's sources, edited, in a tree of their
 * own.
 *
 * Every file of the program that the translation unit opened (the .cu and
 * the user's headers, not the system's or ncclsim's) is written under a
 * temporary root at root + its real path, edited or not, so that the host
 * compiler, given the .cu's copy and the include directories moved under
 * the root, finds each header's copy where it found the header: a quoted
 * include is looked up next to the including file, and `..` climbs the
 * mirrored directories. Each copy starts with a #line naming the original,
 * so diagnostics, __FILE__ and assert messages name the user's files, and
 * an edit keeps the lines it spans, so line numbers stay true.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvcc.h"

srcfile *rw_file(rewrite *rw, const char *real, const char *name) {
  for (size_t i = 0; i < rw->nfiles; i++)
    if (!strcmp(rw->files[i].real, real)) return &rw->files[i];
  rw->files = xrealloc(rw->files, (rw->nfiles + 1) * sizeof *rw->files);
  srcfile *f = &rw->files[rw->nfiles++];
  memset(f, 0, sizeof *f);
  f->real = xstrdup(real);
  f->name = xstrdup(name);
  return f;
}

void rw_edit(srcfile *f, unsigned start, unsigned end, char *text) {
  /* The same replacement again (a construct reached twice in the tree, as
   * a template's call can be) is the same edit; inserts may repeat (the
   * ends of two loops' bodies at one offset). */
  for (size_t i = 0; i < f->nedits && start < end; i++)
    if (f->edits[i].start == start && f->edits[i].end == end && !strcmp(f->edits[i].text, text)) {
      free(text);
      return;
    }
  if (f->nedits == f->cap) {
    f->cap = f->cap ? 2 * f->cap : 16;
    f->edits = xrealloc(f->edits, f->cap * sizeof *f->edits);
  }
  f->edits[f->nedits] = (edit){start, end, text, (unsigned)f->nedits};
  f->nedits++;
}

void rw_error(rewrite *rw, const char *file, unsigned line, unsigned col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%u:%u: error: ", file, line, col);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  rw->errors++;
}

/* By start; inserts at one offset keep the order they were made in. */
static int by_start(const void *a, const void *b) {
  const edit *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1; /* an insert before a replacement */
  return x->seq < y->seq ? -1 : x->seq > y->seq; /* qsort is not stable: the order they were made in */
}

/* The file's text with its edits; NULL (after a message) on a conflict. */
static char *apply(srcfile *f, const char *text, size_t len, size_t *out_len) {
  if (f->nedits > 1) qsort(f->edits, f->nedits, sizeof *f->edits, by_start);
  sbuf b = {0};
  char *esc = xstrdup(f->name);
  sb_printf(&b, "#line 1 \"%s\"\n", esc);
  free(esc);
  size_t at = 0;
  for (size_t i = 0; i < f->nedits; i++) {
    edit *e = &f->edits[i];
    if (e->start < at || e->end > len || e->end < e->start) {
      fprintf(stderr, "%s fatal   : %s: rewrites overlap at byte %u (a construct ncclsim-nvcc cannot edit twice)\n",
              prog, f->name, e->start);
      free(b.s);
      return NULL;
    }
    sb_add(&b, text + at, e->start - at);
    sb_puts(&b, e->text);
    at = e->end;
  }
  sb_add(&b, text + at, len - at);
  *out_len = b.n;
  return b.s;
}

char *nvcc_write_tree(rewrite *rw, const char *root, const char *src_real) {
  char *main_copy = NULL;
  for (size_t i = 0; i < rw->nfiles; i++) {
    srcfile *f = &rw->files[i];
    size_t len, out_len;
    char *text = read_file(f->real, &len);
    if (!text) die("cannot read %s", f->real);
    char *edited = apply(f, text, len, &out_len);
    free(text);
    if (!edited) {
      free(main_copy);
      return NULL;
    }
    char *path = xasprintf("%s%s", root, f->real);
    char *slash = strrchr(path, '/');
    *slash = 0;
    if (make_dirs(path) != 0) die("cannot make %s", path);
    *slash = '/';
    if (write_file(path, edited, out_len) != 0) die("cannot write %s", path);
    free(edited);
    if (!strcmp(f->real, src_real)) main_copy = xstrdup(path);
    free(path);
  }
  return main_copy;
}
