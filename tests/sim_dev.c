/*
 * tests/sim_dev.c — ncclsim's device side: ncclCommQueryProperties, the
 * host team queries (world, LSA, rail), and device communicators
 * (ncclDevCommCreate/Destroy): argument and requirement validation, GIN
 * enabling across ranks with different GIN types, what a device
 * communicator is granted (signals, counters, resource buffers), device
 * communicators left open at ncclCommDestroy, and the rank's window table
 * growing past its first 32-entry chunk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <nccl.h>
#include <ncclsim.h>
#include <nccl_device.h>

/* ---- helpers ---- */

/* n ranks on devices 0..n-1 (or devlist), with the given options (NULL:
 * the environment's). */
static void make_comms(ncclComm_t *comms, int n, const int *devlist, const ncclsimCommOptions_t *o) {
  assert_int_equal(ncclsimSetCommOptions(o), ncclSuccess);
  assert_int_equal(ncclCommInitAll(comms, n, devlist), ncclSuccess);
  assert_int_equal(ncclsimSetCommOptions(NULL), ncclSuccess);
}

static void destroy_comms(ncclComm_t *comms, int n) {
  for (int r = 0; r < n; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
}

/* The calling thread's last warning mentions `what`. */
static void assert_warned(const char *what) {
  const char *last = ncclGetLastError(NULL);
  if (!strstr(last, what)) fail_msg("last error \"%s\" does not mention \"%s\"", last, what);
}

static void assert_team(ncclTeam_t t, int nRanks, int rank, int stride) {
  assert_int_equal(t.nRanks, nRanks);
  assert_int_equal(t.rank, rank);
  assert_int_equal(t.stride, stride);
}

static uint64_t mem_total(ncclComm_t comm) {
  uint64_t v = 0;
  assert_int_equal(ncclCommMemStats(comm, ncclStatGpuMemTotal, &v), ncclSuccess);
  return v;
}

/* Creation fails with ncclInvalidArgument and a diagnostic naming `what`. */
static void expect_bad(ncclComm_t comm, const ncclDevCommRequirements_t *r, const char *what) {
  ncclDevComm_t dc;
  assert_int_equal(ncclDevCommCreate(comm, r, &dc), ncclInvalidArgument);
  assert_warned(what);
}

/* ---- ncclCommQueryProperties ---- */

/* A NULL or dead communicator, a NULL props, and props not made with
 * NCCL_COMM_PROPERTIES_INITIALIZER (wrong magic, or an older, shorter
 * layout) are refused, and props is left alone. */
static void test_props_bad_args(void **state) {
  (void)state;
  ncclComm_t comm;
  ncclCommProperties_t p = NCCL_COMM_PROPERTIES_INITIALIZER;
  assert_int_equal(ncclCommQueryProperties(NULL, &p), ncclInvalidArgument);
  assert_warned("comm is NULL");
  make_comms(&comm, 1, NULL, NULL);
  assert_int_equal(ncclCommQueryProperties(comm, NULL), ncclInvalidArgument);
  assert_warned("props is NULL");
  p.magic = 0x1234;
  p.rank = -7; /* the initializer leaves 0, which rank 0 could write */
  assert_int_equal(ncclCommQueryProperties(comm, &p), ncclInvalidArgument);
  assert_warned("NCCL_COMM_PROPERTIES_INITIALIZER");
  assert_int_equal(p.rank, -7);
  ncclCommProperties_t old = NCCL_COMM_PROPERTIES_INITIALIZER;
  old.size = offsetof(ncclCommProperties_t, railedGinType); /* 2.29: no railedGinType */
  old.rank = -7;
  assert_int_equal(ncclCommQueryProperties(comm, &old), ncclInvalidArgument);
  assert_warned("size");
  assert_int_equal(old.rank, -7);
  /* A finalized communicator is no longer usable. */
  assert_int_equal(ncclCommFinalize(comm), ncclSuccess);
  ncclCommProperties_t q = NCCL_COMM_PROPERTIES_INITIALIZER;
  assert_int_equal(ncclCommQueryProperties(comm, &q), ncclInvalidUsage);
  assert_warned("finalized");
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* Defaults match what real NCCL reported on one NVLink node without GIN
 * (real NCCL 2.30 on H200: deviceApiSupport 1, multimem 0, GIN none, one LSA team, host
 * RMA 1), and cudaDev/nvmlDev follow ncclCommInitAll's devlist. */
static void test_props_defaults(void **state) {
  (void)state;
  ncclComm_t comms[2];
  const int devs[2] = {5, 2};
  make_comms(comms, 2, devs, NULL);
  for (int r = 0; r < 2; r++) {
    ncclCommProperties_t p = NCCL_COMM_PROPERTIES_INITIALIZER;
    assert_int_equal(ncclCommQueryProperties(comms[r], &p), ncclSuccess);
    assert_int_equal(p.rank, r);
    assert_int_equal(p.nRanks, 2);
    assert_int_equal(p.cudaDev, devs[r]);
    assert_int_equal(p.nvmlDev, devs[r]);
    assert_true(p.deviceApiSupport);
    assert_false(p.multimemSupport);
    assert_int_equal(p.ginType, NCCL_GIN_TYPE_NONE);
    assert_int_equal(p.railedGinType, NCCL_GIN_TYPE_NONE);
    assert_int_equal(p.nLsaTeams, 1);
    assert_true(p.hostRmaSupport);
  }
  destroy_comms(comms, 2);
}

/* Options chosen per communicator show in its properties; three ranks at
 * two per node make two LSA teams. NCCLSIM_GIN_TYPE set at run time is
 * picked up by communicators made afterwards. */
static void test_props_options(void **state) {
  (void)state;
  ncclComm_t comms[3];
  ncclsimCommOptions_t o = {NCCL_GIN_TYPE_GDAKI, NCCL_GIN_TYPE_PROXY, 0, 0, 2};
  make_comms(comms, 3, NULL, &o);
  for (int r = 0; r < 3; r++) {
    ncclCommProperties_t p = NCCL_COMM_PROPERTIES_INITIALIZER;
    assert_int_equal(ncclCommQueryProperties(comms[r], &p), ncclSuccess);
    assert_int_equal(p.ginType, NCCL_GIN_TYPE_GDAKI);
    assert_int_equal(p.railedGinType, NCCL_GIN_TYPE_PROXY);
    assert_false(p.hostRmaSupport);
    assert_false(p.deviceApiSupport);
    assert_int_equal(p.nLsaTeams, 2);
  }
  destroy_comms(comms, 3);

  assert_int_equal(ncclsimParamSet("GIN_TYPE", "gpi"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("RAILED_GIN_TYPE", "2"), ncclSuccess);
  make_comms(comms, 1, NULL, NULL);
  assert_int_equal(ncclsimParamSet("GIN_TYPE", NULL), ncclSuccess);
  assert_int_equal(ncclsimParamSet("RAILED_GIN_TYPE", NULL), ncclSuccess);
  ncclCommProperties_t p = NCCL_COMM_PROPERTIES_INITIALIZER;
  assert_int_equal(ncclCommQueryProperties(comms[0], &p), ncclSuccess);
  assert_int_equal(p.ginType, NCCL_GIN_TYPE_GPI);
  assert_int_equal(p.railedGinType, NCCL_GIN_TYPE_PROXY);
  destroy_comms(comms, 1);
}

/* ---- teams ---- */

/* Three ranks, two per node: node 0 = {0, 1}, node 1 = {2}. The rail of
 * LSA index 1 has no member on the short node 1. */
static void test_teams_two_nodes(void **state) {
  (void)state;
  ncclComm_t c[3];
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  o.ranksPerNode = 2;
  make_comms(c, 3, NULL, &o);
  for (int r = 0; r < 3; r++) assert_team(ncclTeamWorld(c[r]), 3, r, 1);
  assert_team(ncclTeamLsa(c[0]), 2, 0, 1);
  assert_team(ncclTeamLsa(c[1]), 2, 1, 1);
  assert_team(ncclTeamLsa(c[2]), 1, 0, 1);
  assert_team(ncclTeamRail(c[0]), 2, 0, 2);
  assert_team(ncclTeamRail(c[1]), 1, 0, 2);
  assert_team(ncclTeamRail(c[2]), 2, 1, 2);
  destroy_comms(c, 3);
}

/* One node (the default): the LSA team is the world, each rail one rank. */
static void test_teams_one_node(void **state) {
  (void)state;
  ncclComm_t c[2];
  make_comms(c, 2, NULL, NULL);
  for (int r = 0; r < 2; r++) {
    assert_team(ncclTeamLsa(c[r]), 2, r, 1);
    assert_team(ncclTeamRail(c[r]), 1, 0, 2);
  }
  destroy_comms(c, 2);
}

/* An invalid communicator gives the empty team, with a diagnostic. */
static void test_teams_bad_comm(void **state) {
  (void)state;
  assert_team(ncclTeamWorld(NULL), 0, 0, 0);
  assert_warned("ncclTeamWorld");
  assert_team(ncclTeamLsa(NULL), 0, 0, 0);
  assert_warned("ncclTeamLsa");
  assert_team(ncclTeamRail(NULL), 0, 0, 0);
  assert_warned("ncclTeamRail");
  ncclComm_t c;
  make_comms(&c, 1, NULL, NULL);
  assert_int_equal(ncclCommFinalize(c), ncclSuccess);
  assert_team(ncclTeamLsa(c), 0, 0, 0);
  assert_team(ncclTeamRail(c), 0, 0, 0);
  assert_int_equal(ncclCommDestroy(c), ncclSuccess);
}

/* ---- ncclDevCommCreate: validation ---- */

/* NULL arguments, requirements not made with the initializer, and a
 * communicator that is NULL, finalized or without device API support. */
static void test_devcomm_bad_args(void **state) {
  (void)state;
  ncclComm_t c;
  ncclDevComm_t dc;
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  assert_int_equal(ncclDevCommCreate(NULL, &r, &dc), ncclInvalidArgument);
  make_comms(&c, 1, NULL, NULL);
  assert_int_equal(ncclDevCommCreate(c, NULL, &dc), ncclInvalidArgument);
  assert_warned("reqs is NULL");
  assert_int_equal(ncclDevCommCreate(c, &r, NULL), ncclInvalidArgument);
  assert_warned("outDevComm is NULL");
  ncclDevCommRequirements_t bad = r;
  bad.magic = 0;
  expect_bad(c, &bad, "NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER");
  bad = r;
  bad.size = offsetof(ncclDevCommRequirements_t, worldGinBarrierCount); /* an older layout */
  expect_bad(c, &bad, "NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER");
  assert_int_equal(ncclDevCommDestroy(NULL, &dc), ncclInvalidArgument);
  assert_int_equal(ncclDevCommDestroy(c, NULL), ncclInvalidArgument);
  assert_warned("devComm is NULL");
  assert_int_equal(ncclCommFinalize(c), ncclSuccess);
  assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclInvalidUsage);
  assert_int_equal(ncclDevCommDestroy(c, &dc), ncclInvalidUsage);
  assert_int_equal(ncclCommDestroy(c), ncclSuccess);

  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  o.deviceApi = 0;
  make_comms(&c, 1, NULL, &o);
  assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclInvalidUsage);
  assert_warned("device API is not supported");
  destroy_comms(&c, 1);
}

/* Every count must be >= 0, the connection type one of the enum's. */
#define EXPECT_NEGATIVE_REFUSED(comm, field)                      \
  do {                                                            \
    ncclDevCommRequirements_t q_ = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER; \
    q_.field = -1;                                                \
    expect_bad((comm), &q_, #field " is -1");                     \
  } while (0)

static void test_devcomm_bad_counts(void **state) {
  (void)state;
  ncclComm_t c;
  ncclsimCommOptions_t o = {NCCL_GIN_TYPE_PROXY, NCCL_GIN_TYPE_PROXY, NCCLSIM_OPT_UNSET, NCCLSIM_OPT_UNSET,
                            NCCLSIM_OPT_UNSET};
  make_comms(&c, 1, NULL, &o);
  EXPECT_NEGATIVE_REFUSED(c, barrierCount);
  EXPECT_NEGATIVE_REFUSED(c, lsaBarrierCount);
  EXPECT_NEGATIVE_REFUSED(c, railGinBarrierCount);
  EXPECT_NEGATIVE_REFUSED(c, lsaLLA2ABlockCount);
  EXPECT_NEGATIVE_REFUSED(c, lsaLLA2ASlotCount);
  EXPECT_NEGATIVE_REFUSED(c, ginContextCount);
  EXPECT_NEGATIVE_REFUSED(c, ginSignalCount);
  EXPECT_NEGATIVE_REFUSED(c, ginCounterCount);
  EXPECT_NEGATIVE_REFUSED(c, ginQueueDepth);
  EXPECT_NEGATIVE_REFUSED(c, worldGinBarrierCount);
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.ginConnectionType = (ncclGinConnectionType_t)3;
  expect_bad(c, &r, "ginConnectionType is 3");
  r.ginConnectionType = (ncclGinConnectionType_t)-1;
  expect_bad(c, &r, "ginConnectionType is -1");
  /* Totals past INT32_MAX, top level plus a resource's (GIN enabled). */
  ncclDevResourceRequirements_t one = {0};
  one.ginSignalCount = 1;
  r = (ncclDevCommRequirements_t)NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  r.resourceRequirementsList = &one;
  r.ginSignalCount = INT32_MAX;
  expect_bad(c, &r, "too many");
  r.ginSignalCount = 0;
  one.ginSignalCount = 0;
  one.ginCounterCount = 1;
  r.ginCounterCount = INT32_MAX;
  expect_bad(c, &r, "total is 2147483648");
  destroy_comms(&c, 1);
}

/* Multicast is never simulated: lsaMultimem and multimem team requirements
 * are refused (as real NCCL without multicast), a team requirement without
 * multimem is fine. A cyclic team list is caught instead of looping. */
static void test_devcomm_teams_multimem(void **state) {
  (void)state;
  ncclComm_t c;
  make_comms(&c, 1, NULL, NULL);
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.lsaMultimem = true;
  expect_bad(c, &r, "lsaMultimem");
  r.lsaMultimem = false;
  ncclTeamRequirements_t t[2];
  memset(t, 0, sizeof t);
  t[0].next = &t[1];
  t[0].team = ncclTeamWorld(c);
  t[1].multimem = true;
  r.teamRequirementsList = &t[0];
  expect_bad(c, &r, "entry 1 requests multimem");
  t[1].next = &t[0]; /* a cycle */
  t[1].multimem = false;
  expect_bad(c, &r, "a cycle?");
  /* Without multimem: granted, and the multimem handle is cleared. */
  t[1].next = NULL;
  ncclMultimemHandle_t h = {(void *)&h};
  t[1].outMultimemHandle = &h;
  ncclDevComm_t dc;
  assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclSuccess);
  assert_null(h.mcBasePtr);
  assert_int_equal(ncclDevCommDestroy(c, &dc), ncclSuccess);
  destroy_comms(&c, 1);
}

/* Resource requirements: negative counts, an alignment that is not a power
 * of two, buffer sizes whose total overflows (in the size itself and in
 * the alignment padding), and a cyclic list. */
static void test_devcomm_bad_resources(void **state) {
  (void)state;
  ncclComm_t c;
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  o.ginType = NCCL_GIN_TYPE_GDAKI;
  make_comms(&c, 1, NULL, &o);
  ncclDevResourceRequirements_t q[2];
  memset(q, 0, sizeof q);
  q[0].next = &q[1];
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  r.resourceRequirementsList = &q[0];
  q[1].ginSignalCount = -2;
  expect_bad(c, &r, "a ginSignalCount is -2");
  q[1].ginSignalCount = 0;
  q[1].ginCounterCount = -3;
  expect_bad(c, &r, "a ginCounterCount is -3");
  q[1].ginCounterCount = 0;
  q[1].bufferAlign = 384;
  expect_bad(c, &r, "a bufferAlign is 384, not a power of two");
  q[1].bufferAlign = 0;
  q[0].bufferSize = 128;
  q[1].bufferSize = SIZE_MAX - 64; /* 128 + this wraps */
  expect_bad(c, &r, "overflows (entry 1)");
  q[0].bufferSize = SIZE_MAX - 10; /* padding the next buffer to 128 wraps */
  q[1].bufferSize = 1;
  expect_bad(c, &r, "overflows (entry 1)");
  q[0].bufferSize = q[1].bufferSize = 0;
  q[1].next = &q[0];
  expect_bad(c, &r, "resourceRequirementsList is longer than");
  destroy_comms(&c, 1);
}

/* GIN resources need GIN enabled (real NCCL: "requested GIN resources but did
 * not request GIN to be enabled"), top level or in a resource entry; and
 * enabling GIN needs a GIN type on the ranks (FULL) or a railed one (RAIL). */
static void test_devcomm_gin_required(void **state) {
  (void)state;
  ncclComm_t c;
  make_comms(&c, 1, NULL, NULL); /* GIN none, railed none */
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.ginSignalCount = 1;
  expect_bad(c, &r, "did not request GIN to be enabled");
  r.ginSignalCount = 0;
  ncclDevResourceRequirements_t q = {0};
  q.ginCounterCount = 2;
  r.resourceRequirementsList = &q;
  expect_bad(c, &r, "0 signal(s), 2 counter(s)");
  r.resourceRequirementsList = NULL;
  r.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  expect_bad(c, &r, "not all ranks support GIN (FULL connection");
  r.ginConnectionType = NCCL_GIN_CONNECTION_RAIL;
  expect_bad(c, &r, "not all ranks support GIN (RAIL connection");
  r.ginConnectionType = NCCL_GIN_CONNECTION_NONE;
  r.ginForceEnable = true;
  expect_bad(c, &r, "not all ranks support GIN (ginForceEnable");
  destroy_comms(&c, 1);
}

/* ---- ncclDevCommCreate: what is granted ---- */

/* As NCCL 2.30.7 lays it out: communicator-level signals and counters
 * come first (from 0); then the device communicator's own barriers (world
 * GIN, rail GIN, LSA, hybrid world GIN, hybrid rail GIN, hybrid LSA), then
 * each resource entry, in list order, gets the next block; buffers are
 * laid out in that order at their alignment (at least
 * NCCLSIM_DEV_RESOURCE_UNIT, an empty one too), zeroed, and counted in the
 * communicator's memory. */
static void test_devcomm_grants(void **state) {
  (void)state;
  ncclComm_t c;
  ncclsimCommOptions_t o = {NCCL_GIN_TYPE_GDAKI, NCCL_GIN_TYPE_PROXY, NCCLSIM_OPT_UNSET, NCCLSIM_OPT_UNSET,
                            NCCLSIM_OPT_UNSET};
  make_comms(&c, 1, NULL, &o);
  ncclDevResourceRequirements_t q[4];
  memset(q, 0, sizeof q);
  ncclDevResourceHandle_t h[3] = {99, 99, 99};
  ncclGinSignal_t s[2] = {99, 99};
  ncclGinCounter_t k[2] = {99, 99};
  q[0] = (ncclDevResourceRequirements_t){&q[1], 100, 0, &h[0], 2, 1, &s[0], &k[0]};
  q[1] = (ncclDevResourceRequirements_t){&q[2], 0, 0, &h[1], 1, 0, &s[1], &k[1]};
  q[2] = (ncclDevResourceRequirements_t){&q[3], 64, 512, NULL, 4, 4, NULL, NULL};
  q[3] = (ncclDevResourceRequirements_t){NULL, 0, 0, NULL, 0, 0, NULL, NULL}; /* asks for nothing */
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.resourceRequirementsList = &q[0];
  r.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  r.ginSignalCount = 3;
  r.ginCounterCount = 2;
  r.barrierCount = 1;
  r.lsaBarrierCount = 2;
  r.railGinBarrierCount = 3;
  r.worldGinBarrierCount = 4;
  r.lsaLLA2ABlockCount = 5;
  r.lsaLLA2ASlotCount = 6;
  r.ginQueueDepth = 7;
  r.ginExclusiveContexts = true;
  r.ginVaSignalsRequired = false;
  uint64_t before = mem_total(c);
  ncclDevComm_t dc;
  assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclSuccess);
  /* Signals: 3 of the communicator, then 1 rank x (4 world + 3 rail + 1
   * hybrid world + 1 hybrid rail) of the barriers, then the list's. */
  assert_int_equal(dc.worldGinBarrier.signal0, 3);
  assert_int_equal(dc.railGinBarrier.signal0, 7);
  assert_int_equal(dc.hybridWorldGinBarrier.signal0, 10);
  assert_int_equal(dc.hybridRailGinBarrier.signal0, 11);
  assert_int_equal(s[0], 12);
  assert_int_equal(s[1], 14);
  assert_int_equal(k[0], 2);
  assert_int_equal(k[1], 3);
  /* Buffers: the LSA barriers' ((3 + 1) x 2 words) at 0, the hybrid LSA
   * barrier's at 128, q[0] at 256, the empty q[1] at 384, q[2] at 512. */
  assert_int_equal(dc.lsaBarrier.bufHandle, 0);
  assert_int_equal(dc.lsaBarrier.nBarriers, 2);
  assert_int_equal(dc.hybridLsaBarrier.bufHandle, 1);
  assert_int_equal(dc.hybridLsaBarrier.nBarriers, 1);
  assert_int_equal(h[0], 2);
  assert_int_equal(h[1], 3); /* no buffer, but a place, as in NCCL */
  assert_int_equal(dc.ginSignalCount, 3 + 9 + 2 + 1 + 4);
  assert_int_equal(dc.ginCounterCount, 2 + 1 + 0 + 4);
  assert_int_equal(dc.resourceBytes, 512 + 64); /* q[2] starts at 512 */
  assert_non_null(dc.resourceBase);
  for (size_t i = 0; i < dc.resourceBytes; i++) assert_int_equal(((unsigned char *)dc.resourceBase)[i], 0);
  assert_int_equal(mem_total(c), before + 576);
  assert_int_equal(dc.ginType, NCCL_GIN_TYPE_GDAKI);
  assert_int_equal(dc.ginConnectionType, NCCL_GIN_CONNECTION_FULL);
  assert_int_equal(dc.ginContextCount, 4); /* the initializer's hint */
  assert_true(dc.ginStrongSignals);
  assert_false(dc.ginVaSignals);
  assert_true(dc.ginExclusiveContexts);
  assert_int_equal(dc.ginQueueDepth, 7);
  assert_int_equal(dc.barrierCount, 1);
  assert_int_equal(dc.lsaBarrierCount, 2);
  assert_int_equal(dc.railGinBarrierCount, 3);
  assert_int_equal(dc.worldGinBarrierCount, 4);
  assert_int_equal(dc.lsaLLA2ABlockCount, 5);
  assert_int_equal(dc.lsaLLA2ASlotCount, 6);
  assert_int_equal(dc.rank, 0);
  assert_int_equal(dc.nRanks, 1);
  assert_int_equal(dc.lsaSize, 1);
  assert_int_equal(dc.nLsaTeams, 1);

  /* RAIL uses the railed GIN type; a zero context hint still grants one. */
  ncclDevCommRequirements_t r2 = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r2.ginConnectionType = NCCL_GIN_CONNECTION_RAIL;
  r2.ginContextCount = 0;
  ncclDevComm_t dc2;
  assert_int_equal(ncclDevCommCreate(c, &r2, &dc2), ncclSuccess);
  assert_int_equal(dc2.ginType, NCCL_GIN_TYPE_PROXY);
  assert_int_equal(dc2.ginContextCount, 1);
  assert_null(dc2.resourceBase);
  assert_int_not_equal(dc2.id, dc.id);
  /* Without GIN requested: no GIN, whatever the communicator supports. */
  ncclDevCommRequirements_t r3 = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ncclDevComm_t dc3;
  assert_int_equal(ncclDevCommCreate(c, &r3, &dc3), ncclSuccess);
  assert_int_equal(dc3.ginType, NCCL_GIN_TYPE_NONE);
  assert_int_equal(dc3.ginContextCount, 0);

  assert_int_equal(ncclDevCommDestroy(c, &dc), ncclSuccess);
  assert_int_equal(mem_total(c), before);
  /* Destroyed already: ncclsim checks this. */
  assert_int_equal(ncclDevCommDestroy(c, &dc), ncclInvalidArgument);
  assert_warned("is not a live device communicator");
  assert_int_equal(ncclDevCommDestroy(c, &dc3), ncclSuccess);
  assert_int_equal(ncclDevCommDestroy(c, &dc2), ncclSuccess);
  destroy_comms(&c, 1);
}

