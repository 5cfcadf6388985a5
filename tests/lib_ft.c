/*
 * lib_ft.c — nccl4c's fault-tolerance calls (shrink, grow, the
 * communicator's unique id, revoke, suspend, resume), n4c_config_t and
 * the version queries, against mocked NCCL: the argument checks that keep
 * NCCL from being called, what reaches NCCL, and the children's states.
 * The mocks of this file's NCCL calls are here; the shared ones are in
 * lib_mock.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib_mock.h"
#include "n4c_test.h"

/* ---- the mocks (tests/lib.mk wraps these for this program only) ---- */

ncclResult_t __wrap_ncclCommShrink(ncclComm_t comm, int *exclude, int nexclude, ncclComm_t *newcomm,
                                   ncclConfig_t *config, int flags);
ncclResult_t __wrap_ncclCommGrow(ncclComm_t comm, int nranks, const ncclUniqueId *id, int rank,
                                 ncclComm_t *newcomm, ncclConfig_t *config);
ncclResult_t __wrap_ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId *id);
ncclResult_t __wrap_ncclCommRevoke(ncclComm_t comm, int flags);
ncclResult_t __wrap_ncclCommSuspend(ncclComm_t comm, int flags);
ncclResult_t __wrap_ncclCommResume(ncclComm_t comm);

static ncclComm_t fake(int nranks, int rank, int device) {
  ncclComm_t c = calloc(1, sizeof *c); /* freed by lib_mock.c's destroy */
  assert_non_null(c);
  c->nranks = nranks;
  c->rank = rank;
  c->device = device;
  mock_live_comms++;
  return c;
}

ncclResult_t __wrap_ncclCommShrink(ncclComm_t comm, int *exclude, int nexclude, ncclComm_t *newcomm,
                                   ncclConfig_t *config, int flags) {
  check_expected(nexclude);
  check_expected(flags);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess || r == ncclInProgress) *newcomm = fake(comm->nranks - nexclude, 0, comm->device);
  return r;
}

ncclResult_t __wrap_ncclCommGrow(ncclComm_t comm, int nranks, const ncclUniqueId *id, int rank,
                                 ncclComm_t *newcomm, ncclConfig_t *config) {
  check_expected(comm);
  check_expected(rank);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) *newcomm = fake(nranks, rank < 0 ? comm->rank : rank, 0);
  return r;
}

ncclResult_t __wrap_ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId *id) {
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) memset(id, 0x6b, sizeof *id);
  return r;
}

ncclResult_t __wrap_ncclCommRevoke(ncclComm_t comm, int flags) {
  check_expected(flags);
  return mock_type(ncclResult_t);
}

ncclResult_t __wrap_ncclCommSuspend(ncclComm_t comm, int flags) {
  check_expected(flags);
  return mock_type(ncclResult_t);
}

ncclResult_t __wrap_ncclCommResume(ncclComm_t comm) { return mock_type(ncclResult_t); }

static int check_leaks(void **state) {
  assert_no_leaks();
  return 0;
}

