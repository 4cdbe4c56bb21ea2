#!/bin/bash
# Messages a user can act on, and JSON of one type per key, against
# OpenSM on ibsim: a join answered INSUF_COMPS hints at --create; a query
# with SM_Key 0 whose records came back zeroed says so; a command with
# no port says how to get one; and the --json output of every command
# that has it (run, sa show/query/join/leave/send, storm, join, mcast show,
# up)
# holds one scalar type per key across all of them (P_Key a number).
# Arguments: build directory, source directory.
# Variables set below are read by the conditions that check() evaluates.
# shellcheck disable=SC2034
set -u
. "$(dirname "$(realpath "$0")")/lib/ibsim_test.sh" "$@"

command -v python3 >/dev/null 2>&1 ||
	{ echo "SKIP: python3 (for the JSON check) not installed"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

if [ -z "${IBSIM_HARNESS_DIR:-}" ] && [ ! -d /sys/class/infiniband_mad ]; then
	# No port at all: the hint names the ways to get one.
	"$ibmcast" sa query all >/dev/null 2>"$tmp/noport"
	rc=$?
	check "no port: exit 1" '[ $rc -eq 1 ]'
	check "no port: hint names --device and --port" \
		'grep -qF -- "--device NAME --port N" "$tmp/noport"'
	check "no port: hint names the ibsim harness and SIM_HOST" \
		'grep -qF "scripts/ibsim-harness.sh run" "$tmp/noport" &&
		 grep -qF "SIM_HOST=" "$tmp/noport"'
	[ $fail -eq 0 ] || exit 1
fi
# OpenSM on Hca1, clients on Hca2 and Hca3.
ibsim_rerun 120 3

# INSUF_COMPS: no group, no create components.
SIM_HOST=Hca2 "$ibmcast" sa join ff12:e001::7 >"$tmp/o" 2>"$tmp/e"
rc=$?
check "join of no group: exit 1, INSUF_COMPS" \
	'[ $rc -eq 1 ] && grep -q "^status 0x0600 INSUF_COMPS" "$tmp/o"'
check "... hints at --create" \
	'grep -qF "hint: INSUF_COMPS: no group ff12:e001::7 is there to join; --create" "$tmp/e"'
SIM_HOST=Hca2 "$ibmcast" sa join --create --qkey 0x1234 ff12:e001::7 --json \
	>"$tmp/j_sa_join.json" 2>"$tmp/e"
rc=$?
check "join --create: exit 0, no hint" '[ $rc -eq 0 ] && ! grep -q hint "$tmp/e"'
SIM_HOST=Hca3 "$ibmcast" sa join ff12:e001::7 >/dev/null 2>&1

# Untrusted (SM_Key 0): OpenSM zeroes PortGID, JoinState and ProxyJoin.
SIM_HOST=Hca2 "$ibmcast" sa query ff12:e001::7 >"$tmp/o" 2>"$tmp/e"
check "SM_Key 0: the note says the fields were zeroed" \
	'grep -qF "note: SM_Key 0 is untrusted: the SA zeroed PortGID, JoinState and ProxyJoin" "$tmp/e"'
check "... and names --smkey" 'grep -qF -- "--smkey KEY" "$tmp/e"'
SIM_HOST=Hca2 "$ibmcast" sa query --smkey 1 ff12:e001::7 \
	>"$tmp/o" 2>"$tmp/e"
check "SM_Key 1: members listed, no note" \
	'[ "$(grep -c "^  member" "$tmp/o")" = 2 ] && ! grep -q note "$tmp/e"'

# storm --duration on a terminal (a pty from script(1)): progress on
# stderr, then the report.
if command -v script >/dev/null 2>&1; then
	SIM_HOST=Hca2 script -qec "'$ibmcast' storm --duration 1.5 --rate 200" \
		/dev/null >"$tmp/pty" 2>&1
	rc=$?
	check "storm on a pty: exit 0" '[ $rc -eq 0 ]'
	check "storm on a pty: progress line" \
		'grep -q "ibmcast storm: [0-9.]* s of 2 s, [0-9]* cycles done" "$tmp/pty"'
	check "storm on a pty: report" 'grep -q "^end stopped=duration" "$tmp/pty"'
else
	echo "SKIP part: no script(1) (bsdutils) for a pty: progress not checked"
fi
SIM_HOST=Hca2 "$ibmcast" storm --duration 0.5 --rate 200 >/dev/null 2>"$tmp/e"
check "storm not on a terminal: no progress line" '! grep -q "cycles done" "$tmp/e"'

# JSON of every command.
SIM_HOST=Hca2 "$ibmcast" sa query --smkey 1 --json all >"$tmp/j_sa_query.json"
SIM_HOST=Hca2 "$ibmcast" sa send --json --method get --attr cpi \
	>"$tmp/j_sa_cpi.json" 2>/dev/null
SIM_HOST=Hca2 "$ibmcast" sa show --smkey 1 --json >"$tmp/j_sa_show.json" \
	2>/dev/null
"$ibmcast" sa show --scenario "$src/examples/sa-groups.scn" --json \
	>"$tmp/j_sa_show_scn.json" 2>/dev/null
SIM_HOST=Hca3 "$ibmcast" sa leave ff12:e001::7 --json \
	>"$tmp/j_sa_leave.json"
SIM_HOST=Hca2 "$ibmcast" storm --count 40 --json >"$tmp/j_storm.json"
check "storm --json ran" '[ -s "$tmp/j_storm.json" ]'
SIM_HOST=Hca2 "$ibmcast" join --json --duration 3 --audit 1 --run-dir "$tmp" \
	--create --qkey 0x1234 ff12:e001::8 >"$tmp/j_join.json" 2>/dev/null &
jpid=$!
sleep 1.5
SIM_HOST=Hca2 "$ibmcast" mcast show --run-dir "$tmp" --json \
	>"$tmp/j_mcast_show.json" 2>/dev/null
wait $jpid
check "join --json ran" '[ -s "$tmp/j_join.json" ]'
for f in "$src"/examples/*.scn; do
	"$ibmcast" run --json "$f" >"$tmp/j_run_$(basename "$f" .scn).json" 2>/dev/null
done
# up: real time, TUN (needs CAP_NET_ADMIN; without it, left out).
timeout 20 "$ibmcast" up "$src/examples/ipoib-tun.scn" --tun H-000001 \
	--netns --json --until 200ms >"$tmp/j_up.json" 2>/dev/null ||
	rm -f "$tmp/j_up.json"
for f in "$tmp"/j_*.json; do
	[ -s "$f" ] || continue
	python3 -c 'import json, sys
t = open(sys.argv[1]).read().strip()
try:
    json.loads(t)
except ValueError:
    [json.loads(l) for l in t.splitlines() if l.strip()]' "$f" ||
		{ echo "FAIL: $f is not JSON"; cat "$f"; fail=1; }
done
ls "$tmp"/j_*.json | sed 's|.*/||' | tr '\n' ' '; echo
python3 "$src/tests/lib/json_types.py" "$tmp"/j_*.json
rc=$?
check "one scalar type per key across every command's JSON" '[ $rc -eq 0 ]'
exit $fail
