/*
 * sim/net/bootstrap.c — ranks find each other from the unique id alone.
 *
 * The root: one TCP listener per process, started by its first
 * ncclGetUniqueId with the network on, served by one thread. It accepts a
 * rank's hello only with a key it made (each id's own random key), once:
 * when every rank of the id has said hello it answers all of them with the
 * table and forgets the key, as NCCL's root serves one communicator. A
 * round that is still short of ranks at NCCLSIM_TIMEOUT is answered with a
 * failure that names the missing ranks, and spends the key. A hello that
 * disagrees with the round (another nranks, a rank claimed twice) fails the
 * whole round at once, every rank told both values, and spends the key:
 * ranks still to come are refused with the same reason.
 *
 * Keys. A spent key of ncclGetUniqueId's stays on record, so that a second
 * use of the id is told why it is refused. An id that ncclsim makes for
 * its own use (a child of ncclCommSplit or ncclCommShrink across hosts)
 * is registered `once`: its record goes as soon as its round ends, either
 * way. Its maker releases it when no round will come (another candidate
 * became the color's id, or the call failed before this rank's hello): the
 * record goes at once, and a round already under way fails at once.
 *
 * A rank: connects, says hello and goes on (ncclCommInitRank never waits
 * here for other ranks: one thread may init several ranks in a group); the
 * answer is read when the init is waited for or polled (comm/init.c).
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../sim.h"
#include "net_internal.h"

/* ------------------------------------------------------------ identity */

bool sim_net_host_set(void) { return strcmp(sim_param_text(SIM_P_HOST_ID), "auto") != 0; }

bool sim_net_on(void) {
  const char *v = sim_param_text(SIM_P_NET);
  if (!strcmp(v, "auto")) return sim_net_host_set();
  return sim_param_int(SIM_P_NET) != 0;
}

const char *sim_net_host_name(void) {
  static char name[SIM_NET_HOST_NAME];
  if (sim_net_host_set()) return sim_param_text(SIM_P_HOST_ID);
  if (!name[0] && gethostname(name, sizeof name - 1) != 0) snprintf(name, sizeof name, "localhost");
  return name;
}

uint64_t sim_net_group(void) {
  static _Atomic uint64_t mine;
  uint64_t job = sim_shm_job();
  if (job) return job;
  uint64_t g = atomic_load(&mine);
  if (!g) {
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = sim_now_ns() ^ ((uint64_t)getpid() << 40);
    r |= 1;
    uint64_t none = 0;
    g = atomic_compare_exchange_strong(&mine, &none, r) ? r : none;
  }
  return g;
}

/* ------------------------------------------------------------ the root */

typedef struct round {
  struct round *next;
  uint64_t secret;
  int nranks, arrived;
  uint64_t deadline;
  int *fd;                 /* rank -> its connection; -1: not yet */
  sim_net_entry *entry;    /* rank -> what it said */
  uint8_t **addr;          /* rank -> its UCX address */
} round;

typedef struct key_rec {
  struct key_rec *next;
  uint64_t secret;
  bool used;
  bool once;    /* forgotten as its round ends (sim_net_root_open) */
  bool expired; /* its round timed out */
  char *why; /* malloc'd: why its round failed, when its ranks disagreed */
} key_rec;

static struct {
  pthread_mutex_t lock;
  int lfd; /* -1: not listening */
  sim_net_addr addr;
  char ifname[64];
  key_rec *keys;
  round *rounds;
} root = {PTHREAD_MUTEX_INITIALIZER, -1, {0}, "", NULL, NULL};

/* A forked child has the listener's descriptor but not its thread. */
static void root_atfork_child(void) {
  pthread_mutex_init(&root.lock, NULL);
  if (root.lfd >= 0) close(root.lfd);
  root.lfd = -1;
  root.keys = NULL;   /* the parent's: leaked in the child, which never frees them */
  root.rounds = NULL;
}

static void answer_fail(int fd, ncclResult_t status, const char *why) {
  sim_net_answer a;
  memset(&a, 0, sizeof a);
  a.magic = SIM_NET_ANSWER_MAGIC;
  a.status = status;
  snprintf(a.why, sizeof a.why, "%s", why);
  (void)sim_net_write_all(fd, &a, sizeof a, sim_now_ns() + 1000000000ull);
  close(fd);
}