/* A device communicator belongs to the rank that made it: another rank of
 * the same communicator cannot destroy it. */
static void test_devcomm_other_rank(void **state) {
  (void)state;
  ncclComm_t c[2];
  make_comms(c, 2, NULL, NULL);
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ncclDevComm_t dc;
  assert_int_equal(ncclDevCommCreate(c[0], &r, &dc), ncclSuccess);
  assert_int_equal(ncclDevCommDestroy(c[1], &dc), ncclInvalidArgument);
  assert_warned("rank 1");
  assert_int_equal(ncclDevCommDestroy(c[0], &dc), ncclSuccess);
  destroy_comms(c, 2);
}

/* GIN must be supported by every rank still in the communicator: with rank
 * 0 lacking a GIN type, FULL and ginForceEnable fail on rank 1 while RAIL
 * (rank 0 has a railed type) works; once rank 0 is destroyed, FULL works. */
static void test_devcomm_mixed_gin(void **state) {
  (void)state;
  ncclComm_t c[2];
  ncclUniqueId id;
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  ncclsimCommOptions_t o[2] = {{NCCL_GIN_TYPE_NONE, NCCL_GIN_TYPE_PROXY, 1, 1, 0},
                               {NCCL_GIN_TYPE_GDAKI, NCCL_GIN_TYPE_GPI, 1, 1, 0}};
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    assert_int_equal(ncclsimSetCommOptions(&o[r]), ncclSuccess);
    assert_int_equal(ncclCommInitRank(&c[r], 2, id, r), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(ncclsimSetCommOptions(NULL), ncclSuccess);

  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  expect_bad(c[1], &r, "ginType (NCCLSIM_GIN_TYPE) is none on some rank");
  r.ginConnectionType = NCCL_GIN_CONNECTION_NONE;
  r.ginForceEnable = true;
  r.ginSignalCount = 1;
  expect_bad(c[1], &r, "ginForceEnable");
  ncclDevComm_t dc;
  r.ginForceEnable = false;
  r.ginConnectionType = NCCL_GIN_CONNECTION_RAIL;
  assert_int_equal(ncclDevCommCreate(c[1], &r, &dc), ncclSuccess);
  assert_int_equal(dc.ginType, NCCL_GIN_TYPE_GPI); /* rank 1's railed type */
  assert_int_equal(dc.ginSignalCount, 1);
  assert_int_equal(ncclDevCommDestroy(c[1], &dc), ncclSuccess);

  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(ncclCommDestroy(c[0]), ncclSuccess);
  assert_int_equal(cudaSetDevice(1), cudaSuccess);
  r.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  assert_int_equal(ncclDevCommCreate(c[1], &r, &dc), ncclSuccess);
  assert_int_equal(dc.ginType, NCCL_GIN_TYPE_GDAKI);
  assert_int_equal(ncclDevCommDestroy(c[1], &dc), ncclSuccess);
  assert_int_equal(ncclCommDestroy(c[1]), ncclSuccess);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

/* Resource buffers that do not fit in the device's memory, and a failed
 * allocation of the device communicator itself: ncclSystemError, nothing
 * left allocated. */
static void test_devcomm_out_of_memory(void **state) {
  (void)state;
  ncclComm_t c;
  make_comms(&c, 1, NULL, NULL);
  size_t n0, b0, n1, b1;
  ncclsimMemStats(&n0, &b0);
  ncclDevResourceRequirements_t q = {0};
  q.bufferSize = (size_t)1 << 50; /* far beyond NCCLSIM_DEVICE_MEM */
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.resourceRequirementsList = &q;
  ncclDevComm_t dc;
  assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclSystemError);
  assert_warned("cannot allocate 1125899906842624 bytes of resource buffers on device 0");
  q.bufferSize = 256;
  ncclsimAllocFailAfter(1);
  assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclSystemError);
  ncclsimAllocFailAfter(0);
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0);
  assert_int_equal(b1, b0);
  /* and then it works */
  assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclSuccess);
  assert_int_equal(dc.resourceBytes, 256);
  assert_int_equal(ncclDevCommDestroy(c, &dc), ncclSuccess);
  destroy_comms(&c, 1);
}

