#!/bin/bash
# `ibmcast storm` against OpenSM on ibsim: requests per second and latency
# percentiles of joins, leaves, creates and re-joins, with 1, 8 and 32
# requests in flight and paced, from one client (Hca2) to OpenSM's SA
# (Hca1), all on one fresh two-HCA fabric. Prints a Markdown table per
# operation of each run (docs/performance.md, section "SA load").
#
#   bench_storm.sh BUILD_DIR [COUNT]     (default 10000 cycles per run)
#
# Needs ibsim, OpenSM and umad2sim (scripts/ibsim-harness.sh) and python3.
set -u
build=$(realpath "${1:?build directory}")
count=${2:-10000}
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/tests/lib/ibsim_test.sh" "$build" "$src"
[ -x "$ibmcast" ] || { echo "no $ibmcast" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }

net=$(mktemp) || exit 1
ibsim_net 2 "$net"
dir=$(mktemp -d "${TMPDIR:-/tmp}/storm-bench.XXXXXX")
trap 'cd /; "$harness" stop "$dir"; rm -rf "$dir" "$net"' EXIT
env=$("$harness" start --timeout 900 "$net" "$dir") || exit $?
eval "$env"
cd "$dir" || exit 1

# run LABEL STORM-ARGS...: one storm run, its JSON kept as LABEL.json.
n=0
run() {
	local label=$1
	shift
	n=$((n + 1))
	SIM_HOST=Hca2 timeout 300 "$ibmcast" storm --json "$@" \
		> "$n.json" < /dev/null
	echo "$label $*: exit $?" >&2
	echo "$label" > "$n.label"
}

run "join,leave" --count "$count" --inflight 1
run "join,leave" --count "$count" --inflight 8
run "join,leave" --count "$count" --inflight 32
run "create,leave" --ops create,leave --count "$count" --inflight 32
# re-joins of 1,000 groups the port holds, then their teardown
run "join (setup)" --ops join --count 1000 --tag 2 --keep
run "rejoin" --ops rejoin --count "$count" --groups 1000 --tag 2 --inflight 32 --keep
run "leave" --ops leave --count 1000 --tag 2 --inflight 32
run "join,leave" --count "$count" --inflight 32 --rate 5000

left=$(SIM_HOST=Hca2 timeout 20 saquery -g | grep -c 'MGID\.\.\.')
python3 - "$n" "$left" <<'EOF'
import json, sys
tot = {"sent": 0, "timeouts": 0, "retries": 0, "held": 0}
print("| cycle | in flight | rate limit | op | requests/s | p50 us | p90 us "
      "| p99 us | max us | statuses |")
print("|---|---|---|---|---|---|---|---|---|---|")
for i in range(1, int(sys.argv[1]) + 1):
    label = open("%d.label" % i).read().strip()
    d = json.load(open("%d.json" % i))
    rate = "%.0f/s" % d["rate"] if d["rate"] else "-"
    for op, t in d["by_op"].items():
        l = t["latency_us"]
        st = ", ".join("%s %d" % kv for kv in t["statuses"].items())
        if t["timeouts"]:
            st += ", %d timeouts" % t["timeouts"]
        print("| %s | %d | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %s |"
              % (label, d["inflight"], rate, op, t["per_sec"], l["p50"],
                 l["p90"], l["p99"], l["max"], st))
    for k in ("sent", "timeouts", "retries"):
        tot[k] += d["total"][k] + d["teardown"][k]
    tot["held"] += d["held"] if not d["keep"] else 0
print()
print("requests %(sent)d, timed out %(timeouts)d, retries %(retries)d, "
      "held at the end of a run without --keep %(held)d" % tot)
# ibsim carries no RMPP: -g lists at most 3 groups, the broadcast group
# first; 1 means no group of the runs is left.
print("groups saquery -g lists afterwards: %s" % sys.argv[2])
EOF
