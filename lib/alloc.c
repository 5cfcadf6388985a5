/*
 * alloc.c — the one allocation hook of lib/, with the test-only fault
 * injection of n4c_test.h.
 */
#include "config.h"

#include <stdlib.h>

#include "n4c_internal.h"
#include "n4c_test.h"

static atomic_uint_fast64_t fail_at;   /* 0: off; else the count that fails */
static atomic_uint_fast64_t n_allocs;  /* since the last n4c_test_alloc_fail_after */
static atomic_int_fast64_t n_live;

static bool should_fail(void) {
  uint_fast64_t n = atomic_fetch_add(&n_allocs, 1) + 1;
  uint_fast64_t at = atomic_load(&fail_at);
  if (at == 0 || n != at) return false;
  atomic_store(&fail_at, 0); /* once */
  return true;
}

void *n4c_malloc(size_t size) {
  if (should_fail()) return NULL;
  void *p = malloc(size ? size : 1);
  if (p) atomic_fetch_add(&n_live, 1);
  return p;
}

void *n4c_calloc(size_t n, size_t size) {
  if (should_fail()) return NULL;
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (p) atomic_fetch_add(&n_live, 1);
  return p;
}

void n4c_free(void *p) {
  if (!p) return;
  atomic_fetch_sub(&n_live, 1);
  free(p);
}

uint64_t n4c_test_alloc_fail_after(uint64_t n) {
  uint64_t made = atomic_exchange(&n_allocs, 0);
  atomic_store(&fail_at, n);
  return made;
}

int64_t n4c_test_alloc_live(void) { return atomic_load(&n_live); }
