#!/bin/bash
# OpenSM's time to SUBNET UP on ibsim and on the embedded fabric
# (`ibmcast fabric serve`), on the same net files, and the simulators'
# peak memory.
#
#   bench/bench_opensm_up.sh BUILD [RUNS] SPEC...
#
# SPEC is a net file or a generator spec (fat-tree:...); each is written
# as a net file with `ibmcast fabric net` so that both simulators read the
# same file. Per SPEC and simulator it prints the median of RUNS (default
# 3) of OpenSM's own timestamps from "Entering DISCOVERING state" to
# "SUBNET UP" in its log, and the simulator's peak RSS (VmHWM). ibsim gets
# -N/-S/-P sized to the file (its defaults stop at 2,048 nodes) and is
# skipped with "-" when it fails to come up.
set -u
build=$(realpath "${1:?build directory}")
shift
runs=3
case ${1:-} in [0-9]*) runs=$1; shift ;; esac
src=$(dirname "$(realpath "$0")")/..
export IBMCAST=$build/ibmcast
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Seconds between the two log lines (OpenSM stamps "Mon DD HH:MM:SS usec").
up_secs() {
	awk '/Entering DISCOVERING state/ && !a { split($3, t, ":"); a = t[1] * 3600 + t[2] * 60 + t[3] + $4 / 1e6 }
	     /SUBNET UP/ && !b { split($3, t, ":"); b = t[1] * 3600 + t[2] * 60 + t[3] + $4 / 1e6 }
	     END { if (a && b) printf "%.3f\n", b - a; else print "-" }' "$1"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'; }

hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

one() { # one SIM NETFILE -> "secs rss_kb"
	local sim=$1 net=$2 d=$tmp/run pid secs rss nodes
	rm -rf "$d"
	if [ "$sim" = fabric ]; then
		"$src/scripts/fabric-harness.sh" start --timeout 3000 \
			--up-wait 2400 "$net" "$d" > /dev/null 2>&1 || { echo "- -"; return; }
		pid=$(cat "$d/serve.pid")
	else
		nodes=$(grep -c '^\(Hca\|Ca\|Switch\)' "$net")
		"$src/scripts/ibsim-harness.sh" start --timeout 3000 \
			--ibsim-args "-N $((nodes + 16)) -S $((nodes + 16)) -P $((nodes * 40 + 64))" \
			"$net" "$d" > /dev/null 2>&1 || { "$src/scripts/ibsim-harness.sh" stop "$d"; echo "- -"; return; }
		pid=$(cat "$d/ibsim.pid")
	fi
	secs=$(up_secs "$d/osm.log")
	rss=$(hwm_kb "$pid")
	"$src/scripts/$sim-harness.sh" stop "$d"
	echo "$secs ${rss:--}"
}

printf '%-48s %8s %8s %12s %12s\n' net nodes sim up_s rss_kb
for spec in "$@"; do
	net=$tmp/$(echo "$spec" | tr -c 'a-zA-Z0-9=,\n' '_').net
	"$IBMCAST" fabric net "$spec" > "$net" || exit 1
	nodes=$(grep -c '^\(Hca\|Ca\|Switch\)' "$net")
	for sim in ibsim fabric; do
		: > "$tmp/r"
		for _ in $(seq "$runs"); do one $sim "$net" >> "$tmp/r"; done
		printf '%-48s %8s %8s %12s %12s\n' "$spec" "$nodes" "$sim" \
			"$(cut -d' ' -f1 "$tmp/r" | median)" "$(cut -d' ' -f2 "$tmp/r" | median)"
	done
done
