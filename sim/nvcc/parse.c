/*
 * sim/nvcc/parse.c — a .cu read by libclang, and the edits that make it
 * host C++ for ncclsim.
 *
 * libclang parses the file as CUDA (host side, with ncclsim's headers and
 * every function callable from device code), which finds what a pattern
 * match could not: each kernel launch (`<<<` of a launch, never the `>>>`
 * of nested templates), __shared__ and __device__ variables and their
 * uses, inline asm, loops in device code. The edits, in the files of the
 * user's program (never in system headers or ncclsim's):
 *
 *   k<<<g, b, s, st>>>(args)  ->  ::__ncclsim_rt::launch(config(g, b, s, st),
 *                                   "k", __FILE__, __LINE__,
 *                                   [=](auto &&...a) { k(a...); }, args)
 *   __global__ void k(P) {    ->  ... { if (::__ncclsim_rt::enter<void (*)(P), &k>(
 *                                   __PRETTY_FUNCTION__, maxThreads, minBlocks)) return;
 *   __shared__ T x[N];        ->  typedef T TN[N]; static char key;
 *                                 auto &x = *::__ncclsim_rt::shared<TN>(&key);
 *   __device__ T v;           ->  the same, then its registration; each use
 *                                 in device code: (*::__ncclsim_rt::dsym(v))
 *   asm("ptx" : ...)          ->  [&]() { the calls that do it }()
 *   a loop in device code     ->  its body first counts a tick
 *
 * Constructs with no meaning on ncclsim (a launch from device code, a
 * launch spelt inside a macro, __managed__, an unknown PTX instruction)
 * are errors that name the construct and its line.
 */
#include "config.h"

#include <clang-c/Index.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvcc.h"

typedef struct ctx {
  CXTranslationUnit tu;
  rewrite *rw;
  int device;          /* > 0 inside device code */
  unsigned skip_start; /* edits inside this launch's range are dropped */
  unsigned skip_end;
  CXFile skip_file;
  strv dev_vars;       /* USRs of namespace-scope __device__/__constant__ variables */
  strv ns_shared;      /* USRs of namespace-scope __shared__ variables */
  strv ns_shared_fn;   /* their accessors, by the same index */
  unsigned serial;
} ctx;

/* ---- locations and tokens ---- */

typedef struct where {
  CXFile file;
  unsigned line, col, offset;
} where;

static where at(CXSourceLocation loc) {
  where w;
  clang_getExpansionLocation(loc, &w.file, &w.line, &w.col, &w.offset);
  return w;
}

static char *file_name(CXFile f) {
  CXString s = clang_getFileName(f);
  char *r = xstrdup(clang_getCString(s) ? clang_getCString(s) : "?");
  clang_disposeString(s);
  return r;
}

static char *real_name(CXFile f) {
  CXString s = clang_File_tryGetRealPathName(f);
  const char *c = clang_getCString(s);
  char *r = NULL;
  if (c && *c) {
    r = xstrdup(c);
  } else {
    char *n = file_name(f), buf[PATH_MAX];
    r = xstrdup(realpath(n, buf) ? buf : n);
    free(n);
  }
  clang_disposeString(s);
  return r;
}

static srcfile *file_of(ctx *x, CXFile f) {
  char *real = real_name(f), *name = file_name(f);
  srcfile *s = rw_file(x->rw, real, name);
  free(real);
  free(name);
  return s;
}

static void error_at(ctx *x, CXSourceLocation loc, const char *fmt, const char *what) {
  where w = at(loc);
  char *n = file_name(w.file);
  rw_error(x->rw, n, w.line, w.col, fmt, what);
  free(n);
}

typedef struct toks {
  CXToken *t;
  unsigned n;
  CXTranslationUnit tu;
} toks;

/* The tokens of the file text a range covers: its ends taken where they
 * are expanded, so a range that starts with a macro (__shared__,
 * __global__) is tokenized in the file, not in the macro's definition. */
static toks tokens_of(ctx *x, CXSourceRange r) {
  toks k = {NULL, 0, x->tu};
  where s = at(clang_getRangeStart(r)), e = at(clang_getRangeEnd(r));
  if (!s.file || !e.file || !clang_File_isEqual(s.file, e.file) || e.offset < s.offset) return k;
  CXSourceRange fr = clang_getRange(clang_getLocationForOffset(x->tu, s.file, s.offset),
                                    clang_getLocationForOffset(x->tu, e.file, e.offset));
  clang_tokenize(x->tu, fr, &k.t, &k.n);
  return k;
}

static void toks_free(toks *k) {
  if (k->t) clang_disposeTokens(k->tu, k->t, k->n);
  k->t = NULL;
  k->n = 0;
}

static bool tok_is(const toks *k, unsigned i, const char *s) {
  if (i >= k->n) return false;
  CXString sp = clang_getTokenSpelling(k->tu, k->t[i]);
  bool eq = !strcmp(clang_getCString(sp), s);
  clang_disposeString(sp);
  return eq;
}

static unsigned tok_offset(const toks *k, unsigned i) { return at(clang_getTokenLocation(k->tu, k->t[i])).offset; }

static unsigned tok_end(const toks *k, unsigned i) {
  return at(clang_getRangeEnd(clang_getTokenExtent(k->tu, k->t[i]))).offset;
}

/* Tokens [a, b) as text, separated by spaces (comments and line breaks go). */
static void tok_text(const toks *k, unsigned a, unsigned b, sbuf *out) {
  for (unsigned i = a; i < b; i++) {
    CXString sp = clang_getTokenSpelling(k->tu, k->t[i]);
    if (i > a) sb_puts(out, " ");
    sb_puts(out, clang_getCString(sp));
    clang_disposeString(sp);
  }
}

static char *tok_str(const toks *k, unsigned a, unsigned b) {
  sbuf s = {0};
  tok_text(k, a, b, &s);
  if (!s.s) sb_add(&s, "", 0);
  return s.s;
}

/* The index of the token at `offset`, or k->n. */
static unsigned tok_at(const toks *k, unsigned offset) {
  for (unsigned i = 0; i < k->n; i++)
    if (tok_offset(k, i) == offset) return i;
  return k->n;
}

