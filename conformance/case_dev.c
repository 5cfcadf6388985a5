/* case_dev.c — DEV-*, DEVR-01: communicator properties, GIN types and
 * device communicators (nccl.core's Communicator.create_dev_comm,
 * ncclDevCommCreate).
 *
 * On ncclsim a case can give its own communicator any GIN type through
 * ncclsimSetCommOptions (per thread, for the next init); on real NCCL the
 * machine decides, and a case that needs GIN where there is none skips. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "case.h"
#ifdef NCCLSIM
#include <ncclsim.h>
#include <nccl_device.h>
#endif

static void free_resource(void *r) { n4c_resource_free((n4c_resource_t *)r); }

/* A device communicator freed after the case. */
static n4c_status_t dev_comm(case_ctx_t *ctx, n4c_comm_t *comm, const n4c_dev_comm_requirements_t *reqs,
                             n4c_dev_comm_t **out)
{
  n4c_status_t st = n4c_comm_create_dev_comm(comm, reqs, out);

  if (st == N4C_OK)
    ctx_defer(ctx, free_resource, *out);
  return st;
}

/* The communicator's properties; *have false (and a note) where the linked
 * NCCL lacks ncclCommQueryProperties. */
static bool props_of(case_ctx_t *ctx, n4c_comm_t *comm, n4c_comm_properties_t *p, bool *have)
{
  n4c_status_t st = n4c_comm_properties(comm, p);

  *have = st == N4C_OK;
  if (st == N4C_ENOTSUP) {
    ctx_note(ctx, "%s", n4c_last_error_message());
    return true;
  }
  return CASE_EXPECT(ctx, st == N4C_OK, "n4c_comm_properties: %s; %s", n4c_status_name(st),
                     n4c_last_error_message());
}

/* Skips (and returns false) where the communicator has no device API. */
static bool need_device_api(case_ctx_t *ctx, n4c_comm_t *comm)
{
  n4c_comm_properties_t p;
  bool have;

  if (!props_of(ctx, comm, &p, &have))
    return false;
  if (have && !p.device_api_support) {
    case_skip_(ctx, "device_api_support is false on this communicator");
    return false;
  }
  return true;
}

/* `call` fails inside NCCL with `want`. */
#define EXPECT_NCCL(ctx, call, want)                                                      \
  do {                                                                                    \
    n4c_status_t s_ = (call);                                                             \
    if (s_ == N4C_ENOTSUP) {                                                              \
      case_skip_unsupported(ctx);                                                         \
      return;                                                                             \
    }                                                                                     \
    if ((want) != ncclInvalidUsage && case_refused_across_hosts((ctx), s_))               \
      return;                                                                             \
    CASE_CHECK((ctx), s_ == N4C_ENCCL && n4c_last_nccl_result() == (want),                \
               "%s gave %s (%s), expected N4C_ENCCL (%s); last error: %s", #call,         \
               n4c_status_name(s_), ncclGetErrorString(n4c_last_nccl_result()),           \
               ncclGetErrorString(want), n4c_last_error_message());                       \
  } while (0)

/* A set requirement the linked NCCL lacks gives ENOTSUP: skip. */
#define SKIP_IF_ENOTSUP(ctx, st)                                                          \
  do {                                                                                    \
    if ((st) == N4C_ENOTSUP)                                                              \
      CASE_SKIP((ctx), "%s", n4c_last_error_message());                                   \
    if (case_refused_across_hosts((ctx), (st)))                                           \
      return;                                                                             \
  } while (0)

#ifdef NCCLSIM
/* A new communicator over every rank with GIN types `gin` and `railed`
 * (ncclsim only); the other options keep the environment's. */