/* ncclCommDestroy frees the device communicators left open, with their
 * resource buffers. */
static void test_devcomm_left_open(void **state) {
  (void)state;
  size_t n0, b0, n1, b1;
  ncclsimMemStats(&n0, &b0);
  ncclComm_t c[2];
  make_comms(c, 2, NULL, NULL);
  ncclDevResourceRequirements_t q = {0};
  q.bufferSize = 4096;
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.resourceRequirementsList = &q;
  ncclDevComm_t dc[3];
  assert_int_equal(ncclDevCommCreate(c[0], &r, &dc[0]), ncclSuccess);
  assert_int_equal(ncclDevCommCreate(c[0], &r, &dc[1]), ncclSuccess);
  assert_int_equal(cudaSetDevice(1), cudaSuccess);
  assert_int_equal(ncclDevCommCreate(c[1], &r, &dc[2]), ncclSuccess);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0 + 3);
  assert_int_equal(b1, b0 + 3 * 4096);
  assert_int_equal(ncclCommDestroy(c[0]), ncclSuccess); /* rank 0's two go */
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0 + 1);
  assert_int_equal(ncclCommDestroy(c[1]), ncclSuccess);
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0);
  assert_int_equal(b1, b0);
}

/* Every allocation of making a communicator is failed in turn, the device
 * area's among them: the init fails cleanly (no communicator, nothing
 * leaked), until one that runs out of allocations to fail succeeds. */
