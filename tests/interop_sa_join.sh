#!/bin/bash
# Interop with OpenSM on ibsim: `ibmcast sa join` with MGID 0 creates a
# group (OpenSM assigns ff12:a01b:<prefix>::...), saquery (infiniband-diags)
# sees the group and the same members as `ibmcast sa query`, and leaving
# removes it. Arguments: build directory, source directory.
# Variables set below are read by the conditions that check() evaluates.
# shellcheck disable=SC2034
set -u
. "$(dirname "$(realpath "$0")")/lib/ibsim_test.sh" "$@"

if [ -z "${IBSIM_HARNESS_DIR:-}" ]; then
	command -v saquery >/dev/null 2>&1 ||
		{ echo "SKIP: saquery (infiniband-diags) not installed"; exit 77; }
fi
# OpenSM on Hca1, clients on Hca2 and Hca3.
ibsim_rerun 60 3

field() { # field NAME < "record k=v ..." lines: the values of NAME
	sed -n "s/^record .*\<$1=\([^ ]*\).*/\1/p"
}

out=$(SIM_HOST=Hca2 "$ibmcast" sa join 0 --qkey 0x1234 --pkey 0xffff)
rc=$?
echo "$out"
check "join 0 succeeds" '[ $rc -eq 0 ]'
mgid=$(echo "$out" | field mgid)
mlid=$(echo "$out" | field mlid)
gid2=$(echo "$out" | field port_gid)
check "SA-assigned MGID ff12:a01b:fe80:...: $mgid" \
	'[ "${mgid#ff12:a01b:fe80:}" != "$mgid" ]'
check "MLID from 0xc001: $mlid" '[ "$mlid" = 0xc001 ]'
check "join state full" '[ "$(echo "$out" | field join_state)" = 0x1 ]'
check "Q_Key as asked" '[ "$(echo "$out" | field qkey)" = 0x00001234 ]'

out=$(SIM_HOST=Hca3 "$ibmcast" sa join "$mgid" --state sendonly-full)
rc=$?
check "second member joins (send-only full)" '[ $rc -eq 0 ]'
gid3=$(echo "$out" | field port_gid)
check "second member has its own port GID" \
	'[ -n "$gid3" ] && [ "$gid3" != "$gid2" ]'

# saquery -g lists the group, with the MLID OpenSM gave it.
sq=$(SIM_HOST=Hca2 saquery -g)
echo "$sq" | grep -A1 "MGID\.*$mgid\$" | grep -qi "Mlid\.*$mlid"
rc=$?
check "saquery -g shows $mgid at $mlid" '[ $rc -eq 0 ]'

# Members as saquery -m and ibmcast sa query see them, with SM_Key 1
# (OpenSM's default key): untrusted GetTable answers hide PortGID and
# JoinState.
sq_members=$(SIM_HOST=Hca2 saquery --smkey 1 -m "$mlid" |
	sed -n 's/.*PortGid\.*\([0-9a-f:]*\).*/\1/p' | sort)
our=$(SIM_HOST=Hca2 "$ibmcast" sa query --smkey 1 "$mgid")
echo "$our"
our_members=$(echo "$our" | sed -n 's/^  member \([^ ]*\) .*/\1/p' | sort)
want=$(printf '%s\n' "$gid2" "$gid3" | sort)
check "saquery -m and ibmcast sa query list the same members" \
	'[ -n "$sq_members" ] && [ "$sq_members" = "$our_members" ]'
check "both members listed" '[ "$our_members" = "$want" ]'
check "member $gid2 full" \
	'echo "$our" | grep -q "^  member $gid2 join_state 0x1 "'
check "member $gid3 send-only full" \
	'echo "$our" | grep -q "^  member $gid3 join_state 0x8 "'
json=$(SIM_HOST=Hca2 "$ibmcast" sa query --smkey 1 --json "$mgid")
echo "$json"
check "JSON names the group and its MLID" \
	'echo "$json" | grep -q "\"mgid\":\"$mgid\",\"mlid\":$((mlid)),"'
if command -v python3 >/dev/null 2>&1; then
	n=$(echo "$json" | python3 -c 'import json, sys
print(len(json.load(sys.stdin)["groups"][0]["members"]))')
	check "JSON parses, 2 members" '[ "$n" = 2 ]'
fi

# Leaving: the send-only member first; the group stays for the full one.
out=$(SIM_HOST=Hca3 "$ibmcast" sa leave "$mgid" --state sendonly-full)
rc=$?
check "leave (send-only full) succeeds" '[ $rc -eq 0 ]'
check "DeleteResp" 'echo "$out" | grep -q "^method 0x95 DeleteResp$"'
our=$(SIM_HOST=Hca2 "$ibmcast" sa query --smkey 1 "$mgid")
check "one member left" '[ "$(echo "$our" | grep -c "^  member")" = 1 ]'
SIM_HOST=Hca2 "$ibmcast" sa leave "$mgid" > /dev/null
rc=$?
check "last full member leaves" '[ $rc -eq 0 ]'
sq=$(SIM_HOST=Hca2 saquery -g)
check "saquery -g no longer shows $mgid" '! echo "$sq" | grep -q "$mgid"'
our=$(SIM_HOST=Hca2 "$ibmcast" sa query "$mgid")
check "ibmcast sa query finds no group" \
	'[ "$(echo "$our" | grep -c "^group")" = 0 ]'
out=$(SIM_HOST=Hca2 "$ibmcast" sa leave "$mgid")
rc=$?
check "leaving again fails (exit 1)" '[ $rc -eq 1 ]'
check "... with REQ_INVALID" \
	'[ "$(echo "$out" | head -n 1)" = "status 0x0200 REQ_INVALID" ]'

exit $fail
