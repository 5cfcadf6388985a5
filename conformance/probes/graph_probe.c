/* What CUDA 13 (and NCCL, with two GPUs) answers where its documentation
 * is silent about stream capture and graphs: each line "name: answer".
 * ncclsim's answers are in docs/ncclsim.md ("Graphs", Assumed); run this
 * on a GPU and on ncclsim and compare the two outputs line by line.
 *
 *   graph_probe [nccl]     (nccl: also the NCCL lines; needs 2 GPUs)
 *   graph_probe nccl-depth NGPUS OPS   (only the launches of an NCCL graph
 *                          of OPS allreduces that a blocked stream takes)
 *
 * Build (real): cc graph_probe.c -I$CUDA/include -I$NCCL/include -L$CUDA/lib64
 *               -L$NCCL/lib -lcudart -lnccl -lpthread -o graph_probe
 *       (sim):  cc graph_probe.c $(pkg-config --cflags --libs ncclsim) -lpthread
 *
 * The depth lines block a stream behind a host function that waits until
 * a watchdog thread releases it 3 s later, and count the graph launches
 * that went in before the host thread blocked (a launch that returns only
 * after the release is the one that blocked). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define SAY(name, err) printf("%s: %s\n", (name), cudaGetErrorName(err))

static cudaStream_t mk(void) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  return s;
}

static const char *status_name(cudaStream_t s) {
  enum cudaStreamCaptureStatus st;
  if (cudaStreamIsCapturing(s, &st) != cudaSuccess) return "error";
  return st == cudaStreamCaptureStatusNone ? "none" : st == cudaStreamCaptureStatusActive ? "active" : "invalidated";
}

/* Ends a capture on s, saying what it returned and whether a graph came. */
static void end(const char *name, cudaStream_t s) {
  cudaGraph_t g = NULL;
  cudaError_t e = cudaStreamEndCapture(s, &g);
  printf("%s: end %s, graph %s, then %s\n", name, cudaGetErrorName(e), g ? "yes" : "no", status_name(s));
  if (g) cudaGraphDestroy(g);
  cudaGetLastError();
}

static size_t nodes(cudaGraph_t g) {
  size_t n = 0;
  cudaGraphGetNodes(g, NULL, &n);
  return n;
}

/* A call in a global capture of the calling thread. */
static void in_capture(const char *name, int which, enum cudaStreamCaptureMode mode) {
  cudaStream_t s = mk();
  void *p = NULL, *h = NULL;
  static char reg[1 << 16];
  cudaGraph_t eg = NULL;
  cudaGraphExec_t ex = NULL;
  if (which >= 9) cudaGraphCreate(&eg, 0);
  if (which == 10) cudaGraphInstantiate(&ex, eg, 0);
  if (which == 2) cudaMalloc(&p, 64);
  if (which == 4) cudaMallocHost(&h, 64);
  if (which == 6) cudaHostRegister(reg, sizeof reg, 0);
  cudaStreamBeginCapture(s, mode);
  cudaError_t e;
  switch (which) {
  case 0: e = cudaStreamQuery(s); break;
  case 1: e = cudaDeviceSynchronize(); break;
  case 2: e = cudaFree(p); break;
  case 3: e = cudaMallocHost(&h, 64); break;
  case 4: e = cudaFreeHost(h); break;
  case 5: e = cudaHostRegister(reg, sizeof reg, 0); break;
  case 6: e = cudaHostUnregister(reg); break;
  case 7: e = cudaMemset(p = NULL, 0, 0); break;
  case 8: e = cudaStreamDestroy(s); break;
  case 9: e = cudaGraphInstantiate(&ex, eg, 0); break;
  default: e = cudaGraphExecDestroy(ex); ex = NULL; break;
  }
  cudaGetLastError();
  if (which == 8 && e == cudaSuccess) {
    /* The stream is gone: asking it anything would read freed memory. */
    printf("%s: %s, the stream destroyed\n", name, cudaGetErrorName(e));
    return;
  }
  printf("%s: %s, then %s\n", name, cudaGetErrorName(e), status_name(s));
  end(name, s);
  cudaGetLastError();
  if (which == 2) cudaFree(p);
  if (which == 3 || which == 4) cudaFreeHost(h);
  if (which == 5 || which == 6) cudaHostUnregister(reg);
  if (ex) cudaGraphExecDestroy(ex);
  if (eg) cudaGraphDestroy(eg);
  cudaStreamDestroy(s);
}