static n4c_status_t sim_comm(case_ctx_t *ctx, int gin, int railed, int host_rma, int device_api,
                             n4c_comm_t **comm)
{
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  ncclUniqueId id;
  n4c_status_t st;

  if (!ctx_new_unique_id(ctx, &id))
    return N4C_EINVAL;
  o.ginType = gin;
  o.railedGinType = railed;
  o.hostRma = host_rma;
  o.deviceApi = device_api;
  if (ncclsimSetCommOptions(&o) != ncclSuccess)
    return N4C_EINVAL;
  st = n4c_comm_init(comm, ctx->nranks, ctx->rank, &id, 1, NULL);
  ncclsimSetCommOptions(NULL);
  if (st == N4C_OK)
    ctx_defer_comm(ctx, *comm);
  return st;
}
#endif

void case_DEV_01(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_comm_properties_t p;
  n4c_dev_comm_t *a, *b;
  n4c_dev_comm_requirements_t reqs = N4C_DEV_COMM_REQUIREMENTS_INIT;
  bool have;
  void *pa = NULL, *pb = NULL;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!props_of(ctx, comm, &p, &have))
    return;
  if (have && !p.device_api_support)
    CASE_SKIP(ctx, "device_api_support is false on this communicator");
  n4c_status_t st = dev_comm(ctx, comm, NULL, &a);
  SKIP_IF_ENOTSUP(ctx, st);
  CASE_CHECK(ctx, st == N4C_OK, "create_dev_comm(NULL): %s; %s", n4c_status_name(st), n4c_last_error_message());
  CASE_OK(ctx, dev_comm(ctx, comm, &reqs, &b));
  CASE_OK(ctx, n4c_dev_comm_ptr(a, &pa));
  CASE_OK(ctx, n4c_dev_comm_ptr(b, &pb));
  CASE_CHECK(ctx, pa && pb, "ptr is NULL (%p, %p)", pa, pb);
  CASE_CHECK(ctx, n4c_resource_is_valid(N4C_RESOURCE(a)), "is_valid is false after create");
#ifdef NCCLSIM
  const ncclDevComm *d = pa;
  CASE_CHECK(ctx, d->rank == ctx->rank && d->nRanks == ctx->nranks,
             "ncclDevComm says rank %d of %d, expected %d of %d", d->rank, d->nRanks, ctx->rank, ctx->nranks);
  CASE_CHECK(ctx, d->ginType == NCCL_GIN_TYPE_NONE && d->ginSignalCount == 0 && d->ginContextCount == 0,
             "defaults enable no GIN, but ginType %d, %d signal(s), %d context(s)", (int)d->ginType,
             d->ginSignalCount, d->ginContextCount);
#endif
}

void case_DEV_02(case_ctx_t *ctx)
{
  enum { N = 4 };
  n4c_comm_t *comm;
  n4c_dev_comm_t *dc[N];
  void *ptr[N];

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!need_device_api(ctx, comm))
    return;
  for (int i = 0; i < N; i++) {
    n4c_status_t st = dev_comm(ctx, comm, NULL, &dc[i]);
    SKIP_IF_ENOTSUP(ctx, st);
    CASE_CHECK(ctx, st == N4C_OK, "device communicator %d: %s; %s", i, n4c_status_name(st),
               n4c_last_error_message());
    CASE_OK(ctx, n4c_dev_comm_ptr(dc[i], &ptr[i]));
    for (int j = 0; j < i; j++)
      CASE_CHECK(ctx, ptr[i] != ptr[j], "device communicators %d and %d share ptr %p", j, i, ptr[i]);
  }
#ifdef NCCLSIM
  for (int i = 1; i < N; i++)
    CASE_CHECK(ctx, ((ncclDevComm *)ptr[i])->id != ((ncclDevComm *)ptr[0])->id,
               "device communicators 0 and %d have one ncclsim id", i);
#endif
  /* Closing one leaves the others open. */
  CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(dc[1])));
  for (int i = 0; i < N; i++)
    CASE_CHECK(ctx, n4c_resource_is_valid(N4C_RESOURCE(dc[i])) == (i != 1),
               "after closing device communicator 1, is_valid of %d is %d", i,
               (int)n4c_resource_is_valid(N4C_RESOURCE(dc[i])));
}

