# tests/kernel.mk — CUDA kernels on ncclsim: .cu test programs built by
# the tree's own ncclsim-nvcc (CMocka), and the driver's checks
# (tests/nvcc-check.sh). Appends only; included by tests/sim.mk.
KERNEL_TESTS = tests/kernel_launch tests/kernel_sync tests/kernel_builtins tests/kernel_memory tests/kernel_faults
if BACKEND_SIM
if HAVE_LIBCLANG
if HAVE_CMOCKA
check_SCRIPTS += $(KERNEL_TESTS)
TESTS += $(KERNEL_TESTS)
endif
TESTS += tests/nvcc-check.sh
endif
endif
EXTRA_DIST += tests/kernel_launch.cu tests/kernel_sync.cu tests/kernel_builtins.cu tests/kernel_memory.cu \
	tests/kernel_faults.cu tests/kernel_test.h tests/nvcc-check.sh tests/nccl-tests.sh
CLEANFILES += $(KERNEL_TESTS)
# The build's sanitizers go to the host compiler the driver runs, so the
# programs and libncclsim are instrumented alike.
NVCC_TEST = $(top_builddir)/sim/ncclsim-nvcc -I$(top_srcdir)/tests -I$(top_builddir) $(CMOCKA_CFLAGS) -g -O1 \
	-forward-unknown-to-host-compiler $(SAN_CFLAGS) $(SAN_LDFLAGS)
KERNEL_TEST_DEPS = sim/ncclsim-nvcc sim/libncclsim.la tests/kernel_test.h tests/capture.h \
	$(ncclsiminclude_HEADERS) $(ncclsimkernelinclude_HEADERS) $(ncclsimcginclude_HEADERS) \
	$(ncclsimcudainclude_HEADERS) $(ncclsimcudastdinclude_HEADERS)
tests/kernel_launch: $(srcdir)/tests/kernel_launch.cu $(KERNEL_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/kernel_launch.cu $(CMOCKA_LIBS)
tests/kernel_sync: $(srcdir)/tests/kernel_sync.cu $(KERNEL_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/kernel_sync.cu $(CMOCKA_LIBS)
tests/kernel_builtins: $(srcdir)/tests/kernel_builtins.cu $(KERNEL_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/kernel_builtins.cu $(CMOCKA_LIBS)
tests/kernel_memory: $(srcdir)/tests/kernel_memory.cu $(KERNEL_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/kernel_memory.cu $(CMOCKA_LIBS)
# Its kernels store through a null pointer on purpose, a fault that ncclsim
# reports as a GPU does: UBSan must not end the program first.
tests/kernel_faults: $(srcdir)/tests/kernel_faults.cu $(KERNEL_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -fno-sanitize=null -o $@ $(srcdir)/tests/kernel_faults.cu $(CMOCKA_LIBS)
# Kernels in CUDA graphs (sim/kernel/graph.c).
KERNEL_TESTS += tests/kernel_graph
EXTRA_DIST += tests/kernel_graph.cu
tests/kernel_graph: $(srcdir)/tests/kernel_graph.cu $(KERNEL_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/kernel_graph.cu $(CMOCKA_LIBS)
# ThreadSanitizer on kernels: a race between a block's threads reported,
# none for what orders them or for the engine (skipped without TSan).
KERNEL_TESTS += tests/kernel_tsan
EXTRA_DIST += tests/kernel_tsan.cu
tests/kernel_tsan: $(srcdir)/tests/kernel_tsan.cu $(KERNEL_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/kernel_tsan.cu $(CMOCKA_LIBS)
# Inline PTX, each instruction ncclsim-nvcc carries out (sim/nvcc/ptx.c).
KERNEL_TESTS += tests/kernel_ptx
EXTRA_DIST += tests/kernel_ptx.cu
tests/kernel_ptx: $(srcdir)/tests/kernel_ptx.cu $(KERNEL_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/kernel_ptx.cu $(CMOCKA_LIBS)
# The forms of kernels, launches and variables ncclsim-nvcc rewrites
# (sim/nvcc/parse.c).
KERNEL_TESTS += tests/kernel_forms
EXTRA_DIST += tests/kernel_forms.cu
tests/kernel_forms: $(srcdir)/tests/kernel_forms.cu $(KERNEL_TEST_DEPS)
	$(AM_V_GEN)$(NVCC_TEST) -o $@ $(srcdir)/tests/kernel_forms.cu $(CMOCKA_LIBS)
