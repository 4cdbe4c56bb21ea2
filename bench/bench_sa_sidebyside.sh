#!/bin/bash
# Side by side on ibsim: OpenSM's SA and ibmcast's SA (`ibmcast sa-serve`)
# driven by the same client (`ibmcast sa-serve load`, one process per
# phase on the same HCA): COUNT group creates, then COUNT re-joins of the
# same groups, with WINDOW requests in flight, against each SA. Prints the
# throughput and the SA process's CPU time (utime + stime from
# /proc/PID/stat) per 10,000 operations, read at the last answer and again
# after SETTLE seconds (OpenSM programs the switches' multicast tables in
# a sweep after it answers).
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
HZ=$(getconf CLK_TCK)

[ -x "$ibmcast" ] || { echo "no $ibmcast" >&2; exit 1; }
[ "$count" -le 16000 ] || { echo "COUNT above OpenSM's MLID pool" >&2; exit 2; }

net=$(mktemp) || exit 1
cat > "$net" <<'NET'
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
NET

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }

results=$(mktemp)
trap 'rm -f "$net" "$results"' EXIT

for w in $windows; do
	dir=$(mktemp -d "${TMPDIR:-/tmp}/sa-side.XXXXXX")
	env=$("$harness" start --timeout 900 --ibsim-args "-M 16384" "$net" "$dir") || {
		rc=$?; rm -rf "$dir"; exit $rc; }
	eval "$env"
	cd "$dir" || exit 1
	SIM_HOST=Hca3 "$ibmcast" sa-serve > "$dir/serve.out" 2>&1 &
	imc=$!
	for _ in $(seq 200); do
		grep -q '^ready' "$dir/serve.out" && break
		sleep 0.05
	done
	imc_lid=$(sed -n 's/^ready lid \([0-9]*\) .*/\1/p' "$dir/serve.out")
	osm=$(cat "$dir/opensm.pid")
	osm_lid=$(sed -n 's/^ready lid [0-9]* sm_lid \([0-9]*\) .*/\1/p' "$dir/serve.out")
	if [ -z "$imc_lid" ] || [ -z "$osm_lid" ]; then
		echo "sa-serve did not come up" >&2
		cat "$dir/serve.out" >&2
		kill -TERM $imc 2>/dev/null; wait $imc
		"$harness" stop "$dir"; rm -rf "$dir"; exit 1
	fi
	for side in opensm ibmcast; do
		if [ $side = opensm ]; then pid=$osm lid=$osm_lid; else pid=$imc lid=$imc_lid; fi
		for op in create rejoin; do
			c0=$(cpu_ticks $pid)
			line=$(SIM_HOST=Hca2 timeout 300 "$ibmcast" sa-serve load \
				--dlid "$lid" --op $op --count "$count" --window "$w" --tag "$w")
			c1=$(cpu_ticks $pid)
			sleep "$SETTLE"
			c2=$(cpu_ticks $pid)
			echo "$line" >&2
			rate=$(echo "$line" | sed -n 's/.* per_sec \([0-9]*\) .*/\1/p')
			ok=$(echo "$line" | sed -n 's/.* success \([0-9]*\) .*/\1/p')
			echo "$side $op $w $rate $ok $c0 $c1 $c2" >> "$results"
		done
	done
	kill -TERM $imc; wait $imc
	tail -n 1 "$dir/serve.out" >&2
	cd / && "$harness" stop "$dir"
	rm -rf "$dir"
done

echo "| SA | op | window | ops/s | ok | CPU s / 10k ops (at last answer) | CPU s / 10k ops (+${SETTLE} s) | us/op |"
echo "|---|---|---|---|---|---|---|---|"
awk -v hz="$HZ" -v n="$count" '{
	a = ($7 - $6) / hz * 10000 / n; b = ($8 - $6) / hz * 10000 / n
	printf "| %s | %s | %s | %s | %s | %.2f | %.2f | %.1f |\n", $1, $2, $3, $4, $5, a, b, b * 1e6 / 10000
	key = $2 " " $3; cpu[$1, key] = b; keys[key] = 1
} END {
	print ""
	print "| op | window | OpenSM CPU / ibmcast CPU |"
	print "|---|---|---|"
	for (k in keys) {
		split(k, p, " ")
		if (cpu["ibmcast", k] > 0)
			printf "| %s | %s | %.1fx |\n", p[1], p[2], cpu["opensm", k] / cpu["ibmcast", k]
		else
			printf "| %s | %s | > %.0fx (ibmcast below one clock tick) |\n", p[1], p[2], cpu["opensm", k] * hz
	}
}' "$results"