void case_DEV_03(case_ctx_t *ctx)
{
  n4c_comm_t *null_comm, *comm;
  n4c_dev_comm_t *dc = NULL;

  CASE_OK(ctx, n4c_comm_new(&null_comm));
  ctx_defer_comm(ctx, null_comm);
  CASE_STATUS(ctx, n4c_comm_create_dev_comm(null_comm, NULL, &dc), N4C_EINVAL);
  CASE_CHECK(ctx, strstr(n4c_last_error_message(), "n4c_comm_create_dev_comm") != NULL,
             "the message does not name the operation: %s", n4c_last_error_message());
  CASE_STATUS(ctx, n4c_comm_create_dev_comm(NULL, NULL, &dc), N4C_EINVAL);
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_STATUS(ctx, n4c_comm_create_dev_comm(comm, NULL, NULL), N4C_EINVAL);
  n4c_dev_comm_requirements_t bad = N4C_DEV_COMM_REQUIREMENTS_INIT;
  bad.gin_signal_count = -1;
  CASE_STATUS(ctx, n4c_comm_create_dev_comm(comm, &bad, &dc), N4C_EINVAL);
  bad = (n4c_dev_comm_requirements_t)N4C_DEV_COMM_REQUIREMENTS_INIT;
  bad.gin_connection_type = 3;
  CASE_STATUS(ctx, n4c_comm_create_dev_comm(comm, &bad, &dc), N4C_EINVAL);
  CASE_CHECK(ctx, dc == NULL, "out was written on failure");
  CASE_OK(ctx, n4c_comm_destroy(comm));
  CASE_STATUS(ctx, n4c_comm_create_dev_comm(comm, NULL, &dc), N4C_EINVAL);
}

static bool gin_value_ok(int v) { return v == 0 || v == 2 || v == 3 || v == 4; }

void case_DEV_04(case_ctx_t *ctx)
{
  static const struct { int v, want; const char *name; } t[] = {
    { N4C_GIN_NONE, 0, "none" }, { N4C_GIN_PROXY, 2, "proxy" },
    { N4C_GIN_GDAKI, 3, "gdaki" }, { N4C_GIN_GPI, 4, "gpi" },
  };
  n4c_comm_t *comm;
  n4c_comm_properties_t p;
  bool have;

  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    const char *name = n4c_gin_type_name((n4c_gin_type_t)t[i].v);
    CASE_CHECK(ctx, t[i].v == t[i].want, "%s is %d, expected %d", t[i].name, t[i].v, t[i].want);
    CASE_CHECK(ctx, name && strcmp(name, t[i].name) == 0, "name of %d is %s", t[i].v, name ? name : "NULL");
  }
  CASE_CHECK(ctx, n4c_gin_type_name((n4c_gin_type_t)1) == NULL, "1 (unused by NCCL) has a name");
#ifdef NCCLSIM /* ncclsim's <nccl_device.h> is C; on real NCCL, lib/devcomm_bridge.cc asserts this */
  CASE_CHECK(ctx, (int)NCCL_GIN_TYPE_PROXY == N4C_GIN_PROXY && (int)NCCL_GIN_TYPE_GPI == N4C_GIN_GPI,
             "n4c_gin_type_t differs from ncclGinType_t");
#endif
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!props_of(ctx, comm, &p, &have))
    return;
  if (!have)
    CASE_SKIP_UNSUPPORTED(ctx); /* the values matched above; gin_type needs the properties */
  CASE_CHECK(ctx, gin_value_ok(p.gin_type), "gin_type is %d", (int)p.gin_type);
  CASE_CHECK(ctx, gin_value_ok(p.railed_gin_type), "railed_gin_type is %d", (int)p.railed_gin_type);
  ctx_note(ctx, "gin_type %s, railed_gin_type %s", n4c_gin_type_name(p.gin_type),
           n4c_gin_type_name(p.railed_gin_type));
}

