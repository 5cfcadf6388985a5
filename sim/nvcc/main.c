/*
 * sim/nvcc/main.c — ncclsim-nvcc: builds CUDA programs for ncclsim.
 *
 * A stand-in for nvcc: it takes nvcc's command line, and for each .cu
 *   1. reads it with libclang as CUDA and notes what must change (parse.c),
 *   2. writes the program's files, edited, under a temporary root
 *      (rewrite.c),
 *   3. compiles the copy as host C++ with the host compiler (-ccbin, else
 *      the one ncclsim was built with), with ncclsim's headers, whose
 *      device half runs kernels on ncclsim's fibers;
 * then links like nvcc does, with libncclsim for libcudart and libnccl.
 * C and C++ inputs go to the host compiler as they are, objects to the link.
 */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvcc.h"

static void usage(void) {
  printf("Usage: %s [options] <inputs>\n\n"
         "Builds CUDA programs (.cu) for ncclsim, NCCL and CUDA simulated on the CPU: takes nvcc's options,\n"
         "compiles each .cu as host C++ whose kernels run on ncclsim's fibers, and links against libncclsim.\n"
         "Common options (as nvcc's): -c, -o FILE, -I DIR, -isystem DIR, -D X, -U X, -include FILE, -L DIR, -l LIB,\n"
         "-std=c++17, -O0..3, -g, -x cu, -rdc=true, -dc, -shared, -Xcompiler A,B, -Xlinker A,B, -ccbin CXX,\n"
         "-M/-MD/-MMD/-MF/-MT/-MP, -E, -v, -dryrun, -keep, --version. GPU code generation options (-gencode, -arch,\n"
         "-G, -lineinfo, -Xptxas, -maxrregcount, --expt-relaxed-constexpr, --extended-lambda, ...) are taken and\n"
         "have no effect. See ncclsim's docs/ncclsim.md, \"Kernels\".\n",
         prog);
}

static void version(void) {
  printf("%s: ncclsim's CUDA compiler driver (nccl4c %s)\n"
         "Builds CUDA programs whose kernels run on ncclsim's simulated devices, on the CPU\n"
         "Cuda compilation tools, release 13.0, V13.0.0 (ncclsim)\n"
         "Build ncclsim_%s\n",
         prog, PACKAGE_VERSION, PACKAGE_VERSION);
}

/* What nvcc defines for the host pass, and what says ncclsim's driver is
 * compiling. __CUDA_ARCH__ stays undefined: ncclsim compiles one pass,
 * for the host (docs/ncclsim.md says why). */
static void cuda_defines(strv *a) {
  strv_push(a, "-D__CUDACC__");
  strv_push(a, "-D__NVCC__");
  strv_push(a, "-D__CUDACC_VER_MAJOR__=13");
  strv_push(a, "-D__CUDACC_VER_MINOR__=0");
  strv_push(a, "-D__CUDACC_VER_BUILD__=0");
  strv_push(a, "-D__CUDACC_EXTENDED_LAMBDA__");
  strv_push(a, "-D__CUDACC_RELAXED_CONSTEXPR__");
  strv_push(a, "-D__NCCLSIM_NVCC__=1");
}

static char *real_or_same(const char *p) {
  char buf[PATH_MAX];
  return xstrdup(realpath(p, buf) ? buf : p);
}

/* The user's preprocessor flags for the host compile: include directories
 * moved under root first (where the edited copies are), then as given. */
static void moved_cpp(const strv *cpp, const char *root, strv *out) {
  for (size_t i = 0; i < cpp->n; i++) {
    const char *a = cpp->v[i];
    if (!strncmp(a, "-I", 2) && a[2]) {
      char *r = real_or_same(a + 2);
      if (r[0] == '/') strv_pushf(out, "-I%s%s", root, r);
      free(r);
    } else if (!strcmp(a, "-include") && i + 1 < cpp->n) {
      char *r = real_or_same(cpp->v[i + 1]);
      char *moved = xasprintf("%s%s", root, r);
      strv_push(out, "-include");
      strv_push(out, access(moved, F_OK) == 0 ? moved : cpp->v[i + 1]);
      free(moved);
      free(r);
      i++;
      continue;
    }
    strv_push(out, a);
  }
}

/* Runs a step; under -dryrun lists it as -v does, and runs nothing. */
static int run(const job *j, const strv *argv) {
  if (!j->dryrun) return run_cmd(argv, j->verbose);
  print_cmd(argv);
  return 0;
}

