#!/bin/bash
# sa-mcast and mcast-send to a group whose SA is OpenSM's (an opensm
# line): the sender asks OpenSM's SA for the group's record (GetTable of
# MCMemberRecord by MGID) as a host does, and sends with the MLID, Q_Key
# and P_Key of the answer along the MFTs OpenSM wrote. The members count
# the datagrams: H-000002 (an sa-join's QP) and H-000004 (an
# mcast-join's, on the sender's leaf); the sender H-000003 joins
# send-only first, as a host that sends to a group does. A group nobody
# created, and a sender whose cable is down (no answer), fail the line
# with a message naming the MGID and what the SA said; a sender on a
# switch without a member sees its datagrams dropped there (no-mft), as
# OpenSM's MFTs span the members' switches only. Real time: no timing
# is asserted beyond OpenSM answering within the run. Arguments: build
# dir, source dir.
set -u
build=$(realpath "${1:?build directory}")
IMC=$build/ibmcast
U2S=${IBMCAST_UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
fail=0

command -v opensm >/dev/null 2>&1 || { echo "SKIP: opensm not installed"; exit 77; }
[ -r "$U2S" ] || { echo "SKIP: umad2sim not found at $U2S (libumad2sim0)"; exit 77; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/osmsend.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

# scenario LINE MORE [BEFORE]: the group ff15::1:1 made by H-000002
# (as=g), a tracker member H-000004 (as=m), the send-only sender
# H-000003, then the line BEFORE (or a comment), LINE at 1 s (line 9)
# and the expect lines MORE.
scenario() {
	cat > "$dir/run.scn" <<SCN
topology fat-tree:leaves=2,hosts=2,spines=2
stop 4s
opensm wait=60s
sa
sa-join H-000002 ff15::1:1 create retries=5 timeout=200ms as=g
at 300ms mcast-join H-000004 ff15::1:1 as=m
sa-join H-000003 ff15::1:1 state=sendonly retries=5 timeout=200ms
${3:-# no line before}
at 1s $1
expect sa-status H-000002 ff15::1:1 == success
expect sa-status H-000003 ff15::1:1 == success
expect mcast-joined H-000004 == 1
$2
SCN
	IBSIM_SOCKNAME="imcsend$$" timeout 120 "$IMC" run "$dir/run.scn" \
		> "$dir/out" 2>&1
}

# Delivery: each member once per datagram, the sender and the
# non-member H-000001 none.
for case in "sa-mcast H-000003 @g count=2:2" \
	    "sa-mcast H-000003 ff15::1:1 count=3:3" \
	    "mcast-send H-000003 ff15::1:1 count=4:4" \
	    "mcast-send H-000003 @m count=5 size=100:5"; do
	line=${case%:*} n=${case##*:}
	scenario "$line" "expect delivered H-000002 == $n
expect delivered H-000004 == $n
expect dups H-000002 == 0
expect dups H-000004 == 0
expect delivered H-000003 == 0
expect delivered H-000001 == 0
expect sent H-000003 == $n
expect sa-timeouts == 0"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "^expect *11 passed, 0 failed" "$dir/out"
	then
		echo "ok   $line: $n datagrams at each member"
	else
		echo "FAIL $line: exit $rc"; cat "$dir/out"; fail=1
	fi
done

# Failures of the line: no group (OpenSM's GetTable answers success with
# no record), and no answer at all (the sender's cable pulled before the
# line: every attempt is refused, the SA client gives up).
for case in "sa-mcast H-000003 ff15::1:9||the SA has no group ff15::1:9: its GetTable of MCMemberRecord by MGID answered success with no record (none, or of a partition H-000003 is not in)" \
	    "mcast-send H-000003 ff15::1:1|at 900ms link down H-000003:1|the SA did not answer the GetTable of MCMemberRecord ff15::1:1 (4 attempts): Connection timed out"; do
	line=${case%%|*} rest=${case#*|}
	before=${rest%%|*} want=${rest#*|}
	verb=${line%% *}
	scenario "$line" "" "$before"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] &&
	   grep -qF "run.scn:9: $verb: $want" "$dir/out"; then
		echo "ok   $line: exit $rc, '$want'"
	else
		echo "FAIL $line: exit $rc"; cat "$dir/out"; fail=1
	fi
done
# A sender that is no member, on a switch without one: OpenSM's MFTs
# span the members' switches only, so the query is answered and the
# datagrams leave, but its own switch drops them.
cat > "$dir/run.scn" <<SCN
topology fat-tree:leaves=2,hosts=2,spines=2
stop 4s
opensm wait=60s
sa
sa-join H-000002 ff15::1:1 create retries=5 timeout=200ms
at 1s sa-mcast H-000003 ff15::1:1 count=3
expect sa-status H-000002 ff15::1:1 == success
expect sent H-000003 == 3
expect delivered H-000002 == 0
expect drops no-mft == 3
SCN
IBSIM_SOCKNAME="imcsend$$" timeout 120 "$IMC" run "$dir/run.scn" \
	> "$dir/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "^expect *4 passed, 0 failed" "$dir/out"; then
	echo "ok   a sender off the group's tree: its switch drops the datagrams"
else
	echo "FAIL a sender off the group's tree: exit $rc"; cat "$dir/out"; fail=1
fi
exit $fail
