/*
 * sim/net/join.c — a rank's side of the bootstrap (net/bootstrap.c), and
 * the host map made from the root's answer.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim.h"
#include "net_internal.h"

struct sim_net_boot {
  int fd;
  int rank;
  char root[80]; /* its address, for diagnostics */
};

ncclResult_t sim_net_join(const sim_net_addr *rootaddr, uint64_t secret, uint64_t key, int nranks, int rank,
                          const void *extra, size_t extra_len, sim_net_boot **out, char *why, size_t why_len) {
  const void *ucx_addr;
  size_t ucx_len;
  SIM_CHECK(sim_ucx_init(&ucx_addr, &ucx_len, why, why_len));
  sim_net_boot *b = calloc(1, sizeof *b);
  if (!b) {
    snprintf(why, why_len, "out of memory");
    return ncclSystemError;
  }
  b->rank = rank;
  sim_net_addr_text(rootaddr, b->root, sizeof b->root);
  uint64_t deadline = sim_now_ns() + sim_timeout_ns();
  int e = sim_net_connect(rootaddr, deadline, &b->fd);
  if (e) {
    snprintf(why, why_len, "cannot reach the unique id's bootstrap root at %s: %s", b->root, strerror(e));
    free(b);
    return ncclSystemError;
  }
  sim_net_hello h;
  memset(&h, 0, sizeof h);
  h.magic = SIM_NET_HELLO_MAGIC;
  h.secret = secret;
  h.key = key;
  h.group = sim_net_group();
  h.nranks = nranks;
  h.rank = rank;
  h.pid = (int32_t)getpid();
  h.addr_len = (uint32_t)(ucx_len + extra_len);
  h.extra_len = (uint32_t)extra_len;
  snprintf(h.host, sizeof h.host, "%s", sim_net_host_name());
  e = sim_net_write_all(b->fd, &h, sizeof h, deadline);
  if (!e) e = sim_net_write_all(b->fd, ucx_addr, ucx_len, deadline);
  if (!e && extra_len) e = sim_net_write_all(b->fd, extra, extra_len, deadline);
  if (e) {
    snprintf(why, why_len, "cannot send rank %d's hello to the bootstrap root at %s: %s", rank, b->root, strerror(e));
    sim_net_join_free(b);
    return ncclSystemError;
  }
  *out = b;
  return ncclSuccess;
}

void sim_net_join_free(sim_net_boot *b) {
  if (!b) return;
  if (b->fd >= 0) close(b->fd);
  free(b);
}

void sim_net_map_free(sim_net_map *m) {
  if (!m) return;
  sim_free(m->host);
  sim_free(m->host_rank);
  sim_free(m->host_size);
  sim_free(m->group);
  sim_free(m->pid);
  sim_free(m->host_name);
  sim_free(m->addr_off);
  sim_free(m->addr_len);
  sim_free(m->extra_len);
  sim_free(m->addrs);
  sim_free(m);
}