void case_DEV_05(case_ctx_t *ctx)
{
  static const struct { int v, want; const char *name; } t[] = {
    { N4C_GIN_CONNECTION_NONE, 0, "none" }, { N4C_GIN_CONNECTION_FULL, 1, "full" },
    { N4C_GIN_CONNECTION_RAIL, 2, "rail" },
  };

  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    const char *name = n4c_gin_connection_type_name((n4c_gin_connection_type_t)t[i].v);
    CASE_CHECK(ctx, t[i].v == t[i].want, "%s is %d, expected %d", t[i].name, t[i].v, t[i].want);
    CASE_CHECK(ctx, name && strcmp(name, t[i].name) == 0, "name of %d is %s", t[i].v, name ? name : "NULL");
  }
  CASE_CHECK(ctx, n4c_gin_connection_type_name((n4c_gin_connection_type_t)3) == NULL, "3 has a name");
#ifdef NCCLSIM /* as in DEV-04: lib/devcomm_bridge.cc asserts it on real NCCL */
  CASE_CHECK(ctx, (int)NCCL_GIN_CONNECTION_FULL == N4C_GIN_CONNECTION_FULL &&
                      (int)NCCL_GIN_CONNECTION_RAIL == N4C_GIN_CONNECTION_RAIL,
             "n4c_gin_connection_type_t differs from ncclGinConnectionType_t");
#endif
}

/* A communicator whose gin_type (railed: railed_gin_type) is NONE: on
 * ncclsim made so (the other type available, to show which one counts);
 * elsewhere the default one, if the machine has no GIN. */
static bool comm_without_gin(case_ctx_t *ctx, bool railed, n4c_comm_t **comm)
{
  n4c_comm_properties_t p;
  bool have;

#ifdef NCCLSIM
  n4c_status_t st = railed ? sim_comm(ctx, NCCL_GIN_TYPE_PROXY, NCCL_GIN_TYPE_NONE, NCCLSIM_OPT_UNSET, 1, comm)
                           : sim_comm(ctx, NCCL_GIN_TYPE_NONE, NCCL_GIN_TYPE_PROXY, NCCLSIM_OPT_UNSET, 1, comm);
  if (!CASE_EXPECT(ctx, st == N4C_OK, "init with GIN options: %s", n4c_status_name(st)))
    return false;
#else
  if (!CASE_EXPECT(ctx, ctx_comm_init(ctx, comm) == N4C_OK, "init: %s", n4c_last_error_message()))
    return false;
#endif
  if (!props_of(ctx, *comm, &p, &have))
    return false;
  if (!have) {
    case_skip_unsupported(ctx); /* the GIN type comes from ncclCommQueryProperties */
    return false;
  }
  if ((railed ? p.railed_gin_type : p.gin_type) != N4C_GIN_NONE) {
    case_skip_(ctx, "%s is %s here, not none", railed ? "railed_gin_type" : "gin_type",
               n4c_gin_type_name(railed ? p.railed_gin_type : p.gin_type));
    return false;
  }
  return true;
}

void case_DEV_06(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_dev_comm_t *dc;
  n4c_dev_comm_requirements_t r = N4C_DEV_COMM_REQUIREMENTS_INIT;

  if (!comm_without_gin(ctx, false, &comm))
    return;
  r.gin_connection_type = N4C_GIN_CONNECTION_FULL;
  n4c_status_t st = n4c_comm_create_dev_comm(comm, &r, &dc);
  SKIP_IF_ENOTSUP(ctx, st);
  EXPECT_NCCL(ctx, st, ncclInvalidArgument);
  /* ginForceEnable asks for GIN just as much. */
  r = (n4c_dev_comm_requirements_t)N4C_DEV_COMM_REQUIREMENTS_INIT;
  r.gin_force_enable = 1;
  EXPECT_NCCL(ctx, n4c_comm_create_dev_comm(comm, &r, &dc), ncclInvalidArgument);
}

void case_DEV_07(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_dev_comm_t *dc;
  n4c_dev_comm_requirements_t r = N4C_DEV_COMM_REQUIREMENTS_INIT;

  if (!comm_without_gin(ctx, true, &comm))
    return;
  r.gin_connection_type = N4C_GIN_CONNECTION_RAIL;
  n4c_status_t st = n4c_comm_create_dev_comm(comm, &r, &dc);
  SKIP_IF_ENOTSUP(ctx, st);
  EXPECT_NCCL(ctx, st, ncclInvalidArgument);
}

