#!/bin/bash
# Conformance side by side: ibmcast's SA engine (`ibmcast sa-serve`,
# IsSM) beside OpenSM (on Hca1) on one ibsim fabric; the cases of
# tests/conformance/cases.txt go from one client (Hca2) to both SAs and
# their answers are compared (`ibmcast sa-serve compare`). The SA runs
# twice, on each of its transports: ibsim's socket directly (Hca3) and
# libibumad through umad2sim (Hca4). Every expect-differs ID must be a
# row of docs/conformance.md section 8, and every statement of that
# document names the case (or unit test) that checks it: the answers
# each SA gave must be the ones the document states
# (tests/conformance/doc_check.sh). The directory each server learned is
# checked against the fabric too.
# Arguments: build directory, source directory.
set -u
. "$(dirname "$(realpath "$0")")/lib/ibsim_test.sh" "$@"
cases=$src/tests/conformance/cases.txt
doc=$src/docs/conformance.md
. "$src/tests/conformance/doc_check.sh"

if [ -z "${IBSIM_HARNESS_DIR:-}" ]; then
	# Bad usage is found before any port is opened: exit 2.
	for args in "frob" "compare" "compare --imc-lid 3" "compare --imc-lid 0 f" \
		"load --dlid 3" "compare --imc-lid 3 --tag 256 f" "--transport frob" "--coalesce x" \
		"--window 33" "--window 0" "serve extra" "--ttl x"; do
		# shellcheck disable=SC2086
		"$ibmcast" sa-serve $args > /dev/null 2>&1
		rc=$?
		if [ $rc -ne 2 ]; then
			echo "FAIL 'ibmcast sa-serve $args' exits $rc, want 2"
			fail=1
		fi
	done
	[ $fail -eq 0 ] && echo "ok   usage errors exit 2"
	# Each annotation names a documented difference.
	n=$(grep -c '^case ' "$cases")
	[ "$n" -ge 40 ] || { echo "FAIL only $n cases"; fail=1; }
	while read -r id; do
		if grep -q "^| $id |" "$doc"; then
			echo "ok   $id is documented"
		else
			echo "FAIL expect-differs $id has no row in docs/conformance.md"
			fail=1
		fi
	done < <(sed -n 's/^expect-differs: *\([A-Z0-9]*\).*/\1/p' "$cases" | sort -u)
	# Each statement of the document names what checks it.
	doc_static || fail=1
	[ $fail -eq 0 ] || exit 1
fi
# OpenSM on Hca1, the client on Hca2, ibmcast's SA on Hca3 and Hca4.
# About 30 s on a quiet machine, 55 s at a load of 16 on 2 cores; the
# watchdog stays under CTest's 300 s.
ibsim_rerun 270 4

# side TRANSPORT HCA TAG: one server, its directory, the cases (their
# groups apart from the other side's by TAG), its end.
side() {
local transport=$1 hca=$2 tag=$3 out=$IBSIM_HARNESS_DIR/sa-serve-$1.out server lid rc
echo "== sa-serve --transport $transport on $hca"
SIM_HOST=$hca "$ibmcast" sa-serve --transport "$transport" --list \
	--duration 140 > "$out" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null' EXIT
wait_ready "$out" $server
cat "$out"
lid=$(ready_lid "$out")
check "ibmcast's SA is up with a LID" '[ -n "$lid" ] && [ "$lid" -gt 0 ]'
[ -n "$lid" ] || return

# The directory: every HCA and the switch, each with the GID, MTU, rate
# and P_Key OpenSM has for it (saquery asks OpenSM the same records).
check "5 ports learned (4 HCAs, the switch)" \
	'[ "$(grep -c "^port " "$out")" = 5 ]'
check "HCA ports: MTU 2048 (4), 10 Gb/s (3), P_Key 0xffff" \
	'[ "$(grep -c "^port lid [0-9]* gid fe80::[0-9a-f:]* guid 0x[0-9a-f]* port_num 1 mtu 4 rate 3 pkeys 0xffff$" "$out")" = 4 ]'
check "the switch as port 0" \
	'grep -q "^port lid [0-9]* gid fe80::[0-9a-f:]* guid 0x[0-9a-f]* port_num 0 mtu [0-9]* rate 3 switch pkeys 0xffff$" "$out"'
# Each port's GUID is the one OpenSM's NodeRecord of that LID gives.
while read -r _ _ plid _ _ _ pguid _; do
	want=$(SIM_HOST=Hca2 saquery NR "$plid" 2>/dev/null |
		sed -n 's/^[[:space:]]*port_guid\.*\(0x[0-9a-fA-F]*\)$/\1/p' | head -n 1)
	check "LID $plid: port GUID $pguid is OpenSM's ($want)" \
		'[ -n "$want" ] && [ $((want)) -eq $((pguid)) ]'
done < <(grep '^port ' "$out")

SIM_HOST=Hca2 "$ibmcast" sa-serve compare --imc-lid "$lid" --tag "$tag" "$cases" \
	> "$out.compare"
rc=$?
cat "$out.compare"
check "every case agrees or differs as documented" '[ $rc -eq 0 ]'
# What the document says each SA answered is what each answered.
doc_observed "$out.compare" || fail=1

# A port the directory has not seen yet (absent): the request waits for
# its lookup and is answered; the answer is OpenSM's (REQ_INVALID).
a=$(SIM_HOST=Hca2 "$ibmcast" sa send --dlid "$lid" --method set \
	--record mgid=ff12:1234::77,port_gid=fe80::1:2:3:4,qkey=0x11,tclass=0,pkey=0xffff,sl=0,flow_label=0,join_state=1)
check "an unknown PortGID is looked up and answered REQ_INVALID" \
	'echo "$a" | grep -q "^status 0x0200 REQ_INVALID$"'

kill -TERM $server
wait $server
rc=$?
trap - EXIT
tail -n 1 "$out"
check "server stopped cleanly on SIGTERM" '[ $rc -eq 0 ] && grep -q "^stopped requests" "$out"'
check "server answered every request it got" \
	'awk "/^stopped/ { exit !(\$3 > 100 && \$5 >= \$3 - 10) }" "$out"'
}

side ibsim Hca3 0
side umad Hca4 1
exit $fail
