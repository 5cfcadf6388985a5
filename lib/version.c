/*
 * version.c — nccl4c's and NCCL's versions, and where NCCL was loaded from
 * (nccl.core Version, get_version, get_lib_version, get_lib_path).
 */
#include "config.h"

#include <dlfcn.h>

#include "n4c_internal.h"

void n4c_version_decode(int code, n4c_semver_t *out) {
  /* NCCL_VERSION: 2.8 and older are X*1000+Y*100+Z, later X*10000+Y*100+Z. */
  out->major = code >= 10000 ? code / 10000 : code / 1000;
  out->minor = code >= 10000 ? (code / 100) % 100 : (code / 100) % 10;
  out->patch = code % 100;
}

n4c_status_t n4c_get_lib_version(n4c_semver_t *out) {
  static const char op[] = "n4c_get_lib_version";
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  int code = 0;
  N4C_NCCLCHECK(op, ncclGetVersion, (&code));
  n4c_version_decode(code, out);
  return N4C_OK;
}

n4c_status_t n4c_get_version(n4c_version_t *out) {
  static const char op[] = "n4c_get_version";
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  n4c_semver_t lib;
  int code = 0;
  N4C_NCCLCHECK(op, ncclGetVersion, (&code));
  n4c_version_decode(code, &lib);
  out->nccl4c = (n4c_semver_t){N4C_VERSION_MAJOR, N4C_VERSION_MINOR, N4C_VERSION_PATCH};
  out->nccl = lib;
  n4c_version_decode(NCCL_VERSION_CODE, &out->nccl_header);
  return N4C_OK;
}

n4c_status_t n4c_get_lib_path(const char **out) {
  N4C_CHECK(n4c_check_ptr("n4c_get_lib_path", "out", out));
  *out = NULL;
  Dl_info info;
  void *sym = dlsym(RTLD_DEFAULT, "ncclGetVersion");
  if (!sym || !dladdr(sym, &info) || !info.dli_fname || !info.dli_fname[0]) return N4C_OK;
  /* Only a loaded shared object opens by its name: linked statically, the
   * symbol is the program's own, and the program has no library path. */
  void *lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (lib) {
    *out = info.dli_fname;
    dlclose(lib);
  }
  return N4C_OK;
}
