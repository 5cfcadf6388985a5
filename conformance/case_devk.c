/*
 * case_devk.c — DEVK cases: NCCL's device API used from CUDA kernels.
 *
 * The kernels and their checks are C++ (conformance/devk_*.cu, devk.h),
 * compiled by nvcc against real NCCL or by ncclsim-nvcc against ncclsim
 * into a module, n4c-devk.so, which the first DEVK case of a process
 * loads (dlopen): a program's kernels register with ncclsim as it loads,
 * which must come after a rank process has joined its arena (--procs,
 * --sim-hosts), not before the suite's main. Each case makes the
 * communicator (through nccl4c) and reports what the kernel function
 * found; without the module (no CUDA compiler at build time) it skips.
 * The GIN cases need a GIN type: on ncclsim they
 * run once per simulated type (PROXY, GDAKI, GPI), each on a communicator
 * of its own; on real NCCL on what the communicator supports, and skip
 * without GIN.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case.h"
#include "devk.h"
#ifdef NCCLSIM
#include <ncclsim.h>
#endif

/* The module's functions (devk.h), once loaded. */
static struct {
  bool tried, ok;
  char why[512];
  const char *(*order_name)(int);
  const char *(*signal_name)(int);
  const char *(*fence_name)(int);
  int (*lsa_pointers)(ncclComm_t, char *, size_t);
  int (*lsa_barrier)(ncclComm_t, int, char *, size_t);
  int (*lsa_devcomm)(ncclComm_t, const void *, char *, size_t);
  int (*hybrid_barrier)(ncclComm_t, char *, size_t);
  int (*gin_barrier)(ncclComm_t, int, char *, size_t);
  int (*gin_signal)(ncclComm_t, int, char *, size_t);
  int (*gin_counter)(ncclComm_t, char *, size_t);
  int (*gin_put_value)(ncclComm_t, char *, size_t);
  int (*ll_a2a)(ncclComm_t, char *, size_t);
} K;

/* N4C_DEVK_MODULE, else n4c-devk.so beside the program (or its libtool
 * wrapper's directory, one up), else where make install puts it. */
static void *open_module(void)
{
  char exe[PATH_MAX], path[PATH_MAX + 32];
  const char *env = getenv("N4C_DEVK_MODULE");
  if (env)
    return dlopen(env, RTLD_NOW | RTLD_LOCAL);
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *dir = dirname(exe);
    const char *rel[] = {"", "/.."};
    for (int i = 0; i < 2; i++) {
      snprintf(path, sizeof path, "%s%s/n4c-devk.so", dir, rel[i]);
      if (access(path, R_OK) == 0)
        return dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
  }
#ifdef N4C_DEVK_INSTALLED
  return dlopen(N4C_DEVK_INSTALLED "/n4c-devk.so", RTLD_NOW | RTLD_LOCAL);
#else
  return NULL;
#endif
}

#define DEVK_SYM(field, name)                                                           \
  do {                                                                                  \
    *(void **)&K.field = dlsym(h, name);                                                \
    if (!K.field) {                                                                     \
      snprintf(K.why, sizeof K.why, "n4c-devk.so has no %s", name);                     \
      return false;                                                                     \
    }                                                                                   \
  } while (0)

static bool load_module(void)
{
  dlerror();
  void *h = open_module();
  if (!h) {
    const char *e = dlerror();
    snprintf(K.why, sizeof K.why, "the DEVK kernels' module n4c-devk.so was not built or not found (%s)",
             e ? e : "no CUDA compiler at build time: configure found no nvcc or ncclsim-nvcc");
    return false;
  }
  DEVK_SYM(order_name, "devk_order_name");
  DEVK_SYM(signal_name, "devk_signal_name");
  DEVK_SYM(fence_name, "devk_fence_name");
  DEVK_SYM(lsa_pointers, "devk_lsa_pointers");
  DEVK_SYM(lsa_barrier, "devk_lsa_barrier");
  DEVK_SYM(lsa_devcomm, "devk_lsa_devcomm");
  DEVK_SYM(hybrid_barrier, "devk_hybrid_barrier");
  DEVK_SYM(gin_barrier, "devk_gin_barrier");
  DEVK_SYM(gin_signal, "devk_gin_signal");
  DEVK_SYM(gin_counter, "devk_gin_counter");
  DEVK_SYM(gin_put_value, "devk_gin_put_value");
  DEVK_SYM(ll_a2a, "devk_ll_a2a");
  return true; /* kept loaded: its kernels stay registered with the process */
}

/* The module, loaded at the first case of the process; false after a
 * skip saying why it is not there. The ranks of a process load it once
 * (the first rank's case thread; the others wait on the lock). */
static bool loaded(case_ctx_t *ctx)
{
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (!K.tried) {
    K.ok = load_module();
    K.tried = true;
  }
  pthread_mutex_unlock(&lock);
  if (!K.ok)
    case_skip_(ctx, "%s", K.why);
  return K.ok;
}

/* A kernel function's verdict on this rank; false unless it passed. */
static bool verdict(case_ctx_t *ctx, int rc, const char *what, const char *msg)
{
  if (rc == DEVK_SKIP) {
    case_skip_(ctx, "%s: %s", what, msg);
    return false;
  }
  return CASE_EXPECT(ctx, rc == DEVK_PASS, "%s: %s", what, msg);
}

/* ---- LSA ---- */

void case_DEVK_01(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  char msg[512];
  if (!loaded(ctx))
    return;
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  verdict(ctx, K.lsa_pointers(n4c_comm_handle(comm), msg, sizeof msg), "lsaPointers", msg);
}

