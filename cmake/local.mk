# cmake/local.mk -- find_package(nccl4c) and find_package(ncclsim) for
# CMake projects. Included by the top Makefile.am; appends only.
#
# make writes the package files from their templates (cmake/*.in) with
# the installation's directories, and installs them under
# $(libdir)/cmake/NAME/. make installcheck builds cmake/example/ against
# the installed files (cmake/installcheck.sh; skipped without cmake).

cmakepkgdir = $(libdir)/cmake
nccl4ccmakedir = $(cmakepkgdir)/nccl4c
nccl4ccmake_DATA = cmake/nccl4c-config.cmake cmake/nccl4c-config-version.cmake
if BACKEND_SIM
ncclsimcmakedir = $(cmakepkgdir)/ncclsim
ncclsimcmake_DATA = cmake/ncclsim-config.cmake cmake/ncclsim-config-version.cmake
endif

# Made by make, not configure: $(libdir) and the rest are then fully
# expanded, and follow a `make prefix=...`.
N4C_CMAKE_GEN = N4C_VERSION='$(PACKAGE_VERSION)' N4C_PREFIX='$(prefix)' N4C_LIBDIR='$(libdir)' \
	N4C_INCLUDEDIR='$(includedir)' N4C_BACKEND='$(BACKEND_NAME)' N4C_BACKEND_CFLAGS='$(N4C_PC_CFLAGS)' \
	$(SHELL) $(srcdir)/cmake/config-gen.sh
N4C_CMAKE_DEPS = $(srcdir)/cmake/config-gen.sh Makefile
cmake/nccl4c-config.cmake: $(srcdir)/cmake/nccl4c-config.cmake.in $(N4C_CMAKE_DEPS)
	$(AM_V_GEN)$(MKDIR_P) cmake && $(N4C_CMAKE_GEN) $(srcdir)/cmake/nccl4c-config.cmake.in $@ nccl4c
cmake/nccl4c-config-version.cmake: $(srcdir)/cmake/config-version.cmake.in $(N4C_CMAKE_DEPS)
	$(AM_V_GEN)$(MKDIR_P) cmake && $(N4C_CMAKE_GEN) $(srcdir)/cmake/config-version.cmake.in $@ nccl4c
cmake/ncclsim-config.cmake: $(srcdir)/cmake/ncclsim-config.cmake.in $(N4C_CMAKE_DEPS)
	$(AM_V_GEN)$(MKDIR_P) cmake && $(N4C_CMAKE_GEN) $(srcdir)/cmake/ncclsim-config.cmake.in $@ ncclsim
cmake/ncclsim-config-version.cmake: $(srcdir)/cmake/config-version.cmake.in $(N4C_CMAKE_DEPS)
	$(AM_V_GEN)$(MKDIR_P) cmake && $(N4C_CMAKE_GEN) $(srcdir)/cmake/config-version.cmake.in $@ ncclsim
CLEANFILES += cmake/nccl4c-config.cmake cmake/nccl4c-config-version.cmake \
	cmake/ncclsim-config.cmake cmake/ncclsim-config-version.cmake
EXTRA_DIST += cmake/config-gen.sh cmake/installcheck.sh cmake/nccl4c-config.cmake.in \
	cmake/ncclsim-config.cmake.in cmake/config-version.cmake.in cmake/example/CMakeLists.txt \
	cmake/example/n4c_allreduce.c cmake/example/nccl_allreduce.c

# CMAKE: the cmake to build the example with (make installcheck CMAKE=...).
CMAKE = cmake
installcheck-local:
	@CMAKE='$(CMAKE)' CC='$(CC)' N4C_SRCDIR='$(abs_top_srcdir)' N4C_PREFIX='$(DESTDIR)$(prefix)' \
	  N4C_LIBDIR='$(DESTDIR)$(libdir)' N4C_INCLUDEDIR='$(DESTDIR)$(includedir)' \
	  N4C_BACKEND='$(BACKEND_NAME)' $(SHELL) $(srcdir)/cmake/installcheck.sh