static void round_free(round *r) {
  for (int i = 0; i < r->nranks; i++) {
    if (r->fd[i] >= 0) close(r->fd[i]);
    free(r->addr[i]);
  }
  free(r->fd);
  free(r->entry);
  free(r->addr);
  free(r);
}

/* Every rank is in: the table to each, then the key is spent. */
static void round_answer(round *r) {
  sim_net_answer a;
  memset(&a, 0, sizeof a);
  a.magic = SIM_NET_ANSWER_MAGIC;
  a.status = ncclSuccess;
  a.nranks = r->nranks;
  uint64_t deadline = sim_now_ns() + sim_timeout_ns();
  for (int i = 0; i < r->nranks; i++) {
    int fd = r->fd[i];
    int e = sim_net_write_all(fd, &a, sizeof a, deadline);
    if (!e) e = sim_net_write_all(fd, r->entry, (size_t)r->nranks * sizeof *r->entry, deadline);
    for (int j = 0; !e && j < r->nranks; j++) e = sim_net_write_all(fd, r->addr[j], r->entry[j].addr_len, deadline);
    if (e) SIM_WARN(SIM_INIT, "bootstrap root: cannot answer rank %d: %s", i, strerror(e));
  }
}

static key_rec *key_find(uint64_t secret) {
  for (key_rec *k = root.keys; k; k = k->next)
    if (k->secret == secret) return k;
  return NULL;
}

static void key_free(key_rec *k) {
  key_rec **pp = &root.keys;
  while (*pp != k) pp = &(*pp)->next;
  *pp = k->next;
  free(k->why);
  free(k);
}

/* k's round ended (answered or failed): spent, and gone if once. */
static void key_spend(key_rec *k) {
  k->used = true;
  if (k->once) key_free(k);
}

static void round_unlink(round *r) {
  round **pp = &root.rounds;
  while (*pp != r) pp = &(*pp)->next;
  *pp = r->next;
}

/* A hello that disagrees with round r (`why`, naming both values): every
 * rank of r, and the newcomer on fd (of process pid), is told, and k is
 * spent with the reason. Ranks of other processes are told first: this
 * process's own ranks, told last, may end it (and this thread) as soon as
 * they know. Takes fd; frees r. */
static void round_fail(round *r, key_rec *k, int fd, int pid, const char *why) {
  char msg[SIM_NET_WHY];
  snprintf(msg, sizeof msg, "the bootstrap root failed the ranks of this unique id, which disagree: %s", why);
  SIM_WARN(SIM_INIT, "%s", msg);
  int self = (int)getpid();
  if (pid != self) answer_fail(fd, ncclInvalidUsage, msg);
  for (int own = 0; own < 2; own++)
    for (int i = 0; i < r->nranks; i++)
      if (r->fd[i] >= 0 && (r->entry[i].pid == self) == own) {
        answer_fail(r->fd[i], ncclInvalidUsage, msg);
        r->fd[i] = -1;
      }
  if (pid == self) answer_fail(fd, ncclInvalidUsage, msg);
  k->why = strdup(why); /* NULL: later ranks hear only that the id is spent */
  key_spend(k);
  round_unlink(r);
  round_free(r);
}

