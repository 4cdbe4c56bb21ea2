#!/bin/bash
# sa-mcast and mcast-send to a group whose SA is OpenSM's (an opensm
# line): the built-in SA's group table is not there to give the MLID,
# Q_Key and P_Key, so the line fails the run with a message that says so
# (and where the groups are read instead), not a crash. Real time: no
# timing is asserted. Arguments: build dir, source dir.
set -u
build=$(realpath "${1:?build directory}")
IMC=$build/ibmcast
U2S=${IBMCAST_UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
fail=0

command -v opensm >/dev/null 2>&1 || { echo "SKIP: opensm not installed"; exit 77; }
[ -r "$U2S" ] || { echo "SKIP: umad2sim not found at $U2S (libumad2sim0)"; exit 77; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/osmsend.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
want="the SA is the external SM's (opensm line): its groups are not read here; use sa-get or saquery"
for line in "sa-mcast H-000003 @g count=2" "sa-mcast H-000003 ff15::1:1" \
	    "mcast-send H-000003 ff15::1:1"; do
	verb=${line%% *}
	cat > "$dir/run.scn" <<SCN
topology fat-tree:leaves=2,hosts=2,spines=2
stop 2s
opensm wait=60s
sa
sa-join H-000002 ff15::1:1 create retries=5 timeout=200ms as=g
at 1s $line
SCN
	IBSIM_SOCKNAME="imcsend$$" timeout 120 "$IMC" run "$dir/run.scn" \
		> "$dir/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] &&
	   grep -qF "run.scn:6: $verb: $want" "$dir/out"; then
		echo "ok   $line: exit $rc, the external SA's message"
	else
		echo "FAIL $line: exit $rc"; cat "$dir/out"; fail=1
	fi
done
exit $fail