/* ---- another thread ---- */
typedef struct {
  int what; /* 0: cudaMalloc, 1: end the capture on s */
  enum cudaStreamCaptureMode mode;
  cudaStream_t s;
  cudaError_t err;
} other;

static void *other_main(void *arg) {
  other *o = arg;
  enum cudaStreamCaptureMode m = o->mode;
  cudaThreadExchangeStreamCaptureMode(&m);
  if (o->what == 0) {
    void *p = NULL;
    o->err = cudaMalloc(&p, 64);
    if (p) cudaFree(p);
  } else {
    cudaGraph_t g = NULL;
    o->err = cudaStreamEndCapture(o->s, &g);
    if (g) cudaGraphDestroy(g);
  }
  return NULL;
}

static cudaError_t elsewhere(int what, enum cudaStreamCaptureMode mode, cudaStream_t s) {
  other o = {what, mode, s, cudaErrorUnknown};
  pthread_t t;
  pthread_create(&t, NULL, other_main, &o);
  pthread_join(t, NULL);
  return o.err;
}

static void threads(void) {
  static const char *mn[] = {"global", "threadlocal", "relaxed"};
  for (int cm = 0; cm < 3; cm++)
    for (int tm = 0; tm < 3; tm++) {
      cudaStream_t s = mk();
      cudaStreamBeginCapture(s, (enum cudaStreamCaptureMode)cm);
      char name[96];
      snprintf(name, sizeof name, "cudaMalloc by another thread (its mode %s) during a %s capture", mn[tm], mn[cm]);
      cudaError_t e = elsewhere(0, (enum cudaStreamCaptureMode)tm, s);
      printf("%s: %s, then %s\n", name, cudaGetErrorName(e), status_name(s));
      end(name, s);
      cudaStreamDestroy(s);
    }
  for (int cm = 0; cm < 3; cm++) {
    cudaStream_t s = mk();
    cudaStreamBeginCapture(s, (enum cudaStreamCaptureMode)cm);
    char name[96];
    snprintf(name, sizeof name, "cudaStreamEndCapture by another thread, %s capture", mn[cm]);
    cudaError_t e = elsewhere(1, cudaStreamCaptureModeGlobal, s);
    printf("%s: %s, then %s\n", name, cudaGetErrorName(e), status_name(s));
    if (strcmp(status_name(s), "none")) end(name, s);
    cudaStreamDestroy(s);
  }
}