/* One hello, under the lock. Takes fd. */
static void on_hello(int fd, const sim_net_hello *h, uint8_t *addr) {
  char why[SIM_NET_WHY];
  key_rec *k = key_find(h->secret);
  if (k && k->used && k->why) {
    snprintf(why, sizeof why, "the bootstrap root refused rank %d: the ranks of its unique id disagreed, so none of "
             "them can init with it: %s", (int)h->rank, k->why);
    SIM_WARN(SIM_INIT, "%s", why);
    free(addr);
    answer_fail(fd, ncclInvalidUsage, why);
    return;
  }
  if (!k || k->used) {
    snprintf(why, sizeof why,
             !k ? "the bootstrap root refused rank %d: its unique id's key is not one this root holds (a changed or "
                  "corrupted id, one from an earlier run, or one that ncclsim made for a split or shrink whose round "
                  "has ended)"
             : k->expired ? "the bootstrap root refused rank %d: the round of its unique id timed out before every "
                            "rank came (NCCLSIM_TIMEOUT), and an id serves one round"
                          : "the bootstrap root refused rank %d: its unique id served a communicator already (an id "
                            "serves one ncclCommInitRank round, as in NCCL)",
             (int)h->rank);
    SIM_WARN(SIM_INIT, "%s", why);
    free(addr);
    answer_fail(fd, ncclInvalidUsage, why);
    return;
  }
  round *r = root.rounds;
  while (r && r->secret != h->secret) r = r->next;
  if (!r) {
    r = calloc(1, sizeof *r);
    if (r) {
      r->nranks = h->nranks;
      r->fd = malloc((size_t)h->nranks * sizeof *r->fd);
      r->entry = calloc((size_t)h->nranks, sizeof *r->entry);
      r->addr = calloc((size_t)h->nranks, sizeof *r->addr);
    }
    if (!r || !r->fd || !r->entry || !r->addr) {
      if (r) free(r->fd), free(r->entry), free(r->addr), free(r);
      free(addr);
      answer_fail(fd, ncclSystemError, "the bootstrap root is out of memory");
      return;
    }
    for (int i = 0; i < h->nranks; i++) r->fd[i] = -1;
    r->secret = h->secret;
    r->deadline = sim_now_ns() + sim_timeout_ns();
    r->next = root.rounds;
    root.rounds = r;
  }
  if (h->nranks != r->nranks) {
    free(addr);
    snprintf(why, sizeof why, "rank %d says nranks=%d, rank(s) before it said %d", (int)h->rank, (int)h->nranks,
             r->nranks);
    round_fail(r, k, fd, (int)h->pid, why);
    return;
  }
  if (h->rank < 0 || h->rank >= r->nranks) { /* sim_init_rank checks it: not an ncclsim rank's hello */
    snprintf(why, sizeof why, "the bootstrap root refused rank %d of %d: no such rank", (int)h->rank, r->nranks);
    SIM_WARN(SIM_INIT, "%s", why);
    free(addr);
    answer_fail(fd, ncclInvalidUsage, why);
    return;
  }
  if (r->fd[h->rank] >= 0) {
    const sim_net_entry *e = &r->entry[h->rank];
    char host[SIM_NET_HOST_NAME];
    memcpy(host, h->host, sizeof host);
    host[sizeof host - 1] = 0;
    free(addr);
    snprintf(why, sizeof why, "rank %d of %d was claimed twice: by process %d on host %s, and by process %d on "
             "host %s", (int)h->rank, r->nranks, (int)e->pid, e->host, (int)h->pid, host);
    round_fail(r, k, fd, (int)h->pid, why);
    return;
  }
  r->fd[h->rank] = fd;
  r->addr[h->rank] = addr;
  r->entry[h->rank] = (sim_net_entry){h->group, h->pid, h->addr_len, h->extra_len, {0}};
  memcpy(r->entry[h->rank].host, h->host, sizeof h->host);
  r->entry[h->rank].host[SIM_NET_HOST_NAME - 1] = 0;
  if (++r->arrived < r->nranks) return;
  round_answer(r);
  key_spend(k);
  round_unlink(r);
  round_free(r);
}

/* Answers every rank of r with `status` and `why`, and ends r and its key. */
static void round_end(round *r, ncclResult_t status, const char *why) {
  for (int i = 0; i < r->nranks; i++)
    if (r->fd[i] >= 0) {
      answer_fail(r->fd[i], status, why);
      r->fd[i] = -1;
    }
  key_rec *k = key_find(r->secret);
  if (k) {
    k->expired = status == ncclTimeout;
    key_spend(k);
  }
  round_unlink(r);
  round_free(r);
}

/* Rounds past their deadline: the ranks in them learn who is missing, and
 * the key is spent. */
static void expire(void) {
  uint64_t now = sim_now_ns();
  for (round *r = root.rounds, *next; r; r = next) {
    next = r->next;
    if (now < r->deadline) continue;
    char why[SIM_NET_WHY];
    int n = snprintf(why, sizeof why, "the bootstrap root waited NCCLSIM_TIMEOUT=%s s for rank(s) [",
                     sim_param_text(SIM_P_TIMEOUT));
    bool first = true;
    for (int i = 0; i < r->nranks && n < (int)sizeof why - 40; i++)
      if (r->fd[i] < 0) {
        n += snprintf(why + n, sizeof why - (size_t)n, first ? "%d" : ",%d", i);
        first = false;
      }
    snprintf(why + n, sizeof why - (size_t)n, "] of %d to init with the unique id", r->nranks);
    SIM_WARN(SIM_INIT, "%s", why);
    round_end(r, ncclTimeout, why);
  }
}

