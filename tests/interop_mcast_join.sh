#!/bin/bash
# Interop with OpenSM on ibsim: three `ibmcast join` processes, each on its
# own simulated HCA, hold overlapping groups through their join trackers
# with different JoinStates (two members of one group in one process give
# the union). saquery (infiniband-diags) must show, port by port, exactly
# the memberships `ibmcast mcast show --json` says the trackers hold:
# after the joins, after one process leaves, and after OpenSM is killed and
# restarted (the new SM has lost every membership: each tracker's audit
# sees NO_RECORDS and re-joins by itself within a bound). Finally every
# process leaves and the groups are gone.
# Arguments: build directory, source directory.
# Variables set below are read by the conditions that check() evaluates.
# shellcheck disable=SC2034
set -u
build=$(realpath "${1:?build directory}")
src=$(realpath "${2:?source directory}")
harness=$src/scripts/ibsim-harness.sh
ibmcast=$build/ibmcast

if [ -z "${IBSIM_HARNESS_DIR:-}" ]; then
	[ -x "$ibmcast" ] || { echo "no $ibmcast"; exit 1; }
	command -v saquery >/dev/null 2>&1 ||
		{ echo "SKIP: saquery (infiniband-diags) not installed"; exit 77; }
	command -v python3 >/dev/null 2>&1 ||
		{ echo "SKIP: python3 not installed (reads the JSON)"; exit 77; }
	net=$(mktemp) || exit 1
	trap 'rm -f "$net"' EXIT
	# OpenSM on Hca1 (first in the file), trackers on Hca2..Hca4.
	cat > "$net" <<-'EOF'
	Hca	1 "Hca1"
	[1]	"Switch1"[1]

	Switch	8 "Switch1"
	[1]	"Hca1"[1]
	[2]	"Hca2"[1]
	[3]	"Hca3"[1]
	[4]	"Hca4"[1]

	Hca	1 "Hca2"
	[1]	"Switch1"[2]

	Hca	1 "Hca3"
	[1]	"Switch1"[3]

	Hca	1 "Hca4"
	[1]	"Switch1"[4]
	EOF
	"$harness" run --timeout 120 "$net" -- bash "$(realpath "$0")" "$build" "$src"
	exit $?
fi

