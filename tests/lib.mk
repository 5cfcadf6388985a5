# tests/lib.mk — CMocka unit tests of nccl4c (lib/). Appends only.
#
# The tests link lib/libnccl4c_static.la (objects, not the shared library)
# so that -Wl,--wrap=ncclX replaces nccl4c's NCCL calls with the mocks of
# tests/lib_mock.c. Every NCCL function the tested code calls must be
# wrapped here (except ncclGetErrorString, ncclGetVersion and
# cudaGetErrorString, which come from the backend). They print TAP
# (CMOCKA_MESSAGE_OUTPUT=TAP from tests/run-test.sh), hence the .tap names.

LIB_TEST_WRAPS = \
	-Wl,--wrap=ncclGetUniqueId \
	-Wl,--wrap=ncclCommInitRankConfig \
	-Wl,--wrap=ncclCommInitRankScalable \
	-Wl,--wrap=ncclCommInitAll \
	-Wl,--wrap=ncclCommSplit \
	-Wl,--wrap=ncclCommFinalize \
	-Wl,--wrap=ncclCommDestroy \
	-Wl,--wrap=ncclCommAbort \
	-Wl,--wrap=ncclCommCount \
	-Wl,--wrap=ncclCommUserRank \
	-Wl,--wrap=ncclCommCuDevice \
	-Wl,--wrap=ncclCommGetAsyncError \
	-Wl,--wrap=ncclGetLastError \
	-Wl,--wrap=ncclCommMemStats \
	-Wl,--wrap=ncclSend \
	-Wl,--wrap=ncclRecv \
	-Wl,--wrap=ncclGroupStart \
	-Wl,--wrap=ncclGroupEnd \
	-Wl,--wrap=ncclGroupSimulateEnd

LIB_TEST_CF = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
LIB_TEST_LDF = $(AM_LDFLAGS) $(LIB_TEST_WRAPS)
LIB_TEST_LINK = lib/libnccl4c_static.la $(BACKEND_LIBS) $(CMOCKA_LIBS)
LIB_TEST_MOCK = tests/lib_mock.c tests/lib_mock.h

if HAVE_CMOCKA
LIB_TESTS = tests/lib_errors.tap tests/lib_comm.tap tests/lib_p2p.tap \
	tests/lib_resource.tap tests/lib_alloc.tap tests/lib_fail.tap \
	tests/lib_mem.tap tests/lib_ft.tap
# Needs NCCL's one-sided API (2.29+); on an older NCCL those functions give
# N4C_ENOTSUP, which tests/lib_fail and the suite cover.
if HAVE_NCCL_RMA
LIB_TESTS += tests/lib_rma.tap
endif
if HAVE_DLPACK
LIB_TESTS += tests/lib_dlpack.tap
endif
check_PROGRAMS += $(LIB_TESTS)
TESTS += $(LIB_TESTS)
endif

tests_lib_errors_tap_SOURCES = tests/lib_errors.c $(LIB_TEST_MOCK)
tests_lib_errors_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_errors_tap_LDFLAGS = $(LIB_TEST_LDF)
tests_lib_errors_tap_LDADD = $(LIB_TEST_LINK)

# Its own mocks, of the fault-tolerance calls, wrapped for it alone.
tests_lib_ft_tap_SOURCES = tests/lib_ft.c $(LIB_TEST_MOCK)
tests_lib_ft_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_ft_tap_LDFLAGS = $(LIB_TEST_LDF) -Wl,--wrap=ncclCommShrink -Wl,--wrap=ncclCommGrow \
	-Wl,--wrap=ncclCommGetUniqueId -Wl,--wrap=ncclCommRevoke -Wl,--wrap=ncclCommSuspend \
	-Wl,--wrap=ncclCommResume
tests_lib_ft_tap_LDADD = $(LIB_TEST_LINK)

tests_lib_comm_tap_SOURCES = tests/lib_comm.c $(LIB_TEST_MOCK)
tests_lib_comm_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_comm_tap_LDFLAGS = $(LIB_TEST_LDF)
tests_lib_comm_tap_LDADD = $(LIB_TEST_LINK)

tests_lib_p2p_tap_SOURCES = tests/lib_p2p.c $(LIB_TEST_MOCK)
tests_lib_p2p_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_p2p_tap_LDFLAGS = $(LIB_TEST_LDF)
tests_lib_p2p_tap_LDADD = $(LIB_TEST_LINK)