static void test_init_alloc_failure(void **state) {
  (void)state;
  int failed = 0;
  for (uint64_t k = 1;; k++) {
    ncclComm_t c = (ncclComm_t)&failed; /* not NULL: a failed init must clear it */
    ncclsimAllocFailAfter(k);
    ncclResult_t res = ncclCommInitAll(&c, 1, NULL);
    uint64_t made = ncclsimAllocFailAfter(0);
    if (res == ncclSuccess) {
      assert_true(made < k);
      ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
      ncclDevComm_t dc;
      assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclSuccess);
      assert_int_equal(ncclCommDestroy(c), ncclSuccess);
      break;
    }
    assert_int_equal(res, ncclSystemError);
    assert_null(c);
    failed++;
  }
  assert_true(failed >= 3); /* at least the comm, the clique and the device area */
}

/* ---- the window table ---- */

static int table_slot(const ncclDevComm_t *dc, ncclWindow_t w, uintptr_t base) {
  int i = 0;
  for (const ncclDevCommWindowTable *t = dc->windowTable; t; t = t->next)
    for (int e = 0; e < 32; e++, i++)
      if (t->entries[e].window == w) return t->entries[e].base == base ? i : -2;
  return -1;
}

#define NWIN 33

/* More than 32 windows chain a second chunk; a freed slot is reused first;
 * the communicator's destroy frees the chain. */
