# tests/devapi.mk — NCCL's device API from kernels on ncclsim: .cu test
# programs built by the tree's own ncclsim-nvcc (CMocka), as
# tests/kernel.mk's (whose NVCC_TEST and KERNEL_TEST_DEPS they share), and
# NCCL's own device-API examples (tests/nccl-device-examples.sh: run where
# N4C_NCCL_SRC names an NCCL 2.30 source tree, else skipped). Appends only;
# included by tests/sim.mk.
DEVAPI_TESTS = tests/devapi_kernels tests/devapi_faults tests/devapi_trace
if BACKEND_SIM
if HAVE_LIBCLANG
if HAVE_CMOCKA
check_SCRIPTS += $(DEVAPI_TESTS)
TESTS += $(DEVAPI_TESTS)
endif
TESTS += tests/nccl-device-examples.sh
endif
endif
EXTRA_DIST += tests/devapi_kernels.cu tests/devapi_faults.cu tests/devapi_trace.cu tests/devapi_test.h tests/nccl-device-examples.sh \
	examples/nccl-device/run-nccl-examples.sh
CLEANFILES += $(DEVAPI_TESTS)
DEVAPI_TEST_DEPS = $(KERNEL_TEST_DEPS) tests/devapi_test.h $(ncclsimdeviceinclude_HEADERS) \
	$(ncclsimdeviceimplinclude_HEADERS) $(ncclsimdevicegininclude_HEADERS)
tests/devapi_kernels: $(srcdir)/tests/devapi_kernels.cu $(DEVAPI_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/devapi_kernels.cu $(CMOCKA_LIBS)
tests/devapi_faults: $(srcdir)/tests/devapi_faults.cu $(DEVAPI_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/devapi_faults.cu $(CMOCKA_LIBS)
tests/devapi_trace: $(srcdir)/tests/devapi_trace.cu $(DEVAPI_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) $(JANSSON_CFLAGS) -o $@ $(srcdir)/tests/devapi_trace.cu $(CMOCKA_LIBS) $(JANSSON_LIBS)
