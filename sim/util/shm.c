/*
 * sim/util/shm.c — ranks as processes: the arena that processes of one
 * fork tree share.
 *
 * With NCCLSIM_PROCESSES=1 (or ncclsimProcessesInit()), the first
 * allocation maps one MAP_SHARED anonymous arena, and every allocation of
 * the simulator, its state and simulated device memory, comes from it. A
 * child forked later maps the same pages at the same address, so pointers,
 * and function pointers (the same image), mean the same thing in every
 * process: threads are the case where nothing is shared, not a second
 * engine. State that used to be a static (the init table, the memory
 * registry, ...) is a shared block (sim_shared). Anonymous shared memory
 * dies with its last process: nothing is left in /dev/shm however a job
 * ends.
 *
 * The allocator: small blocks come from power-of-two classes and go back to
 * their class's free list; large ones (over 64 KiB) are page runs on a
 * free list sorted by address, coalesced with their neighbours and handed
 * back to the kernel (MADV_REMOVE) when freed. One robust, process-shared
 * mutex guards it: a process that dies holding it leaves it usable.
 *
 * Each process that joins a communicator registers its pid; a monitor
 * thread per process watches the others and, when one exits, fails every
 * communicator that has ranks in it (sim_clique_peer_exited), so peers end
 * at once instead of at NCCLSIM_TIMEOUT.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../sim.h"

#define SHM_MAGIC 0x4e43534d53484d31ull /* "NCSMSHM1" */
#define NCLASSES 12                      /* 32 B .. 64 KiB */
#define SMALL_MAX ((size_t)32 << (NCLASSES - 1))
#define PAGE 4096u
#define BLOCK_MAGIC 0x5348u

/* Before every user pointer. */
typedef struct {
  uint64_t start; /* offset of the block's first byte in the arena */
  uint32_t pages; /* a large run's length in pages (0 for a class) */
  uint16_t cls;   /* class, or NCLASSES for a large run */
  uint16_t magic;
} blk_hdr;
_Static_assert(sizeof(blk_hdr) == 16, "the allocator's arithmetic assumes a 16-byte header");

typedef struct run_free {
  uint64_t off, bytes; /* a free page run */
  uint64_t next;       /* offset of the next (higher) free run; 0: none */
} run_free;

typedef struct {
  _Atomic int pid;
  int pad;
} proc_slot;

typedef struct {
  uint64_t magic;
  uint64_t size;
  uint64_t job;    /* random: names the job in unique ids */
  uint64_t anchor; /* where ncclsim's code is in the maker: the same in all */
  pthread_mutex_t lock; /* the allocator and the shared-state table */
  uint64_t brk;         /* first never-used byte */
  uint64_t small_free[NCLASSES];
  uint64_t runs; /* first free run (run_free stored in the run itself) */
  _Atomic uint64_t used; /* bytes handed out, for ncclsim's own accounting */
  void *state[SIM_SHARED_COUNT];
  proc_slot procs[SIM_SHM_MAX_PROCS];
} shm_hdr;

enum { MODE_UNSET = 0, MODE_PRIVATE = 1, MODE_SHARED = 2 };
static _Atomic int mode;
static pthread_mutex_t mode_lock = PTHREAD_MUTEX_INITIALIZER;
static shm_hdr *arena;

/* ---- locks ---- */

void sim_mutex_init(pthread_mutex_t *m) {
  if (atomic_load(&mode) != MODE_SHARED) {
    pthread_mutex_init(m, NULL);
    return;
  }
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
}

/* The simulator's critical sections are a few stores long, and a
 * contended pthread mutex sleeps in the kernel at once: two stream workers
 * meeting in a collective's rendezvous at every call (arrive, then leave)
 * slept on and woke each other through futex calls several times a call
 * (perf: 7 futex calls per 2-rank 8-byte allreduce, all on the rendezvous
 * table's lock). So a few tries first, as glibc's adaptive mutexes do,
 * which robust (process-shared) mutexes cannot be. */
enum { LOCK_TRIES = 32 };

void sim_mutex_lock(pthread_mutex_t *m) {
  int rc = pthread_mutex_trylock(m);
  for (int i = 1; rc == EBUSY && i < LOCK_TRIES; i++) {
    sim_cpu_relax();
    rc = pthread_mutex_trylock(m);
  }
  if (rc == EBUSY) rc = pthread_mutex_lock(m);
  /* The owner died inside: its peers are failed by the monitor, the state
   * behind the lock is what that process left. */
  if (rc == EOWNERDEAD) pthread_mutex_consistent(m);
}

