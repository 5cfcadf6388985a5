# n4c.m4 -- local Autoconf macros of nccl4c.                -*- Autoconf -*-

# N4C_APPEND_FLAG(VARIABLE, FLAG)
# -------------------------------
# Append FLAG to the shell VARIABLE if the current language's compiler
# accepts it (tried with -Werror, so that "unknown option" warnings count).
AC_DEFUN([N4C_APPEND_FLAG],
[AS_VAR_PUSHDEF([n4c_cv], [n4c_cv_flag_[]_AC_LANG_ABBREV[]_$2])dnl
AC_CACHE_CHECK([whether _AC_LANG compiler accepts $2], [n4c_cv],
  [n4c_save_flags=$[]_AC_LANG_PREFIX[]FLAGS
   _AC_LANG_PREFIX[]FLAGS="$[]_AC_LANG_PREFIX[]FLAGS -Werror $2"
   AC_COMPILE_IFELSE([AC_LANG_PROGRAM()],
     [AS_VAR_SET([n4c_cv], [yes])], [AS_VAR_SET([n4c_cv], [no])])
   _AC_LANG_PREFIX[]FLAGS=$n4c_save_flags])
AS_VAR_IF([n4c_cv], [yes], [$1="${$1:+$$1 }$2"])
AS_VAR_POPDEF([n4c_cv])dnl
])

# N4C_LINK_FLAGS_IFELSE(FLAGS, [ACTION-IF-OK], [ACTION-IF-NOT])
# -------------------------------------------------------------
# Try to compile and link an empty program with FLAGS in both CFLAGS and
# LDFLAGS (for options such as -fsanitize= and --coverage).
AC_DEFUN([N4C_LINK_FLAGS_IFELSE],
[n4c_save_CFLAGS=$CFLAGS n4c_save_LDFLAGS=$LDFLAGS
CFLAGS="$CFLAGS $1" LDFLAGS="$LDFLAGS $1"
AC_LINK_IFELSE([AC_LANG_PROGRAM()], [n4c_link_ok=yes], [n4c_link_ok=no])
CFLAGS=$n4c_save_CFLAGS LDFLAGS=$n4c_save_LDFLAGS
AS_IF([test "x$n4c_link_ok" = xyes], [$2], [$3])
])

# N4C_LIBDIR(PREFIX)
# ------------------
# Set n4c_libdir to PREFIX/lib64 if it exists, else PREFIX/lib.
AC_DEFUN([N4C_LIBDIR],
[AS_IF([test -d "$1/lib64"], [n4c_libdir="$1/lib64"], [n4c_libdir="$1/lib"])])
