/*
 * n4c_test.h — hooks for nccl4c's unit tests only. Not installed; the
 * symbols exist in the library but are no part of the public API.
 */
#ifndef N4C_TEST_H_
#define N4C_TEST_H_

#include <stddef.h>
#include <stdint.h>

/* The nth allocation of lib/ from now (1 = the next) returns NULL, once;
 * 0 disables. Returns how many allocations were made since the last call.
 * Not thread-safe against concurrent allocation counting in tests that
 * need exact numbers; the counters themselves are atomic. */
uint64_t n4c_test_alloc_fail_after(uint64_t n);

/* Allocations of lib/ not yet freed (n4c_malloc/n4c_calloc minus
 * n4c_free of non-NULL pointers): a leak check for tests. */
int64_t n4c_test_alloc_live(void);

#endif /* N4C_TEST_H_ */