void sim_rwlock_init(pthread_rwlock_t *l) {
  pthread_rwlockattr_t a;
  pthread_rwlockattr_init(&a);
  if (atomic_load(&mode) == MODE_SHARED) pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_rwlock_init(l, &a);
  pthread_rwlockattr_destroy(&a);
}

/* ---- mode ---- */

/* A new arena's header. */
static void header_init(void *p, size_t size) {
  shm_hdr *h = p;
  h->magic = SHM_MAGIC;
  h->size = size;
  h->anchor = (uint64_t)(uintptr_t)&sim_shm_on;
  if (getrandom(&h->job, sizeof h->job, 0) != (ssize_t)sizeof h->job) h->job = sim_now_ns() ^ (uint64_t)getpid();
  h->brk = (sizeof *h + PAGE - 1) & ~(uint64_t)(PAGE - 1);
  pthread_mutexattr_t a; /* as sim_mutex_init does in this mode */
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&h->lock, &a);
  pthread_mutexattr_destroy(&a);
}

/* Maps the arena: the launcher job's (util/job.c), else an anonymous one
 * that later-forked children share. Under mode_lock. */
static ncclResult_t map_arena(void) {
  size_t size = (size_t)sim_param_int(SIM_P_SHM_SIZE);
  if (size < ((size_t)64 << 20)) size = (size_t)64 << 20;
  size = (size + PAGE - 1) & ~(size_t)(PAGE - 1);
  shm_hdr *h;
  if (sim_job_named()) {
    void *p;
    bool created;
    SIM_CHECK(sim_job_attach(size, header_init, &p, &created));
    h = p;
    if (!created && h->anchor != (uint64_t)(uintptr_t)&sim_shm_on) {
      SIM_WARN(SIM_ALLOC, "ranks as processes: ncclsim's code is at %p in this process (pid %d) but at 0x%llx in "
               "the process that made the job's arena: the processes must run one program with address-space "
               "randomisation off (ncclsim re-executes them so; NCCLSIM_REEXEC was set, or personality() failed)",
               (void *)&sim_shm_on, (int)getpid(), (unsigned long long)h->anchor);
      munmap(p, h->size);
      return ncclInvalidUsage;
    }
  } else {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      SIM_WARN(SIM_ALLOC, "ranks as processes: cannot map %zu bytes of shared memory (NCCLSIM_SHM_SIZE): %s", size,
               strerror(errno));
      return ncclSystemError;
    }
    header_init(p, size);
    h = p;
  }
  arena = h;
  atomic_store(&mode, MODE_SHARED);
  SIM_INFO(SIM_ALLOC, "ranks as processes: %llu bytes of shared memory at %p", (unsigned long long)h->size, (void *)h);
  return ncclSuccess;
}

/* Decides the mode at the first allocation: NCCLSIM_PROCESSES. */
static int decide(void) {
  int m = atomic_load_explicit(&mode, memory_order_acquire);
  if (m != MODE_UNSET) return m;
  pthread_mutex_lock(&mode_lock);
  if ((m = atomic_load(&mode)) == MODE_UNSET) {
    const char *v = sim_param_text(SIM_P_PROCESSES);
    bool on = strcmp(v, "0") != 0 && (sim_job_named() || !strcmp(v, "1"));
    if (!on || map_arena() != ncclSuccess) atomic_store(&mode, MODE_PRIVATE);
    m = atomic_load(&mode);
  }
  pthread_mutex_unlock(&mode_lock);
  return m;
}

bool sim_shm_on(void) { return decide() == MODE_SHARED; }

bool sim_shm_already_on(void) { return atomic_load_explicit(&mode, memory_order_acquire) == MODE_SHARED; }

uint64_t sim_shm_job(void) { return sim_shm_on() ? arena->job : 0; }

SIM_EXPORT ncclResult_t ncclsimProcessesInit(void) {
  pthread_mutex_lock(&mode_lock);
  int m = atomic_load(&mode);
  ncclResult_t res = ncclSuccess;
  if (m == MODE_PRIVATE) {
    SIM_WARN(SIM_ALLOC, "ncclsimProcessesInit: ncclsim already keeps state of its own in this process (pid %d); "
             "call it before any other ncclsim or CUDA call, or set NCCLSIM_PROCESSES=1", (int)getpid());
    res = ncclInvalidUsage;
  } else if (m == MODE_UNSET) {
    res = map_arena();
    if (res != ncclSuccess) atomic_store(&mode, MODE_PRIVATE);
  }
  pthread_mutex_unlock(&mode_lock);
  return res;
}

/* ---- the allocator ---- */

#define AT(off) ((char *)arena + (off))
#define OFF(p) ((uint64_t)((char *)(p) - (char *)arena))