/* The token after a balanced group opened at i ('(', '[', '{'). */
static unsigned skip_group(const toks *k, unsigned i) {
  int depth = 0;
  for (; i < k->n; i++) {
    CXString sp = clang_getTokenSpelling(k->tu, k->t[i]);
    const char *c = clang_getCString(sp);
    if (!strcmp(c, "(") || !strcmp(c, "[") || !strcmp(c, "{")) depth++;
    else if (!strcmp(c, ")") || !strcmp(c, "]") || !strcmp(c, "}")) depth--;
    clang_disposeString(sp);
    if (depth == 0) return i + 1;
  }
  return k->n;
}

/* ---- edits ---- */

static bool skipped(ctx *x, CXFile f, unsigned offset) {
  return x->skip_file && clang_File_isEqual(f, x->skip_file) && offset >= x->skip_start && offset < x->skip_end;
}

static void edit_at(ctx *x, CXFile f, unsigned start, unsigned end, char *text) {
  if (skipped(x, f, start)) {
    free(text);
    return;
  }
  rw_edit(file_of(x, f), start, end, text);
}

/* ---- cursors ---- */

typedef struct kids {
  CXCursor *c;
  unsigned n, cap;
} kids;

static enum CXChildVisitResult collect(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  kids *k = d;
  if (k->n == k->cap) {
    k->cap = k->cap ? 2 * k->cap : 8;
    k->c = xrealloc(k->c, k->cap * sizeof *k->c);
  }
  k->c[k->n++] = c;
  return CXChildVisit_Continue;
}

static kids children(CXCursor c) {
  kids k = {0};
  clang_visitChildren(c, collect, &k);
  return k;
}

static bool has_attr(CXCursor c, enum CXCursorKind attr) {
  kids k = children(c);
  bool yes = false;
  for (unsigned i = 0; i < k.n && !yes; i++) yes = clang_getCursorKind(k.c[i]) == attr;
  free(k.c);
  return yes;
}

/* CUDA's qualifiers other than __global__ are read as marks
 * (ncclsim_device/qualifiers.h): annotate("ncclsim_device"), ... */
static bool has_mark(CXCursor c, const char *mark) {
  kids k = children(c);
  bool yes = false;
  for (unsigned i = 0; i < k.n && !yes; i++)
    if (clang_getCursorKind(k.c[i]) == CXCursor_AnnotateAttr) {
      CXString s = clang_getCursorSpelling(k.c[i]);
      yes = !strcmp(clang_getCString(s), mark);
      clang_disposeString(s);
    }
  free(k.c);
  return yes;
}

static char *usr(CXCursor c) {
  CXString s = clang_getCursorUSR(c);
  char *r = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
  clang_disposeString(s);
  return r;
}

static long strv_find(const strv *s, const char *x) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], x)) return (long)i;
  return -1;
}

static char *spelling(CXCursor c) {
  CXString s = clang_getCursorSpelling(c);
  char *r = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
  clang_disposeString(s);
  return r;
}

static bool in_system(CXCursor c) { return clang_Location_isInSystemHeader(clang_getCursorLocation(c)); }

static void visit(ctx *x, CXCursor c);

static void visit_children(ctx *x, CXCursor c) {
  kids k = children(c);
  for (unsigned i = 0; i < k.n; i++) visit(x, k.c[i]);
  free(k.c);
}

/* ---- kernels: the prologue ---- */

/* "void (*)(T *, int)" from the parameters' own tokens (their names and
 * default arguments left out), as written: valid where the kernel is. */
static void param_types(ctx *x, CXCursor fn, sbuf *out) {
  /* The parameters are the ParmDecl children (clang_Cursor_getArgument
   * has none for a function template). */
  kids all = children(fn);
  sb_puts(out, "void (*)(");
  int i = 0;
  for (unsigned c = 0; c < all.n; c++) {
    CXCursor p = all.c[c];
    if (clang_getCursorKind(p) != CXCursor_ParmDecl) continue;
    toks k = tokens_of(x, clang_getCursorExtent(p));
    unsigned name = tok_at(&k, at(clang_getCursorLocation(p)).offset);
    char *pname = spelling(p);
    if (!*pname || !tok_is(&k, name, pname)) name = k.n; /* unnamed */
    free(pname);
    if (i++) sb_puts(out, ", ");
    unsigned end = k.n;
    int depth = 0;
    for (unsigned t = 0; t < k.n; t++) { /* a default argument ends the type */
      if (tok_is(&k, t, "(") || tok_is(&k, t, "[") || tok_is(&k, t, "<")) depth++;
      else if (tok_is(&k, t, ")") || tok_is(&k, t, "]") || tok_is(&k, t, ">")) depth--;
      else if (depth == 0 && tok_is(&k, t, "=")) {
        end = t;
        break;
      }
    }
    for (unsigned t = 0; t < end; t++) {
      if (t == name) continue;
      sbuf one = {0};
      tok_text(&k, t, t + 1, &one);
      sb_puts(out, " ");
      sb_puts(out, one.s);
      free(one.s);
    }
    toks_free(&k);
  }
  free(all.c);
  sb_puts(out, ")");
}

/* "<T, N, Ts...>" for a function template; "" otherwise; NULL when a
 * template parameter has no name (the kernel cannot name itself). */
static char *template_args(ctx *x, CXCursor fn) {
  if (clang_getCursorKind(fn) != CXCursor_FunctionTemplate) return xstrdup("");
  kids k = children(fn);
  sbuf s = {0};
  sb_puts(&s, "<");
  int n = 0;
  bool ok = true;
  for (unsigned i = 0; i < k.n; i++) {
    enum CXCursorKind kind = clang_getCursorKind(k.c[i]);
    if (kind != CXCursor_TemplateTypeParameter && kind != CXCursor_NonTypeTemplateParameter &&
        kind != CXCursor_TemplateTemplateParameter)
      continue;
    char *name = spelling(k.c[i]);
    if (!*name) ok = false;
    toks t = tokens_of(x, clang_getCursorExtent(k.c[i]));
    bool pack = false;
    for (unsigned j = 0; j < t.n; j++) pack |= tok_is(&t, j, "...");
    toks_free(&t);
    sb_printf(&s, "%s%s%s", n++ ? ", " : "", name, pack ? "..." : "");
    free(name);
  }
  sb_puts(&s, ">");
  free(k.c);
  if (!ok) {
    free(s.s);
    return NULL;
  }
  return s.s;
}

