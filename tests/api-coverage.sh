# tests/api-coverage.sh — docs/api-coverage.md cannot drift from nccl4c.h
# or from nccl.core. make check runs it through the generated
# tests/api-coverage, which puts CC, CPPFLAGS (the build's, with where
# nccl.h and nccl4c.h come from), top_srcdir and top_builddir before it.
#
# 1. Every identifier in the table's nccl4c column is compiled against
#    nccl4c.h: `name` becomes (void)(name), unless it is an N4C_ macro; a
#    type (`*_t`, `ncclUniqueId`) a pointer to it (opaque types have no
#    size); `type.field` offsetof(type, field). A missing one is a compile
#    error naming it.
# 2. Every name nccl.core exports (its __all__ in nccl4py 0.3.1, NCCL
#    2.30.7), every Communicator method and every resource method has a row.
# 3. A row without a counterpart (—) gives its reason.
set -u
cd "$top_builddir" || exit 99 # CPPFLAGS may hold paths relative to it
table=$top_srcdir/docs/api-coverage.md
tmp=${TMPDIR:-/tmp}/n4c-api-coverage.$$
mkdir -p "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# The rows: "| `nccl.core` | nccl4c | note |".
grep -E '^\| `[^`]+` \|' "$table" > "$tmp/rows" || { echo "no rows in $table"; exit 1; }

# ---- 1. the nccl4c column compiles
{
  echo '#include <stddef.h>'
  echo '#include "nccl4c.h"'
  echo 'int main(void) {'
  awk -F'|' '{ print $3 }' "$tmp/rows" | grep -o '`[^`]*`' | tr -d '`' | sort -u |
    while read -r name; do
      case $name in
        *dlpack*) guard=1 ;;
        *) guard= ;;
      esac
      test -n "$guard" && echo '#ifdef N4C_DLPACK'
      case $name in
        *.*) echo "  (void)offsetof(${name%%.*}, ${name#*.}); /* $name */" ;;
        *_t|ncclUniqueId) echo "  { $name *p_ = 0; (void)p_; } /* $name */" ;;
        # A macro (initializers and function-like ones too) only needs to
        # be defined; an enum constant is an expression.
        N4C_*) printf '#ifndef %s\n  (void)(%s); /* %s */\n#endif\n' "$name" "$name" "$name" ;;
        *) echo "  (void)($name); /* $name */" ;;
      esac
      test -n "$guard" && echo '#endif'
    done
  echo '  return 0;'
  echo '}'
} > "$tmp/names.c"
n=$(grep -c '/\*' "$tmp/names.c")
# -Werror: an undeclared function is only a warning in C before C99's rules
# are enforced; here it must fail.
if $CC $CPPFLAGS -std=c11 -Werror=implicit-function-declaration -c "$tmp/names.c" -o "$tmp/names.o" \
     2> "$tmp/cc.err"; then
  echo "ok 1 - the $n identifiers of the nccl4c column exist in nccl4c.h"
else
  echo "not ok 1 - names in docs/api-coverage.md that nccl4c.h lacks:"
  sed 's/^/# /' "$tmp/cc.err" | grep -E "error" | head -40
  fail=1
fi

# ---- 2. every nccl.core name has a row
core="NcclDataType NcclRedOp NcclGinType NcclGinConnectionType NcclCommMemStat
NcclBufferSpec NcclScalarSpec NcclDeviceSpec NcclStreamSpec NcclInvalid INT8 CHAR
UINT8 INT32 INT UINT32 INT64 UINT64 FLOAT16 HALF FLOAT32 FLOAT FLOAT64 DOUBLE
BFLOAT16 FLOAT8E4M3 FLOAT8E5M2 SUM PROD MAX MIN AVG CTAPolicy CommShrinkFlag
CommSuspendFlag WindowFlag NCCLConfig WaitSignalDesc NCCLDevCommRequirements
Communicator RegisteredBufferHandle RegisteredWindowHandle CustomRedOp
DevCommResource group group_start group_end GroupSimInfo Version get_version
get_lib_version get_lib_path UniqueId get_unique_id get_error_string mem_alloc
mem_free cupy torch"
methods="__init__ init init_all initialize split shrink get_unique_id grow destroy
abort finalize revoke suspend resume ptr is_valid nranks device rank cuda_dev
nvml_dev device_api_support multimem_support gin_type n_lsa_teams
host_rma_support railed_gin_type send recv wait_signal signal put_signal
allreduce broadcast reduce allgather reduce_scatter alltoall gather scatter
register_buffer register_window create_pre_mul_sum create_dev_comm
close_all_resources get_last_error get_async_error get_mem_stat __repr__"
resources="CommResource.close CommResource.is_valid RegisteredBufferHandle.handle
RegisteredBufferHandle.size RegisteredWindowHandle.handle RegisteredWindowHandle.size
RegisteredWindowHandle.user_ptr RegisteredWindowHandle.get_lsa_device_pointer
RegisteredWindowHandle.get_peer_device_pointer
RegisteredWindowHandle.get_lsa_multimem_device_pointer CustomRedOp.op
DevCommResource.ptr DevCommResource.dev_comm NcclBuffer.ptr NcclBuffer.count
NcclBuffer.dtype NcclBuffer.device_id NcclDataType.from_numpy_dtype
NcclDataType.numpy_dtype"
awk -F'|' '{ print $2 }' "$tmp/rows" | tr -d ' `' > "$tmp/first"
missing=
for name in $core $(for m in $methods; do echo "Communicator.$m"; done) $resources; do
  grep -qxF "$name" "$tmp/first" || missing="$missing $name"
done
if test -z "$missing"; then
  echo "ok 2 - every nccl.core name, Communicator method and resource method has a row"
else
  echo "not ok 2 - nccl.core names without a row in docs/api-coverage.md:$missing"
  fail=1
fi

# ---- 3. a row without a counterpart says why
bad=$(awk -F'|' '$3 ~ /—/ && $4 ~ /^ *$/ { print $2 }' "$tmp/rows")
if test -z "$bad"; then
  echo "ok 3 - every row without a C counterpart gives its reason"
else
  echo "not ok 3 - rows with neither a counterpart nor a reason:$bad"
  fail=1
fi
echo "1..3"
exit $fail