static int class_of(size_t bytes) {
  int c = 0;
  while (((size_t)32 << c) < bytes) c++;
  return c;
}

/* A page run of at least `bytes` (a multiple of PAGE): first fit on the
 * free list, else from brk. 0 when the arena is full. Under lock. */
static uint64_t run_get(uint64_t bytes) {
  for (uint64_t *pp = &arena->runs; *pp;) {
    run_free *r = (run_free *)AT(*pp);
    if (r->bytes >= bytes) {
      uint64_t off = r->off;
      if (r->bytes == bytes) {
        *pp = r->next;
      } else { /* keep the tail free */
        run_free tail = {off + bytes, r->bytes - bytes, r->next};
        *(run_free *)AT(tail.off) = tail;
        *pp = tail.off;
      }
      return off;
    }
    pp = &r->next;
  }
  if (arena->brk + bytes > arena->size) return 0;
  uint64_t off = arena->brk;
  arena->brk += bytes;
  return off;
}

/* Gives a page run back: to the kernel, then to the sorted free list,
 * merged with the runs it touches. Under lock. */
static void run_put(uint64_t off, uint64_t bytes) {
  if (bytes > PAGE) madvise(AT(off + PAGE), bytes - PAGE, MADV_REMOVE); /* the first page keeps the link */
  uint64_t *pp = &arena->runs, prev = 0;
  while (*pp && *pp < off) {
    prev = *pp;
    pp = &((run_free *)AT(*pp))->next;
  }
  run_free me = {off, bytes, *pp};
  if (me.next && off + bytes == me.next) { /* merge the next */
    run_free *n = (run_free *)AT(me.next);
    me.bytes += n->bytes;
    me.next = n->next;
  }
  if (prev) {
    run_free *p = (run_free *)AT(prev);
    if (p->off + p->bytes == off) { /* merge into the previous */
      p->bytes += me.bytes;
      p->next = me.next;
      return;
    }
  }
  *(run_free *)AT(off) = me;
  *pp = off;
}

/* Each thread keeps a few free blocks of the small classes, so that the
 * steady churn of tasks and ops (one of each per operation) does not take
 * the arena's lock, which every process and stream worker shares. */
enum { CACHE_CLASSES = 7 /* 32 B .. 2 KiB */, CACHE_MAX = 32, CACHE_BATCH = 8 };
typedef struct {
  uint64_t blk[CACHE_CLASSES][CACHE_MAX];
  int n[CACHE_CLASSES];
  bool keyed;
} block_cache;
static _Thread_local block_cache cache_of_thread;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

/* Gives n cached blocks of class cls back to the arena. Takes the lock. */
static void cache_spill(block_cache *c, int cls, int n) {
  sim_mutex_lock(&arena->lock);
  while (n-- > 0 && c->n[cls] > 0) {
    uint64_t b = c->blk[cls][--c->n[cls]];
    *(uint64_t *)AT(b) = arena->small_free[cls];
    arena->small_free[cls] = b;
  }
  pthread_mutex_unlock(&arena->lock);
}

static void cache_flush(void *p) {
  block_cache *c = p;
  for (int k = 0; k < CACHE_CLASSES; k++) cache_spill(c, k, CACHE_MAX);
}

static void cache_key_make(void) { pthread_key_create(&cache_key, cache_flush); }

/* The calling thread's cache, registered so that its exit returns it. */
static block_cache *thread_cache(void) {
  block_cache *c = &cache_of_thread;
  if (!c->keyed) {
    pthread_once(&cache_once, cache_key_make);
    pthread_setspecific(cache_key, c);
    c->keyed = true;
  }
  return c;
}