static void *serve(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "ncclsim-boot");
  for (;;) {
    struct pollfd p = {root.lfd, POLLIN, 0};
    int n = poll(&p, 1, 500);
    pthread_mutex_lock(&root.lock);
    expire();
    pthread_mutex_unlock(&root.lock);
    if (n <= 0) continue;
    int fd = accept4(root.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sim_net_hello h;
    uint8_t *addr = NULL;
    uint64_t deadline = sim_now_ns() + 5000000000ull; /* a hello comes whole, at once */
    int e = sim_net_read_all(fd, &h, sizeof h, deadline);
    if (!e && (h.magic != SIM_NET_HELLO_MAGIC || h.nranks < 1 || h.addr_len > SIM_NET_ADDR_MAX ||
                h.extra_len > h.addr_len)) e = EPROTO;
    if (!e && !(addr = malloc(h.addr_len ? h.addr_len : 1))) e = ENOMEM;
    if (!e) e = sim_net_read_all(fd, addr, h.addr_len, deadline);
    if (e) {
      SIM_INFO(SIM_INIT, "bootstrap root: dropped a connection: %s", e == EPROTO ? "not an ncclsim hello" : strerror(e));
      free(addr);
      close(fd);
      continue;
    }
    pthread_mutex_lock(&root.lock);
    on_hello(fd, &h, addr);
    pthread_mutex_unlock(&root.lock);
  }
  return NULL;
}

static ncclResult_t root_start(void) {
  struct sockaddr_storage ss;
  SIM_CHECK(sim_net_pick_addr(&ss, root.ifname, sizeof root.ifname));
  /* Port 0: the kernel picks one; the id carries it. */
  if (ss.ss_family == AF_INET) ((struct sockaddr_in *)&ss)->sin_port = 0;
  else ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  socklen_t sl = ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
  pthread_t t;
  if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 1024) != 0 ||
      getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
    SIM_WARN(SIM_INIT, "bootstrap: cannot listen on %s: %s", root.ifname, strerror(errno));
    if (fd >= 0) close(fd);
    return ncclSystemError;
  }
  root.lfd = fd;
  sim_net_addr_of(&ss, &root.addr);
  if (pthread_create(&t, NULL, serve, NULL) != 0) {
    SIM_WARN(SIM_INIT, "bootstrap: cannot start the root's thread");
    close(fd);
    root.lfd = -1;
    return ncclSystemError;
  }
  pthread_detach(t);
  char text[80];
  sim_net_addr_text(&root.addr, text, sizeof text);
  SIM_INFO(SIM_INIT, "bootstrap root of pid %d listens on %s (%s)", (int)getpid(), text, root.ifname);
  return ncclSuccess;
}

ncclResult_t sim_net_root_open(uint64_t secret, bool once, sim_net_addr *addr) {
  ncclResult_t res = ncclSuccess;
  key_rec *k = malloc(sizeof *k);
  if (!k) return ncclSystemError;
  pthread_mutex_lock(&root.lock);
  if (root.lfd < 0) {
    static bool registered;
    if (!registered) pthread_atfork(NULL, NULL, root_atfork_child), registered = true;
    res = root_start();
  }
  if (res == ncclSuccess) {
    *k = (key_rec){root.keys, secret, false, once, false, NULL};
    root.keys = k;
    *addr = root.addr;
  }
  pthread_mutex_unlock(&root.lock);
  if (res != ncclSuccess) free(k);
  return res;
}

void sim_net_root_release(uint64_t secret) {
  pthread_mutex_lock(&root.lock);
  key_rec *k = key_find(secret);
  if (k && !k->used) {
    round *r = root.rounds;
    while (r && r->secret != secret) r = r->next;
    k->once = true;
    if (r) {
      char why[SIM_NET_WHY];
      snprintf(why, sizeof why, "the bootstrap root ended the round of a unique id that its maker withdrew: the "
               "call that made it (a split or shrink across hosts) failed before that rank could init");
      SIM_WARN(SIM_INIT, "%s", why);
      round_end(r, ncclRemoteError, why);
    } else {
      key_free(k);
    }
  }
  pthread_mutex_unlock(&root.lock);
}

int sim_net_root_keys(int *open) {
  int n = 0, o = 0;
  pthread_mutex_lock(&root.lock);
  for (key_rec *k = root.keys; k; k = k->next) n++, o += !k->used;
  pthread_mutex_unlock(&root.lock);
  if (open) *open = o;
  return n;
}