/* __launch_bounds__(max, min) among the tokens before the body. */
static void launch_bounds(ctx *x, CXCursor fn, unsigned body, char **max, char **min) {
  *max = *min = NULL;
  CXSourceRange r = clang_getCursorExtent(fn);
  toks k = tokens_of(x, r);
  for (unsigned i = 0; i + 1 < k.n && tok_offset(&k, i) < body; i++) {
    if (!tok_is(&k, i, "__launch_bounds__") || !tok_is(&k, i + 1, "(")) continue;
    unsigned close = skip_group(&k, i + 1) - 1, comma = close;
    int depth = 0;
    for (unsigned j = i + 2; j < close; j++) {
      if (tok_is(&k, j, "(") || tok_is(&k, j, "<")) depth++;
      else if (tok_is(&k, j, ")") || tok_is(&k, j, ">")) depth--;
      else if (depth == 0 && tok_is(&k, j, ",") && comma == close) comma = j;
    }
    *max = tok_str(&k, i + 2, comma);
    if (comma < close) {
      unsigned c2 = close;
      for (unsigned j = comma + 1; j < close; j++)
        if (tok_is(&k, j, ",")) {
          c2 = j;
          break;
        }
      *min = tok_str(&k, comma + 1, c2);
    }
    break;
  }
  toks_free(&k);
}

static void kernel_prologue(ctx *x, CXCursor fn, CXCursor body) {
  where b = at(clang_getRangeStart(clang_getCursorExtent(body)));
  toks k = tokens_of(x, clang_getCursorExtent(body));
  bool plain = k.n && tok_is(&k, 0, "{") && tok_offset(&k, 0) == b.offset;
  toks_free(&k);
  char *name = spelling(fn);
  if (!plain) {
    error_at(x, clang_getCursorLocation(fn), "the body of __global__ function %s is written by a macro: ncclsim-nvcc "
             "rewrites kernels in their source text",
             name);
    free(name);
    return;
  }
  if (clang_getCursorKind(clang_getCursorSemanticParent(fn)) == CXCursor_ClassDecl ||
      clang_getCursorKind(clang_getCursorSemanticParent(fn)) == CXCursor_StructDecl) {
    error_at(x, clang_getCursorLocation(fn), "__global__ function %s is a class member, which CUDA does not allow",
             name);
    free(name);
    return;
  }
  char *targs = template_args(x, fn), *max, *min;
  launch_bounds(x, fn, b.offset, &max, &min);
  sbuf t = {0};
  sbuf type = {0};
  param_types(x, fn, &type);
  if (targs)
    sb_printf(&t, " if (::__ncclsim_rt::enter<%s, &%s%s>(__PRETTY_FUNCTION__, %s, %s)) return; ", type.s, name,
              targs, max ? max : "0", min ? min : "0");
  else /* a nameless template parameter: the kernel cannot name itself */
    sb_printf(&t, " if (::__ncclsim_rt::enter_unnamed(__PRETTY_FUNCTION__, %s, %s)) return; ", max ? max : "0",
              min ? min : "0");
  edit_at(x, b.file, b.offset + 1, b.offset + 1, t.s);
  free(type.s);
  free(targs);
  free(max);
  free(min);
  free(name);
}

/* ---- launches ---- */

static bool is_launch(CXCursor call, CXCursor *config) {
  kids k = children(call);
  bool yes = false;
  if (k.n >= 2 && clang_getCursorKind(k.c[1]) == CXCursor_CallExpr) {
    char *s = spelling(k.c[1]);
    yes = !strcmp(s, "__cudaPushCallConfiguration") || !strcmp(s, "cudaConfigureCall");
    free(s);
    if (yes) *config = k.c[1];
  }
  free(k.c);
  return yes;
}

/* Whether a declaration of fn gives a parameter a default argument: '='
 * at the top of the parameter's tokens. */
static bool default_args(ctx *x, CXCursor fn) {
  bool yes = false;
  CXCursor decls[3] = {fn, clang_getCanonicalCursor(fn), clang_getSpecializedCursorTemplate(fn)};
  for (int d = 0; d < 3 && !yes; d++) {
    if (clang_Cursor_isNull(decls[d])) continue;
    kids all = children(decls[d]);
    for (unsigned c = 0; c < all.n && !yes; c++) {
      if (clang_getCursorKind(all.c[c]) != CXCursor_ParmDecl) continue;
      toks k = tokens_of(x, clang_getCursorExtent(all.c[c]));
      int depth = 0;
      for (unsigned t = 0; t < k.n && !yes; t++) {
        if (tok_is(&k, t, "(") || tok_is(&k, t, "[") || tok_is(&k, t, "<")) depth++;
        else if (tok_is(&k, t, ")") || tok_is(&k, t, "]") || tok_is(&k, t, ">")) depth--;
        else yes = depth == 0 && tok_is(&k, t, "=");
      }
      toks_free(&k);
    }
    free(all.c);
  }
  return yes;
}

/* Whether fn's name has other functions in its scope (overloads): fn, or
 * the template it is made from, is not one. */
static bool overloaded(CXCursor fn) {
  kids all = children(clang_getCursorSemanticParent(fn));
  char *name = spelling(fn);
  CXCursor self = clang_getCanonicalCursor(fn), from = clang_getSpecializedCursorTemplate(fn);
  if (!clang_Cursor_isNull(from)) from = clang_getCanonicalCursor(from);
  bool yes = false;
  for (unsigned i = 0; i < all.n && !yes; i++) {
    enum CXCursorKind k = clang_getCursorKind(all.c[i]);
    if (k != CXCursor_FunctionDecl && k != CXCursor_FunctionTemplate) continue;
    char *n = spelling(all.c[i]);
    CXCursor c = clang_getCanonicalCursor(all.c[i]);
    yes = !strcmp(n, name) && !clang_equalCursors(c, self) && !clang_equalCursors(c, from);
    free(n);
  }
  free(name);
  free(all.c);
  return yes;
}

/* Whether the launch's callee is a function template whose arguments the
 * call deduces (or a name clang left unresolved in a template), a
 * function with default arguments, which the call may leave out, or one
 * of several of its name: none can be taken as a pointer before the call
 * (a pointer has no defaults; a name of several is none's). */
