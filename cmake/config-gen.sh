#!/bin/sh
# cmake/config-gen.sh -- writes one of the CMake package files (make runs
# it; see cmake/local.mk) from its template, with the installation's
# directories:
#
#   config-gen.sh TEMPLATE OUTPUT NAME
#
# from the environment: N4C_VERSION, N4C_PREFIX, N4C_LIBDIR, N4C_INCLUDEDIR
# (make's own, fully expanded), N4C_BACKEND (ncclsim or nccl) and
# N4C_BACKEND_CFLAGS (the real backend's -I/-isystem flags, as nccl4c.pc
# gives them).
#
# The files go to $(libdir)/cmake/NAME/. Where the library and include
# directories lie under the prefix, the files find them from their own
# place (relocatable: a tree moved or unpacked elsewhere still works);
# elsewhere they name them by their absolute paths.
set -eu
test $# -eq 3 || { echo "usage: $0 TEMPLATE OUTPUT NAME" >&2; exit 2; }
tpl=$1 out=$2 name=$3

# cm TEXT: TEXT inside a CMake quoted argument: \ and " escaped.
cm() { printf '%s\n' "$1" | sed 's/[\\"]/\\&/g'; }
prefix=${N4C_PREFIX%/}

# below DIR: DIR relative to the prefix, or nothing when it is not under it.
below() {
  case $1 in
    "$prefix"/*) d=${1#"$prefix"/}; printf '%s\n' "${d%/}" ;;
  esac
}

lib_rel=$(below "$N4C_LIBDIR")
inc_rel=$(below "$N4C_INCLUDEDIR")
if test -n "$lib_rel" && test -n "$inc_rel"; then
  relocatable=TRUE
  # From $(libdir)/cmake/NAME up to the prefix: one ".." a component.
  up=$(printf '%s\n' "$lib_rel/cmake/$name" | sed 's|[^/][^/]*|..|g')
  libdir="\${_${name}_prefix}/$(cm "$lib_rel")"
  includedir="\${_${name}_prefix}/$(cm "$inc_rel")"
else
  relocatable=FALSE up=.
  libdir=$(cm "$N4C_LIBDIR")
  includedir=$(cm "$N4C_INCLUDEDIR")
fi

# sed replacement text: escape \ & and the delimiter |.
esc() { printf '%s\n' "$1" | sed 's/[\\&|]/\\&/g'; }
sed -e "s|@PACKAGE_VERSION@|$(esc "$N4C_VERSION")|g" \
    -e "s|@N4C_CMAKE_RELOCATABLE@|$relocatable|g" \
    -e "s|@N4C_CMAKE_UP@|$up|g" \
    -e "s|@N4C_CMAKE_INSTALL_PREFIX@|$(esc "$(cm "$N4C_PREFIX")")|g" \
    -e "s|@N4C_CMAKE_INSTALL_DIR@|$(esc "$(cm "${N4C_LIBDIR%/}/cmake/$name")")|g" \
    -e "s|@N4C_CMAKE_LIBDIR@|$(esc "$libdir")|g" \
    -e "s|@N4C_CMAKE_INCLUDEDIR@|$(esc "$includedir")|g" \
    -e "s|@N4C_CMAKE_NAME@|$(esc "$name")|g" \
    -e "s|@BACKEND_NAME@|$(esc "$N4C_BACKEND")|g" \
    -e "s|@N4C_BACKEND_CFLAGS@|$(esc "$(cm "$N4C_BACKEND_CFLAGS")")|g" \
    "$tpl" > "$out.tmp"
mv "$out.tmp" "$out"
