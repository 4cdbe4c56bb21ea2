#!/bin/sh
# The public API of the two libraries (docs/library.md):
#  - every public header compiles on its own with -std=c11 -pedantic
#    -Wall -Wextra -Werror, with gcc and with clang;
#  - every public header is in exactly one umbrella: include/ibmcast/ibmcast.h
#    (libibmcast) or include/ibmcast/sim.h (libibmcast-sim);
#  - each shared library exports exactly the functions its headers declare,
#    both ways (read from the headers by the compiler: gcc -aux-info);
#  - libibmcast holds no simulator symbol and does not need libibmcast-sim
#    (which calls libibmcast through its public API only: it links with
#    -Wl,--no-undefined); ibmcastd links libibmcast only, the ibmcast
#    command both.
set -eu
build=$1
src=$(cd "$2" && pwd)
inc=$src/include/ibmcast
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
err() { echo "public_api: $*"; fail=1; }

compilers=
for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 && compilers="$compilers $cc"
done
[ -n "$compilers" ] || { echo "public_api: neither gcc nor clang"; exit 1; }
umad_inc=$(sed -n 's/^UMAD_INCLUDE_DIR:PATH=//p' "$build/CMakeCache.txt")
for h in "$inc"/*.h; do
	for cc in $compilers; do
		printf '#include "%s"\n' "$h" | $cc -std=c11 -pedantic -Wall -Wextra \
			-Werror -I"$src/include" ${umad_inc:+-I"$umad_inc"} \
			-fsyntax-only -x c - ||
			err "$(basename "$h") does not compile on its own with $cc -pedantic"
	done
done

# Umbrellas: which headers each includes (directly).
includes() { sed -n 's|^#include "ibmcast/\(.*\.h\)"$|\1|p' "$inc/$1" | sort -u; }
includes ibmcast.h >"$tmp/host.h"
includes sim.h | grep -vx ibmcast.h >"$tmp/sim.h"
(cd "$inc" && ls *.h) | grep -vx 'ibmcast.h' | grep -vx 'sim.h' >"$tmp/all.h"
sort "$tmp/host.h" "$tmp/sim.h" | uniq -d | sed 's/^/in both umbrellas: /' >"$tmp/e"
sort "$tmp/host.h" "$tmp/sim.h" | comm -13 - "$tmp/all.h" | sed 's/^/in no umbrella: /' >>"$tmp/e"
[ ! -s "$tmp/e" ] || { cat "$tmp/e"; fail=1; }

# Functions declared in one header, as the compiler reads them.
declared() {
	for h in $(cat "$1"); do
		printf '#include "ibmcast/%s"\n' "$h" >"$tmp/d.c"
		gcc -std=c11 -I"$src/include" -c -o "$tmp/d.o" -aux-info "$tmp/d.aux" "$tmp/d.c"
		grep -F "/* $inc/$h:" "$tmp/d.aux" |
			sed -n 's|^/\* [^ ]* \*/ extern [^(]*[^a-zA-Z0-9_]\(imc_[a-zA-Z0-9_]*\) (.*|\1|p'
	done | LC_ALL=C sort -u
}
declared "$tmp/host.h" >"$tmp/host.decl"
declared "$tmp/sim.h" >"$tmp/sim.decl"
# Exported: name@@VERSION of each defined dynamic symbol.
exported() { # lib node
	nm -D --defined-only "$1" | awk -v v="@@$2" \
		'$2 != "A" && index($3, v) { sub(/@@.*/, "", $3); print $3 }' | LC_ALL=C sort -u
}
host=$(ls "$build"/libibmcast.so.* 2>/dev/null | head -n 1)
sim=$(ls "$build"/libibmcast-sim.so.* 2>/dev/null | head -n 1)
[ -n "$host" ] && [ -n "$sim" ] || { echo "public_api: shared libraries missing in $build"; exit 1; }
check_exports() { # name lib node decl
	exported "$2" "$3" >"$tmp/$1.exp"
	LC_ALL=C comm -23 "$4" "$tmp/$1.exp" | sed "s/^/declared, not exported by $1: /" >"$tmp/e"
	LC_ALL=C comm -13 "$4" "$tmp/$1.exp" | sed "s/^/exported by $1, not declared: /" >>"$tmp/e"
	# Anything else the library exports (unversioned or another node).
	nm -D --defined-only "$2" | awk '$2 != "A" {print $3}' |
		grep -v "@@$3\$" |
		sed "s/^/exported by $1 outside its nodes: /" >>"$tmp/e" || true
	[ ! -s "$tmp/e" ] || { cat "$tmp/e"; fail=1; }
	echo "$1: $(wc -l <"$tmp/$1.exp") functions exported == declared"
}
check_exports libibmcast "$host" IBMCAST_0 "$tmp/host.decl"
check_exports libibmcast-sim "$sim" IBMCAST_SIM_0 "$tmp/sim.decl"
[ "$(wc -l <"$tmp/host.decl")" -gt 100 ] || err "libibmcast declares too few functions"
[ "$(wc -l <"$tmp/sim.decl")" -gt 50 ] || err "libibmcast-sim declares too few functions"

# No simulator in the host library: none of its symbols, no link to it.
nm -D --defined-only "$host" | awk '{sub(/@@.*/, "", $3); print $3}' | LC_ALL=C sort -u >"$tmp/host.all"
LC_ALL=C comm -12 "$tmp/host.all" "$tmp/sim.decl" | sed 's/^/simulator symbol in libibmcast: /' >"$tmp/e"
[ ! -s "$tmp/e" ] || { cat "$tmp/e"; fail=1; }
! readelf -d "$host" | grep -q 'NEEDED.*libibmcast-sim' || err "libibmcast needs libibmcast-sim"
readelf -d "$sim" | grep -q 'NEEDED.*\[libibmcast\.so' || err "libibmcast-sim does not link libibmcast"
# The daemon is a host program; the command runs the simulator too.
nm "$build/ibmcastd" | awk 'NF == 3 {print $3}' | LC_ALL=C sort -u >"$tmp/daemon"
LC_ALL=C comm -12 "$tmp/daemon" "$tmp/sim.decl" | sed 's/^/simulator symbol in ibmcastd: /' >"$tmp/e"
[ ! -s "$tmp/e" ] || { cat "$tmp/e"; fail=1; }
! ldd "$build/ibmcastd" | grep -q libibmcast-sim || err "ibmcastd links libibmcast-sim"
LC_ALL=C comm -12 "$tmp/daemon" "$tmp/host.decl" | grep -qx imc_mcast_create ||
	err "ibmcastd does not hold libibmcast's imc_mcast_create (nm check is void)"
nm "$build/ibmcast" | grep -q ' T imc_fabric_create$' || err "ibmcast does not link libibmcast-sim"
echo "headers checked: $(wc -l <"$tmp/all.h") with$compilers"
exit $fail