/* ---- events, forks and joins ---- */
static void events(void) {
  cudaStream_t a = mk(), b = mk(), c = mk();
  cudaEvent_t e, f;
  cudaEventCreate(&e);
  cudaEventCreate(&f);
  void *d;
  cudaMalloc(&d, 256);

  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  cudaEventRecord(e, a);
  cudaStreamWaitEvent(b, e, 0);
  cudaMemsetAsync(d, 0, 64, b);
  cudaMemsetAsync(d, 0, 64, a);
  cudaGraph_t g = NULL;
  cudaError_t r = cudaStreamEndCapture(a, &g);
  printf("unjoined fork: end %s, graph %s, origin %s, fork %s\n", cudaGetErrorName(r), g ? "yes" : "no",
         status_name(a), status_name(b));
  if (strcmp(status_name(b), "none")) end("unjoined fork, the fork's own end", b);
  cudaGetLastError();

  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  cudaEventRecord(e, a);
  cudaStreamWaitEvent(b, e, 0);
  r = cudaStreamEndCapture(b, &g);
  printf("end on the forked stream: %s, origin %s\n", cudaGetErrorName(r), status_name(a));
  end("end on the forked stream, then on the origin", a);

  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  cudaEventRecord(e, a);
  SAY("cudaEventQuery of an event recorded in the capture", cudaEventQuery(e));
  printf("  then: %s\n", status_name(a));
  SAY("cudaEventSynchronize of it", cudaEventSynchronize(e));
  end("captured event queried", a);
  SAY("cudaEventQuery of an event recorded in an ended capture", cudaEventQuery(e));
  SAY("cudaStreamWaitEvent (idle stream) on an event recorded in an ended capture", cudaStreamWaitEvent(c, e, 0));
  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  SAY("cudaStreamWaitEvent (capturing) on an event recorded in an ended capture", cudaStreamWaitEvent(a, e, 0));
  end("wait on an ended capture's event", a);
  cudaEventRecord(e, c);
  cudaStreamSynchronize(c);

  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  SAY("capture waits (flags 0) for an event recorded outside", cudaStreamWaitEvent(a, e, 0));
  printf("  then: %s\n", status_name(a));
  end("wait outside", a);
  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  SAY("capture waits for a never-recorded event", cudaStreamWaitEvent(a, f, 0));
  end("never-recorded wait", a);
  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  SAY("capture waits with cudaEventWaitExternal", cudaStreamWaitEvent(a, e, cudaEventWaitExternal));
  r = cudaStreamEndCapture(a, &g);
  if (g) {
    cudaGraphNode_t n;
    size_t k = 1;
    enum cudaGraphNodeType t = cudaGraphNodeTypeCount;
    cudaGraphGetNodes(g, &n, &k);
    if (k) cudaGraphNodeGetType(n, &t);
    printf("  its graph: %zu node(s), type %d\n", nodes(g), (int)t);
    cudaGraphDestroy(g);
  }

  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  cudaStreamBeginCapture(b, cudaStreamCaptureModeGlobal);
  cudaEventRecord(f, a);
  SAY("a stream of one capture waits for an event of another", cudaStreamWaitEvent(b, f, 0));
  printf("  then: %s and %s\n", status_name(a), status_name(b));
  end("merge, first", a);
  end("merge, second", b);

  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  cudaEventRecord(f, a);
  cudaStreamSynchronize(a);
  SAY("an idle stream waits for an event of an invalidated capture", cudaStreamWaitEvent(c, f, 0));
  end("invalidated capture's event", a);
  cudaEventRecord(f, c);
  cudaStreamSynchronize(c);
  cudaGetLastError();
  cudaFree(d);
  cudaEventDestroy(e);
  cudaEventDestroy(f);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
  cudaStreamDestroy(c);
}

/* ---- what a capture records ---- */
static void records(void) {
  cudaStream_t s = mk();
  void *d, *p = NULL;
  cudaMalloc(&d, 256);
  cudaGraph_t g = NULL;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  SAY("cudaMemcpyAsync of 0 bytes in a capture", cudaMemcpyAsync(d, d, 0, cudaMemcpyDeviceToDevice, s));
  SAY("cudaMemsetAsync of 0 bytes in a capture", cudaMemsetAsync(d, 0, 0, s));
  cudaStreamEndCapture(s, &g);
  printf("  its graph: %zu node(s)\n", g ? nodes(g) : 0);
  if (g) cudaGraphDestroy(g);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  SAY("cudaMallocAsync in a relaxed capture", cudaMallocAsync(&p, 256, s));
  if (p) SAY("cudaFreeAsync of it", cudaFreeAsync(p, s));
  g = NULL;
  SAY("  end", cudaStreamEndCapture(s, &g));
  printf("  its graph: %zu node(s)\n", g ? nodes(g) : 0);
  cudaGraphExec_t x;
  if (g && cudaGraphInstantiate(&x, g, 0) == cudaSuccess) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    SAY("cudaGraphLaunch on a capturing stream", cudaGraphLaunch(x, s));
    cudaGraph_t g2 = NULL;
    SAY("  end", cudaStreamEndCapture(s, &g2));
    if (g2) {
      cudaGraphNode_t n;
      size_t k = 1;
      enum cudaGraphNodeType t = cudaGraphNodeTypeCount;
      cudaGraphGetNodes(g2, &n, &k);
      if (k) cudaGraphNodeGetType(n, &t);
      printf("  its graph: %zu node(s), type %d\n", nodes(g2), (int)t);
      cudaGraphDestroy(g2);
    }
    cudaGraphExecDestroy(x);
  }
  if (g) cudaGraphDestroy(g);
  SAY("cudaStreamBeginCapture on stream 0 (legacy)", cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal));
  cudaGetLastError();
  cudaGraph_t e;
  cudaGraphCreate(&e, 0);
  cudaGraphNode_t a, b, n1;
  cudaGraphAddEmptyNode(&a, e, NULL, 0);
  cudaGraphAddEmptyNode(&b, e, &a, 1);
  SAY("cudaGraphAddDependencies of an edge that exists", cudaGraphAddDependencies(e, &a, &b, NULL, 1));
  SAY("cudaGraphAddDependencies of a node to itself", cudaGraphAddDependencies(e, &a, &a, NULL, 1));
  SAY("cudaGraphAddDependencies making a cycle", cudaGraphAddDependencies(e, &b, &a, NULL, 1));
  SAY("  cudaGraphInstantiate of the cycle", cudaGraphInstantiate(&x, e, 0));
  SAY("cudaGraphAddMemcpyNode1D of 0 bytes", cudaGraphAddMemcpyNode1D(&n1, e, NULL, 0, d, d, 0, cudaMemcpyDeviceToDevice));
  SAY("cudaGraphDebugDotPrint to a directory that does not exist", cudaGraphDebugDotPrint(e, "/nonexistent/g.dot", 0));
  SAY("cudaGraphNodeSetEnabled on an empty node", cudaGraphNodeSetEnabled(NULL, a, 0));
  cudaGraphDestroy(e);
  cudaGetLastError();
  cudaFree(d);
  cudaStreamDestroy(s);
}

