/*
 * tests/sim_net.c — the bootstrap of ranks on other hosts (sim/net), in
 * one process: the interface filter, an id without an interface, and the
 * root's refusals (nranks that disagree and a rank twice, which fail every
 * rank of the id at once; an id used twice), and its keys (released,
 * spent as their rounds end).
 * Ranks of one process are one host, so the communicators made here are
 * ordinary ones, met through the root. tests/sim-hosts.sh covers hosts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "comm/comm_internal.h"
#include "net/net_internal.h"
#include "sim.h"
#include "sim_ranks.h"
#include "sim_comms.h"
#include "slow.h"
#include <nccl_device.h>

static void test_ifname_match(void **state) {
  (void)state;
  assert_true(sim_net_ifname_match("eth", "eth0"));
  assert_true(sim_net_ifname_match("ib,eth", "eth1"));
  assert_false(sim_net_ifname_match("ib", "eth0"));
  assert_false(sim_net_ifname_match("^lo,docker", "lo"));
  assert_false(sim_net_ifname_match("^lo,docker", "docker0"));
  assert_true(sim_net_ifname_match("^lo,docker", "eth0"));
  assert_false(sim_net_ifname_match("=eth", "eth0"));
  assert_true(sim_net_ifname_match("=eth0", "eth0"));
  assert_false(sim_net_ifname_match("^=lo", "lo"));
  assert_true(sim_net_ifname_match("^=lo", "lo0"));
}

/* First: once the process's root listens, the interface no longer matters. */
static void test_no_interface(void **state) {
  (void)state;
  ncclUniqueId id;
  assert_int_equal(ncclsimParamSet("NET", "1"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("SOCKET_IFNAME", "=no-such-interface"), ncclSuccess);
  assert_int_equal(ncclGetUniqueId(&id), ncclSystemError);
  assert_non_null(strstr(ncclGetLastError(NULL), "no interface is up") ? "" : NULL);
  assert_int_equal(ncclsimParamSet("SOCKET_IFNAME", "auto"), ncclSuccess);
}

/* n ranks of one thread, in a group: every init's bootstrap is prepared
 * before any of them waits for its host's ranks. */
static ncclResult_t init_group(ncclComm_t *comms, int n, const int *nranks, const int *ranks, ncclUniqueId id) {
  ncclResult_t first = ncclSuccess;
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; r++) {
    cudaSetDevice(r);
    ncclResult_t res = ncclCommInitRank(&comms[r], nranks[r], id, ranks[r]);
    if (first == ncclSuccess) first = res;
  }
  ncclResult_t g = ncclGroupEnd();
  cudaSetDevice(0);
  return first != ncclSuccess ? first : g;
}

static void test_group_through_root(void **state) {
  (void)state;
  ncclUniqueId id;
  ncclComm_t comms[3];
  const int nr[3] = {3, 3, 3}, rk[3] = {0, 1, 2};
  assert_int_equal(ncclsimParamSet("NET", "1"), ncclSuccess);
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  assert_int_equal(init_group(comms, 3, nr, rk, id), ncclSuccess);
  check_allreduce_ranks(comms, 3, true);
  ncclCommProperties_t p = NCCL_COMM_PROPERTIES_INITIALIZER;
  assert_int_equal(ncclCommQueryProperties(comms[0], &p), ncclSuccess);
  assert_int_equal(p.nLsaTeams, 1); /* one process: one host */
  destroy_all(comms, 3);
  /* The id served its communicator: the root refuses it now. */
  assert_int_equal(init_group(comms, 3, nr, rk, id), ncclInvalidUsage);
  assert_non_null(strstr(ncclGetLastError(NULL), "served a communicator already") ? "" : NULL);
  for (int r = 0; r < 3; r++) ncclCommAbort(comms[r]);
}

/* The async error and last error of each of n comms after a failed init. */
static void assert_failed(ncclComm_t *comms, int n, ncclResult_t want, const char *text, const char *text2) {
  for (int r = 0; r < n; r++) {
    ncclResult_t ae = ncclSuccess;
    assert_non_null(comms[r]);
    assert_int_equal(ncclCommGetAsyncError(comms[r], &ae), ncclSuccess);
    assert_int_equal(ae, want);
    const char *m = comms[r]->last_error;
    if (!strstr(m, text) || !strstr(m, text2)) fail_msg("rank %d: %s", r, m);
  }
}

/* Ranks that disagree fail every rank of the id at once, with
 * ncclInvalidUsage and both values (NCCLSIM_TIMEOUT is 120 s: a rank left
 * to wait would end with ncclTimeout), and the id is spent: a rank still
 * to come hears why. */
