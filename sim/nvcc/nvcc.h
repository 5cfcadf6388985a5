/*
 * sim/nvcc/nvcc.h — ncclsim-nvcc, the compiler driver that builds CUDA
 * programs (.cu) for ncclsim: shared by its files.
 *
 *   options.c  nvcc's command line, read into a job
 *   paths.c    where ncclsim's headers, library and clang's are
 *   parse.c    the .cu read by libclang: what must be rewritten, as edits
 *   ptx.c      inline PTX turned into calls of ncclsim's device headers
 *   rewrite.c  the edited copies of the sources, in a tree of their own
 *   main.c     the steps: rewrite, compile with the host compiler, link
 *   util.c     string vectors, files, running a command
 */
#ifndef NCCLSIM_NVCC_H_
#define NCCLSIM_NVCC_H_

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#define NVCC_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ---- util.c ---- */
typedef struct strv {
  char **v;
  size_t n, cap;
} strv;
void strv_push(strv *s, const char *x);
void strv_pushf(strv *s, const char *fmt, ...) NVCC_PRINTF(2, 3);
void strv_append(strv *s, const strv *t);
/* Pushes each word of `words` (split at blanks). */
void strv_split(strv *s, const char *words);
void strv_free(strv *s);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) NVCC_PRINTF(1, 2);
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
/* A growing string. */
typedef struct sbuf {
  char *s;
  size_t n, cap;
} sbuf;
void sb_add(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_printf(sbuf *b, const char *fmt, ...) NVCC_PRINTF(2, 3);
/* The whole file; NULL (errno set) if unreadable. */
char *read_file(const char *path, size_t *len);
int write_file(const char *path, const char *data, size_t len);
/* mkdir -p. */
int make_dirs(const char *path);
/* rm -rf of a directory this program made. */
void remove_tree(const char *path);
/* Runs argv (argv[0] looked up in PATH), waits; its exit status, or -1.
 * Prints the command first when verbose, as print_cmd does ("#$ ..."). */
int run_cmd(const strv *argv, bool verbose);
/* The command run_cmd waits for (0: none), for a fatal signal's handler. */
extern volatile sig_atomic_t nvcc_child;
void print_cmd(const strv *argv);
extern const char *prog; /* "ncclsim-nvcc", for messages */
void die(const char *fmt, ...) NVCC_PRINTF(1, 2) __attribute__((noreturn));
void warnx_(const char *fmt, ...) NVCC_PRINTF(1, 2);

/* ---- options.c ---- */
typedef enum { LANG_NONE = 0, LANG_CU, LANG_CXX, LANG_C, LANG_OBJ } lang_t;
typedef enum { MODE_LINK = 0, MODE_COMPILE, MODE_PREPROCESS, MODE_DLINK, MODE_LIB } mode_t_;

typedef struct input {
  char *path;
  lang_t lang;
} input;

typedef struct job {
  input *inputs;
  size_t ninputs;
  strv cpp;    /* -I, -isystem, -iquote, -D, -U, -include, in order */
  strv host;   /* -Xcompiler and what maps to it (-O, -g, -std, -shared, -fPIC): every host compile and link */
  strv ld;     /* -L, -l, -Xlinker: the link */
  strv deps;   /* -M, -MM, -MD, -MMD, -MF, -MT, -MQ, -MP */
  strv args;   /* the command line, environment flags included: the fields point into it */
  const char *out;
  const char *ccbin;
  const char *std; /* "c++17" */
  mode_t_ mode;
  bool shared, verbose, dryrun, keep, version, help;
} job;
/* Reads nvcc's options (and NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS); 0, or
 * 2 after printing the error. */
int nvcc_options(int argc, char **argv, job *j);
void nvcc_job_free(job *j);

/* ---- paths.c ---- */
typedef struct paths {
  char *include;  /* ncclsim's headers (cuda_runtime.h, nccl.h, ...) */
  char *libdir;   /* libncclsim.so */
  char *resource; /* clang's own headers (stddef.h, ...): <resource>/include */
  char *cxx;      /* the host compiler when no -ccbin */
} paths;
void nvcc_paths(paths *p);
void nvcc_paths_free(paths *p);

/* ---- parse.c and rewrite.c ---- */
/* An edit of a source: bytes [start, end) become text. */
typedef struct edit {
  unsigned start, end;
  char *text;
  unsigned seq; /* the order it was made in */
} edit;
typedef struct srcfile {
  char *real;    /* its real path: the key */
  char *name;    /* as the compiler names it (__FILE__) */
  edit *edits;
  size_t nedits, cap;
} srcfile;
typedef struct rewrite {
  srcfile *files;
  size_t nfiles;
  size_t errors; /* unsupported constructs reported */
} rewrite;
srcfile *rw_file(rewrite *rw, const char *real, const char *name);
void rw_edit(srcfile *f, unsigned start, unsigned end, char *text);
void rw_error(rewrite *rw, const char *file, unsigned line, unsigned col, const char *fmt, ...) NVCC_PRINTF(5, 6);

/* Parses `src` with libclang as CUDA and collects the edits that make it
 * host C++ for ncclsim; every file the translation unit opened outside the
 * system's and ncclsim's headers is listed (with no edits if none). 0, or
 * 1 after printing clang's errors or the unsupported constructs. */
int nvcc_parse(const char *src, const strv *clang_args, const paths *p, rewrite *rw, bool verbose);

/* Writes every listed file under root (at root + its real path), edited,
 * each starting with a #line that names the original, and returns the
 * copy of `src`. */
char *nvcc_write_tree(rewrite *rw, const char *root, const char *src);

/* ---- ptx.c ---- */
typedef struct asm_operand {
  char constraint[16]; /* "=r", "l", "+f", ... */
  char *expr;          /* its C++ expression, as written */
} asm_operand;
/* The C++ statement that does what the inline PTX `tmpl` does with these
 * operands (outputs first, as numbered in the template); NULL with *why
 * set (a static string or one to free) when an instruction is not
 * supported. */
char *nvcc_ptx(const char *tmpl, const asm_operand *ops, size_t nout, size_t nin, char **why);

#endif