/* ---- the stream's depth and graph launches ---- */
static _Atomic int open_gate, at_gate;
static void gate(void *arg) {
  (void)arg;
  atomic_store(&at_gate, 1);
  while (!atomic_load(&open_gate)) usleep(1000);
}

/* Blocks s behind gate(), returning once gate() runs. */
static void close_gate(cudaStream_t s) {
  atomic_store(&open_gate, 0);
  atomic_store(&at_gate, 0);
  cudaLaunchHostFunc(s, gate, NULL);
  while (!atomic_load(&at_gate)) sched_yield();
}
static void *watchdog(void *arg) {
  (void)arg;
  sleep(3);
  atomic_store(&open_gate, 1);
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Graph launches of an `n`-node graph of memsets that go in behind a
 * blocked stream. */
static void depth(int n) {
  cudaStream_t s = mk();
  void *d;
  cudaMalloc(&d, 256);
  cudaGraph_t g;
  cudaGraphExec_t x;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < n; i++) cudaMemsetAsync(d, i, 64, s);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&x, g, 0);
  close_gate(s);
  pthread_t w;
  pthread_create(&w, NULL, watchdog, NULL);
  double t0 = now();
  int in = 0;
  for (; in < 5000; in++) {
    cudaGraphLaunch(x, s);
    if (now() - t0 > 2.5) break; /* this launch blocked until the release */
  }
  pthread_join(w, NULL);
  cudaStreamSynchronize(s);
  printf("graph launches of %d memset node(s) that went in behind a blocked stream: %d%s\n", n, in,
         in == 5000 ? " (no block seen)" : "");
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  cudaFree(d);
  cudaStreamDestroy(s);
}

/* Launches of each of n ranks' graphs x (rank r's on s[r]) that go in
 * while rank 0's stream is blocked behind a host function, one thread
 * launching rank 0's, then rank 1's... until the host blocks (the other
 * ranks' operations wait for rank 0's, so every stream fills). */
static int nccl_launches_behind_gate(cudaGraphExec_t *x, cudaStream_t *s, int n) {
  cudaSetDevice(0);
  close_gate(s[0]);
  pthread_t w;
  pthread_create(&w, NULL, watchdog, NULL);
  double t0 = now();
  int in = 0;
  for (; in < 5000; in++) {
    for (int r = 0; r < n; r++) cudaGraphLaunch(x[r], s[r]);
    if (now() - t0 > 2.5) break;
  }
  pthread_join(w, NULL);
  for (int r = 0; r < n; r++) cudaStreamSynchronize(s[r]);
  return in;
}