static void test_window_table_chain(void **state) {
  (void)state;
  ncclComm_t c;
  make_comms(&c, 1, NULL, NULL);
  char *mem;
  assert_int_equal(ncclMemAlloc((void **)&mem, NWIN * 4096), ncclSuccess);
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ncclDevComm_t dc;
  assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclSuccess);
  ncclWindow_t w[NWIN];
  for (int i = 0; i < NWIN; i++)
    assert_int_equal(ncclCommWindowRegister(c, mem + i * 4096, 4096, &w[i], NCCL_WIN_DEFAULT), ncclSuccess);
  for (int i = 0; i < NWIN; i++) assert_int_equal(table_slot(&dc, w[i], (uintptr_t)(mem + i * 4096)), i);
  assert_non_null(dc.windowTable->next);
  assert_int_equal(ncclCommWindowDeregister(c, w[5]), ncclSuccess);
  assert_int_equal(table_slot(&dc, w[5], (uintptr_t)(mem + 5 * 4096)), -1);
  ncclWindow_t again;
  assert_int_equal(ncclCommWindowRegister(c, mem, 64, &again, NCCL_WIN_DEFAULT), ncclSuccess);
  assert_int_equal(table_slot(&dc, again, (uintptr_t)mem), 5);
  /* A slot freed in the second chunk is found behind the full first one. */
  assert_int_equal(ncclCommWindowDeregister(c, w[NWIN - 1]), ncclSuccess);
  assert_int_equal(table_slot(&dc, w[NWIN - 1], (uintptr_t)(mem + (NWIN - 1) * 4096)), -1);
  ncclWindow_t again2;
  assert_int_equal(ncclCommWindowRegister(c, mem, 128, &again2, NCCL_WIN_DEFAULT), ncclSuccess);
  assert_int_equal(table_slot(&dc, again2, (uintptr_t)mem), NWIN - 1);
  /* Leave the rest registered, and dc open: the destroy cleans up. */
  assert_int_equal(ncclCommDestroy(c), ncclSuccess);
  assert_int_equal(ncclMemFree(mem), ncclSuccess);
}

