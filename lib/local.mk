# lib/local.mk — nccl4c. Included by the top Makefile.am; appends only.
#
# The sources are compiled once, into the convenience library
# lib/libnccl4c_static.la. The installed lib/libnccl4c.la is that library
# whole, plus the backend. The CMocka tests link the convenience library
# itself, so that -Wl,--wrap=ncclX reaches nccl4c's calls to NCCL (wrap
# only rewrites references in objects linked into the executable).
#
# A new source file goes into lib_libnccl4c_static_la_SOURCES.

noinst_LTLIBRARIES += lib/libnccl4c_static.la
lib_libnccl4c_static_la_SOURCES = \
	lib/alloc.c \
	lib/bufreg.c \
	lib/window.c \
	lib/signal.c \
	lib/buffer.c \
	lib/coll.c \
	lib/comm.c \
	lib/comm_query.c \
	lib/error.c \
	lib/group.c \
	lib/p2p.c \
	lib/redop.c \
	lib/resource.c
# Device communicators, properties, memory, DLPack.
lib_libnccl4c_static_la_SOURCES += lib/props.c lib/devcomm.c lib/mem.c lib/dlpack.c
# Fault tolerance (shrink, grow, revoke, suspend), NCCLConfig, versions.
lib_libnccl4c_static_la_SOURCES += lib/ft.c lib/config.c lib/version.c
# Real NCCL's <nccl_device.h> is C++: the device-communicator bridge is the
# one C++ file, on either backend. Without it devcomm.c gives N4C_ENOTSUP.
if HAVE_NCCL_DEVCOMM
lib_libnccl4c_static_la_SOURCES += lib/devcomm_bridge.cc
endif
lib_libnccl4c_static_la_CPPFLAGS = $(AM_CPPFLAGS)
# Only N4C_EXTERN functions leave the shared library; the tests, linking
# these objects statically, still reach the internal ones.
lib_libnccl4c_static_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
# No exceptions: none can cross the C callers, and the C-linked tests then
# need no C++ runtime (coverage builds refer to __gxx_personality_v0 else).
lib_libnccl4c_static_la_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden -fno-exceptions

lib_LTLIBRARIES += lib/libnccl4c.la
lib_libnccl4c_la_SOURCES =
lib_libnccl4c_la_LIBADD = lib/libnccl4c_static.la $(BACKEND_LIBS)
# current:revision:age — bump per libtool's rules when the ABI changes.
lib_libnccl4c_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0 -no-undefined
# Linked as C++ only with the C++ bridge in. Automake would pick one linker
# for every build from all the sources, conditional ones included, and so
# need a C++ compiler even where configure found none.
if HAVE_NCCL_DEVCOMM
lib_libnccl4c_la_LINK = $(LIBTOOL) $(AM_V_lt) --tag=CXX $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) \
	--mode=link $(CXXLD) $(AM_CXXFLAGS) $(CXXFLAGS) $(lib_libnccl4c_la_LDFLAGS) $(LDFLAGS) -o $@
else
lib_libnccl4c_la_LINK = $(LIBTOOL) $(AM_V_lt) --tag=CC $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) \
	--mode=link $(CCLD) $(AM_CFLAGS) $(CFLAGS) $(lib_libnccl4c_la_LDFLAGS) $(LDFLAGS) -o $@
endif

include_HEADERS += lib/nccl4c.h
noinst_HEADERS += lib/n4c_internal.h lib/n4c_test.h lib/devcomm_bridge.h lib/mem.h
