#!/bin/sh
# Writes the export lists of the two shared libraries from their public
# headers, so that each exports exactly what its umbrella header declares:
#   scripts/gen-exports.sh SRCDIR OUTDIR CC HOST_OBJS... -- SIM_OBJS...
# OUTDIR gets ibmcast.syms and ibmcast-sim.syms (the functions declared
# by include/ibmcast/ibmcast.h and, beyond those, by include/ibmcast/sim.h)
# and the version scripts libibmcast.map and libibmcast-sim.map.
#
# The declarations are read by the compiler (gcc's -aux-info lists every
# function prototype with the file it comes from), not by pattern, so a
# name in a comment or a macro is not taken for a function.
#
# libibmcast-sim.so links libibmcast.so; a function of the host library
# that the simulator calls but no public header declares is exported in a
# version node of its own, IBMCAST_PRIVATE_0 (as glibc's GLIBC_PRIVATE):
# not API, listed so that tests/public_api.sh can show it is nothing more.
set -eu
src=$1 out=$2 cc=$3
shift 3
host_objs=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	host_objs="$host_objs $1"
	shift
done
[ $# -gt 0 ] && shift
sim_objs="$*"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

# Functions declared in include/ibmcast/ by what umbrella header $1 includes.
declared() {
	printf '#include "ibmcast/%s"\n' "$1" >"$tmp/u.c"
	"$cc" -std=c11 -I"$src/include" -c -o "$tmp/u.o" -aux-info "$tmp/u.aux" "$tmp/u.c"
	grep -F "/* $src/include/ibmcast/" "$tmp/u.aux" |
		sed -n 's|^/\* [^ ]* \*/ extern [^(]*[^a-zA-Z0-9_]\(imc_[a-zA-Z0-9_]*\) (.*|\1|p' |
		LC_ALL=C sort -u
}
declared ibmcast.h >"$tmp/host"
declared sim.h | LC_ALL=C comm -23 - "$tmp/host" >"$tmp/sim"

# The host functions the simulator needs that are not public.
# shellcheck disable=SC2086
nm --defined-only $host_objs | awk 'NF == 3 && $2 ~ /[TDBR]/ {print $3}' |
	LC_ALL=C sort -u >"$tmp/hostdef"
# shellcheck disable=SC2086
nm -u $sim_objs | awk '{print $NF}' | LC_ALL=C sort -u |
	LC_ALL=C comm -12 - "$tmp/hostdef" | LC_ALL=C comm -23 - "$tmp/host" >"$tmp/private"

node() { # name file [local]
	printf '%s {\n  global:\n' "$1"
	sed 's/.*/    &;/' "$2"
	[ -z "${3:-}" ] || printf '  local:\n    *;\n'
	printf '};\n'
}
{
	echo "/* Written by scripts/gen-exports.sh from include/ibmcast/ibmcast.h. */"
	[ ! -s "$tmp/private" ] || node IBMCAST_PRIVATE_0 "$tmp/private"
	node IBMCAST_0 "$tmp/host" local
} >"$tmp/libibmcast.map"
{
	echo "/* Written by scripts/gen-exports.sh from include/ibmcast/sim.h. */"
	node IBMCAST_SIM_0 "$tmp/sim" local
} >"$tmp/libibmcast-sim.map"
cp "$tmp/host" "$tmp/ibmcast.syms"
cp "$tmp/sim" "$tmp/ibmcast-sim.syms"
cp "$tmp/private" "$tmp/ibmcast-private.syms"
# Rewritten only when changed, so that the libraries relink only then.
for f in libibmcast.map libibmcast-sim.map ibmcast.syms ibmcast-sim.syms ibmcast-private.syms; do
	cmp -s "$tmp/$f" "$out/$f" 2>/dev/null || cp "$tmp/$f" "$out/$f"
done