void case_DEV_08(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_dev_comm_t *dc;
  n4c_dev_comm_requirements_t r = N4C_DEV_COMM_REQUIREMENTS_INIT;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!need_device_api(ctx, comm))
    return;
  r.gin_signal_count = 1;
  EXPECT_NCCL(ctx, n4c_comm_create_dev_comm(comm, &r, &dc), ncclInvalidArgument);
  r = (n4c_dev_comm_requirements_t)N4C_DEV_COMM_REQUIREMENTS_INIT;
  r.gin_counter_count = 2;
  EXPECT_NCCL(ctx, n4c_comm_create_dev_comm(comm, &r, &dc), ncclInvalidArgument);
#ifdef NCCLSIM
  /* The same through a resource requirement, at the NCCL level. */
  ncclDevCommRequirements_t q = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ncclDevResourceRequirements_t res;
  ncclDevComm d;
  memset(&res, 0, sizeof res);
  res.ginSignalCount = 1;
  q.resourceRequirementsList = &res;
  ncclResult_t nr = ncclDevCommCreate(n4c_comm_handle(comm), &q, &d);
  CASE_CHECK(ctx, nr == ncclInvalidArgument, "a resource's GIN signal without GIN: %s",
             ncclGetErrorString(nr));
#endif
}

void case_DEV_09(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_dev_comm_t *dc;
  n4c_comm_properties_t p;
  n4c_dev_comm_requirements_t r = N4C_DEV_COMM_REQUIREMENTS_INIT;
  bool have;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!props_of(ctx, comm, &p, &have))
    return;
  if (!have)
    CASE_SKIP_UNSUPPORTED(ctx); /* multimem_support comes from ncclCommQueryProperties */
  if (p.multimem_support)
    CASE_SKIP(ctx, "multimem_support is true here");
  if (!p.device_api_support)
    CASE_SKIP(ctx, "device_api_support is false on this communicator");
  r.lsa_multimem = 1;
  EXPECT_NCCL(ctx, n4c_comm_create_dev_comm(comm, &r, &dc), ncclInvalidArgument);
}

/* FULL (and RAIL) with signals and counters on a communicator of GIN type
 * `gin`; on ncclsim also checks what the device communicator grants. */
static bool dev10_one(case_ctx_t *ctx, n4c_comm_t *comm, int gin, int conn)
{
  n4c_dev_comm_requirements_t r = N4C_DEV_COMM_REQUIREMENTS_INIT;
  n4c_dev_comm_t *dc;
  void *ptr;
  const char *cname = n4c_gin_connection_type_name((n4c_gin_connection_type_t)conn);

  r.gin_connection_type = conn;
  r.gin_signal_count = 3;
  r.gin_counter_count = 2;
  n4c_status_t st = dev_comm(ctx, comm, &r, &dc);
  if (st == N4C_ENOTSUP) {
    case_skip_(ctx, "%s", n4c_last_error_message());
    return false;
  }
  if (case_refused_across_hosts(ctx, st))
    return false;
  if (!CASE_EXPECT(ctx, st == N4C_OK, "GIN %s, %s: %s; %s", n4c_gin_type_name((n4c_gin_type_t)gin), cname,
                   n4c_status_name(st), n4c_last_error_message()) ||
      !CASE_EXPECT(ctx, n4c_dev_comm_ptr(dc, &ptr) == N4C_OK && ptr, "ptr"))
    return false;
#ifdef NCCLSIM
  const ncclDevComm *d = ptr;
  if (!CASE_EXPECT(ctx, (int)d->ginType == gin && (int)d->ginConnectionType == conn,
                   "%s: ncclDevComm reports GIN type %d, connection %d; expected %d, %d", cname, (int)d->ginType,
                   (int)d->ginConnectionType, gin, conn) ||
      !CASE_EXPECT(ctx, d->ginSignalCount == 3 && d->ginCounterCount == 2,
                   "%s: ncclDevComm reports %d signal(s), %d counter(s); expected 3, 2", cname, d->ginSignalCount,
                   d->ginCounterCount))
    return false;
#endif
  return true;
}

