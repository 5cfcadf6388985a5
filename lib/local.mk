# lib/local.mk — nccl4c. Included by the top Makefile.am; appends only.
#
# The sources are compiled once, into the convenience library
# lib/libnccl4c_static.la. The installed lib/libnccl4c.la is that library
# whole, plus the backend. The CMocka tests link the convenience library
# itself, so that -Wl,--wrap=ncclX reaches nccl4c's calls to NCCL (wrap
# only rewrites references in objects linked into the executable).
#
# A later kind adds its file to lib_libnccl4c_static_la_SOURCES; a C++ file
# there also needs `nodist_EXTRA_lib_libnccl4c_la_SOURCES = lib/dummy.cxx`
# so that the shared library is linked as C++.

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
# Device communicators, properties, memory, DLPack (issues 5 and 7).
lib_libnccl4c_static_la_SOURCES += lib/props.c lib/devcomm.c lib/mem.c lib/dlpack.c
# Real NCCL's <nccl_device.h> is C++: the device-communicator bridge is the
# one C++ file, on either backend. Without it devcomm.c gives N4C_ENOTSUP.
if HAVE_NCCL_DEVCOMM
lib_libnccl4c_static_la_SOURCES += lib/devcomm_bridge.cc
nodist_EXTRA_lib_libnccl4c_la_SOURCES = lib/dummy.cxx
endif
lib_libnccl4c_static_la_CPPFLAGS = $(AM_CPPFLAGS)
# Only N4C_EXTERN functions leave the shared library; the tests, linking
# these objects statically, still reach the internal ones.
lib_libnccl4c_static_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden

lib_LTLIBRARIES += lib/libnccl4c.la
lib_libnccl4c_la_SOURCES =
lib_libnccl4c_la_LIBADD = lib/libnccl4c_static.la $(BACKEND_LIBS)
# current:revision:age — bump per libtool's rules when the ABI changes.
lib_libnccl4c_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0 -no-undefined

include_HEADERS += lib/nccl4c.h
noinst_HEADERS += lib/n4c_internal.h lib/n4c_test.h lib/devcomm_bridge.h lib/mem.h