void *sim_shm_alloc(size_t align, size_t size) {
  if (align < 16) align = 16;
  if (size == 0) size = 1;
  if (size > arena->size || align > arena->size || size / PAGE >= UINT32_MAX) return NULL;
  size_t need = sizeof(blk_hdr) + size + (align > 16 ? align : 0);
  uint64_t start = 0, bytes;
  uint32_t cls = need <= SMALL_MAX ? (uint32_t)class_of(need) : NCLASSES;
  if (cls < CACHE_CLASSES) {
    block_cache *c = thread_cache();
    if (c->n[cls] > 0) {
      start = c->blk[cls][--c->n[cls]];
      bytes = (uint64_t)32 << cls;
      goto found;
    }
  }
  sim_mutex_lock(&arena->lock);
  if (cls < NCLASSES) {
    bytes = (uint64_t)32 << cls;
    if ((start = arena->small_free[cls]) != 0) {
      arena->small_free[cls] = *(uint64_t *)AT(start);
    } else if (bytes < PAGE) { /* carve a page into blocks of this class */
      uint64_t page = run_get(PAGE);
      if (page) {
        for (uint64_t b = page + bytes; b + bytes <= page + PAGE; b += bytes) {
          *(uint64_t *)AT(b) = arena->small_free[cls];
          arena->small_free[cls] = b;
        }
        start = page;
      }
    } else {
      start = run_get(bytes);
    }
  } else {
    bytes = (need + PAGE - 1) & ~(uint64_t)(PAGE - 1);
    start = run_get(bytes);
  }
  if (start && cls < CACHE_CLASSES) { /* a few more for this thread's cache */
    block_cache *c = thread_cache();
    while (c->n[cls] < CACHE_BATCH && arena->small_free[cls]) {
      uint64_t b = arena->small_free[cls];
      arena->small_free[cls] = *(uint64_t *)AT(b);
      c->blk[cls][c->n[cls]++] = b;
    }
  }
  pthread_mutex_unlock(&arena->lock);
found:
  if (start) atomic_fetch_add_explicit(&arena->used, bytes, memory_order_relaxed);
  if (!start) {
    SIM_WARN(SIM_ALLOC, "ranks as processes: the shared arena (NCCLSIM_SHM_SIZE=%s) has no room for %zu more bytes",
             sim_param_text(SIM_P_SHM_SIZE), size);
    return NULL;
  }
  uintptr_t user = ((uintptr_t)AT(start) + sizeof(blk_hdr) + align - 1) & ~(uintptr_t)(align - 1);
  blk_hdr *h = (blk_hdr *)user - 1;
  h->start = start;
  h->pages = cls == NCLASSES ? (uint32_t)(bytes / PAGE) : 0;
  h->cls = (uint16_t)cls;
  h->magic = BLOCK_MAGIC;
  return (void *)user;
}

size_t sim_shm_usable(const void *p) {
  const blk_hdr *h = (const blk_hdr *)p - 1;
  uint64_t bytes = h->cls == NCLASSES ? (uint64_t)h->pages * PAGE : (uint64_t)32 << h->cls;
  return (size_t)(h->start + bytes - OFF(p));
}

void sim_shm_free(void *p) {
  blk_hdr *h = (blk_hdr *)p - 1;
  if (h->magic != BLOCK_MAGIC) {
    SIM_WARN(SIM_ALLOC, "ranks as processes: free of %p, which is not a live block of the shared arena", p);
    return;
  }
  h->magic = 0;
  uint64_t start = h->start;
  uint32_t cls = h->cls;
  uint64_t bytes = cls == NCLASSES ? (uint64_t)h->pages * PAGE : (uint64_t)32 << cls;
  atomic_fetch_sub_explicit(&arena->used, bytes, memory_order_relaxed);
#if SIM_TSAN
  /* ThreadSanitizer sees each process alone: a block that another process
   * freed and this one reuses looks like a race with this process's last
   * use of it. These builds do not reuse blocks, so it never sees one. */
  if (arena->procs[1].pid != 0) return;
#endif
  if (cls < CACHE_CLASSES) {
    block_cache *c = thread_cache();
    if (c->n[cls] == CACHE_MAX) cache_spill(c, (int)cls, CACHE_MAX / 2);
    c->blk[cls][c->n[cls]++] = start;
    return;
  }
  sim_mutex_lock(&arena->lock);
  if (cls < NCLASSES) { /* every class, page-sized ones too: reused by it, never split */
    *(uint64_t *)AT(start) = arena->small_free[cls];
    arena->small_free[cls] = start;
  } else {
    run_put(start, bytes);
  }
  pthread_mutex_unlock(&arena->lock);
}

bool sim_shm_contains(const void *p) {
  return arena && (const char *)p >= (const char *)arena && (const char *)p < (const char *)arena + arena->size;
}

void sim_shm_stats(size_t *used, size_t *size) {
  *used = *size = 0;
  if (!sim_shm_on()) return;
  *used = atomic_load(&arena->used);
  *size = arena->size;
}

/* ---- shared state ---- */

static void *_Atomic cache[SIM_SHARED_COUNT];

static void *publish(sim_shared_id id, void *s);

