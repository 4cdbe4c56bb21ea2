#!/bin/bash
# Side by side on ibsim: OpenSM's SA and ibmcast's SA (`ibmcast sa-serve`)
# driven by the same client (`ibmcast storm`, one process per phase on
# the same HCA): COUNT group creates (joins of absent groups), then COUNT
# re-joins of the same groups, with WINDOW requests in flight, against
# each SA. ibmcast's
# SA runs three times at once, each on its own HCA:
#   ibmcast           on ibsim's socket directly (--transport ibsim)
#   ibmcast-coalesce  the same with receive coalescing (--coalesce
#                     $COALESCE microseconds, default 500)
#   ibmcast-umad      through libibumad and umad2sim, as OpenSM runs
# Prints the throughput and the SA process's CPU time per 10,000
# operations: the sum over its threads of the time on CPU from
# /proc/PID/task/*/schedstat (nanoseconds), read before and at the last
# answer of each phase and again after SETTLE seconds (OpenSM programs
# the switches' multicast tables in a sweep after it answers), then the
# ratios of OpenSM's CPU per operation to each of ibmcast's.
#
#   bench_sa_sidebyside.sh BUILD_DIR [COUNT] [WINDOWS...]
#   (defaults: 10000, windows 8 and 32)
#
# Each window gets a fresh fabric (ibsim -M 16384: room for COUNT groups
# in the switch's multicast table; OpenSM's MLID pool holds 16383, so one
# fabric takes one run of COUNT <= 16000 groups per SA).
set -u
build=$(realpath "${1:?build directory}")
count=${2:-10000}
shift 2 2>/dev/null || shift $#
windows=${*:-8 32}
src=$(cd "$(dirname "$0")/.." && pwd)
harness=$src/scripts/ibsim-harness.sh
ibmcast=$build/ibmcast
SETTLE=${SETTLE:-2}
COALESCE=${COALESCE:-500}
# name HCA sa-serve options
SAS="ibmcast Hca3 --transport ibsim
ibmcast-coalesce Hca4 --transport ibsim --coalesce $COALESCE
ibmcast-umad Hca5 --transport umad"

[ -x "$ibmcast" ] || { echo "no $ibmcast" >&2; exit 1; }
[ "$count" -le 16000 ] || { echo "COUNT above OpenSM's MLID pool" >&2; exit 2; }

# OpenSM on Hca1, the client on Hca2, ibmcast's SAs on Hca3-5.
. "$src/tests/lib/ibsim_test.sh" "$build" "$src"
net=$(mktemp) || exit 1
ibsim_net 5 "$net"

# CPU nanoseconds of every thread of PID (threads that ended are not
# counted: the SAs' threads live as long as they do).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'; }

# start_sa NAME HCA OPTIONS...: starts sa-serve, waits for its ready
# line, records "NAME PID LID" in $dir/sas and sets osm_lid.
start_sa() {
	local name=$1 hca=$2 out=$dir/serve-$1.out p lid
	shift 2
	SIM_HOST=$hca "$ibmcast" sa-serve "$@" > "$out" 2>&1 &
	p=$!
	echo "$p" >> "$dir/pids"
	for _ in $(seq 200); do
		grep -q '^ready' "$out" && break
		sleep 0.05
	done
	lid=$(sed -n 's/^ready lid \([0-9]*\) .*/\1/p' "$out")
	osm_lid=$(sed -n 's/^ready lid [0-9]* sm_lid \([0-9]*\) .*/\1/p' "$out")
	if [ -z "$lid" ] || [ -z "$osm_lid" ]; then
		echo "sa-serve $* did not come up" >&2
		cat "$out" >&2
		return 1
	fi
	echo "$name $p $lid" >> "$dir/sas"
}

stop_sas() {
	local p
	for p in $(cat "$dir/pids" 2>/dev/null); do
		kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null
	done
}

results=$(mktemp)
trap 'rm -f "$net" "$results"' EXIT

for w in $windows; do
	dir=$(mktemp -d "${TMPDIR:-/tmp}/sa-side.XXXXXX")
	env=$("$harness" start --timeout 900 --ibsim-args "-M 16384" "$net" "$dir") || {
		rc=$?; rm -rf "$dir"; exit $rc; }
	eval "$env"
	cd "$dir" || exit 1
	: > "$dir/sas"
	osm=$(cat "$dir/opensm.pid")
	ok=1
	while read -r name hca opts; do
		# shellcheck disable=SC2086
		start_sa "$name" "$hca" $opts || { ok=0; break; }
	done <<< "$SAS"
	if [ $ok = 0 ]; then
		stop_sas; cd / && "$harness" stop "$dir"; rm -rf "$dir"; exit 1
	fi
	echo "opensm $osm $osm_lid" | cat - "$dir/sas" > "$dir/sides"
	while read -r side pid lid; do
		for op in create rejoin; do
			c0=$(cpu_ns $pid)
			# create: joins that create ff15:1234:W::N; rejoin:
			# the same Sets without the creation components.
			sop=$op; [ $op = create ] && sop=join
			line=$(SIM_HOST=Hca2 timeout 300 "$ibmcast" storm \
				--dlid "$lid" --ops $sop --count "$count" --inflight "$w" \
				--tag "$w" --keep < /dev/null | grep '^op all ')
			c1=$(cpu_ns $pid)
			sleep "$SETTLE"
			c2=$(cpu_ns $pid)
			echo "$side $op: $line" >&2
			rate=$(echo "$line" | sed -n 's/.* per_sec=\([0-9]*\) .*/\1/p')
			ok=$(echo "$line" | sed -n 's/.* success=\([0-9]*\) .*/\1/p')
			echo "$side $op $w $rate $ok $c0 $c1 $c2" >> "$results"
		done
	done < "$dir/sides"
	stop_sas
	tail -qn 1 "$dir"/serve-*.out >&2
	cd / && "$harness" stop "$dir"
	rm -rf "$dir"
done

echo "| SA | op | window | ops/s | ok | CPU s / 10k ops (at last answer) | CPU s / 10k ops (+${SETTLE} s) | us CPU/op |"
echo "|---|---|---|---|---|---|---|---|"
awk -v n="$count" '{
	a = ($7 - $6) / 1e9 * 10000 / n; b = ($8 - $6) / 1e9 * 10000 / n
	printf "| %s | %s | %s | %s | %s | %.3f | %.3f | %.2f |\n", $1, $2, $3, $4, $5, a, b, b * 1e6 / 10000
	key = $2 " " $3; cpu[$1, key] = b
	if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
	if (!($1 in isside)) { isside[$1] = 1; sides[++ns] = $1 }
} END {
	print ""
	head = "| op | window |"; rule = "|---|---|"
	for (j = 2; j <= ns; j++) { head = head " OpenSM / " sides[j] " |"; rule = rule "---|" }
	print head; print rule
	for (i = 1; i <= nk; i++) {
		split(keys[i], p, " ")
		line = "| " p[1] " | " p[2] " |"
		for (j = 2; j <= ns; j++)
			line = line sprintf(" %.1fx |", cpu[sides[1], keys[i]] / cpu[sides[j], keys[i]])
		print line
	}
}' "$results"