static bool deduces(ctx *x, CXCursor call, const toks *k, unsigned cfg) {
  kids c = children(call);
  CXCursor callee = c.n ? c.c[0] : clang_getNullCursor();
  free(c.c);
  while (!clang_Cursor_isNull(callee) && clang_getCursorKind(callee) == CXCursor_UnexposedExpr) {
    kids in = children(callee);
    callee = in.n ? in.c[0] : clang_getNullCursor();
    free(in.c);
  }
  if (clang_Cursor_isNull(callee)) return true;
  enum CXCursorKind kind = clang_getCursorKind(callee);
  if (kind == CXCursor_OverloadedDeclRef) return true;
  if (kind != CXCursor_DeclRefExpr) return false; /* a pointer, a member: its type says */
  CXCursor fn = clang_getCursorReferenced(callee);
  if (clang_Cursor_isNull(fn)) return true;
  enum CXCursorKind fk = clang_getCursorKind(fn);
  if (fk != CXCursor_FunctionDecl && fk != CXCursor_FunctionTemplate) return false; /* a variable */
  if (default_args(x, fn) || overloaded(fn)) return true;
  bool templated = fk == CXCursor_FunctionTemplate || !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(fn));
  if (!templated) return false;
  /* The explicit arguments, <...> in the callee's tokens: fewer than the
   * template's parameters leave the rest to the call (or their defaults). */
  unsigned open = 0;
  while (open < cfg && !tok_is(k, open, "<")) open++;
  if (open == cfg) return true;
  unsigned given = 1;
  int depth = 0;
  for (unsigned i = open; i < cfg; i++) {
    if (tok_is(k, i, "<") || tok_is(k, i, "(") || tok_is(k, i, "[") || tok_is(k, i, "{")) depth++;
    else if (tok_is(k, i, ">") || tok_is(k, i, ")") || tok_is(k, i, "]") || tok_is(k, i, "}")) depth--;
    else if (tok_is(k, i, ">>")) depth -= 2;
    else if (depth == 1 && tok_is(k, i, ",")) given++;
  }
  if (tok_is(k, open + 1, ">")) given = 0; /* k<> */
  CXCursor tmpl = fk == CXCursor_FunctionTemplate ? fn : clang_getSpecializedCursorTemplate(fn);
  kids ps = children(tmpl);
  unsigned params = 0;
  for (unsigned i = 0; i < ps.n; i++) {
    enum CXCursorKind pk = clang_getCursorKind(ps.c[i]);
    params += pk == CXCursor_TemplateTypeParameter || pk == CXCursor_NonTypeTemplateParameter ||
              pk == CXCursor_TemplateTemplateParameter;
  }
  free(ps.c);
  return given < params;
}

static void launch(ctx *x, CXCursor call, CXCursor config) {
  CXSourceRange r = clang_getCursorExtent(call);
  where s = at(clang_getRangeStart(r)), e = at(clang_getRangeEnd(r));
  if (x->device) {
    error_at(x, clang_getCursorLocation(call), "a kernel launch in device code (%s) is not supported by ncclsim",
             "dynamic parallelism");
    return;
  }
  toks k = tokens_of(x, r);
  unsigned cfg = tok_at(&k, at(clang_getRangeStart(clang_getCursorExtent(config))).offset);
  if (cfg >= k.n || !tok_is(&k, cfg, "<<<")) {
    error_at(x, clang_getCursorLocation(call), "a kernel launch written inside a macro (%s): ncclsim-nvcc rewrites "
             "launches in their source text; write the <<<...>>> outside the macro",
             "its <<< comes from the macro's body");
    toks_free(&k);
    return;
  }
  unsigned close = cfg + 1;
  while (close < k.n && !tok_is(&k, close, ">>>")) close++;
  if (close + 1 >= k.n || !tok_is(&k, close + 1, "(") || !tok_is(&k, k.n - 1, ")") || tok_offset(&k, 0) != s.offset) {
    error_at(x, clang_getCursorLocation(call), "a kernel launch ncclsim-nvcc cannot read (%s)", "its tokens");
    toks_free(&k);
    return;
  }
  char *callee = tok_str(&k, 0, cfg), *conf = tok_str(&k, cfg + 1, close), *args = tok_str(&k, close + 2, k.n - 1);
  sbuf t = {0};
  /* The callee's text as a C string: it has no quote or backslash unless
   * in a template argument; those are escaped. */
  sbuf name = {0};
  for (const char *p = callee; *p; p++) {
    if (*p == '"' || *p == '\\') sb_add(&name, "\\", 1);
    sb_add(&name, p, 1);
  }
  if (deduces(x, call, &k, cfg))
    /* a template whose arguments the call deduces, defaults it leaves
     * out, overloads: through a generic lambda, whose call deduces them
     * from the arguments as copied, fills in the defaults, picks the one */
    sb_printf(&t,
              "::__ncclsim_rt::launch(::__ncclsim_rt::config(%s), \"%s\", __FILE__, __LINE__, "
              "[=](auto &&...__ncclsim_a) { %s(static_cast<decltype(__ncclsim_a) &&>(__ncclsim_a)...); }%s%s)",
              conf, name.s, callee, *args ? ", " : "", args);
  else
    sb_printf(&t, "::__ncclsim_rt::bind(::__ncclsim_rt::config(%s), \"%s\", __FILE__, __LINE__, %s)(%s)", conf,
              name.s, callee, args);
  /* The line count stays: what follows keeps its line numbers. */
  for (unsigned l = s.line; l < e.line; l++) sb_puts(&t, "\n");
  edit_at(x, s.file, s.offset, e.offset, t.s);
  free(name.s);
  free(callee);
  free(conf);
  free(args);
  toks_free(&k);
  /* Nothing inside is edited (a __device__ lambda in the arguments keeps
   * its loops as they are). */
  x->skip_file = s.file;
  x->skip_start = s.offset;
  x->skip_end = e.offset;
}

/* ---- __shared__ and __device__ variables ---- */

static bool at_namespace_scope(CXCursor var) {
  enum CXCursorKind k = clang_getCursorKind(clang_getCursorSemanticParent(var));
  return k == CXCursor_TranslationUnit || k == CXCursor_Namespace;
}

/* The declaration's tokens, the variable's name replaced by `alias` and
 * storage classes dropped, after "typedef": the variable's type named. */
