# examples/local.mk — example programs, built and run by make check (exit 77
# means skipped). Included by the top Makefile.am; appends only.

# Two ranks allreduce a DLPack tensor, then put_signal into it.
check_PROGRAMS += examples/dlpack_allreduce
TESTS += examples/dlpack_allreduce
examples_dlpack_allreduce_SOURCES = examples/dlpack_allreduce.c
examples_dlpack_allreduce_LDADD = lib/libnccl4c.la $(BACKEND_LIBS)

# Host programs in the styles NCCL documents (examples/nccl/), C++ that
# builds unchanged against CUDA and NCCL: here against ncclsim, and run.
# tests/examples-real compiles them against the real headers where
# /usr/local/cuda has them.
NCCL_EXAMPLES = examples/nccl/one_device_per_thread examples/nccl/comm_init_all \
	examples/nccl/sendrecv_ring examples/nccl/allreduce_registered \
	examples/nccl/symmetric_windows examples/nccl/half_allreduce
if BACKEND_SIM
if HAVE_CXX
check_PROGRAMS += $(NCCL_EXAMPLES)
TESTS += $(NCCL_EXAMPLES) tests/examples-real
endif
endif
EXTRA_DIST += examples/nccl/check.h tests/examples-real.sh
NCCL_EXAMPLE_CPPFLAGS = -I$(top_srcdir)/sim/include
NCCL_EXAMPLE_LDADD = sim/libncclsim.la -lpthread
examples_nccl_one_device_per_thread_SOURCES = examples/nccl/one_device_per_thread.cc
examples_nccl_one_device_per_thread_CPPFLAGS = $(NCCL_EXAMPLE_CPPFLAGS)
examples_nccl_one_device_per_thread_LDADD = $(NCCL_EXAMPLE_LDADD)
examples_nccl_comm_init_all_SOURCES = examples/nccl/comm_init_all.cc
examples_nccl_comm_init_all_CPPFLAGS = $(NCCL_EXAMPLE_CPPFLAGS)
examples_nccl_comm_init_all_LDADD = $(NCCL_EXAMPLE_LDADD)
examples_nccl_sendrecv_ring_SOURCES = examples/nccl/sendrecv_ring.cc
examples_nccl_sendrecv_ring_CPPFLAGS = $(NCCL_EXAMPLE_CPPFLAGS)
examples_nccl_sendrecv_ring_LDADD = $(NCCL_EXAMPLE_LDADD)
examples_nccl_allreduce_registered_SOURCES = examples/nccl/allreduce_registered.cc
examples_nccl_allreduce_registered_CPPFLAGS = $(NCCL_EXAMPLE_CPPFLAGS)
examples_nccl_allreduce_registered_LDADD = $(NCCL_EXAMPLE_LDADD)
examples_nccl_symmetric_windows_SOURCES = examples/nccl/symmetric_windows.cc
examples_nccl_symmetric_windows_CPPFLAGS = $(NCCL_EXAMPLE_CPPFLAGS)
examples_nccl_symmetric_windows_LDADD = $(NCCL_EXAMPLE_LDADD)
examples_nccl_half_allreduce_SOURCES = examples/nccl/half_allreduce.cc
examples_nccl_half_allreduce_CPPFLAGS = $(NCCL_EXAMPLE_CPPFLAGS)
examples_nccl_half_allreduce_LDADD = $(NCCL_EXAMPLE_LDADD)
tests/examples-real: $(srcdir)/tests/examples-real.sh Makefile
	$(AM_V_GEN){ echo '#!/bin/sh'; echo "CXX='$(CXX)'"; echo "top_srcdir='$(abs_top_srcdir)'"; \
	  cat $(srcdir)/tests/examples-real.sh; } > $@ && chmod +x $@
CLEANFILES += tests/examples-real

# The CUDA corpus (examples/cuda/*.cu): programs written for a GPU, built
# here by the tree's ncclsim-nvcc and run; their output must be their .out
# files, which conformance/gpu-run.sh checks with nvcc on real GPUs too.
CUDA_CORPUS = examples/cuda/vector_add examples/cuda/block_reduce examples/cuda/warp_primitives \
	examples/cuda/histogram examples/cuda/device_printf examples/cuda/streams_events examples/cuda/symbols \
	examples/cuda/cooperative_grid examples/cuda/inline_ptx examples/cuda/assert_fault \
	examples/cuda/nccl_kernels examples/cuda/nccl4c_kernels examples/cuda/launch_errors examples/cuda/fault_codes
if BACKEND_SIM
if HAVE_LIBCLANG
TESTS += examples/cuda/corpus
endif
endif
EXTRA_DIST += $(CUDA_CORPUS:=.cu) $(CUDA_CORPUS:=.out) examples/cuda/run-corpus.sh examples/cuda/corpus.sh
# The build's sanitizers go to the programs, as libncclsim has them.
examples/cuda/corpus: $(srcdir)/examples/cuda/corpus.sh Makefile
	$(AM_V_GEN)$(MKDIR_P) examples/cuda && { echo '#!/bin/sh'; echo "N4C_CORPUS_FLAGS='$(SAN_CFLAGS) $(SAN_LDFLAGS)'"; \
	  echo "srcdir='$(srcdir)'"; cat $(srcdir)/examples/cuda/corpus.sh; } > $@ && chmod +x $@
check_SCRIPTS += examples/cuda/corpus
CLEANFILES += examples/cuda/corpus