#ifdef NCCLSIM
/* Resource requirements: out-handles, signal and counter starts after the
 * communicator-level ones, consecutive in list order. */
static bool dev10_resources(case_ctx_t *ctx, n4c_comm_t *comm)
{
  ncclDevCommRequirements_t q = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ncclDevResourceRequirements_t a, b;
  ncclDevResourceHandle_t ha = 77, hb = 77;
  ncclGinSignal_t sa = 77, sb = 77;
  ncclGinCounter_t ca = 77, cb = 77;
  ncclDevComm d;

  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.next = &b;
  a.bufferSize = 1000;
  a.outBufferHandle = &ha;
  a.ginSignalCount = 2;
  a.outGinSignalStart = &sa;
  a.ginCounterCount = 1;
  a.outGinCounterStart = &ca;
  b.bufferSize = 64;
  b.bufferAlign = 4096;
  b.outBufferHandle = &hb;
  b.ginSignalCount = 4;
  b.outGinSignalStart = &sb;
  b.ginCounterCount = 3;
  b.outGinCounterStart = &cb;
  q.resourceRequirementsList = &a;
  q.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  q.ginSignalCount = 5;
  q.ginCounterCount = 1;
  ncclResult_t nr = ncclDevCommCreate(n4c_comm_handle(comm), &q, &d);
  if (!CASE_EXPECT(ctx, nr == ncclSuccess, "ncclDevCommCreate with two resource requirements: %s",
                   ncclGetErrorString(nr)))
    return false;
  bool ok = CASE_EXPECT(ctx, sa == 5 && sb == 7 && ca == 1 && cb == 2,
                        "signal starts %u, %u (expected 5, 7); counter starts %u, %u (expected 1, 2)", sa, sb, ca,
                        cb) &&
            CASE_EXPECT(ctx, d.ginSignalCount == 11 && d.ginCounterCount == 5,
                        "granted %d signal(s), %d counter(s); expected 11, 5", d.ginSignalCount, d.ginCounterCount) &&
            CASE_EXPECT(ctx, ha == 0 && hb == 4096 / NCCLSIM_DEV_RESOURCE_UNIT && d.resourceBase &&
                                 d.resourceBytes == 4096 + 64,
                        "buffer handles %u, %u; %zu resource bytes", ha, hb, d.resourceBytes);
  nr = ncclDevCommDestroy(n4c_comm_handle(comm), &d);
  ok = CASE_EXPECT(ctx, nr == ncclSuccess, "ncclDevCommDestroy: %s", ncclGetErrorString(nr)) && ok;
  nr = ncclDevCommDestroy(n4c_comm_handle(comm), &d);
  return CASE_EXPECT(ctx, nr == ncclInvalidArgument, "ncclDevCommDestroy again: %s", ncclGetErrorString(nr)) && ok;
}
#endif

void case_DEV_10(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
#ifdef NCCLSIM
  static const int types[] = { NCCL_GIN_TYPE_PROXY, NCCL_GIN_TYPE_GDAKI, NCCL_GIN_TYPE_GPI };

  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    n4c_status_t st = sim_comm(ctx, types[i], types[i], NCCLSIM_OPT_UNSET, 1, &comm);
    CASE_CHECK(ctx, st == N4C_OK, "init with GIN type %d: %s", types[i], n4c_status_name(st));
    if (!dev10_one(ctx, comm, types[i], N4C_GIN_CONNECTION_FULL) ||
        !dev10_one(ctx, comm, types[i], N4C_GIN_CONNECTION_RAIL) || !dev10_resources(ctx, comm))
      return;
    CASE_OK(ctx, n4c_comm_destroy(comm)); /* frees the device communicators left open */
    if (!ctx_barrier(ctx))
      return;
  }
