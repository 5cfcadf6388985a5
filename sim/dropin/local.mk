# sim/dropin/local.mk — ncclsim as a binary drop-in for NCCL and the CUDA
# runtime: $(libdir)/ncclsim/libnccl.so.2 (the whole simulator, NCCL's
# soname, cuda* at libcudart.so.13's version) and libcudart.so.13 (the
# soname and version node, needing libnccl.so.2). A program linked against
# the real libraries runs on ncclsim with LD_LIBRARY_PATH=$(libdir)/ncclsim.
# Included by sim/local.mk; appends only.
ncclsimlibdir = $(libdir)/ncclsim
if BACKEND_SIM
ncclsimlib_LTLIBRARIES = sim/dropin/libnccl.la sim/dropin/libcudart.la
endif
EXTRA_DIST += sim/dropin/nccl.map sim/dropin/cudart.map
sim_dropin_libnccl_la_SOURCES =
sim_dropin_libnccl_la_LIBADD = sim/libncclsim_core.la $(JANSSON_LIBS) -ldl -lpthread -lm
# libtool's soname is lib<name>.so.<current - age>: 2:0:0 gives libnccl.so.2;
# -shared: a static archive of a drop-in would serve no one.
sim_dropin_libnccl_la_LDFLAGS = $(AM_LDFLAGS) -shared -version-info 2:0:0 \
	-Wl,--version-script=$(srcdir)/sim/dropin/nccl.map
EXTRA_sim_dropin_libnccl_la_DEPENDENCIES = $(srcdir)/sim/dropin/nccl.map
sim_dropin_libcudart_la_SOURCES = sim/dropin/cudart.c
sim_dropin_libcudart_la_LIBADD = sim/dropin/libnccl.la
sim_dropin_libcudart_la_LDFLAGS = $(AM_LDFLAGS) -shared -version-info 13:0:0 \
	-Wl,--version-script=$(srcdir)/sim/dropin/cudart.map
EXTRA_sim_dropin_libcudart_la_DEPENDENCIES = $(srcdir)/sim/dropin/cudart.map