static void typedef_of(ctx *x, CXCursor var, const toks *k, unsigned from, unsigned to, const char *alias,
                       sbuf *out) {
  unsigned name = tok_at(k, at(clang_getCursorLocation(var)).offset);
  sb_puts(out, "typedef");
  int depth = 0; /* inside a struct defined in the declaration, its ';' stay */
  for (unsigned i = from; i < to; i++) {
    depth += tok_is(k, i, "{") - tok_is(k, i, "}");
    if (tok_is(k, i, "static") || tok_is(k, i, "extern") || (depth == 0 && tok_is(k, i, ";"))) continue;
    sb_puts(out, " ");
    if (i == name) {
      sb_puts(out, alias);
    } else {
      sbuf one = {0};
      tok_text(k, i, i + 1, &one);
      sb_puts(out, one.s);
      free(one.s);
    }
  }
  sb_puts(out, ";");
}

/* An initializer: after the name, outside brackets, '=', '(' or '{'. */
static bool has_init(ctx *x, CXCursor var) {
  toks k = tokens_of(x, clang_getCursorExtent(var));
  unsigned i = tok_at(&k, at(clang_getCursorLocation(var)).offset) + 1;
  bool yes = false;
  for (int depth = 0; i < k.n && !yes; i++) {
    if (tok_is(&k, i, "[")) depth++;
    else if (tok_is(&k, i, "]")) depth--;
    else if (depth == 0 && (tok_is(&k, i, "=") || tok_is(&k, i, "(") || tok_is(&k, i, "{"))) yes = true;
  }
  toks_free(&k);
  return yes;
}

/* A declaration statement of __shared__ variables in a function. */
static void shared_decl_stmt(ctx *x, CXCursor stmt) {
  CXSourceRange r = clang_getCursorExtent(stmt);
  where s = at(clang_getRangeStart(r)), e = at(clang_getRangeEnd(r));
  toks k = tokens_of(x, r);
  kids vars = children(stmt);
  /* the variables: a struct defined in the declaration is a child too */
  unsigned nvars = 0;
  for (unsigned i = 0; i < vars.n; i++) nvars += clang_getCursorKind(vars.c[i]) == CXCursor_VarDecl;
  sbuf t = {0};
  bool ok = k.n && tok_offset(&k, 0) == s.offset;
  for (unsigned i = 0; i < vars.n && ok; i++) {
    CXCursor v = vars.c[i];
    if (clang_getCursorKind(v) != CXCursor_VarDecl) continue;
    char *name = spelling(v);
    /* a name spelt by a macro is placed where the macro is expanded */
    unsigned at_name = tok_at(&k, at(clang_getCursorLocation(v)).offset);
    if (at_name >= k.n || !tok_is(&k, at_name, name)) {
      error_at(x, clang_getCursorLocation(v), "__shared__ variable %s is declared by a macro: ncclsim-nvcc rewrites "
               "shared variables in their source text",
               name);
      ok = false;
    } else if (has_init(x, v)) {
      error_at(x, clang_getCursorLocation(v), "__shared__ variable %s has an initializer, which CUDA does not allow",
               name);
      ok = false;
    } else {
      unsigned n = x->serial++;
      char *alias = xasprintf("__ncclsim_shared_t%u", n);
      typedef_of(x, v, &k, 0, k.n, alias, &t);
      bool dynamic = false;
      for (unsigned j = 0; j < k.n; j++) dynamic |= tok_is(&k, j, "extern");
      if (dynamic)
        sb_printf(&t, " auto &%s = *reinterpret_cast<%s *>(::__ncclsim_shared_dynamic());", name, alias);
      else
        sb_printf(&t, " static char __ncclsim_shared_k%u; auto &%s = *::__ncclsim_rt::shared<%s>(&__ncclsim_shared_k%u);",
                  n, name, alias, n);
      free(alias);
      /* several declarators: each typedef keeps only its own */
      if (nvars > 1) {
        free(t.s);
        t = (sbuf){0};
        error_at(x, clang_getCursorLocation(v),
                 "several __shared__ variables in one declaration (%s): declare each on its own", name);
        ok = false;
      }
    }
    free(name);
  }
  if (ok) {
    for (unsigned l = s.line; l < e.line; l++) sb_puts(&t, "\n");
    edit_at(x, s.file, s.offset, e.offset, t.s);
  } else {
    free(t.s);
  }
  free(vars.c);
  toks_free(&k);
}

/* The end of a namespace-scope declaration: after its ';'. */
static unsigned decl_end(ctx *x, CXCursor var, CXFile *file) {
  where e = at(clang_getRangeEnd(clang_getCursorExtent(var)));
  *file = e.file;
  CXSourceLocation after = clang_getLocationForOffset(x->tu, e.file, e.offset);
  CXSourceLocation end = clang_getLocationForOffset(x->tu, e.file, e.offset + 1);
  toks k = tokens_of(x, clang_getRange(after, end));
  unsigned off = e.offset;
  if (k.n && tok_is(&k, 0, ";")) off = tok_end(&k, 0);
  toks_free(&k);
  return off;
}

static void namespace_shared(ctx *x, CXCursor var) {
  CXSourceRange r = clang_getCursorExtent(var);
  where s = at(clang_getRangeStart(r));
  CXFile f;
  unsigned end = decl_end(x, var, &f);
  toks k = tokens_of(x, r);
  char *name = spelling(var);
  unsigned at_name = tok_at(&k, at(clang_getCursorLocation(var)).offset);
  if (!k.n || tok_offset(&k, 0) != s.offset || at_name >= k.n || !tok_is(&k, at_name, name)) {
    error_at(x, clang_getCursorLocation(var), "__shared__ variable %s is declared by a macro", name);
    free(name);
    toks_free(&k);
    return;
  }
  unsigned n = x->serial++;
  char *alias = xasprintf("__ncclsim_shared_t%u", n), *fn = xasprintf("__ncclsim_shared_v%u", n);
  sbuf t = {0};
  typedef_of(x, var, &k, 0, k.n, alias, &t);
  bool dynamic = false;
  for (unsigned j = 0; j < k.n; j++) dynamic |= tok_is(&k, j, "extern");
  if (dynamic)
    sb_printf(&t, " static inline %s &%s() { return *reinterpret_cast<%s *>(::__ncclsim_shared_dynamic()); }", alias,
              fn, alias);
  else
    sb_printf(&t, " static inline %s &%s() { static char k; return *::__ncclsim_rt::shared<%s>(&k); }", alias, fn,
              alias);
  edit_at(x, s.file, s.offset, end, t.s);
  char *u = usr(var);
  strv_push(&x->ns_shared, u);
  /* its uses may be anywhere: they call it by its qualified name */
  sbuf q = {0};
  for (CXCursor p = clang_getCursorSemanticParent(var); clang_getCursorKind(p) == CXCursor_Namespace;
       p = clang_getCursorSemanticParent(p)) {
    char *ns = spelling(p), *prev = q.s;
    q = (sbuf){0};
    if (*ns && *ns != '(') sb_printf(&q, "::%s", ns); /* an anonymous one is seen from where it is */
    if (prev) sb_puts(&q, prev);
    free(prev);
    free(ns);
  }
  sb_printf(&q, "::%s", fn);
  strv_push(&x->ns_shared_fn, q.s);
  free(q.s);
  free(u);
  free(alias);
  free(fn);
  free(name);
  toks_free(&k);
}