void *sim_shared(sim_shared_id id, size_t size, void (*init)(void *)) {
  static void *priv[SIM_SHARED_COUNT];
  static pthread_mutex_t priv_lock = PTHREAD_MUTEX_INITIALIZER;
  void *s = atomic_load_explicit(&cache[id], memory_order_acquire);
  if (s) return s;
  if (!sim_shm_on()) {
    pthread_mutex_lock(&priv_lock);
    if (!(s = priv[id]) && (s = priv[id] = calloc(1, size)) != NULL && init) init(s);
    pthread_mutex_unlock(&priv_lock);
    return publish(id, s);
  }
  sim_mutex_lock(&arena->lock);
  s = arena->state[id];
  pthread_mutex_unlock(&arena->lock);
  if (s) return publish(id, s);
  /* Allocate outside the lock (the allocator takes it), then publish; a
   * racing process may win, and the loser frees its copy. */
  void *mine = sim_shm_alloc(64, size);
  if (!mine) return NULL;
  memset(mine, 0, size);
  if (init) init(mine);
  sim_mutex_lock(&arena->lock);
  if (!(s = arena->state[id])) s = arena->state[id] = mine;
  pthread_mutex_unlock(&arena->lock);
  if (s != mine) sim_shm_free(mine);
  return publish(id, s);
}

/* This process's pointer to each block, once made (a fork keeps it: the
 * arena is at the same address in the child). */
static void *publish(sim_shared_id id, void *s) {
  if (s) atomic_store_explicit(&cache[id], s, memory_order_release);
  return s;
}

/* ---- processes ---- */

static _Atomic int registered;
static void (*_Atomic tell_exited)(int pid); /* sim_proc_register's `exited` */

/* What a process's death takes back: its share of the busy workers, and
 * the communicators it had ranks in. */
static void exited(int pid) {
  sim_workers_gone(pid);
  void (*tell)(int pid) = atomic_load(&tell_exited);
  if (tell) tell(pid);
}

static void *monitor(void *arg) {
  (void)arg;
  int fds[SIM_SHM_MAX_PROCS], pids[SIM_SHM_MAX_PROCS];
  for (int i = 0; i < SIM_SHM_MAX_PROCS; i++) fds[i] = -1, pids[i] = 0;
  int self = (int)getpid();
  for (;;) {
    struct pollfd pfd[SIM_SHM_MAX_PROCS];
    int idx[SIM_SHM_MAX_PROCS], n = 0;
    for (int i = 0; i < SIM_SHM_MAX_PROCS; i++) {
      int pid = atomic_load(&arena->procs[i].pid);
      if (pid != pids[i]) { /* a new process in this slot */
        if (fds[i] >= 0) close(fds[i]);
        fds[i] = -1;
        pids[i] = pid;
        if (pid > 0 && pid != self) {
          fds[i] = (int)syscall(SYS_pidfd_open, pid, 0);
          if (fds[i] < 0 && errno == ESRCH) exited(pid);
        }
      }
      if (fds[i] >= 0) {
        pfd[n].fd = fds[i];
        pfd[n].events = POLLIN;
        idx[n++] = i;
      }
    }
    int k = poll(pfd, (nfds_t)n, 50);
    for (int j = 0; k > 0 && j < n; j++)
      if (pfd[j].revents) {
        int i = idx[j];
        close(fds[i]);
        fds[i] = -1;
        /* Leave pids[i]: the slot is cleared by whoever reuses it. */
        SIM_INFO(SIM_INIT, "ranks as processes: process %d exited", pids[i]);
        exited(pids[i]);
        int expect = pids[i];
        atomic_compare_exchange_strong(&arena->procs[i].pid, &expect, -pids[i]);
        pids[i] = -pids[i];
      }
  }
  return NULL;
}

void sim_proc_register(void (*exited_hook)(int pid)) {
  if (exited_hook) atomic_store(&tell_exited, exited_hook);
  if (!sim_shm_on() || atomic_exchange(&registered, 1)) return;
  int self = (int)getpid();
  for (int i = 0; i < SIM_SHM_MAX_PROCS; i++) {
    int expect = 0;
    if (atomic_compare_exchange_strong(&arena->procs[i].pid, &expect, self)) break;
  }
  pthread_t t;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&a, 256 * 1024);
  if (pthread_create(&t, &a, monitor, NULL) != 0)
    SIM_WARN(SIM_INIT, "ranks as processes: cannot start the thread that watches peer processes; a dead peer "
             "is noticed only at NCCLSIM_TIMEOUT");
  pthread_attr_destroy(&a);
}

/* A forked child is a new process: it registers anew (and starts its own
 * monitor) at its first communicator. */
static void child_after_fork(void) {
  atomic_store(&registered, 0);
  /* The forking thread's cached blocks are its parent's: drop the copies. */
  memset(cache_of_thread.blk, 0, sizeof cache_of_thread.blk);
  memset(cache_of_thread.n, 0, sizeof cache_of_thread.n);
}

__attribute__((constructor)) static void shm_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }
