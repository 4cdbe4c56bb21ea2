#!/bin/bash
# The C examples (examples/c) as an application developer builds them:
# the build is installed into a temporary prefix, the examples are copied
# out of the tree and built there by their Makefile with nothing but
# pkg-config (ibmcast, ibmcast-sim), then run; their output values are
# checked. umad_join, a host program, links libibmcast alone; it runs
# against OpenSM in examples_c_umad.sh.
# Arguments: build directory, source directory.
set -u
. "$(dirname "$0")/lib/example_build.sh"
command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: pkg-config not installed"; exit 77; }
command -v make >/dev/null 2>&1 || { echo "SKIP: make not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # DESCRIPTION SHELL-CONDITION
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null || { echo "install failed"; exit 1; }
pcdir=$(dirname "$(find "$tmp/prefix" -name ibmcast-sim.pc)")
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir ibmcast)
mkdir "$tmp/ex"
cp "$src"/examples/c/*.c "$src"/examples/c/Makefile "$tmp/ex/"
if ! PKG_CONFIG_PATH=$pcdir make -C "$tmp/ex" CC="$cc" CFLAGS="-O1 -g $san" >"$tmp/make.log" 2>&1; then
	cat "$tmp/make.log"
	echo "FAIL the examples do not build from the installed prefix"
	exit 1
fi
echo "ok   the examples build with pkg-config from $tmp/prefix"
check "umad_join links libibmcast, not libibmcast-sim" \
	'LD_LIBRARY_PATH=$libdir ldd "$tmp/ex/umad_join" | grep -q "libibmcast\.so.* => $libdir/" &&
	 ! ldd "$tmp/ex/umad_join" | grep -q libibmcast-sim'
check "mcast_fabric links libibmcast-sim from the prefix" \
	'LD_LIBRARY_PATH=$libdir ldd "$tmp/ex/mcast_fabric" | grep -q "libibmcast-sim\.so.* => $libdir/"'

out=$(cd "$tmp/ex" && LD_LIBRARY_PATH=$libdir ./mcast_fabric)
rc=$?
echo "$out"
check "mcast_fabric exits 0" '[ $rc -eq 0 ]'
check "both hosts joined ff12:1234::7 with its Q_Key and a multicast LID" \
	'[ "$(echo "$out" | grep -cE "^host[12]: joined ff12:1234::7 mlid 0xc[0-9a-f]{3} qkey 0x1234$")" = 2 ]'
mlid=$(echo "$out" | sed -n 's/^host1: joined .* mlid \(0x[0-9a-f]*\) .*/\1/p')
check "host2 received the datagram, sent to the group's MLID" \
	'echo "$out" | grep -qx "host2: received \"hello, group\" from lid [0-9]* to mlid $mlid"'
check "the sender does not receive its own datagram" '! echo "$out" | grep -q "^host1: received"'
check "nothing left on the loop" 'echo "$out" | grep -qx "objects left on the loop: 0"'

out=$(cd "$tmp/ex" && LD_LIBRARY_PATH=$libdir ./ipoib_ping)
rc=$?
echo "$out"
check "ipoib_ping exits 0" '[ $rc -eq 0 ]'
check "the interface is up" 'echo "$out" | grep -qx "10.0.0.1: up"'
check "two echo replies from 10.0.0.2, in order" \
	'[ "$(echo "$out" | sed -n "s/^12 bytes from 10.0.0.2: icmp_seq=\([0-9]\) time=[0-9]* us$/\1/p" | tr -d "\n")" = 12 ]'
check "nothing left on the loop" 'echo "$out" | grep -qx "objects left on the loop: 0"'
exit $fail
