/*
 * sim/nvcc/options.c — nvcc's command line.
 *
 * nvcc's options, short and long, with the value attached (-I/x, -O3),
 * after '=' or as the next argument; list options take comma-separated
 * values (-Xcompiler -fPIC,-Wall). Options that only steer code generation
 * for a GPU (-gencode, -arch, -Xptxas, -lineinfo, -G, -maxrregcount, ...)
 * are taken and have no effect: ncclsim compiles for the host. Anything
 * else is an error, as it is for nvcc, unless
 * --forward-unknown-to-host-compiler passes it to the host compiler.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvcc.h"

typedef enum {
  O_OUT, O_COMPILE, O_PREPROC, O_DC, O_DLINK, O_LIB, O_RDC, O_INC, O_SYSINC, O_DEF, O_UNDEF, O_PREINC,
  O_LIBPATH, O_LIB_, O_XCOMPILER, O_XLINKER, O_IGNORE_VAL, O_IGNORE, O_CCBIN, O_STD, O_OPT, O_DEBUG, O_LANG,
  O_SHARED, O_NOWARN, O_WERROR, O_VERBOSE, O_DRYRUN, O_KEEP, O_VERSION, O_HELP, O_DEP, O_DEP_VAL, O_HOST,
  O_FWD_CC, O_FWD_LD, O_M64, O_ODIR
} opt_kind;

typedef struct {
  const char *name, *longname;
  opt_kind kind;
  bool value; /* takes a value */
} opt;

static const opt table[] = {
    {"-o", "--output-file", O_OUT, true},
    {"-c", "--compile", O_COMPILE, false},
    {"-E", "--preprocess", O_PREPROC, false},
    {"-dc", "--device-c", O_DC, false},
    {"-dlink", "--device-link", O_DLINK, false},
    {"-lib", "--lib", O_LIB, false},
    {"-rdc", "--relocatable-device-code", O_RDC, true},
    {"-I", "--include-path", O_INC, true},
    {"-isystem", "--system-include", O_SYSINC, true},
    {"-D", "--define-macro", O_DEF, true},
    {"-U", "--undefine-macro", O_UNDEF, true},
    {"-include", "--pre-include", O_PREINC, true},
    {"-L", "--library-path", O_LIBPATH, true},
    {"-l", "--library", O_LIB_, true},
    {"-Xcompiler", "--compiler-options", O_XCOMPILER, true},
    {"-Xlinker", "--linker-options", O_XLINKER, true},
    {"-Xptxas", "--ptxas-options", O_IGNORE_VAL, true},
    {"-Xnvlink", "--nvlink-options", O_IGNORE_VAL, true},
    {"-Xfatbin", "--fatbin-options", O_IGNORE_VAL, true},
    {"-Xcudafe", "--cudafe-options", O_IGNORE_VAL, true},
    {"-Xarchive", "--archive-options", O_IGNORE_VAL, true},
    {"-ccbin", "--compiler-bindir", O_CCBIN, true},
    {"-std", "--std", O_STD, true},
    {"-O", "--optimize", O_OPT, true},
    {"-g", "--debug", O_DEBUG, false},
    {"-G", "--device-debug", O_IGNORE, false},
    {"-lineinfo", "--generate-line-info", O_IGNORE, false},
    {"-gencode", "--generate-code", O_IGNORE_VAL, true},
    {"-arch", "--gpu-architecture", O_IGNORE_VAL, true},
    {"-code", "--gpu-code", O_IGNORE_VAL, true},
    {"-expt-relaxed-constexpr", "--expt-relaxed-constexpr", O_IGNORE, false},
    {"-expt-extended-lambda", "--expt-extended-lambda", O_IGNORE, false},
    {"-extended-lambda", "--extended-lambda", O_IGNORE, false},
    {"-x", "--x", O_LANG, true},
    {"-shared", "--shared", O_SHARED, false},
    {"-w", "--disable-warnings", O_NOWARN, false},
    {"-Werror", "--Werror", O_WERROR, true},
    {"-Wno-deprecated-gpu-targets", "--Wno-deprecated-gpu-targets", O_IGNORE, false},
    {"-Wno-deprecated-declarations", "--Wno-deprecated-declarations", O_HOST, false},
    {"-Wreorder", "--Wreorder", O_HOST, false},
    {"-Wdefault-stream-launch", "--Wdefault-stream-launch", O_IGNORE, false},
    {"-Wext-lambda-captures-this", "--Wext-lambda-captures-this", O_IGNORE, false},
    {"-Wmissing-launch-bounds", "--Wmissing-launch-bounds", O_IGNORE, false},
    {"-use_fast_math", "--use_fast_math", O_IGNORE, false},
    {"-ftz", "--ftz", O_IGNORE_VAL, true},
    {"-prec-div", "--prec-div", O_IGNORE_VAL, true},
    {"-prec-sqrt", "--prec-sqrt", O_IGNORE_VAL, true},
    {"-fmad", "--fmad", O_IGNORE_VAL, true},
    {"-maxrregcount", "--maxrregcount", O_IGNORE_VAL, true},
    {"-res-usage", "--resource-usage", O_IGNORE, false},
    {"-t", "--threads", O_IGNORE_VAL, true},
    {"-split-compile", "--split-compile", O_IGNORE_VAL, true},
    {"-keep", "--keep", O_KEEP, false},
    {"-keep-dir", "--keep-dir", O_IGNORE_VAL, true},
    {"-odir", "--output-directory", O_ODIR, true},
    {"-v", "--verbose", O_VERBOSE, false},
    {"-dryrun", "--dryrun", O_DRYRUN, false},
    {"-V", "--version", O_VERSION, false},
    {"-h", "--help", O_HELP, false},
    {"-cudart", "--cudart", O_IGNORE_VAL, true},
    {"-cudadevrt", "--cudadevrt", O_IGNORE_VAL, true},
    {"-diag-suppress", "--diag-suppress", O_IGNORE_VAL, true},
    {"-diag-error", "--diag-error", O_IGNORE_VAL, true},
    {"-diag-warn", "--diag-warn", O_IGNORE_VAL, true},
    {"-allow-unsupported-compiler", "--allow-unsupported-compiler", O_IGNORE, false},
    {"-extra-device-vectorization", "--extra-device-vectorization", O_IGNORE, false},
    {"-forward-unknown-to-host-compiler", "--forward-unknown-to-host-compiler", O_FWD_CC, false},
    {"-forward-unknown-to-host-linker", "--forward-unknown-to-host-linker", O_FWD_LD, false},
    {"-m64", "--machine", O_M64, false},
    {"-pg", "--profile", O_HOST, false},
    {"-M", "--generate-dependencies", O_DEP, false},
    {"-MM", "--generate-nonsystem-dependencies", O_DEP, false},
    {"-MD", "--generate-dependencies-with-compile", O_DEP, false},
    {"-MMD", "--generate-nonsystem-dependencies-with-compile", O_DEP, false},
    {"-MP", "--generate-dependency-targets", O_DEP, false},
    {"-MF", "--dependency-output", O_DEP_VAL, true},
    {"-MT", "--dependency-target-name", O_DEP_VAL, true},
};

