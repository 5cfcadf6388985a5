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