static void nccl_lines(void) {
  int ndev = 0;
  cudaGetDeviceCount(&ndev);
  if (ndev < 2) {
    printf("nccl: needs 2 GPUs\n");
    return;
  }
  ncclComm_t comms[2];
  int devs[2] = {0, 1};
  if (ncclCommInitAll(comms, 2, devs) != ncclSuccess) {
    printf("nccl: ncclCommInitAll failed\n");
    return;
  }
  cudaStream_t s[2];
  float *d[2];
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    s[r] = mk();
    cudaMalloc((void **)&d[r], 1024);
  }
  /* NCCL connects at a communicator's first operation, and enabling peer
   * access there is forbidden in a global or thread-local capture: warm up
   * first, as nccl-tests does before -G. */
  ncclGroupStart();
  for (int r = 0; r < 2; r++) ncclAllReduce(d[r], d[r], 256, ncclFloat32, ncclSum, comms[r], s[r]);
  ncclResult_t warm = ncclGroupEnd();
  for (int r = 0; r < 2; r++) cudaStreamSynchronize(s[r]);
  printf("nccl: the warm-up allreduce: %s\n", ncclGetErrorString(warm));
  cudaGraph_t g[2] = {NULL, NULL};
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    cudaStreamBeginCapture(s[r], cudaStreamCaptureModeThreadLocal);
  }
  ncclGroupStart();
  for (int r = 0; r < 2; r++) ncclAllReduce(d[r], d[r], 256, ncclFloat32, ncclSum, comms[r], s[r]);
  ncclResult_t c = ncclGroupEnd();
  cudaError_t ends[2];
  for (int r = 0; r < 2; r++) ends[r] = cudaStreamEndCapture(s[r], &g[r]);
  printf("nccl: the captured allreduce: %s, ends %s and %s\n", ncclGetErrorString(c), cudaGetErrorName(ends[0]),
         cudaGetErrorName(ends[1]));
  if (!g[0] || !g[1]) {
    printf("nccl: no graphs, nothing more to measure\n");
    ncclCommAbort(comms[0]);
    ncclCommAbort(comms[1]);
    return;
  }
  size_t n = nodes(g[0]);
  cudaGraphNode_t *v = calloc(n, sizeof *v);
  cudaGraphGetNodes(g[0], v, &n);
  printf("nccl: a captured allreduce is %zu node(s):", n);
  for (size_t i = 0; i < n; i++) {
    enum cudaGraphNodeType t;
    cudaGraphNodeGetType(v[i], &t);
    printf(" %d", (int)t);
  }
  printf("\n");
  free(v);
  cudaGraphDebugDotPrint(g[0], "graph_probe_allreduce.dot", cudaGraphDebugDotFlagsVerbose);
  printf("nccl: its DOT file: graph_probe_allreduce.dot\n");
  cudaGraphExec_t x[2];
  for (int r = 0; r < 2; r++)
    if (cudaGraphInstantiate(&x[r], g[r], 0) != cudaSuccess) {
      printf("nccl: cudaGraphInstantiate of rank %d's graph failed\n", r);
      return;
    }
  int in = nccl_launches_behind_gate(x, s, 2);
  printf("nccl: launches of each rank's one-allreduce graph behind a blocked stream: %d%s\n", in,
         in == 5000 ? " (no block seen)" : "");
  for (int r = 0; r < 2; r++) {
    cudaGraphExecDestroy(x[r]);
    cudaGraphDestroy(g[r]);
    cudaFree(d[r]);
    cudaStreamDestroy(s[r]);
  }
  ncclCommAbort(comms[0]);
  ncclCommAbort(comms[1]);
}

/* NCCL graph launches behind a blocked stream, by the graph's size: n
 * GPUs driven by this thread, each rank's graph `ops` allreduces captured
 * in one group each (after a warm-up), rank 0's stream blocked by a host
 * function; the launches of every rank's graph that went in before the
 * host thread blocked. */