void case_DEVK_02(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  char msg[512];
  if (!loaded(ctx))
    return;
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  for (int order = 0; order < DEVK_ORDER_COUNT; order++) {
    if (!verdict(ctx, K.lsa_barrier(n4c_comm_handle(comm), order, msg, sizeof msg), K.order_name(order), msg))
      return;
  }
}

void case_DEVK_09(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_dev_comm_t *dc;
  n4c_dev_comm_requirements_t reqs = N4C_DEV_COMM_REQUIREMENTS_INIT;
  void *ptr = NULL;
  char msg[512];
  if (!loaded(ctx))
    return;
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  reqs.lsa_barrier_count = 2; /* devk_lsa.cu's blocks */
  n4c_status_t st = n4c_comm_create_dev_comm(comm, &reqs, &dc);
  if (st == N4C_ENOTSUP)
    CASE_SKIP(ctx, "%s", n4c_last_error_message());
  CASE_CHECK(ctx, st == N4C_OK, "create_dev_comm: %s; %s", n4c_status_name(st), n4c_last_error_message());
  CASE_OK(ctx, n4c_dev_comm_ptr(dc, &ptr));
  verdict(ctx, K.lsa_devcomm(n4c_comm_handle(comm), ptr, msg, sizeof msg), "lsaPointers (nccl4c's device communicator)",
          msg);
  n4c_resource_close(N4C_RESOURCE(dc));
}

/* ---- GIN ---- */

/* A GIN case's function: variant v on comm. */
typedef int gin_fn(ncclComm_t comm, int v, char *msg, size_t len);

#ifdef NCCLSIM
/* A communicator over every rank whose GIN type is `gin` (ncclsim only);
 * the other options keep the environment's. */
static n4c_status_t gin_comm(case_ctx_t *ctx, int gin, n4c_comm_t **comm)
{
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  ncclUniqueId id;
  if (!ctx_new_unique_id(ctx, &id))
    return N4C_EINVAL;
  o.ginType = gin;
  if (ncclsimSetCommOptions(&o) != ncclSuccess)
    return N4C_EINVAL;
  n4c_status_t st = n4c_comm_init(comm, ctx->nranks, ctx->rank, &id, 1, NULL);
  ncclsimSetCommOptions(NULL);
  if (st == N4C_OK)
    ctx_defer_comm(ctx, *comm);
  return st;
}
#endif

/* Runs fn for each variant 0..nv-1 (names: name(v)): on ncclsim under each
 * GIN type in turn, on real NCCL on the case's communicator. */
static void gin_case(case_ctx_t *ctx, gin_fn *fn, int nv, const char *(*name)(int))
{
  char msg[512], what[160];
#ifdef NCCLSIM
  static const int types[] = {N4C_GIN_PROXY, N4C_GIN_GDAKI, N4C_GIN_GPI}; /* NCCL's values (DEV-04) */
  static const char *type_names[] = {"PROXY", "GDAKI", "GPI"};
  for (int t = 0; t < 3; t++) {
    n4c_comm_t *comm;
    CASE_OK(ctx, gin_comm(ctx, types[t], &comm));
    for (int v = 0; v < nv; v++) {
      snprintf(what, sizeof what, "GIN %s%s%s", type_names[t], name ? ", " : "", name ? name(v) : "");
      if (!verdict(ctx, fn(n4c_comm_handle(comm), v, msg, sizeof msg), what, msg))
        return;
    }
    if (!ctx_barrier(ctx))
      return;
  }
#else
  n4c_comm_t *comm;
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  for (int v = 0; v < nv; v++) {
    snprintf(what, sizeof what, "%s", name ? name(v) : "GIN");
    if (!verdict(ctx, fn(n4c_comm_handle(comm), v, msg, sizeof msg), what, msg))
      return;
  }
#endif
}

static int hybrid(ncclComm_t comm, int v, char *msg, size_t len)
{
  (void)v;
  return K.hybrid_barrier(comm, msg, len);
}
static int counter(ncclComm_t comm, int v, char *msg, size_t len)
{
  (void)v;
  return K.gin_counter(comm, msg, len);
}
static int put_value(ncclComm_t comm, int v, char *msg, size_t len)
{
  (void)v;
  return K.gin_put_value(comm, msg, len);
}

static int gin_barrier(ncclComm_t comm, int v, char *msg, size_t len) { return K.gin_barrier(comm, v, msg, len); }
static int gin_signal(ncclComm_t comm, int v, char *msg, size_t len) { return K.gin_signal(comm, v, msg, len); }
static const char *fence_name(int v) { return K.fence_name(v); }
static const char *signal_name(int v) { return K.signal_name(v); }

void case_DEVK_03(case_ctx_t *ctx) { if (loaded(ctx)) gin_case(ctx, hybrid, 1, NULL); }
void case_DEVK_04(case_ctx_t *ctx) { if (loaded(ctx)) gin_case(ctx, gin_barrier, DEVK_FENCE_COUNT, fence_name); }
void case_DEVK_05(case_ctx_t *ctx) { if (loaded(ctx)) gin_case(ctx, gin_signal, DEVK_SIG_COUNT, signal_name); }
void case_DEVK_06(case_ctx_t *ctx) { if (loaded(ctx)) gin_case(ctx, counter, 1, NULL); }
void case_DEVK_07(case_ctx_t *ctx) { if (loaded(ctx)) gin_case(ctx, put_value, 1, NULL); }

/* ---- LL all-to-all ---- */

void case_DEVK_08(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  char msg[512];
  if (!loaded(ctx))
    return;
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  verdict(ctx, K.ll_a2a(n4c_comm_handle(comm), msg, sizeof msg), "llA2A", msg);
}
