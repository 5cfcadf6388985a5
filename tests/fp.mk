# tests/fp.mk — ncclsim's cuda_fp16.h, cuda_bf16.h and cuda_fp8.h: CMocka
# tests in C and in C++, and the comparison with CUDA's own host code and
# declarations where CUDA's headers are installed (tests/fp-vs-cuda.sh).
# Appends only.
if BACKEND_SIM
if HAVE_CMOCKA
check_PROGRAMS += tests/sim_fp
TESTS += tests/sim_fp
if HAVE_CXX
check_PROGRAMS += tests/sim_fp_cxx
TESTS += tests/sim_fp_cxx
endif
endif
if HAVE_CXX
TESTS += tests/fp-vs-cuda
endif
endif
# tests/sim_fp_vs_gpu.cu: the same table against a GPU, built and run by
# hand where there is one (its comment says how).
EXTRA_DIST += tests/fp-vs-cuda.sh tests/sim_fp_vs_cuda.cc tests/sim_fp_vs_cuda_sim.cc tests/fp_ops.h \
	tests/fp_ops_eval.h tests/sim_fp_vs_gpu.cu
tests_sim_fp_SOURCES = tests/sim_fp.c
tests_sim_fp_CPPFLAGS = -I$(top_srcdir)/sim/include $(CMOCKA_CFLAGS)
tests_sim_fp_LDADD = $(CMOCKA_LIBS) -lm
tests_sim_fp_cxx_SOURCES = tests/sim_fp_cxx.cc tests/sim_fp_cxx.h tests/sim_fp_cxx_ops.h
EXTRA_tests_sim_fp_cxx_DEPENDENCIES = tests/sim_fp.c
tests_sim_fp_cxx_CPPFLAGS = -I$(top_srcdir)/sim/include $(CMOCKA_CFLAGS)
tests_sim_fp_cxx_LDADD = $(CMOCKA_LIBS) -lm
tests/fp-vs-cuda: $(srcdir)/tests/fp-vs-cuda.sh Makefile
	$(AM_V_GEN){ echo '#!/bin/sh'; echo "CXX='$(CXX)'"; echo "top_srcdir='$(abs_top_srcdir)'"; \
	  cat $(srcdir)/tests/fp-vs-cuda.sh; } > $@ && chmod +x $@
CLEANFILES += tests/fp-vs-cuda
