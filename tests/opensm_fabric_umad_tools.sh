#!/bin/bash
# ibmcast's own umad tools against OpenSM on the embedded fabric, through
# umad2sim: `ibmcast sa join` with MGID 0 has OpenSM's SA create a group
# (ff12:a01b:<prefix>::, MLID from 0xC001), a second port joins it by
# MGID, `ibmcast sa query` from a third sees both members, and leaving
# the creator keeps the group with the other (queries with SM_Key 1: an
# untrusted one gets the members' PortGIDs blanked). Arguments: build dir,
# source dir.
# Variables set below are read by the conditions that check() evaluates.
# shellcheck disable=SC2034
set -u
# shellcheck source-path=SCRIPTDIR source=lib/opensm_fabric.sh
. "$(dirname "$(realpath "$0")")/lib/opensm_fabric.sh" "$@"
osmf_tools

if [ -z "${FABRIC_HARNESS_DIR:-}" ]; then
	exec "$harness" run --timeout 120 "$src/examples/ibsim-2sw.net" -- \
		bash "$(realpath "$0")" "$build" "$src"
fi
field() { sed -n "s/^record .*\<$1=\([^ ]*\).*/\1/p"; }

out=$(SIM_HOST=Hca2 timeout 30 "$IBMCAST" sa join 0 --qkey 0x1234 --pkey 0xffff)
rc=$?
echo "$out" | grep '^record'
mgid=$(echo "$out" | field mgid)
mlid=$(echo "$out" | field mlid)
check "Hca2: join 0 creates a group (rc $rc, MGID $mgid)" \
	'[ $rc -eq 0 ] && [ "${mgid#ff12:a01b:fe80:}" != "$mgid" ]'
check "OpenSM's first MLID after its broadcast group: $mlid" '[ "$mlid" = 0xc001 ]'
gid2=$(echo "$out" | field port_gid)

out=$(SIM_HOST=Hca4 timeout 30 "$IBMCAST" sa join "$mgid" --qkey 0x1234 --pkey 0xffff)
rc=$?
gid4=$(echo "$out" | field port_gid)
check "Hca4 joins it by MGID (rc $rc, $gid4)" \
	'[ $rc -eq 0 ] && [ -n "$gid4" ] && [ "$gid4" != "$gid2" ]'

out=$(SIM_HOST=Hca3 timeout 30 "$IBMCAST" sa query --smkey 1 "$mgid" 2>&1)
echo "$out" | sed 's/^/  /' | head -n 8
check "Hca3 sees both members" \
	'echo "$out" | grep -q "$gid2" && echo "$out" | grep -q "$gid4"'

out=$(SIM_HOST=Hca2 timeout 30 "$IBMCAST" sa leave "$mgid")
rc=$?
out=$(SIM_HOST=Hca3 timeout 30 "$IBMCAST" sa query --smkey 1 "$mgid" 2>&1)
check "after Hca2 leaves (rc $rc) only Hca4 is a member" \
	'! echo "$out" | grep -q "$gid2" && echo "$out" | grep -q "$gid4"'
exit $fail