tests_lib_resource_tap_SOURCES = tests/lib_resource.c $(LIB_TEST_MOCK)
tests_lib_resource_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_resource_tap_LDFLAGS = $(LIB_TEST_LDF)
tests_lib_resource_tap_LDADD = $(LIB_TEST_LINK)

tests_lib_alloc_tap_SOURCES = tests/lib_alloc.c $(LIB_TEST_MOCK)
tests_lib_alloc_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_alloc_tap_LDFLAGS = $(LIB_TEST_LDF)
tests_lib_alloc_tap_LDADD = $(LIB_TEST_LINK)

tests_lib_rma_tap_SOURCES = tests/lib_rma.c $(LIB_TEST_MOCK)
tests_lib_rma_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_rma_tap_LDFLAGS = $(LIB_TEST_LDF) \
	-Wl,--wrap=ncclCommRegister -Wl,--wrap=ncclCommDeregister \
	-Wl,--wrap=ncclCommWindowRegister -Wl,--wrap=ncclCommWindowDeregister \
	-Wl,--wrap=ncclWinGetUserPtr -Wl,--wrap=ncclGetLsaDevicePointer \
	-Wl,--wrap=ncclGetPeerDevicePointer -Wl,--wrap=ncclGetLsaMultimemDevicePointer \
	-Wl,--wrap=ncclSignal -Wl,--wrap=ncclWaitSignal -Wl,--wrap=ncclPutSignal
tests_lib_rma_tap_LDADD = $(LIB_TEST_LINK)

tests_lib_fail_tap_SOURCES = tests/lib_fail.c $(LIB_TEST_MOCK)
tests_lib_fail_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_fail_tap_LDFLAGS = $(LIB_TEST_LDF) \
	-Wl,--wrap=ncclAllReduce -Wl,--wrap=ncclBroadcast -Wl,--wrap=ncclReduce \
	-Wl,--wrap=ncclAllGather -Wl,--wrap=ncclReduceScatter -Wl,--wrap=ncclAlltoAll \
	-Wl,--wrap=ncclGather -Wl,--wrap=ncclScatter \
	-Wl,--wrap=ncclRedOpCreatePreMulSum -Wl,--wrap=ncclRedOpDestroy \
	-Wl,--wrap=ncclMemAlloc -Wl,--wrap=ncclMemFree \
	-Wl,--wrap=ncclDevCommCreate -Wl,--wrap=ncclDevCommDestroy
tests_lib_fail_tap_LDADD = $(LIB_TEST_LINK)

# cudaSetDevice too: mem.c's switches to another device and back.
tests_lib_mem_tap_SOURCES = tests/lib_mem.c $(LIB_TEST_MOCK)
tests_lib_mem_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_mem_tap_LDFLAGS = $(LIB_TEST_LDF) \
	-Wl,--wrap=ncclMemAlloc -Wl,--wrap=ncclMemFree -Wl,--wrap=cudaSetDevice
tests_lib_mem_tap_LDADD = $(LIB_TEST_LINK)

tests_lib_dlpack_tap_SOURCES = tests/lib_dlpack.c $(LIB_TEST_MOCK)
tests_lib_dlpack_tap_CFLAGS = $(LIB_TEST_CF)
tests_lib_dlpack_tap_LDFLAGS = $(LIB_TEST_LDF)
tests_lib_dlpack_tap_LDADD = $(LIB_TEST_LINK)

# docs/api-coverage.md against nccl4c.h and nccl.core's names
# (tests/api-coverage.sh): needs only a C compiler.
TESTS += tests/api-coverage
EXTRA_DIST += tests/api-coverage.sh docs/api-coverage.md
tests/api-coverage: $(srcdir)/tests/api-coverage.sh Makefile
	$(AM_V_GEN){ echo '#!/bin/sh'; echo "CC='$(CC)'"; \
	  echo "CPPFLAGS='-I$(abs_top_builddir) -I$(abs_top_srcdir)/lib $(BACKEND_CPPFLAGS) $(CPPFLAGS)'"; \
	  echo "top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)'"; \
	  cat $(srcdir)/tests/api-coverage.sh; } > $@ && chmod +x $@
CLEANFILES += tests/api-coverage

# ALWAYS()/NEVER() arguments call no function: coverage builds drop them.
TESTS += tests/never-pure.sh
EXTRA_DIST += tests/never-pure.sh
