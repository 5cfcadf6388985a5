/* sim/cuda/cuda_internal.h — shared by the simulated CUDA runtime's files. */
#ifndef NCCLSIM_CUDA_INTERNAL_H_
#define NCCLSIM_CUDA_INTERNAL_H_

#include "cuda.h"

/* priority within CUDA's stream priority range (props.c): out-of-range
 * priorities are clamped, as CUDA does. */
int sim_stream_priority_clamp(int priority);
/* Records err as the thread's last CUDA error (cudaGetLastError) and
 * returns it; cudaSuccess is returned untouched. */
cudaError_t sim_cuda_error(cudaError_t err);
/* Waits until every op enqueued on s so far has run; returns the stream's
 * sticky error. */
cudaError_t sim_stream_drain(sim_stream *s);
/* Waits for every stream of `device`; with `take`, as a device
 * synchronize, returning and clearing the first of their errors, else
 * leaving them to the next synchronize (stream.c). */
cudaError_t sim_device_drain(int device, bool take);

/* A marker: an op with nothing to run, whose mark() publishes that the
 * stream reached it (an event's completion). mark() runs under the
 * stream's lock, in the step that counts the marker done, and cudaStreamQuery
 * reads the count under that lock: whoever sees the one sees the other,
 * whichever is looked at first. mark() must not take a lock held by anyone
 * enqueueing on a stream. op.release frees the marker, after mark(). */
typedef struct sim_marker {
  sim_op op;
  void (*mark)(struct sim_marker *m);
} sim_marker;
/* Sets m->op.run and enqueues m, as sim_stream_enqueue; the caller sets
 * m->mark, m->op.release and m->op.what. */
cudaError_t sim_stream_enqueue_marker(sim_stream *s, sim_marker *m);

/* Edits of the allocation registry (memory.c), for the room's own files.
 * sim_mem_edit runs fn on the allocation based at `base`, under the
 * registry's write lock; fn may change its size, flags, ipc_opens, owner
 * and freed_on (never base, device, kind or pid) and says what it did:
 * KEEP (nothing), CHANGED, RENEWED (changed, and a new serial: a new
 * allocation at the same address), REMOVE (the entry goes and its memory
 * is freed). Any change expires the threads' cached hits. ABSENT: no
 * allocation is based there (fn not run). fn must not call into the
 * registry. */
typedef enum { SIM_MEM_ABSENT, SIM_MEM_KEEP, SIM_MEM_CHANGED, SIM_MEM_RENEWED, SIM_MEM_REMOVE } sim_mem_edit_result;
sim_mem_edit_result sim_mem_edit(const void *base, sim_mem_edit_result (*fn)(sim_alloc_info *a, void *arg),
                                 void *arg);
/* Whether an allocation overlaps [p, p + bytes) (bytes > 0, no wrap),
 * and one of them in *out (may be NULL). */
bool sim_mem_overlap(const void *p, size_t bytes, sim_alloc_info *out);
/* Runs fn on every allocation of the job, under the read lock. */
void sim_mem_each(void (*fn)(const sim_alloc_info *a, void *arg), void *arg);

/* Registered host memory (host_register.c): the registration containing
 * p, as a SIM_MEM_HOST allocation with SIM_MEM_F_REGISTERED; and the
 * flags cudaHostAlloc gave the allocation based at p. */
bool sim_host_reg_lookup(const void *p, sim_alloc_info *out);
void sim_host_alloc_flags(void *p, unsigned flags);

/* Stream-ordered memory (mempool.c). report_use: the WARN for a use of
 * memory freed in stream order (a, from a lookup, has SIM_MEM_F_FREED),
 * naming the buffer, its free and the use ("what arg"). free_now: cudaFree
 * of memory from a pool, or already freed in stream order (a double free).
 * synced: a synchronize returned; pools release what exceeds their
 * release threshold. */
void sim_mempool_report_use(const sim_alloc_info *a, const void *p, const char *what, const char *arg);
/* freed_on of memory that is freed but no stream freed it: by cudaFree,
 * not yet allocated by its graph's alloc node, freed by a graph's free
 * node (never stream handles). */
#define SIM_FREED_BY_CUDAFREE ((void *)1)
#define SIM_FREED_NOT_ALLOCATED ((void *)2)
#define SIM_FREED_BY_FREE_NODE ((void *)3)
/* Graph memory (graph_mem.c) freed outside its graphs: by cudaFreeAsync on
 * s (hs its handle), or by cudaFree (s NULL). p is the base of an
 * allocation with SIM_MEM_F_GRAPH. */
