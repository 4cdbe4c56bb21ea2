#!/bin/bash
# The join storm against OpenSM's SA: P ports x G groups of join trackers
# on the embedded fabric (`ibmcast fabric serve --joins`) join through
# OpenSM; then OpenSM is killed (SIGKILL) and started again, and as a new
# master it sets ClientReregister on every port (IBA 14.4.11): every
# tracker re-joins its groups at once. Once with the PACED re-join policy,
# once with IMMEDIATE.
#
#   bench/bench_opensm_storm.sh BUILD SPEC PORTS [GROUPS]
#
# Prints per policy: the time from the first member REJOINING until all
# are JOINED again, the SA requests the trackers sent in that time, their
# retries and timeouts, members failed, the CPU seconds of the new OpenSM
# from its start until then, its time to SUBNET UP, and the server's
# packets dropped (a client's queue full). Compare with the modelled SA:
#   build/bench/bench_join_storm --ports PORTS --groups GROUPS
set -u
build=$(realpath "${1:?build directory}")
spec=${2:?spec}
[ -e "$spec" ] && spec=$(realpath "$spec")
ports=${3:?ports}
groups=${4:-3}
src=$(dirname "$(realpath "$0")")/..
harness=$src/scripts/fabric-harness.sh
export IBMCAST=$build/ibmcast
tck=$(getconf CLK_TCK)

cpu_s() { awk -v t="$tck" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat" 2>/dev/null; }

wait_for() { # wait_for PATTERN FILE SECS
	local n=$(( $3 * 10 ))
	while [ $n -gt 0 ]; do
		grep -q "$1" "$2" 2>/dev/null && return 0
		sleep 0.1; n=$((n - 1))
	done
	return 1
}

printf '%-10s %6s %6s %10s %8s %8s %9s %7s %8s %8s %8s\n' policy ports groups back_ms sent retries timeouts failed osm_cpu osm_up dropped
for pol in paced immediate; do
	d=$(mktemp -d)
	out=$("$harness" start --timeout 3000 --up-wait 1200 \
		--serve-args "--joins $ports,$groups,$pol" "$spec" "$d/h") ||
		{ echo "$pol: the fabric did not come up"; rm -rf "$d"; continue; }
	eval "$out"
	cd "$d/h" || exit 1
	wait_for "^joins all" serve.log 1200 || { echo "$pol: joins did not complete"; }
	osm=$(cat opensm.pid)
	kill -KILL "$osm"
	while kill -0 "$osm" 2>/dev/null; do sleep 0.05; done
	( SIM_HOST='' OSM_TMP_DIR=$PWD OSM_CACHE_DIR=$PWD exec opensm -d2 -f "$PWD/osm2.log" ) \
		> osm2.out 2>&1 < /dev/null &
	osm=$!
	echo $osm > opensm.pid
	t0=$(date +%s.%N)
	wait_for "SUBNET UP" osm2.log 1200
	up=$(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t0 }")
	wait_for "^joins back" serve.log 1200 || echo "$pol: not all back"
	cpu=$(cpu_s "$osm")
	line=$(grep '^joins back' serve.log | tail -n 1)
	"$harness" stop "$d/h"
	drop=$(sed -n 's/^stats .* dropped \([0-9]*\) .*/\1/p' serve.log)
	set -- $line
	printf '%-10s %6s %6s %10s %8s %8s %9s %7s %8s %8s %8s\n' "$pol" "$ports" "$groups" \
		"${5:--}" "${7:--}" "${9:--}" "${11:--}" "${13:--}" "$cpu" "$up" "${drop:--}"
	cd / && rm -rf "$d"
done
