/*
 * config.c — nccl.core NCCLConfig as n4c_config_t, turned into the linked
 * NCCL's ncclConfig_t.
 */
#include "config.h"

#include "n4c_internal.h"

/* A boolean field, if set, is 0 or 1. */
static n4c_status_t check_bool(const char *op, const char *field, int v) {
  if (v == N4C_UNSET || v == 0 || v == 1) return N4C_OK;
  return n4c_error(N4C_EINVAL, "%s: config->%s is %d, must be 0, 1 or N4C_UNSET", op, field, v);
}

#if !defined(HAVE_NCCLCONFIG_T_GRAPHUSAGEMODE) || !defined(HAVE_NCCLCONFIG_T_NUMRMACTX) || \
    !defined(HAVE_NCCLCONFIG_T_MAXP2PPEERS) || !defined(HAVE_NCCLCONFIG_T_GRAPHSTREAMORDERING)
/* A field the linked ncclConfig_t lacks must stay unset. */
static n4c_status_t check_absent(const char *op, const char *field, const char *nccl_field, int v) {
  if (v == N4C_UNSET) return N4C_OK;
  return n4c_error(N4C_ENOTSUP, "%s: config->%s is set, but the linked NCCL's ncclConfig_t has no %s "
                   "(NCCL %d.%d)", op, field, nccl_field, NCCL_MAJOR, NCCL_MINOR);
}
#endif

n4c_status_t n4c_config_to_nccl(const n4c_config_t *config, ncclConfig_t *out) {
  static const char op[] = "n4c_config_to_nccl";
  N4C_CHECK(n4c_check_ptr(op, "config", config));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  const n4c_config_t *c = config;
  N4C_CHECK(check_bool(op, "blocking", c->blocking));
  N4C_CHECK(check_bool(op, "split_share", c->split_share));
  N4C_CHECK(check_bool(op, "collnet_enable", c->collnet_enable));
  N4C_CHECK(check_bool(op, "shrink_share", c->shrink_share));
  N4C_CHECK(check_bool(op, "nvlink_centric_sched", c->nvlink_centric_sched));
  N4C_CHECK(check_bool(op, "graph_stream_ordering", c->graph_stream_ordering));
#ifndef HAVE_NCCLCONFIG_T_GRAPHUSAGEMODE
  N4C_CHECK(check_absent(op, "graph_usage_mode", "graphUsageMode", c->graph_usage_mode));
#endif
#ifndef HAVE_NCCLCONFIG_T_NUMRMACTX
  N4C_CHECK(check_absent(op, "num_rma_ctx", "numRmaCtx", c->num_rma_ctx));
#endif
#ifndef HAVE_NCCLCONFIG_T_MAXP2PPEERS
  N4C_CHECK(check_absent(op, "max_p2p_peers", "maxP2pPeers", c->max_p2p_peers));
#endif
#ifndef HAVE_NCCLCONFIG_T_GRAPHSTREAMORDERING
  N4C_CHECK(check_absent(op, "graph_stream_ordering", "graphStreamOrdering", c->graph_stream_ordering));
#endif

  ncclConfig_t n = NCCL_CONFIG_INITIALIZER;
  /* N4C_UNSET is NCCL_CONFIG_UNDEF_INT, and NULL NCCL_CONFIG_UNDEF_PTR:
   * an unset field leaves NCCL's "undefined", which means its default. */
  n.blocking = c->blocking;
  n.cgaClusterSize = c->cga_cluster_size;
  n.minCTAs = c->min_ctas;
  n.maxCTAs = c->max_ctas;
  if (c->net_name) n.netName = c->net_name;
  n.splitShare = c->split_share;
  n.trafficClass = c->traffic_class;
  if (c->comm_name) n.commName = c->comm_name;
  n.collnetEnable = c->collnet_enable;
  n.CTAPolicy = c->cta_policy;
  n.shrinkShare = c->shrink_share;
  n.nvlsCTAs = c->nvls_ctas;
  n.nChannelsPerNetPeer = c->n_channels_per_net_peer;
  n.nvlinkCentricSched = c->nvlink_centric_sched;
#ifdef HAVE_NCCLCONFIG_T_GRAPHUSAGEMODE
  n.graphUsageMode = c->graph_usage_mode;
#endif
#ifdef HAVE_NCCLCONFIG_T_NUMRMACTX
  n.numRmaCtx = c->num_rma_ctx;
#endif
#ifdef HAVE_NCCLCONFIG_T_MAXP2PPEERS
  n.maxP2pPeers = c->max_p2p_peers;
#endif
#ifdef HAVE_NCCLCONFIG_T_GRAPHSTREAMORDERING
  n.graphStreamOrdering = c->graph_stream_ordering;
#endif
  *out = n;
  return N4C_OK;
}
