/*
 * sim/nvcc/paths.c — where the driver finds ncclsim's headers and library.
 *
 * Installed, next to the library it was built with (the configured
 * prefix, or the same layout moved elsewhere, as `make distcheck` and
 * DESTDIR do); run from the build tree (make check), the source tree's
 * headers and the built library.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvcc.h"

static bool exists(const char *path) { return access(path, F_OK) == 0; }

/* `path` with the prefix `from` replaced by `to`; NULL if it lacks it. */
static char *rebase(const char *path, const char *from, const char *to) {
  size_t n = strlen(from);
  if (strncmp(path, from, n) || (path[n] && path[n] != '/')) return NULL;
  return xasprintf("%s%s", to, path + n);
}

void nvcc_paths(paths *p) {
  memset(p, 0, sizeof *p);
  p->resource = xstrdup(NVCC_CLANG_RESOURCE);
  const char *cxx = getenv("NVCC_CCBIN");
  p->cxx = xstrdup(cxx && *cxx ? cxx : NVCC_CXX);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0; /* exe: the directory it runs from */
    /* Installed: the prefix is the bin directory's parent, wherever the
     * tree was moved. */
    char *prefix = rebase(exe, NVCC_INSTALL_BINDIR, NVCC_INSTALL_PREFIX) ? xstrdup(NVCC_INSTALL_PREFIX) : NULL;
    if (!prefix) {
      char *up = xstrdup(exe);
      char *s = strrchr(up, '/');
      if (s) *s = 0;
      prefix = up;
    }
    char *inc = rebase(NVCC_INSTALL_INCLUDE, NVCC_INSTALL_PREFIX, prefix);
    char *lib = rebase(NVCC_INSTALL_LIBDIR, NVCC_INSTALL_PREFIX, prefix);
    char *probe = inc ? xasprintf("%s/cuda_runtime.h", inc) : NULL;
    bool installed = probe && exists(probe) && lib;
    free(probe);
    free(prefix);
    if (installed) {
      p->include = inc;
      p->libdir = lib;
      return;
    }
    free(inc);
    free(lib);
  }
  p->include = xstrdup(NVCC_BUILD_INCLUDE);
  p->libdir = xstrdup(NVCC_BUILD_LIBDIR);
}

void nvcc_paths_free(paths *p) {
  free(p->include);
  free(p->libdir);
  free(p->resource);
  free(p->cxx);
  memset(p, 0, sizeof *p);
}