static void split_words(const char *s, strv *out) {
  char *copy = xstrdup(s), *save = NULL;
  for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) strv_push(out, t);
  free(copy);
}

/* The host compiler: -ccbin (a compiler, or the directory it is in), else
 * the configured one. */
static void host_cxx(const job *j, const paths *p, strv *a) {
  if (j->ccbin) {
    struct stat st;
    if (stat(j->ccbin, &st) == 0 && S_ISDIR(st.st_mode)) {
      strv_pushf(a, "%s/g++", j->ccbin);
    } else {
      strv_push(a, j->ccbin);
    }
    return;
  }
  split_words(p->cxx, a);
}

/* Under ThreadSanitizer (-fsanitize=thread among the host flags, not
 * taken back), the compiler tells volatile accesses apart: libncclsim
 * checks them as relaxed atomics, as a GPU's are (sim/kernel/volatile.c). */
static void tsan_volatile(strv *cc) {
  bool tsan = false;
  for (size_t i = 0; i < cc->n; i++) {
    const char *a = cc->v[i];
    bool on = !strncmp(a, "-fsanitize=", 11), off = !strncmp(a, "-fno-sanitize=", 14);
    if (!on && !off) continue;
    char *list = xstrdup(strchr(a, '=') + 1), *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
      if (!strcmp(t, "thread") || (off && !strcmp(t, "all"))) tsan = on;
    free(list);
  }
  if (!tsan) return;
  const char *base = strrchr(cc->v[0], '/');
  if (strstr(base ? base + 1 : cc->v[0], "clang")) {
    strv_push(cc, "-mllvm");
    strv_push(cc, "-tsan-distinguish-volatile=1");
  } else {
    strv_push(cc, "--param=tsan-distinguish-volatile=1");
  }
}

/* Rewrites `dep` (a make dependency file) with root's prefix taken out. */
static void fix_deps(const char *dep, const char *root) {
  size_t len;
  char *text = read_file(dep, &len);
  if (!text) return;
  sbuf b = {0};
  size_t rl = strlen(root);
  for (size_t i = 0; i < len;) {
    if (!strncmp(text + i, root, rl)) {
      i += rl;
      continue;
    }
    sb_add(&b, text + i, 1);
    i++;
  }
  write_file(dep, b.s ? b.s : "", b.n);
  free(b.s);
  free(text);
}

/* The host compiler's macros, as `-dM -E` lists them for the job's host
 * flags (or for none). */
static char *host_macro_list(const job *j, const paths *p, const char *file, bool flags) {
  strv a = {0};
  host_cxx(j, p, &a);
  strv_push(&a, "-x");
  strv_push(&a, "c++");
  strv_pushf(&a, "-std=%s", j->std ? j->std : "c++17");
  if (flags) strv_append(&a, &j->host);
  strv_push(&a, "-dM");
  strv_push(&a, "-E");
  strv_push(&a, "-o");
  strv_push(&a, file);
  strv_push(&a, "/dev/null");
  int rc = run_cmd(&a, j->verbose);
  strv_free(&a);
  return rc ? NULL : read_file(file, NULL);
}

/* The lines of a `-dM -E` listing, one after another: NULL after the
 * last. */
static const char *next_line(const char *l) {
  const char *e = strchr(l, '\n');
  return e && e[1] ? e + 1 : NULL;
}

static size_t line_len(const char *l) {
  const char *e = strchr(l, '\n');
  return e ? (size_t)(e - l) : strlen(l);
}

/* A "#define NAME..." line's macro name (without its parameters): its
 * length, 0 for another line. */
static size_t macro_name(const char *l) {
  if (strncmp(l, "#define ", 8)) return 0;
  return strcspn(l + 8, " (\n");
}

/* The "#define" line of the listing that defines name, or NULL. */
static const char *find_macro(const char *list, const char *name, size_t n) {
  for (const char *l = list; l; l = next_line(l))
    if (macro_name(l) == n && !strncmp(l + 8, name, n)) return l;
  return NULL;
}

/* What the host flags change in the preprocessor, for the parse: real nvcc
 * preprocesses with the host compiler, so code under
 * `#ifdef __SANITIZE_ADDRESS__` (-fsanitize=address), `_OPENMP` (-fopenmp)
 * or `__OPTIMIZE__` (-O2) is read as the host compile will read it. Clang
 * would define some of these itself, or none (__SANITIZE_ADDRESS__): the
 * host compiler's word is the one that counts. Two preprocessor runs, once
 * a job, and only for a job with host flags: a -D for each macro they
 * define or redefine, a -U for each they drop. */