/* Hosts are numbered in the order of their first ranks. */
static sim_net_map *map_make(int rank, int n, const sim_net_entry *e, const uint8_t *addrs, size_t addrs_len) {
  sim_net_map *m = sim_calloc(1, sizeof *m);
  if (!m) return NULL;
  size_t un = (size_t)n;
  m->nranks = n;
  m->host = sim_calloc(un, sizeof *m->host);
  m->host_rank = sim_calloc(un, sizeof *m->host_rank);
  m->host_size = sim_calloc(un, sizeof *m->host_size);
  m->group = sim_calloc(un, sizeof *m->group);
  m->pid = sim_calloc(un, sizeof *m->pid);
  m->host_name = sim_calloc(un, sizeof *m->host_name);
  m->addr_off = sim_calloc(un, sizeof *m->addr_off);
  m->addr_len = sim_calloc(un, sizeof *m->addr_len);
  m->extra_len = sim_calloc(un, sizeof *m->extra_len);
  m->addrs = sim_malloc(addrs_len ? addrs_len : 1);
  if (!m->host || !m->host_rank || !m->host_size || !m->group || !m->pid || !m->host_name || !m->addr_off ||
      !m->addr_len || !m->extra_len || !m->addrs) {
    sim_net_map_free(m);
    return NULL;
  }
  memcpy(m->addrs, addrs, addrs_len);
  uint32_t off = 0;
  for (int r = 0; r < n; r++) {
    int h = 0;
    while (h < m->nhosts && m->group[h] != e[r].group) h++;
    if (h == m->nhosts) m->group[m->nhosts++] = e[r].group; /* group[] doubles as the host list here */
    m->host[r] = h;
    m->host_rank[r] = m->host_size[h]++;
    m->pid[r] = e[r].pid;
    memcpy(m->host_name[r], e[r].host, SIM_NET_HOST_NAME);
    m->addr_off[r] = off;
    m->addr_len[r] = e[r].addr_len - e[r].extra_len;
    m->extra_len[r] = e[r].extra_len;
    off += e[r].addr_len;
  }
  for (int r = 0; r < n; r++) m->group[r] = e[r].group; /* now: rank -> group */
  m->my_host = m->host[rank];
  return m;
}

ncclResult_t sim_net_join_poll(sim_net_boot *b, bool block, uint64_t deadline_ns, sim_net_map **out, char *why,
                               size_t why_len) {
  struct pollfd p = {b->fd, POLLIN, 0};
  if (!block) {
    if (poll(&p, 1, 0) <= 0) return ncclInProgress;
    deadline_ns = sim_now_ns() + sim_timeout_ns(); /* the answer has begun: the rest follows */
  }
  sim_net_answer a;
  int e = sim_net_read_all(b->fd, &a, sizeof a, deadline_ns);
  if (e == ETIMEDOUT) return ncclInProgress;
  if (!e && a.magic != SIM_NET_ANSWER_MAGIC) e = EPROTO;
  if (e) {
    snprintf(why, why_len, "rank %d lost the bootstrap root at %s before its answer: %s", b->rank, b->root,
             e == ECONNRESET ? "it closed the connection (its process ended?)" : strerror(e));
    return ncclSystemError;
  }
  if (a.status != ncclSuccess) {
    a.why[sizeof a.why - 1] = 0;
    snprintf(why, why_len, "%s", a.why);
    return (ncclResult_t)a.status;
  }
  size_t n = (size_t)a.nranks;
  sim_net_entry *ent = malloc(n * sizeof *ent);
  uint8_t *addrs = NULL;
  size_t total = 0;
  e = ent ? sim_net_read_all(b->fd, ent, n * sizeof *ent, deadline_ns) : ENOMEM;
  for (size_t r = 0; !e && r < n; r++) {
    if (ent[r].extra_len > ent[r].addr_len) e = EPROTO;
    total += ent[r].addr_len;
  }
  if (!e && !(addrs = malloc(total ? total : 1))) e = ENOMEM;
  if (!e) e = sim_net_read_all(b->fd, addrs, total, deadline_ns);
  sim_net_map *m = e ? NULL : map_make(b->rank, a.nranks, ent, addrs, total);
  free(ent);
  free(addrs);
  if (!m) {
    snprintf(why, why_len, "rank %d cannot read the bootstrap root's answer: %s", b->rank,
             e ? strerror(e) : "out of memory");
    return ncclSystemError;
  }
  *out = m;
  return ncclSuccess;
}

void sim_net_describe_host(const sim_net_map *m, int host, char *buf, size_t len) {
  int r0 = 0;
  while (r0 < m->nranks && m->host[r0] != host) r0++;
  int n = snprintf(buf, len, "host %s (ranks ", r0 < m->nranks ? m->host_name[r0] : "?");
  bool first = true;
  for (int r = 0; r < m->nranks && n > 0 && (size_t)n < len; r++)
    if (m->host[r] == host) {
      n += snprintf(buf + n, len - (size_t)n, first ? "%d" : ",%d", r);
      first = false;
    }
  if (n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, ")");
}