#else
  n4c_comm_properties_t p;
  bool have;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!props_of(ctx, comm, &p, &have))
    return;
  if (!have)
    CASE_SKIP_UNSUPPORTED(ctx); /* the GIN type comes from ncclCommQueryProperties */
  if (p.gin_type == N4C_GIN_NONE)
    CASE_SKIP(ctx, "no GIN on this machine (gin_type none)");
  if (!dev10_one(ctx, comm, p.gin_type, N4C_GIN_CONNECTION_FULL))
    return;
  if (p.railed_gin_type != N4C_GIN_NONE)
    dev10_one(ctx, comm, p.railed_gin_type, N4C_GIN_CONNECTION_RAIL);
#endif
}

void case_DEV_11(case_ctx_t *ctx)
{
#ifdef NCCLSIM
  n4c_comm_t *comm;
  n4c_dev_comm_t *dc;
  n4c_dev_comm_requirements_t r = N4C_DEV_COMM_REQUIREMENTS_INIT;
  void *ptr;

  CASE_OK(ctx, sim_comm(ctx, NCCL_GIN_TYPE_PROXY, NCCLSIM_OPT_UNSET, NCCLSIM_OPT_UNSET, 1, &comm));
  r.gin_connection_type = N4C_GIN_CONNECTION_FULL; /* GIN on, every other field unset */
  CASE_OK(ctx, dev_comm(ctx, comm, &r, &dc));
  CASE_OK(ctx, n4c_dev_comm_ptr(dc, &ptr));
  const ncclDevComm *d = ptr;
  CASE_CHECK(ctx, d->ginContextCount == 4, "gin_context_count unset gives %d contexts, expected 4",
             d->ginContextCount);
  CASE_CHECK(ctx, d->ginStrongSignals && d->ginVaSignals,
             "strong and VA signals required by default; got %d, %d", (int)d->ginStrongSignals,
             (int)d->ginVaSignals);
  CASE_CHECK(ctx, d->barrierCount == 0 && d->lsaBarrierCount == 0 && !d->ginExclusiveContexts,
             "unset counts are not 0");
  /* A set field is passed on. */
  r.gin_context_count = 2;
  r.gin_va_signals_required = 0;
  CASE_OK(ctx, dev_comm(ctx, comm, &r, &dc));
  CASE_OK(ctx, n4c_dev_comm_ptr(dc, &ptr));
  d = ptr;
  CASE_CHECK(ctx, d->ginContextCount == 2 && d->ginStrongSignals && !d->ginVaSignals,
             "gin_context_count 2, gin_va_signals_required 0 give %d, strong %d, VA %d", d->ginContextCount,
             (int)d->ginStrongSignals, (int)d->ginVaSignals);
#else
  CASE_SKIP(ctx, "real NCCL's ncclDevComm is opaque: the defaults it was made with are not observable");
#endif
}

/* Simulated or real nodes among the ranks. */
static bool count_nodes(case_ctx_t *ctx, int *nodes)
{
  char mine[64] = "", all[16][64];
#ifdef NCCLSIM
  /* Simulated nodes of one host, or simulated hosts (--sim-hosts). */
  if (!case_sim_hosts()) {
    const char *v = ncclsimParamGet("RANKS_PER_NODE");
    int rpn = v ? atoi(v) : 0;

    *nodes = rpn > 0 && rpn < ctx->nranks ? (ctx->nranks + rpn - 1) / rpn : 1;
    return true;
  }
  snprintf(mine, sizeof mine, "%s", getenv("NCCLSIM_HOST_ID"));
#else
  gethostname(mine, sizeof mine - 1);
#endif
  if (ctx->nranks > 16) {
    case_skip_(ctx, "counts hosts of up to 16 ranks");
    return false;
  }
  if (!ctx_allgather(ctx, mine, sizeof mine, all, sizeof all))
    return false;
  *nodes = 0;
  for (int r = 0; r < ctx->nranks; r++) {
    int seen = 0;
    for (int q = 0; q < r; q++)
      seen |= strcmp(all[q], all[r]) == 0;
    *nodes += !seen;
  }
  return true;
}

