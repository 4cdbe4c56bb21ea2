#!/bin/bash
# Interop with OpenSM on ibsim: a NonMember outlives its group. An
# `ibmcast join` process on Hca2 holds a group as NonMember (audit off, so
# that only the traps can bring it back); the group's only full member, a
# process on Hca3, leaves, and OpenSM deletes the group (trap 67). The
# NonMember re-joins, is refused (REQ_INVALID, then NO_RECORDS to its Get)
# and reports "waiting", not an error. A full member joins again on Hca3:
# OpenSM creates the group and sends trap 66, and the NonMember is back,
# in `saquery` and in `ibmcast mcast show --json`, within 1 s of the
# group's creation (the delay is measured and printed).
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
	# OpenSM on Hca1 (first in the file), trackers on Hca2 and Hca3.
	cat > "$net" <<-'EOF'
	Hca	1 "Hca1"
	[1]	"Switch1"[1]

	Switch	8 "Switch1"
	[1]	"Hca1"[1]
	[2]	"Hca2"[1]
	[3]	"Hca3"[1]

	Hca	1 "Hca2"
	[1]	"Switch1"[2]

	Hca	1 "Hca3"
	[1]	"Switch1"[3]
	EOF
	"$harness" run --timeout 120 "$net" -- bash "$(realpath "$0")" "$build" "$src"
	exit $?
fi

fail=0
check() { # check DESCRIPTION SHELL-CONDITION
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
now() { date +%s.%N; }

export IBMCAST_RUN_DIR=$IBSIM_HARNESS_DIR/run
G=ff12:e001::66
declare -A pid

# start HOST OUT MGID=STATE: one tracker process on HCA HOST, output in OUT.
# ibsim hands requests to a port (Reports included) only to a process that
# holds IsSM there (SIM_SET_ISSM, as test_umad_interop.c does); on a real
# port the kernel gives a Report to the agent registered for the method.
start() {
	local h=$1 out=$2
	shift 2
	SIM_SET_ISSM=1 SIM_HOST=$h timeout --kill-after=5 100 "$ibmcast" join --create \
		--qkey 0x1234 --audit 0 "$@" > "$out.out" 2> "$out.err" &
	pid[$out]=$!
}

# wait_for DESCRIPTION SECS SHELL-CONDITION: polls every 0.02 s.
wait_for() {
	local end
	end=$(echo "$(now) + $2" | bc)
	until eval "$3"; do
		if [ "$(echo "$(now) > $end" | bc)" = 1 ]; then
			echo "FAIL $1 (not within $2 s)"
			fail=1
			return 1
		fi
		sleep 0.02
	done
	echo "ok   $1"
	return 0
}

# stop OUT: SIGTERM, the process leaves its groups and exits 0.
stop() {
	local rc
	kill -TERM "${pid[$1]}"
	wait "${pid[$1]}"
	rc=$?
	check "$1: ibmcast join exits 0 after SIGTERM" '[ $rc -eq 0 ]'
	unset "pid[$1]"
}

count() { grep -c "^$2 mgid=$G" "$1.out"; }

# The port's JoinState in G and whether the group is joined, from
# `ibmcast mcast show --json` ("none" without the group).
tracker_view() {
	SIM_HOST=$1 "$ibmcast" mcast show --json | python3 -c '
import json, sys
r = "none"
for p in json.load(sys.stdin)["processes"]:
    for g in p["groups"]:
        if g["mgid"] == sys.argv[1]:
            r = "%s %s" % (hex(g["join_state"]),
                           "joined" if g["is_joined"] else "not-joined")
print(r)' "$G"
}

# The port's JoinState in G at the SA (saquery with a trusted SM_Key
# shows PortGID and JoinState), "none" without a membership.
sa_view() {
	local r
	r=$(SIM_HOST=$1 saquery --smkey 1 --gid "$2" MCMR | awk -v g="$2" -v m="$G" '
		/MGID\.+/ { sub(/.*MGID\.+/, ""); mg = $1 }
		/PortGid\.+/ { sub(/.*PortGid\.+/, ""); p = $1 }
		/JoinState\.+/ { sub(/.*JoinState\.+/, "");
			if (p == g && mg == m) print tolower($1) }')
	echo "${r:-none}"
}

group_listed() { SIM_HOST=Hca2 saquery -g | grep -q "$G\$"; }

# ---- a full member creates the group, a NonMember joins it ----
start Hca3 full1 "$G"
wait_for "Hca3 creates $G as FullMember" 10 '[ "$(count full1 joined)" = 1 ]'
start Hca2 non "$G=nonmember"
wait_for "Hca2 joins $G as NonMember" 10 '[ "$(count non joined)" = 1 ]'
gid2=$(sed -n 's/^ready .* gid=\([^ ]*\) .*/\1/p' non.out)
check "Hca2: ready with its port GID ($gid2)" '[ -n "$gid2" ]'
check "saquery: Hca2 is a NonMember of $G" '[ "$(sa_view Hca2 "$gid2")" = 0x2 ]'

# ---- the last full member leaves: OpenSM deletes the group ----
stop full1
wait_for "Hca2's NonMember waits for the group" 10 \
	'[ "$(count non waiting)" -ge 1 ]'
check "the group is gone at OpenSM" '! group_listed'
check "no error event: the NonMember waits" '! grep -q "^error" non.out'
check "saquery: Hca2 holds nothing in $G" '[ "$(sa_view Hca2 "$gid2")" = none ]'
v=$(tracker_view Hca2)
check "mcast show: Hca2 keeps $G, not joined ($v)" '[ "$v" = "0x0 not-joined" ]'
check "the process still runs" 'kill -0 ${pid[non]} 2>/dev/null'

# ---- a full member creates it again: trap 66 brings the NonMember back ----
# After 2 s the first fallback try (1 to 2 s after the refusal) is past
# and the next one is 1 to 3 s after the creation: a return well within
# 1 s is the Report's doing.
sleep 2
j=$(count non joined)
start Hca3 full2 "$G"
until [ "$(count full2 joined)" = 1 ] || ! kill -0 "${pid[full2]}" 2>/dev/null; do
	sleep 0.005
done
t_created=$(now)
wait_for "Hca2's NonMember is back" 5 '[ "$(count non joined)" -gt "$j" ]'
t_back=$(now)
delay=$(echo "$t_back - $t_created" | bc)
echo "NonMember back $(printf '%.3f' "$delay") s after the group's creation"
check "... within 1 s of the creation" '[ "$(echo "$delay < 1" | bc)" = 1 ]'
check "saquery: Hca2 is a NonMember of $G again" \
	'[ "$(sa_view Hca2 "$gid2")" = 0x2 ]'
v=$(tracker_view Hca2)
check "mcast show: Hca2 holds 0x2 in $G, joined ($v)" '[ "$v" = "0x2 joined" ]'
check "no error event" '! grep -q "^error" non.out full1.out full2.out'

# ---- everyone leaves ----
stop non
stop full2
check "saquery -g no longer lists $G" '! group_listed'
for f in non full1 full2; do
	[ -s "$f.err" ] && { echo "--- $f stderr:"; cat "$f.err"; }
done
exit $fail
