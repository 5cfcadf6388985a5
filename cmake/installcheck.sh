#!/bin/sh
# cmake/installcheck.sh -- make installcheck: the CMake example
# (cmake/example/) against the installed nccl4c, found by
# find_package(nccl4c) under the prefix; on ncclsim its programs are run.
# Then, where the installation is relocatable (its libdir and includedir
# under the prefix), the same on a copy of the installed tree moved
# elsewhere. Skipped, with a line saying so, without cmake.
#
# From the environment (cmake/local.mk sets them): CMAKE, CC, N4C_SRCDIR,
# N4C_PREFIX (with any DESTDIR before it), N4C_LIBDIR, N4C_INCLUDEDIR
# (the same), N4C_BACKEND. Works in cmake/installcheck.d under the
# current directory and removes it when it passes.
set -u
cmake=${CMAKE:-cmake}
if ! command -v "$cmake" >/dev/null 2>&1; then
  echo "installcheck: cmake not found: the CMake example is skipped"
  exit 0
fi
# make's CC may carry flags (gcc -std=gnu11): CMake takes the compiler alone.
set -- ${CC:-cc}
cc=$1
work=cmake/installcheck.d
rm -rf "$work" && mkdir -p "$work" || exit 1

# build NAME PREFIX: configure and build the example against PREFIX, then
# run its programs on ncclsim.
build() {
  name=$1 pfx=$2
  b=$work/$name
  echo "installcheck: $name: find_package(nccl4c) in $pfx"
  "$cmake" -S "$N4C_SRCDIR/cmake/example" -B "$b" -DCMAKE_PREFIX_PATH="$pfx" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release >"$b.log" 2>&1 &&
    "$cmake" --build "$b" >>"$b.log" 2>&1 || {
      echo "installcheck: $name: the CMake build failed:" >&2
      cat "$b.log" >&2
      return 1
    }
  grep -q "nccl4c .* on $N4C_BACKEND" "$b.log" || {
    echo "installcheck: $name: the example did not report nccl4c on $N4C_BACKEND:" >&2
    cat "$b.log" >&2
    return 1
  }
  test "$N4C_BACKEND" = ncclsim || return 0 # no GPU to run on here
  for p in n4c_allreduce nccl_allreduce; do
    out=$("$b/$p" 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed "s|^|  $p: |"
    test $rc = 0 || { echo "installcheck: $name: $p exited with $rc" >&2; return 1; }
  done
}

build installed "$N4C_PREFIX" || exit 1

pfx=${N4C_PREFIX%/}
case $N4C_LIBDIR:$N4C_INCLUDEDIR in
  "$pfx"/*:"$pfx"/*)
    lib=${N4C_LIBDIR#"$pfx"/} inc=${N4C_INCLUDEDIR#"$pfx"/}
    moved=$(cd "$work" && pwd)/moved
    mkdir -p "$moved/$lib" "$moved/$inc" &&
      cp -R "$N4C_LIBDIR"/. "$moved/$lib" && cp -R "$N4C_INCLUDEDIR"/. "$moved/$inc" || exit 1
    build moved "$moved" || exit 1
    ;;
  *) echo "installcheck: libdir or includedir outside the prefix: not relocatable, the moved tree is skipped" ;;
esac
rm -rf "$work"
echo "installcheck: the CMake example: ok"