static void device_var(ctx *x, CXCursor var) {
  char *u = usr(var);
  if (strv_find(&x->dev_vars, u) < 0) strv_push(&x->dev_vars, u);
  free(u);
  if (!clang_isCursorDefinition(var)) return; /* extern: registered where defined */
  CXFile f;
  unsigned end = decl_end(x, var, &f);
  char *name = spelling(var);
  char *t = xasprintf(" static const int __ncclsim_symbol%u = ::__ncclsim_symbol_register((const void *)&%s, "
                      "sizeof(%s), \"%s\");",
                      x->serial++, name, name, name);
  edit_at(x, f, end, end, t);
  free(name);
}

static void decl_ref(ctx *x, CXCursor ref) {
  CXCursor d = clang_getCursorReferenced(ref);
  if (clang_Cursor_isNull(d) || clang_getCursorKind(d) != CXCursor_VarDecl) return;
  char *u = usr(d);
  long shared = strv_find(&x->ns_shared, u);
  bool dev = x->device && strv_find(&x->dev_vars, u) >= 0;
  free(u);
  if (shared < 0 && !dev) return;
  CXSourceRange r = clang_getCursorExtent(ref);
  where s = at(clang_getRangeStart(r)), e = at(clang_getRangeEnd(r));
  toks k = tokens_of(x, r);
  char *name = spelling(d);
  if (!k.n || e.offset <= s.offset || !tok_is(&k, k.n - 1, name)) {
    /* spelt by a macro: left as it is, which names the host object */
    if (shared >= 0)
      error_at(x, clang_getCursorLocation(ref), "__shared__ variable %s is used inside a macro", name);
    free(name);
    toks_free(&k);
    return;
  }
  char *text = tok_str(&k, 0, k.n);
  char *t = shared >= 0 ? xasprintf("%s()", x->ns_shared_fn.v[shared])
                        : xasprintf("(*::__ncclsim_rt::dsym(%s))", text);
  edit_at(x, s.file, s.offset, e.offset, t);
  free(text);
  free(name);
  toks_free(&k);
}

/* ---- inline asm ---- */

/* A string literal's bytes, its escapes undone. */
static void unquote(const char *lit, sbuf *out) {
  const char *p = strchr(lit, '"');
  if (!p) return;
  for (p++; *p && *p != '"'; p++) {
    if (*p != '\\') {
      sb_add(out, p, 1);
      continue;
    }
    p++;
    char c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
    sb_add(out, &c, 1);
  }
}

static void inline_asm(ctx *x, CXCursor stmt) {
  CXSourceRange r = clang_getCursorExtent(stmt);
  where s = at(clang_getRangeStart(r)), e = at(clang_getRangeEnd(r));
  toks k = tokens_of(x, r);
  unsigned i = 0;
  /* An asm spelt by a macro is placed where the macro is expanded: its
   * tokens there start with the macro's name, not the keyword. */
  bool keyword = tok_is(&k, 0, "asm") || tok_is(&k, 0, "__asm__") || tok_is(&k, 0, "__asm");
  if (!keyword || tok_offset(&k, 0) != s.offset) {
    error_at(x, clang_getCursorLocation(stmt), "inline asm written by a macro (%s): ncclsim-nvcc translates PTX in "
             "its source text",
             "write it outside the macro");
    toks_free(&k);
    return;
  }
  while (i < k.n && !tok_is(&k, i, "(")) i++; /* asm volatile ( */
  unsigned close = skip_group(&k, i) - 1;
  i++;
  sbuf tmpl = {0};
  bool literal = false;
  while (i < close) {
    CXString sp = clang_getTokenSpelling(k.tu, k.t[i]);
    const char *c = clang_getCString(sp);
    bool lit = clang_getTokenKind(k.t[i]) == CXToken_Literal && strchr(c, '"');
    if (lit) unquote(c, &tmpl);
    clang_disposeString(sp);
    if (!lit) break;
    literal = true;
    i++;
  }
  /* The template is read from the source: one that is (or ends with) a
   * macro or an expression cannot be, and would be lost. */
  if (!literal || (i < close && !tok_is(&k, i, ":") && !tok_is(&k, i, "::"))) {
    error_at(x, clang_getCursorLocation(stmt), "inline asm whose template is not string literals written in place "
             "(%s): ncclsim-nvcc translates PTX in its source text",
             "a macro or an expression");
    free(tmpl.s);
    toks_free(&k);
    return;
  }
  if (!tmpl.s) sb_add(&tmpl, "", 0);
  /* The operand lists: outputs, inputs (clobbers after need nothing). */
  asm_operand ops[64];
  size_t nops = 0, nout = 0;
  strv names = {0};
  /* ':' opens the next list; '::' (one token in C++) an empty one and the
   * next. */
  int list = -1;
  while (i < close && list < 1) {
    if (tok_is(&k, i, "::")) {
      list += 2;
      i++;
    } else if (tok_is(&k, i, ":")) {
      list++;
      i++;
    } else {
      break;
    }
    if (list > 1) break;
    while (i < close && !tok_is(&k, i, ":") && !tok_is(&k, i, "::")) {
      if (tok_is(&k, i, ",")) {
        i++;
        continue;
      }
      char *nm = NULL;
      if (tok_is(&k, i, "[")) {
        nm = tok_str(&k, i + 1, i + 2);
        i += 3;
      }
      if (nops == 64) break;
      CXString sp = clang_getTokenSpelling(k.tu, k.t[i]);
      sbuf cons = {0};
      unquote(clang_getCString(sp), &cons);
      clang_disposeString(sp);
      snprintf(ops[nops].constraint, sizeof ops[nops].constraint, "%s", cons.s ? cons.s : "");
      free(cons.s);
      i++;
      unsigned after = skip_group(&k, i);
      ops[nops].expr = tok_str(&k, i + 1, after - 1);
      i = after;
      strv_push(&names, nm ? nm : "");
      free(nm);
      nops++;
      if (list == 0) nout++;
    }
  }
  /* Named operands (%[name]) become numbers. */
  sbuf numbered = {0};
  for (const char *p = tmpl.s; *p; p++) {
    if (p[0] == '%' && p[1] == '[') {
      const char *end = strchr(p, ']');
      if (end) {
        char *nm = strndup(p + 2, (size_t)(end - p - 2));
        long idx = strv_find(&names, nm);
        free(nm);
        if (idx >= 0) {
          sb_printf(&numbered, "%%%ld", idx);
          p = end;
          continue;
        }
      }
    }
    sb_add(&numbered, p, 1);
  }
  char *why = NULL;
  char *code = nvcc_ptx(numbered.s ? numbered.s : "", ops, nout, nops - nout, &why);
  if (!code) {
    error_at(x, clang_getCursorLocation(stmt), "inline PTX that ncclsim does not carry out: %s", why ? why : "?");
    free(why);
  } else {
    sbuf t = {0};
    sb_printf(&t, "[&]() { %s }()", code);
    for (unsigned l = s.line; l < e.line; l++) sb_puts(&t, "\n");
    edit_at(x, s.file, s.offset, e.offset, t.s);
    free(code);
  }
  for (size_t j = 0; j < nops; j++) free(ops[j].expr);
  strv_free(&names);
  free(tmpl.s);
  free(numbered.s);
  toks_free(&k);
}