static void nccl_depth(int n, int ops) {
  int ndev = 0;
  cudaGetDeviceCount(&ndev);
  if (n < 1 || n > 8 || ndev < n || ops < 1) {
    printf("nccl depth: %d GPU(s) asked for, %d here\n", n, ndev);
    return;
  }
  ncclComm_t comms[8];
  int devs[8];
  for (int r = 0; r < n; r++) devs[r] = r;
  if (ncclCommInitAll(comms, n, devs) != ncclSuccess) {
    printf("nccl depth: ncclCommInitAll failed\n");
    return;
  }
  cudaStream_t s[8];
  float *d[8];
  for (int r = 0; r < n; r++) {
    cudaSetDevice(r);
    s[r] = mk();
    cudaMalloc((void **)&d[r], 1024);
  }
  ncclResult_t warm, cap;
  for (int k = 0; k < 2; k++) { /* a warm-up, then the capture */
    if (k)
      for (int r = 0; r < n; r++) {
        cudaSetDevice(r);
        cudaStreamBeginCapture(s[r], cudaStreamCaptureModeThreadLocal);
      }
    ncclResult_t res = ncclSuccess;
    for (int i = 0; i < ops && res == ncclSuccess; i++) {
      ncclGroupStart();
      for (int r = 0; r < n; r++) ncclAllReduce(d[r], d[r], 256, ncclFloat32, ncclSum, comms[r], s[r]);
      res = ncclGroupEnd();
    }
    if (k) cap = res;
    else warm = res;
    if (!k)
      for (int r = 0; r < n; r++) cudaStreamSynchronize(s[r]);
  }
  cudaGraph_t g[8] = {NULL};
  cudaGraphExec_t x[8] = {NULL};
  int ok = warm == ncclSuccess && cap == ncclSuccess;
  cudaError_t ends[8], inst[8];
  for (int r = 0; r < n; r++) ends[r] = cudaStreamEndCapture(s[r], &g[r]);
  for (int r = 0; r < n; r++) { /* once no capture is left: instantiation may be forbidden in one */
    inst[r] = g[r] ? cudaGraphInstantiate(&x[r], g[r], 0) : cudaErrorUnknown;
    ok &= ends[r] == cudaSuccess && inst[r] == cudaSuccess;
  }
  if (ok) {
    int in = nccl_launches_behind_gate(x, s, n);
    printf("nccl depth: %d GPUs, %d allreduce(s) a graph of %zu node(s), NCCL_GRAPH_MIXING_SUPPORT=%s: %d launches of "
           "each rank's graph behind a blocked stream%s\n",
           n, ops, nodes(g[0]), getenv("NCCL_GRAPH_MIXING_SUPPORT") ? getenv("NCCL_GRAPH_MIXING_SUPPORT") : "unset",
           in, in == 5000 ? " (no block seen)" : "");
  } else {
    printf("nccl depth: warm-up %s, capture %s, rank 0's end %s and instantiate %s: no graphs\n",
           ncclGetErrorString(warm), ncclGetErrorString(cap), cudaGetErrorName(ends[0]), cudaGetErrorName(inst[0]));
  }
  for (int r = 0; r < n; r++) {
    if (x[r]) cudaGraphExecDestroy(x[r]);
    if (g[r]) cudaGraphDestroy(g[r]);
    cudaFree(d[r]);
    cudaStreamDestroy(s[r]);
  }
  for (int r = 0; r < n; r++) ncclCommAbort(comms[r]);
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "nccl-depth")) { /* graph_probe nccl-depth NGPUS OPS: that line only */
    setvbuf(stdout, NULL, _IOLBF, 0);
    nccl_depth(atoi(argv[2]), atoi(argv[3]));
    return 0;
  }
  /* Each line out as it is made: a crash must not take the lines before it. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  cudaSetDevice(0);
  static const char *calls[] = {"cudaStreamQuery of the capturing stream",
                                "cudaDeviceSynchronize",
                                "cudaFree",
                                "cudaMallocHost",
                                "cudaFreeHost",
                                "cudaHostRegister",
                                "cudaHostUnregister",
                                "cudaMemset of 0 bytes",
                                "cudaStreamDestroy of the capturing stream",
                                "cudaGraphInstantiate of another graph",
                                "cudaGraphExecDestroy of another graph's"};
  for (int m = 0; m < 3; m += 2)
    for (int i = 0; i < 11; i++) {
      char name[128];
      snprintf(name, sizeof name, "%s in a %s capture", calls[i], m ? "relaxed" : "global");
      in_capture(name, i, (enum cudaStreamCaptureMode)m);
    }
  threads();
  events();
  records();
  depth(1);
  depth(10);
  if (argc > 1 && !strcmp(argv[1], "nccl")) nccl_lines();
  return 0;
}
