/* tests/gate.h — a host function that holds its stream until the test
 * opens the gate, so that work queued behind it is known to be pending
 * (tests/sim_cuda.c, tests/sim_mempool.c). Needs <pthread.h>. A gate is
 * set up by gate_init or by GATE_INITIALIZER. */
#ifndef N4C_TESTS_GATE_H_
#define N4C_TESTS_GATE_H_

typedef struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  int open;
} gate;

#define GATE_INITIALIZER {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0}

static inline void gate_init(gate *g) {
  pthread_mutex_init(&g->m, NULL);
  pthread_cond_init(&g->c, NULL);
  g->open = 0;
}

/* The host function: cudaLaunchHostFunc(stream, gate_wait, &g). */
static inline void gate_wait(void *arg) {
  gate *g = arg;
  pthread_mutex_lock(&g->m);
  while (!g->open) pthread_cond_wait(&g->c, &g->m);
  pthread_mutex_unlock(&g->m);
}

static inline void gate_open(gate *g) {
  pthread_mutex_lock(&g->m);
  g->open = 1;
  pthread_cond_broadcast(&g->c);
  pthread_mutex_unlock(&g->m);
}

static inline void gate_destroy(gate *g) {
  pthread_mutex_destroy(&g->m);
  pthread_cond_destroy(&g->c);
}

#endif