/* ---- loops ---- */

static const char *TICK = " if (__builtin_expect(--__ncclsim_ticks <= 0, 0)) __ncclsim_tick();";

static void loop_tick(ctx *x, CXCursor loop) {
  kids k = children(loop);
  if (!k.n) {
    free(k.c);
    return;
  }
  CXCursor body = clang_getCursorKind(loop) == CXCursor_DoStmt ? k.c[0] : k.c[k.n - 1];
  free(k.c);
  CXSourceRange r = clang_getCursorExtent(body);
  where s = at(clang_getRangeStart(r)), e = at(clang_getRangeEnd(r));
  toks t = tokens_of(x, r);
  if (!t.n || tok_offset(&t, 0) != s.offset || e.offset <= s.offset) { /* in a macro: no tick */
    toks_free(&t);
    return;
  }
  if (clang_getCursorKind(body) == CXCursor_CompoundStmt && tok_is(&t, 0, "{")) {
    edit_at(x, s.file, s.offset + 1, s.offset + 1, xstrdup(TICK));
  } else {
    /* A single statement: braced, its ';' inside. */
    CXSourceLocation a = clang_getLocationForOffset(x->tu, e.file, e.offset);
    CXSourceLocation b = clang_getLocationForOffset(x->tu, e.file, e.offset + 1);
    toks semi = tokens_of(x, clang_getRange(a, b));
    unsigned end = semi.n && tok_is(&semi, 0, ";") ? tok_end(&semi, 0) : e.offset;
    toks_free(&semi);
    edit_at(x, s.file, s.offset, s.offset, xasprintf("{%s ", TICK));
    edit_at(x, s.file, end, end, xstrdup(" }"));
  }
  toks_free(&t);
}

/* ---- printf in device code ---- */

/* printf (the C library's, or std::) called from device code goes to the
 * device's printf buffer, printed when the host synchronizes, as CUDA's.
 * A call of a host function from device code is, to clang reading for the
 * host, an expression it could not resolve (kept, unexposed): the callee
 * is found by its first child either way. */
static void device_printf(ctx *x, CXCursor call) {
  kids k = children(call);
  CXCursor callee = k.n ? k.c[0] : clang_getNullCursor();
  free(k.c);
  /* through implicit conversions, and an unresolved name's wrapper */
  for (;;) {
    if (clang_Cursor_isNull(callee)) return;
    enum CXCursorKind kind = clang_getCursorKind(callee);
    char *nm = spelling(callee);
    bool through = kind == CXCursor_UnexposedExpr || (kind == CXCursor_DeclRefExpr && !*nm);
    free(nm);
    if (!through) break;
    kids in = children(callee);
    callee = in.n ? in.c[0] : clang_getNullCursor();
    free(in.c);
  }
  enum CXCursorKind kind = clang_getCursorKind(callee);
  if (kind != CXCursor_DeclRefExpr && kind != CXCursor_OverloadedDeclRef) return;
  char *name = spelling(callee);
  bool is = !strcmp(name, "printf");
  free(name);
  if (!is) return;
  CXCursor fn = clang_getCursorReferenced(callee);
  if (!clang_Cursor_isNull(fn) && clang_getCursorKind(fn) == CXCursor_FunctionDecl &&
      !clang_Location_isInSystemHeader(clang_getCursorLocation(fn)))
    return; /* the program's own printf */
  CXSourceRange r = clang_getCursorExtent(callee);
  where s = at(clang_getRangeStart(r)), e = at(clang_getRangeEnd(r));
  toks t = tokens_of(x, r);
  if (t.n && tok_offset(&t, 0) == s.offset && tok_is(&t, t.n - 1, "printf") && e.offset > s.offset)
    edit_at(x, s.file, s.offset, e.offset, xstrdup("__ncclsim_printf"));
  toks_free(&t);
}

/* ---- the walk ---- */

static bool lambda_is_device(ctx *x, CXCursor lambda) {
  toks k = tokens_of(x, clang_getCursorExtent(lambda));
  bool yes = false;
  for (unsigned i = 0; i < k.n && !yes && !tok_is(&k, i, "{"); i++) yes = tok_is(&k, i, "__device__");
  toks_free(&k);
  return yes;
}

