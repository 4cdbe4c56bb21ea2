#!/bin/bash
# umad2sim (ibsim's LD_PRELOAD shim for libibumad) against `ibmcast fabric
# serve`: the control messages it sends when a process opens a port
# (CONNECT, GET_VENDOR, GET_NODEINFO, GET_PORTINFO, GET_PKEYS) give the
# fake sysfs that ibstat reads: the node and port GUIDs of the net file,
# the node the client asked for with SIM_HOST, and the default node (the
# first of the file) without it. More processes than ibsim's ten clients
# hold a port at once. Arguments: build directory, source directory.
set -u
build=$(realpath "${1:?build directory}")
src=$(realpath "${2:?source directory}")
harness=$src/scripts/fabric-harness.sh
net=$src/examples/ibsim-2sw.net
fail=0

check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

if [ -z "${FABRIC_HARNESS_DIR:-}" ]; then
	command -v ibstat >/dev/null 2>&1 ||
		{ echo "SKIP: ibstat (infiniband-diags) not installed"; exit 77; }
	IBMCAST=$build/ibmcast exec "$harness" run --no-sm --timeout 60 \
		"$net" -- bash "$(realpath "$0")" "$build" "$src"
fi

out=$(ibstat 2>/dev/null)
echo "$out" | sed 's/^/  /'
check "default node is the file's first, Hca1 (GUID 0x100000)" \
	'echo "$out" | grep -q "Node GUID: 0x0000000000100000"'
check "its port 1 GUID is 0x100001" \
	'echo "$out" | grep -q "Port GUID: 0x0000000000100001"'

out=$(SIM_HOST=Hca3 ibstat 2>/dev/null)
check "SIM_HOST=Hca3: node GUID 0x100006" \
	'echo "$out" | grep -q "Node GUID: 0x0000000000100006"'
check "SIM_HOST=Hca3: port GUID 0x100007" \
	'echo "$out" | grep -q "Port GUID: 0x0000000000100007"'
out=$(SIM_HOST=Switch2 ibstat 2>/dev/null)
check "SIM_HOST=Switch2: a switch (GUID 0x200001)" \
	'echo "$out" | grep -q "Node GUID: 0x0000000000200001"'
out=$(SIM_HOST=NoSuchNode timeout 10 ibstat 2>&1)
check "SIM_HOST=NoSuchNode is refused" '! echo "$out" | grep -q "Node GUID"'

# Sixteen processes attached at once (ibsim has ten slots): ibping -S
# answers pings until killed, holding its client all along.
log=$FABRIC_HARNESS_DIR/serve.log
base=$(grep -c '^attach slot' "$log")
pids=()
for i in $(seq 16); do
	SIM_HOST=Hca$(( (i - 1) % 4 + 1 )) ibping -S > "ibping.$i" 2>&1 &
	pids+=($!)
done
n=0
for _ in $(seq 200); do
	n=$(( $(grep -c '^attach slot' "$log") - base ))
	[ "$n" -ge 16 ] && break
	sleep 0.05
done
# The ibstat runs above came and went; their slots are handed out again,
# so sixteen holders at once need slots 0..15.
top=$(sed -n 's/^attach slot \([0-9]*\) .*/\1/p' "$log" | sort -n | tail -n 1)
alive=0
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
check "16 ibping servers attached at once (attaches $n, top slot $top, alive $alive)" \
	'[ "$top" -ge 15 ] && [ "$alive" -eq 16 ]'
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
exit $fail