fail=0
check() { # check DESCRIPTION SHELL-CONDITION
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
now() { date +%s.%N; }
elapsed() { echo "$1" | awk -v t="$(now)" '{ printf "%.1f", t - $1 }'; }

export IBMCAST_RUN_DIR=$IBSIM_HARNESS_DIR/run
G1=ff12:e001::1
G2=ff12:e001::2
declare -A pid gid

# start HOST MGID=STATE...: one tracker process on HCA HOST; the audit
# runs every second so that an SM restart is noticed quickly.
start() {
	local h=$1
	shift
	SIM_HOST=$h timeout --kill-after=5 100 "$ibmcast" join --create \
		--qkey 0x1234 --audit 1 "$@" > "$h.out" 2> "$h.err" &
	pid[$h]=$!
}

# wait_for DESCRIPTION SECS SHELL-CONDITION: polls every 0.2 s.
wait_for() {
	local end
	end=$(echo "$(now) + $2" | bc)
	until eval "$3"; do
		if [ "$(echo "$(now) > $end" | bc)" = 1 ]; then
			echo "FAIL $1 (not within $2 s)"
			fail=1
			return 1
		fi
		sleep 0.2
	done
	return 0
}

# stop HOST N: SIGTERM, the process leaves its groups and exits 0.
stop() {
	local h=$1 rc n
	kill -TERM "${pid[$h]}"
	wait "${pid[$h]}"
	rc=$?
	check "$h: ibmcast join exits 0 after SIGTERM" '[ $rc -eq 0 ]'
	n=$2
	check "$h: left every MGID it held ($n)" \
		'[ "$(grep -c "^left " "$h.out")" = "$n" ]'
	unset "pid[$h]"
}

# tracker_view HOST: "MGID JOINSTATE" lines, the union of the port's
# processes, from `ibmcast mcast show --json`; "pending" while a group is
# not answered yet.
tracker_view() {
	SIM_HOST=$1 "$ibmcast" mcast show --json | python3 -c '
import json, sys
u, pending = {}, False
for p in json.load(sys.stdin)["processes"]:
    for g in p["groups"]:
        u[g["mgid"]] = u.get(g["mgid"], 0) | g["join_state"]
        pending |= not g["is_joined"]
for m in sorted(u):
    print(m, hex(u[m]))
if pending:
    print("pending")'
}

# sa_view HOST: the same from saquery: the MCMemberRecords of the port's
# GID (a trusted SM_Key shows PortGID and JoinState; the port's few
# memberships fit in the one MAD ibsim carries).
sa_view() {
	SIM_HOST=$1 saquery --smkey 1 --gid "${gid[$1]}" MCMR | awk -v g="${gid[$1]}" '
		/MGID\.+/ { sub(/.*MGID\.+/, ""); m = $1 }
		/PortGid\.+/ { sub(/.*PortGid\.+/, ""); p = $1 }
		/JoinState\.+/ { sub(/.*JoinState\.+/, "");
			if (p == g) print m, tolower($1) }' | sort
}

# same HOST...: the trackers' and the SA's views agree for every HOST.
same() {
	local h t s
	for h in "$@"; do
		t=$(tracker_view "$h")
		s=$(sa_view "$h")
		[ "$t" = "$s" ] || return 1
	done
	return 0
}

show_views() {
	local h
	for h in "$@"; do
		echo "--- $h tracker:"; tracker_view "$h"
		echo "--- $h SA:"; sa_view "$h"
	done
}

joined() { grep -c "^joined " "$1.out"; }

# ---- no verbs device under umad2sim ----
err=$(SIM_HOST=Hca2 timeout 20 "$ibmcast" join --watch verbs --no-ctl "$G1" 2>&1 >/dev/null)
rc=$?
check "--watch verbs without a verbs device: exit 1" \
	'[ $rc -eq 1 ] && echo "$err" | grep -q "No such device"'

# ---- one-shot processes: an SA-chosen MGID, a refused join ----
out=$(SIM_HOST=Hca2 timeout 20 "$ibmcast" join --no-ctl --json --duration 0.5 \
	--create --qkey 0x77 0)
rc=$?
echo "$out"
check "MGID 0: joined, held 0.5 s, left, exit 0" '[ $rc -eq 0 ]'
n=$(echo "$out" | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
j = [e for e in ev if e["event"] == "joined"][0]
print([e["event"] for e in ev], j["mgid"][:10], j["qkey"], j["join_state"])')
check "MGID 0: JSON events, an SA-assigned ff12:a01b: MGID" \
	'[ "$n" = "['"'ready', 'joined', 'left'"'] ff12:a01b: 119 1" ]'
out=$(SIM_HOST=Hca2 timeout 20 "$ibmcast" join --no-ctl ff12:e001::9)
rc=$?
echo "$out"
check "a missing group without --create fails at once: exit 1" '[ $rc -eq 1 ]'
check "... with the SA's status, INSUF_COMPS" \
	'echo "$out" | grep -q "^error mgid=ff12:e001::9 status=0x0600 INSUF_COMPS$"'

# ---- joins ----
start Hca2 "$G1" "$G2"
# Hca2 created both groups; the others join existing groups.
wait_for "Hca2 joins both groups" 10 '[ "$(joined Hca2)" = 2 ]'
start Hca3 "$G1=sendonly-full" "$G2=nonmember" "$G2=full"
start Hca4 "$G1=sendonly-full" "$G1=full" "$G2=sendonly-full"
wait_for "Hca3 joins 3 members" 10 '[ "$(joined Hca3)" = 3 ]'
wait_for "Hca4 joins 3 members" 10 '[ "$(joined Hca4)" = 3 ]'
for h in Hca2 Hca3 Hca4; do
	gid[$h]=$(sed -n 's/^ready .* gid=\([^ ]*\) .*/\1/p' "$h.out")
	check "$h: ready with its port GID (${gid[$h]})" '[ -n "${gid[$h]}" ]'
done
check "no error event" '! grep -q "^error" Hca2.out Hca3.out Hca4.out'
check "Hca2 joined $G1 and $G2 as FullMember" \
	'[ "$(grep -c "^joined .*join_state=0x1$" Hca2.out)" = 2 ]'

want2="$G1 0x1
$G2 0x1"
want3="$G1 0x8
$G2 0x3"
want4="$G1 0x9
$G2 0x8"
check "Hca2 tracker holds full on both" '[ "$(tracker_view Hca2)" = "$want2" ]'
check "Hca3 tracker holds the union NonMember|FullMember on $G2" \
	'[ "$(tracker_view Hca3)" = "$want3" ]'
check "Hca4 tracker holds SendOnlyFull|Full on $G1" \
	'[ "$(tracker_view Hca4)" = "$want4" ]'
check "saquery shows exactly the trackers' memberships" 'same Hca2 Hca3 Hca4'
json=$(SIM_HOST=Hca3 "$ibmcast" mcast show --json)
echo "$json"
check "mcast show counts 2 members of $G2 on Hca3" \
	'echo "$json" | grep -q "\"mgid\":\"$G2\",[^}]*\"members\":2,"'

# ---- one process leaves ----
stop Hca3 3
check "saquery: Hca3 holds nothing any more" '[ -z "$(sa_view Hca3)" ]'
check "saquery: the others are unchanged" 'same Hca2 Hca4'
check "saquery: Hca2 still holds full on both" '[ "$(sa_view Hca2)" = "$want2" ]'

# ---- OpenSM restart: the new SM has no memberships ----
j2=$(joined Hca2)
j4=$(joined Hca4)
dir=$IBSIM_HARNESS_DIR
osm=$(cat "$dir/opensm.pid")
n_up=$(grep -c 'SUBNET UP' "$dir/osm.log")
kill -TERM "$osm"
wait_for "OpenSM stops" 15 '! kill -0 $osm 2>/dev/null'
t0=$(now)
( cd "$dir" && OSM_TMP_DIR=$dir OSM_CACHE_DIR=$dir \
	exec opensm -d2 -f "$dir/osm.log" ) > "$dir/osm2.out" 2>&1 </dev/null &
echo $! > "$dir/opensm.pid"
wait_for "restarted OpenSM reports SUBNET UP" 20 \
	'[ "$(grep -c "SUBNET UP" "$dir/osm.log")" -gt "$n_up" ]'
echo "SM up again after $(elapsed "$t0") s"
wait_for "Hca2 and Hca4 re-join by themselves" 15 \
	'[ "$(joined Hca2)" -ge $((j2 + 2)) ] && [ "$(joined Hca4)" -ge $((j4 + 3)) ]'
wait_for "saquery shows every membership again" 10 'same Hca2 Hca4'
echo "memberships back $(elapsed "$t0") s after the restart"
show_views Hca2 Hca4
check "saquery: Hca2 back to full on both" '[ "$(sa_view Hca2)" = "$want2" ]'
check "saquery: Hca4 back to 0x9 and 0x8" '[ "$(sa_view Hca4)" = "$want4" ]'
for h in Hca2 Hca4; do
	check "$h: the audit saw the loss" \
		'grep -q "^port event=reregister cause=audit$" $h.out'
	check "$h: rejoining, then joined" \
		'grep -A1 -m1 "^rejoining " $h.out | grep -q "^\(rejoining\|joined\) "'
done
check "no error event after the restart" '! grep -q "^error" Hca2.out Hca4.out'

# ---- everyone leaves ----
stop Hca4 3
stop Hca2 2
g=$(SIM_HOST=Hca2 saquery -g)
check "saquery -g lists neither group" \
	'! echo "$g" | grep -q "$G1\$" && ! echo "$g" | grep -q "$G2\$"'
left=$(ls "$IBMCAST_RUN_DIR" 2>/dev/null)
check "every control socket removed" '[ -z "$left" ]'
for h in Hca2 Hca3 Hca4; do
	[ -s "$h.err" ] && { echo "--- $h stderr:"; cat "$h.err"; }
done
exit $fail