static void visit(ctx *x, CXCursor c) {
  if (in_system(c)) return;
  enum CXCursorKind kind = clang_getCursorKind(c);
  switch (kind) {
  case CXCursor_FunctionDecl:
  case CXCursor_FunctionTemplate:
  case CXCursor_CXXMethod:
  case CXCursor_Constructor:
  case CXCursor_Destructor:
  case CXCursor_ConversionFunction: {
    bool global = has_attr(c, CXCursor_CUDAGlobalAttr);
    bool device = global || has_mark(c, "ncclsim_device");
    if (global && clang_isCursorDefinition(c)) {
      kids k = children(c);
      if (k.n && clang_getCursorKind(k.c[k.n - 1]) == CXCursor_CompoundStmt) kernel_prologue(x, c, k.c[k.n - 1]);
      free(k.c);
    }
    x->device += device;
    visit_children(x, c);
    x->device -= device;
    return;
  }
  case CXCursor_LambdaExpr: {
    bool device = lambda_is_device(x, c);
    x->device += device;
    visit_children(x, c);
    x->device -= device;
    return;
  }
  case CXCursor_CallExpr: {
    CXCursor config;
    if (is_launch(c, &config)) {
      launch(x, c, config);
      return; /* nothing inside is rewritten */
    }
    if (x->device) device_printf(x, c);
    break;
  }
  case CXCursor_UnexposedExpr:
    if (x->device) device_printf(x, c);
    break;
  case CXCursor_DeclStmt: {
    kids k = children(c);
    bool shared = false;
    for (unsigned i = 0; i < k.n; i++)
      shared |= clang_getCursorKind(k.c[i]) == CXCursor_VarDecl && has_mark(k.c[i], "ncclsim_shared");
    free(k.c);
    if (shared) {
      shared_decl_stmt(x, c);
      return;
    }
    break;
  }
  case CXCursor_VarDecl: {
    if (!at_namespace_scope(c)) break;
    if (has_mark(c, "ncclsim_shared")) {
      namespace_shared(x, c);
      return;
    }
    if (has_mark(c, "ncclsim_device") || has_mark(c, "ncclsim_constant")) device_var(x, c);
    break;
  }
  case CXCursor_DeclRefExpr: decl_ref(x, c); return;
  case CXCursor_AsmStmt:
    if (x->device) {
      inline_asm(x, c);
      return;
    }
    break;
  case CXCursor_ForStmt:
  case CXCursor_WhileStmt:
  case CXCursor_DoStmt:
  case CXCursor_CXXForRangeStmt:
    if (x->device) loop_tick(x, c);
    break;
  default: break;
  }
  visit_children(x, c);
}

/* ---- the translation unit ---- */

static void list_file(CXFile f, CXSourceLocation *stack, unsigned depth, CXClientData d) {
  (void)stack;
  (void)depth;
  ctx *x = d;
  CXSourceLocation loc = clang_getLocation(x->tu, f, 1, 1);
  if (clang_Location_isInSystemHeader(loc)) return;
  char *n = file_name(f);
  bool builtin = !strcmp(n, "<built-in>") || !strcmp(n, "<command line>");
  free(n);
  if (!builtin) file_of(x, f);
}

/* Whether d is an error that only the prelude's force_cuda_host_device
 * pragma makes: it gives every function implicit host and device
 * attributes, kernels included, and clang (14) finds them at odds with
 * __global__ when it merges a kernel's declaration into its later
 * definition. In parse mode __host__ is empty and __device__ an
 * annotation, so no code of the program's can make these two errors. */
static bool pragma_artifact(CXDiagnostic d) {
  CXString s = clang_getDiagnosticSpelling(d);
  const char *t = clang_getCString(s);
  bool yes = t && (!strcmp(t, "'device' and 'global' attributes are not compatible") ||
                   !strcmp(t, "'global' and 'host' attributes are not compatible") ||
                   !strcmp(t, "'host' and 'global' attributes are not compatible") ||
                   !strcmp(t, "'global' and 'device' attributes are not compatible"));
  clang_disposeString(s);
  return yes;
}

int nvcc_parse(const char *src, const strv *args, const paths *p, rewrite *rw, bool verbose) {
  (void)p;
  if (verbose) {
    fprintf(stderr, "#$ libclang:");
    for (size_t i = 0; i < args->n; i++) fprintf(stderr, " %s", args->v[i]);
    fprintf(stderr, " %s\n", src);
  }
  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = NULL;
  enum CXErrorCode ec = clang_parseTranslationUnit2(index, src, (const char *const *)args->v, (int)args->n, NULL, 0,
                                                    CXTranslationUnit_None, &tu);
  if (ec != CXError_Success || !tu) {
    fprintf(stderr, "%s fatal   : libclang could not read %s (error %d)\n", prog, src, (int)ec);
    clang_disposeIndex(index);
    return 1;
  }
  int errors = 0;
  for (unsigned i = 0, n = clang_getNumDiagnostics(tu); i < n; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
    if (sev >= CXDiagnostic_Error && pragma_artifact(d)) sev = CXDiagnostic_Ignored;
    if (sev >= CXDiagnostic_Error) {
      CXString s = clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions());
      fprintf(stderr, "%s\n", clang_getCString(s));
      clang_disposeString(s);
      /* its notes: where a template was instantiated, what was declared */
      CXDiagnosticSet notes = clang_getChildDiagnostics(d);
      for (unsigned j = 0, m = clang_getNumDiagnosticsInSet(notes); j < m; j++) {
        CXDiagnostic nd = clang_getDiagnosticInSet(notes, j);
        CXString ns = clang_formatDiagnostic(nd, clang_defaultDiagnosticDisplayOptions());
        fprintf(stderr, "%s\n", clang_getCString(ns));
        clang_disposeString(ns);
        clang_disposeDiagnostic(nd);
      }
      errors++;
    }
    clang_disposeDiagnostic(d);
  }
  if (errors) {
    fprintf(stderr, "%s fatal   : %s: %d error%s while reading it as CUDA with libclang\n", prog, src, errors,
            errors > 1 ? "s" : "");
    clang_disposeTranslationUnit(tu);
    clang_disposeIndex(index);
    return 1;
  }
  ctx x = {.tu = tu, .rw = rw};
  clang_getInclusions(tu, list_file, &x);
  kids top = children(clang_getTranslationUnitCursor(tu));
  for (unsigned i = 0; i < top.n; i++) {
    visit(&x, top.c[i]);
    x.skip_file = NULL;
  }
  free(top.c);
  strv_free(&x.dev_vars);
  strv_free(&x.ns_shared);
  strv_free(&x.ns_shared_fn);
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return rw->errors ? 1 : 0;
}