static void host_flag_macros(const job *j, const paths *p, const char *tmp, strv *out) {
  if (!j->host.n) return;
  char *f0 = xasprintf("%s/macros-0", tmp), *f1 = xasprintf("%s/macros-1", tmp);
  char *base = host_macro_list(j, p, f0, false), *with = host_macro_list(j, p, f1, true);
  if (base && with) {
    for (const char *l = with; l; l = next_line(l)) {
      size_t n = macro_name(l), len = line_len(l);
      if (!n) continue;
      const char *old = find_macro(base, l + 8, n);
      if (old && line_len(old) == len && !strncmp(old, l, len)) continue;
      /* "NAME value" or "NAME(params) value": -DNAME=value, -DNAME(params)=value */
      const char *d = l + 8, *sp = memchr(d, ' ', len - 8);
      if (!sp) sp = l + len;
      const char *value = sp < l + len ? sp + 1 : sp;
      strv_pushf(out, "-D%.*s=%.*s", (int)(sp - d), d, (int)(l + len - value), value);
    }
    for (const char *l = base; l; l = next_line(l)) {
      size_t n = macro_name(l);
      if (n && !find_macro(with, l + 8, n)) strv_pushf(out, "-U%.*s", (int)n, l + 8);
    }
  }
  free(base);
  free(with);
  free(f0);
  free(f1);
}

static int compile_cu(const job *j, const paths *p, const strv *macros, const char *src, const char *out, const char *tmp,
                      int n) {
  /* 1. read it as CUDA */
  strv parse = {0};
  strv_push(&parse, "-x");
  strv_push(&parse, "cuda");
  strv_push(&parse, "--cuda-host-only");
  strv_push(&parse, "-nocudainc");
  strv_push(&parse, "-nocudalib");
  /* clang's headers without its cuda_wrappers (they clash with ncclsim's) */
  strv_push(&parse, "-nobuiltininc");
  strv_push(&parse, "-isystem");
  strv_pushf(&parse, "%s/include", p->resource);
  strv_push(&parse, "-Xclang");
  strv_push(&parse, "-fcuda-allow-variadic-functions");
  /* Device code calls host functions here (it is host code): clang says
   * so only for code it emits for a GPU, which a host-only read has none. */
  strv_push(&parse, "-fgpu-defer-diag");
  strv_push(&parse, "-Wno-unknown-cuda-version");
  strv_push(&parse, "-ferror-limit=20");
  strv_pushf(&parse, "-std=%s", j->std ? j->std : "c++17");
  cuda_defines(&parse);
  strv_append(&parse, macros);
  strv_push(&parse, "-D__NCCLSIM_PARSE__=1");
  strv_push(&parse, "-isystem");
  strv_push(&parse, p->include);
  strv_push(&parse, "-include");
  strv_pushf(&parse, "%s/ncclsim_device/prelude.h", p->include);
  strv_append(&parse, &j->cpp);
  rewrite rw = {0};
  int rc = nvcc_parse(src, &parse, p, &rw, j->verbose);
  strv_free(&parse);
  if (rc) return 1;
  /* 2. the edited tree */
  char *root = xasprintf("%s/root%d", tmp, n);
  char *real = real_or_same(src);
  char *copy = nvcc_write_tree(&rw, root, real);
  if (!copy) return 1;
  /* 3. the host compile */
  strv cc = {0};
  host_cxx(j, p, &cc);
  strv_push(&cc, "-x");
  strv_push(&cc, "c++");
  strv_pushf(&cc, "-std=%s", j->std ? j->std : "c++17");
  cuda_defines(&cc);
  strv_push(&cc, "-isystem");
  strv_push(&cc, p->include);
  strv_push(&cc, "-include");
  strv_pushf(&cc, "%s/ncclsim_device/prelude.h", p->include);
  moved_cpp(&j->cpp, root, &cc);
  char *dir = xstrdup(real);
  strv_push(&cc, "-iquote");
  strv_push(&cc, dirname(dir));
  free(dir);
  strv_append(&cc, &j->host);
  tsan_volatile(&cc);
  if (j->shared) strv_push(&cc, "-fPIC");
  strv_append(&cc, &j->deps);
  if (j->mode == MODE_PREPROCESS) {
    strv_push(&cc, "-E");
  } else {
    strv_push(&cc, "-c");
  }
  strv_push(&cc, copy);
  /* What -E, -M and -MM write (to stdout unless -o: then through a file
   * of ours) names the sources, not their copies under root. */
  char *to_stdout = j->mode == MODE_PREPROCESS && !out ? xasprintf("%s/stdout%d", tmp, n) : NULL;
  if (out || to_stdout) {
    strv_push(&cc, "-o");
    strv_push(&cc, out ? out : to_stdout);
  }
  rc = run(j, &cc);
  if (rc == 0 && j->mode == MODE_PREPROCESS && !j->dryrun) {
    fix_deps(out ? out : to_stdout, root);
    size_t len;
    char *text = to_stdout ? read_file(to_stdout, &len) : NULL;
    if (text) fwrite(text, 1, len, stdout);
    free(text);
  }
  free(to_stdout);
  if (rc == 0 && j->deps.n && !j->dryrun) {
    const char *mf = NULL;
    for (size_t i = 0; i + 1 < j->deps.n; i++)
      if (!strcmp(j->deps.v[i], "-MF")) mf = j->deps.v[i + 1];
    char *dflt = NULL;
    if (!mf && out) {
      /* gcc's name: -o's, its suffix (if it has one) replaced by .d */
      dflt = xmalloc(strlen(out) + 3);
      strcpy(dflt, out);
      char *dot = strrchr(dflt, '.');
      if (!dot || strchr(dot, '/')) dot = dflt + strlen(dflt);
      strcpy(dot, ".d");
      mf = dflt;
    }
    if (mf) fix_deps(mf, root);
    free(dflt);
  }
  strv_free(&cc);
  free(copy);
  free(real);
  free(root);
  for (size_t i = 0; i < rw.nfiles; i++) {
    for (size_t e = 0; e < rw.files[i].nedits; e++) free(rw.files[i].edits[e].text);
    free(rw.files[i].edits);
    free(rw.files[i].real);
    free(rw.files[i].name);
  }
  free(rw.files);
  return rc ? 1 : 0;
}

static int compile_host(const job *j, const paths *p, const input *in, const char *out) {
  strv cc = {0};
  host_cxx(j, p, &cc);
  strv_push(&cc, "-x");
  strv_push(&cc, in->lang == LANG_C ? "c" : "c++");
  if (in->lang != LANG_C) strv_pushf(&cc, "-std=%s", j->std ? j->std : "c++17");
  strv_push(&cc, "-isystem");
  strv_push(&cc, p->include);
  strv_append(&cc, &j->cpp);
  strv_append(&cc, &j->host);
  if (j->shared) strv_push(&cc, "-fPIC");
  strv_append(&cc, &j->deps);
  strv_push(&cc, j->mode == MODE_PREPROCESS ? "-E" : "-c");
  strv_push(&cc, in->path);
  if (out) {
    strv_push(&cc, "-o");
    strv_push(&cc, out);
  }
  int rc = run(j, &cc);
  strv_free(&cc);
  return rc ? 1 : 0;
}

/* libcudart and libnccl are libncclsim's: their -l go. */
static bool ncclsim_lib(const char *a) {
  static const char *libs[] = {"-lcudart", "-lcudart_static", "-lcuda", "-lnccl", "-lnccl_static", "-lcudadevrt"};
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
    if (!strcmp(a, libs[i])) return true;
  return false;
}

static char *object_name(const char *src) {
  char *copy = xstrdup(src);
  char *base = basename(copy);
  char *dot = strrchr(base, '.');
  if (dot) *dot = 0;
  char *o = xasprintf("%s.o", base);
  free(copy);
  return o;
}

/* What a run holds, let go at exit, a fatal error's (die) included: the
 * temporary directory goes, and nothing is left for a leak checker. */
static job j;
static paths p;
static char *tmp;
static strv objs;
static strv macros; /* host_flag_macros', for every .cu of the job */

/* A fatal signal (^C, a build's timeout): the command being run is ended
 * and the temporary directory removed, with async-signal-safe calls only,
 * then the signal is raised again to end as it would have. The owner's
 * pid keeps a forked child that has not yet exec'ed from doing it. */
static pid_t owner;

static void on_fatal_signal(int sig) {
  if (getpid() == owner) {
    pid_t c = (pid_t)nvcc_child;
    if (c > 0) {
      kill(c, SIGTERM);
      waitpid(c, NULL, 0);
    }
    if (tmp && !j.keep) remove_tree(tmp);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void at_exit(void) {
  if (tmp && !j.keep) remove_tree(tmp);
  free(tmp);
  tmp = NULL;
  strv_free(&objs);
  strv_free(&macros);
  nvcc_paths_free(&p);
  nvcc_job_free(&j);
}

int main(int argc, char **argv) {
  atexit(at_exit);
  if (nvcc_options(argc, argv, &j)) return 1;
  if (j.help || j.version) {
    if (j.help) usage();
    else version();
    return 0;
  }
  if (!j.ninputs) die("No input files specified; use option --help for more information");
  nvcc_paths(&p);
  size_t nsrc = 0;
  for (size_t i = 0; i < j.ninputs; i++) nsrc += j.inputs[i].lang != LANG_OBJ;
  if ((j.mode == MODE_COMPILE || j.mode == MODE_PREPROCESS) && j.out && nsrc > 1)
    die("A single input file is required for a non-link phase when an outputfile is specified");
  const char *tmpdir = getenv("TMPDIR");
  char *dir = xasprintf("%s/ncclsim-nvcc.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(dir)) die("cannot make a temporary directory %s: %s", dir, strerror(errno));
  tmp = dir;
  owner = getpid();
  static const int fatal[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction sa = {.sa_handler = on_fatal_signal};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) sigaddset(&sa.sa_mask, fatal[i]);
  for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) sigaction(fatal[i], &sa, NULL);
  if (j.keep) fprintf(stderr, "%s: keeping %s\n", prog, tmp);
  int rc = 0;
  bool macros_done = false;
  for (size_t i = 0; i < j.ninputs && rc == 0; i++) {
    const input *in = &j.inputs[i];
    if (in->lang == LANG_OBJ) {
      strv_push(&objs, in->path);
      continue;
    }
    char *out;
    if (j.mode == MODE_PREPROCESS) out = j.out ? xstrdup(j.out) : NULL;
    else if (j.mode == MODE_COMPILE) out = j.out ? xstrdup(j.out) : object_name(in->path);
    else out = xasprintf("%s/input%zu.o", tmp, i);
    if (in->lang == LANG_CU && !macros_done) {
      host_flag_macros(&j, &p, tmp, &macros);
      macros_done = true;
    }
    rc = in->lang == LANG_CU ? compile_cu(&j, &p, &macros, in->path, out, tmp, (int)i) : compile_host(&j, &p, in, out);
    if (out) strv_push(&objs, out);
    free(out);
  }
  if (rc == 0 && j.mode == MODE_LIB) {
    strv ar = {0};
    strv_push(&ar, "ar");
    strv_push(&ar, "rcs");
    strv_push(&ar, j.out ? j.out : "a.a");
    strv_append(&ar, &objs);
    rc = run(&j, &ar) ? 1 : 0;
    strv_free(&ar);
  } else if (rc == 0 && j.mode == MODE_DLINK) {
    /* Device code is host code here: a device link has nothing to join.
     * Its object is empty, for the Makefiles that link it. */
    char *empty = xasprintf("%s/dlink.c", tmp);
    write_file(empty, "", 0);
    strv cc = {0};
    host_cxx(&j, &p, &cc);
    strv_push(&cc, "-x");
    strv_push(&cc, "c");
    strv_push(&cc, "-c");
    strv_push(&cc, empty);
    strv_push(&cc, "-o");
    strv_push(&cc, j.out ? j.out : "a_dlink.o");
    rc = run(&j, &cc) ? 1 : 0;
    strv_free(&cc);
    free(empty);
  } else if (rc == 0 && j.mode == MODE_LINK) {
    strv ld = {0};
    host_cxx(&j, &p, &ld);
    strv_append(&ld, &j.host);
    if (j.shared) strv_push(&ld, "-shared");
    strv_push(&ld, "-o");
    strv_push(&ld, j.out ? j.out : "a.out");
    strv_append(&ld, &objs);
    for (size_t i = 0; i < j.ld.n; i++)
      if (!ncclsim_lib(j.ld.v[i])) strv_push(&ld, j.ld.v[i]);
    strv_pushf(&ld, "-L%s", p.libdir);
    strv_pushf(&ld, "-Wl,-rpath,%s", p.libdir);
    strv_push(&ld, "-lncclsim");
    strv_push(&ld, "-pthread");
    /* A libncclsim built with sanitizers needs their runtimes first in the
     * program's libraries (ASan refuses to start otherwise). */
    strv_split(&ld, NVCC_SAN_LDFLAGS);
    rc = run(&j, &ld) ? 1 : 0;
    strv_free(&ld);
  }
  return rc;
}
