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
# CPU is the SA process's time on CPU, summed over its threads, from
# /proc/PID/task/*/schedstat (nanoseconds), read before and at the last
# answer of each phase and again after SETTLE seconds (OpenSM programs
# the switches' multicast tables in a sweep after it answers). The whole
# is repeated ROUNDS times (default 3), each window of each round on a
# fresh fabric; other processes on the machine only ever add CPU time
# (cache misses, preemption), so the table gives per SA, operation and
# window the median and the least CPU per operation over the rounds, the
# median throughput, and the ratios of OpenSM's CPU per operation to each
# of ibmcast's (of the medians, and of the least values).
#
#   bench_sa_sidebyside.sh BUILD_DIR [COUNT] [WINDOWS...]
#   (defaults: 10000, windows 8 and 32; ROUNDS=3 COALESCE=500 SETTLE=2)
#
# A fabric takes one run of COUNT creates per SA (ibsim -M 16384: room
# for COUNT groups in the switch's multicast table; OpenSM's MLID pool
# holds 16383, so COUNT <= 16000).
set -u
build=$(realpath "${1:?build directory}")
count=${2:-10000}
shift 2 2>/dev/null || shift $#
windows=${*:-8 32}
src=$(cd "$(dirname "$0")/.." && pwd)
harness=$src/scripts/ibsim-harness.sh
ibmcast=$build/ibmcast
SETTLE=${SETTLE:-2}
ROUNDS=${ROUNDS:-3}
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

for round in $(seq "$ROUNDS"); do
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
done

echo "$ROUNDS rounds of $count operations; CPU us per operation (at +${SETTLE} s): median, least"
echo
echo "| SA | op | window | ops/s (median) | failed | CPU us/op (median) | CPU us/op (least) |"
echo "|---|---|---|---|---|---|---|"
awk -v n="$count" '
function median(list,   v, k, i, j, t) {
	k = split(list, v, " ")
	for (i = 2; i <= k; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
function least(list,   v, k, i, m) {
	k = split(list, v, " ")
	m = v[1] + 0
	for (i = 2; i <= k; i++)
		if (v[i] + 0 < m)
			m = v[i] + 0
	return m
}
{
	us = ($8 - $6) / 1e3 / n
	c = $1 SUBSEP $2 SUBSEP $3
	cpus[c] = cpus[c] " " us; rates[c] = rates[c] " " $4
	failed[c] += n - $5
	key = $2 " " $3
	if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
	if (!($1 in isside)) { isside[$1] = 1; sides[++ns] = $1 }
} END {
	for (j = 1; j <= ns; j++)
		for (i = 1; i <= nk; i++) {
			split(keys[i], p, " ")
			c = sides[j] SUBSEP p[1] SUBSEP p[2]
			med[c] = median(cpus[c]); low[c] = least(cpus[c])
			printf "| %s | %s | %s | %d | %d | %.2f | %.2f |\n", sides[j],
				p[1], p[2], median(rates[c]), failed[c], med[c], low[c]
		}
	print ""
	head = "| op | window |"; rule = "|---|---|"
	for (j = 2; j <= ns; j++) {
		head = head " OpenSM / " sides[j] " (median, least) |"
		rule = rule "---|"
	}
	print head; print rule
	for (i = 1; i <= nk; i++) {
		split(keys[i], p, " ")
		line = "| " p[1] " | " p[2] " |"
		o = sides[1] SUBSEP p[1] SUBSEP p[2]
		for (j = 2; j <= ns; j++) {
			c = sides[j] SUBSEP p[1] SUBSEP p[2]
			line = line sprintf(" %.1fx, %.1fx |", med[o] / med[c],
					    low[o] / low[c])
		}
		print line
	}
}' "$results"