cudaError_t sim_graph_mem_free(void *p, sim_stream *s, cudaStream_t hs, const char *what);
/* Set while the calling thread adds or sets a graph node (graph_node.c):
 * the memory it names is recorded, not used, and a graph's allocation
 * need not be allocated then. */
extern _Thread_local bool sim_graph_recording;
/* cudaMallocAsync and cudaMallocFromPoolAsync on s, which captures: an
 * alloc node of `size` bytes on `device`. */
cudaError_t sim_graph_mem_capture_alloc(sim_stream *s, void **out, size_t size, int device, const char *what);
/* cudaFreeAsync of graph memory p on s, which captures: a free node. */
cudaError_t sim_graph_mem_capture_free(sim_stream *s, void *p);
cudaError_t sim_mempool_free_now(void *p);
void sim_mempool_synced(void);
/* cudaDeviceReset: the device's default pool is current again. */
void sim_mempool_reset_device(int device);

/* Interprocess events (event.c, for ipc.c). export: the event object and
 * generation an event's handle names (cudaErrorInvalidResourceHandle, with
 * a WARN, for a dead event or one without cudaEventInterprocess). import:
 * a new event of this process that stands for obj while obj is at
 * generation gen (cudaErrorInvalidResourceHandle once it is not). */
cudaError_t sim_event_export(cudaEvent_t e, void **obj, uint64_t *gen);
cudaError_t sim_event_import(cudaEvent_t *out, void *obj, uint64_t gen);

/* Destroys the process's streams on `device`, its default stream aside
 * (stream.c, for cudaDeviceReset). */
void sim_stream_destroy_device(int device);
/* Forgets the peer access `device` enabled (peer.c, for cudaDeviceReset). */
void sim_peer_reset_device(int device);

/* Stream capture (capture.c), for the room's own calls. stream.c keeps
 * each stream's capture (NULL: none), capture.c what it means. */
void *sim_stream_capture(sim_stream *s);
void sim_stream_capture_set(sim_stream *s, void *capture);
/* sim_capture_unsafe is in cuda.h (core/connect.c uses it too). */
/* `call` cannot be made on s, which captures: invalidates the capture;
 * cudaErrorStreamCaptureUnsupported (cudaErrorStreamCaptureInvalidated if
 * it was already), with a WARN saying `why`. */
cudaError_t sim_capture_refuse(sim_stream *s, const char *call, const char *why);
/* cudaStreamDestroy of s, which may capture: CUDA 13 destroys it. A
 * capture begun on s ends without a graph; one s joined is invalidated and
 * s leaves it. */
void sim_capture_stream_gone(sim_stream *s);
/* cudaDeviceSynchronize: the same for every capture with a stream on
 * `device` (cudaSuccess when there is none). */
cudaError_t sim_capture_sync_device(int device);
/* The nodes of the room's calls on a capturing stream s: a 1D copy, a
 * memset, a host function. */
cudaError_t sim_capture_copy(sim_stream *s, void *dst, const void *src, size_t n, enum cudaMemcpyKind kind);
cudaError_t sim_capture_memset(sim_stream *s, void *dst, int value, size_t n);
cudaError_t sim_capture_host(sim_stream *s, cudaHostFn_t fn, void *arg);
/* Events and captures (event.c). record: e recorded on s, which captures
 * (flags: cudaEventRecordExternal makes a node). wait: cudaStreamWaitEvent's
 * part; *done says whether it decided (then its result is the call's):
 * a fork or a join, a wait node, or an error; `recorded`: e was ever
 * recorded outside a capture. check: cudaErrorCapturedEvent for an event
 * last recorded in an active capture (invalidating it), cudaErrorInvalidValue
 * in one that was invalidated or has ended, else cudaSuccess. forget: e was recorded outside a capture, or destroyed. */
cudaError_t sim_capture_event_record(sim_stream *s, cudaEvent_t e, unsigned flags);
cudaError_t sim_capture_event_wait(sim_stream *s, cudaEvent_t e, unsigned flags, bool recorded, bool *done);
cudaError_t sim_capture_event_check(cudaEvent_t e, const char *call);
void sim_capture_event_forget(cudaEvent_t e);
/* Whether e is a live event (event.c). */
bool sim_event_valid(cudaEvent_t e);
/* Set while the thread enqueues a graph launch's nodes (graph_exec.c):
 * the launch counts toward the stream's depth, its nodes' ops do not.
 * sim_graph_launches: the threads doing so now. */
extern _Thread_local bool sim_graph_launching;
extern _Atomic int sim_graph_launches;

#endif