/* Options whose value may be attached to the name: -I/x, -DX, -O3, -lm. */
static bool attachable(const opt *o) {
  return o->kind == O_INC || o->kind == O_DEF || o->kind == O_UNDEF || o->kind == O_LIBPATH ||
         o->kind == O_LIB_ || o->kind == O_OPT;
}

static void push_list(strv *s, const char *value) {
  char *copy = xstrdup(value), *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) strv_push(s, t);
  free(copy);
}

static lang_t lang_of(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot || strchr(dot, '/')) return LANG_NONE;
  if (!strcmp(dot, ".cu")) return LANG_CU;
  if (!strcmp(dot, ".c")) return LANG_C;
  if (!strcmp(dot, ".cc") || !strcmp(dot, ".cpp") || !strcmp(dot, ".cxx") || !strcmp(dot, ".C") ||
      !strcmp(dot, ".c++"))
    return LANG_CXX;
  if (!strcmp(dot, ".o") || !strcmp(dot, ".a") || !strcmp(dot, ".so") || strstr(path, ".so."))
    return LANG_OBJ;
  return LANG_NONE;
}

static int apply(job *j, const opt *o, const char *v, lang_t *force, bool *fwd_cc) {
  switch (o->kind) {
  case O_OUT: j->out = v; break;
  case O_COMPILE: if (j->mode == MODE_LINK) j->mode = MODE_COMPILE; break;
  case O_PREPROC: j->mode = MODE_PREPROCESS; break;
  case O_DC: j->mode = MODE_COMPILE; break;
  case O_DLINK: j->mode = MODE_DLINK; break;
  case O_LIB: j->mode = MODE_LIB; break;
  case O_RDC:
    if (strcmp(v, "true") && strcmp(v, "false")) {
      fprintf(stderr, "%s fatal   : Value '%s' is not defined for option 'relocatable-device-code'\n", prog, v);
      return 2;
    }
    break; /* one host object either way: ncclsim links device code as host code */
  case O_INC: strv_pushf(&j->cpp, "-I%s", v); break;
  case O_SYSINC: strv_push(&j->cpp, "-isystem"), strv_push(&j->cpp, v); break;
  case O_DEF: strv_pushf(&j->cpp, "-D%s", v); break;
  case O_UNDEF: strv_pushf(&j->cpp, "-U%s", v); break;
  case O_PREINC: strv_push(&j->cpp, "-include"), strv_push(&j->cpp, v); break;
  case O_LIBPATH: strv_pushf(&j->ld, "-L%s", v); break;
  case O_LIB_: strv_pushf(&j->ld, "-l%s", v); break;
  case O_XCOMPILER: push_list(&j->host, v); break;
  case O_XLINKER: {
    strv t = {0};
    push_list(&t, v);
    for (size_t i = 0; i < t.n; i++) strv_pushf(&j->ld, "-Wl,%s", t.v[i]);
    strv_free(&t);
    break;
  }
  case O_CCBIN: j->ccbin = v; break;
  case O_STD: j->std = v; break;
  case O_OPT: strv_pushf(&j->host, "-O%s", v); break;
  case O_DEBUG: strv_push(&j->host, "-g"); break;
  case O_LANG:
    if (!strcmp(v, "cu")) *force = LANG_CU;
    else if (!strcmp(v, "c++")) *force = LANG_CXX;
    else if (!strcmp(v, "c")) *force = LANG_C;
    else {
      fprintf(stderr, "%s fatal   : Value '%s' is not defined for option 'x'\n", prog, v);
      return 2;
    }
    break;
  case O_SHARED: j->shared = true; break;
  case O_NOWARN: strv_push(&j->host, "-w"); break;
  case O_WERROR:
    if (strstr(v, "all-warnings")) strv_push(&j->host, "-Werror");
    break;
  case O_VERBOSE: j->verbose = true; break;
  case O_DRYRUN: j->dryrun = j->verbose = true; break;
  case O_KEEP: j->keep = true; break;
  case O_VERSION: j->version = true; break;
  case O_HELP: j->help = true; break;
  case O_DEP:
    strv_push(&j->deps, o->name);
    if (!strcmp(o->name, "-M") || !strcmp(o->name, "-MM")) j->mode = MODE_PREPROCESS;
    break;
  case O_DEP_VAL: strv_push(&j->deps, o->name), strv_push(&j->deps, v); break;
  case O_HOST: strv_push(&j->host, o->name); break;
  case O_FWD_CC: *fwd_cc = true; break;
  case O_FWD_LD: break;
  case O_M64: break;
  case O_ODIR: break;
  case O_IGNORE:
  case O_IGNORE_VAL: break;
  }
  return 0;
}

static void split_env(const char *name, strv *out) {
  const char *e = getenv(name);
  if (e) strv_split(out, e);
}

int nvcc_options(int argc, char **argv, job *j) {
  memset(j, 0, sizeof *j);
  strv args = {0};
  split_env("NVCC_PREPEND_FLAGS", &args);
  for (int i = 1; i < argc; i++) strv_push(&args, argv[i]);
  split_env("NVCC_APPEND_FLAGS", &args);
  j->args = args; /* the job points into its strings */
  lang_t force = LANG_NONE;
  bool fwd_cc = false;
  size_t cap = 0;
  for (size_t i = 0; i < args.n; i++) {
    const char *a = args.v[i];
    if (a[0] != '-' || !a[1]) {
      lang_t l = lang_of(a);
      if (force != LANG_NONE && l != LANG_OBJ) l = force;
      if (l == LANG_NONE) {
        fprintf(stderr, "%s fatal   : Don't know what to do with '%s'\n", prog, a);
        return 2;
      }
      if (j->ninputs == cap) {
        cap = cap ? 2 * cap : 8;
        j->inputs = xrealloc(j->inputs, cap * sizeof *j->inputs);
      }
      j->inputs[j->ninputs].path = xstrdup(a);
      j->inputs[j->ninputs++].lang = l;
      continue;
    }
    const opt *hit = NULL;
    const char *value = NULL;
    /* Whole names first (-lineinfo is not -l with "ineinfo"), then a value
     * after '=', then one attached to a short name. */
    for (int pass = 0; pass < 3 && !hit; pass++)
      for (size_t k = 0; k < sizeof table / sizeof table[0] && !hit; k++) {
        const opt *o = &table[k];
        const char *names[2] = {o->name, o->longname};
        for (int n = 0; n < 2 && !hit; n++) {
          size_t len = strlen(names[n]);
          if (strncmp(a, names[n], len)) continue;
          if (pass == 0 && !a[len]) {
            hit = o;
          } else if (pass == 1 && a[len] == '=' && o->value) {
            hit = o;
            value = a + len + 1;
          } else if (pass == 2 && n == 0 && a[len] && o->value && attachable(o)) {
            hit = o;
            value = a + len;
          }
        }
      }
    if (!hit) {
      /* nvcc's -O has an optional level. */
      if (!strcmp(a, "-O")) {
        strv_push(&j->host, "-O3");
        continue;
      }
      if (fwd_cc) {
        strv_push(&j->host, a);
        continue;
      }
      fprintf(stderr, "%s fatal   : Unknown option '%s'\n", prog, a);
      return 2;
    }
    if (hit->value && !value) {
      if (i + 1 >= args.n) {
        fprintf(stderr, "%s fatal   : Option '%s' expects a value\n", prog, a);
        return 2;
      }
      value = args.v[++i];
    }
    int rc = apply(j, hit, value, &force, &fwd_cc);
    if (rc) return rc;
  }
  return 0;
}

void nvcc_job_free(job *j) {
  for (size_t i = 0; i < j->ninputs; i++) free(j->inputs[i].path);
  free(j->inputs);
  strv_free(&j->cpp);
  strv_free(&j->host);
  strv_free(&j->ld);
  strv_free(&j->deps);
  strv_free(&j->args);
  memset(j, 0, sizeof *j);
}
