#!/bin/bash
# examples/c/umad_join, built from an installed prefix with pkg-config
# (libibmcast only), joins a group on a simulated HCA through libibumad
# (umad2sim) against OpenSM on ibsim; saquery sees the membership while
# it is held. Skipped (77, with the reason) without ibsim/OpenSM.
# Arguments: build directory, source directory.
set -u
. "$(dirname "$0")/lib/example_build.sh"
if [ -z "${IBSIM_HARNESS_DIR:-}" ]; then
	command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: pkg-config not installed"; exit 77; }
	command -v make >/dev/null 2>&1 || { echo "SKIP: make not installed"; exit 77; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cmake --install "$build" --prefix "$tmp/prefix" >/dev/null || { echo "install failed"; exit 1; }
	pcdir=$(dirname "$(find "$tmp/prefix" -name ibmcast.pc)")
	mkdir "$tmp/ex"
	cp "$src"/examples/c/umad_join.c "$src"/examples/c/Makefile "$tmp/ex/"
	PKG_CONFIG_PATH=$pcdir make -C "$tmp/ex" CC="$cc" CFLAGS="-O1 -g $san" umad_join >/dev/null ||
		{ echo "FAIL umad_join does not build from the installed prefix"; exit 1; }
	cat > "$tmp/net" <<-'NET'
	Hca	1 "Hca1"
	[1]	"Switch1"[1]

	Switch	8 "Switch1"
	[1]	"Hca1"[1]
	[2]	"Hca2"[1]

	Hca	1 "Hca2"
	[1]	"Switch1"[2]
	NET
	EXAMPLE=$tmp/ex/umad_join \
	EXAMPLE_LIBDIR=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir ibmcast) \
		"$src/scripts/ibsim-harness.sh" run --timeout 90 "$tmp/net" -- \
		bash "$(realpath "$0")" "$build" "$src"
	exit $?
fi

fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
out=$(SIM_HOST=Hca2 LD_LIBRARY_PATH=$EXAMPLE_LIBDIR timeout 30 "$EXAMPLE" ff12:1234::8)
rc=$?
echo "$out"
check "umad_join exits 0" '[ $rc -eq 0 ]'
check "the port of Hca2 with a LID" 'echo "$out" | grep -qE "^port fe80::[0-9a-f:]+ lid [1-9][0-9]*$"'
check "joined: OpenSM's record with the asked Q_Key and P_Key, a multicast LID" \
	'echo "$out" | grep -qE "^joined ff12:1234::8 mlid 0xc[0-9a-f]{3} qkey 0x1234 pkey 0xffff sl [0-9]+$"'
mlid=$(echo "$out" | sed -n 's/^joined .* mlid \(0x[0-9a-f]*\) .*/\1/p')
check "the send AV: DLID = the MLID, the multicast QPN" \
	'echo "$out" | grep -qE "^send av: dlid $mlid qpn 0xffffff hop_limit [0-9]+$"'
check "left" 'echo "$out" | tail -n 1 | grep -qx left'
if command -v saquery >/dev/null 2>&1; then
	g=$(SIM_HOST=Hca1 saquery -g 2>/dev/null)
	check "after the leave OpenSM holds no ff12:1234::8" '! echo "$g" | grep -q "ff12:1234::8$"'
fi
exit $fail
