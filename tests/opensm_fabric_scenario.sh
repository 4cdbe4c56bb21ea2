#!/bin/bash
# A scenario with OpenSM as its SM and SA: examples/opensm-fabric.scn run
# by `ibmcast run` (the opensm line serves the fabric and starts OpenSM on
# it), held after its end so that saquery, through umad2sim on the same
# served fabric, can read OpenSM's SA: the groups the scenario joined
# must be there with the members it joined. Then the run's JSON report:
# every expectation held, and the values that show OpenSM's answers and
# tables were used; then OpenSM and its directory cleaned up when the run
# gets SIGTERM or SIGINT. Real time: no timing is asserted. Arguments: build
# dir, source dir.
# check() evals its condition later; cleanup runs from the trap.
# shellcheck disable=SC2016,SC2317,SC2094
set -u
build=$(realpath "${1:?build directory}")
src=$(realpath "${2:?source directory}")
IMC=$build/ibmcast
U2S=${IBMCAST_UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
fail=0

check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

for t in opensm saquery; do
	command -v $t >/dev/null 2>&1 || { echo "SKIP: $t not installed"; exit 77; }
done
[ -r "$U2S" ] || { echo "SKIP: umad2sim not found at $U2S (libumad2sim0)"; exit 77; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/osmscn.XXXXXX") || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	cd /
	[ -n "${IMC_TEST_KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir" || exit 1

# The example, held up to 120 s after its end (released below).
sed 's/^opensm wait=60s$/opensm wait=120s hold=120s/' \
	"$src/examples/opensm-fabric.scn" > run.scn
grep -q '^opensm wait=120s hold=120s$' run.scn || { echo "FAIL no opensm line"; exit 1; }
# The private socket name the server and the clients below share.
export IBSIM_SOCKNAME="imcscnt$$"
timeout 300 "$IMC" run --json run.scn > run.json 2> run.err &
pid=$!
for _ in $(seq 1200); do
	grep -q '^opensm: holding' run.err && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
cat run.err
if ! grep -q '^opensm: holding' run.err; then
	wait $pid
	rc=$?
	pid=
	[ $rc -eq 77 ] && { echo "SKIP: ibmcast run: no OpenSM to run"; exit 77; }
	echo "FAIL the run did not reach its hold (exit $rc)"
	exit 1
fi
release=$(sed -n 's/^opensm: holding.*; touch \([^ ]*\) ends it$/\1/p' run.err)

# The port GID of a generated host: its caguid + 1 (topo_gen.c).
"$IMC" fabric net fat-tree:leaves=4,hosts=4,spines=2 > net
gid() {
	awk -v h="\"$1\"" '/^caguid=/ { g = substr($0, 8) }
		$1 == "Hca" && $3 == h { print g }' net |
		{ read -r g; printf 'fe80::2:c903:0:%x\n' $((g + 1 - 0x0002c90300000000)); }
}
# The JoinState OpenSM's SA holds for HOST in MGID's group (one record,
# asked by MGID and PortGID: umad2sim carries no RMPP, so an answer
# holds three records at most), or "none".
js() {
	local out g
	g=$(gid "$2")
	mkdir -p q
	out=$(cd q && LD_PRELOAD=$U2S timeout 30 saquery -t 4000 --smkey 1 \
		MCMR --mgid "$1" --gid "$g" 2>/dev/null)
	out=$(echo "$out" | sed -n 's/.*JoinState\.*//p' | head -n 1)
	echo "${out:-none}"
}
expect_js() {
	local got want=$3
	got=$(js "$1" "$2")
	check "OpenSM's SA: $2 in $1 has JoinState $want (got $got)" \
		'[ "$got" = "$want" ]'
}

# The sa-join lines: three FullMembers, a SendOnlyNonMember, no others.
for h in H-000013 H-000014 H-000015; do expect_js ff15::1:1 $h 0x1; done
expect_js ff15::1:1 H-000016 0x4
expect_js ff15::1:1 H-000012 none
expect_js ff15::1:2 H-000016 none
# 239.1.1.1's group (RFC 4391 MGID): the four listeners and no one else
# (the sender's send-only join was left, idle, seconds before the end).
for h in H-000003 H-000006 H-000009 H-000012; do
	expect_js ff12:401b:ffff::f01:101 $h 0x1
done
expect_js ff12:401b:ffff::f01:101 H-000002 none
expect_js ff12:401b:ffff::f01:101 H-000004 none
# The broadcast group: every interface, and no host without IPoIB.
for h in H-000002 H-000007 H-000012; do
	expect_js ff12:401b:ffff::ffff:ffff $h 0x1
done
expect_js ff12:401b:ffff::ffff:ffff H-000013 none

touch "$release"
wait $pid
rc=$?
pid=
check "ibmcast run exits 0 (every expectation held)" '[ $rc -eq 0 ]'
check "OpenSM reported SUBNET UP with every port ACTIVE" \
	'grep -q "^opensm: SUBNET UP, every port ACTIVE after " run.err'
n=$(grep -c '^\(at [^ ]* \)\{0,1\}expect ' "$src/examples/opensm-fabric.scn")
check "the report: all $n expectations passed" \
	'python3 -c "import json,sys; r=json.load(open(\"run.json\")); sys.exit(0 if (r[\"passed\"], r[\"failed\"], r[\"skipped\"]) == ($n, 0, 0) else 1)"'
for h in H-000013 H-000014 H-000015; do
	check "the report: $h received the send-only member's 3 datagrams once" \
		'grep -q "{\"name\": \"$h\", \"port\": 1, \"sent\": 0, \"send_errors\": 0, \"delivered\": 3, \"dups\": 0}" run.json'
done
check "the report: H-000016 sent 3 and received none" \
	'grep -q "{\"name\": \"H-000016\", \"port\": 1, \"sent\": 3, \"send_errors\": 0, \"delivered\": 0, \"dups\": 0}" run.json'
check "the report's opensm section: OpenSM at H-000001, the subnet up after some ns" \
	'grep -Eq "\"opensm\": \{\"node\": \"H-000001\", \"subnet_up_ns\": [1-9][0-9]*, \"restarts\": 0\}" run.json'
check "the built-in SA reports nothing (it stepped aside)" \
	'! grep -q "\"sa\": {" run.json'

# The engine's views are refused with a clear error.
printf '%s\n' "topology fat-tree:leaves=4,hosts=4,spines=2" "stop 1s" \
	"opensm wait=120s" sa "at 500ms sa-show" > show.scn
timeout 120 "$IMC" run show.scn > show.out 2> show.err
rc=$?
cat show.err
check "sa-show with OpenSM's SA: an error naming the line" \
	'[ $rc -eq 1 ] && grep -q "show.scn:5: sa-show: the SA is the external SM" show.err'
# OpenSM killed and started again (opensm-restart): the new OpenSM sets
# ClientReregister on every port, and every IPoIB interface joins again
# (carrier down, then up) through the new SA, whose groups start empty.
printf '%s\n' "topology fat-tree:leaves=4,hosts=4,spines=2" "stop 8s" \
	"opensm wait=120s" sa ipoib "at 0 ipoib-up H-000002..H-000008 10.0.0.2/24" \
	"at 2s expect ipoib-carrier H-000008 == up" \
	"at 2s expect ipoib-counter H-000002 carrier-changes == 1" \
	"at 2500ms opensm-restart" \
	"at 7s ping H-000002 10.0.0.8 count=5 interval=10ms" \
	"expect ping-replies H-000002 == 5" \
	"expect ipoib-carrier H-000002 == up" \
	"expect ipoib-counter H-000002 carrier-changes == 3" > restart.scn
timeout 120 "$IMC" run --json restart.scn > restart.json 2> restart.err
rc=$?
cat restart.err
check "opensm-restart: the run's expectations hold" '[ $rc -eq 0 ]'
check "opensm-restart: the report counts one restart" \
	'grep -q "\"opensm\": {\"node\": \"H-000001\", \"subnet_up_ns\": [0-9]*, \"restarts\": 1}" restart.json'
check "opensm-restart: all 7 trackers joined, then re-joined through the new SA" \
	'grep -q "\"first\": {\"joined\": 7, \"failed\": 0," restart.json &&
	 grep -q "\"rejoin\": {\"joined\": 7, \"failed\": 0," restart.json'
# SIGTERM or SIGINT to `ibmcast run` during the run: the run ends there,
# OpenSM is stopped and its temporary directory removed before the
# process exits by the signal (128 + its number).
printf '%s\n' "topology fat-tree:leaves=4,hosts=4,spines=2" "stop 300s" \
	"opensm wait=120s" sa > sig.scn
for sig in TERM INT; do
	mkdir -p "sig$sig"
	TMPDIR="$dir/sig$sig" "$IMC" run sig.scn > "sig$sig.out" 2> "sig$sig.err" &
	pid=$!
	for _ in $(seq 1200); do
		grep -q '^opensm: SUBNET UP' "sig$sig.err" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	osm=$(pgrep -f "$dir/sig$sig/ibmcast-opensm" | head -n 1)
	check "SIG$sig: OpenSM runs in a temporary directory before the signal" \
		'[ -n "$osm" ] && ls -d "$dir/sig$sig"/ibmcast-opensm.* >/dev/null 2>&1'
	kill -$sig $pid
	for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		kill -KILL $pid
		check "SIG$sig: ibmcast run exits within 30 s" false
	fi
	wait $pid
	rc=$?
	pid=
	want=$((128 + $(kill -l $sig)))
	check "SIG$sig: ibmcast run exits by the signal (status $want, got $rc)" \
		'[ $rc -eq $want ]'
	check "SIG$sig: OpenSM is gone" \
		'[ -n "$osm" ] && ! kill -0 "$osm" 2>/dev/null'
	check "SIG$sig: its temporary directory is removed" \
		'! ls -d "$dir/sig$sig"/ibmcast-opensm.* >/dev/null 2>&1'
done
exit $fail
