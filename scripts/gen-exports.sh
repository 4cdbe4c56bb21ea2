#!/bin/sh
# Writes the export lists of the two shared libraries from their public
# headers, so that each exports exactly what its umbrella header declares:
#   scripts/gen-exports.sh SRCDIR OUTDIR CC
# OUTDIR gets ibmcast.syms and ibmcast-sim.syms (the functions declared
# by include/ibmcast/ibmcast.h and, beyond those, by include/ibmcast/sim.h)
# and the version scripts libibmcast.map and libibmcast-sim.map.
#
# The declarations are read by the compiler (gcc's -aux-info lists every
# function prototype with the file it comes from), not by pattern, so a
# name in a comment or a macro is not taken for a function.
#
# libibmcast-sim.so links libibmcast.so, so whatever of the host library
# the simulator calls must be declared in a public header of the host
# library (else the link of libibmcast-sim.so fails, -Wl,--no-undefined).
# src/util is linked into both, hidden: private helpers both sides use.
set -eu
src=$1 out=$2 cc=$3
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

node() { # name file [local]
	printf '%s {\n  global:\n' "$1"
	sed 's/.*/    &;/' "$2"
	[ -z "${3:-}" ] || printf '  local:\n    *;\n'
	printf '};\n'
}
{
	echo "/* Written by scripts/gen-exports.sh from include/ibmcast/ibmcast.h. */"
	node IBMCAST_0 "$tmp/host" local
} >"$tmp/libibmcast.map"
{
	echo "/* Written by scripts/gen-exports.sh from include/ibmcast/sim.h. */"
	node IBMCAST_SIM_0 "$tmp/sim" local
} >"$tmp/libibmcast-sim.map"
cp "$tmp/host" "$tmp/ibmcast.syms"
cp "$tmp/sim" "$tmp/ibmcast-sim.syms"
# Rewritten only when changed, so that the libraries relink only then.
for f in libibmcast.map libibmcast-sim.map ibmcast.syms ibmcast-sim.syms; do
	cmp -s "$tmp/$f" "$out/$f" 2>/dev/null || cp "$tmp/$f" "$out/$f"
done