static void test_root_refusals(void **state) {
  (void)state;
  ncclUniqueId id;
  ncclComm_t comms[3];
  assert_int_equal(ncclsimParamSet("NET", "1"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("TIMEOUT", "120"), ncclSuccess);
  /* nranks that disagree */
  const int nr[2] = {2, 3}, rk[2] = {0, 1};
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  assert_int_equal(init_group(comms, 2, nr, rk, id), ncclInvalidUsage);
  assert_failed(comms, 2, ncclInvalidUsage, "disagree", "rank 1 says nranks=3, rank(s) before it said 2");
  for (int r = 0; r < 2; r++) ncclCommAbort(comms[r]);
  const int nr1[1] = {2}, rk1[1] = {1};
  assert_int_equal(init_group(comms, 1, nr1, rk1, id), ncclInvalidUsage);
  assert_failed(comms, 1, ncclInvalidUsage, "none of them can init", "rank 1 says nranks=3");
  ncclCommAbort(comms[0]);
  /* One rank twice; rank 0, in first, fails as well. */
  const int nr2[3] = {3, 3, 3}, rk2[3] = {0, 1, 1};
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  assert_int_equal(init_group(comms, 3, nr2, rk2, id), ncclInvalidUsage);
  assert_failed(comms, 3, ncclInvalidUsage, "disagree", "rank 1 of 3 was claimed twice: by process");
  for (int r = 0; r < 3; r++) ncclCommAbort(comms[r]);
  assert_int_equal(ncclsimParamSet("TIMEOUT", NULL), ncclSuccess);
}

/* A non-blocking rank 0 of 2 with id, polled until its init ends (at most
 * `seconds` times the slowdown): the result. */
static ncclResult_t lone_init(ncclUniqueId id, double seconds, ncclComm_t *comm) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclResult_t ae = ncclCommInitRankConfig(comm, 2, id, 0, &cfg);
  for (double t = 0; ae == ncclInProgress && t < scaled(seconds); t += 0.001) {
    assert_int_equal(ncclCommGetAsyncError(*comm, &ae), ncclSuccess);
    if (ae == ncclInProgress) usleep(1000);
  }
  return ae;
}

/* The root's keys: an id that ncclsim makes for a split's child goes from
 * the root's record once released, unused; released while a rank waits in
 * its round, that rank fails at once (not at NCCLSIM_TIMEOUT); an id of
 * ncclGetUniqueId whose round times out is spent (kept on record, so that
 * a late rank is told why it is refused). */
static void test_root_keys(void **state) {
  (void)state;
  ncclUniqueId id;
  uint64_t secret = 0;
  ncclComm_t comm;
  assert_int_equal(ncclsimParamSet("NET", "1"), ncclSuccess);
  int open0, open, held0 = sim_net_root_keys(&open0);
  assert_int_equal(sim_net_child_id_make(&id, &secret), ncclSuccess);
  assert_int_equal(sim_net_root_keys(&open), held0 + 1);
  assert_int_equal(open, open0 + 1);
  sim_net_root_release(secret);
  assert_int_equal(sim_net_root_keys(&open), held0);
  assert_int_equal(open, open0);
  sim_net_root_release(secret); /* unknown now: nothing */
  assert_int_equal(sim_net_root_keys(NULL), held0);
  /* Released under a rank that waits: it fails at once, whether its hello
   * came before the release (the round ends) or after (refused). */
  assert_int_equal(ncclsimParamSet("TIMEOUT", "120"), ncclSuccess);
  assert_int_equal(sim_net_child_id_make(&id, &secret), ncclSuccess);
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  assert_int_equal(ncclCommInitRankConfig(&comm, 2, id, 0, &cfg), ncclInProgress);
  usleep(100000);
  sim_net_root_release(secret);
  ncclResult_t ae = ncclInProgress;
  for (double t = 0; ae == ncclInProgress && t < scaled(30); t += 0.001) {
    assert_int_equal(ncclCommGetAsyncError(comm, &ae), ncclSuccess);
    if (ae == ncclInProgress) usleep(1000);
  }
  if (ae != ncclRemoteError && ae != ncclInvalidUsage) fail_msg("a withdrawn id's rank ended with %d", (int)ae);
  assert_non_null(strstr(comm->last_error, ae == ncclRemoteError ? "withdrew" : "not one this root holds"));
  ncclCommAbort(comm);
  assert_int_equal(sim_net_root_keys(&open), held0);
  assert_int_equal(open, open0);
  /* An id of ncclGetUniqueId whose round times out is spent. */
  assert_int_equal(ncclsimParamSet("TIMEOUT", "1"), ncclSuccess);
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  assert_int_equal(lone_init(id, 60, &comm), ncclTimeout);
  ncclCommAbort(comm);
  assert_int_equal(sim_net_root_keys(&open), held0 + 1);
  assert_int_equal(open, open0);
  assert_int_equal(lone_init(id, 60, &comm), ncclInvalidUsage);
  assert_non_null(strstr(comm->last_error, "timed out before every rank came"));
  ncclCommAbort(comm);
  assert_int_equal(ncclsimParamSet("TIMEOUT", NULL), ncclSuccess);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ifname_match),
      cmocka_unit_test(test_no_interface),
      cmocka_unit_test(test_group_through_root),
      cmocka_unit_test(test_root_refusals),
      cmocka_unit_test(test_root_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
