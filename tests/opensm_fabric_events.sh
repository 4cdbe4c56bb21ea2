#!/bin/bash
# OpenSM on the embedded fabric when things happen (examples/ibsim-2sw.net:
# Switch1 and Switch2 joined by two cables, ports 3 and 5):
#  - a cable pulled: the switches' SMAs send trap 128, OpenSM sweeps and
#    routes every LID of the far side over the other cable, and LID-routed
#    SMPs and PMA queries to the far side work again; plugged back, OpenSM
#    uses it again;
#  - OpenSM killed with SIGKILL (no goodbye to the server) and started
#    again on the same node: it is taken as the node's SM, reaches SUBNET
#    UP, and its SA answers.
# Arguments: build directory, source directory.
set -u
# shellcheck source-path=SCRIPTDIR source=lib/opensm_fabric.sh
. "$(dirname "$(realpath "$0")")/lib/opensm_fabric.sh" "$@"
osmf_tools

dir=$(mktemp -d "${TMPDIR:-/tmp}/osmf.XXXXXX") || exit 1
trap '"$harness" stop "$dir/h"; cd /; [ -n "${FABRIC_HARNESS_KEEP:-}" ] || rm -rf "$dir"' EXIT
out=$("$harness" start --timeout 240 --owner $$ "$src/examples/ibsim-2sw.net" "$dir/h" \
	2> "$dir/start.err") || {
	rc=$?; cat "$dir/start.err"; tail -n 20 "$dir"/h/*.log
	[ $rc -eq 77 ] && grep -q "not installed\|not found" "$dir/start.err" &&
		exit 77
	exit 1
}
eval "$out"
cd "$dir/h" || exit 1

ibnetdiscover > disc.txt 2>/dev/null
sw1=$(sed -n 's/^Switch.*"Switch1" base port 0 lid \([0-9]*\) .*/\1/p' disc.txt)
far=$(sed -n 's/.*"Hca2" lid \([0-9]*\) .*/\1/p' disc.txt | head -n 1)
echo "Switch1 lid $sw1, Hca2 lid $far"
check "ibnetdiscover finds Switch1 and Hca2" '[ -n "$sw1" ] && [ -n "$far" ]'

# Out port of Switch1's LFT for LID $2 ($1: Switch1's LID).
route_of() {
	ibroute "$1" 2>/dev/null | awk -v l="$(printf '0x%04x' "$2")" '$1 == l { print $2 + 0 }'
}
# Waits up to 30 s for `route_of` to satisfy the test in $3.
wait_route() {
	local p
	for _ in $(seq 150); do
		p=$(route_of "$1" "$2")
		eval "$3" && { echo "$p"; return 0; }
		sleep 0.2
	done
	echo "$p"
	return 1
}

p0=$(route_of "$sw1" "$far")
check "Hca2 is reached from Switch1 over an inter-switch cable (port $p0)" \
	'[ "$p0" = 3 ] || [ "$p0" = 5 ]'
other=$(( p0 == 3 ? 5 : 3 ))
traps0=$(grep -c 'trap 128\|Trap 128\|num:128\|TrapNum 128' osm.log)

echo "link Switch1 $p0 down" > control
p1=$(wait_route "$sw1" "$far" '[ "$p" = "$other" ]')
check "cable Switch1[$p0] pulled: OpenSM reroutes Hca2 over port $other ($p1)" \
	'[ "$p1" = "$other" ]'
grep -q "ok link Switch1 $p0 down" serve.log
check "the server pulled the cable" '[ $? -eq 0 ]'
traps1=$(grep -c 'trap 128\|Trap 128\|num:128\|TrapNum 128' osm.log)
grep -i 'trap\|notice' osm.log | tail -n 3
check "OpenSM logged the trap ($traps0 -> $traps1)" '[ "$traps1" -gt "$traps0" ]'
guid=$(smpquery nodeinfo "$far" 2>/dev/null | sed -n 's/^PortGuid:\.*//p')
check "LID-routed SMPs reach Hca2 again ($guid)" '[ "$guid" = 0x0000000000100004 ]'
check "perfquery reaches Hca2 again" 'perfquery "$far" 1 2>/dev/null | grep -q PortXmitPkts'

echo "link Switch1 $p0 up" > control
# OpenSM balances the far side's LIDs over both cables again.
used=
for _ in $(seq 150); do
	used=$(ibroute "$sw1" 2>/dev/null | awk -v p="$p0" '$2 + 0 == p' | wc -l)
	[ "$used" -gt 0 ] && break
	sleep 0.2
done
check "cable plugged back: Switch1 routes over port $p0 again ($used LIDs)" \
	'[ "$used" -gt 0 ]'

# SIGKILL: OpenSM cannot say goodbye.
osm=$(cat opensm.pid)
kill -KILL "$osm"
while kill -0 "$osm" 2>/dev/null; do sleep 0.05; done
( SIM_HOST='' OSM_TMP_DIR=$PWD OSM_CACHE_DIR=$PWD exec opensm -d2 -f "$PWD/osm2.log" ) \
	> osm2.out 2>&1 < /dev/null &
echo $! > opensm.pid
up=0
for _ in $(seq 400); do
	grep -q 'SUBNET UP' osm2.log 2>/dev/null && { up=1; break; }
	kill -0 "$(cat opensm.pid)" 2>/dev/null || break
	sleep 0.05
done
check "OpenSM started again after SIGKILL reaches SUBNET UP" '[ $up -eq 1 ]'
[ $up -eq 1 ] || tail -n 5 osm2.out osm2.log
check "its SA answers (saquery NR $far)" \
	'saquery -t 4000 NR "$far" 2>/dev/null | grep -q "port_guid.*0x0000000000100004"'
"$harness" stop "$dir/h"
check "no sanitizer report from the server" '! grep -q Sanitizer serve.log'
exit $fail
