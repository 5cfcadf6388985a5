# tests/compat.mk — ncclsim's headers against the real CUDA and NCCL
# headers (tests/cuda-compat.sh, skipped without them). Appends only.
if BACKEND_SIM
if HAVE_CXX
TESTS += tests/cuda-compat
endif
endif
EXTRA_DIST += tests/cuda-compat.sh tests/cuda-compat-gen.py tests/cuda-compat-known.txt
tests/cuda-compat: $(srcdir)/tests/cuda-compat.sh Makefile
	$(AM_V_GEN){ echo '#!/bin/sh'; echo "CXX='$(CXX)'"; echo "top_srcdir='$(abs_top_srcdir)'"; \
	  cat $(srcdir)/tests/cuda-compat.sh; } > $@ && chmod +x $@
CLEANFILES += tests/cuda-compat

# The binary drop-in (sim/dropin): programs linked against the real NCCL
# and CUDA libraries run on ncclsim's (tests/dropin.sh, skipped without
# them).
if BACKEND_SIM
if HAVE_CXX
TESTS += tests/dropin
endif
endif
EXTRA_DIST += tests/dropin.sh tests/dropin_probe.cc tests/dropin_uncovered.cc tests/dropin_cudart_only.cc
tests/dropin: $(srcdir)/tests/dropin.sh Makefile sim/dropin/libnccl.la sim/dropin/libcudart.la
	$(AM_V_GEN){ echo '#!/bin/sh'; echo "CXX='$(CXX)'"; echo "CXXFLAGS='$(CXXFLAGS)'"; \
	  echo "LDFLAGS='$(LDFLAGS)'"; echo "top_srcdir='$(abs_top_srcdir)'"; echo "top_builddir='$(abs_top_builddir)'"; \
	  cat $(srcdir)/tests/dropin.sh; } > $@ && chmod +x $@
CLEANFILES += tests/dropin