void case_DEV_12(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_comm_properties_t p;
  bool have;
  int dev = -1, nodes = 0;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!count_nodes(ctx, &nodes))
    return;
  if (!props_of(ctx, comm, &p, &have))
    return;
  if (!have)
    CASE_SKIP(ctx, "%s", n4c_last_error_message());
  CASE_OK(ctx, n4c_comm_device(comm, &dev));
  CASE_CHECK(ctx, p.rank == ctx->rank && p.nranks == ctx->nranks, "rank %d of %d, expected %d of %d", p.rank,
             p.nranks, ctx->rank, ctx->nranks);
  CASE_CHECK(ctx, p.n_lsa_teams == nodes, "n_lsa_teams is %d, expected %d node(s)", p.n_lsa_teams, nodes);
  CASE_CHECK(ctx, p.cuda_dev == dev, "cuda_dev is %d, the communicator's device %d", p.cuda_dev, dev);
#ifdef NCCLSIM
  const char *v = ncclsimParamGet("HOST_RMA");
  bool rma = v && atoi(v) != 0;
  CASE_CHECK(ctx, p.nvml_dev == p.cuda_dev, "nvml_dev %d differs from cuda_dev %d", p.nvml_dev, p.cuda_dev);
  CASE_CHECK(ctx, p.host_rma_support == rma, "host_rma_support is %d, NCCLSIM_HOST_RMA says %d",
             (int)p.host_rma_support, (int)rma);
  CASE_CHECK(ctx, !p.multimem_support, "ncclsim reports multimem_support");
  /* Per-communicator options: no host RMA, no device API. */
  n4c_comm_t *other;
  n4c_dev_comm_t *dc;
  CASE_OK(ctx, sim_comm(ctx, NCCLSIM_OPT_UNSET, NCCLSIM_OPT_UNSET, 0, 0, &other));
  CASE_OK(ctx, n4c_comm_properties(other, &p));
  CASE_CHECK(ctx, !p.host_rma_support && !p.device_api_support,
             "with hostRma 0 and deviceApi 0: host_rma_support %d, device_api_support %d",
             (int)p.host_rma_support, (int)p.device_api_support);
  EXPECT_NCCL(ctx, n4c_comm_create_dev_comm(other, NULL, &dc), ncclInvalidUsage);
#else
  CASE_CHECK(ctx, p.host_rma_support, "host_rma_support is false (NCCL 2.30.7 on H200 reports true)");
#endif
}

void case_DEVR_01(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_dev_comm_t *dc, *left;
  void *ptr = NULL;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!need_device_api(ctx, comm))
    return;
  n4c_status_t st = dev_comm(ctx, comm, NULL, &dc);
  SKIP_IF_ENOTSUP(ctx, st);
  CASE_CHECK(ctx, st == N4C_OK, "create_dev_comm: %s; %s", n4c_status_name(st), n4c_last_error_message());
  CASE_OK(ctx, n4c_dev_comm_ptr(dc, &ptr));
  CASE_CHECK(ctx, ptr != NULL, "ptr is NULL while open");
  CASE_CHECK(ctx, n4c_resource_is_valid(N4C_RESOURCE(dc)), "is_valid is false while open");
  CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(dc)));
  CASE_STATUS(ctx, n4c_dev_comm_ptr(dc, &ptr), N4C_ECLOSED);
  CASE_CHECK(ctx, !n4c_resource_is_valid(N4C_RESOURCE(dc)), "is_valid is true after close");
  CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(dc)));
  /* One left open goes with its communicator. */
  CASE_OK(ctx, dev_comm(ctx, comm, NULL, &left));
  CASE_OK(ctx, n4c_comm_destroy(comm));
  CASE_CHECK(ctx, !n4c_resource_is_valid(N4C_RESOURCE(left)), "is_valid is true after the communicator's destroy");
  CASE_STATUS(ctx, n4c_dev_comm_ptr(left, &ptr), N4C_ECLOSED);
}