static void destroy(n4c_comm_t *comm) {
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

/* ---- shrink ---- */

static void test_shrink_arguments(void **state) {
  n4c_comm_t *comm = mock_comm(4, 1, 0), *out = NULL, *null = NULL;
  int bad_rank[] = {4}, self[] = {1}, twice[] = {2, 2}, all[] = {0, 2, 3, 1};
  assert_int_equal(n4c_comm_shrink(NULL, NULL, 0, NULL, N4C_SHRINK_DEFAULT, &out), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_shrink(comm, NULL, 0, NULL, N4C_SHRINK_DEFAULT, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "out is NULL", NULL);
  assert_int_equal(n4c_comm_shrink(comm, NULL, 0, NULL, (n4c_shrink_flag_t)2, &out), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "flag is 2", NULL);
  assert_int_equal(n4c_comm_shrink(comm, NULL, -1, NULL, N4C_SHRINK_DEFAULT, &out), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "nexclude is -1", NULL);
  assert_int_equal(n4c_comm_shrink(comm, all, 4, NULL, N4C_SHRINK_DEFAULT, &out), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "nexclude is 4", NULL);
  assert_int_equal(n4c_comm_shrink(comm, NULL, 1, NULL, N4C_SHRINK_DEFAULT, &out), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "exclude is NULL", NULL);
  assert_int_equal(n4c_comm_shrink(comm, bad_rank, 1, NULL, N4C_SHRINK_DEFAULT, &out), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "excluded rank is 4", NULL);
  assert_int_equal(n4c_comm_shrink(comm, self, 1, NULL, N4C_SHRINK_DEFAULT, &out), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "exclude[0] is 1, this rank", NULL);
  assert_int_equal(n4c_comm_shrink(comm, twice, 2, NULL, N4C_SHRINK_DEFAULT, &out), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "exclude[0] and exclude[1] are both 2", NULL);
  assert_null(out);
  assert_int_equal(n4c_comm_new(&null), N4C_OK);
  assert_int_equal(n4c_comm_shrink(null, NULL, 0, NULL, N4C_SHRINK_DEFAULT, &out), N4C_EINVAL);
  assert_msg("n4c_comm_shrink", "null communicator", NULL);
  assert_int_equal(n4c_comm_free(null), N4C_OK);
  destroy(comm);
}

static void test_shrink(void **state) {
  n4c_comm_t *comm = mock_comm(4, 1, 3), *out = NULL;
  int ex[] = {3, 0};
  int v;
  expect_value(__wrap_ncclCommShrink, nexclude, 2);
  expect_value(__wrap_ncclCommShrink, flags, NCCL_SHRINK_ABORT);
  will_return(__wrap_ncclCommShrink, ncclSuccess);
  assert_int_equal(n4c_comm_shrink(comm, ex, 2, NULL, N4C_SHRINK_ABORT, &out), N4C_OK);
  assert_true(n4c_comm_is_valid(out));
  mock_identity_ok();
  assert_int_equal(n4c_comm_nranks(out, &v), N4C_OK);
  assert_int_equal(v, 2);
  assert_int_equal(n4c_comm_device(out, &v), N4C_OK);
  assert_int_equal(v, 3);
  destroy(out);

  /* NCCL's failure: *out untouched, nothing leaked. */
  out = (n4c_comm_t *)&v;
  expect_value(__wrap_ncclCommShrink, nexclude, 0);
  expect_value(__wrap_ncclCommShrink, flags, NCCL_SHRINK_DEFAULT);
  will_return(__wrap_ncclCommShrink, ncclInvalidUsage);
  assert_int_equal(n4c_comm_shrink(comm, NULL, 0, NULL, N4C_SHRINK_DEFAULT, &out), N4C_ENCCL);
  assert_ptr_equal(out, &v);
  assert_msg("n4c_comm_shrink", "ncclCommShrink", ncclGetErrorString(ncclInvalidUsage));
  assert_int_equal(n4c_last_nccl_result(), ncclInvalidUsage);

  /* A non-blocking child: in progress, live, non-blocking by its config. */
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  expect_value(__wrap_ncclCommShrink, nexclude, 0);
  expect_value(__wrap_ncclCommShrink, flags, NCCL_SHRINK_DEFAULT);
  will_return(__wrap_ncclCommShrink, ncclInProgress);
  assert_int_equal(n4c_comm_shrink(comm, NULL, 0, &cfg, N4C_SHRINK_DEFAULT, &out), N4C_EINPROGRESS);
  assert_true(n4c_comm_is_valid(out));
  destroy(out);
  destroy(comm);
}

/* ---- grow and the communicator's unique id ---- */

static void test_get_unique_id(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  assert_int_equal(n4c_comm_get_unique_id(comm, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_get_unique_id", "out is NULL", NULL);
  assert_int_equal(n4c_comm_get_unique_id(NULL, &id), N4C_EINVAL);
#if !HAVE_DECL_NCCLCOMMGETUNIQUEID
  assert_int_equal(n4c_comm_get_unique_id(comm, &id), N4C_ENOTSUP);
  assert_msg("n4c_comm_get_unique_id", "ncclCommGetUniqueId is not supported", NULL);
#else
  will_return(__wrap_ncclCommGetUniqueId, ncclSuccess);
  assert_int_equal(n4c_comm_get_unique_id(comm, &id), N4C_OK);
  assert_int_equal((unsigned char)id.internal[0], 0x6b);
  will_return(__wrap_ncclCommGetUniqueId, ncclInvalidUsage);
  assert_int_equal(n4c_comm_get_unique_id(comm, &id), N4C_ENCCL);
  assert_msg("n4c_comm_get_unique_id", "ncclCommGetUniqueId", NULL);
#endif
  destroy(comm);
}

static void test_grow_arguments(void **state) {
  n4c_comm_t *comm = mock_comm(2, 1, 0), *null = NULL, *out = NULL;
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  assert_int_equal(n4c_comm_new(&null), N4C_OK);
  assert_int_equal(n4c_comm_grow(NULL, 3, &id, 2, NULL, &out), N4C_EINVAL);
  assert_msg("n4c_comm_grow", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_grow(null, 3, &id, 2, NULL, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_grow", "out is NULL", NULL);
  assert_int_equal(n4c_comm_grow(null, 0, &id, 2, NULL, &out), N4C_EINVAL);
  assert_msg("n4c_comm_grow", "nranks is 0", NULL);
  assert_int_equal(n4c_comm_grow(null, 3, &id, 3, NULL, &out), N4C_EINVAL);
  assert_msg("n4c_comm_grow", "rank is 3", "N4C_GROW_EXISTING");
  assert_int_equal(n4c_comm_grow(null, 3, &id, -2, NULL, &out), N4C_EINVAL);
  assert_msg("n4c_comm_grow", "rank is -2", NULL);
  /* Roles: a new rank needs a null communicator and the id; an existing
   * one a live communicator that grows. */
  assert_int_equal(n4c_comm_grow(comm, 3, &id, 2, NULL, &out), N4C_EINVAL);
  assert_msg("n4c_comm_grow", "a new rank", "null communicator");
  assert_int_equal(n4c_comm_grow(null, 3, NULL, 2, NULL, &out), N4C_EINVAL);
  assert_msg("n4c_comm_grow", "id is NULL", NULL);
  assert_int_equal(n4c_comm_grow(null, 3, &id, N4C_GROW_EXISTING, NULL, &out), N4C_EINVAL);
  assert_msg("n4c_comm_grow", "null communicator", NULL);
  assert_int_equal(n4c_comm_grow(comm, 2, NULL, N4C_GROW_EXISTING, NULL, &out), N4C_EINVAL);
  assert_msg("n4c_comm_grow", "nranks is 2, but comm already has 2 ranks", NULL);
  assert_null(out);
  assert_int_equal(n4c_comm_free(null), N4C_OK);
  destroy(comm);
}

static void test_grow(void **state) {
  n4c_comm_t *comm = mock_comm(2, 1, 0), *null = NULL, *out = NULL;
  ncclUniqueId id;
  int v;
  memset(&id, 0, sizeof id);
#if !HAVE_DECL_NCCLCOMMGROW
  assert_int_equal(n4c_comm_grow(comm, 3, NULL, N4C_GROW_EXISTING, NULL, &out), N4C_ENOTSUP);
  assert_msg("n4c_comm_grow", "ncclCommGrow is not supported", NULL);
  (void)null;
  (void)v;
#else
  /* An existing rank passes its handle and -1, and keeps its rank. */
  expect_value(__wrap_ncclCommGrow, comm, n4c_comm_handle(comm));
  expect_value(__wrap_ncclCommGrow, rank, -1);
  will_return(__wrap_ncclCommGrow, ncclSuccess);
  assert_int_equal(n4c_comm_grow(comm, 3, NULL, N4C_GROW_EXISTING, NULL, &out), N4C_OK);
  mock_identity_ok();
  assert_int_equal(n4c_comm_rank(out, &v), N4C_OK);
  assert_int_equal(v, 1);
  assert_int_equal(n4c_comm_nranks(out, &v), N4C_OK);
  assert_int_equal(v, 3);
  assert_true(n4c_comm_is_valid(comm)); /* the old one stays */
  destroy(out);

  /* A new rank passes NULL and its rank; a failure frees the child. */
  assert_int_equal(n4c_comm_new(&null), N4C_OK);
  expect_value(__wrap_ncclCommGrow, comm, NULL);
  expect_value(__wrap_ncclCommGrow, rank, 2);
  will_return(__wrap_ncclCommGrow, ncclSuccess);
  assert_int_equal(n4c_comm_grow(null, 3, &id, 2, NULL, &out), N4C_OK);
  assert_true(n4c_comm_is_valid(out));
  assert_false(n4c_comm_is_valid(null));
  destroy(out);
  out = NULL;
  expect_value(__wrap_ncclCommGrow, comm, NULL);
  expect_value(__wrap_ncclCommGrow, rank, 2);
  will_return(__wrap_ncclCommGrow, ncclInvalidArgument);
  assert_int_equal(n4c_comm_grow(null, 3, &id, 2, NULL, &out), N4C_ENCCL);
  assert_null(out);
  assert_msg("n4c_comm_grow", "ncclCommGrow", NULL);
  assert_int_equal(n4c_comm_free(null), N4C_OK);
#endif
  destroy(comm);
}

/* ---- revoke, suspend, resume ---- */

static void test_revoke_suspend_resume(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  assert_int_equal(n4c_comm_revoke(NULL, 0), N4C_EINVAL);
  assert_msg("n4c_comm_revoke", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_suspend(NULL, N4C_SUSPEND_MEM), N4C_EINVAL);
  assert_msg("n4c_comm_suspend", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_resume(NULL), N4C_EINVAL);
  assert_msg("n4c_comm_resume", "comm is NULL", NULL);

#if !HAVE_DECL_NCCLCOMMSUSPEND || !HAVE_DECL_NCCLCOMMRESUME
  assert_int_equal(n4c_comm_suspend(comm, N4C_SUSPEND_MEM), N4C_ENOTSUP);
  assert_int_equal(n4c_comm_resume(comm), N4C_ENOTSUP);
#else
  expect_value(__wrap_ncclCommSuspend, flags, N4C_SUSPEND_MEM);
  will_return(__wrap_ncclCommSuspend, ncclSuccess);
  assert_int_equal(n4c_comm_suspend(comm, N4C_SUSPEND_MEM), N4C_OK);
  will_return(__wrap_ncclCommResume, ncclSuccess);
  assert_int_equal(n4c_comm_resume(comm), N4C_OK);
  /* Flags go to NCCL, which judges them. */
  expect_value(__wrap_ncclCommSuspend, flags, 8);
  will_return(__wrap_ncclCommSuspend, ncclInvalidArgument);
  assert_int_equal(n4c_comm_suspend(comm, 8), N4C_ENCCL);
  assert_msg("n4c_comm_suspend", "ncclCommSuspend", NULL);
  will_return(__wrap_ncclCommResume, ncclInvalidUsage);
  assert_int_equal(n4c_comm_resume(comm), N4C_ENCCL);
  assert_msg("n4c_comm_resume", "ncclCommResume", NULL);
#endif

  expect_value(__wrap_ncclCommRevoke, flags, 1);
  will_return(__wrap_ncclCommRevoke, ncclInvalidArgument);
  assert_int_equal(n4c_comm_revoke(comm, 1), N4C_ENCCL);
  assert_msg("n4c_comm_revoke", "ncclCommRevoke", NULL);
  expect_value(__wrap_ncclCommRevoke, flags, 0);
  will_return(__wrap_ncclCommRevoke, ncclInProgress);
  assert_int_equal(n4c_comm_revoke(comm, 0), N4C_EINPROGRESS);
  assert_true(n4c_comm_is_valid(comm)); /* destroy, abort, shrink still to come */
  destroy(comm);
}

/* ---- NCCLConfig ---- */

static void test_config(void **state) {
  n4c_config_t c = N4C_CONFIG_INIT;
  ncclConfig_t n, init = NCCL_CONFIG_INITIALIZER;
  memset(&n, 0x7f, sizeof n);
  assert_int_equal(n4c_config_to_nccl(NULL, &n), N4C_EINVAL);
  assert_msg("n4c_config_to_nccl", "config is NULL", NULL);
  assert_int_equal(n4c_config_to_nccl(&c, NULL), N4C_EINVAL);
  assert_msg("n4c_config_to_nccl", "out is NULL", NULL);
  /* All unset: exactly NCCL's initializer. */
  assert_int_equal(n4c_config_to_nccl(&c, &n), N4C_OK);
  assert_memory_equal(&n, &init, sizeof n);

  c.blocking = 0;
  c.cga_cluster_size = 2;
  c.min_ctas = 4;
  c.max_ctas = 16;
  c.net_name = "Socket";
  c.split_share = 1;
  c.traffic_class = 5;
  c.comm_name = "ft";
  c.collnet_enable = 0;
  c.cta_policy = N4C_CTA_POLICY_EFFICIENCY;
  c.shrink_share = 1;
  c.nvls_ctas = 8;
  c.n_channels_per_net_peer = 2;
  c.nvlink_centric_sched = 1;
  assert_int_equal(n4c_config_to_nccl(&c, &n), N4C_OK);
  assert_int_equal(n.size, sizeof(ncclConfig_t));
  assert_int_equal(n.magic, init.magic);
  assert_int_equal(n.blocking, 0);
  assert_int_equal(n.cgaClusterSize, 2);
  assert_int_equal(n.minCTAs, 4);
  assert_int_equal(n.maxCTAs, 16);
  assert_string_equal(n.netName, "Socket");
  assert_int_equal(n.splitShare, 1);
  assert_int_equal(n.trafficClass, 5);
  assert_string_equal(n.commName, "ft");
  assert_int_equal(n.collnetEnable, 0);
  assert_int_equal(n.CTAPolicy, NCCL_CTA_POLICY_EFFICIENCY);
  assert_int_equal(n.shrinkShare, 1);
  assert_int_equal(n.nvlsCTAs, 8);
  assert_int_equal(n.nChannelsPerNetPeer, 2);
  assert_int_equal(n.nvlinkCentricSched, 1);

  c.max_p2p_peers = 3;
  c.graph_usage_mode = 1;
  c.num_rma_ctx = 2;
  c.graph_stream_ordering = 0;
#if defined(HAVE_NCCLCONFIG_T_MAXP2PPEERS) && defined(HAVE_NCCLCONFIG_T_GRAPHUSAGEMODE) && \
    defined(HAVE_NCCLCONFIG_T_NUMRMACTX) && defined(HAVE_NCCLCONFIG_T_GRAPHSTREAMORDERING)
  assert_int_equal(n4c_config_to_nccl(&c, &n), N4C_OK);
  assert_int_equal(n.maxP2pPeers, 3);
  assert_int_equal(n.graphUsageMode, 1);
  assert_int_equal(n.numRmaCtx, 2);
  assert_int_equal(n.graphStreamOrdering, 0);
#else
  memset(&n, 0x7f, sizeof n);
  ncclConfig_t before = n;
  assert_int_equal(n4c_config_to_nccl(&c, &n), N4C_ENOTSUP);
  assert_memory_equal(&n, &before, sizeof n);
#endif

  /* Booleans are 0 or 1; the message names the field. */
  c.shrink_share = 2;
  assert_int_equal(n4c_config_to_nccl(&c, &n), N4C_EINVAL);
  assert_msg("n4c_config_to_nccl", "config->shrink_share is 2", NULL);
  c.shrink_share = N4C_UNSET;
  c.blocking = -1;
  assert_int_equal(n4c_config_to_nccl(&c, &n), N4C_EINVAL);
  assert_msg("config->blocking is -1", NULL, NULL);
}

/* ---- versions, error strings ---- */

static void test_versions(void **state) {
  n4c_version_t v;
  n4c_semver_t lib;
  const char *path = (const char *)1;
  int code = 0;
  assert_int_equal(n4c_get_version(NULL), N4C_EINVAL);
  assert_msg("n4c_get_version", "out is NULL", NULL);
  assert_int_equal(n4c_get_lib_version(NULL), N4C_EINVAL);
  assert_int_equal(n4c_get_lib_path(NULL), N4C_EINVAL);
  assert_msg("n4c_get_lib_path", "out is NULL", NULL);

  assert_int_equal(ncclGetVersion(&code), ncclSuccess);
  assert_int_equal(n4c_get_version(&v), N4C_OK);
  assert_int_equal(v.nccl4c.major, N4C_VERSION_MAJOR);
  assert_int_equal(v.nccl4c.minor, N4C_VERSION_MINOR);
  assert_int_equal(v.nccl4c.patch, N4C_VERSION_PATCH);
  assert_int_equal(v.nccl.major * 10000 + v.nccl.minor * 100 + v.nccl.patch, code);
  assert_int_equal(v.nccl_header.major, NCCL_MAJOR);
  assert_int_equal(v.nccl_header.minor, NCCL_MINOR);
  assert_int_equal(v.nccl_header.patch, NCCL_PATCH);
  assert_int_equal(n4c_get_lib_version(&lib), N4C_OK);
  assert_memory_equal(&lib, &v.nccl, sizeof lib);

  /* Linked against the shared backend (libtool's uninstalled library). */
  assert_int_equal(n4c_get_lib_path(&path), N4C_OK);
  assert_non_null(path);
  assert_non_null(strstr(path, "libnccl"));

  assert_string_equal(n4c_get_error_string(ncclInvalidUsage), ncclGetErrorString(ncclInvalidUsage));
  assert_non_null(n4c_get_error_string((ncclResult_t)999));
}

int main(void) {
#define T(f) cmocka_unit_test_teardown(f, check_leaks)
  const struct CMUnitTest tests[] = {
      T(test_shrink_arguments), T(test_shrink), T(test_get_unique_id), T(test_grow_arguments),
      T(test_grow),             T(test_revoke_suspend_resume),      T(test_config),
      T(test_versions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