/* Every allocation of registering the 33rd window is failed in turn. A
 * registration either fails, or succeeds: when the table's second chunk
 * could not be allocated, the window is missing from the table and the
 * registration says so. */
static void test_window_table_alloc_failure(void **state) {
  (void)state;
  ncclComm_t c;
  make_comms(&c, 1, NULL, NULL);
  char *mem;
  assert_int_equal(ncclMemAlloc((void **)&mem, NWIN * 4096), ncclSuccess);
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ncclDevComm_t dc;
  assert_int_equal(ncclDevCommCreate(c, &r, &dc), ncclSuccess);
  ncclWindow_t w[NWIN];
  for (int i = 0; i < NWIN - 1; i++)
    assert_int_equal(ncclCommWindowRegister(c, mem + i * 4096, 4096, &w[i], NCCL_WIN_DEFAULT), ncclSuccess);
  char *last = mem + (NWIN - 1) * 4096;
  int missing = 0;
  for (uint64_t k = 1;; k++) {
    ncclsimAllocFailAfter(k);
    ncclResult_t res = ncclCommWindowRegister(c, last, 4096, &w[NWIN - 1], NCCL_WIN_DEFAULT);
    uint64_t made = ncclsimAllocFailAfter(0);
    if (res != ncclSuccess) {
      assert_true(made >= k);
      continue;
    }
    int slot = table_slot(&dc, w[NWIN - 1], (uintptr_t)last);
    if (slot < 0) {
      assert_int_equal(slot, -1);
      assert_null(dc.windowTable->next);
      assert_warned("missing from the device window table");
      missing++;
    } else {
      assert_int_equal(slot, NWIN - 1);
    }
    assert_int_equal(ncclCommWindowDeregister(c, w[NWIN - 1]), ncclSuccess);
    if (made < k) break; /* nothing failed: every allocation was tried */
  }
  assert_int_equal(missing, 1);
  for (int i = 0; i < NWIN - 1; i++) assert_int_equal(ncclCommWindowDeregister(c, w[i]), ncclSuccess);
  assert_int_equal(ncclDevCommDestroy(c, &dc), ncclSuccess);
  assert_int_equal(ncclCommDestroy(c), ncclSuccess);
  assert_int_equal(ncclMemFree(mem), ncclSuccess);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_props_bad_args),
      cmocka_unit_test(test_props_defaults),
      cmocka_unit_test(test_props_options),
      cmocka_unit_test(test_teams_two_nodes),
      cmocka_unit_test(test_teams_one_node),
      cmocka_unit_test(test_teams_bad_comm),
      cmocka_unit_test(test_devcomm_bad_args),
      cmocka_unit_test(test_devcomm_bad_counts),
      cmocka_unit_test(test_devcomm_teams_multimem),
      cmocka_unit_test(test_devcomm_bad_resources),
      cmocka_unit_test(test_devcomm_gin_required),
      cmocka_unit_test(test_devcomm_grants),
      cmocka_unit_test(test_devcomm_other_rank),
      cmocka_unit_test(test_devcomm_mixed_gin),
      cmocka_unit_test(test_devcomm_out_of_memory),
      cmocka_unit_test(test_devcomm_left_open),
      cmocka_unit_test(test_init_alloc_failure),
      cmocka_unit_test(test_window_table_chain),
      cmocka_unit_test(test_window_table_alloc_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
