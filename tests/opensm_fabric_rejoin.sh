#!/bin/bash
# ibmcast's join trackers on the embedded fabric (`fabric serve --joins`)
# join through OpenSM's SA; OpenSM killed with SIGKILL and started again
# sets ClientReregister on every port as a new master (IBA 14.4.11), and
# every tracker re-joins: all members JOINED again (answers of OpenSM's
# SA: the fabric's own SA steps aside), none failed, and the new SA has
# the group. Once per re-join policy.
# Arguments: build directory, source directory.
set -u
# shellcheck source-path=SCRIPTDIR source=lib/opensm_fabric.sh
. "$(dirname "$(realpath "$0")")/lib/opensm_fabric.sh" "$@"
osmf_tools

one() { # one POLICY; in a subshell: the harness's exports stay there
	local pol=$1 dir n line osm
	dir=$(mktemp -d "${TMPDIR:-/tmp}/osmf.XXXXXX") || exit 1
	OSMF_DIR=$dir
	trap '"$harness" stop "$OSMF_DIR/h"; cd /; rm -rf "$OSMF_DIR"' EXIT
	out=$("$harness" start --timeout 120 --owner $$ --serve-args "--joins 3,3,$pol" \
		"$src/examples/ibsim-2sw.net" "$dir/h" 2> "$dir/start.err") || {
		rc=$?; cat "$dir/start.err"; tail -n 20 "$dir"/h/*.log
		[ $rc -eq 77 ] && grep -q "not installed\|not found" "$dir/start.err" &&
			exit 77
		exit 1
	}
	eval "$out"
	cd "$dir/h" || exit 1
	for _ in $(seq 200); do grep -q '^joins all' serve.log && break; sleep 0.05; done
	check "$pol: 3 ports x 3 groups joined through OpenSM's SA ($(grep '^joins all' serve.log))" \
		'grep -q "^joins all 9 " serve.log'

	osm=$(cat opensm.pid)
	kill -KILL "$osm"
	while kill -0 "$osm" 2>/dev/null; do sleep 0.05; done
	( SIM_HOST='' OSM_TMP_DIR=$PWD OSM_CACHE_DIR=$PWD exec opensm -d2 \
		-f "$PWD/osm2.log" ) > osm2.out 2>&1 < /dev/null &
	echo $! > opensm.pid
	for _ in $(seq 400); do grep -q '^joins back' serve.log && break; sleep 0.05; done
	line=$(grep '^joins back' serve.log)
	check "$pol: after OpenSM's restart every member re-joined ($line)" \
		'echo "$line" | grep -q "^joins back 9 .* failed 0$"'
	# The group as the new OpenSM's SA holds it (one record: umad2sim
	# has no RMPP for a whole table).
	n=$(timeout 20 saquery -t 4000 MCMR --mgid ff15:1234:5707::1 2>/dev/null |
		grep -c 'ff15:1234:5707::1$')
	check "$pol: the new OpenSM's SA answers for group ::1 ($n)" '[ "$n" -ge 1 ]'
	"$harness" stop "$dir/h"
	check "$pol: no sanitizer report from the server" \
		'! grep -q Sanitizer serve.log'
	cd / && rm -rf "$dir"
	trap - EXIT
	exit $fail
}

for pol in paced immediate; do
	( one $pol ) || fail=1
done
exit $fail
